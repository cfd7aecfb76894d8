#ifndef AIRLOCK_MCP_SESSION_H
#define AIRLOCK_MCP_SESSION_H

/*
 * What an MCP session (config agent.mcp, docs/mcp-agents.md) sends the shim
 * besides replies, pure code: the initial frame, which carries the payload
 * and the session's tools, and the tools_changed line a cutover causes
 * (docs/protocol.md, "MCP sessions"). Sessions that are not MCP sessions
 * never see either.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "mcp.h"

/*
 * What a tool's upstream lists for it, into out (zeroed first; the caller
 * frees it with mcp_tool_shown_free); false, out left empty, when nothing.
 */
typedef bool (*mcp_session_def_fn)(void *ctx, int tool, struct mcp_tool_shown *out);

/*
 * {"payload": <payload>, "tools": [{"name": alias, "description": …,
 * "inputSchema": {…}}, …]} and a newline; payload is the plain initial
 * frame's line (with its newline). Hidden aliases are left out; the
 * description is the operator's, else the upstream's, else ""; the schema
 * is the upstream's, else {"type":"object"}. When listed (the aliases the
 * gate allows at the start, mcp_session_listed) is not every alias — a
 * session that starts under a standing revoke — the frame also carries
 * "listed": {"revision": revision, "tools": [those aliases]}, so the agent
 * never sees a revoked tool listed. NULL when it would exceed max bytes or
 * out of memory.
 */
char *mcp_session_frame(const struct airlock_config *c, const char *payload, size_t payload_len,
			mcp_session_def_fn def, void *ctx, int64_t revision, uint64_t listed,
			size_t max, size_t *len);

/*
 * The set of listed aliases as bits (alias i is bit i) given the catalog
 * tools allowed now (allowed[t] for tool t < n).
 */
uint64_t mcp_session_listed(const struct airlock_config *c, const bool *allowed, size_t n);

/* {"tools_changed": revision, "tools": ["alias", …]} and a newline, for listed. */
char *mcp_session_changed(const struct airlock_config *c, int64_t revision, uint64_t listed,
			  size_t *len);

#endif
