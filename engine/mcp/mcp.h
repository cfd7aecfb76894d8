#ifndef AIRLOCK_MCP_H
#define AIRLOCK_MCP_H

/*
 * A client for one real MCP server over stdio (JSON-RPC 2.0, one message
 * per line). The engine starts the server itself: fork + exec with exactly
 * the configured environment, RLIMIT_CORE 0/0, all other descriptors
 * closed, its own session and process group, confined (mcp_confine.h). Nothing the server writes is ever logged:
 * stderr is drained and counted; error messages are dropped and only the
 * JSON-RPC error code kept (a message may echo the caller's input).
 *
 * One client is used by one thread at a time.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "err.h"
#include "hash.h"
#include "mcp_confine.h"
#include "strv.h"

#define MCP_PROTOCOL_VERSION	"2025-06-18"
#define MCP_LINE_MAX		(4 << 20)	/* longest server line accepted */
#define MCP_TOOLS_MAX		256
#define MCP_DIGEST_MAX		(2 * MCP_LINE_MAX + 4096)	/* a line's digest */

struct mcp_msg;

/*
 * Who reads the server's lines: one line (without its newline) in, its
 * digest (mcp_digest.h) checked into out, valid until the next call. 0;
 * -1 when the reader is lost (the stream is lost with it).
 */
typedef int (*mcp_digest_fn)(void *ctx, const char *line, size_t len, struct mcp_msg *out);

struct mcp_server_config {
	const char *name;		/* the operator's name for this upstream */
	struct strv argv;		/* argv[0] is an absolute path */
	const char *cwd;		/* NULL: inherit */
	struct strv env;		/* exactly these "NAME=value" entries */
	long init_timeout_ms;		/* initialize + tools/list; <= 0: 10 s */
	long call_timeout_ms;		/* default per tools/call; <= 0: 30 s */
	struct mcp_confine_config confine;	/* zeroed: the default confinement */
	/*
	 * The session's parser reads what the server writes (parser_mcp_digest
	 * with the parser as ctx, engine/privsep/parser.h): the engine takes
	 * only the digest. NULL: digested in this process, for tests, fuzzers
	 * and benchmarks, never a session.
	 */
	mcp_digest_fn digest;
	void *digest_ctx;
	/*
	 * Set, the client gives up whatever it waits for (a call's answer:
	 * MCP_STOPPED, notifications/cancelled sent), looking at it at least
	 * every MCP_STOP_LOOK_MS: the session's stop. NULL: no such flag.
	 */
	const atomic_bool *stop;
};

#define MCP_STOP_LOOK_MS	100

enum mcp_outcome {
	MCP_OK,			/* a result; text holds its text content */
	MCP_TOOL_ERROR,		/* a result with isError:true */
	MCP_RPC_ERROR,		/* a JSON-RPC error object; error_code holds its code */
	MCP_TIMEOUT,		/* no answer in time; notifications/cancelled was sent */
	MCP_STOPPED,		/* the stop flag rose first; notifications/cancelled was sent */
	MCP_FAULT,		/* malformed output, EOF, a dead server, an I/O error */
};

struct mcp_call_result {
	enum mcp_outcome outcome;
	long error_code;	/* MCP_RPC_ERROR: the code; MCP_TOOL_ERROR: 0 */
	char *text;		/* MCP_OK: text items concatenated (malloc'd, may be "") */
	size_t text_len;
	size_t other_items;	/* content items that were not text: counted, not kept */
};

struct mcp_stats {
	size_t stderr_bytes;
	size_t malformed_lines;	/* lines that were not a JSON-RPC message */
	size_t server_requests;	/* roots/list, sampling/… — answered with an error */
	size_t list_changed;	/* notifications/tools/list_changed seen */
	size_t calls;
};

struct mcp_client;

/*
 * Spawn, initialize (protocol version negotiated), notifications/initialized,
 * tools/list (paginated, bounded). Fails with a fixed message on any fault;
 * a failed exec (or chdir) is "upstream <name>: cannot start", one the
 * upstream's user may not read "upstream <name>: <user> cannot read <path>",
 * confinement that did not take "upstream <name>: confinement not enforced
 * (<what>)" (mcp_confine.h); nothing runs then.
 *
 * Side effect: if SIGPIPE still has its default action, the process starts
 * ignoring it (a write to a dead server must fail with EPIPE, not kill the
 * engine). The server itself starts with default signal actions and an
 * empty signal mask.
 */
int mcp_start(const struct mcp_server_config *cfg, struct mcp_client **out,
	      struct al_err *err);

/*
 * A program started exactly as a server is (its confinement, its own
 * session, the same errors), without the MCP handshake: the engine's
 * parser (engine/privsep/parser.h), whose stdin and stdout carry messages
 * of its own. mcp_process_fds lends the descriptors (non-blocking; the
 * client keeps them); mcp_stop ends the process as it ends a server.
 */
