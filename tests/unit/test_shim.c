/*
 * The shim's MCP handling (shim/shim_rpc.h) without a process: the initial
 * frame, each method, the JSON-RPC error codes for malformed input, the
 * bridge line a tools/call becomes (and the calls that never become one),
 * the mapping of bridge replies, and the tool set after tools_changed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shim_rpc.h"

#define FRAME "{\"payload\":{\"canary\":\"C-1\"},\"tools\":[" \
	"{\"name\":\"save\",\"description\":\"Save it.\",\"inputSchema\":{\"type\":\"object\"}}," \
	"{\"name\":\"publish\",\"description\":\"\",\"inputSchema\":{\"type\":\"object\"}}]}"

static struct shim_state *
state(void)
{
	struct shim_state *s = shim_state_new(FRAME, strlen(FRAME));

	assert_non_null(s);
	return s;
}

/* Handle one line; the reply parsed (NULL for none). */
static json_t *
ask(struct shim_state *s, const char *line, struct shim_out *o)
{
	json_t *r = NULL;

	shim_handle(s, line, strlen(line), o);
	if (o->action == SHIM_REPLY) {
		assert_non_null(o->reply);
		assert_int_equal(o->reply[strlen(o->reply) - 1], '\n');
		assert_null(memchr(o->reply, '\n', strlen(o->reply) - 1));
		r = json_loads(o->reply, 0, NULL);
		assert_non_null(r);
	}
	return r;
}

static long
error_code(struct shim_state *s, const char *line)
{
	struct shim_out o;
	json_t *r = ask(s, line, &o);
	long code;

	assert_int_equal(o.action, SHIM_REPLY);
	assert_string_equal(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
	code = (long)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
	json_decref(r);
	shim_out_free(&o);
	return code;
}

static void
test_frame(void **unused)
{
	static const char *const bad[] = {
		"", "{}", "[]", "{\"payload\":{},\"tools\":{}}",
		"{\"payload\":[],\"tools\":[]}",
		"{\"payload\":{},\"tools\":[],\"x\":1}",
		"{\"payload\":{},\"tools\":[{\"name\":\"\",\"description\":\"\",\"inputSchema\":{}}]}",
		"{\"payload\":{},\"tools\":[{\"name\":\"a\",\"description\":\"\",\"inputSchema\":1}]}",
		("{\"payload\":{},\"tools\":[{\"name\":\"a\",\"description\":\"\",\"inputSchema\":{}},"
		 "{\"name\":\"a\",\"description\":\"\",\"inputSchema\":{}}]}"),
		"{\"payload\":{\"canary\":\"C-1\"}}\n",
	};
	struct shim_state *s;
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(shim_state_new(bad[i], strlen(bad[i])));
	s = state();
	assert_int_equal(shim_listed(s), 2);
	assert_string_equal(shim_payload_text(s), "{\"canary\":\"C-1\"}");
	shim_state_free(s);
}

/* A session that starts under a standing revoke: the revoked alias is never listed. */
static void
test_frame_listed(void **unused)
{
	static const char listed[] =
		"{\"payload\":{},\"tools\":["
		"{\"name\":\"save\",\"description\":\"\",\"inputSchema\":{\"type\":\"object\"}},"
		"{\"name\":\"publish\",\"description\":\"\",\"inputSchema\":{\"type\":\"object\"}}],"
		"\"listed\":{\"revision\":4,\"tools\":[\"save\"]}}";
	static const char *const bad[] = {
		"{\"payload\":{},\"tools\":[],\"listed\":{\"tools\":[]}}",
		"{\"payload\":{},\"tools\":[],\"listed\":{\"revision\":1,\"tools\":{}}}",
		"{\"payload\":{},\"tools\":[],\"listed\":[]}",
	};
	struct shim_state *s = shim_state_new(listed, strlen(listed));
	const char *l = "{\"tools_changed\":3,\"tools\":[\"save\",\"publish\"]}";
	struct shim_out o;
	json_t *r;
	size_t i;

	(void)unused;
	assert_non_null(s);
	assert_int_equal(shim_listed(s), 1);
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &o);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "tools")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(r, "result"), "tools"), 0), "name")), "save");
	json_decref(r);
	shim_out_free(&o);
	shim_engine(s, l, strlen(l));		/* older than the frame's revision: stale */
	assert_int_equal(shim_listed(s), 1);
	shim_state_free(s);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(shim_state_new(bad[i], strlen(bad[i])));
}

