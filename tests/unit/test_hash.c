/*
 * SHA-256 as the audit log writes it: lowercase hex of known vectors, and
 * the canonical JSON hash that ignores key order but not values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* Deterministic bytes: the same test run on every machine. */
static unsigned
next_rand(unsigned *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 16;
}

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

/* The canonical writer's text of one string, or NULL when it refuses it. */
static char *
canon_of(const char *s, size_t len)
{
	struct hash_canon c;
	char *out;

	hash_canon_init(&c);
	hash_canon_array_open(&c);
	hash_canon_str(&c, s, len);
	hash_canon_int(&c, -42);
	hash_canon_str(&c, NULL, 0);
	hash_canon_array_close(&c);
	out = c.bad ? NULL : strdup(c.buf);
	hash_canon_free(&c);
	return out;
}

/* What json_dumps writes for the same array, or NULL when jansson refuses the string. */
static char *
jansson_of(const char *s, size_t len)
{
	json_t *str = json_stringn(s, len), *arr;
	char *out;

	if (!str)
		return NULL;
	arr = json_pack("[o I n]", str, (json_int_t)-42);
	assert_non_null(arr);
	out = json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(arr);
	return out;
}

static void
assert_same_as_jansson(const char *s, size_t len)
{
	char *mine = canon_of(s, len), *theirs = jansson_of(s, len);

	if (!theirs) {
		assert_null(mine);		/* both refuse: not valid UTF-8 */
		return;
	}
	assert_non_null(mine);
	assert_string_equal(mine, theirs);
	free(mine);
	free(theirs);
}

/*
 * Audit hashes are over the canonical writer's bytes, and logs written
 * through jansson must still verify: the two must agree byte for byte,
 * including every control byte, quotes, backslashes, multi-byte UTF-8,
 * embedded NUL, and what is refused (overlong forms, surrogates, stray
 * continuation bytes, past U+10FFFF).
 */
static void
test_canon_matches_jansson(void **state)
{
	static const char *const fixed[] = {
		"", "plain", "q\"uote", "back\\slash", "slash/", "tab\tnl\ncr\r",
		"\b\f\x01\x1f\x7f", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xe2\x80\xa8", "\xc0\xaf", "\xed\xa0\x80", "\x80", "\xf4\x90\x80\x80",
		"\xe2\x82", "\xff",
	};
	static const unsigned char alphabet[] = { 'a', '"', '\\', '/', 0x00, 0x01, 0x1f, 0x20,
						  0x7f, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f,
						  0x98, 0x80, 0xed, 0xa0, 0xc0, 0xff, '\n', 'z' };
	unsigned seed = 7, i, j;
	char buf[64];
	size_t len;

	(void)state;
	for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		assert_same_as_jansson(fixed[i], strlen(fixed[i]));
	assert_same_as_jansson("nul\0inside", 11);
	for (i = 0; i < 20000; i++) {
		len = next_rand(&seed) % sizeof buf;
		for (j = 0; j < len; j++)
			buf[j] = (char)alphabet[next_rand(&seed) % sizeof alphabet];
		assert_same_as_jansson(buf, len);
	}
}

/*
 * Long plain runs are scanned eight bytes at a time: one byte that needs
 * escaping or is part of a multi-byte sequence, at every offset of a long
 * plain string (and at both ends of a word), must still be seen.
 */
static void
test_canon_word_scan(void **state)
{
	static const char *const odd[] = { "\"", "\\", "\n", "\x01", "\x1f", "\x7f",
					   "\xc3\xa9", "\xe2\x82\xac", "\xff", "\xc0\xaf",
					   " ", "~" };
	char buf[64];
	size_t i, k, n;

	(void)state;
	for (k = 0; k < sizeof odd / sizeof odd[0]; k++) {
		n = strlen(odd[k]);
		for (i = 0; i + n <= 40; i++) {
			memset(buf, 'a', 40);
			memcpy(buf + i, odd[k], n);
			assert_same_as_jansson(buf, 40);
			assert_same_as_jansson(buf, i + n);	/* it ends the string */
		}
	}
}

/* Integers as jansson writes them, the extremes included. */
static void
test_canon_ints(void **state)
{
	const int64_t v[] = { 0, 1, -1, 9, 10, -10, 1234567890123LL, INT64_MAX, INT64_MIN,
			      INT64_MIN + 1 };
	struct hash_canon c;
	char *theirs;
	json_t *arr = json_array();
	size_t i;

	(void)state;
	hash_canon_init(&c);
	hash_canon_array_open(&c);
	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		hash_canon_int(&c, v[i]);
		json_array_append_new(arr, json_integer(v[i]));
	}
	hash_canon_array_close(&c);
	theirs = json_dumps(arr, JSON_COMPACT);
	assert_string_equal(c.buf, theirs);
	free(theirs);
	json_decref(arr);
	hash_canon_free(&c);
}

/* Objects: keys sorted, nested, as hash_json_canonical hashes them. */
static void
test_canon_json(void **state)
{
	json_t *v = json_loads("{\"b\": {\"y\": [1, 2.5, \"\\u0001\"], \"x\": null}, \"a\": true}",
			       0, NULL);
	char want[HASH_HEX_LEN + 1], got[HASH_HEX_LEN + 1];
	struct hash_canon c;
	char *dumped;

	(void)state;
	assert_non_null(v);
	hash_canon_init(&c);
	hash_canon_json(&c, v);
	assert_false(c.bad);
	dumped = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	assert_string_equal(c.buf, dumped);
	assert_int_equal(hash_json_canonical(v, want), 0);
	hash_sha256_hex(c.buf, c.len, got);
	assert_string_equal(got, want);
	free(dumped);
	hash_canon_free(&c);
	json_decref(v);
}

