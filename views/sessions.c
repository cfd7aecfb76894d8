/*
 * The sessions view: one line per session, sortable and filtered, and,
 * when the window is tall enough, the selected session's tools beside the
 * latest events underneath.
 */

#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Windows this tall get the tools and events split underneath. */
#define SPLIT_MIN_LINES	20
#define ROW_X0		2	/* column 0: cursor, column 1: mark */

/* The sort keys sort-next cycles through, and their natural direction. */
#define SESSION_SORTS(_) \
	_(STARTED, "started", false) \
	_(ID,      "id",      false) \
	_(STATE,   "state",   false) \
	_(LEASE,   "lease",   true)  \
	_(CALLS,   "calls",   true)  \
	_(DENIED,  "denied",  true)

DRAW_SORTS(SESSION_SORTS, sorts);

/*
 * Columns, dropped from rank 1 up as the window narrows. GATE/END is one
 * column: a live session has a gate, an ended one has an end reason.
 */
#define SESSION_COLS(_) \
	_(ENGINE, "ENGINE",  -1, 0, 9, false) \
	_(ID,    "ID",       8,  0, 0, false) \
	_(STATE, "STATE",    5,  0, 8, false) \
	_(IMAGE, "IMAGE",    8,  0, 2, false) \
	_(UP,    "UP",       5,  0, 5, true)  \
	_(LEASE, "LEASE",    16, 0, 7, false) \
	_(CALLS, "CALLS",    9,  0, 4, false) \
	_(BYTES, "OUT/ERR",  9,  0, 1, false) \
	_(REV,   "REV",      3,  0, 3, true)  \
	_(GATE,  "GATE/END", 0,  9, 6, false)

DRAW_COLS(SESSION_COLS, session_cols);

/* The visible rows: filtered, then sorted. */
struct sessions_list {
	const struct session_row **rows;
	size_t n;
	bool failed;	/* out of memory: nothing shown */
};

/* Sorting. */

static int
cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Leases not armed sort below every armed one. */
static int64_t
lease_key(const struct session_row *r)
{
	return r->lease.armed ? r->lease.age_ms : -1;
}

static int
sessions_cmp_key(const struct session_row *a, const struct session_row *b, int key)
{
	switch (key) {
	case SORT_ID:
		return strcmp(a->id, b->id);
	case SORT_STATE:
		return cmp_i64(a->state, b->state);
	case SORT_LEASE:
		return cmp_i64(lease_key(a), lease_key(b));
	case SORT_CALLS:
		return cmp_i64((int64_t)a->counters.calls, (int64_t)b->counters.calls);
	case SORT_DENIED:
		return cmp_i64((int64_t)a->counters.denied, (int64_t)b->counters.denied);
	default:
		return cmp_i64(a->started_ms, b->started_ms);
	}
}

/* Ties fall back to start time, then id, so equal keys never shuffle. */
static int
sessions_cmp(const void *pa, const void *pb, void *arg)
{
	const struct session_row *a = *(const struct session_row *const *)pa;
	const struct session_row *b = *(const struct session_row *const *)pb;
	const struct view_state *vs = arg;
	int key = draw_sort_key(vs, SORT_COUNT), c = sessions_cmp_key(a, b, key);

	if (sorts[key].desc != vs->sort_reverse)
		c = -c;
	if (c == 0)
		c = cmp_i64(a->started_ms, b->started_ms);
	return c ? c : strcmp(a->id, b->id);
}

/* A live session held by an operator says so in place of its state (issue 43, item 3). */
static bool
row_held(const struct session_row *r)
{
	return r->quarantine.on && r->state != SESSION_STATE_ENDED;
}

static const char *
row_state_word(const struct session_row *r)
{
	return row_held(r) ? "quarantined" : session_state_id(r->state);
}

static bool
sessions_match(const struct session_row *r, const char *filter)
{
	bool ended = r->state == SESSION_STATE_ENDED;

	return view_match(filter, r->id) || view_match(filter, row_state_word(r)) ||
	       view_match(filter, r->image) ||
	       (ended && (view_match(filter, session_end_id(r->end)) ||
			  view_match(filter, r->reason)));
}

