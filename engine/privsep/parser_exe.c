/*
 * airlock-parser: the engine's parser of agent requests (parser.h), a
 * program of its own, spawned confined per session. It locks itself down
 * before it reads a byte, says so, then answers one message at a time on
 * its stdin and stdout (parse_wire.h) until its stdin ends.
 *
 * The test build (airlock-parser-mutants) also answers PARSE_ESCAPE: it
 * tries the powers a parser taken over by hostile bytes would want (the
 * Docker socket, the audit database, the engine's process) and reports
 * what each attempt got. The shipped program has no such code.
 *
 * usage: airlock-parser parser FRAME_BYTES
 */
#include "canon.h"
#include "frame.h"
#include "mutant.h"
#include "parse_wire.h"
#include "parser_escape.h"
#include "parser_lockdown.h"

#include <errno.h>
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

static unsigned
lockdown_mutants(void)
{
	return (mutant("parser_no_landlock") ? LOCKDOWN_NO_LANDLOCK : 0) |
	       (mutant("parser_no_seccomp") ? LOCKDOWN_NO_SECCOMP : 0) |
	       (mutant("parser_no_proof") ? LOCKDOWN_NO_PROOF : 0);
}

static int
serve(char *buf, size_t cap)
{
	uint32_t type;
	size_t len;

	for (;;) {
		if (parse_recv(0, &type, buf, cap, &len, FOREVER) < 0)
			return errno == EPIPE ? 0 : 1;	/* the engine's goodbye, or a broken channel */
		if (type == PARSE_FRAME && answer_frame(buf, len, cap) < 0)
			return 1;
		if (type == PARSE_ESCAPE && parser_escape(buf, len) < 0)
			return 1;
		if (type != PARSE_FRAME && type != PARSE_ESCAPE)
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
	buf = malloc(cap);
	if (!buf || parser_lockdown(&ld, lockdown_mutants()) < 0) {
		fprintf(stderr, "airlock-parser: not locked down (%s)\n",
			buf ? ld.failed : "out of memory");
		return 3;
	}
	n = snprintf(ready, sizeof ready, "landlock %d, %u calls allowed",
		     ld.landlock_abi, ld.allowed_calls);
	if (parse_send(1, PARSE_READY, ready, (size_t)n, NULL, 0, FOREVER) < 0)
		return 1;
	n = serve(buf, cap);
	free(buf);
	return n;
}
