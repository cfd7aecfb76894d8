#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "policy.h"
#include "session.h"

/*
 * The payload-free summary of a session (`airlock run --json`, and the
 * detail of its session_end entry): every counter under its key, the
 * denials by the rule that decided them, the message that fits the end.
 */

static json_int_t
int_at(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void
test_summary_counts(void **state)
{
	struct session_summary s = { .end = SESSION_END_AGENT_EXIT, .exit_code = 0 };
	json_t *j, *by;

	(void)state;
	strcpy(s.session_id, "s-1");
	strcpy(s.admission_first, "admitted");
	strcpy(s.admission_second, "admitted");
	strcpy(s.session_class, "public");
	s.counters = (struct gateway_counters){ .calls = 7, .allowed = 3, .denied = 4,
						.egress_denied = 1, .upstream_errors = 2 };
	s.counters.denied_by[RULE_REVOKED] = 2;
	s.counters.denied_by[RULE_CATALOG_DRIFT] = 1;
	s.counters.denied_by[RULE_EGRESS_DENIED] = 1;
	s.stdout_bytes = 99;
	j = session_summary_json(&s);
	assert_non_null(j);
	assert_int_equal(int_at(j, "calls"), 7);
	assert_int_equal(int_at(j, "allowed"), 3);
	assert_int_equal(int_at(j, "denied"), 4);
	assert_int_equal(int_at(j, "egress_denied"), 1);
	assert_int_equal(int_at(j, "upstream_errors"), 2);
	assert_int_equal(int_at(j, "stdout_bytes"), 99);
	by = json_object_get(j, "denied_by");
	assert_int_equal(json_object_size(by), 3);	/* rules with no denial are left out */
	assert_int_equal(int_at(by, "revoked"), 2);
	assert_int_equal(int_at(by, "catalog_drift"), 1);
	assert_int_equal(int_at(by, "egress_denied"), 1);
	assert_true(json_is_null(json_object_get(j, "message")));	/* a normal end */
	assert_string_equal(json_string_value(json_object_get(j, "ended")), "agent_exit");
	json_decref(j);
}

/* The message says what the agent was told, or that no exchange began. */
static void
test_summary_message(void **state)
{
	static const struct { enum session_end end; const char *message; } cases[] = {
		{ SESSION_END_INVALID_REQUEST, "invalid agent request" },
		{ SESSION_END_UPSTREAM_FAULT, "agent exchange failed" },
		{ SESSION_END_UPSTREAM_UNAVAILABLE, "agent exchange failed" },
		{ SESSION_END_INITIAL_REFUSED, SESSION_NOT_STARTED },
		{ SESSION_END_PREFLIGHT_REFUSED, SESSION_NOT_STARTED },
		{ SESSION_END_ADMISSION_REFUSED, SESSION_NOT_STARTED },
		{ SESSION_END_CONTAINER_FAILED, SESSION_NOT_STARTED },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_string_equal(session_end_message(cases[i].end), cases[i].message);
	assert_null(session_end_message(SESSION_END_AGENT_EXIT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_counts),
		cmocka_unit_test(test_summary_message),
	};

	return cmocka_run_group_tests_name("summary", tests, NULL, NULL);
}
