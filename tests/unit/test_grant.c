#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "grant.h"

/*
 * Time-boxed grants' bookkeeping (grant.h) with plain numbers: the
 * durations and counts an operator may type, a budget spent call by call,
 * deadlines, and a grant replaced by the next one of its tool.
 */

static int64_t
seconds(const char *s)
{
	int64_t v = -7;

	return grant_duration_parse(s, &v) == 0 ? v : -1;
}

static void
test_durations(void **state)
{
	(void)state;
	assert_int_equal(seconds("90s"), 90);
	assert_int_equal(seconds("15m"), 900);
	assert_int_equal(seconds("2h"), 7200);
	assert_int_equal(seconds("1s"), 1);
	assert_int_equal(seconds("24h"), GRANT_FOR_MAX_S);
	assert_int_equal(seconds("1440m"), GRANT_FOR_MAX_S);
	assert_int_equal(seconds("86400s"), GRANT_FOR_MAX_S);
	/* Past the bound, zero, no unit, another unit, signs, spaces, fractions. */
	assert_int_equal(seconds("25h"), -1);
	assert_int_equal(seconds("86401s"), -1);
	assert_int_equal(seconds("1441m"), -1);
	assert_int_equal(seconds("0s"), -1);
	assert_int_equal(seconds("0m"), -1);
	assert_int_equal(seconds("90"), -1);
	assert_int_equal(seconds("s"), -1);
	assert_int_equal(seconds(""), -1);
	assert_int_equal(seconds(NULL), -1);
	assert_int_equal(seconds("2d"), -1);
	assert_int_equal(seconds("-5m"), -1);
	assert_int_equal(seconds("+5m"), -1);
	assert_int_equal(seconds(" 5m"), -1);
	assert_int_equal(seconds("1.5h"), -1);
	assert_int_equal(seconds("5M"), -1);
	assert_int_equal(seconds("99999999999999999999s"), -1);	/* no overflow to a small one */
	assert_int_equal(seconds("9999999h"), -1);
}

static int64_t
calls(const char *s)
{
	int64_t v = -7;

	return grant_calls_parse(s, &v) == 0 ? v : -1;
}

static void
test_calls(void **state)
{
	(void)state;
	assert_int_equal(calls("1"), 1);
	assert_int_equal(calls("2"), 2);
	assert_int_equal(calls("1000000"), GRANT_CALLS_MAX);
	assert_int_equal(calls("1000001"), -1);
	assert_int_equal(calls("0"), -1);
	assert_int_equal(calls("-1"), -1);
	assert_int_equal(calls("2x"), -1);
	assert_int_equal(calls(""), -1);
	assert_int_equal(calls(NULL), -1);
	assert_int_equal(calls("18446744073709551617"), -1);
}

/* A budget of two: taken, the last, then exhausted; its lapse due at once, with its reason. */
static void
test_budget(void **state)
{
	struct grant_table t = { 0 };
	struct grant due;
	int64_t next = INT64_MAX, left_calls, left_ms;
	uint64_t s;

	(void)state;
	s = grant_set(&t, "store", true, 1000, 0, 2, 5);
	assert_true(s > 0);
	assert_int_equal(t.budgets, 1);
	assert_int_equal(grant_due(&t, 1000, &due, &next), 0);
	assert_int_equal(next, INT64_MAX);	/* no deadline */
	grant_left(grant_find(&t, s), 1000, &left_calls, &left_ms);
	assert_int_equal(left_calls, 2);
	assert_int_equal(left_ms, -1);
	assert_int_equal(grant_spend(&t, s), GRANT_SPENT);
	assert_int_equal(grant_due(&t, 1000, &due, &next), 0);
	assert_int_equal(grant_spend(&t, s), GRANT_SPENT_LAST);
	assert_int_equal(t.budgets, 0);
	assert_int_equal(grant_spend(&t, s), GRANT_EXHAUSTED);
	assert_int_equal(grant_spend(&t, s), GRANT_EXHAUSTED);
	assert_int_equal(grant_due(&t, 1000, &due, &next), 1);
	assert_int_equal(due.serial, s);
	assert_string_equal(due.tool, "store");
	assert_true(due.all);
	assert_int_equal(due.revision, 5);
	assert_string_equal(grant_lapse_why(&due), "calls spent");
	assert_int_equal(grant_drop(&t, "store"), s);
	assert_null(grant_find(&t, s));
	assert_int_equal(grant_spend(&t, s), GRANT_FREE);	/* a gone grant meters nothing */
	assert_int_equal(grant_due(&t, 1000, &due, &next), 0);
}

