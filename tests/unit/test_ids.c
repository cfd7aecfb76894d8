/*
 * Generated identifiers: prefix and lowercase hex of the right length,
 * refusals when the buffer is too small, and hex that is the bytes drawn.
 * A session picked by what an operator typed: the whole id, a unique
 * prefix with or without "s-", and the words when none or several match.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ids.h"

static void
assert_hex_id(const char *id, const char *prefix, size_t digits)
{
	size_t plen = strlen(prefix);

	assert_int_equal(strlen(id), plen + digits);
	assert_memory_equal(id, prefix, plen);
	assert_int_equal(strspn(id + plen, "0123456789abcdef"), digits);
}

static void
test_random_shape(void **state)
{
	char a[ID_MAX], b[ID_MAX];

	(void)state;
	assert_int_equal(id_random(a, sizeof a, "call-", 8), 0);
	assert_hex_id(a, "call-", 16);
	assert_int_equal(id_random(b, sizeof b, "call-", 8), 0);
	assert_string_not_equal(a, b);		/* 64 random bits: never twice */
	assert_int_equal(id_random(a, 33, "", 16), 0);
	assert_hex_id(a, "", 32);
}

static void
test_too_small(void **state)
{
	char out[9] = "xxxxxxxx";

	(void)state;
	assert_int_equal(id_random(out, sizeof out, "call-", 8), -1);
	assert_string_equal(out, "");
	assert_int_equal(id_random(out, sizeof out, "", 64), -1);	/* more than one draw holds */
	assert_int_equal(id_hex(out, sizeof out, "ab", "\x01\x02\x03", 3), 0);
	assert_string_equal(out, "ab010203");
	assert_int_equal(id_hex(out, sizeof out, "abc", "\x01\x02\x03", 3), -1);
	assert_string_equal(out, "");
}

static void
test_hex_is_the_bytes(void **state)
{
	const unsigned char raw[] = { 0x00, 0x0f, 0xa5, 0xff, 0x10 };
	unsigned char drawn[24], zero[24] = { 0 };
	char out[64];

	(void)state;
	assert_int_equal(id_hex(out, sizeof out, "p-", raw, sizeof raw), 0);
	assert_string_equal(out, "p-000fa5ff10");
	memset(drawn, 0, sizeof drawn);
	assert_int_equal(id_draw(drawn, sizeof drawn), 0);
	assert_memory_not_equal(drawn, zero, sizeof drawn);
	assert_int_equal(id_hex(out, sizeof out, "", drawn, 8), 0);
	assert_hex_id(out, "", 16);
}

static const char *const sessions[] = {
	"s-3f9a1c02aa11bb22", "s-3f9b0000cc33dd44", "s-70e1d2c3b4a59687",
};

/* What typed picks among sessions: the index, or -1 with why. */
static int
pick(const char *typed, char *why, size_t cap)
{
	struct id_pick k;
	size_t i;

	id_pick_init(&k, typed);
	for (i = 0; i < sizeof sessions / sizeof sessions[0]; i++)
		id_pick_offer(&k, sessions[i], i);
	return id_pick_done(&k, why, cap) == 0 ? (int)k.at : -1;
}

static void
test_pick_unique(void **state)
{
	char why[128] = "";

	(void)state;
	assert_int_equal(pick("3f9a1c02", why, sizeof why), 0);	/* as the console shows it */
	assert_int_equal(pick("s-3f9a", why, sizeof why), 0);
	assert_int_equal(pick("7", why, sizeof why), 2);
	assert_int_equal(pick("s-7", why, sizeof why), 2);
	assert_string_equal(why, "");
}

static void
test_pick_full_id(void **state)
{
	char why[128] = "";

	(void)state;
	assert_int_equal(pick("s-3f9b0000cc33dd44", why, sizeof why), 1);
	assert_int_equal(pick("70e1d2c3b4a59687", why, sizeof why), 2);
	assert_string_equal(why, "");
}

static void
test_pick_ambiguous(void **state)
{
	char why[128];

	(void)state;
	assert_int_equal(pick("3f9", why, sizeof why), -1);
	assert_string_equal(why, "ambiguous session id prefix '3f9': 2 sessions match");
	assert_int_equal(pick("s-", why, sizeof why), -1);
	assert_string_equal(why, "ambiguous session id prefix 's-': 3 sessions match");
}

static void
test_pick_none(void **state)
{
	char why[128];

	(void)state;
	assert_int_equal(pick("nosuch", why, sizeof why), -1);
	assert_string_equal(why, "no session id starts with 'nosuch'");
	assert_int_equal(pick("", why, sizeof why), -1);
	assert_string_equal(why, "no session id starts with ''");
	assert_int_equal(pick("s-3f9a1c02aa11bb22x", why, sizeof why), -1);	/* longer than any */
	assert_string_equal(why, "no session id starts with 's-3f9a1c02aa11bb22x'");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_shape),
		cmocka_unit_test(test_too_small),
		cmocka_unit_test(test_hex_is_the_bytes),
		cmocka_unit_test(test_pick_unique),
		cmocka_unit_test(test_pick_full_id),
		cmocka_unit_test(test_pick_ambiguous),
		cmocka_unit_test(test_pick_none),
	};

	return cmocka_run_group_tests_name("ids", tests, NULL, NULL);
}
