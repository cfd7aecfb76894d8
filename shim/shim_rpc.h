#ifndef AIRLOCK_SHIM_RPC_H
#define AIRLOCK_SHIM_RPC_H

/*
 * The MCP server the shim offers an agent (docs/mcp-agents.md), pure code:
 * no descriptor, no process, no clock. It reads the engine's MCP initial
 * frame (the payload and the session's tools), answers one JSON-RPC line
 * from an MCP client at a time, turns a well-formed tools/call into one
 * bridge request, and maps the bridge's reply back into an MCP result.
 *
 * Nothing the client sends reaches the bridge but a tools/call whose name
 * is one of the session's aliases and whose arguments are an object that
 * fits one bridge line: everything else is answered here, with the
 * JSON-RPC error codes. The shim is not a security boundary (the agent
 * can write bridge lines itself); it only spares a well-behaved client
 * the engine's end of the session for a request the bridge refuses.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define SHIM_LINE_MAX		65536	/* a bridge line, and an MCP client's line */
#define SHIM_DEPTH_MAX		16	/* the bridge's nesting bound (docs/protocol.md) */
#define SHIM_TOOLS_MAX		64
#define SHIM_SERVER_NAME	"airlock-shim"
#define SHIM_PAYLOAD_URI	"airlock://payload"

/* The fixed texts an MCP client may see in a tools/call result. */
#define SHIM_TEXT_DENIED	"denied by the airlock gateway"
#define SHIM_TEXT_TOOL_ERROR	"the tool answered with an error"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR		(-32700)
#define RPC_INVALID_REQUEST	(-32600)
#define RPC_METHOD_NOT_FOUND	(-32601)
#define RPC_INVALID_PARAMS	(-32602)
#define RPC_INTERNAL_ERROR	(-32603)
#define RPC_RESOURCE_NOT_FOUND	(-32002)	/* MCP's resources/read */

struct shim_state;

/*
 * From the engine's MCP initial frame (one line, without its newline):
 * {"payload": {…}, "tools": [{"name", "description", "inputSchema"}, …]}.
 * NULL when it is not that (each tool needs a unique non-empty name and an
 * object schema; at most SHIM_TOOLS_MAX) or out of memory.
 */
struct shim_state *shim_state_new(const char *frame, size_t len);
void shim_state_free(struct shim_state *s);

/* The payload as one compact JSON text (borrowed), for the agent's stdin. */
const char *shim_payload_text(const struct shim_state *s);

enum shim_action {
	SHIM_NONE,	/* a notification or a response: nothing to send */
	SHIM_REPLY,	/* send reply to this client */
	SHIM_CALL,	/* send call to the bridge; answer the client with
			   shim_call_result(id, the bridge's reply) */
};

struct shim_out {
	enum shim_action action;
	char *reply;		/* SHIM_REPLY: a JSON-RPC line with its newline */
	char *call;		/* SHIM_CALL: a bridge request line with its newline */
	json_t *id;		/* SHIM_CALL: the request's id, owned */
	bool initialized;	/* the line was initialize or notifications/initialized */
};

/* One line from an MCP client (without its newline). Fills out. */
void shim_handle(struct shim_state *s, const char *line, size_t len, struct shim_out *out);
void shim_out_free(struct shim_out *out);

/* A JSON-RPC error line for id (NULL: null), code and its fixed message. */
char *shim_error_line(const json_t *id, int code);

enum shim_engine_line {
	SHIM_ENGINE_REPLY,	/* a bridge reply: give it to shim_call_result */
	SHIM_ENGINE_CHANGED,	/* the tool set changed: tell every client */
	SHIM_ENGINE_BAD,	/* neither */
};

/*
 * One line from the engine (without its newline): a bridge reply, or
 * {"tools_changed": <revision>, "tools": ["alias", …]}, the aliases listed
 * from now on (unknown names are ignored; a stale revision changes nothing
 * but is still CHANGED).
 */
enum shim_engine_line shim_engine(struct shim_state *s, const char *line, size_t len);

/*
 * shim_engine, and for a bridge reply with id not NULL, *answer is what
 * shim_call_result(id, line, len) returns (NULL when out of memory): one
 * parse of the line, the parent's path for each call.
 */
enum shim_engine_line shim_engine_answer(struct shim_state *s, const char *line, size_t len,
					 const json_t *id, char **answer);

/*
 * The JSON-RPC response for the call with this id, from the bridge's reply
 * line: allowed with text → a text result; allowed with null → an error
 * result with SHIM_TEXT_TOOL_ERROR; denied → an error result with
 * SHIM_TEXT_DENIED. NULL when out of memory or the line is no reply.
 */
char *shim_call_result(const json_t *id, const char *line, size_t len);

/* {"jsonrpc":"2.0","method":"notifications/tools/list_changed"} and a newline. */
const char *shim_list_changed_line(void);

/* Number of tools listed now (tests). */
size_t shim_listed(const struct shim_state *s);

#endif
