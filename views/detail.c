/*
 * The session detail view: one session in depth, as lines that scroll —
 * identity, counters, lease, the call in flight, tools (selectable, so a
 * revoke from here acts on the tool under the cursor), each upstream's
 * confinement (its opt-ins marked loud), the end, both
 * admission reports item by item, and the session's events.
 *
 * The same code lays the lines out to count them and to draw them, so the
 * row count and the screen can never disagree.
 */

#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define DETAIL_X0	2	/* content is indented under its heading */

/* One pass over the lines: counting (w NULL) or drawing lines [top, top+height). */
struct detail_ctx {
	WINDOW *w;
	const struct ui_model *m;
	size_t line;		/* index of the next line */
	size_t top, height, selected;
	bool sel;		/* the current line is the selected one */
	const char *sel_tool;	/* the tool on the selected line, if any */
};

/* What the view shows: a row, and the detail snapshot when it is this row's. */
struct detail_src {
	const struct session_row *row;
	const struct session_detail *d;	/* NULL: reports and timeline not loaded */
};

struct detail_field {
	const char *key;
	const char *value;
	enum ui_color color;
};

/* Lines. */

/* The y of the next line, or -1 when it is not drawn in this pass. */
static int
detail_line(struct detail_ctx *c)
{
	size_t i = c->line++;

	c->sel = i == c->selected;
	if (!c->w || i < c->top || i >= c->top + c->height)
		return -1;
	if (c->sel) {
		draw_fill(c->w, (int)(i - c->top) + 1, 0, -1, color_attr(UI_COLOR_CURSOR));
		draw_text(c->w, (int)(i - c->top) + 1, 0, 1, color_attr(UI_COLOR_CURSOR),
			  draw_glyph(c->m, GLYPH_CURSOR));
	}
	return (int)(i - c->top) + 1;
}

static attr_t
detail_attr(const struct detail_ctx *c, enum ui_color col)
{
	return color_attr_sel(col, c->sel);
}

static void
detail_heading(struct detail_ctx *c, const char *text, const char *verdict, enum ui_color vc)
{
	int y = detail_line(c), x;

	if (y < 0)
		return;
	x = 1 + draw_text(c->w, y, 1, -1, detail_attr(c, UI_COLOR_HEADER), text);
	if (verdict)
		draw_text(c->w, y, x + 1, -1, detail_attr(c, vc), verdict);
}

/* "key value   key value …" on one line from x; a NULL value ends the list, an empty key is left out. */
static void
detail_fields_at(struct detail_ctx *c, int x, const struct detail_field *f, size_t n)
{
	int y = detail_line(c);
	size_t i;

	for (i = 0; y >= 0 && i < n && f[i].value; i++) {
		if (f[i].key[0])
			x += 1 + draw_text(c->w, y, x, -1, detail_attr(c, UI_COLOR_DIM), f[i].key);
		x += draw_text(c->w, y, x, -1, detail_attr(c, f[i].color), f[i].value);
		x += 3;
	}
}

static void
detail_fields(struct detail_ctx *c, const struct detail_field *f, size_t n)
{
	detail_fields_at(c, DETAIL_X0, f, n);
}

static void
detail_note(struct detail_ctx *c, enum ui_color col, const char *text)
{
	int y = detail_line(c);

	if (y >= 0)
		draw_text(c->w, y, DETAIL_X0, -1, detail_attr(c, col), text);
}

/* Sections. */

static void
detail_identity(struct detail_ctx *c, const struct session_row *r)
{
	char ctr[DRAW_FMT_MAX], img[DRAW_FMT_MAX], up[DRAW_FMT_MAX];
	const char *none = draw_glyph(c->m, GLYPH_NONE);
	const struct detail_field id[] = {
		{ "id", r->id, UI_COLOR_DEFAULT },
		{ "container", r->container[0] ? draw_short_id(ctr, r->container) : none,
		  UI_COLOR_DEFAULT },
		{ "image", draw_short_id(img, r->image), UI_COLOR_DEFAULT },
		{ "runtime", r->runtime[0] ? r->runtime : none, UI_COLOR_DEFAULT },
	};
	const struct detail_field state[] = {
		{ "state", session_state_id(r->state), draw_state_color(r->state) },
		{ "up", draw_fmt_duration(up, r->uptime_ms), UI_COLOR_DEFAULT },
		{ "class", r->class_name[0] ? r->class_name : none, UI_COLOR_DEFAULT },
	};

	detail_heading(c, "Session", NULL, UI_COLOR_DEFAULT);
	detail_fields(c, id, sizeof id / sizeof id[0]);
	detail_fields(c, state, sizeof state / sizeof state[0]);
}

