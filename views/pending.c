/*
 * The pending view: the calls held for an operator (airlock ctl hold),
 * every engine's, oldest first, each as the engine lists it (ctl pending):
 * its id, session, tool and the alias the agent used, the session's data
 * class against the tool's sink ceiling (marked "flow" when a class flow
 * hold holds it, "declassify" when approving it lets it past that
 * ceiling), the request's size and hash
 * prefix, how long it has waited (live) and how many calls of that tool
 * the session made before it. Never its payload: the engine never sends
 * one. The cursor stays on the same call (by id) while others come and go.
 */

#include "list.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pending.h"

#define PENDING_HASH_SHOWN	8	/* hex digits of the request hash, as the audit view shows them */

#define PENDING_COLS(_) \
	_(ID,      "ID",      4,  0, 0, true)  \
	_(ENGINE,  "ENGINE",  -1, 0, 8, false) \
	_(SESSION, "SESSION", 8,  0, 0, false) \
	_(TOOL,    "TOOL",    4,  0, 0, false) \
	_(ALIAS,   "ALIAS",   5,  0, 5, false) \
	_(FLOW,    "CLASS>SINK", 10, 0, 3, false) \
	_(SIZE,    "SIZE",    4,  0, 4, true)  \
	_(HASH,    "REQUEST", PENDING_HASH_SHOWN, 0, 2, false) \
	_(AGE,     "AGE",     5,  0, 0, true)  \
	_(EARLIER, "EARLIER", 7,  0, 1, true)

DRAW_COLS(PENDING_COLS, pending_cols);

const char *
pending_fmt_flow(char buf[DRAW_FMT_MAX], const struct hold_view *h, bool ascii)
{
	/* held by a class flow: marked; approving it would declassify: said */
	snprintf(buf, DRAW_FMT_MAX, "%.16s%s%.16s%s", h->session_class[0] ? h->session_class : "?",
		 ascii ? ">" : "→", h->sink_ceiling[0] ? h->sink_ceiling : "?",
		 h->declassify ? " declassify" : strcmp(h->held_by, "tool") && h->held_by[0]
		 ? " flow" : "");
	return buf;
}

int64_t
pending_age_ms(const struct hold_view *h, int64_t now_ms)
{
	int64_t age = h->since_ms > 0 ? now_ms - h->since_ms : -1;

	/* Another host's clock behind ours: what the engine counted, never less. */
	return age > h->waited_ms ? age : h->waited_ms > 0 ? h->waited_ms : 0;
}

const char *
pending_fmt_hash(char buf[DRAW_FMT_MAX], const struct hold_view *h)
{
	snprintf(buf, DRAW_FMT_MAX, "%.*s", PENDING_HASH_SHOWN,
		 h->request_hash[0] ? h->request_hash : "-");
	return buf;
}

static bool
pending_match(const struct ui_model *m, size_t i, const char *filter)
{
	const struct hold_view *h = &m->pending[i];

	return view_match(filter, h->session) || view_match(filter, h->tool) ||
	       view_match(filter, h->alias);
}

static struct list_items
pending_items(const struct ui_model *m)
{
	return (struct list_items){ m->pending ? m->n_pending : 0, m->pending_error };
}

/*
 * The cursor on the call it was on: unless the operator moved it since
 * the last draw, it goes to where that call is now (a call gone: the row
 * that took its place). Then the call under it is kept for the next draw.
 */
static void
pending_keep(const struct ui_model *m, struct view_state *vs, const struct view_list *l)
{
	size_t i;

	if (vs->kept_id && vs->selected == vs->kept_at)
		for (i = 0; i < l->n; i++) {
			const struct hold_view *h = &m->pending[l->rows[i]];

			if (h->id == vs->kept_id && h->engine == vs->kept_engine) {
				vs->selected = i;
				break;
			}
		}
	if (l->n == 0) {
		vs->kept_id = 0;
		return;
	}
	if (vs->selected >= l->n)
		vs->selected = l->n - 1;
	vs->kept_id = m->pending[l->rows[vs->selected]].id;
	vs->kept_engine = m->pending[l->rows[vs->selected]].engine;
	vs->kept_at = vs->selected;
}

