/*
 * airlock-parser: the engine's parser of agent requests (parser.h), a
 * program of its own, spawned confined per session. It locks itself down
 * before it reads a byte, says so, then answers one message at a time on
 * its stdin and stdout (parse_wire.h) until its stdin ends.
 *
 * It parses three kinds of untrusted lines: the agent's requests
 * (PARSE_FRAME: the operation and canonical arguments), its session's
 * upstreams' JSON-RPC lines (PARSE_MCP: a digest, engine/mcp/mcp_digest.h)
 * and, one parser a connection, a control-socket peer's requests
 * (PARSE_CONTROL: a digest, control_digest in engine/protocol/control.h).
 *
 * The test build (airlock-parser-mutants) also answers PARSE_ESCAPE: it
 * tries the powers a parser taken over by hostile bytes would want (the
 * Docker socket, the audit database, the engine's process) and reports
 * what each attempt got; and under the mutant parser_forge_answer it
 * replaces every byte of an answer's text with 'F', as a parser taken over
 * could: what the agent then gets shows whose reading the engine took.
 * The shipped program has no such code.
 *
 * usage: airlock-parser parser FRAME_BYTES
 */
#include "canon.h"
#include "control.h"
#include "frame.h"
#include "mcp.h"
#include "mcp_digest.h"
#include "mutant.h"
#include "parse_wire.h"
#include "parser_escape.h"
#include "parser_lockdown.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOREVER		INT64_MAX

#if defined(__SANITIZE_ADDRESS__)
#define PARSER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARSER_ASAN 1
#endif
#endif
#ifdef PARSER_ASAN
/*
 * A sanitizer build's leak check at exit traces the process (ptrace),
 * which the lockdown refuses: the parser's heap is two buffers, freed.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static size_t
frame_arg(int argc, char **argv)
{
	char *end;
	unsigned long v;

	if (argc != 3 || strcmp(argv[1], "parser") != 0)
		return 0;
	errno = 0;
	v = strtoul(argv[2], &end, 10);
	return errno || *end || v < 2 || v > PARSE_FRAME_LIMIT ? 0 : (size_t)v;
}

/*
 * jansson's memory for one message comes from an arena, dropped whole once
 * the message is answered: a parse is many small allocations, each freed
 * in the end, and malloc's bookkeeping for them cost as much as the rest
 * of the digest (bench/run counts the instructions). free is a no-op in
 * between; one process, one thread, one message at a time.
 */
#define ARENA_FIRST	(16u << 10)	/* kept between messages; most fit */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

static struct chunk *arena;