/* "quarantined since 14:05:09 UTC by oncall via console, paused": when and by whom. */
static void
detail_quarantine(struct detail_ctx *c, const struct session_row *r)
{
	char at[DRAW_FMT_MAX], text[DRAW_FMT_MAX * 4];
	const struct quarantine_view *q = &r->quarantine;

	if (!q->on || r->state == SESSION_STATE_ENDED)
		return;
	snprintf(text, sizeof text, "quarantined since %s UTC by %s (uid %u) via %s, %s",
		 draw_fmt_clock(at, q->since_ms), q->by.user, (unsigned)q->by.uid, q->by.via,
		 q->pause[0] ? q->pause : "waiting");
	detail_note(c, UI_COLOR_QUARANTINED, text);
}

/* "2 class flows held: …": a call of one waits for an operator (ctl hold --flow). */
static void
detail_flows(struct detail_ctx *c, const struct session_row *r)
{
	char text[DRAW_FMT_MAX * 2];

	if (!r->flows_held || r->state == SESSION_STATE_ENDED)
		return;
	snprintf(text, sizeof text, "%u class flow%s held: a call of %s waits for an operator",
		 r->flows_held, r->flows_held == 1 ? "" : "s", r->flows_held == 1 ? "it" : "one");
	detail_note(c, UI_COLOR_PENDING, text);
}

static void
detail_policy(struct detail_ctx *c, const struct session_row *r)
{
	char rev[DRAW_FMT_MAX], pend[DRAW_FMT_MAX * 2], age[DRAW_FMT_MAX];
	const struct detail_field f[] = {
		{ "revision", rev, UI_COLOR_DEFAULT },
		{ "gate", r->frozen ? "frozen" : r->gate_open ? "open" : "closed",
		  r->gate_open && !r->frozen ? UI_COLOR_DEFAULT : UI_COLOR_DENIED },
		{ "pending", pend, r->pending ? UI_COLOR_PENDING : UI_COLOR_DEFAULT },
	};

	snprintf(rev, sizeof rev, "%" PRId64, r->revision);
	if (r->pending)
		snprintf(pend, sizeof pend, "%u (newest r%" PRId64 ", oldest waits %s)", r->pending,
			 r->pending_revision, draw_fmt_secs(age, r->pending_age_ms));
	else
		snprintf(pend, sizeof pend, "0");
	detail_fields(c, f, sizeof f / sizeof f[0]);
	detail_flows(c, r);
	detail_quarantine(c, r);
}

static void
detail_counters(struct detail_ctx *c, const struct session_row *r)
{
	const struct gateway_counters *k = &r->counters;
	char v[9][DRAW_FMT_MAX];
	const struct detail_field calls[] = {
		{ "calls", draw_fmt_count(v[0], k->calls), UI_COLOR_DEFAULT },
		{ "allowed", draw_fmt_count(v[1], k->allowed), UI_COLOR_DEFAULT },
		{ "denied", draw_fmt_count(v[2], k->denied),
		  k->denied ? UI_COLOR_DENIED : UI_COLOR_DEFAULT },
		{ "egress denied", draw_fmt_count(v[3], k->egress_denied),
		  k->egress_denied ? UI_COLOR_DENIED : UI_COLOR_DEFAULT },
	};
	const struct detail_field io[] = {
		{ "upstream errors", draw_fmt_count(v[4], k->upstream_errors), UI_COLOR_DEFAULT },
		{ "spawns", draw_fmt_count(v[5], k->upstream_spawns), UI_COLOR_DEFAULT },
		{ "non-text items", draw_fmt_count(v[6], k->non_text_items), UI_COLOR_DEFAULT },
		{ "stdout", draw_fmt_bytes(v[7], r->stdout_bytes), UI_COLOR_DEFAULT },
		{ "stderr", draw_fmt_bytes(v[8], r->stderr_bytes), UI_COLOR_DEFAULT },
	};

	detail_heading(c, "Counters", NULL, UI_COLOR_DEFAULT);
	detail_fields(c, calls, sizeof calls / sizeof calls[0]);
	detail_fields(c, io, sizeof io / sizeof io[0]);
}

