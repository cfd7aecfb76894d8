/*
 * The timeline view: the audit log's policy story (audit_timeline.h,
 * `airlock audit timeline`) as the engine's link gives it, oldest at the
 * top and the newest at the bottom: sessions started and ended, refused
 * admissions, changes to the policy with their author and acks, standing
 * revokes and freezes applied at a start, operators' requests and
 * refusals, grants and lapses, reaps. Names, ids, counts and times only.
 * It follows new events while the cursor is on the last row, as the audit
 * view does; [ and ] jump to the previous and next operator's change.
 *
 * How each kind of event reads is one line of the table below: a kind a
 * newer engine adds and this table lacks is still listed, by its word.
 */

#include "list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_COLS(_) \
	_(TIME, "TIME", 8, 0, 0, false) \
	_(KIND, "KIND", 4, 0, 0, false) \
	_(BY,   "BY",   2, 0, 1, false) \
	_(WHAT, "WHAT", 0, 10, 0, false)

DRAW_COLS(TIMELINE_COLS, timeline_cols);

typedef void what_fn(char *buf, size_t cap, const struct timeline_row *r);

/* How one kind reads: its KIND text (NULL: the event's op), colour and WHAT. */
struct kind_look {
	const char *id;		/* the timeline's word (audit_timeline.h) */
	const char *label;
	const char *suffix;	/* after the op, when label is NULL */
	enum ui_color color;	/* UI_COLOR_COUNT: the op's (op_colors) */
	what_fn *what;
};

static what_fn what_session, what_end, what_rule, what_change, what_at_start, what_request;
static what_fn what_other;

static const struct kind_look looks[] = {
	{ "session_start",     "start",   NULL,        UI_COLOR_DEFAULT, what_session },
	{ "session_end",       "end",     NULL,        UI_COLOR_DEFAULT, what_end },
	{ "admission_refused", "refused", NULL,        UI_COLOR_DENIED,  what_rule },
	{ "policy",            NULL,      NULL,        UI_COLOR_COUNT,   what_change },
	{ "policy_at_start",   NULL,      " at start", UI_COLOR_COUNT,   what_at_start },
	{ "request",           NULL,      NULL,        UI_COLOR_COUNT,   what_request },
	{ "reap",              "reap",    NULL,        UI_COLOR_DIM,     what_rule },
};

static const struct kind_look other_look = { NULL, NULL, NULL, UI_COLOR_DEFAULT, what_other };

/*
 * An op that takes a tool away stands out as a revoke does; one that gives
 * it back, allowed. A grant's request is plain: its lapse is the same op.
 */
static const struct {
	const char *op;
	enum ui_color color;
} op_colors[] = {
	{ "revoke", UI_COLOR_REVOKED }, { "freeze", UI_COLOR_REVOKED },
	{ "restore", UI_COLOR_ALLOWED }, { "thaw", UI_COLOR_ALLOWED },
};

static const struct kind_look *
look_of(const struct timeline_row *r)
{
	for (size_t i = 0; i < sizeof looks / sizeof looks[0]; i++)
		if (strcmp(looks[i].id, r->kind) == 0)
			return &looks[i];
	return &other_look;
}

static enum ui_color
row_color(const struct timeline_row *r)
{
	const struct kind_look *k = look_of(r);

	if (k->what == what_end && !r->normal)
		return UI_COLOR_DENIED;
	if (k->color != UI_COLOR_COUNT)
		return k->color;
	if (r->rejected && !r->applied)
		return UI_COLOR_DENIED;
	for (size_t i = 0; i < sizeof op_colors / sizeof op_colors[0]; i++)
		if (strcmp(op_colors[i].op, r->op) == 0)
			return op_colors[i].color;
	return UI_COLOR_DEFAULT;
}

/* ---- what each kind touched ---- */

static const char *
short_session(char buf[DRAW_FMT_MAX], const struct timeline_row *r)
{
	return strcmp(r->session, "engine") == 0 ? "engine" : draw_short_id(buf, r->session);
}

static const char *
ack_word(const struct timeline_row *r)
{
	return r->applied ? "applied" : r->not_applicable ? "not applicable" : "rejected";
}

static void
what_session(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s", short_session(id, r));
}

static void
what_end(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s %s%s%s", short_session(id, r), r->normal ? "normal" : "abnormal",
		 r->rule[0] ? ": " : "", r->rule);
}

static void
what_rule(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s %s", short_session(id, r), r->rule);
}

/* "store r7: 2 applied, 1 n/a, 1 rejected" (the zero ones left out but applied). */
static void
what_change(char *buf, size_t cap, const struct timeline_row *r)
{
	int k = snprintf(buf, cap, "%s%sr%lld: %lld applied", r->tool, r->tool[0] ? " " : "",
			 (long long)r->revision, (long long)r->applied);

	if (r->not_applicable && k > 0 && (size_t)k < cap)
		k += snprintf(buf + k, cap - (size_t)k, ", %lld n/a", (long long)r->not_applicable);
	if (r->rejected && k > 0 && (size_t)k < cap)
		snprintf(buf + k, cap - (size_t)k, ", %lld rejected", (long long)r->rejected);
}

static void
what_at_start(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s%sr%lld %s %s", r->tool, r->tool[0] ? " " : "",
		 (long long)r->revision, short_session(id, r), ack_word(r));
}

static void
what_request(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s%s%s%s", r->rule, r->rejected ? " (rejected)" : "",
		 strcmp(r->session, "engine") ? " " : "",
		 strcmp(r->session, "engine") ? short_session(id, r) : "");
}

