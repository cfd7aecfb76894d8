#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "err.h"

static void
test_verdicts(void **state)
{
	struct check_list l;

	(void)state;
	check_list_init(&l);
	assert_false(check_list_passed(&l));	/* nothing checked is not a pass */
	check_add(&l, "a", true, "x", "x");
	assert_true(check_list_passed(&l));
	check_addf(&l, "b", false, "none", "%s", "host");
	check_add(&l, "c", false, "1", "2");
	assert_false(check_list_passed(&l));
	assert_int_equal(check_list_failures(&l), 2);
	assert_string_equal(check_list_first_failure(&l)->id, "b");
	assert_string_equal(check_list_find(&l, "c")->observed, "2");
	assert_null(check_list_find(&l, "d"));
	check_list_free(&l);
}

static void
test_truncation_and_growth(void **state)
{
	struct check_list l;
	char big[1000];
	int i;

	(void)state;
	memset(big, 'v', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	check_list_init(&l);
	for (i = 0; i < 100; i++)
		check_add(&l, "an_id_that_is_far_too_long_to_fit_in_the_field", true, big, big);
	assert_int_equal(l.n, 100);
	assert_int_equal(strlen(l.items[99].observed), CHECK_VALUE_MAX - 1);
	assert_int_equal(strlen(l.items[99].id), CHECK_ID_MAX - 1);
	check_list_free(&l);
}

static void
test_json(void **state)
{
	struct check_list l;
	json_t *j;
	char *s;

	(void)state;
	check_list_init(&l);
	check_add(&l, "network_mode", false, "none", "host");
	check_add(&l, "init", true, "true", "true");
	j = check_list_to_json(&l, "refuse");
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s, "[{\"check\":\"network_mode\",\"expected\":\"none\",\"observed\":\"host\",\"verdict\":\"refuse\"},"
			    "{\"check\":\"init\",\"expected\":\"true\",\"observed\":\"true\",\"verdict\":\"pass\"}]");
	free(s);
	json_decref(j);
	check_list_free(&l);
}

static void
test_err(void **state)
{
	struct al_err err;

	(void)state;
	assert_int_equal(al_fail(&err, "cannot attach to %s", "abc"), -1);
	assert_int_equal(al_wrap(&err, "session %d", 7), -1);
	assert_string_equal(err.msg, "session 7: cannot attach to abc");
	assert_int_equal(al_fail(NULL, "ignored"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_truncation_and_growth),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_err),
	};

	return cmocka_run_group_tests_name("checks", tests, NULL, NULL);
}
