#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
verdict_expect(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->expected, sizeof v->expected, fmt, ap);
	va_end(ap);
}

/*
 * Record the verdict. Only the first call counts, so a check can list its
 * conditions in order and the first failure is what the operator reads.
 */
void
verdict_observe(struct verdict *v, bool pass, const char *fmt, ...)
{
	va_list ap;

	if (v->decided)
		return;
	v->decided = true;
	v->pass = pass;
	va_start(ap, fmt);
	vsnprintf(v->observed, sizeof v->observed, fmt, ap);
	va_end(ap);
}

/* A fixed buffer that keeps what fits of a JSON dump and notes the rest. */
struct clip {
	char *buf;
	size_t cap, used;
	bool cut;
};

static int
clip_write(const char *chunk, size_t size, void *data)
{
	struct clip *c = data;
	size_t room = c->cap - 1 - c->used;

	if (size > room) {
		memcpy(c->buf + c->used, chunk, room);
		c->used += room;
		c->cut = true;
		return -1;	/* stop: the rest would be dropped anyway */
	}
	memcpy(c->buf + c->used, chunk, size);
	c->used += size;
	return 0;
}

/* Render a JSON value compactly, all ASCII, truncated to fit a report field. */
static void
render_json(char *buf, size_t cap, const json_t *j)
{
	struct clip c = { buf, cap - 3, 0, false };	/* room for "..." */
	int rc;

	rc = json_dump_callback(j, clip_write, &c,
				JSON_COMPACT | JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	buf[c.used] = '\0';
	if (c.cut)
		memcpy(buf + c.used, "...", 4);
	else if (rc != 0)
		snprintf(buf, cap, "(unprintable)");
}

void
verdict_observe_json(struct verdict *v, bool pass, const json_t *j)
{
	char buf[CHECK_VALUE_MAX];

	render_json(buf, sizeof buf, j);
	verdict_observe(v, pass, "%s", buf);
}

const char *
verdict_shown(const char *s)
{
	return s[0] ? s : "\"\"";
}

