#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "session.h"

static int
parse(const char *line)
{
	struct agent_request req;
	int rc = frame_parse(line, strlen(line), &req);

	frame_request_free(&req);
	return rc;
}

static void
test_accepted(void **state)
{
	struct agent_request req;
	const char *ok = "{\"operation\":\"save\",\"arguments\":{\"a\":[1,{\"b\":\"\\u00e9\"}]}}";

	(void)state;
	assert_int_equal(frame_parse(ok, strlen(ok), &req), 0);
	assert_string_equal(req.operation, "save");
	assert_true(json_is_object(req.arguments));
	frame_request_free(&req);
	assert_int_equal(parse("{\"arguments\":{},\"operation\":\"x\"}"), 0);
	assert_int_equal(parse(" {\"operation\":\"x\",\"arguments\":{}}\r"), 0);
}

static void
test_rejected(void **state)
{
	static const char *bad[] = {
		"",
		"null", "[]", "\"save\"", "42", "true",
		"{\"operation\":\"save\"}",
		"{\"arguments\":{}}",
		"{\"operation\":\"save\",\"arguments\":{},\"tool\":\"x\"}",
		"{\"operation\":\"save\",\"arguments\":{},\"call_id\":\"1\"}",
		"{\"operation\":\"save\",\"arguments\":{},\"sink_policy\":\"any\"}",
		"{\"operation\":\"save\",\"arguments\":{},\"declared_data_class\":\"public\"}",
		"{\"operation\":\"save\",\"operation\":\"post\",\"arguments\":{}}",
		"{\"operation\":\"save\",\"arguments\":{},\"arguments\":{}}",
		"{\"Operation\":\"save\",\"arguments\":{}}",
		"{\"operation\":\"save\",\"Arguments\":{}}",
		"{\"operation\":\"\",\"arguments\":{}}",
		"{\"operation\":1,\"arguments\":{}}",
		"{\"operation\":\"save\",\"arguments\":[]}",
		"{\"operation\":\"save\",\"arguments\":\"x\"}",
		"{\"operation\":\"save\",\"arguments\":null}",
		"{\"operation\":\"sa\\u0000ve\",\"arguments\":{}}",
		"{\"operation\":\"save\",\"arguments\":{\"a\":\"\\u0000\"}}",
		"{\"operation\":\"save\",\"arguments\":{}} trailing",
		"{\"operation\":\"save\",\"arguments\":{}}{}",
		"{\"operation\":\"save\",\"arguments\":{\"a\":\"\xff\"}}",
		"{\"operation\":\"save\",\"arguments\":{\"a\":\"\xc0\xaf\"}}",
		"{\"operation\":\"save\",\"arguments\":{\"a\":\"\xed\xa0\x80\"}}",
		"{\"operation\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"arguments\":{}}",
		NULL,
	};
	size_t i;

	(void)state;
	for (i = 0; bad[i]; i++)
		if (parse(bad[i]) != -1)
			fail_msg("accepted: %s", bad[i]);
}

