#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "verb_grant.h"

/* A ':' line after its name, split as verbs_run splits it. */
static size_t
split(char *line, char **w)
{
	char *save = NULL;
	size_t n = 0;

	while (n < 8 && (w[n] = strtok_r(n ? NULL : line, " ", &save)))
		n++;
	return n;
}

/* Terms anywhere after the tool come out; the tool and the scope keep their places. */
static void
test_terms_taken_out(void **state)
{
	char line[] = "store --calls 2 all --for 15m", *w[8], why[128] = "";
	size_t n = split(line, w);
	struct link_grant g;

	(void)state;
	assert_int_equal(verb_grant_words(w, &n, &g, why, sizeof why), 0);
	assert_int_equal(n, 2);
	assert_string_equal(w[0], "store");
	assert_string_equal(w[1], "all");
	assert_int_equal(g.calls, 2);
	assert_int_equal(g.for_s, 15 * 60);
}

/* No terms: nothing moves, zeros (a restore for good). */
static void
test_no_terms(void **state)
{
	char line[] = "store s-1a2b", *w[8], why[128] = "";
	size_t n = split(line, w);
	struct link_grant g = { 7, 7, true };

	(void)state;
	assert_int_equal(verb_grant_words(w, &n, &g, why, sizeof why), 0);
	assert_int_equal(n, 2);
	assert_string_equal(w[1], "s-1a2b");
	assert_int_equal(g.for_s, 0);
	assert_int_equal(g.calls, 0);
	assert_false(g.flow);
}

/* --flow is a flag anywhere after the name: the first word left is the flow. */
static void
test_flow(void **state)
{
	char line[] = "--flow confidential>public all", *w[8], why[128] = "";
	size_t n = split(line, w);
	struct link_grant g;

	(void)state;
	assert_int_equal(verb_grant_words(w, &n, &g, why, sizeof why), 0);
	assert_int_equal(n, 2);
	assert_string_equal(w[0], "confidential>public");
	assert_string_equal(w[1], "all");
	assert_true(g.flow);
	assert_int_equal(g.for_s, 0);
}

/* Bad values are refused in ctl's words, with grant.h's bounds. */
static void
test_refused(void **state)
{
	static const struct { const char *line, *why; } bad[] = {
		{ "store --for", "--for wants 90s, 15m or 2h: 1 s to 24 h" },
		{ "store --for 0s", "--for wants 90s, 15m or 2h: 1 s to 24 h" },
		{ "store --for 25h", "--for wants 90s, 15m or 2h: 1 s to 24 h" },
		{ "store --for 10", "--for wants 90s, 15m or 2h: 1 s to 24 h" },
		{ "store --calls", "--calls wants a number from 1 to 1000000" },
		{ "store --calls 0", "--calls wants a number from 1 to 1000000" },
		{ "store --calls 1000001", "--calls wants a number from 1 to 1000000" },
		{ "store --calls -3", "--calls wants a number from 1 to 1000000" },
		{ "store --calls 2 --calls 3", "--calls given twice" },
		{ "store --for 1m all --for 2m", "--for given twice" },
	};
	char line[128], *w[8], why[128];
	struct link_grant g;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(line, sizeof line, "%s", bad[i].line);
		n = split(line, w);
		why[0] = '\0';
		assert_int_equal(verb_grant_words(w, &n, &g, why, sizeof why), -1);
		assert_string_equal(why, bad[i].why);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_terms_taken_out),
		cmocka_unit_test(test_no_terms),
		cmocka_unit_test(test_flow),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