static void *
arena_alloc(size_t n)
{
	size_t want = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	struct chunk *c = arena;
	size_t cap;
	void *p;

	if (want < n)
		return NULL;
	if (!c || c->cap - c->used < want) {
		cap = want > ARENA_FIRST ? want : ARENA_FIRST;
		if (c && cap < 2 * c->cap)
			cap = 2 * c->cap;
		if (cap > SIZE_MAX - sizeof *c || !(c = malloc(sizeof *c + cap)))
			return NULL;
		*c = (struct chunk){ .next = arena, .cap = cap };
		arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += want;
	return p;
}

static void
arena_free(void *p)
{
	(void)p;	/* the whole arena goes after the message */
}

/* After each message: the first chunk kept, emptied; the rest returned. */
static void
arena_reset(void)
{
	struct chunk *c;

	while (arena && arena->next) {
		c = arena;
		arena = c->next;
		free(c);
	}
	if (arena && arena->cap > ARENA_FIRST) {
		free(arena);
		arena = NULL;
	}
	if (arena)
		arena->used = 0;
}

/* One line: its operation and canonical arguments, or "not a request". */
static int
answer_frame(const char *line, size_t len, size_t cap)
{
	struct agent_request req;
	struct hash_canon c;
	size_t op;
	int rc;

	if (frame_parse(line, len, &req) < 0)
		return parse_send(1, PARSE_FRAME_BAD, NULL, 0, NULL, 0, FOREVER);
	hash_canon_init(&c);
	hash_canon_json(&c, req.arguments);
	op = strlen(req.operation) + 1;
	if (c.bad || op + c.len > cap)
		rc = parse_send(1, PARSE_FRAME_BAD, NULL, 0, NULL, 0, FOREVER);
	else
		rc = parse_send(1, PARSE_FRAME_OK, req.operation, op, c.buf, c.len, FOREVER);
	hash_canon_free(&c);
	frame_request_free(&req);
	return rc;
}

#ifdef AIRLOCK_MUTANTS
static void
forge(struct hash_canon *d)
{
	struct mcp_msg m;

	if (mutant("parser_forge_answer") && mcp_digest_read(d->buf, d->len, &m) == 0 && m.text.p)
		memset((char *)m.text.p, 'F', m.text.len);
}
#else
#define forge(d) ((void)(d))
#endif

/* One line of an upstream: its digest (never a reason: the engine counts bad lines). */
static int
answer_mcp(const char *line, size_t len)
{
	struct hash_canon d;
	int rc = -1;

	hash_canon_init(&d);
	if (mcp_digest(line, len, MCP_DIGEST_MAX, &d) == 0) {
		forge(&d);
		rc = parse_send(1, PARSE_MCP_DIGEST, d.buf, d.len, NULL, 0, FOREVER);
	}
	hash_canon_free(&d);
	return rc;
}

/* One line of a control-socket peer: its digest, refusal included. */
static int
answer_control(const char *line, size_t len)
{
	struct hash_canon d;
	int rc = -1;

	hash_canon_init(&d);
	if (control_digest(line, len, &d) == 0)
		rc = parse_send(1, PARSE_CONTROL_DIGEST, d.buf, d.len, NULL, 0, FOREVER);
	hash_canon_free(&d);
	return rc;
}

static unsigned
lockdown_mutants(void)
{
	return (mutant("parser_no_landlock") ? LOCKDOWN_NO_LANDLOCK : 0) |
	       (mutant("parser_no_seccomp") ? LOCKDOWN_NO_SECCOMP : 0) |
	       (mutant("parser_no_proof") ? LOCKDOWN_NO_PROOF : 0);
}

/* A body of the header's length: buf when it fits, else (an upstream's long line) its own. */
static char *
body_room(const struct parse_header *h, char *buf, size_t cap)
{
	if (h->len <= cap)
		return buf;
	if ((h->type != PARSE_MCP || h->len > MCP_LINE_MAX) &&
	    (h->type != PARSE_CONTROL || h->len > CONTROL_LINE_MAX))
		return NULL;
	return malloc(h->len);
}

static int
answer(uint32_t type, const char *body, size_t len, size_t cap)
{
	switch (type) {
	case PARSE_FRAME:
		return answer_frame(body, len, cap);
	case PARSE_MCP:
		return answer_mcp(body, len);
	case PARSE_CONTROL:
		return answer_control(body, len);
	case PARSE_ESCAPE:
		return parser_escape(body, len);
	default:
		return -1;
	}
}

static int
serve(char *buf, size_t cap)
{
	struct parse_header h;
	char *body;
	int rc;

	for (;;) {
		if (parse_recv_head(0, &h, FOREVER) < 0)
			return errno == EPIPE ? 0 : 1;	/* the engine's goodbye, or a broken channel */
		if (!(body = body_room(&h, buf, cap)))
			return 1;
		rc = parse_recv_body(0, body, h.len, FOREVER);
		if (rc == 0)
			rc = answer(h.type, body, h.len, cap);
		arena_reset();
		if (body != buf)
			free(body);
		if (rc < 0)
			return 1;
	}
}

int
main(int argc, char **argv)
{
	size_t frame = frame_arg(argc, argv), cap = parse_body_max(frame);
	struct parser_lockdown ld;
	char ready[64], *buf;
	int n;

	if (!frame) {
		fputs("usage: airlock-parser parser FRAME_BYTES\n", stderr);
		return 2;
	}
	json_object_seed(0);	/* reads the kernel's randomness: before the lockdown */
	json_set_alloc_funcs(arena_alloc, arena_free);
	buf = malloc(cap);
	if (!buf || parser_lockdown(&ld, lockdown_mutants()) < 0) {
		fprintf(stderr, "airlock-parser: not locked down (%s)\n",
			buf ? ld.failed : "out of memory");
		return 3;
	}
	malloc_trim(0);	/* the filter's build is freed: its pages go back (brk, madvise) */
	n = snprintf(ready, sizeof ready, "landlock %d, %u calls allowed",
		     ld.landlock_abi, ld.allowed_calls);
	if (parse_send(1, PARSE_READY, ready, (size_t)n, NULL, 0, FOREVER) < 0)
		return 1;
	n = serve(buf, cap);
	free(buf);
	return n;
}