/* A kind this console does not know: whatever of it is set. */
static void
what_other(char *buf, size_t cap, const struct timeline_row *r)
{
	char id[DRAW_FMT_MAX];

	snprintf(buf, cap, "%s%s%s%s%s", r->session[0] ? short_session(id, r) : "",
		 r->tool[0] ? " " : "", r->tool, r->rule[0] ? " " : "", r->rule);
}

static void
kind_text(char *buf, size_t cap, const struct timeline_row *r)
{
	const struct kind_look *k = look_of(r);

	if (k->label)
		snprintf(buf, cap, "%s", k->label);
	else if (k == &other_look)
		snprintf(buf, cap, "%s", r->kind);
	else
		snprintf(buf, cap, "%s%s", r->op, k->suffix ? k->suffix : "");
}

/* "alice via ctl", or "" when the entries name no author. */
static void
by_text(char *buf, size_t cap, const struct timeline_row *r)
{
	if (r->has_author)
		snprintf(buf, cap, "%s via %s", r->by.user, r->by.via);
	else
		buf[0] = '\0';
}

/* ---- the list ---- */

static bool
timeline_match(const struct ui_model *m, size_t i, const char *filter)
{
	const struct timeline_row *r = &m->timeline[i];
	char kind[64];

	kind_text(kind, sizeof kind, r);
	return view_match(filter, kind) || view_match(filter, r->kind) ||
	       view_match(filter, r->session) || view_match(filter, r->tool) ||
	       view_match(filter, r->rule) || (r->has_author && (view_match(filter, r->by.user) ||
								  view_match(filter, r->by.via)));
}

static struct list_items
timeline_items(const struct ui_model *m)
{
	return (struct list_items){ m->timeline ? m->n_timeline : 0, m->timeline_error };
}

/* "2024-05-01T12:04:31.123456Z" as "12:04:31"; anything else as stored. */
static const char *
timeline_time(char buf[DRAW_FMT_MAX], const char *ts)
{
	if (strlen(ts) >= 19 && ts[10] == 'T')
		snprintf(buf, DRAW_FMT_MAX, "%.8s", ts + 11);
	else
		snprintf(buf, DRAW_FMT_MAX, "%s", ts);
	return buf;
}

static void
timeline_draw_row(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
		  size_t i, bool sel)
{
	const struct timeline_row *r = &m->timeline[i];
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	char buf[DRAW_FMT_MAX], text[256];

	draw_col_text(w, y, &cols[COL_TIME], color_attr_sel(UI_COLOR_DIM, sel),
		      timeline_time(buf, r->time));
	kind_text(text, sizeof text, r);
	draw_col_text(w, y, &cols[COL_KIND], color_attr_sel(row_color(r), sel), text);
	by_text(text, sizeof text, r);
	draw_col_text(w, y, &cols[COL_BY], plain, text[0] ? text : draw_glyph(m, GLYPH_NONE));
	look_of(r)->what(text, sizeof text, r);
	draw_col_text(w, y, &cols[COL_WHAT], plain, text);
}

/* KIND and BY are as wide as their widest value. */
static void
timeline_cols_fit(struct draw_col *cols, const struct ui_model *m, const struct view_list *l)
{
	char text[128];

	for (size_t i = 0; i < l->n; i++) {
		const struct timeline_row *r = &m->timeline[l->rows[i]];

		kind_text(text, sizeof text, r);
		cols[COL_KIND].width = draw_widest(cols[COL_KIND].width, text, 16);
		by_text(text, sizeof text, r);
		cols[COL_BY].width = draw_widest(cols[COL_BY].width, text, 20);
	}
}

/* Older events the engine no longer keeps. */
static int
timeline_tags(WINDOW *w, int x, int end, const struct ui_model *m, const struct view_list *l)
{
	char buf[48];

	(void)l;
	if (m->timeline_dropped) {
		snprintf(buf, sizeof buf, "%llu older not kept",
			 (unsigned long long)m->timeline_dropped);
		x = draw_title_tag(w, 0, x, end, m, UI_COLOR_DIM, buf);
	}
	return x;
}

static const struct list_view timeline_list = {
	.title = "Timeline",
	.n_cols = COL_COUNT,
	.cols = timeline_cols,
	.words = {
		.one = "event", .many = "events", .of = "",
		.things = "the timeline", .unreadable = "the audit log cannot be read",
		.thing = "event", .none = "no policy events yet",
	},
	.follows = true,
	.items = timeline_items,
	.match = timeline_match,
	.error_tag = "not following: the log cannot be read",
	.fit = timeline_cols_fit,
	.tags = timeline_tags,
	.row = timeline_draw_row,
};

LIST_VIEW_HOOKS(timeline, timeline_list)

/* Made by an operator: through ctl or a console (not the engine's own, nor a grant's expiry). */
static bool
by_operator(const struct timeline_row *r)
{
	return r->has_author && (strcmp(r->by.via, "ctl") == 0 || strcmp(r->by.via, "console") == 0);
}

/* The previous or next visible event an operator authored; the selection itself when none. */
static size_t
timeline_jump(const struct ui_model *m, const struct view_state *vs, bool forward)
{
	struct view_list l;
	size_t i, to = vs->selected;

	list_view_list(&timeline_list, m, vs, &l);
	for (i = vs->selected; forward ? i + 1 < l.n : i > 0 && i <= l.n;) {
		i = forward ? i + 1 : i - 1;
		if (by_operator(&m->timeline[l.rows[i]])) {
			to = i;
			break;
		}
	}
	free(l.rows);
	return to;
}

const struct view_ops timeline_view = {
	VIEW_OPS_HEAD(TIMELINE, timeline),
	.filters = true,
	.jump = timeline_jump,
};
