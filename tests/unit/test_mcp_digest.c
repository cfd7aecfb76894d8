#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "mcp.h"
#include "mcp_digest.h"

/*
 * The digest of an upstream's line (engine/mcp/mcp_digest.h): what the
 * parser writes of real MCP lines, and the engine's reader against the
 * lies a parser taken over could tell (each refused on its own).
 */

static void
digest(const char *line, struct hash_canon *d, struct mcp_msg *m)
{
	hash_canon_init(d);
	assert_int_equal(mcp_digest(line, strlen(line), MCP_DIGEST_MAX, d), 0);
	assert_int_equal(mcp_digest_read(d->buf, d->len, m), 0);
}

static bool
span_is(const struct mcp_span *s, const char *want)
{
	return s->p && s->len == strlen(want) && memcmp(s->p, want, s->len) == 0;
}

static void
test_lines(void **unused)
{
	struct mcp_digest_tool t;
	struct hash_canon d;
	struct mcp_msg m;
	const char *at = NULL;

	(void)unused;
	digest("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\\u00e9\"},"
	       "{\"type\":\"image\",\"data\":\"AA==\"},{\"type\":\"text\",\"text\":\"c\"}]}}", &d, &m);
	assert_int_equal(m.kind, MCP_MSG_ANSWER);
	assert_int_equal(m.id, 3);
	assert_true(m.flags & MCP_D_CONTENT);
	assert_int_equal(m.text.len, 4);
	assert_memory_equal(m.text.p, "a\xc3\xa9" "c", 4);	/* the strings' bytes, in order */
	assert_int_equal(m.other_items, 1);
	hash_canon_free(&d);

	digest("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"nextCursor\":\"p2\",\"tools\":[{\"name\":\"echo\","
	       "\"inputSchema\":{\"type\":\"object\",\"a\":1e2},\"description\":\"Echo.\"},{\"name\":\"x\"}]}}",
	       &d, &m);
	assert_int_equal(m.n_tools, 2);
	assert_true(span_is(&m.cursor, "p2"));
	assert_int_equal(mcp_msg_tool(&m, &at, &t), 1);
	assert_true(span_is(&t.name, "echo"));
	assert_true(span_is(&t.desc, "Echo."));
	assert_true(span_is(&t.schema, "{\"a\":100.0,\"type\":\"object\"}"));	/* canonical */
	assert_int_equal(mcp_msg_tool(&m, &at, &t), 1);
	assert_true(span_is(&t.name, "x"));
	assert_null(t.desc.p);
	assert_null(t.schema.p);
	assert_int_equal(mcp_msg_tool(&m, &at, &t), 0);
	hash_canon_free(&d);

	digest("{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}", &d, &m);
	assert_int_equal(m.kind, MCP_MSG_REQUEST);
	assert_true(span_is(&m.request_id, "\"srv-1\""));
	assert_true(span_is(&m.method, "roots/list"));
	hash_canon_free(&d);

	digest("{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"m\"}", &d, &m);
	assert_null(m.request_id.p);	/* an id it cannot echo safely: unanswered */
	hash_canon_free(&d);

	digest("not json", &d, &m);
	assert_int_equal(m.kind, MCP_MSG_BAD);
	hash_canon_free(&d);
	digest("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}", &d, &m);
	assert_int_equal(m.kind, MCP_MSG_BAD);
	hash_canon_free(&d);
	digest("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", &d, &m);
	assert_int_equal(m.kind, MCP_MSG_STRAY);
	hash_canon_free(&d);
}

/* A body built by hand, as a parser taken over would. */
struct body {
	char b[512];
	size_t len;
	struct mcp_digest_head h;
};

static void
body_begin(struct body *x, uint32_t kind, uint32_t flags)
{
	memset(x, 0, sizeof *x);
	x->h.kind = kind;
	x->h.flags = flags;
	x->len = sizeof x->h;
}

static void
body_field(struct body *x, uint32_t tag, const char *v, size_t len)
{
	struct mcp_digest_field f = { tag, (uint32_t)len };

	memcpy(x->b + x->len, &f, sizeof f);
	memcpy(x->b + x->len + sizeof f, v, len);
	x->len += sizeof f + len;
	x->h.n_fields++;
}

