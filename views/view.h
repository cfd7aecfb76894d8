#ifndef AIRLOCK_VIEW_H
#define AIRLOCK_VIEW_H

/*
 * The console's views (docs/console.md): each draws one screen region from
 * the model the UI thread assembled — engine snapshots and nothing else.
 * A view never talks to Docker, SQLite or the supervisor; the only engine
 * header it may include is snapshot.h. One table (view_info.h) declares
 * them all; a new view costs one line there and one file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curses.h>

#include "snapshot.h"
#include "view_info.h"

/* _(ENUM, name, "Title") for each view in view_info.h, in its order. */
#define VIEW_INFO_ROW(_, e, name, title, help) _(e, name, title)
#define VIEW_INFO(_) VIEW_TABLE(VIEW_INFO_ROW, _)

enum view_id {
#define VIEW_ENUM(e, name, title) VIEW_##e,
	VIEW_INFO(VIEW_ENUM)
#undef VIEW_ENUM
	VIEW_COUNT
};

#define UI_MARKS_MAX 256
#define UI_FILTER_MAX 64

/* Everything a view may draw from. The UI thread fills it; views only read. */
struct ui_model {
	const struct supervisor_snapshot *snap;
	const struct session_detail *detail;	/* the selected session, or NULL */
	const struct supervisor_event *events;	/* the console's history, oldest first */
	size_t n_events;
	const struct audit_row *audit;		/* the audit tail, oldest first */
	size_t n_audit;
	const char *audit_error;		/* the tail cannot be read: why; or NULL */
	const struct timeline_row *timeline;	/* the policy story, oldest first */
	size_t n_timeline;
	uint64_t timeline_dropped;		/* older events no longer kept */
	const char *timeline_error;		/* it cannot be read: why; or NULL */
	const struct hold_view *pending;	/* the held calls, every engine's, oldest first */
	size_t n_pending;
	const char *pending_error;		/* an engine's list cannot be read: why; or NULL */
	const struct host_snapshot *host;
	const char (*marks)[SNAP_ID_MAX];	/* marked session ids */
	size_t n_marks;
	int64_t now_ms;				/* wall clock, for "ago" columns */
	bool stale;				/* the snapshot is older than it should be */
	const bool *engine_fresh;		/* each engine's snapshot came, by engine
						 * index (a lost one's rows are its last
						 * known); NULL: every row is as it is */
	bool read_only;
	bool ascii;				/* the terminal cannot show UTF-8: ASCII glyphs */
	const char (*engine_names)[SNAP_ENGINE_MAX];	/* by a row's engine index */
	size_t n_engines;			/* more than one: rows say whose they are */
};

/* Per view, owned by the UI; views clamp it while drawing. */
struct view_state {
	size_t selected;	/* index among the visible rows */
	size_t top;		/* first visible row */
	int sort;		/* a column index of the view's own */
	bool sort_reverse;
	char filter[UI_FILTER_MAX];	/* case-insensitive substring; empty: all */
	char session[SNAP_ID_MAX];	/* the session a per-session view shows */
	/*
	 * The view's own: visible rows at its previous draw. A log view keeps
	 * the cursor on its newest row while the cursor was on the last row.
	 */
	size_t rows_seen;
	/*
	 * The view's own: the row selected at its previous draw, by its key
	 * and place. A list whose rows come and go keeps the cursor on the
	 * same row (the pending view: a held call's id and engine).
	 */
	int64_t kept_id;
	unsigned kept_engine;
	size_t kept_at;
	char kept_key[SNAP_NAME_MAX];	/* a row keyed by text: a tool's name, a session's id */
};

/* What a view's request hook makes of a request (as tig's view_ops.request). */
enum view_verdict {
	VIEW_PASS,	/* the console handles it as everywhere */
	VIEW_AS,	/* the console handles it as the request named .as */
	VIEW_IGNORE,	/* nothing to do here: neither offered nor done */
};

struct view_reply {
	enum view_verdict verdict;
	const char *as;		/* VIEW_AS: a request's keymap name ("revoke") */
};

