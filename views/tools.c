/*
 * The tools view: one row per catalog tool over the live sessions — in how
 * many it is approved, allowed, revoked, at which revisions, and how far
 * its latest cutover got. A tool that stands revoked for new sessions but
 * no live session has (revoked ahead, or its sessions ended) keeps a row,
 * so what stands can be seen and restored. With vs->session set, the same
 * rows for that one session, with the tool's status there.
 *
 * Which sessions still wait on a cutover is worked out, not published: a
 * cutover to revision R has not reached a session whose revision is below
 * R while a pending delta of revision >= R waits (revisions apply in order).
 */

#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_SORTS(_) \
	_(NAME,    "name",    false) \
	_(REVOKED, "revoked", true)  \
	_(WAITING, "waiting", true)

DRAW_SORTS(TOOL_SORTS, sorts);

/* Across sessions the counts; for one session its status instead. */
#define TOOL_COLS(_) \
	_(NAME,     "TOOL",     4,  0,  0, false) \
	_(CLASS,    "CLASS",    5,  0,  4, false) \
	_(APPROVED, "APPROVED", 8,  0,  2, true)  \
	_(ALLOWED,  "ALLOWED",  7,  0,  1, true)  \
	_(REVOKED,  "REVOKED",  7,  0,  5, true)  \
	_(STATUS,   "STATUS",   12, 0,  5, false) \
	_(REV,      "REV",      5,  0,  3, true)  \
	_(CUTOVER,  "CUTOVER",  0,  32, 6, false)

DRAW_COLS(TOOL_COLS, tool_cols);

/* One tool over the sessions looked at. */
struct tool_agg {
	const char *name;
	const char *data_class;
	bool mixed_class;
	size_t sessions, approved, allowed, revoked;
	size_t held;				/* of allowed: its calls wait for an operator */
	int64_t rev_min, rev_max;
	const struct tool_view *one;		/* per-session: the session's entry */
	const struct tool_view *grant;		/* a session's entry under a grant: what remains */
	const struct supervisor_event *cutover;	/* its latest, if still in history */
	size_t acked, waiting;
	int64_t oldest_ms;
};

struct tools_list {
	const struct session_row *session;	/* per-session mode, else NULL */
	bool gone;				/* per-session, and the session is not listed */
	bool failed;
	size_t n_sessions;			/* sessions looked at */
	size_t n;
	struct tool_agg *tools;
};

/* One (session, tool) pair, sorted by name to group them. */
struct tool_entry {
	const struct session_row *row;
	const struct tool_view *tool;
};

/* Gathering. */

static int
entry_cmp(const void *pa, const void *pb)
{
	const struct tool_entry *a = pa, *b = pb;

	return strcmp(a->tool->name, b->tool->name);
}

/* Every (session, tool) pair into *out, sorted by name; false when out of memory. */
static bool
tools_entries(const struct session_row *rows, size_t n, bool live_only, struct tool_entry **out,
	      size_t *count)
{
	size_t i, j, total = 0, k = 0;

	for (i = 0; i < n; i++)
		if (!live_only || rows[i].state != SESSION_STATE_ENDED)
			total += rows[i].n_tools < SNAP_TOOLS_MAX ? rows[i].n_tools
								  : SNAP_TOOLS_MAX;
	*count = 0;
	*out = total ? calloc(total, sizeof **out) : NULL;
	if (!*out)
		return total == 0;
	for (i = 0; i < n; i++) {
		if (live_only && rows[i].state == SESSION_STATE_ENDED)
			continue;
		for (j = 0; j < rows[i].n_tools && j < SNAP_TOOLS_MAX; j++)
			(*out)[k++] = (struct tool_entry){ &rows[i], &rows[i].tools[j] };
	}
	qsort(*out, k, sizeof **out, entry_cmp);
	*count = k;
	return true;
}