static int
body_read(struct body *x)
{
	struct mcp_msg m;

	memcpy(x->b, &x->h, sizeof x->h);
	return mcp_digest_read(x->b, x->len, &m);
}

static void
test_lies(void **unused)
{
	struct body x;

	(void)unused;
	/* the honest shapes read */
	body_begin(&x, MCP_MSG_REQUEST, 0);
	body_field(&x, MCP_F_METHOD, "roots/list", 10);
	body_field(&x, MCP_F_REQUEST_ID, "\"a\\\"b\"", 6);
	assert_int_equal(body_read(&x), 0);
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT | MCP_D_CONTENT);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	assert_int_equal(body_read(&x), 0);

	/* an id that would end the refusal's JSON early, or its line */
	body_begin(&x, MCP_MSG_REQUEST, 0);
	body_field(&x, MCP_F_REQUEST_ID, "\"a\",\"x\":\"", 9);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_REQUEST, 0);
	body_field(&x, MCP_F_REQUEST_ID, "1\n2", 3);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_REQUEST, 0);
	body_field(&x, MCP_F_REQUEST_ID, "1}", 2);
	assert_int_equal(body_read(&x), -1);
	/* a field longer than the body */
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT | MCP_D_CONTENT);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	x.len -= 1;
	assert_int_equal(body_read(&x), -1);
	/* bytes after the last field */
	body_begin(&x, MCP_MSG_NOTE, 0);
	x.len += 3;
	assert_int_equal(body_read(&x), -1);
	/* a text where the flags say none, and one twice */
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT | MCP_D_CONTENT);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	assert_int_equal(body_read(&x), -1);
	/* a text in a request, a method in an answer */
	body_begin(&x, MCP_MSG_REQUEST, 0);
	body_field(&x, MCP_F_TEXT, "hi", 2);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_ANSWER, 0);
	body_field(&x, MCP_F_METHOD, "m", 1);
	assert_int_equal(body_read(&x), -1);
	/* an unknown tag, kind or flag */
	body_begin(&x, MCP_MSG_NOTE, 0);
	body_field(&x, MCP_F_TAGS, "x", 1);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_KINDS, 0);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_ANSWER, 0x10000);
	assert_int_equal(body_read(&x), -1);
	/* a definition without its name; a count that is not the tools' */
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT | MCP_D_TOOLS);
	body_field(&x, MCP_F_TOOL_DEF, "{}", 2);
	assert_int_equal(body_read(&x), -1);
	body_begin(&x, MCP_MSG_ANSWER, MCP_D_RESULT | MCP_D_RESULT_OBJECT | MCP_D_TOOLS);
	body_field(&x, MCP_F_TOOL_NAME, "a", 1);
	body_field(&x, MCP_F_TOOL_DEF, "{}", 2);
	x.h.n_tools = 2;
	assert_int_equal(body_read(&x), -1);
	x.h.n_tools = 1;
	assert_int_equal(body_read(&x), 0);
	/* tools after the cursor: one run only */
	body_field(&x, MCP_F_CURSOR, "c", 1);
	x.h.flags |= MCP_D_CURSOR;
	assert_int_equal(body_read(&x), 0);
	body_field(&x, MCP_F_TOOL_NAME, "b", 1);
	body_field(&x, MCP_F_TOOL_DEF, "{}", 2);
	x.h.n_tools = 2;
	assert_int_equal(body_read(&x), -1);
	/* a request's texts that are not printable */
	body_begin(&x, MCP_MSG_NOTE, 0);
	body_field(&x, MCP_F_METHOD, "a\nb", 3);
	assert_int_equal(body_read(&x), -1);
	/* an id in a message that is not an answer */
	body_begin(&x, MCP_MSG_NOTE, 0);
	x.h.id = 5;
	assert_int_equal(body_read(&x), -1);
	/* too short for its head */
	assert_int_equal(mcp_digest_read("abc", 3, &(struct mcp_msg){ 0 }), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