/* "history ▁▂▁▃ 32 round trips, newest right": the whole ack buffer. */
static void
detail_lease_history(struct detail_ctx *c, const struct lease_view *l)
{
	enum ui_color col = l->late ? UI_COLOR_LEASE_LATE : UI_COLOR_LEASE_OK;
	size_t n = l->n_acks < SNAP_ACKS_MAX ? l->n_acks : SNAP_ACKS_MAX;
	int y = detail_line(c), x = DETAIL_X0;
	char note[DRAW_FMT_MAX];

	if (y < 0)
		return;
	x += 1 + draw_text(c->w, y, x, -1, detail_attr(c, UI_COLOR_DIM), "history");
	if (n == 0) {
		draw_text(c->w, y, x, -1, detail_attr(c, UI_COLOR_DIM), "no acks yet");
		return;
	}
	x += 1 + draw_sparkline(c->w, y, x, (int)n, detail_attr(c, col), l, c->m);
	snprintf(note, sizeof note, "%zu round trip%s, newest right", n, n == 1 ? "" : "s");
	draw_text(c->w, y, x, -1, detail_attr(c, UI_COLOR_DIM), note);
}

static void
detail_lease(struct detail_ctx *c, const struct lease_view *l)
{
	char v[5][DRAW_FMT_MAX];
	const struct detail_field f[] = {
		{ "armed", l->armed ? "yes" : "no", UI_COLOR_DEFAULT },
		{ "acks/pulses", v[0], UI_COLOR_DEFAULT },
		{ "last", draw_fmt_us(v[1], l->last_ack_us), UI_COLOR_DEFAULT },
		{ "max", draw_fmt_us(v[2], l->max_ack_us), UI_COLOR_DEFAULT },
		{ "age", draw_fmt_secs(v[3], l->age_ms),
		  l->late ? UI_COLOR_LEASE_LATE : UI_COLOR_DEFAULT },
		{ "", l->late ? "LATE" : NULL, UI_COLOR_LEASE_LATE },
	};
	char failed[SNAP_WORD_MAX + 16];

	snprintf(v[0], sizeof v[0], "%" PRIu64 "/%" PRIu64, l->acks, l->pulses);
	detail_heading(c, "Lease", NULL, UI_COLOR_DEFAULT);
	/* A lease never armed has nothing but that to say. */
	detail_fields(c, f, l->armed || l->pulses ? sizeof f / sizeof f[0] : 1);
	detail_lease_history(c, l);
	if (l->failed) {
		snprintf(failed, sizeof failed, "failed: %s", l->reason);
		detail_note(c, UI_COLOR_ALERT, failed);
	}
}

static void
detail_call(struct detail_ctx *c, const struct call_view *call)
{
	char age[DRAW_FMT_MAX], rev[DRAW_FMT_MAX];
	const struct detail_field f[] = {
		{ "tool", call->tool, UI_COLOR_DEFAULT },
		{ "for", draw_fmt_secs(age, call->age_ms), UI_COLOR_DEFAULT },
		{ "admitted at revision", rev, UI_COLOR_DEFAULT },
	};

	detail_heading(c, "Call in flight", NULL, UI_COLOR_DEFAULT);
	if (!call->active) {
		detail_note(c, UI_COLOR_DIM, "none");
		return;
	}
	snprintf(rev, sizeof rev, "%" PRId64, call->revision);
	detail_fields(c, f, sizeof f / sizeof f[0]);
}

static void
detail_tool(struct detail_ctx *c, const struct session_row *r, const struct tool_view *t)
{
	char buf[DRAW_FMT_MAX];
	enum ui_color col = draw_tool_status(buf, r, t);
	int y = detail_line(c);

	if (c->sel)
		c->sel_tool = t->name;
	if (y < 0)
		return;
	draw_text(c->w, y, DETAIL_X0, 24, detail_attr(c, UI_COLOR_DEFAULT), t->name);
	draw_text(c->w, y, DETAIL_X0 + 25, 16, detail_attr(c, UI_COLOR_DIM), t->data_class);
	draw_text(c->w, y, DETAIL_X0 + 42, -1, detail_attr(c, col), buf);
}