static void
agg_add(struct tool_agg *a, const struct tool_entry *e)
{
	const struct tool_view *t = e->tool;

	if (a->sessions == 0) {
		a->name = t->name;
		a->data_class = t->data_class;
		a->rev_min = a->rev_max = e->row->revision;
		a->one = t;
	}
	a->mixed_class |= strcmp(a->data_class, t->data_class) != 0;
	a->sessions++;
	a->approved += t->approved;
	a->allowed += t->approved && t->allowed;
	a->revoked += t->approved && !t->allowed;
	a->held += t->approved && t->allowed && t->held;
	if (t->granted && !a->grant)
		a->grant = t;	/* one budget and one deadline, whichever session shows it */
	if (e->row->revision < a->rev_min)
		a->rev_min = e->row->revision;
	if (e->row->revision > a->rev_max)
		a->rev_max = e->row->revision;
}

/* The tool's latest cutover in the history, and the acks it has had since. */
static void
agg_cutover(struct tool_agg *a, const struct ui_model *m)
{
	const struct supervisor_event *e;
	size_t i;

	for (i = m->events ? m->n_events : 0; i-- > 0 && !a->cutover;)
		if (m->events[i].kind == SUPERVISOR_EVENT_CUTOVER && strcmp(m->events[i].tool, a->name) == 0)
			a->cutover = &m->events[i];
	for (i = 0; a->cutover && i < m->n_events; i++) {
		e = &m->events[i];
		if (e->kind == SUPERVISOR_EVENT_CUTOVER_ACK && e->seq > a->cutover->seq &&
		    e->revision == a->cutover->revision && strcmp(e->tool, a->name) == 0)
			a->acked++;
	}
}

static void
agg_waiting(struct tool_agg *a, const struct tool_entry *e, size_t n)
{
	int64_t rev = a->cutover ? a->cutover->revision : 0;
	const struct session_row *r;
	size_t i;

	for (i = 0; a->cutover && i < n; i++) {
		r = e[i].row;
		if (!e[i].tool->approved || r->pending == 0 || r->revision >= rev ||
		    r->pending_revision < rev)
			continue;
		a->waiting++;
		if (r->pending_age_ms > a->oldest_ms)
			a->oldest_ms = r->pending_age_ms;
	}
}

static bool
tools_match(const struct tool_agg *a, const char *filter)
{
	return view_match(filter, a->name) || view_match(filter, a->data_class);
}

/* Group the sorted entries into l->tools, keeping those the filter lets through. */
static void
tools_group(struct tools_list *l, const struct ui_model *m, const struct view_state *vs,
	    const struct tool_entry *e, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		struct tool_agg a = { 0 };

		for (j = i; j < n && strcmp(e[j].tool->name, e[i].tool->name) == 0; j++)
			agg_add(&a, &e[j]);
		agg_cutover(&a, m);
		agg_waiting(&a, e + i, j - i);
		if (tools_match(&a, vs->filter))
			l->tools[l->n++] = a;
		i = j;
	}
}

/*
 * Across sessions, a tool that stands revoked but that no live session has
 * (revoked ahead, or its sessions ended) still gets a row: otherwise what
 * later sessions start without could be neither seen nor selected.
 */
static void
tools_standing_only(struct tools_list *l, const struct ui_model *m, const struct view_state *vs,
		    const struct tool_entry *e, size_t n)
{
	size_t i, j;

	for (i = 0; m->snap && i < m->snap->n_standing; i++) {
		const char *name = m->snap->standing[i];
		struct tool_agg a = { .name = name, .data_class = "" };

		for (j = 0; j < n && strcmp(e[j].tool->name, name) != 0; j++)
			;
		if (j < n)
			continue;
		agg_cutover(&a, m);
		if (tools_match(&a, vs->filter))
			l->tools[l->n++] = a;
	}
}

/* Sorting. */

static int
cmp_size(size_t a, size_t b)
{
	return (a > b) - (a < b);
}

static int
tools_cmp(const void *pa, const void *pb, void *arg)
{
	const struct tool_agg *a = pa, *b = pb;
	const struct view_state *vs = arg;
	int key = draw_sort_key(vs, SORT_COUNT), c = 0;

	if (key == SORT_REVOKED)
		c = cmp_size(a->revoked, b->revoked);
	else if (key == SORT_WAITING)
		c = cmp_size(a->waiting, b->waiting);
	if (sorts[key].desc)
		c = -c;
	if (c == 0)
		c = strcmp(a->name, b->name);
	return vs->sort_reverse ? -c : c;
}