/* A deadline: not due before it, due at it, the earliest one reported as next. */
static void
test_deadline(void **state)
{
	struct grant_table t = { 0 };
	struct grant due;
	int64_t next = INT64_MAX, c, ms;
	uint64_t a, b;

	(void)state;
	a = grant_set(&t, "store", false, 10000, 90, 0, 1);
	b = grant_set(&t, "post", true, 10000, 30, 3, 2);
	assert_true(a > 0 && b > a);
	assert_int_equal(grant_spend(&t, a), GRANT_FREE);	/* no budget: not metered */
	assert_int_equal(grant_due(&t, 39999, &due, &next), 0);
	assert_int_equal(next, 40000);
	grant_left(grant_find(&t, a), 39999, &c, &ms);
	assert_int_equal(c, -1);
	assert_int_equal(ms, 60001);
	assert_int_equal(grant_due(&t, 40000, &due, &next), 1);
	assert_int_equal(due.serial, b);
	assert_string_equal(grant_lapse_why(&due), "time up");
	grant_drop(&t, "post");
	next = INT64_MAX;
	assert_int_equal(grant_due(&t, 40000, &due, &next), 0);
	assert_int_equal(next, 100000);
	grant_left(grant_find(&t, a), 200000, &c, &ms);
	assert_int_equal(ms, 0);	/* never below zero */
	assert_int_equal(grant_due(&t, 100000, &due, &next), 1);
	assert_int_equal(due.serial, a);
}

/* One grant a tool: the next replaces it, with a new serial; the old one meters nothing. */
static void
test_replace_and_bounds(void **state)
{
	struct grant_table t = { 0 };
	char tool[16];
	uint64_t a, b;
	int i;

	(void)state;
	a = grant_set(&t, "store", true, 0, 0, 5, 1);
	b = grant_set(&t, "store", false, 0, 60, 0, 2);
	assert_true(b > a);
	assert_null(grant_find(&t, a));
	assert_int_equal(grant_of(&t, "store")->serial, b);
	assert_false(grant_of(&t, "store")->all);
	assert_int_equal(t.budgets, 0);	/* the replaced budget no longer counts */
	assert_int_equal(grant_drop(&t, "post"), 0);
	/* Terms out of bounds, none at all, no tool. */
	assert_int_equal(grant_set(&t, "x", true, 0, 0, 0, 3), 0);
	assert_int_equal(grant_set(&t, "x", true, 0, GRANT_FOR_MAX_S + 1, 0, 3), 0);
	assert_int_equal(grant_set(&t, "x", true, 0, 0, GRANT_CALLS_MAX + 1, 3), 0);
	assert_int_equal(grant_set(&t, "x", true, 0, 0, -1, 3), 0);
	assert_int_equal(grant_set(&t, "", true, 0, 0, 1, 3), 0);
	assert_int_equal(grant_set(&t, NULL, true, 0, 0, 1, 3), 0);
	/* The table holds GRANT_MAX tools; one more is refused, a replacement is not. */
	for (i = 1; i < GRANT_MAX; i++) {
		snprintf(tool, sizeof tool, "t%d", i);
		assert_true(grant_set(&t, tool, true, 0, 0, 1, 3) > 0);
	}
	assert_int_equal(grant_set(&t, "one-more", true, 0, 0, 1, 3), 0);
	assert_true(grant_set(&t, "t7", true, 0, 0, 1, 3) > 0);
	assert_int_equal(t.budgets, GRANT_MAX - 1);
}

static void
test_terms_text(void **state)
{
	char b[48];

	(void)state;
	grant_terms_text(0, 2, b, sizeof b);
	assert_string_equal(b, "2 calls");
	grant_terms_text(0, 1, b, sizeof b);
	assert_string_equal(b, "1 call");
	grant_terms_text(900, 0, b, sizeof b);
	assert_string_equal(b, "15m");
	grant_terms_text(7200, 0, b, sizeof b);
	assert_string_equal(b, "2h");
	grant_terms_text(90, 5, b, sizeof b);
	assert_string_equal(b, "90s or 5 calls");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_replace_and_bounds),
		cmocka_unit_test(test_terms_text),
	};

	return cmocka_run_group_tests_name("grant", tests, NULL, NULL);
}
