#ifndef AIRLOCK_PARSER_H
#define AIRLOCK_PARSER_H

/*
 * Privilege separation (issue 41, section 3; docs/architecture.md): the
 * agent's lines are parsed by a process of their own, never by the engine
 * that holds the Docker socket, the audit log and the gate. One parser a
 * session, not one an engine: a parser taken over by one session's lines
 * then sees no other session's, and its cost is measured (bench/run: its
 * private memory in the 500-session figure, its start in confine_bench,
 * its instructions per call beside the engine's):
 * `airlock-parser`, spawned as an upstream is (its own user
 * airlock-parse, no capabilities, no_new_privs, Landlock, seccomp, proven
 * before exec), which then locks itself down further before it reads a
 * byte (parser_lockdown.h): no file, no socket, no process but itself.
 * It holds its two pipes and nothing else.
 *
 * The engine sends a line and gets back the operation and the arguments
 * in canonical JSON text (canon.h), the same bytes it then hashes, audits
 * and sends on. The session's upstreams' lines go the same way and come
 * back as digests (engine/mcp/mcp_digest.h): what the MCP client needs
 * of a JSON-RPC message, in a binary form checked field by field. It believes nothing it cannot check: the operation is
 * looked up as a configured alias by exact name, the arguments must be
 * one object on one line, every length is capped. A parser that answers
 * anything else, late or not at all, is lost and the session ends
 * (RULE_PARSER_LOST): nothing is parsed in the engine instead.
 */

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "frame.h"
#include "mcp_confine.h"

#ifdef AIRLOCK_MUTANTS
#define PARSER_PROGRAM		"airlock-parser-mutants"
#else
#define PARSER_PROGRAM		"airlock-parser"
#endif
#define PARSER_USER		"airlock-parse"
#define PARSER_START_MS		5000	/* spawn, lockdown, ready */
#define PARSER_REPLY_MS		5000	/* one line's answer */

struct parser;
struct mcp_msg;

/* What a valid line says; args points into the parser's buffer until its next call. */
struct parsed_frame {
	char operation[FRAME_OPERATION_MAX + 1];
	const char *args;
	size_t args_len;
};

enum parser_verdict {
	PARSER_VALID,
	PARSER_INVALID,		/* not a request (the agent is told the fixed error) */
	PARSER_LOST,		/* the parser failed: no more lines can be parsed */
};

/*
 * The parser program beside exe (a build tree, or a package that installs
 * both in one directory; NULL: beside this process), else the installed
 * one. 0 with its path in out, or -1 with where it was looked for in out
 * (self_exe_program).
 */
int parser_program(const char *exe, char *out, size_t cap);

/*
 * Start one for frames of at most frame_bytes and wait until it is locked
 * down. Fails with "parser: …" naming the cause: the program, its user
 * (scripts/setup creates it), its confinement, or the lockdown's step.
 */
int parser_start(const char *program, size_t frame_bytes, struct parser **out,
		 struct al_err *err);
/* The same with the program found beside exe (parser_program). */
int parser_start_beside(const char *exe, size_t frame_bytes, struct parser **out,
			struct al_err *err);
void parser_stop(struct parser *p);

enum parser_verdict parser_frame(struct parser *p, const char *line, size_t len,
				 struct parsed_frame *out);

/*
 * An upstream's line read by the parser (mcp_digest_fn, with the parser as
 * ctx): its digest checked into out, valid until the next call. -1: the
 * parser is lost (it answered late, not at all, or with what it could not
 * have written); the upstream's stream is lost with it, and so is the
 * session (RULE_PARSER_LOST). Used by one thread at a time, as
 * parser_frame; the texts of a parsed_frame stay valid across it.
 */
int parser_mcp_digest(void *ctx, const char *line, size_t len, struct mcp_msg *out);
/*
 * A control-socket peer's line (one parser a connection, started by the
 * control server): the digest the parser wrote (control_digest, control.h)
 * in *digest, valid until the next call, for the caller to read with
 * control_digest_read; 0, or -1 when the parser is lost. A digest the
 * caller cannot read means a lost parser too: parser_set_lost.
 */
#define PARSER_CONTROL_LINE_MAX		65536	/* CONTROL_LINE_MAX */
#define PARSER_CONTROL_DIGEST_MAX	(8 * PARSER_CONTROL_LINE_MAX + 4096)
int parser_control(struct parser *p, const char *line, size_t len, const void **digest,
		   size_t *digest_len);
void parser_set_lost(struct parser *p);
/* Has it failed (parser_frame's PARSER_LOST, parser_mcp_digest's -1)? */
bool parser_lost(const struct parser *p);
/* The upstream lines it has read. */
size_t parser_digests(const struct parser *p);

/* How it runs: its pid, the spawn's receipt, and what the lockdown reported. */
int parser_pid(const struct parser *p);
const struct mcp_confine_receipt *parser_confinement(const struct parser *p);
const char *parser_lockdown_text(const struct parser *p);

#ifdef AIRLOCK_MUTANTS
/*
 * The test build: the parser tries the powers of parser_escape.h and the
 * report comes back in out ("docker=EACCES audit=EACCES ..."). 0, or -1.
 */
int parser_escape_test(struct parser *p, const char *docker_socket, const char *audit_db,
		       int engine_pid, char *out, size_t cap);
#endif

#endif