static void
test_nul_and_depth(void **state)
{
	const char with_nul[] = "{\"operation\":\"save\",\"arguments\":{}}\0";
	struct agent_request req;
	char deep[256] = "{\"operation\":\"save\",\"arguments\":";
	int i;

	(void)state;
	assert_int_equal(frame_parse(with_nul, sizeof with_nul - 1, &req), -1);
	for (i = 0; i < 20; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (i = 0; i < 21; i++)
		strcat(deep, "}");
	assert_int_equal(parse(deep), -1);
	/* Brackets inside strings do not count as nesting. */
	assert_int_equal(parse("{\"operation\":\"save\",\"arguments\":{\"a\":\"[[[[[[[[[[[[[[[[[[[[[[[[\"}}"), 0);
}

static void
test_utf8(void **state)
{
	(void)state;
	assert_true(frame_utf8_valid((const unsigned char *)"h\xc3\xa9llo \xf0\x9f\x98\x80", 11));
	assert_false(frame_utf8_valid((const unsigned char *)"\xc3", 1));
	assert_false(frame_utf8_valid((const unsigned char *)"\xe0\x80\xaf", 3));
	assert_false(frame_utf8_valid((const unsigned char *)"\xf4\x90\x80\x80", 4));
	assert_false(frame_utf8_valid((const unsigned char *)"\xf8\x88\x80\x80\x80", 5));
}

static void
test_reply(void **state)
{
	size_t n;
	char *r = frame_reply(true, "hi \"x\"\n", 7, 1024, &n);

	(void)state;
	assert_string_equal(r, "{\"allowed\":true,\"response\":\"hi \\\"x\\\"\\n\"}\n");
	assert_int_equal(n, strlen(r));
	free(r);
	r = frame_reply(false, NULL, 0, 1024, &n);
	assert_string_equal(r, "{\"allowed\":false,\"response\":null}\n");
	free(r);
	assert_null(frame_reply(true, "0123456789", 10, 20, &n));	/* over the bound */
}

/*
 * The reply is written without jansson; it must be the line jansson would
 * write, byte for byte (escapes, NUL, UTF-8), and refuse what jansson
 * refuses (a response that is not UTF-8).
 */
static void
test_reply_as_jansson(void **state)
{
#define CASE(lit) { lit, sizeof lit - 1 }
	static const struct { const char *s; size_t n; } cases[] = {
		CASE(""), CASE("plain text, long enough to cross a word or two"),
		CASE("nul\0inside"), CASE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
		CASE("\x01\x1f\x7f\"\\/\b\f\r\t"),
	};
#undef CASE
	size_t i, n;
	char *mine, *theirs;
	json_t *r;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mine = frame_reply(i % 2 == 0, cases[i].s, cases[i].n, 1024, &n);
		r = json_pack("{s:b, s:o}", "allowed", i % 2 == 0, "response",
			      json_stringn(cases[i].s, cases[i].n));
		assert_non_null(r);
		theirs = json_dumps(r, JSON_COMPACT);
		json_decref(r);
		assert_non_null(mine);
		assert_int_equal(n, strlen(theirs) + 1);
		assert_memory_equal(mine, theirs, n - 1);
		assert_int_equal(mine[n - 1], '\n');
		free(mine);
		free(theirs);
	}
	assert_null(frame_reply(true, "\xc3", 1, 1024, &n));		/* not UTF-8 */
	assert_null(frame_reply(true, "\xed\xa0\x80", 3, 1024, &n));	/* a surrogate */
	mine = frame_reply(true, "0123456789", 10, 41, &n);	/* exactly the bound */
	assert_non_null(mine);
	assert_int_equal(n, 41);
	free(mine);
	assert_null(frame_reply(true, "0123456789", 10, 40, &n));
}

static void
test_linebuf(void **state)
{
	struct linebuf lb;
	const char *line;
	size_t len;

	(void)state;
	assert_int_equal(linebuf_init(&lb, 8, 64), 0);
	assert_int_equal(linebuf_append(&lb, "ab", 2), 0);
	assert_int_equal(linebuf_next(&lb, &line, &len), 0);
	assert_int_equal(linebuf_append(&lb, "c\nde\nf", 6), 0);
	assert_int_equal(linebuf_next(&lb, &line, &len), 1);
	assert_memory_equal(line, "abc", 3);
	assert_int_equal(len, 3);
	assert_int_equal(linebuf_next(&lb, &line, &len), 1);
	assert_int_equal(len, 2);
	assert_int_equal(linebuf_next(&lb, &line, &len), 0);
	assert_int_equal(linebuf_pending(&lb), 1);
	assert_int_equal(linebuf_append(&lb, "12345678", 8), -1);	/* 9 > max_line */
	linebuf_free(&lb);
	assert_int_equal(linebuf_init(&lb, 8, 16), 0);
	assert_int_equal(linebuf_append(&lb, "1234\n1234\n1234\n", 15), 0);
	assert_int_equal(linebuf_append(&lb, "12", 2), -1);	/* past cap */
	linebuf_free(&lb);
}

static void
test_initial_frame(void **state)
{
	json_t *p = json_loads("{\"a\":1,\"secret\":\"s\",\"n\":{\"keep\":2,\"hide\":3}}", 0, NULL);
	struct strv w = { 0 };
	size_t len;
	char *f;

	(void)state;
	strv_push(&w, "secret");
	strv_push(&w, "n.hide");
	strv_push(&w, "absent.path");
	f = session_initial_frame(p, &w, 1024, &len);
	assert_string_equal(f, "{\"a\":1,\"n\":{\"keep\":2}}\n");
	free(f);
	assert_null(session_initial_frame(p, &w, 10, &len));	/* larger than a frame */
	json_decref(p);
	p = json_loads("[1]", 0, NULL);
	assert_null(session_initial_frame(p, &w, 1024, &len));	/* not an object */
	json_decref(p);
	strv_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_nul_and_depth),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_reply_as_jansson),
		cmocka_unit_test(test_linebuf),
		cmocka_unit_test(test_initial_frame),
	};

	return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