/* A random value: nested objects and arrays, every scalar kind, awkward keys. */
static json_t *
random_value(unsigned *seed, int depth)
{
	static const char *const keys[] = { "a", "ab", "b", "", "A", "a\"", "\\", "caf\xc3\xa9",
					    "\xe2\x82\xac", "z\x01", "aa", "a b" };
	unsigned kind = next_rand(seed) % (depth > 3 ? 6 : 8);
	json_t *v;
	size_t i, n;

	switch (kind) {
	case 0:
		return json_integer((json_int_t)next_rand(seed) - 1000000);
	case 1:
		return json_real((double)next_rand(seed) / 7.0 - 100.0);
	case 2:
		return json_string(keys[next_rand(seed) % (sizeof keys / sizeof keys[0])]);
	case 3:
		return next_rand(seed) % 2 ? json_true() : json_false();
	case 4:
		return json_null();
	case 5:
		return json_stringn("n\0l", 3);
	case 6:
		v = json_array();
		for (i = 0, n = next_rand(seed) % 5; i < n; i++)
			json_array_append_new(v, random_value(seed, depth + 1));
		return v;
	default:
		v = json_object();
		for (i = 0, n = next_rand(seed) % 20; i < n; i++)
			json_object_set_new(v, keys[next_rand(seed) % (sizeof keys / sizeof keys[0])],
					    random_value(seed, depth + 1));
		if (next_rand(seed) % 4 == 0)
			json_object_setn_new(v, "a\0b", 3, json_integer(1));	/* a NUL in a key */
		return v;
	}
}

/*
 * The walk writes what jansson's sorted dump writes, for any value: key
 * order (prefixes, bytes past ASCII, NUL in a key), every scalar, nesting,
 * more keys than fit the writer's inline table.
 */
static void
test_canon_json_as_jansson(void **state)
{
	unsigned seed = 11, i, j;
	struct hash_canon c;
	char key[8];
	json_t *v;
	char *theirs;

	(void)state;
	for (i = 0; i < 3000; i++) {
		v = random_value(&seed, 0);
		if (i % 100 == 0 && json_is_object(v))
			for (j = 0; j < 40; j++) {
				snprintf(key, sizeof key, "k%u", (j * 7) % 40);
				json_object_set_new(v, key, json_integer(j));
			}
		hash_canon_init(&c);
		hash_canon_json(&c, v);
		assert_false(c.bad);
		theirs = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		assert_non_null(theirs);
		assert_int_equal(c.len, strlen(theirs));
		assert_memory_equal(c.buf, theirs, c.len);
		free(theirs);
		hash_canon_free(&c);
		json_decref(v);
	}
}

/* Past the inline buffer: the text moves to the heap intact. */
static void
test_canon_grows(void **state)
{
	static char big[3 * HASH_CANON_INLINE];
	struct hash_canon c;
	json_t *str;
	char *theirs;

	(void)state;
	memset(big, 'x', sizeof big - 1);
	big[100] = '"';
	hash_canon_init(&c);
	hash_canon_str(&c, big, strlen(big));
	assert_false(c.bad);
	assert_true(c.buf != c.inline_buf);
	str = json_string(big);
	theirs = json_dumps(str, JSON_ENCODE_ANY);
	json_decref(str);
	assert_string_equal(c.buf, theirs);
	assert_int_equal(c.len, strlen(theirs));
	free(theirs);
	hash_canon_free(&c);
}

/* The reused context gives the same digests as the one-shot call, again and again. */
static void
test_ctx(void **state)
{
	struct hash_ctx *h = hash_ctx_new();
	char a[HASH_HEX_LEN + 1], b[HASH_HEX_LEN + 1];
	int i;

	(void)state;
	assert_non_null(h);
	for (i = 0; i < 3; i++) {
		hash_ctx_hex(h, "abc", 3, a);
		assert_string_equal(a, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
		hash_ctx_hex(h, "abcd", 4, a);
		hash_sha256_hex("abcd", 4, b);
		assert_string_equal(a, b);
	}
	hash_ctx_hex(NULL, "abc", 3, a);	/* no context: the one-shot path */
	assert_string_equal(a, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hash_ctx_free(h);
}

/*
 * HMAC-SHA-256, RFC 4231 test case 2, again and again on one context (the
 * key kept across digests); never the plain digest of the same bytes.
 */
static void
test_keyed(void **state)
{
	static const char data[] = "what do ya want for nothing?";
	struct hash_ctx *h = hash_ctx_new_keyed((const unsigned char *)"Jefe", 4);
	char a[HASH_HEX_LEN + 1], plain[HASH_HEX_LEN + 1];
	int i;

	(void)state;
	assert_non_null(h);
	for (i = 0; i < 3; i++) {
		hash_ctx_hex(h, data, strlen(data), a);
		assert_string_equal(a, "5bdcc146bf60754e6a042426089575c7"
				       "5a003f089d2739839dec58b964ec3843");
		hash_ctx_hex(h, "abc", 3, a);
		hash_sha256_hex("abc", 3, plain);
		assert_string_not_equal(a, plain);
		assert_int_equal(strlen(a), HASH_HEX_LEN);
	}
	hash_ctx_free(h);
	assert_null(hash_ctx_new_keyed((const unsigned char *)"", 0));	/* no key, no context */
	assert_null(hash_ctx_new_keyed(NULL, 32));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_canon_matches_jansson),
		cmocka_unit_test(test_canon_word_scan),
		cmocka_unit_test(test_canon_ints),
		cmocka_unit_test(test_canon_json),
		cmocka_unit_test(test_canon_json_as_jansson),
		cmocka_unit_test(test_canon_grows),
		cmocka_unit_test(test_ctx),
		cmocka_unit_test(test_keyed),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