static void
test_initialize(void **unused)
{
	struct shim_state *s = state();
	struct shim_out o;
	json_t *r;

	(void)unused;
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}", &o);
	assert_true(o.initialized);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 1);
	r = json_object_get(r, "result") ? r : NULL;
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"),
							      "protocolVersion")), "2025-06-18");
	assert_true(json_is_true(json_object_get(json_object_get(json_object_get(
		json_object_get(r, "result"), "capabilities"), "tools"), "listChanged")));
	assert_non_null(json_object_get(json_object_get(json_object_get(r, "result"),
							"capabilities"), "resources"));
	json_decref(r);
	shim_out_free(&o);
	/* an unknown version gets the newest */
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"initialize\",\"params\":"
		"{\"protocolVersion\":\"1999-01-01\"}}", &o);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"),
							      "protocolVersion")), "2025-11-25");
	assert_string_equal(json_string_value(json_object_get(r, "id")), "x");
	json_decref(r);
	shim_out_free(&o);
	shim_state_free(s);
}

static void
test_errors(void **unused)
{
	struct shim_state *s = state();

	(void)unused;
	assert_int_equal(error_code(s, "{"), RPC_PARSE_ERROR);
	assert_int_equal(error_code(s, "not json"), RPC_PARSE_ERROR);
	assert_int_equal(error_code(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"),
			 RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"id\":1,\"method\":\"ping\"}"), RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}"),
			 RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}"),
			 RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1}"), RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}"),
			 RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"id\":2}"),
			 RPC_PARSE_ERROR);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"foo/bar\"}"),
			 RPC_METHOD_NOT_FOUND);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}"),
			 RPC_METHOD_NOT_FOUND);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":3}"),
			 RPC_INVALID_REQUEST);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\","
				    "\"params\":{\"uri\":\"file:///etc/passwd\"}}"),
			 RPC_RESOURCE_NOT_FOUND);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\"}"),
			 RPC_INVALID_PARAMS);
	shim_state_free(s);
}

static void
test_quiet(void **unused)
{
	static const char *const none[] = {
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}",
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":1,\"message\":\"x\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"save\"}}",
	};
	struct shim_state *s = state();
	struct shim_out o;
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof none / sizeof none[0]; i++) {
		assert_null(ask(s, none[i], &o));
		assert_int_equal(o.action, SHIM_NONE);
		assert_null(o.call);
		shim_out_free(&o);
	}
	ask(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &o);
	assert_int_equal(o.action, SHIM_NONE);
	assert_true(o.initialized);
	shim_out_free(&o);
	shim_state_free(s);
}

static void
test_lists(void **unused)
{
	struct shim_state *s = state();
	struct shim_out o;
	json_t *r, *tools, *c;

	(void)unused;
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &o);
	tools = json_object_get(json_object_get(r, "result"), "tools");
	assert_int_equal(json_array_size(tools), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")), "save");
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0),
							      "description")), "Save it.");
	json_decref(r);
	shim_out_free(&o);
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
		"\"params\":{\"uri\":\"airlock://payload\"}}", &o);
	c = json_array_get(json_object_get(json_object_get(r, "result"), "contents"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "text")), "{\"canary\":\"C-1\"}");
	json_decref(r);
	shim_out_free(&o);
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}", &o);
	c = json_array_get(json_object_get(json_object_get(r, "result"), "resources"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "uri")), "airlock://payload");
	json_decref(r);
	shim_out_free(&o);
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}", &o);
	assert_int_equal(json_object_size(json_object_get(r, "result")), 0);
	json_decref(r);
	shim_out_free(&o);
	shim_state_free(s);
}

static void
test_call(void **unused)
{
	struct shim_state *s = state();
	struct shim_out o;

	(void)unused;
	ask(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"save\",\"arguments\":{\"a\":[1,{\"b\":\"c\"}]}}}", &o);
	assert_int_equal(o.action, SHIM_CALL);
	assert_string_equal(o.call, "{\"operation\":\"save\",\"arguments\":{\"a\":[1,{\"b\":\"c\"}]}}\n");
	assert_int_equal(json_integer_value(o.id), 7);
	shim_out_free(&o);
	ask(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"publish\"}}", &o);
	assert_int_equal(o.action, SHIM_CALL);
	assert_string_equal(o.call, "{\"operation\":\"publish\",\"arguments\":{}}\n");
	shim_out_free(&o);
	shim_state_free(s);
}

/* Each of these is answered by the shim and never becomes a bridge line. */
static void
test_call_refused(void **unused)
{
	struct shim_state *s = state();
	char deep[512] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
			 "\"params\":{\"name\":\"save\",\"arguments\":{\"a\":";
	char *big;
	int i;

	(void)unused;
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
				    "\"params\":{\"name\":\"store\"}}"), RPC_INVALID_PARAMS);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
				    "\"params\":{\"name\":\"save\",\"arguments\":[1]}}"), RPC_INVALID_PARAMS);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
				    "\"params\":{\"arguments\":{}}}"), RPC_INVALID_PARAMS);
	assert_int_equal(error_code(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}"),
			 RPC_INVALID_PARAMS);
	/* 15 levels under arguments: the bridge allows 16 in all */
	for (i = 0; i < 15; i++)
		strcat(deep, "[");
	for (i = 0; i < 15; i++)
		strcat(deep, "]");
	strcat(deep, "}}}");
	assert_int_equal(error_code(s, deep), RPC_INVALID_PARAMS);
	big = malloc(SHIM_LINE_MAX + 200);
	assert_non_null(big);
	strcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	       "\"params\":{\"name\":\"save\",\"arguments\":{\"a\":\"");
	memset(big + strlen(big), 'x', SHIM_LINE_MAX);
	strcpy(big + SHIM_LINE_MAX + 60, "\"}}}");
	assert_int_equal(error_code(s, big), RPC_INVALID_PARAMS);
	free(big);
	shim_state_free(s);
}