static void
tools_list(const struct ui_model *m, const struct view_state *vs, struct tools_list *l)
{
	const struct session_row *rows = m->snap ? m->snap->rows : NULL;
	size_t n = m->snap ? m->snap->n : 0, k, cap;
	struct tool_entry *e = NULL;

	memset(l, 0, sizeof *l);
	if (vs->session[0]) {
		l->session = rows = view_find_session(m, vs->session);
		l->gone = !rows;
		n = rows ? 1 : 0;
	}
	for (k = 0; k < n; k++)
		l->n_sessions += l->session || rows[k].state != SESSION_STATE_ENDED;
	l->failed = !tools_entries(rows, n, !l->session, &e, &k);
	cap = k + (l->session || !m->snap ? 0 : m->snap->n_standing);
	l->tools = cap ? calloc(cap, sizeof *l->tools) : NULL;
	l->failed |= cap && !l->tools;
	if (l->tools) {
		tools_group(l, m, vs, e, k);
		if (!l->session)
			tools_standing_only(l, m, vs, e, k);
		qsort_r(l->tools, l->n, sizeof *l->tools, tools_cmp, (void *)vs);
	}
	free(e);
}

/* Cells. */

/* "revoke r8 1/3 acked, 2 wait 1.40s": the oldest waits so long. */
static enum ui_color
tools_fmt_cutover(char *buf, size_t n, const struct tool_agg *a)
{
	const struct supervisor_event *c = a->cutover;
	char age[DRAW_FMT_MAX];
	int len;

	len = snprintf(buf, n, "%s r%" PRId64 " %zu/%ld acked", cutover_op_id(c->op), c->revision,
		       a->acked, c->count);
	if (a->waiting == 0)
		return UI_COLOR_DIM;
	if (len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, ", %zu wait %s", a->waiting,
			 draw_fmt_secs(age, a->oldest_ms));
	return UI_COLOR_PENDING;
}

static void
tools_draw_counts(WINDOW *w, int y, const struct draw_col *cols, const struct tool_agg *a,
		  bool sel)
{
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	char buf[DRAW_FMT_MAX];

	snprintf(buf, sizeof buf, "%zu/%zu", a->approved, a->sessions);
	draw_col_text(w, y, &cols[COL_APPROVED], plain, buf);
	snprintf(buf, sizeof buf, "%zu", a->allowed);
	draw_col_text(w, y, &cols[COL_ALLOWED], plain, buf);
	snprintf(buf, sizeof buf, "%zu", a->revoked);
	draw_col_text(w, y, &cols[COL_REVOKED],
		      color_attr_sel(a->revoked ? UI_COLOR_REVOKED : UI_COLOR_DEFAULT, sel), buf);
}

/* Revoked on every session, so also for the sessions that start later. */
static bool
tools_standing(const struct ui_model *m, const char *name)
{
	size_t i;

	for (i = 0; m->snap && i < m->snap->n_standing; i++)
		if (strcmp(m->snap->standing[i], name) == 0)
			return true;
	return false;
}

/* " by alice at r3": who made the standing revocation of name, when known. */
static void
tools_fmt_standing_by(char *buf, size_t n, const struct ui_model *m, const char *name)
{
	size_t i, len = strlen(buf);

	for (i = 0; m->snap && i < m->snap->n_standing; i++)
		if (strcmp(m->snap->standing[i], name) == 0 && m->snap->standing_by[i].user[0])
			snprintf(buf + len, n - len, " by %s at r%" PRId64,
				 m->snap->standing_by[i].user, m->snap->standing_revision[i]);
}

/*
 * "held" (one session), "held in 2/3" (across them): first in the cutover
 * cell, the one a narrow screen keeps, so a held tool never reads as
 * merely allowed. Then a grant's terms, if any.
 */
static void
tools_fmt_held_grant(char *buf, size_t n, const struct tools_list *l, const struct tool_agg *a)
{
	char grant[DRAW_FMT_MAX];
	int len = 0;

	buf[0] = '\0';
	if (a->held && l->session)
		len = snprintf(buf, n, "held");
	else if (a->held)
		len = snprintf(buf, n, "held in %zu/%zu", a->held, a->sessions);
	draw_fmt_grant(grant, a->grant);
	if (grant[0] && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, "%s%s", len ? ", " : "", grant);
}

