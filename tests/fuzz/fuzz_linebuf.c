#include "fuzz.h"

#include <string.h>

#include "frame.h"

/*
 * Line reassembly (engine/policy/frame.h), against a model. The first two bytes
 * choose the longest line and the chunk size; the rest is the agent's
 * stdout, appended in chunks and drained after each one as the session
 * does. Every line handed out, every refusal and the pending count must be
 * what splitting the whole stream on '\n' says they are.
 */

struct model {
	const uint8_t *s;
	size_t fed;		/* bytes appended so far */
	size_t taken;		/* bytes handed out as lines, newlines included */
};

/* Length of the line starting at taken, or fed - taken when unfinished. */
static size_t
model_line(const struct model *m, bool *complete)
{
	const uint8_t *nl = memchr(m->s + m->taken, '\n', m->fed - m->taken);

	*complete = nl != NULL;
	return nl ? (size_t)(nl - (m->s + m->taken)) : m->fed - m->taken;
}

static size_t
model_pending(const struct model *m)
{
	const uint8_t *s = m->s + m->taken;
	size_t i = m->fed - m->taken;

	while (i > 0 && s[i - 1] != '\n')
		i--;
	return m->fed - m->taken - i;
}

/* Drain complete lines; false once the buffer refuses one as too long. */
static bool
drain(struct linebuf *lb, struct model *m)
{
	const char *line;
	size_t len, want;
	bool complete;
	int rc;

	while ((rc = linebuf_next(lb, &line, &len)) != 0) {
		want = model_line(m, &complete);
		FUZZ_CHECK(complete);
		if (rc < 0) {
			FUZZ_CHECK(want > lb->max_line);
			return false;
		}
		FUZZ_CHECK(len == want && len <= lb->max_line);
		FUZZ_CHECK(memcmp(line, m->s + m->taken, len) == 0);
		m->taken += len + 1;
	}
	(void)model_line(m, &complete);
	FUZZ_CHECK(!complete);
	FUZZ_CHECK(linebuf_pending(lb) == model_pending(m));
	return true;
}

/* The buffer must refuse exactly when the model says the chunk cannot fit. */
static bool
append(struct linebuf *lb, struct model *m, size_t n, size_t cap)
{
	size_t held = m->fed - m->taken;
	int rc = linebuf_append(lb, m->s + m->fed, n);
	bool past_cap = n > cap - held, too_long;

	if (past_cap) {
		FUZZ_CHECK(rc < 0);
		return false;
	}
	m->fed += n;
	too_long = model_pending(m) > lb->max_line;
	FUZZ_CHECK((rc < 0) == too_long);
	return rc == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max_line = fuzz_take(&data, &size, 64);
	size_t chunk = fuzz_take(&data, &size, 32);
	size_t cap = max_line + 1 + (size_t)(size % 97);
	struct model m = { .s = data };
	struct linebuf lb;
	size_t n;

	FUZZ_CHECK(linebuf_init(&lb, max_line, cap) == 0);
	while (m.fed < size) {
		n = size - m.fed < chunk ? size - m.fed : chunk;
		if (!append(&lb, &m, n, cap) || !drain(&lb, &m))
			break;
	}
	linebuf_free(&lb);
	return 0;
}
