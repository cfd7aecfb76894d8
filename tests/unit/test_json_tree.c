#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "json_tree.h"

/*
 * A JSON value's tree form (engine/base/json_tree.h): what jansson parses
 * under the control parser's flags goes through writer and reader equal,
 * and what the reader accepts the writer gives back byte for byte; every
 * malformed tree is refused, without a leak (LeakSanitizer in the asan
 * builds).
 */

#define PARSER_FLAGS	(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

/* A crafted tree: its bytes (a literal may hold NUL) and its length. */
#define TREE(s)		{ s, sizeof s - 1 }

struct tree {
	const char *b;
	size_t len;
};

static const char config_like[] =
	"{\"profile\":{\"image\":\"x\"},\"bounds\":{\"calls\":4096},\"tools\":{\"t\":"
	"{\"upstream\":\"u\",\"data_class\":\"public\"}},\"initial\":{\"withhold\":[\"a\",\"b\"]}}";

static const char *const values[] = {
	"{}", "[]", "null", "true", "false", "0", "-1", "1", "63", "64", "-64", "-65",
	"127", "128", "16383", "16384", "9223372036854775807", "-9223372036854775808",
	"0.5", "-0.0", "1e300", "-1.7976931348623157e308", "5e-324", "0.30000000000000004",
	"\"\"", "\"plain\"", "\"caf\\u00e9 \\u2603 \\ud83d\\ude00\"", "\"\\\"\\\\\\b\\f\\n\\r\\t\\u0001\"",
	"{\"\":0}", "{\"b\":1,\"a\":2,\"c\":{\"z\":[],\"y\":{}}}",
	"[1,[2,[3,[4,{\"k\":[true,false,null]}]]],\"s\",0.25]", config_like,
};

/* v written: the bytes, which the caller frees (hash_canon_free). */
static void
write_ok(const json_t *v, struct hash_canon *c)
{
	hash_canon_init(c);
	json_tree_write(c, v);
	assert_false(c->bad);
}

/* What the reader accepts, written again, is the same bytes. */
static json_t *
read_back(const char *b, size_t len)
{
	json_t *v = json_tree_read(b, len);
	struct hash_canon again;

	assert_non_null(v);
	write_ok(v, &again);
	assert_int_equal(again.len, len);
	assert_memory_equal(again.buf, b, len);
	hash_canon_free(&again);
	return v;
}

static void
test_round_trip(void **state)
{
	struct hash_canon c;
	json_t *v, *back;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof values / sizeof values[0]; i++) {
		v = json_loads(values[i], PARSER_FLAGS, NULL);
		assert_non_null(v);
		write_ok(v, &c);
		back = read_back(c.buf, c.len);
		if (!json_equal(v, back))
			fail_msg("%s: not equal after the tree", values[i]);
		if (json_is_real(v))	/* the same double, -0.0 included */
			assert_memory_equal(&(double){ json_real_value(v) },
					    &(double){ json_real_value(back) }, sizeof(double));
		json_decref(back);
		json_decref(v);
		hash_canon_free(&c);
	}
}

/* Known bytes: the format as the header says it. */
static void
test_format(void **state)
{
	json_t *v = json_loads("{\"ab\":[-1,300,\"x\",null]}", 0, NULL);
	static const char want[] = "o\x01\x02" "ab" "a\x04" "i\x01" "i\xd8\x04" "s\x01" "x" "n";
	struct hash_canon c;

	(void)state;
	write_ok(v, &c);
	assert_int_equal(c.len, sizeof want - 1);
	assert_memory_equal(c.buf, want, sizeof want - 1);
	json_decref(v);
	hash_canon_free(&c);
}

/* The peer's order of keys is kept (the canonical text would sort them). */
static void
test_order_kept(void **state)
{
	json_t *v = json_loads("{\"z\":1,\"a\":2,\"m\":3}", PARSER_FLAGS, NULL), *back;
	const char *order[3], *k;
	struct hash_canon c;
	size_t n = 0;
	json_t *m;

	(void)state;
	write_ok(v, &c);
	back = read_back(c.buf, c.len);
	json_object_foreach(back, k, m)
		order[n++] = k;
	assert_int_equal(n, 3);
	assert_string_equal(order[0], "z");
	assert_string_equal(order[1], "a");
	assert_string_equal(order[2], "m");
	json_decref(back);
	json_decref(v);
	hash_canon_free(&c);
}

