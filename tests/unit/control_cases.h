#ifndef AIRLOCK_TEST_CONTROL_CASES_H
#define AIRLOCK_TEST_CONTROL_CASES_H

/*
 * Request lines the control parser refuses, and the fixed text of each:
 * test_control.c holds control_parse to them, test_control_digest.c the
 * digest its connection's parser writes of them.
 */

#include <stddef.h>

#include "control.h"

static const struct {
	const char *line, *error;
} control_refused[] = {
	{ "", CONTROL_E_JSON },
	{ "{", CONTROL_E_JSON },
	{ "{\"id\":1,\"op\":\"hello\"} x", CONTROL_E_JSON },
	{ "[]", CONTROL_E_OBJECT },
	{ "\"hello\"", CONTROL_E_OBJECT },
	{ "null", CONTROL_E_OBJECT },
	{ "{\"id\":1,\"op\":\"hello\",\"id\":2}", CONTROL_E_DUPLICATE },
	{ "{\"op\":\"hello\"}", CONTROL_E_ID },
	{ "{\"id\":-1,\"op\":\"hello\"}", CONTROL_E_ID },
	{ "{\"id\":\"1\",\"op\":\"hello\"}", CONTROL_E_ID },
	{ "{\"id\":1.5,\"op\":\"hello\"}", CONTROL_E_ID },
	{ "{\"id\":1,\"op\":\"hello\",\"client\":\"tui\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hello\",\"client\":1}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"snapshot\",\"client\":\"ctl\"}", CONTROL_E_KEY },
	{ "{\"id\":9007199254740993,\"op\":\"hello\"}", CONTROL_E_ID },
	{ "{\"id\":1,\"op\":\"launch\"}", CONTROL_E_OP },
	{ "{\"id\":1,\"op\":\"Hello\"}", CONTROL_E_OP },
	{ "{\"id\":1}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":7}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"hello\",\"x\":1}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"snapshot\",\"session\":\"s\"}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"stop\"}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"stop\",\"session\":7}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"stop\",\"session\":\"\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"stop\",\"session\":\"a b\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"stop\",\"session\":\"a\\nb\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"start\"}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"start\",\"path\":\"relative.json\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"start\",\"path\":\"/a\\u0000b\"}", CONTROL_E_JSON },
	{ "{\"id\":1,\"op\":\"start\",\"config\":[]}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"start\",\"path\":\"/a\",\"config\":{}}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"all\":true}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\"}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":false}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":true,\"sessions\":[\"a\"]}",
	  CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"sessions\":\"a\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"sessions\":[1]}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"sessions\":[]}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":true,\"wait_ms\":-1}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":true,\"wait_ms\":60001}",
	  CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":1}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"events\",\"follow\":\"yes\"}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"freeze\",\"tool\":\"t\"}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"freeze\",\"all\":true}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"thaw\",\"wait_ms\":60001}", CONTROL_E_ARG },
	/* A grant's terms: restore's only, each within its bounds, integers. */
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":true,\"calls\":2}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"revoke\",\"tool\":\"t\",\"all\":true,\"for_s\":60}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"freeze\",\"for_s\":60}", CONTROL_E_KEY },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"for_s\":0}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"for_s\":86401}",
	  CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"for_s\":\"15m\"}",
	  CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"for_s\":1.5}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"calls\":0}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"calls\":-2}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"calls\":1000001}",
	  CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"calls\":2}", CONTROL_E_MISSING },
	/* a class flow: hold and restore only, instead of a tool, "CLASS>SINK" */
	{ "{\"id\":1,\"op\":\"hold\",\"all\":true}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"restore\",\"all\":true}", CONTROL_E_MISSING },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\"pii>public\",\"tool\":\"store\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"restore\",\"flow\":\"pii>public\",\"all\":true,\"for_s\":60}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\"confidential\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\"a>b>c\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\">public\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\"pii>\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":\"pii >public\",\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"hold\",\"flow\":7,\"all\":true}", CONTROL_E_ARG },
	{ "{\"id\":1,\"op\":\"revoke\",\"flow\":\"pii>public\",\"all\":true}", CONTROL_E_KEY },
};

#define CONTROL_REFUSED	(sizeof control_refused / sizeof control_refused[0])

#endif
