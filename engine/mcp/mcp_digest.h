#ifndef AIRLOCK_MCP_DIGEST_H
#define AIRLOCK_MCP_DIGEST_H

/*
 * An upstream's line as the engine may take it (issue 41, section 3): not
 * the JSON-RPC text, which only the session's parser reads, but a digest of
 * what the MCP client needs of it, in a fixed binary form that is checked
 * field by field and never parsed as a grammar. The parser
 * (engine/privsep) writes it with mcp_digest; the engine reads it with
 * mcp_digest_read and believes nothing it has not checked there: every
 * length against the body, every tag known, each field where its kind
 * allows it, the texts it echoes (a request's id, a method) printable.
 *
 * The body: struct mcp_digest_head, then n_fields fields, each a
 * struct mcp_digest_field and len bytes, nothing after. Native byte
 * order: both ends are one host's programs.
 *
 * What is kept of a message is what the client used of the JSON before:
 * the kind and id, the shape of an answer (exactly one of result and
 * error, the error's integer code), of a result object its isError, its
 * content (text items concatenated, other items counted, or "not valid
 * content"), its protocolVersion, its tools (each entry's name, its
 * definition as canonical JSON text, the source of its pinned hash, and
 * the description and input schema an MCP agent is shown) and its
 * nextCursor. Error messages are dropped, as they always were.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "canon.h"

#define MCP_DIGEST_TOOLS_MAX	257	/* one past MCP_TOOLS_MAX: "more than 256" */
#define MCP_DIGEST_ID_MAX	256	/* a server request's id, as canonical text */
#define MCP_DIGEST_METHOD_MAX	256
#define MCP_DIGEST_VERSION_MAX	32

enum mcp_msg_kind {
	MCP_MSG_BAD,		/* not a JSON-RPC 2.0 message */
	MCP_MSG_ANSWER,		/* no method, an integer id: a response */
	MCP_MSG_STRAY,		/* no method, an id of another type: answers nothing we sent */
	MCP_MSG_REQUEST,	/* a method and an id: the server asks us */
	MCP_MSG_NOTE,		/* a method and no id: a notification */
	MCP_MSG_KINDS
};

/* What an answer holds (flags). */
#define MCP_D_RESULT		0x001u	/* it has a result */
#define MCP_D_RESULT_OBJECT	0x002u	/* … and the result is an object */
#define MCP_D_ERROR		0x004u	/* it has an error */
#define MCP_D_CODE_INT		0x008u	/* … whose code is an integer (code) */
#define MCP_D_IS_ERROR		0x010u	/* result.isError is true */
#define MCP_D_CONTENT		0x020u	/* result.content is valid content: text, other_items */
#define MCP_D_TOOLS		0x040u	/* result.tools is an array: the tool fields */
#define MCP_D_TOOL_BAD		0x080u	/* … with an entry that is not an object with a name */
#define MCP_D_CURSOR		0x100u	/* result.nextCursor is a string: the cursor field */
#define MCP_D_CURSOR_BAD	0x200u	/* … is present, not a string and not null */
#define MCP_D_FLAGS		0x3ffu

enum mcp_digest_tag {
	MCP_F_METHOD = 1,	/* REQUEST, NOTE: the method */
	MCP_F_REQUEST_ID,	/* REQUEST: its id as canonical JSON text */
	MCP_F_TEXT,		/* MCP_D_CONTENT: the text items' bytes */
	MCP_F_VERSION,		/* result.protocolVersion, when a short string */
	MCP_F_CURSOR,		/* MCP_D_CURSOR */
	MCP_F_TOOL_NAME,	/* MCP_D_TOOLS, per entry in order: its name, */
	MCP_F_TOOL_DEF,		/* its definition (canonical JSON text), */
	MCP_F_TOOL_DESC,	/* its description if a string (optional), */
	MCP_F_TOOL_SCHEMA,	/* its inputSchema if an object, canonical (optional) */
	MCP_F_TAGS
};

struct mcp_digest_head {
	uint32_t kind;
	uint32_t flags;
	int64_t id;		/* ANSWER */
	int64_t code;		/* MCP_D_CODE_INT */
	uint64_t other_items;	/* MCP_D_CONTENT */
	uint32_t n_fields;
	uint32_t n_tools;	/* MCP_D_TOOLS: entries digested, at most MCP_DIGEST_TOOLS_MAX */
};

struct mcp_digest_field {
	uint32_t tag;
	uint32_t len;
};

/* One text of a digest: len bytes at p, borrowed from the body; p NULL when absent. */
struct mcp_span {
	const char *p;
	size_t len;
};

struct mcp_digest_tool {
	struct mcp_span name, def, desc, schema;
};

/* A digest once checked. The spans point into the body it was read from. */
struct mcp_msg {
	enum mcp_msg_kind kind;
	unsigned flags;
	int64_t id, code;
	size_t other_items;
	struct mcp_span method, request_id, text, version, cursor;
	size_t n_tools;
	const char *tools;	/* the first tool field; walk with mcp_msg_tool */
	const char *end;
};

/*
 * The parser's side: a digest of one line (without its newline) into out,
 * which the caller initialised (hash_canon_init) and frees. 0; -1 when out
 * of memory or the digest would pass max bytes.
 */
int mcp_digest(const char *line, size_t len, size_t max, struct hash_canon *out);

/*
 * The engine's side: check a body and fill m, whose spans then point into
 * body. 0, or -1: not a digest the parser could have written.
 */
int mcp_digest_read(const void *body, size_t len, struct mcp_msg *m);

/*
 * The next tool of a checked digest: start with *at = NULL. 1 with t
 * filled, 0 after the last.
 */
int mcp_msg_tool(const struct mcp_msg *m, const char **at, struct mcp_digest_tool *t);

#endif