static void
pending_draw_row(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
		 size_t i, bool sel)
{
	const struct hold_view *h = &m->pending[i];
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	attr_t dim = color_attr_sel(UI_COLOR_DIM, sel);
	char buf[DRAW_FMT_MAX];

	snprintf(buf, sizeof buf, "%" PRId64, h->id);
	draw_col_text(w, y, &cols[COL_ID], color_attr_sel(UI_COLOR_PENDING, sel), buf);
	if (m->n_engines > 1 && h->engine < m->n_engines)
		draw_col_text(w, y, &cols[COL_ENGINE], plain, m->engine_names[h->engine]);
	draw_col_text(w, y, &cols[COL_SESSION], plain, draw_short_id(buf, h->session));
	draw_col_text(w, y, &cols[COL_TOOL], plain, h->tool);
	draw_col_text(w, y, &cols[COL_ALIAS], dim, h->alias);
	draw_col_text(w, y, &cols[COL_FLOW], plain, pending_fmt_flow(buf, h, m->ascii));
	draw_col_text(w, y, &cols[COL_SIZE], plain,
		      draw_fmt_bytes(buf, h->request_bytes > 0 ? (uint64_t)h->request_bytes : 0));
	draw_col_text(w, y, &cols[COL_HASH], dim, pending_fmt_hash(buf, h));
	draw_col_text(w, y, &cols[COL_AGE], color_attr_sel(UI_COLOR_LEASE_LATE, sel),
		      draw_fmt_secs(buf, pending_age_ms(h, m->now_ms)));
	snprintf(buf, sizeof buf, "%" PRId64, h->earlier_calls);
	draw_col_text(w, y, &cols[COL_EARLIER], plain, buf);
}

/* TOOL and ALIAS are as wide as their widest value; ENGINE only with several engines. */
static void
pending_cols_fit(struct draw_col *cols, const struct ui_model *m, const struct view_list *l)
{
	const struct hold_view *h;
	char flow[DRAW_FMT_MAX], id[24];
	size_t i;

	if (m->n_engines > 1)
		cols[COL_ENGINE].width = 6;
	for (i = 0; i < l->n; i++) {
		h = &m->pending[l->rows[i]];
		snprintf(id, sizeof id, "%" PRId64, h->id);
		cols[COL_ID].width = draw_widest(cols[COL_ID].width, id, 16);
		cols[COL_TOOL].width = draw_widest(cols[COL_TOOL].width, h->tool, 24);
		cols[COL_ALIAS].width = draw_widest(cols[COL_ALIAS].width, h->alias, 20);
		cols[COL_FLOW].width = draw_widest(cols[COL_FLOW].width,
						   pending_fmt_flow(flow, h, true), 39);
		if (m->n_engines > 1 && h->engine < m->n_engines)
			cols[COL_ENGINE].width = draw_widest(cols[COL_ENGINE].width,
							     m->engine_names[h->engine], 12);
	}
}

/* How long the oldest call has waited. */
static int
pending_tags(WINDOW *w, int x, int end, const struct ui_model *m, const struct view_list *l)
{
	char buf[64], age[DRAW_FMT_MAX];

	(void)l;
	if (m->pending && m->n_pending > 0) {
		snprintf(buf, sizeof buf, "oldest %s",
			 draw_fmt_secs(age, pending_age_ms(&m->pending[0], m->now_ms)));
		x = draw_title_tag(w, 0, x, end, m, UI_COLOR_TITLE, buf);
	}
	return x;
}

static enum ui_color
pending_count_color(const struct view_list *l)
{
	return l->n ? UI_COLOR_PENDING : UI_COLOR_TITLE;
}

static const struct list_view pending_list = {
	.title = "Pending",
	.n_cols = COL_COUNT,
	.cols = pending_cols,
	.words = {
		.one = "waiting", .many = "waiting", .of = " waiting",
		.things = "the held calls", .unreadable = "the held calls cannot be listed",
		.thing = "held call",
		.none = "no call is waiting for an operator (airlock ctl hold TOOL)",
	},
	.items = pending_items,
	.match = pending_match,
	.error_tag = "an engine's list cannot be read",
	.keep = pending_keep,
	.fit = pending_cols_fit,
	.tags = pending_tags,
	.count_color = pending_count_color,
	.row = pending_draw_row,
};

LIST_VIEW_HOOKS(pending, pending_list)

/* The visible row i's call, or NULL. */
static const struct hold_view *
pending_at(const struct ui_model *m, const struct view_state *vs, size_t i)
{
	size_t item;

	return list_view_item(&pending_list, m, vs, i, &item) ? &m->pending[item] : NULL;
}

/* A held call's session and tool: a revoke or force-stop from here acts on them. */
static void
pending_target(const struct ui_model *m, const struct view_state *vs, size_t i,
	       char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	const struct hold_view *h = pending_at(m, vs, i);

	session[0] = tool[0] = '\0';
	if (h) {
		snprintf(session, SNAP_ID_MAX, "%s", h->session);
		snprintf(tool, SNAP_NAME_MAX, "%s", h->tool);
	}
}

static int64_t
pending_held(const struct ui_model *m, const struct view_state *vs, size_t i, unsigned *engine)
{
	const struct hold_view *h = pending_at(m, vs, i);

	*engine = h ? h->engine : 0;
	return h ? h->id : 0;
}

const struct view_ops pending_view = {
	VIEW_OPS_HEAD(PENDING, pending),
	.filters = true,
	.target = pending_target,
	.held = pending_held,
};
