#ifndef AIRLOCK_MCP_INT_H
#define AIRLOCK_MCP_INT_H

/*
 * What the MCP client's files share. mcp.c speaks JSON-RPC and holds the
 * public calls; mcp_pipe.c moves the bytes (stderr counted, stdout cut
 * into lines, stdin written whole); mcp_proc.c starts and ends the server
 * process; mcp_tools.c keeps the pinned tool definitions. Not for other
 * callers: mcp.h is the client's interface.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "err.h"
#include "hash.h"
#include "mcp.h"
#include "mcp_digest.h"

#define MCP_POLL_MAX_MS		60000

struct mcp_tool {
	char *name;
	char hash[HASH_HEX_LEN + 1];	/* of its listed definition's canonical text */
	struct mcp_tool_shown shown;	/* what an MCP agent is shown of it */
};

struct mcp_listing {
	struct mcp_tool *v;	/* grown by doubling, at most MCP_TOOLS_MAX */
	size_t n, cap;
};

struct mcp_client {
	char *name;
	pid_t pid;
	bool reaped;
	int in_fd;		/* the server's stdin; -1 once closed */
	int out_fd;		/* its stdout; -1 after EOF */
	int err_fd;		/* its stderr; -1 after EOF */
	char *buf;		/* stdout bytes from off to len are not yet taken */
	size_t off, len, cap;
	size_t scan;		/* bytes after off known to hold no newline */
	bool eof;
	bool broken;		/* EOF, I/O error or lost framing: every call faults */
	bool stale;		/* a tools/list_changed came after the listing began */
	bool echoed;		/* it asked us to initialize: it echoes what it reads */
	mcp_digest_fn digest;	/* who reads the lines; NULL: mcp_digest here */
	void *digest_ctx;
	const atomic_bool *stop;	/* the session's stop (mcp_server_config) */
	struct hash_canon *dig;	/* the digest made here, when digest is NULL */
	json_int_t next_id;
	long init_ms, call_ms;
	char version[16];
	struct mcp_listing tools;
	struct mcp_stats stats;
	struct mcp_confine_receipt confinement;	/* filled at spawn */
	bool replaying;		/* mcp_start_replay: no process, stdout from replay */
	const char *replay;	/* the replayed stdout not yet delivered (borrowed) */
	size_t replay_len;
};

enum mcp_got {
	MCP_GOT_MSG,
	MCP_GOT_BAD,	/* a line that is not a JSON-RPC message */
	MCP_GOT_NONE,	/* the deadline passed */
	MCP_GOT_LOST,	/* EOF, an I/O error, a line past MCP_LINE_MAX */
};

enum mcp_wait {
	MCP_W_ANSWER,
	MCP_W_TIMEOUT,
	MCP_W_STOPPED,	/* the stop flag rose */
	MCP_W_BAD,
	MCP_W_LOST,
	MCP_W_NOMEM,
};

/* The session's stop rose: every wait gives up. */
static inline bool
mcp_stopping(const struct mcp_client *c)
{
	return c->stop && atomic_load(c->stop);
}

/* mcp_pipe.c: the bytes */
void mcp_close_fd(int *fd);
void mcp_drain_stderr(struct mcp_client *c);
/* The stream is lost: every later call faults. Returns MCP_GOT_LOST. */
enum mcp_got mcp_lose(struct mcp_client *c);
/* msg's texts stay valid until the next read. */
enum mcp_got mcp_read_msg(struct mcp_client *c, long long deadline, struct mcp_msg *msg);
int mcp_write_all(struct mcp_client *c, const char *s, size_t len, long long deadline);
int mcp_send(struct mcp_client *c, const json_t *msg, long long deadline);

/* mcp_proc.c: the process */
/* Fork and exec the server, its stdio on pipes; "upstream <name>: cannot start" on failure. */
int mcp_spawn(struct mcp_client *c, const struct mcp_server_config *cfg, struct al_err *err);
/* Close stdin, wait, SIGTERM, wait, SIGKILL the group; reap. */
void mcp_end_process(struct mcp_client *c);
/*
 * Has the server exited (waiting up to ms)? how gets "exited with status
 * N" or "was killed by signal N (name)". It stays unreaped for the stop.
 */
bool mcp_exited(struct mcp_client *c, long ms, char *how, size_t cap);

/* mcp_tools.c: the listing and its pins */
void mcp_listing_free(struct mcp_listing *l);
int mcp_list_tools(struct mcp_client *c, long long deadline, struct al_err *err);

/* mcp.c: JSON-RPC */
void mcp_drain(struct mcp_client *c);
/* The answer in *answer (its texts valid until the next read); 0, or -1 with err set. */
int mcp_ask(struct mcp_client *c, const char *method, json_t *params, long long deadline,
	    struct mcp_msg *answer, struct al_err *err);
/* A result object (0), or -1 with err set for an error or a malformed answer. */
int mcp_result(struct mcp_client *c, const struct mcp_msg *answer, const char *step,
	       struct al_err *err);

#endif