static void
detail_tools(struct detail_ctx *c, const struct session_row *r)
{
	size_t i;

	detail_heading(c, "Tools", NULL, UI_COLOR_DEFAULT);
	if (r->n_tools == 0)
		detail_note(c, UI_COLOR_DIM, "none");
	for (i = 0; i < r->n_tools && i < SNAP_TOOLS_MAX; i++)
		detail_tool(c, r, &r->tools[i]);
}

/* Upstreams: each one's confinement, its opt-ins marked loud. */

static const char *
upstream_landlock(const struct upstream_view *u, char *buf, size_t cap)
{
	if (!u->started)
		snprintf(buf, cap, "-");
	else if (u->landlock_abi == 0)
		snprintf(buf, cap, "none");
	else
		snprintf(buf, cap, "ABI %d, %u rules", (int)u->landlock_abi, u->landlock_rules);
	return buf;
}

static void
detail_upstream(struct detail_ctx *c, const struct upstream_view *u)
{
	char who[SNAP_USER_MAX + 32], ll[DRAW_FMT_MAX * 2], paths[DRAW_FMT_MAX * 2];
	const char *marks = upstream_view_marks(u);
	const struct detail_field id[] = {
		{ "", u->name, UI_COLOR_DEFAULT },
		{ "", upstream_view_who(u, who, sizeof who), u->started ? UI_COLOR_DEFAULT : UI_COLOR_DIM },
		{ "isolation", u->isolation, UI_COLOR_DEFAULT },
		{ "", marks, UI_COLOR_ALERT },
	};
	const struct detail_field rules[] = {
		{ "landlock", upstream_landlock(u, ll, sizeof ll),
		  u->started && u->landlock_abi < UPSTREAM_LANDLOCK_FULL ?
			  UI_COLOR_ALERT : UI_COLOR_DEFAULT },
		{ "paths", paths, UI_COLOR_DEFAULT },
		{ "seccomp", u->seccomp[0] ? u->seccomp : "-", UI_COLOR_DEFAULT },
		{ "network", u->network, UI_COLOR_DEFAULT },
	};

	snprintf(paths, sizeof paths, "ro %u rw %u", u->paths_ro, u->paths_rw);
	detail_fields(c, id, sizeof id / sizeof id[0]);
	detail_fields_at(c, DETAIL_X0 + 2, rules, sizeof rules / sizeof rules[0]);
}

/* From the detail snapshot only: a row does not carry them. */
static void
detail_upstreams(struct detail_ctx *c, const struct detail_src *src)
{
	size_t i;

	if (!src->d || src->d->n_upstreams == 0)
		return;
	detail_heading(c, "Upstreams", NULL, UI_COLOR_DEFAULT);
	for (i = 0; i < src->d->n_upstreams && i < SNAP_UPSTREAMS_MAX; i++)
		detail_upstream(c, &src->d->upstreams[i]);
}

static void
detail_end(struct detail_ctx *c, const struct session_row *r)
{
	char code[DRAW_FMT_MAX], dur[DRAW_FMT_MAX];
	const char *none = draw_glyph(c->m, GLYPH_NONE);
	const struct detail_field f[] = {
		{ "reason", session_end_id(r->end), draw_end_color(r->end) },
		{ "check", r->refused_check[0] ? r->refused_check : none, UI_COLOR_DEFAULT },
		{ "step", r->failed_step[0] ? r->failed_step : none, UI_COLOR_DEFAULT },
	};
	const struct detail_field g[] = {
		{ "exit", code, UI_COLOR_DEFAULT },
		{ "oom", r->oom_killed ? "killed" : "no",
		  r->oom_killed ? UI_COLOR_ALERT : UI_COLOR_DEFAULT },
		{ "duration", draw_fmt_duration(dur, r->duration_ms), UI_COLOR_DEFAULT },
	};

	if (r->state != SESSION_STATE_ENDED)
		return;
	if (r->exit_code < 0)
		snprintf(code, sizeof code, "%s", r->started ? "unknown" : "never ran");
	else
		snprintf(code, sizeof code, "%ld", r->exit_code);
	detail_heading(c, "End", NULL, UI_COLOR_DEFAULT);
	detail_fields(c, f, sizeof f / sizeof f[0]);
	detail_fields(c, g, sizeof g / sizeof g[0]);
	if (r->reason[0])
		detail_note(c, draw_end_color(r->end), r->reason);
	if (r->container_left)
		detail_note(c, UI_COLOR_ALERT, "container not removed: the daemon did not answer;"
			    " the engine removes it once it does");
	if (r->audit_failures) {
		char note[160];

		snprintf(note, sizeof note, "audit incomplete: the log refused %u of this session's"
			 " writes (see airlock audit verify)", r->audit_failures);
		detail_note(c, UI_COLOR_ALERT, note);
	}
}