static void
sessions_list(const struct ui_model *m, const struct view_state *vs, struct sessions_list *l)
{
	size_t i, n = m->snap ? m->snap->n : 0;

	memset(l, 0, sizeof *l);
	if (n == 0)
		return;
	l->rows = calloc(n, sizeof *l->rows);
	if (!l->rows) {
		l->failed = true;
		return;
	}
	for (i = 0; i < n; i++)
		if (sessions_match(&m->snap->rows[i], vs->filter))
			l->rows[l->n++] = &m->snap->rows[i];
	qsort_r(l->rows, l->n, sizeof *l->rows, sessions_cmp, (void *)vs);
}

/* Cells. */

/* "  14/3   ": the first right-aligned, the second left, each in 4. */
static void
sessions_draw_pair(WINDOW *w, int y, const struct draw_col *c, const char *a, const char *b,
		   attr_t attr_a, attr_t attr_b)
{
	if (c->x < 0)
		return;
	draw_right(w, y, c->x, 4, attr_a, a);
	draw_text(w, y, c->x + 4, 1, attr_a, "/");
	draw_text(w, y, c->x + 5, c->w - 5, attr_b, b);
}

static void
sessions_draw_counts(WINDOW *w, int y, const struct draw_col *cols, const struct session_row *r,
		     bool sel)
{
	char a[DRAW_FMT_MAX], b[DRAW_FMT_MAX];
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	enum ui_color denied = r->counters.denied ? UI_COLOR_DENIED : UI_COLOR_DEFAULT;

	sessions_draw_pair(w, y, &cols[COL_CALLS], draw_fmt_count(a, r->counters.allowed),
			   draw_fmt_count(b, r->counters.denied), plain,
			   color_attr_sel(denied, sel));
	sessions_draw_pair(w, y, &cols[COL_BYTES], draw_fmt_bytes(a, r->stdout_bytes),
			   draw_fmt_bytes(b, r->stderr_bytes), plain, plain);
}

/* Sparkline, age, and LATE when the lease is late: "▂▂▁▂▂ 0.21s LATE". */
static void
sessions_draw_lease(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *c,
		    const struct lease_view *l, bool sel)
{
	enum ui_color col = l->late ? UI_COLOR_LEASE_LATE : UI_COLOR_LEASE_OK;
	char buf[DRAW_FMT_MAX + SNAP_WORD_MAX];

	if (c->x < 0)
		return;
	if (l->failed) {
		snprintf(buf, sizeof buf, "failed: %s", l->reason);
		draw_text(w, y, c->x, c->w, color_attr_sel(UI_COLOR_ALERT, sel), buf);
		return;
	}
	if (!l->armed) {
		draw_text(w, y, c->x, c->w, color_attr_sel(UI_COLOR_DIM, sel),
			  draw_glyph(m, GLYPH_NONE));
		return;
	}
	draw_sparkline(w, y, c->x, 5, color_attr_sel(col, sel), l, m);
	draw_right(w, y, c->x + 6, 5, color_attr_sel(l->late ? col : UI_COLOR_DEFAULT, sel),
		   draw_fmt_secs(buf, l->age_ms));
	if (l->late)
		draw_text(w, y, c->x + 12, c->w - 12, color_attr_sel(col, sel), "LATE");
}

/* The end reason of an ended session; a held one's pause; else its gate. */
static void
sessions_draw_gate(WINDOW *w, int y, const struct draw_col *c, const struct session_row *r,
		   bool sel)
{
	char buf[DRAW_FMT_MAX];
	enum ui_color col = UI_COLOR_DEFAULT;

	if (r->state == SESSION_STATE_ENDED) {
		snprintf(buf, sizeof buf, "%s", session_end_id(r->end));
		col = draw_end_color(r->end);
	} else if (row_held(r)) {
		snprintf(buf, sizeof buf, "%s", r->quarantine.pause);	/* paused, pause failed */
		col = UI_COLOR_QUARANTINED;
	} else if (r->frozen) {
		snprintf(buf, sizeof buf, "frozen");	/* the kill switch: every call denied */
		col = UI_COLOR_DENIED;
	} else if (r->pending > 0) {
		snprintf(buf, sizeof buf, "pending %u", r->pending);
		col = UI_COLOR_PENDING;
	} else {
		snprintf(buf, sizeof buf, "%s", r->gate_open ? "open" : "closed");
		col = r->gate_open ? UI_COLOR_DEFAULT : UI_COLOR_DENIED;
	}
	draw_col_text(w, y, c, color_attr_sel(col, sel), buf);
}

