#include "frame.h"
#include "canon.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

/* Length of the UTF-8 sequence led by c, 0 if c cannot lead one. */
static size_t
utf8_seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return 2;
	if (c >= 0xe0 && c <= 0xef)
		return 3;
	if (c >= 0xf0 && c <= 0xf4)
		return 4;
	return 0;
}

static bool
utf8_seq_valid(const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return false;
	if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0)	/* overlong */
		return false;
	if (n == 3 && s[0] == 0xed && s[1] >= 0xa0)	/* surrogate */
		return false;
	if (n == 4 && s[0] == 0xf0 && s[1] < 0x90)	/* overlong */
		return false;
	if (n == 4 && s[0] == 0xf4 && s[1] >= 0x90)	/* > U+10FFFF */
		return false;
	return true;
}

bool
frame_utf8_valid(const unsigned char *buf, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		n = utf8_seq_len(buf[i]);
		if (n == 0 || n > len - i || !utf8_seq_valid(buf + i, n))
			return false;
		i += n;
	}
	return true;
}

/* Deepest nesting of [ and { outside strings. */
static size_t
max_depth(const char *s, size_t len)
{
	size_t i, depth = 0, deepest = 0;
	bool in_string = false;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > deepest)
				deepest = depth;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return deepest;
}

static int
take_fields(json_t *root, struct agent_request *req)
{
	json_t *op = json_object_get(root, "operation");
	json_t *args = json_object_get(root, "arguments");
	size_t n;

	if (json_object_size(root) != 2 || !json_is_string(op) || !json_is_object(args))
		return -1;
	n = json_string_length(op);
	if (n == 0 || n > FRAME_OPERATION_MAX || strlen(json_string_value(op)) != n)
		return -1;
	memcpy(req->operation, json_string_value(op), n + 1);
	req->arguments = json_incref(args);
	return 0;
}

int
frame_parse(const char *line, size_t len, struct agent_request *req)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(req, 0, sizeof *req);
	if (len == 0 || memchr(line, '\0', len) ||
	    !frame_utf8_valid((const unsigned char *)line, len) ||
	    max_depth(line, len) > FRAME_MAX_DEPTH)
		return -1;
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		return -1;
	}
	rc = take_fields(root, req);
	json_decref(root);
	return rc;
}

void
frame_request_free(struct agent_request *req)
{
	json_decref(req->arguments);
	req->arguments = NULL;
}

char *
frame_line(char *text, size_t max, size_t *out_len)
{
	size_t n = text ? strlen(text) : 0;
	char *line = text && n + 1 <= max ? realloc(text, n + 2) : NULL;

	if (!line) {
		free(text);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*out_len = n + 1;
	return line;
}

/*
 * Written straight into one buffer by the canonical writer, which escapes
 * as jansson does (canon.h): no json_t and no second copy of the response.
 */
char *
frame_reply(bool allowed, const char *response, size_t response_len,
	    size_t max, size_t *out_len)
{
	static const char yes[] = "{\"allowed\":true,\"response\":";
	static const char no[] = "{\"allowed\":false,\"response\":";
	struct hash_canon c;

	hash_canon_init(&c);
	if (allowed)
		hash_canon_raw(&c, yes, sizeof yes - 1);
	else
		hash_canon_raw(&c, no, sizeof no - 1);
	hash_canon_str(&c, response, response_len);
	hash_canon_raw(&c, "}\n", 2);
	if (c.len > max) {
		hash_canon_free(&c);
		return NULL;
	}
	return hash_canon_take(&c, out_len);
}

int
linebuf_init(struct linebuf *lb, size_t max_line, size_t cap)
{
	memset(lb, 0, sizeof *lb);
	lb->max_line = max_line;
	lb->cap = cap;
	lb->alloc = cap < 4096 ? cap : 4096;
	lb->buf = malloc(lb->alloc);
	return lb->buf ? 0 : -1;
}

void
linebuf_free(struct linebuf *lb)
{
	free(lb->buf);
	memset(lb, 0, sizeof *lb);
}

/* Room for n more bytes: move unread bytes to the front, then grow. */
static int
linebuf_reserve(struct linebuf *lb, size_t n)
{
	if (lb->start > 0) {
		memmove(lb->buf, lb->buf + lb->start, lb->len);
		lb->start = 0;
	}
	if (n > lb->cap - lb->len)
		return -1;
	return grow(&lb->buf, &lb->alloc, lb->len + n, 1, 4096, lb->cap);
}

size_t
linebuf_pending(const struct linebuf *lb)
{
	const char *nl;

	if (lb->len == 0)
		return 0;
	nl = memrchr(lb->buf + lb->start, '\n', lb->len);
	return nl ? (size_t)(lb->buf + lb->start + lb->len - nl - 1) : lb->len;
}

int
linebuf_append(struct linebuf *lb, const void *data, size_t len)
{
	if (linebuf_reserve(lb, len) < 0)
		return -1;
	memcpy(lb->buf + lb->len, data, len);
	lb->len += len;
	/* An unfinished line already longer than a frame will never fit. */
	return linebuf_pending(lb) > lb->max_line ? -1 : 0;
}

int
linebuf_next(struct linebuf *lb, const char **line, size_t *len)
{
	char *s = lb->buf + lb->start;
	char *nl = lb->len ? memchr(s, '\n', lb->len) : NULL;
	size_t n;

	if (!nl)
		return 0;
	n = (size_t)(nl - s);
	if (n > lb->max_line)
		return -1;
	*line = s;
	*len = n;
	lb->start += n + 1;
	lb->len -= n + 1;
	return 1;
}