/* Admission reports. */

static void
detail_check(struct detail_ctx *c, int idw, const struct check_item *it)
{
	int y = detail_line(c);

	if (y >= 0)
		draw_check_row(c->w, y, DETAIL_X0, idw, it, "REFUSE", c->sel);
}

static enum ui_color
verdict_color(enum admission_verdict v)
{
	return v == ADMISSION_REFUSED ? UI_COLOR_FAIL : v == ADMISSION_ADMITTED ? UI_COLOR_PASS
										: UI_COLOR_DIM;
}

static void
detail_report(struct detail_ctx *c, const char *title, const struct admission_report *rep,
	      int idw)
{
	size_t i;

	detail_heading(c, title, admission_verdict_id(rep->verdict), verdict_color(rep->verdict));
	if (rep->verdict == ADMISSION_NOT_RUN) {
		detail_note(c, UI_COLOR_DIM, "not run");
		return;
	}
	detail_check(c, idw, NULL);
	for (i = 0; i < rep->n && i < SNAP_CHECKS_MAX; i++)
		detail_check(c, idw, &rep->items[i]);
}

/* Without the detail snapshot, the verdicts are all the row has. */
static void
detail_reports(struct detail_ctx *c, const struct detail_src *src)
{
	const struct session_row *r = src->row;
	int idw;

	if (!src->d) {
		detail_heading(c, "Admission, first inspection:",
			       admission_verdict_id(r->admission_first),
			       verdict_color(r->admission_first));
		detail_heading(c, "Admission, second inspection:",
			       admission_verdict_id(r->admission_second),
			       verdict_color(r->admission_second));
		detail_note(c, UI_COLOR_DIM, "report items not loaded");
		return;
	}
	idw = draw_check_width(src->d->first.items, src->d->first.n, 5);
	idw = draw_check_width(src->d->second.items, src->d->second.n, idw);
	detail_report(c, "Admission, first inspection:", &src->d->first, idw);
	detail_report(c, "Admission, second inspection:", &src->d->second, idw);
}

/* Timeline. */

static void
detail_event(struct detail_ctx *c, const struct supervisor_event *e)
{
	char t[DRAW_FMT_MAX], buf[256];
	int y = detail_line(c);

	if (y < 0)
		return;
	draw_text(c->w, y, DETAIL_X0, 8, detail_attr(c, UI_COLOR_DIM),
		  draw_fmt_clock(t, e->wall_ms));
	draw_text(c->w, y, DETAIL_X0 + 10, -1,
		  detail_attr(c, e->alert ? UI_COLOR_ALERT : UI_COLOR_DEFAULT),
		  draw_fmt_event(buf, sizeof buf, e));
}

/* From the detail snapshot; else this session's events in the console's history. */
static void
detail_timeline(struct detail_ctx *c, const struct detail_src *src)
{
	const struct ui_model *m = c->m;
	size_t i, n = 0;

	detail_heading(c, "Timeline (UTC)", NULL, UI_COLOR_DEFAULT);
	if (src->d) {
		for (i = 0; i < src->d->n_timeline && i < SNAP_TIMELINE_MAX; i++, n++)
			detail_event(c, &src->d->timeline[i]);
	} else {
		for (i = 0; m->events && i < m->n_events; i++) {
			if (strcmp(m->events[i].session, src->row->id) != 0)
				continue;
			detail_event(c, &m->events[i]);
			n++;
		}
	}
	if (n == 0)
		detail_note(c, UI_COLOR_DIM, "no events");
}