struct view_ops {
	/* VIEW_OPS_HEAD: the id, and the name and title of its view_info.h line. */
	enum view_id id;
	const char *name;	/* keymap section: "sessions", "tools", … */
	const char *title;
	int n_sorts;		/* columns sort-next cycles through (0: none) */
	bool filters;		/* its rows honour the / filter */
	/* Set by VIEW_OPS_HEAD: draw into w (its whole size); clamp vs->selected and vs->top. */
	void (*draw)(WINDOW *w, const struct ui_model *m, struct view_state *vs);
	/* How many rows are selectable now (after filter). */
	size_t (*rows)(const struct ui_model *m, const struct view_state *vs);
	/*
	 * The session and tool of visible row i (either may be left empty):
	 * what the actions of this view act on. NULL in a view whose rows
	 * are no session's (the key bar then offers no incident request).
	 */
	void (*target)(const struct ui_model *m, const struct view_state *vs, size_t i,
		       char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX]);
	/*
	 * A request pressed in this view, by its keymap name ("revoke-all"),
	 * that the view gives a meaning of its own. Plain data both ways: the
	 * console carries out the reply, and asks the same hook to learn what
	 * the key bar offers. NULL: every request passes.
	 */
	/*
	 * The held call of visible row i: its id (0: none) and engine, what
	 * approve and deny act on. NULL in a view whose rows are no held calls.
	 */
	int64_t (*held)(const struct ui_model *m, const struct view_state *vs, size_t i,
			unsigned *engine);
	struct view_reply (*request)(const char *req, const struct ui_model *m,
				     const struct view_state *vs);
	/*
	 * Its view-NAME request opens it; session is the one selected where
	 * that was pressed ("" for none). Set vs for it and return true, or
	 * false when there is no session to show. NULL: it opens as it was left.
	 */
	bool (*open)(struct view_state *vs, const char *session);
	/*
	 * jump-prev, jump-next: the visible row to move to from the selection,
	 * back or forward; the selection itself when there is none. NULL: the
	 * view has no jumps.
	 */
	size_t (*jump)(const struct ui_model *m, const struct view_state *vs, bool forward);
};

/* Each view's name and title by enum view_id, as view_info.h declares them. */
extern const struct view_name {
	char name[16], title[16];
} view_names[VIEW_COUNT];

/*
 * A view_ops starts with VIEW_OPS_HEAD(ENUM, v): its id, name and title,
 * and the two hooks every view has, v_draw and v_rows (as VIEW_DECLARE
 * names v_view); then it sets only what is its own.
 */
#define VIEW_OPS_HEAD(e, v) \
	.id = VIEW_##e, .name = view_names[VIEW_##e].name, .title = view_names[VIEW_##e].title, \
	.draw = v##_draw, .rows = v##_rows

#define VIEW_DECLARE(e, name, title) extern const struct view_ops name##_view;
VIEW_INFO(VIEW_DECLARE)
#undef VIEW_DECLARE

/* The registry, indexed by enum view_id. */
extern const struct view_ops *const views[VIEW_COUNT];

/*
 * Keep vs->selected among rows and vs->top so that a list of height lines
 * shows it, without leaving blank lines at the end when rows shrank.
 */
void view_clamp(struct view_state *vs, size_t rows, size_t height);

/*
 * A list that follows its newest row (the audit, the timeline): true when
 * the cursor was on the last of the rows seen at the previous draw (or
 * there were none); the cursor then moves on to the newest of n.
 */
bool view_follow(struct view_state *vs, size_t n);

/*
 * The cursor on the row it was on, by the row's key (key(rows, i): a
 * tool's name, a session's id): unless the operator moved it since the
 * last draw, it goes to where that row is now (a row gone: the one that
 * took its place), so a row that came or went above it does not move it
 * onto another tool or session. Then the key under it is kept.
 */
void view_keep(struct view_state *vs, const void *rows, size_t n,
	       const char *(*key)(const void *rows, size_t i));

/* Is id among the marked sessions of m? */
bool view_marked(const struct ui_model *m, const char *id);
/* A row of a lost engine that had not ended: its last known state, not a live one. */
bool view_row_lost(const struct ui_model *m, const struct session_row *r);

/* The row of session id in m's snapshot, or NULL. */
const struct session_row *view_find_session(const struct ui_model *m, const char *id);

/* Does filter (case-insensitive; empty matches all) occur in s? */
bool view_match(const char *filter, const char *s);

#endif