/* The cutover cell: held, the latest cutover, and whether later sessions start revoked. */
static enum ui_color
tools_fmt_cutover_cell(char *buf, size_t n, const struct ui_model *m,
		       const struct tools_list *l, const struct tool_agg *a)
{
	enum ui_color c = UI_COLOR_DIM;
	size_t len;

	tools_fmt_held_grant(buf, n, l, a);
	len = strlen(buf);
	if (a->cutover)
		c = tools_fmt_cutover(buf + len + (len ? 2 : 0), n - len - (len ? 2 : 0), a);
	if (len && a->cutover)
		memcpy(buf + len, ", ", 2);
	if (len && c == UI_COLOR_DIM)
		c = UI_COLOR_PENDING;	/* it lapses by itself, or its calls wait */
	if (l->session || !tools_standing(m, a->name))
		return c;
	len = strlen(buf);
	snprintf(buf + len, n - len, "%s", len ? ", new sessions too" : "revoked for new sessions");
	tools_fmt_standing_by(buf, n, m, a->name);
	return c == UI_COLOR_PENDING ? c : UI_COLOR_REVOKED;
}

static void
tools_draw_row(WINDOW *w, int y, const struct ui_model *m, const struct tools_list *l,
	       const struct draw_col *cols, const struct tool_agg *a, bool sel)
{
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	char buf[SNAP_NAME_MAX + 64];
	enum ui_color c;

	if (sel) {
		draw_fill(w, y, 0, -1, plain);
		draw_text(w, y, 0, 1, plain, draw_glyph(m, GLYPH_CURSOR));
	}
	draw_col_text(w, y, &cols[COL_NAME], plain, a->name);
	draw_col_text(w, y, &cols[COL_CLASS], color_attr_sel(UI_COLOR_DIM, sel),
		      a->mixed_class ? "mixed" : a->sessions ? a->data_class
							     : draw_glyph(m, GLYPH_NONE));
	if (l->session) {
		c = draw_tool_status(buf, l->session, a->one);
		draw_col_text(w, y, &cols[COL_STATUS], color_attr_sel(c, sel), buf);
	} else {
		tools_draw_counts(w, y, cols, a, sel);
	}
	if (a->sessions == 0)
		snprintf(buf, sizeof buf, "%s", draw_glyph(m, GLYPH_NONE));
	else if (a->rev_min == a->rev_max)
		snprintf(buf, sizeof buf, "%" PRId64, a->rev_min);
	else
		snprintf(buf, sizeof buf, "%" PRId64 "-%" PRId64, a->rev_min, a->rev_max);
	draw_col_text(w, y, &cols[COL_REV], plain, buf);
	c = tools_fmt_cutover_cell(buf, sizeof buf, m, l, a);
	draw_col_text(w, y, &cols[COL_CUTOVER], color_attr_sel(c, sel),
		      buf[0] ? buf : draw_glyph(m, GLYPH_NONE));
}

/* The table. */

static void
tools_cols(struct draw_col cols[COL_COUNT], const struct tools_list *l, int width)
{
	size_t i;

	memcpy(cols, tool_cols, sizeof tool_cols);
	for (i = 0; i < l->n; i++) {
		cols[COL_NAME].width = draw_widest(cols[COL_NAME].width, l->tools[i].name, 24);
		cols[COL_CLASS].width =
			draw_widest(cols[COL_CLASS].width, l->tools[i].data_class, 14);
	}
	/* Counts across sessions, or the one session's status. */
	if (l->session)
		cols[COL_APPROVED].width = cols[COL_ALLOWED].width = cols[COL_REVOKED].width = -1;
	else
		cols[COL_STATUS].width = -1;
	draw_cols_fit(cols, COL_COUNT, 2, width - 2);
}

static void
tools_draw_empty(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
		 const struct tools_list *l)
{
	char buf[SNAP_ID_MAX + UI_FILTER_MAX + 64];

	if (l->failed)
		snprintf(buf, sizeof buf, "out of memory: the tools cannot be listed");
	else if (l->gone)
		snprintf(buf, sizeof buf, "session %s is no longer listed", vs->session);
	else if (vs->filter[0])
		snprintf(buf, sizeof buf, "no tool matches \"%s\"", vs->filter);
	else if (l->session)
		snprintf(buf, sizeof buf, "this session has no tools");
	else
		snprintf(buf, sizeof buf, "no live sessions %s no tools to show",
			 draw_glyph(m, GLYPH_NONE));
	draw_empty(w, 2, 2, -1, buf);
}