int mcp_start_process(const struct mcp_server_config *cfg, struct mcp_client **out,
		      struct al_err *err);
void mcp_process_fds(const struct mcp_client *c, int *in_fd, int *out_fd, int *err_fd);

/*
 * The same handshake over a transport the caller started (an upstream in a
 * container, its stdio relayed from the Docker attach stream): in_fd is
 * written as the server's stdin, out_fd read as its stdout, err_fd (or -1)
 * drained and counted as its stderr. The client takes the three
 * descriptors (closed on failure too) and makes them non-blocking;
 * mcp_stop closes them and ends nothing else: the caller ends the server.
 * cfg->argv is not used. mcp_pid is 0 and mcp_confinement zeroed: the
 * caller holds the receipt.
 */
int mcp_start_fds(const struct mcp_server_config *cfg, int in_fd, int out_fd, int err_fd,
		  struct mcp_client **out, struct al_err *err);

/*
 * The SHA-256 of a tool's definition (its tools/list entry in canonical
 * JSON), as of the latest listing. Before answering, pending server
 * messages are read, and a tools/list_changed notification causes a
 * re-list. Returns -1 when the tool is not listed (or the re-list failed).
 */
int mcp_tool_hash(struct mcp_client *c, const char *tool, char out[HASH_HEX_LEN + 1]);
/*
 * What an MCP agent is shown of a listed tool (docs/mcp-agents.md): its
 * description (NULL when the listing had no string) and its input schema
 * as canonical JSON text (NULL when not an object). Texts as the parser
 * digested them: the engine embeds them, it never parses them.
 */
struct mcp_tool_shown {
	char *desc;
	size_t desc_len;
	char *schema;
	size_t schema_len;
};

/*
 * The same as mcp_tool_hash, with a copy of what is shown (the caller
 * frees it with mcp_tool_shown_free).
 */
int mcp_tool_definition(struct mcp_client *c, const char *tool, char hash[HASH_HEX_LEN + 1],
			struct mcp_tool_shown *shown);
void mcp_tool_shown_free(struct mcp_tool_shown *s);

/*
 * tools/call. Returns 0 with res filled for every outcome the server
 * caused (including MCP_FAULT and MCP_TIMEOUT); -1 only for local failures
 * (out of memory, bad arguments). timeout_ms <= 0 uses the configured one.
 * arguments NULL means {}.
 *
 * After MCP_TIMEOUT or a malformed line the client stays usable (a late
 * answer is dropped by its id). After EOF, an I/O error or a line longer
 * than MCP_LINE_MAX the stream is lost: every later call is MCP_FAULT at
 * once. Blank lines from the server are skipped, not counted.
 */
int mcp_call(struct mcp_client *c, const char *tool, const json_t *arguments,
	     long timeout_ms, struct mcp_call_result *res, struct al_err *err);
/*
 * The same, with the arguments already serialised: args (len bytes) is the
 * compact JSON text of an object, sent as it is, so the bytes the caller
 * hashed are the bytes the server receives.
 */
int mcp_call_text(struct mcp_client *c, const char *tool, const char *args, size_t len,
		  long timeout_ms, struct mcp_call_result *res, struct al_err *err);
void mcp_call_result_free(struct mcp_call_result *res);

void mcp_get_stats(const struct mcp_client *c, struct mcp_stats *out);
pid_t mcp_pid(const struct mcp_client *c);
/*
 * What the server's process got at spawn (uid, Landlock ABI and rules,
 * seccomp filter hash, network): for the session's audit. Zeroed for a
 * replay client.
 */
const struct mcp_confine_receipt *mcp_confinement(const struct mcp_client *c);
const char *mcp_negotiated_version(const struct mcp_client *c);

/*
 * mcp_start without a process, for fuzzers and tests: the server's stdout
 * is exactly the len bytes given (borrowed: they must outlive the client),
 * then EOF; what the client writes goes to /dev/null. The server answers
 * when waited for, one line per wait, so a drain between calls sees
 * nothing new. Requests get ids 1, 2, … as with a live server (initialize
 * is 1, the first tools/list 2). The client then works as any other, and
 * a call faults once the bytes are used up.
 */
int mcp_start_replay(const char *name, const void *bytes, size_t len,
		     struct mcp_client **out, struct al_err *err);

/*
 * Close stdin, wait up to 2 s, SIGTERM, wait 1 s, SIGKILL; reap; free.
 * Signals go to the server's process group; whatever is left in the group
 * once the server has exited is killed too. Safe with NULL.
 */
void mcp_stop(struct mcp_client *c);

#endif
