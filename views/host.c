/*
 * The host view: what airlock doctor found — the endpoint, the daemon, and
 * each check with what was expected and what was seen. The checks run off
 * the UI thread; this view only shows the latest finished run, and says so
 * while another is under way.
 */

#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define HOST_X0		2
#define HOST_LIST_Y	5	/* the checks' column headers; items below */

static size_t
host_count(const struct host_snapshot *h)
{
	if (!h || h->generation == 0)
		return 0;
	return h->n < SNAP_CHECKS_MAX ? h->n : SNAP_CHECKS_MAX;
}

static size_t
host_failed(const struct host_snapshot *h)
{
	size_t i, n = host_count(h), failed = 0;

	for (i = 0; i < n; i++)
		failed += h->items[i].run && !h->items[i].pass;
	return failed;
}

static void
host_draw_title(WINDOW *w, const struct ui_model *m, const struct host_snapshot *h)
{
	int end = getmaxx(w), x = draw_view_title(w, m, "Host");
	size_t failed = host_failed(h);
	char buf[64];

	if (h && h->generation > 0) {
		if (h->passed)
			snprintf(buf, sizeof buf, "checks passed");
		else
			snprintf(buf, sizeof buf, "%zu check%s failed", failed,
				 failed == 1 ? "" : "s");
		x = draw_title_tag(w, 0, x, end, m, h->passed ? UI_COLOR_PASS : UI_COLOR_FAIL, buf);
	}
	if (h && h->running)
		draw_title_tag(w, 0, x, end, m, UI_COLOR_PENDING, "running");
}

/* "key value   key value": the facts about the daemon. */
static int
host_fact(WINDOW *w, int y, int x, const char *key, const char *value, enum ui_color c)
{
	x += 1 + draw_text(w, y, x, -1, color_attr(UI_COLOR_DIM), key);
	x += draw_text(w, y, x, -1, color_attr(c), value[0] ? value : "?");
	return x + 3;
}

static void
host_draw_facts(WINDOW *w, const struct ui_model *m, const struct host_snapshot *h)
{
	char at[DRAW_FMT_MAX], ago[DRAW_FMT_MAX], when[2 * DRAW_FMT_MAX + 8], result[48];
	size_t failed = host_failed(h);
	int x;

	x = host_fact(w, 1, HOST_X0, "endpoint", h->endpoint, UI_COLOR_DEFAULT);
	x = host_fact(w, 1, x, "daemon", h->daemon_version, UI_COLOR_DEFAULT);
	host_fact(w, 1, x, "runtime", h->runtime, UI_COLOR_DEFAULT);
	snprintf(when, sizeof when, "%s UTC (%s)", draw_fmt_clock(at, h->at_ms),
		 draw_fmt_ago(ago, m->now_ms, h->at_ms));
	if (h->passed)
		snprintf(result, sizeof result, "PASS");
	else
		snprintf(result, sizeof result, "FAIL (%zu of %zu)", failed, host_count(h));
	x = host_fact(w, 2, HOST_X0, "checked", when, UI_COLOR_DEFAULT);
	host_fact(w, 2, x, "result", result, h->passed ? UI_COLOR_PASS : UI_COLOR_FAIL);
}

static void
host_draw_checks(WINDOW *w, const struct ui_model *m, const struct host_snapshot *h,
		 const struct view_state *vs)
{
	int idw = draw_check_width(h->items, host_count(h), 5), y;
	size_t i, n = host_count(h);

	draw_check_row(w, HOST_LIST_Y, HOST_X0, idw, NULL, "FAIL", false);
	for (y = HOST_LIST_Y + 1, i = vs->top; i < n && y < getmaxy(w); y++, i++) {
		if (i == vs->selected) {
			draw_fill(w, y, 0, -1, color_attr(UI_COLOR_CURSOR));
			draw_text(w, y, 0, 1, color_attr(UI_COLOR_CURSOR),
				  draw_glyph(m, GLYPH_CURSOR));
		}
		draw_check_row(w, y, HOST_X0, idw, &h->items[i], "FAIL", i == vs->selected);
	}
}

/* What the selected check asks of the host, from the checks' table. */
static void
host_draw_help(WINDOW *w, const struct host_snapshot *h, const struct view_state *vs)
{
	enum host_check c;

	if (vs->selected >= host_count(h))
		return;
	c = host_check_by_id(h->items[vs->selected].id);
	if (c != HOST_CHECK_COUNT)
		draw_text(w, 3, HOST_X0, -1, color_attr(UI_COLOR_DIM), host_check_help(c));
}

static void
host_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs)
{
	const struct host_snapshot *h = m->host;
	int lines = getmaxy(w) - HOST_LIST_Y - 1;
	char running[16];

	werase(w);
	view_clamp(vs, host_count(h), lines > 0 ? (size_t)lines : 1);
	vs->rows_seen = host_count(h);
	host_draw_title(w, m, h);
	if (h && h->running) {
		snprintf(running, sizeof running, "running%s", draw_glyph(m, GLYPH_DOTS));
		draw_text(w, 3, HOST_X0, -1, color_attr(UI_COLOR_PENDING), running);
	}
	if (!h || h->generation == 0) {
		draw_empty(w, 1, HOST_X0, -1, "host checks never run");
		return;
	}
	host_draw_facts(w, m, h);
	host_draw_checks(w, m, h, vs);
	if (!h->running)
		host_draw_help(w, h, vs);
}

static size_t
host_rows(const struct ui_model *m, const struct view_state *vs)
{
	(void)vs;
	return host_count(m->host);
}

const struct view_ops host_view = {
	VIEW_OPS_HEAD(HOST, host),
};
