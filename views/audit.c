/*
 * The audit view: the tail of the audit log, oldest at the top and the
 * newest at the bottom, as names, decisions and hash prefixes only. While
 * the cursor is on the last row the view follows new entries; moved up,
 * it stays where the operator put it.
 */

#include "list.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_SHOWN	8	/* hex digits of each hash prefix */

#define AUDIT_COLS(_) \
	_(TIME,     "TIME",     12, 0, 0, false) \
	_(SESSION,  "SESSION",  8,  0, 8, false) \
	_(TYPE,     "TYPE",     4,  0, 5, false) \
	_(TOOL,     "TOOL",     4,  0, 7, false) \
	_(DECISION, "DECISION", 8,  0, 0, false) \
	_(RULE,     "RULE",     4,  0, 6, false) \
	_(REV,      "REV",      4,  0, 4, true)  \
	_(LATENCY,  "LATENCY",  7,  0, 3, true)  \
	_(REQUEST,  "REQUEST",  8,  0, 2, false) \
	_(RESPONSE, "RESPONSE", 8,  0, 1, false)

DRAW_COLS(AUDIT_COLS, audit_cols);

/* How decisions stand out: by the tone the engine's vocabulary gives them. */
static const enum ui_color tone_colors[] = {
	[AUDIT_TONE_PLAIN] = UI_COLOR_DEFAULT,
	[AUDIT_TONE_GOOD] = UI_COLOR_ALLOWED,
	[AUDIT_TONE_BAD] = UI_COLOR_DENIED,
	[AUDIT_TONE_ALERT] = UI_COLOR_ALERT,
};

/* A dispatch whose outcome the log does not have (a crash): said so, as an alert. */
#define UNKNOWN_OUTCOME	"unknown"

static enum ui_color
decision_color(const struct audit_row *a)
{
	if (a->unknown_outcome)
		return UI_COLOR_ALERT;
	return (unsigned)a->tone < sizeof tone_colors / sizeof tone_colors[0] ?
	       tone_colors[a->tone] : UI_COLOR_DEFAULT;
}

static const char *
decision_text(const struct audit_row *a)
{
	return a->unknown_outcome ? UNKNOWN_OUTCOME : a->decision;
}

static size_t
unknown_count(const struct ui_model *m)
{
	size_t i, n = 0;

	for (i = 0; m->audit && i < m->n_audit; i++)
		n += m->audit[i].unknown_outcome;
	return n;
}

static bool
audit_match(const struct ui_model *m, size_t i, const char *filter)
{
	const struct audit_row *a = &m->audit[i];

	return view_match(filter, a->session) || view_match(filter, a->tool) ||
	       view_match(filter, decision_text(a)) || view_match(filter, a->rule) ||
	       view_match(filter, a->type);
}

static struct list_items
audit_items(const struct ui_model *m)
{
	return (struct list_items){ m->audit ? m->n_audit : 0, m->audit_error };
}

/* "2024-05-01T12:04:31.123456Z" as "12:04:31.123"; anything else as stored. */
static const char *
audit_time(char buf[DRAW_FMT_MAX], const char *ts)
{
	if (strlen(ts) >= 23 && ts[10] == 'T' && ts[19] == '.')
		snprintf(buf, DRAW_FMT_MAX, "%.12s", ts + 11);
	else
		snprintf(buf, DRAW_FMT_MAX, "%s", ts);
	return buf;
}

static void
audit_draw_hashes(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
		  const struct audit_row *a, bool sel)
{
	const char *none = draw_glyph(m, GLYPH_NONE);
	attr_t dim = color_attr_sel(UI_COLOR_DIM, sel);
	char req[HASH_SHOWN + 1], resp[HASH_SHOWN + 1];

	/* A prefix of a prefix: shorter, never marked as cut. */
	snprintf(req, sizeof req, "%.*s", HASH_SHOWN, a->request_hash[0] ? a->request_hash : none);
	snprintf(resp, sizeof resp, "%.*s", HASH_SHOWN,
		 a->response_hash[0] ? a->response_hash : none);
	draw_col_text(w, y, &cols[COL_REQUEST], dim, req);
	draw_col_text(w, y, &cols[COL_RESPONSE], dim, resp);
}