static const struct tree refused[] = {
	TREE(""),			/* nothing */
	TREE("x"),			/* an unknown tag */
	TREE("\x00"),
	TREE("nn"),			/* a byte after the value */
	TREE("o\x00" "n"),
	TREE("s\x05" "ab"),		/* a length past the end */
	TREE("o\x01\x09" "a" "n"),	/* a key's length past the end */
	TREE("a\x05" "nn"),		/* a count past what the bytes hold */
	TREE("a\xff\xff\xff\xff\x0f" "n"),
	TREE("o\x02\x00" "n"),		/* two members need four bytes at least */
	TREE("a\x02" "n"),		/* a value missing */
	TREE("s\x80\x00"),		/* a length not in its shortest form */
	TREE("i\x80\x00"),
	TREE("i\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"),	/* past 64 bits */
	TREE("i\xff\xff\xff\xff\xff\xff\xff\xff\xff\x80\x01"),
	TREE("i"),
	TREE("i\x80"),			/* a number cut short */
	TREE("r\x00\x00\x00"),		/* a real cut short */
	TREE("r\x00\x00\x00\x00\x00\x00\xf0\x7f"),	/* +inf */
	TREE("r\x00\x00\x00\x00\x00\x00\xf8\x7f"),	/* NaN */
	TREE("s\x02\xc3\x28"),		/* not UTF-8 */
	TREE("s\x03\xed\xa0\x80"),	/* a surrogate */
	TREE("s\x02\xc0\xaf"),		/* overlong */
	TREE("s\x04\xf4\x90\x80\x80"),	/* past U+10FFFF */
	TREE("o\x01\x01\xff" "n"),	/* a key not UTF-8 */
	TREE("s\x03" "a\x00" "b"),	/* a NUL in a string */
	TREE("o\x01\x01\x00" "n"),	/* a NUL in a key */
	TREE("o\x02\x01" "a" "n\x01" "a" "t"),	/* a key twice */
	TREE("a\x02" "o\x02\x01" "k" "n\x01" "k" "f" "n"),
};

static void
test_refused(void **state)
{
	json_t *v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if ((v = json_tree_read(refused[i].b, refused[i].len)) != NULL) {
			json_decref(v);
			fail_msg("refused[%zu] was accepted", i);
		}
	assert_null(json_tree_read(NULL, 0));
}

/* levels arrays nested, a null inside; malloc'd. */
static char *
nested(size_t levels, size_t *len)
{
	char *b = malloc(2 * levels + 1);
	size_t i;

	assert_non_null(b);
	for (i = 0; i < levels; i++) {
		b[2 * i] = JSON_TREE_ARRAY;
		b[2 * i + 1] = 1;
	}
	b[2 * levels] = JSON_TREE_NULL;
	*len = 2 * levels + 1;
	return b;
}

/* JSON_TREE_DEPTH_MAX deep reads and writes; one more is refused both ways. */
static void
test_depth(void **state)
{
	size_t len;
	char *ok = nested(JSON_TREE_DEPTH_MAX, &len), *deep;
	json_t *v = read_back(ok, len), *outer;
	struct hash_canon c;

	(void)state;
	assert_true(json_tree_shallow(v));
	outer = json_array();
	json_array_append(outer, v);
	assert_false(json_tree_shallow(outer));
	hash_canon_init(&c);
	json_tree_write(&c, outer);
	assert_true(c.bad);
	hash_canon_free(&c);
	deep = nested(JSON_TREE_DEPTH_MAX + 1, &len);
	assert_null(json_tree_read(deep, len));
	json_decref(outer);
	json_decref(v);
	free(ok);
	free(deep);
}

/*
 * NUL: jansson's text parser refuses \u0000 under the control parser's
 * flags, in a string and in a key, so the tree carries none; the writer
 * refuses one that code put there.
 */
static void
test_nul(void **state)
{
	json_t *o = json_object();
	struct hash_canon c;

	(void)state;
	assert_null(json_loads("{\"a\":\"x\\u0000y\"}", PARSER_FLAGS, NULL));
	assert_null(json_loads("{\"x\\u0000y\":1}", PARSER_FLAGS, NULL));
	hash_canon_init(&c);
	json_tree_write(&c, json_object_get(o, "none"));	/* NULL: nothing to write */
	assert_true(c.bad);
	hash_canon_free(&c);
	json_object_set_new(o, "s", json_stringn("x\0y", 3));
	hash_canon_init(&c);
	json_tree_write(&c, o);
	assert_true(c.bad);
	hash_canon_free(&c);
	json_object_clear(o);
	json_object_setn_new(o, "k\0", 2, json_null());
	hash_canon_init(&c);
	json_tree_write(&c, o);
	assert_true(c.bad);
	hash_canon_free(&c);
	json_decref(o);
}

/* Smaller than the text it stands for, for a config-like value. */
static void
test_smaller(void **state)
{
	json_t *v = json_loads(config_like, PARSER_FLAGS, NULL);
	struct hash_canon c;

	(void)state;
	write_ok(v, &c);
	assert_true(c.len < strlen(config_like));
	json_decref(v);
	hash_canon_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_order_kept),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_smaller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
