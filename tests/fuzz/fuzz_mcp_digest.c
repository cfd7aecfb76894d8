#include "fuzz.h"

#include <string.h>

#include "mcp.h"
#include "mcp_digest.h"

/*
 * The digest of an upstream's line (engine/mcp/mcp_digest.h), both sides.
 * An input whose first byte is even is a line: the parser's digest of it
 * must always be one the engine reads (whatever an upstream writes, the
 * engine gets a digest, never a parse of its own). An odd first byte: the
 * rest is a digest as a parser taken over might write it: the engine's
 * reader refuses it, or every span it gives lies inside the body, a
 * request's id is printable, and the tools it walks are the tools it
 * counted.
 */

static void
check_span(const struct mcp_span *s, const uint8_t *body, size_t len)
{
	if (!s->p)
		return;
	FUZZ_CHECK((const uint8_t *)s->p >= body && s->len <= len &&
		   (const uint8_t *)s->p + s->len <= body + len);
}

static void
check_read(const uint8_t *body, size_t len)
{
	struct mcp_digest_tool t;
	struct mcp_msg m;
	const char *at = NULL;
	size_t n = 0, i;

	if (mcp_digest_read(body, len, &m) < 0)
		return;
	FUZZ_CHECK(m.kind > MCP_MSG_BAD || (!m.method.p && !m.text.p && !m.n_tools));
	check_span(&m.method, body, len);
	check_span(&m.request_id, body, len);
	check_span(&m.text, body, len);
	check_span(&m.version, body, len);
	check_span(&m.cursor, body, len);
	for (i = 0; i < m.request_id.len; i++)
		FUZZ_CHECK((unsigned char)m.request_id.p[i] >= 0x20);
	while (mcp_msg_tool(&m, &at, &t)) {
		FUZZ_CHECK(t.name.p && t.def.p);
		check_span(&t.name, body, len);
		check_span(&t.def, body, len);
		check_span(&t.desc, body, len);
		check_span(&t.schema, body, len);
		n++;
	}
	FUZZ_CHECK(n == m.n_tools);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hash_canon d;
	struct mcp_msg m;

	if (size == 0)
		return 0;
	if (data[0] & 1) {
		check_read(data + 1, size - 1);
		return 0;
	}
	hash_canon_init(&d);
	FUZZ_CHECK(mcp_digest((const char *)data + 1, size - 1, MCP_DIGEST_MAX, &d) == 0);
	FUZZ_CHECK(mcp_digest_read(d.buf, d.len, &m) == 0);
	check_read((const uint8_t *)d.buf, d.len);
	hash_canon_free(&d);
	return 0;
}