static void
tools_draw_title(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
		 const struct tools_list *l)
{
	int end = getmaxx(w), x;
	char buf[UI_FILTER_MAX + 64], id[DRAW_FMT_MAX];
	const struct session_row *r = l->session;

	snprintf(buf, sizeof buf, r ? "Tools (%s)" : "Tools", r ? draw_short_id(id, r->id) : "");
	x = draw_view_title(w, m, buf);
	if (r)
		snprintf(buf, sizeof buf, "rev %" PRId64 ", gate %s, pending %u", r->revision,
			 r->gate_open ? "open" : "closed", r->pending);
	else
		snprintf(buf, sizeof buf, "%zu over %zu live session%s", l->n, l->n_sessions,
			 l->n_sessions == 1 ? "" : "s");
	x = draw_title_tag(w, 0, x, end, m, r && r->pending ? UI_COLOR_PENDING : UI_COLOR_TITLE,
			   buf);
	x = draw_sort_tag(w, x, end, m, vs, sorts, SORT_COUNT);
	draw_filter_tag(w, x, end, m, vs);
}

/* The view. */

static const char *
tool_key(const void *rows, size_t i)
{
	return ((const struct tool_agg *)rows)[i].name;
}

static void
tools_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs)
{
	struct draw_col cols[COL_COUNT];
	struct tools_list l;
	int h = getmaxy(w), y;
	size_t i;

	werase(w);
	tools_list(m, vs, &l);
	view_keep(vs, l.tools, l.n, tool_key);
	view_clamp(vs, l.n, h > 2 ? (size_t)h - 2 : 1);
	vs->rows_seen = l.n;
	tools_draw_title(w, m, vs, &l);
	tools_cols(cols, &l, getmaxx(w));
	if (h >= 2)
		draw_cols_header(w, 1, cols, COL_COUNT);
	if (l.n == 0)
		tools_draw_empty(w, m, vs, &l);
	for (y = 2, i = vs->top; i < l.n && y < h; y++, i++)
		tools_draw_row(w, y, m, &l, cols, &l.tools[i], i == vs->selected);
	free(l.tools);
}

static size_t
tools_rows(const struct ui_model *m, const struct view_state *vs)
{
	struct tools_list l;

	tools_list(m, vs, &l);
	free(l.tools);
	return l.n;
}

static void
tools_target(const struct ui_model *m, const struct view_state *vs, size_t i,
	     char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	struct tools_list l;

	session[0] = tool[0] = '\0';
	tools_list(m, vs, &l);
	if (l.session)
		snprintf(session, SNAP_ID_MAX, "%s", l.session->id);
	if (i < l.n)
		snprintf(tool, SNAP_NAME_MAX, "%s", l.tools[i].name);
	free(l.tools);
}

/*
 * Its r and R (revoke-all, restore-all) act on the sessions it lists: with
 * one session shown, on that one (or the marked ones), as revoke and
 * restore do; across sessions, on every one.
 */
static struct view_reply
tools_request(const char *req, const struct ui_model *m, const struct view_state *vs)
{
	(void)m;
	if (vs->session[0] && strcmp(req, "revoke-all") == 0)
		return (struct view_reply){ VIEW_AS, "revoke" };
	if (vs->session[0] && strcmp(req, "restore-all") == 0)
		return (struct view_reply){ VIEW_AS, "restore" };
	return (struct view_reply){ VIEW_PASS, NULL };
}

/* Its key (view-tools) shows the tools across sessions. */
static bool
tools_open(struct view_state *vs, const char *session)
{
	(void)session;
	vs->session[0] = '\0';
	return true;
}

const struct view_ops tools_view = {
	VIEW_OPS_HEAD(TOOLS, tools),
	.n_sorts = SORT_COUNT,
	.filters = true,
	.target = tools_target,
	.request = tools_request,
	.open = tools_open,
};
