#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <string.h>

#include "policy.h"

/* The default classes, in rank order; names are case-sensitive. */
static void
test_classes(void **state)
{
	struct class_list cl;

	(void)state;
	class_list_default(&cl);
	assert_int_equal(cl.n, 4);
	assert_int_equal(class_rank(&cl, "public"), 0);
	assert_int_equal(class_rank(&cl, "pii"), 1);
	assert_int_equal(class_rank(&cl, "PII"), -1);
	assert_int_equal(class_rank(&cl, NULL), -1);
	assert_string_equal(class_name(&cl, 3), "restricted");
	assert_string_equal(class_name(&cl, 4), "unknown");
	assert_string_equal(class_name(&cl, -1), "unknown");
}

/* A sink is judged by the class at entry and at dispatch, whichever is higher. */
static void
test_sink_ceiling(void **state)
{
	struct catalog_tool t = { .data_class = 2, .sink_ceiling = 2, .response_ceiling = 2 };

	(void)state;
	assert_int_equal(policy_check_sink(&t, 2, 2), RULE_ALLOWED);
	assert_int_equal(policy_check_sink(&t, 0, 0), RULE_ALLOWED);
	assert_int_equal(policy_check_sink(&t, 3, 2), RULE_SINK_CEILING);
	assert_int_equal(policy_check_sink(&t, 2, 3), RULE_SINK_CEILING);
}

/* A response is withheld when its class is above the ceiling or it is too big. */
static void
test_response(void **state)
{
	struct catalog_tool t = { .data_class = 2, .sink_ceiling = 2, .response_ceiling = 2 };

	(void)state;
	assert_int_equal(policy_check_response(&t, 10, 100), RULE_ALLOWED);
	assert_int_equal(policy_check_response(&t, 100, 100), RULE_ALLOWED);
	assert_int_equal(policy_check_response(&t, 101, 100), RULE_RESPONSE_TOO_LARGE);
	t.response_ceiling = 1;
	assert_int_equal(policy_check_response(&t, 10, 100), RULE_EGRESS_DENIED);
	assert_int_equal(policy_class_after(0, &t), 2);
	assert_int_equal(policy_class_after(3, &t), 3);	/* never goes down */
}

static bool
snake_case(const char *s)
{
	if (!s || !islower((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* Every rule in the table has its own snake_case id; outside it, "unknown". */
static void
test_rule_table(void **state)
{
	int r, q;

	(void)state;
	for (r = 0; r < RULE_COUNT; r++) {
		assert_true(snake_case(policy_rule_id(r)));
		for (q = 0; q < r; q++)
			assert_string_not_equal(policy_rule_id(r), policy_rule_id(q));
		/* a rule that ends the session never counts as an allowed call */
		assert_false(policy_rule_fatal(r) && policy_rule_allowed(r));
	}
	assert_string_equal(policy_rule_id(RULE_CATALOG_DRIFT), "catalog_drift");
	assert_true(policy_rule_allowed(RULE_ALLOWED));
	assert_false(policy_rule_allowed(RULE_SINK_CEILING));
	assert_true(policy_rule_fatal(RULE_UPSTREAM_TIMEOUT));
	assert_string_equal(policy_rule_id(RULE_COUNT), "unknown");
	assert_false(policy_rule_allowed(RULE_COUNT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_sink_ceiling),
		cmocka_unit_test(test_response),
		cmocka_unit_test(test_rule_table),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
