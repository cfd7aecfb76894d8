#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ids.h"

static void
assert_hex(const char *s, size_t n)
{
	size_t i;

	assert_int_equal(strlen(s), n);
	for (i = 0; i < n; i++)
		assert_non_null(strchr("0123456789abcdef", s[i]));
}

/* The prefix, then two lower-case hex digits per byte; never twice the same. */
static void
test_shape(void **state)
{
	char a[ID_MAX], b[ID_MAX];

	(void)state;
	assert_int_equal(id_random(a, sizeof a, "s-", 16), 0);
	assert_int_equal(id_random(b, sizeof b, "s-", 16), 0);
	assert_memory_equal(a, "s-", 2);
	assert_hex(a + 2, 32);
	assert_string_not_equal(a, b);
	assert_int_equal(id_random(a, sizeof a, "", 1), 0);
	assert_hex(a, 2);
}

/* Too small a buffer, or too many bytes: -1 and an empty string. */
static void
test_refusals(void **state)
{
	char out[ID_MAX];

	(void)state;
	memset(out, 'x', sizeof out);
	assert_int_equal(id_random(out, 2 + 32, "s-", 16), -1);	/* no room for the NUL */
	assert_string_equal(out, "");
	assert_int_equal(id_random(out, 2 + 32 + 1, "s-", 16), 0);
	assert_int_equal(id_random(out, sizeof out, "", 33), -1);
	assert_string_equal(out, "");
	assert_int_equal(id_random(out, 0, "", 1), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests_name("ids", tests, NULL, NULL);
}