static void
sessions_draw_row(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
		  const struct session_row *r, bool sel)
{
	char buf[DRAW_FMT_MAX];
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);

	if (sel) {
		draw_fill(w, y, 0, -1, plain);
		draw_text(w, y, 0, 1, plain, draw_glyph(m, GLYPH_CURSOR));
	}
	if (view_marked(m, r->id))
		draw_text(w, y, 1, 1, color_attr_sel(UI_COLOR_MARKED, sel), "*");
	if (r->engine < m->n_engines)
		draw_col_text(w, y, &cols[COL_ENGINE], plain, m->engine_names[r->engine]);
	draw_col_text(w, y, &cols[COL_ID], plain, draw_short_id(buf, r->id));
	if (view_row_lost(m, r))
		/* its engine is lost: the row is its last known state, not a live one */
		draw_col_text(w, y, &cols[COL_STATE], color_attr_sel(UI_COLOR_STALE, sel), "lost");
	else
		draw_col_text(w, y, &cols[COL_STATE],
			      color_attr_sel(row_held(r) ? UI_COLOR_QUARANTINED
							 : draw_state_color(r->state), sel),
			      row_state_word(r));
	draw_col_text(w, y, &cols[COL_IMAGE], plain, draw_short_id(buf, r->image));
	draw_col_text(w, y, &cols[COL_UP], plain, draw_fmt_duration(buf, r->uptime_ms));
	sessions_draw_lease(w, y, m, &cols[COL_LEASE], &r->lease, sel);
	sessions_draw_counts(w, y, cols, r, sel);
	if (cols[COL_REV].x >= 0)
		draw_number(w, y, cols[COL_REV].x, cols[COL_REV].w, plain, r->revision);
	sessions_draw_gate(w, y, &cols[COL_GATE], r, sel);
}

/* The table. */

/* STATE is as wide as the longest state shown, so "re-admitting" fits. */
static void
sessions_cols(struct draw_col cols[COL_COUNT], const struct ui_model *m,
	      const struct sessions_list *l, char *calls_header, size_t n, int width)
{
	size_t i, len;

	memcpy(cols, session_cols, sizeof session_cols);
	for (i = 0; i < l->n; i++) {
		len = strlen(row_state_word(l->rows[i]));
		if ((int)len > cols[COL_STATE].width)
			cols[COL_STATE].width = (int)len;
	}
	/* Whose a row is, once the console watches more than one engine. */
	for (i = 0; m->n_engines > 1 && i < m->n_engines; i++)
		cols[COL_ENGINE].width = draw_widest(cols[COL_ENGINE].width < 6 ? 6
						     : cols[COL_ENGINE].width,
						     m->engine_names[i], 12);
	snprintf(calls_header, n, "CALLS %s/%s", draw_glyph(m, GLYPH_CHECK),
		 draw_glyph(m, GLYPH_CROSS));
	cols[COL_CALLS].header = calls_header;
	draw_cols_fit(cols, COL_COUNT, ROW_X0, width - ROW_X0);
}

static void
sessions_draw_empty(WINDOW *w, int y, const struct ui_model *m, const struct view_state *vs,
		    const struct sessions_list *l)
{
	char buf[UI_FILTER_MAX + 64];

	if (l->failed)
		snprintf(buf, sizeof buf, "out of memory: the sessions cannot be listed");
	else if (m->snap && m->snap->n > 0)
		snprintf(buf, sizeof buf, "no session matches \"%s\"", vs->filter);
	else
		snprintf(buf, sizeof buf, "no sessions yet %s :run FILE starts one",
			 draw_glyph(m, GLYPH_NONE));
	draw_empty(w, y, ROW_X0, -1, buf);
}