static void
audit_draw_row(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
	       size_t i, bool sel)
{
	const struct audit_row *a = &m->audit[i];
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	char buf[DRAW_FMT_MAX];

	draw_col_text(w, y, &cols[COL_TIME], color_attr_sel(UI_COLOR_DIM, sel),
		      audit_time(buf, a->time));
	draw_col_text(w, y, &cols[COL_SESSION], plain, draw_short_id(buf, a->session));
	draw_col_text(w, y, &cols[COL_TYPE], plain, a->type);
	draw_col_text(w, y, &cols[COL_TOOL], plain, a->tool);
	draw_col_text(w, y, &cols[COL_DECISION], color_attr_sel(decision_color(a), sel),
		      decision_text(a));
	draw_col_text(w, y, &cols[COL_RULE], plain, a->rule);
	snprintf(buf, sizeof buf, "%" PRId64, a->revision);
	draw_col_text(w, y, &cols[COL_REV], plain, buf);
	draw_col_text(w, y, &cols[COL_LATENCY], plain,
		      a->latency_us > 0 ? draw_fmt_us(buf, a->latency_us) : "");
	audit_draw_hashes(w, y, m, cols, a, sel);
}

/* TYPE, TOOL, DECISION and RULE are as wide as their widest value. */
static void
audit_cols_fit(struct draw_col *cols, const struct ui_model *m, const struct view_list *l)
{
	const struct audit_row *a;
	size_t i;

	for (i = 0; i < l->n; i++) {
		a = &m->audit[l->rows[i]];
		cols[COL_TYPE].width = draw_widest(cols[COL_TYPE].width, a->type, 13);
		cols[COL_TOOL].width = draw_widest(cols[COL_TOOL].width, a->tool, 20);
		cols[COL_DECISION].width = draw_widest(cols[COL_DECISION].width, a->decision, 13);
		cols[COL_RULE].width = draw_widest(cols[COL_RULE].width, a->rule, 20);
	}
}

/* Dispatches the log has no outcome for, as an alert. */
static int
audit_tags(WINDOW *w, int x, int end, const struct ui_model *m, const struct view_list *l)
{
	char buf[64];

	(void)l;
	if (unknown_count(m)) {
		snprintf(buf, sizeof buf, "%zu unknown outcome%s (no terminal entry)",
			 unknown_count(m), unknown_count(m) == 1 ? "" : "s");
		x = draw_title_tag(w, 0, x, end, m, UI_COLOR_ALERT, buf);
	}
	return x;
}

static const struct list_view audit_list = {
	.title = "Audit",
	.n_cols = COL_COUNT,
	.cols = audit_cols,
	.words = {
		.one = "entry", .many = "entries", .of = "",
		.things = "the audit tail", .unreadable = "the audit log cannot be read",
		.thing = "entry", .none = "no audit entries yet",
	},
	.follows = true,
	.items = audit_items,
	.match = audit_match,
	.error_tag = "not following: the log cannot be read",
	.fit = audit_cols_fit,
	.tags = audit_tags,
	.row = audit_draw_row,
};

LIST_VIEW_HOOKS(audit, audit_list)

/* The session and tool of an entry: a revoke from here acts on them. */
static void
audit_target(const struct ui_model *m, const struct view_state *vs, size_t i,
	     char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	size_t item;

	session[0] = tool[0] = '\0';
	if (list_view_item(&audit_list, m, vs, i, &item)) {
		snprintf(session, SNAP_ID_MAX, "%s", m->audit[item].session);
		snprintf(tool, SNAP_NAME_MAX, "%s", m->audit[item].tool);
	}
}

const struct view_ops audit_view = {
	VIEW_OPS_HEAD(AUDIT, audit),
	.filters = true,
	.target = audit_target,
};