static json_t *
result_of(const char *reply)
{
	json_t *id = json_integer(9);
	char *line = shim_call_result(id, reply, strlen(reply));
	json_t *r = line ? json_loads(line, 0, NULL) : NULL;

	json_decref(id);
	free(line);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), 9);
	return r;
}

/* The parent's one-parse path gives what shim_call_result gives. */
static void
assert_same_answer(const char *reply)
{
	struct shim_state *s = state();
	json_t *id = json_string("id-\"9\"");
	char *a = NULL, *b = shim_call_result(id, reply, strlen(reply));

	assert_int_equal(shim_engine_answer(s, reply, strlen(reply), id, &a), SHIM_ENGINE_REPLY);
	assert_non_null(a);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_int_equal(shim_engine_answer(s, reply, strlen(reply), NULL, &a), SHIM_ENGINE_REPLY);
	assert_null(a);
	json_decref(id);
	shim_state_free(s);
}

static void
assert_result(const char *reply, const char *text, bool is_error)
{
	json_t *r = result_of(reply), *res = json_object_get(r, "result");
	json_t *c = json_array_get(json_object_get(res, "content"), 0);

	assert_same_answer(reply);

	assert_string_equal(json_string_value(json_object_get(c, "type")), "text");
	assert_string_equal(json_string_value(json_object_get(c, "text")), text);
	assert_int_equal(json_is_true(json_object_get(res, "isError")), is_error);
	json_decref(r);
}

static void
test_results(void **unused)
{
	json_t *id = json_integer(1);

	(void)unused;
	assert_result("{\"allowed\":true,\"response\":\"stored\"}", "stored", false);
	assert_result("{\"allowed\":true,\"response\":null}", SHIM_TEXT_TOOL_ERROR, true);
	assert_result("{\"allowed\":false,\"response\":null}", SHIM_TEXT_DENIED, true);
	assert_result("{\"allowed\":true,\"response\":\"q\\\"\\\\\\n\\u0001\\u00e9/\"}",
		      "q\"\\\n\001\xc3\xa9/", false);
	assert_result("{\"allowed\":true,\"response\":{\"not\":\"text\"}}", SHIM_TEXT_TOOL_ERROR, true);
	assert_null(shim_call_result(id, "{\"tools_changed\":1,\"tools\":[]}", 31));
	assert_null(shim_call_result(id, "nope", 4));
	json_decref(id);
}

static void
test_engine_lines(void **unused)
{
	struct shim_state *s = state();
	struct shim_out o;
	json_t *r;
	const char *l;

	(void)unused;
	l = "{\"allowed\":true,\"response\":\"x\"}";
	assert_int_equal(shim_engine(s, l, strlen(l)), SHIM_ENGINE_REPLY);
	l = "{\"allowed\":true}";
	assert_int_equal(shim_engine(s, l, strlen(l)), SHIM_ENGINE_BAD);
	l = "garbage";
	assert_int_equal(shim_engine(s, l, strlen(l)), SHIM_ENGINE_BAD);
	l = "{\"tools_changed\":2,\"tools\":[\"save\",\"nosuch\"]}";
	assert_int_equal(shim_engine(s, l, strlen(l)), SHIM_ENGINE_CHANGED);
	assert_int_equal(shim_listed(s), 1);
	r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", &o);
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "tools")), 1);
	json_decref(r);
	shim_out_free(&o);
	/* a revoked alias is still sent: the gateway denies it (revoked) in the audit */
	ask(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"publish\"}}", &o);
	assert_int_equal(o.action, SHIM_CALL);
	shim_out_free(&o);
	/* stale: nothing changes */
	l = "{\"tools_changed\":1,\"tools\":[\"save\",\"publish\"]}";
	assert_int_equal(shim_engine(s, l, strlen(l)), SHIM_ENGINE_CHANGED);
	assert_int_equal(shim_listed(s), 1);
	l = "{\"tools_changed\":3,\"tools\":[\"save\",\"publish\"]}";
	shim_engine(s, l, strlen(l));
	assert_int_equal(shim_listed(s), 2);
	assert_string_equal(shim_list_changed_line(),
			    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n");
	shim_state_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_frame_listed),
		cmocka_unit_test(test_initialize),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_call),
		cmocka_unit_test(test_call_refused),
		cmocka_unit_test(test_results),
		cmocka_unit_test(test_engine_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
