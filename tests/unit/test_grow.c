/*
 * A growing array: room from the first size, doubled, never past the
 * bound; the new items zeroed and the old kept; a refusal leaves the
 * array and its room as they were.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "grow.h"

static void
test_first_room_zeroed(void **state)
{
	int *v = NULL;
	size_t cap = 0, i;

	(void)state;
	assert_int_equal(grow(&v, &cap, 3, sizeof *v, 8, 100), 0);
	assert_non_null(v);
	assert_int_equal(cap, 8);
	for (i = 0; i < cap; i++)
		assert_int_equal(v[i], 0);
	free(v);
}

static void
test_doubles_keeps_and_zeroes(void **state)
{
	int *v = NULL;
	size_t cap = 0, i;

	(void)state;
	assert_int_equal(grow(&v, &cap, 4, sizeof *v, 4, 100), 0);
	for (i = 0; i < cap; i++)
		v[i] = (int)i + 1;
	assert_int_equal(grow(&v, &cap, 4, sizeof *v, 4, 100), 0);
	assert_int_equal(cap, 4);	/* room enough: nothing moves */
	assert_int_equal(grow(&v, &cap, 9, sizeof *v, 4, 100), 0);
	assert_int_equal(cap, 16);
	for (i = 0; i < 4; i++)
		assert_int_equal(v[i], (int)i + 1);
	for (; i < cap; i++)
		assert_int_equal(v[i], 0);
	free(v);
}

static void
test_bound(void **state)
{
	int *v = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(grow(&v, &cap, 5, sizeof *v, 4, 6), 0);
	assert_int_equal(cap, 6);	/* doubling stops at the bound */
	before = v;
	assert_int_equal(grow(&v, &cap, 7, sizeof *v, 4, 6), -1);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 6);
	free(v);
}

static void
test_overflow_refused(void **state)
{
	char *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(grow(&v, &cap, 2, SIZE_MAX / 2, 1, 4), -1);
	assert_null(v);
	assert_int_equal(cap, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_room_zeroed),
		cmocka_unit_test(test_doubles_keeps_and_zeroes),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_overflow_refused),
	};

	return cmocka_run_group_tests_name("grow", tests, NULL, NULL);
}