static void
sessions_draw_table(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
		    const struct sessions_list *l, int height)
{
	struct draw_col cols[COL_COUNT];
	char calls_header[32];
	size_t i;
	int y;

	sessions_cols(cols, m, l, calls_header, sizeof calls_header, getmaxx(w));
	if (height < 2)
		return;
	draw_cols_header(w, 1, cols, COL_COUNT);
	if (l->n == 0) {
		sessions_draw_empty(w, 2, m, vs, l);
		return;
	}
	for (y = 2, i = vs->top; i < l->n && y < height; y++, i++)
		sessions_draw_row(w, y, m, cols, l->rows[i], i == vs->selected);
}

/* " ─ Sessions ─ 4, 3 live ─ sort: lease ▼ ─ filter: run ─────". */
static void
sessions_draw_title(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
		    const struct sessions_list *l)
{
	int end = getmaxx(w), x = draw_view_title(w, m, "Sessions");
	size_t total = m->snap ? m->snap->n : 0, live = m->snap ? m->snap->live : 0, lost = 0, i;
	char buf[UI_FILTER_MAX + 48];

	/* A lost engine's sessions are its last known: counted apart, not as live. */
	for (i = 0; i < total; i++)
		lost += view_row_lost(m, &m->snap->rows[i]);
	live -= lost < live ? lost : live;
	if (vs->filter[0])
		snprintf(buf, sizeof buf, "%zu of %zu", l->n, total);
	else if (lost)
		snprintf(buf, sizeof buf, "%zu, %zu live, %zu of lost engines", total, live, lost);
	else
		snprintf(buf, sizeof buf, "%zu, %zu live", total, live);
	x = draw_title_tag(w, 0, x, end, m, UI_COLOR_TITLE, buf);
	x = draw_sort_tag(w, x, end, m, vs, sorts, SORT_COUNT);
	draw_filter_tag(w, x, end, m, vs);
}

/* The split: the selected session's tools, and the latest events. */

static void
sessions_draw_tool(WINDOW *w, int y, const struct draw_col *cols, const struct session_row *r,
		   const struct tool_view *t)
{
	char buf[DRAW_FMT_MAX];
	enum ui_color c = draw_tool_status(buf, r, t);

	draw_col_text(w, y, &cols[0], color_attr(UI_COLOR_DEFAULT), t->name);
	draw_col_text(w, y, &cols[1], color_attr(UI_COLOR_DIM), t->data_class);
	draw_col_text(w, y, &cols[2], color_attr(c), buf);
}

/* The tools under the list: TOOL and CLASS grow to their longest value. */
static const struct draw_col split_tool_cols[3] = {
	{ "TOOL", 4, 0, 0, false, 0, 0 },
	{ "CLASS", 5, 0, 1, false, 0, 0 },
	{ "STATUS", 0, 12, 0, false, 0, 0 },
};

static void
sessions_tool_widths(struct draw_col cols[3], const struct session_row *r)
{
	size_t i;

	memcpy(cols, split_tool_cols, sizeof split_tool_cols);
	for (i = 0; i < r->n_tools && i < SNAP_TOOLS_MAX; i++) {
		cols[0].width = draw_widest(cols[0].width, r->tools[i].name, 24);
		cols[1].width = draw_widest(cols[1].width, r->tools[i].data_class, 14);
	}
}

/* What the tools need, no more than 9/20 of the width: the events get the rest. */
static int
sessions_tools_width(const struct session_row *r, int width)
{
	struct draw_col cols[3];
	int need;

	if (!r || r->n_tools == 0)
		return width * 2 / 5;
	sessions_tool_widths(cols, r);
	need = 2 + cols[0].width + 1 + cols[1].width + 1 + cols[2].min + 1;
	return need < width * 9 / 20 ? need : width * 9 / 20;
}