static void
detail_lines(struct detail_ctx *c, const struct detail_src *src)
{
	detail_identity(c, src->row);
	detail_policy(c, src->row);
	detail_counters(c, src->row);
	detail_lease(c, &src->row->lease);
	detail_call(c, &src->row->call);
	detail_tools(c, src->row);
	detail_upstreams(c, src);
	detail_end(c, src->row);
	detail_reports(c, src);
	detail_timeline(c, src);
}

/* The view. */

static void
detail_source(const struct ui_model *m, const struct view_state *vs, struct detail_src *src)
{
	const struct session_detail *d = m->detail;

	src->row = NULL;
	src->d = NULL;
	if (vs->session[0] && !(d && strcmp(d->row.id, vs->session) == 0)) {
		src->row = view_find_session(m, vs->session);
		return;
	}
	if (d) {
		src->row = &d->row;
		src->d = d;
	}
}

static size_t
detail_count(const struct ui_model *m, const struct detail_src *src, size_t selected,
	     const char **tool)
{
	struct detail_ctx c = { .m = m, .selected = selected };

	if (!src->row)
		return 0;
	detail_lines(&c, src);
	if (tool)
		*tool = c.sel_tool;
	return c.line;
}

static void
detail_draw_title(WINDOW *w, const struct ui_model *m, const struct detail_src *src)
{
	char title[SNAP_ID_MAX + 16], id[DRAW_FMT_MAX];
	int end = getmaxx(w), x;

	snprintf(title, sizeof title, src->row ? "Session %s" : "Session",
		 src->row ? draw_short_id(id, src->row->id) : "");
	x = draw_view_title(w, m, title);
	if (src->row)
		draw_title_tag(w, 0, x, end, m, draw_state_color(src->row->state),
			       session_state_id(src->row->state));
}

static void
detail_draw_empty(WINDOW *w, const struct ui_model *m, const struct view_state *vs)
{
	char buf[SNAP_ID_MAX + 64];

	if (vs->session[0])
		snprintf(buf, sizeof buf, "session %s is no longer listed", vs->session);
	else
		snprintf(buf, sizeof buf, "no session selected %s Enter on a session opens it",
			 draw_glyph(m, GLYPH_NONE));
	draw_empty(w, 1, DETAIL_X0, -1, buf);
}

static void
detail_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs)
{
	struct detail_src src;
	struct detail_ctx c = { .w = w, .m = m };
	int h = getmaxy(w);

	werase(w);
	detail_source(m, vs, &src);
	detail_draw_title(w, m, &src);
	if (!src.row) {
		view_clamp(vs, 0, 1);
		detail_draw_empty(w, m, vs);
		return;
	}
	c.height = h > 1 ? (size_t)h - 1 : 0;
	vs->rows_seen = detail_count(m, &src, 0, NULL);
	view_clamp(vs, vs->rows_seen, c.height ? c.height : 1);
	c.top = vs->top;
	c.selected = vs->selected;
	detail_lines(&c, &src);
}

static size_t
detail_rows(const struct ui_model *m, const struct view_state *vs)
{
	struct detail_src src;

	detail_source(m, vs, &src);
	return detail_count(m, &src, 0, NULL);
}

static void
detail_target(const struct ui_model *m, const struct view_state *vs, size_t i,
	      char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	struct detail_src src;
	const char *t = NULL;

	session[0] = tool[0] = '\0';
	detail_source(m, vs, &src);
	if (!src.row)
		return;
	snprintf(session, SNAP_ID_MAX, "%s", src.row->id);
	detail_count(m, &src, i, &t);
	if (t)
		snprintf(tool, SNAP_NAME_MAX, "%s", t);
}

/* Enter on the session it shows would only reopen it: not offered here. */
static struct view_reply
detail_request(const char *req, const struct ui_model *m, const struct view_state *vs)
{
	(void)m;
	if (vs->session[0] && strcmp(req, "enter") == 0)
		return (struct view_reply){ VIEW_IGNORE, NULL };
	return (struct view_reply){ VIEW_PASS, NULL };
}

/* Its key shows the session selected, else the one it showed last. */
static bool
detail_open(struct view_state *vs, const char *session)
{
	if (session[0])
		snprintf(vs->session, sizeof vs->session, "%s", session);
	return vs->session[0] != '\0';
}

const struct view_ops detail_view = {
	VIEW_OPS_HEAD(DETAIL, detail),
	.target = detail_target,
	.request = detail_request,
	.open = detail_open,
};
