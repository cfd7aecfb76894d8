#ifndef AIRLOCK_FRAME_H
#define AIRLOCK_FRAME_H

/*
 * The bridge protocol between agent and engine (docs/protocol.md), pure code:
 * line reassembly over the container's stdout, the request parser, and the
 * reply renderer. The parser says only "valid" or "invalid": the agent is
 * told nothing more than the fixed error, and nothing it wrote becomes a
 * message anywhere.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define FRAME_BYTES_DEFAULT	65536	/* one line including its newline */
#define FRAME_MAX_DEPTH		16	/* nesting of arrays and objects */
#define FRAME_OPERATION_MAX	64

#define FRAME_ERROR_INVALID	"invalid agent request"
#define FRAME_ERROR_EXCHANGE	"agent exchange failed"

struct agent_request {
	char operation[FRAME_OPERATION_MAX + 1];
	json_t *arguments;	/* an object; owned by the request */
};

/*
 * Parse one line (without its newline). Exactly two keys, "operation" (a
 * non-empty string) and "arguments" (an object); no duplicate keys, no NUL
 * bytes, valid UTF-8, nesting at most FRAME_MAX_DEPTH. Returns 0 or -1.
 */
int frame_parse(const char *line, size_t len, struct agent_request *req);
void frame_request_free(struct agent_request *req);

/* True when buf is valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
bool frame_utf8_valid(const unsigned char *buf, size_t len);

/*
 * {"allowed":true|false,"response":<text>|null} plus a newline, malloc'd.
 * response may be NULL. Returns NULL when out of memory or when the line
 * would exceed max bytes.
 */
char *frame_reply(bool allowed, const char *response, size_t response_len,
		  size_t max, size_t *out_len);

/*
 * Turn a malloc'd JSON text into one line: the text plus a newline, at
 * most max bytes in all. Takes ownership of text; NULL when it does not fit.
 */
char *frame_line(char *text, size_t max, size_t *out_len);

/* Line reassembly: a frame is not a line. */
struct linebuf {
	char *buf;
	size_t start, len;	/* unread bytes are buf[start, start + len) */
	size_t alloc, cap;	/* allocated now, and the most ever allowed */
	size_t max_line;	/* longest line content accepted (newline excluded) */
};

int linebuf_init(struct linebuf *lb, size_t max_line, size_t cap);
void linebuf_free(struct linebuf *lb);
/* Append bytes; -1 when a line grows past max_line or the buffer past cap. */
int linebuf_append(struct linebuf *lb, const void *data, size_t len);
/*
 * The next complete line (without newline), valid until the next call:
 * 1 when one is returned, 0 when none is complete yet.
 */
int linebuf_next(struct linebuf *lb, const char **line, size_t *len);
/* Bytes of an unfinished line still held. */
size_t linebuf_pending(const struct linebuf *lb);

#endif