static void
sessions_draw_tools(WINDOW *w, const struct ui_model *m, const struct session_row *r, int y0,
		    int width, int height)
{
	size_t i, n = r ? r->n_tools : 0, room = height > 2 ? (size_t)height - 1 : 1, shown;
	char title[SNAP_NAME_MAX], id[DRAW_FMT_MAX];
	struct draw_col cols[3];

	snprintf(title, sizeof title, r ? "Tools (%s)" : "Tools",
		 r ? draw_short_id(id, r->id) : "");
	draw_title(w, y0, 0, width, m, title);
	if (n == 0) {
		draw_empty(w, y0 + 1, 2, width - 2, r ? "no tools" : "no session selected");
		return;
	}
	if (n > SNAP_TOOLS_MAX)
		n = SNAP_TOOLS_MAX;
	sessions_tool_widths(cols, r);
	draw_cols_fit(cols, 3, 2, width - 3);
	/* When they do not all fit, the last line says how many are left out. */
	shown = n <= room ? n : room - 1;
	for (i = 0; i < shown; i++)
		sessions_draw_tool(w, y0 + 1 + (int)i, cols, r, &r->tools[i]);
	if (shown < n) {
		snprintf(title, sizeof title, "+%zu more", n - shown);
		draw_empty(w, y0 + 1 + (int)shown, 2, width - 2, title);
	}
}

static void
sessions_draw_event(WINDOW *w, int y, int x, int width, const struct supervisor_event *e)
{
	char buf[256], t[DRAW_FMT_MAX], id[DRAW_FMT_MAX];
	int at = x;

	at += draw_text(w, y, at, width, color_attr(UI_COLOR_DIM), draw_fmt_clock(t, e->wall_ms));
	at += 1;
	draw_text(w, y, at, x + width - at, color_attr(UI_COLOR_DEFAULT),
		  draw_short_id(id, e->session));
	at += 9;
	draw_text(w, y, at, x + width - at,
		  color_attr(e->alert ? UI_COLOR_ALERT : UI_COLOR_DEFAULT),
		  draw_fmt_event(buf, sizeof buf, e));
}

static void
sessions_draw_events(WINDOW *w, const struct ui_model *m, int y0, int x0, int height)
{
	int width = getmaxx(w) - x0, rows = height - 1, i;
	size_t n = m->events ? m->n_events : 0, first;

	draw_title(w, y0, x0, width, m, "Events");
	if (n == 0) {
		draw_empty(w, y0 + 1, x0 + 2, width - 2, "no events yet");
		return;
	}
	first = n > (size_t)rows ? n - (size_t)rows : 0;
	for (i = 0; first + (size_t)i < n; i++)
		sessions_draw_event(w, y0 + 1 + i, x0 + 2, width - 2,
				    &m->events[first + (size_t)i]);
}

static void
sessions_draw_split(WINDOW *w, const struct ui_model *m, const struct session_row *r, int y0,
		    int height)
{
	int half = sessions_tools_width(r, getmaxx(w));

	sessions_draw_tools(w, m, r, y0, half, height);
	sessions_draw_events(w, m, y0, half, height);
}

/* The view. */

static int
sessions_upper(WINDOW *w)
{
	int h = getmaxy(w);

	return h >= SPLIT_MIN_LINES ? h - h / 3 : h;
}

static const char *
session_key(const void *rows, size_t i)
{
	return ((const struct session_row *const *)rows)[i]->id;
}

static void
sessions_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs)
{
	struct sessions_list l;
	int upper = sessions_upper(w);

	werase(w);
	sessions_list(m, vs, &l);
	view_keep(vs, l.rows, l.n, session_key);
	view_clamp(vs, l.n, upper > 2 ? (size_t)(upper - 2) : 1);
	vs->rows_seen = l.n;
	sessions_draw_title(w, m, vs, &l);
	sessions_draw_table(w, m, vs, &l, upper);
	if (upper < getmaxy(w))
		sessions_draw_split(w, m, l.n ? l.rows[vs->selected] : NULL, upper,
				    getmaxy(w) - upper);
	free(l.rows);
}

static size_t
sessions_rows(const struct ui_model *m, const struct view_state *vs)
{
	struct sessions_list l;

	sessions_list(m, vs, &l);
	free(l.rows);
	return l.n;
}

static void
sessions_target(const struct ui_model *m, const struct view_state *vs, size_t i,
		char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	struct sessions_list l;

	session[0] = tool[0] = '\0';
	sessions_list(m, vs, &l);
	if (i < l.n)
		snprintf(session, SNAP_ID_MAX, "%s", l.rows[i]->id);
	free(l.rows);
}

const struct view_ops sessions_view = {
	VIEW_OPS_HEAD(SESSIONS, sessions),
	.n_sorts = SORT_COUNT,
	.filters = true,
	.target = sessions_target,
};
