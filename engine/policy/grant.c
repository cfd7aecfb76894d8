#include "grant.h"

#include <stdio.h>
#include <string.h>

#include "bytes.h"

int
grant_duration_parse(const char *s, int64_t *seconds)
{
	size_t n = s ? strlen(s) : 0;
	uint64_t v;
	int64_t unit;

	if (n < 2)
		return -1;
	switch (s[n - 1]) {
	case 's':
		unit = 1;
		break;
	case 'm':
		unit = 60;
		break;
	case 'h':
		unit = 3600;
		break;
	default:
		return -1;
	}
	/* Six digits are more than a day in seconds: the bound below decides. */
	if (bytes_decimal(s, n - 1, 6, &v) < 0 || (int64_t)v * unit < GRANT_FOR_MIN_S ||
	    (int64_t)v * unit > GRANT_FOR_MAX_S)
		return -1;
	*seconds = (int64_t)v * unit;
	return 0;
}

int
grant_calls_parse(const char *s, int64_t *calls)
{
	uint64_t v;

	if (!s || bytes_decimal(s, strlen(s), 7, &v) < 0 || v < 1 || v > GRANT_CALLS_MAX)
		return -1;
	*calls = (int64_t)v;
	return 0;
}

static struct grant *
slot_of(struct grant_table *t, const char *tool)
{
	size_t i;

	for (i = 0; i < GRANT_MAX; i++)
		if (t->g[i].serial && strcmp(t->g[i].tool, tool) == 0)
			return &t->g[i];
	return NULL;
}

/* An entry leaves the table: the budget count follows. */
static void
clear(struct grant_table *t, struct grant *g)
{
	if (g->calls_left > 0)
		t->budgets--;
	memset(g, 0, sizeof *g);
}

uint64_t
grant_drop(struct grant_table *t, const char *tool)
{
	struct grant *g = tool ? slot_of(t, tool) : NULL;
	uint64_t serial = g ? g->serial : 0;

	if (g)
		clear(t, g);
	return serial;
}

uint64_t
grant_set(struct grant_table *t, const char *tool, bool all, int64_t now_ms, int64_t for_s,
	  int64_t calls, int64_t revision)
{
	struct grant *g;
	size_t i;

	if (!tool || !tool[0] || strlen(tool) >= GRANT_TOOL_MAX || (for_s == 0 && calls == 0) ||
	    (for_s != 0 && (for_s < GRANT_FOR_MIN_S || for_s > GRANT_FOR_MAX_S)) ||
	    calls < 0 || calls > GRANT_CALLS_MAX)
		return 0;
	grant_drop(t, tool);
	for (i = 0; i < GRANT_MAX && t->g[i].serial; i++)
		;
	if (i == GRANT_MAX)
		return 0;
	g = &t->g[i];
	g->serial = ++t->serial;
	snprintf(g->tool, sizeof g->tool, "%s", tool);
	g->all = all;
	g->deadline_ms = for_s ? now_ms + for_s * 1000 : 0;
	g->calls_left = calls ? calls : -1;
	g->revision = revision;
	t->budgets += calls > 0;
	return g->serial;
}

const struct grant *
grant_find(const struct grant_table *t, uint64_t serial)
{
	size_t i;

	for (i = 0; serial && i < GRANT_MAX; i++)
		if (t->g[i].serial == serial)
			return &t->g[i];
	return NULL;
}

const struct grant *
grant_of(const struct grant_table *t, const char *tool)
{
	return tool ? slot_of((struct grant_table *)t, tool) : NULL;
}

enum grant_spend
grant_spend(struct grant_table *t, uint64_t serial)
{
	struct grant *g = (struct grant *)grant_find(t, serial);

	if (!g || g->calls_left < 0)
		return GRANT_FREE;
	if (g->calls_left == 0)
		return GRANT_EXHAUSTED;
	if (--g->calls_left > 0)
		return GRANT_SPENT;
	g->spent = true;
	t->budgets--;
	return GRANT_SPENT_LAST;
}

static bool
is_due(const struct grant *g, int64_t now_ms)
{
	return g->serial && (g->spent || (g->deadline_ms && now_ms >= g->deadline_ms));
}

int
grant_due(const struct grant_table *t, int64_t now_ms, struct grant *due, int64_t *next_ms)
{
	size_t i;

	for (i = 0; i < GRANT_MAX; i++) {
		const struct grant *g = &t->g[i];

		if (is_due(g, now_ms)) {
			*due = *g;
			return 1;
		}
		if (g->serial && g->deadline_ms && g->deadline_ms < *next_ms)
			*next_ms = g->deadline_ms;
	}
	return 0;
}

const char *
grant_lapse_why(const struct grant *g)
{
	return g->spent ? "calls spent" : "time up";
}

void
grant_left(const struct grant *g, int64_t now_ms, int64_t *calls, int64_t *ms)
{
	*calls = g->calls_left;
	*ms = !g->deadline_ms ? -1 : g->deadline_ms > now_ms ? g->deadline_ms - now_ms : 0;
}

static void
duration_text(int64_t s, char *buf, size_t cap)
{
	if (s % 3600 == 0)
		snprintf(buf, cap, "%lldh", (long long)(s / 3600));
	else if (s % 60 == 0)
		snprintf(buf, cap, "%lldm", (long long)(s / 60));
	else
		snprintf(buf, cap, "%llds", (long long)s);
}

void
grant_terms_text(int64_t for_s, int64_t calls, char *buf, size_t cap)
{
	char d[24] = "";

	if (for_s > 0)
		duration_text(for_s, d, sizeof d);
	if (for_s > 0 && calls > 0)
		snprintf(buf, cap, "%s or %lld call%s", d, (long long)calls, calls == 1 ? "" : "s");
	else if (calls > 0)
		snprintf(buf, cap, "%lld call%s", (long long)calls, calls == 1 ? "" : "s");
	else
		snprintf(buf, cap, "%s", d);
}

enum gate_meter_answer
grant_meter_answer(enum grant_spend r)
{
	switch (r) {
	case GRANT_SPENT:
		return GATE_METER_TAKEN;
	case GRANT_SPENT_LAST:
		return GATE_METER_LAST;
	case GRANT_EXHAUSTED:
		return GATE_METER_NONE;
	case GRANT_FREE:
		break;
	}
	return GATE_METER_FREE;
}
