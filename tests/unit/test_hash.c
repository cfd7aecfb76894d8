/*
 * SHA-256 as the audit log writes it: lowercase hex of known vectors, and
 * the canonical JSON hash that ignores key order but not values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hash.h"

static void
test_vectors(void **state)
{
	char h[HASH_HEX_LEN + 1];

	(void)state;
	hash_sha256_hex("abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hash_sha256_hex("", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(strlen(h), HASH_HEX_LEN);
}

static void
test_canonical(void **state)
{
	json_t *a = json_loads("{\"b\": 1, \"a\": [true, null, \"x\"]}", 0, NULL);
	json_t *b = json_loads("{\"a\": [true, null, \"x\"], \"b\": 1}", 0, NULL);
	json_t *c = json_loads("{\"a\": [true, null, \"y\"], \"b\": 1}", 0, NULL);
	char ha[HASH_HEX_LEN + 1], hb[HASH_HEX_LEN + 1], hc[HASH_HEX_LEN + 1], hs[HASH_HEX_LEN + 1];
	const char *compact = "{\"a\":[true,null,\"x\"],\"b\":1}";

	(void)state;
	assert_int_equal(hash_json_canonical(a, ha), 0);
	assert_int_equal(hash_json_canonical(b, hb), 0);
	assert_int_equal(hash_json_canonical(c, hc), 0);
	assert_string_equal(ha, hb);		/* key order does not matter */
	assert_string_not_equal(ha, hc);	/* values do */
	hash_sha256_hex(compact, strlen(compact), hs);
	assert_string_equal(ha, hs);		/* sorted, compact, nothing else */
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_canonical),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
