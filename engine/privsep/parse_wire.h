#ifndef AIRLOCK_PARSE_WIRE_H
#define AIRLOCK_PARSE_WIRE_H

/*
 * The channel between the engine and its parser (parser.h): the parser's
 * stdin carries requests, its stdout replies. A message is a fixed header
 * (type and body length, native byte order: both ends are one host's
 * programs) and then the body. Reading one is the only thing the engine
 * does with the parser's bytes before it checks them: a length against a
 * cap, no grammar.
 */

#include <stddef.h>
#include <stdint.h>

enum parse_msg {
	PARSE_READY = 1,	/* parser: locked down and proven, ready for bytes */
	PARSE_FRAME,		/* engine: one agent line, without its newline */
	PARSE_FRAME_OK,		/* parser: operation, NUL, canonical arguments */
	PARSE_FRAME_BAD,	/* parser: not a valid request (empty body) */
	PARSE_ESCAPE,		/* engine, test build only: try the powers (parser_exe.c) */
	PARSE_ESCAPE_REPORT,	/* parser, test build only: what each attempt got */
	PARSE_MCP,		/* engine: one line of an upstream, without its newline */
	PARSE_MCP_DIGEST,	/* parser: its digest (engine/mcp/mcp_digest.h) */
	PARSE_CONTROL,		/* engine: one line of a control-socket peer */
	PARSE_CONTROL_DIGEST,	/* parser: its digest (control_digest, control.h) */
};

struct parse_header {
	uint32_t type;
	uint32_t len;
};

/*
 * The most a reply body may hold for frames of frame_bytes: canonical text
 * can be longer than its source (1e9 is written 1000000000.0), never by
 * more than this.
 */
#define PARSE_FRAME_LIMIT	(1u << 20)	/* the largest frame a parser takes */
#define PARSE_EXPANSION		8
#define PARSE_SLACK		128
size_t parse_body_max(size_t frame_bytes);

/*
 * Send one message before deadline_ms (monotonic); fd may be non-blocking.
 * 0, or -1 with errno (ETIMEDOUT, EPIPE, ...).
 */
int parse_send(int fd, uint32_t type, const void *a, size_t a_len, const void *b,
	       size_t b_len, int64_t deadline_ms);

/*
 * Receive one message into buf (cap bytes) before deadline_ms. 0 with its
 * type and length; -1 with errno: ETIMEDOUT, EMSGSIZE (longer than cap),
 * EPIPE (end of stream), or the read's.
 */
int parse_recv(int fd, uint32_t *type, void *buf, size_t cap, size_t *len,
	       int64_t deadline_ms);
/* The same in two steps, for a body whose room depends on its header. */
int parse_recv_head(int fd, struct parse_header *h, int64_t deadline_ms);
int parse_recv_body(int fd, void *buf, size_t len, int64_t deadline_ms);

#endif
