#ifndef AIRLOCK_VIEWS_UTIL_H
#define AIRLOCK_VIEWS_UTIL_H

/*
 * Drawing helpers shared by the views. Every draw_ function clips to the
 * width it is given and to the window, so a view can lay out for 100
 * columns and still be drawn, cut short, into 20. Strings from snapshots
 * are identifiers and check values: a control byte or anything that is not
 * printable UTF-8 in the current locale is drawn as '?', and a string cut
 * short ends in '~' (as tig marks it).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curses.h>

#include "color.h"
#include "snapshot.h"
#include "view.h"

/* The few non-ASCII glyphs views use, and what stands for them in ASCII. */
#define DRAW_GLYPHS(_) \
	_(CURSOR, "▶", ">") \
	_(HLINE,  "─", "-") \
	_(VLINE,  "│", "|") \
	_(NONE,   "—", "-") \
	_(CHECK,  "✓", "+") \
	_(CROSS,  "✗", "x") \
	_(UP,     "▲", "^") \
	_(DOWN,   "▼", "v") \
	_(DOTS,   "…", "...") \
	_(DOT,    "·", "-")

enum draw_glyph {
#define DRAW_GLYPH_ENUM(e, utf8, ascii) GLYPH_##e,
	DRAW_GLYPHS(DRAW_GLYPH_ENUM)
#undef DRAW_GLYPH_ENUM
	GLYPH_COUNT
};

const char *draw_glyph(const struct ui_model *m, enum draw_glyph g);

/* Formatters: write into buf and return it; the results fit in 16 columns. */
#define DRAW_FMT_MAX 48

/* "0", "512B", "1.2K", "18K", "1.2M" (never more than 4 columns). */
const char *draw_fmt_bytes(char buf[DRAW_FMT_MAX], uint64_t bytes);
/* "9999", "12k", "1.2M": a counter in at most 4 columns. */
const char *draw_fmt_count(char buf[DRAW_FMT_MAX], uint64_t n);
/* An uptime: "02:13" (mm:ss), "1h04", "3d02". */
const char *draw_fmt_duration(char buf[DRAW_FMT_MAX], int64_t ms);
/* A short wait: "0.21s", "12.3s", "345s", "2h". */
const char *draw_fmt_secs(char buf[DRAW_FMT_MAX], int64_t ms);
/* What remains of a tool's grant: "grant: 2 calls, 14:05 left"; "" when none. */
const char *draw_fmt_grant(char buf[DRAW_FMT_MAX], const struct tool_view *t);
/* A round trip or latency: "850us", "1.23ms", "120ms", then as secs. */
const char *draw_fmt_us(char buf[DRAW_FMT_MAX], int64_t us);
/* "12s ago", "4m ago", "2h ago", "3d ago"; "never" when then_ms <= 0. */
const char *draw_fmt_ago(char buf[DRAW_FMT_MAX], int64_t now_ms, int64_t then_ms);
/* Wall clock as HH:MM:SS, always UTC. */
const char *draw_fmt_clock(char buf[DRAW_FMT_MAX], int64_t wall_ms);
/* The first 8 characters of an id without "sha256:" or "s-": "3f9a1c02". */
const char *draw_short_id(char buf[DRAW_FMT_MAX], const char *id);
/* What an event says, without its time and session: "end watchdog_failed". */
const char *draw_fmt_event(char *buf, size_t n, const struct supervisor_event *e);

/*
 * Text at (y, x) in at most width columns (width < 0: to the window's
 * edge). Returns the columns drawn.
 */
int draw_text(WINDOW *w, int y, int x, int width, attr_t a, const char *s);
/* The same, right-aligned in width columns. */
int draw_right(WINDOW *w, int y, int x, int width, attr_t a, const char *s);
int draw_number(WINDOW *w, int y, int x, int width, attr_t a, int64_t v);
/* width blanks in a (width < 0: to the edge): a highlighted row's gaps. */
void draw_fill(WINDOW *w, int y, int x, int width, attr_t a);
void draw_hline(WINDOW *w, int y, int x, int width, attr_t a, const struct ui_model *m);

/* A section title across width columns: " ─ Tools ────…"; returns where a tag may go. */
int draw_title(WINDOW *w, int y, int x, int width, const struct ui_model *m,
	       const char *title);
/* A view's own title on its first line, then STALE when the snapshot is stale. */
int draw_view_title(WINDOW *w, const struct ui_model *m, const char *title);
/* "─ text " at x, if it fits before end; returns the next x. */
int draw_title_tag(WINDOW *w, int y, int x, int end, const struct ui_model *m,
		   enum ui_color c, const char *text);

/*
 * The latest acks of a lease as bars, newest at the right, on a log scale
 * from 32us (lowest bar) to 30ms and more (full bar). Returns columns drawn.
 */
int draw_sparkline(WINDOW *w, int y, int x, int width, attr_t a, const struct lease_view *l,
		   const struct ui_model *m);

/*
 * A session's tool as "allowed", "REVOKED r7" or "not approved" into buf;
 * returns the colour to draw it in.
 */
enum ui_color draw_tool_status(char buf[DRAW_FMT_MAX], const struct session_row *r,
			       const struct tool_view *t);

/* The colour of a session state, and of an end (ALERT when abnormal). */
enum ui_color draw_state_color(enum session_state s);
enum ui_color draw_end_color(enum session_end e);

/*
 * Column layout for a table. A view lists its columns; draw_cols_fit()
 * drops the ones with the lowest positive drop rank until the rest fit,
 * and gives the flex column (width 0) what is left, no less than its min.
 */
struct draw_col {
	const char *header;
	int width;	/* 0: flex; < 0: never shown */
	int min;	/* the flex column's least width */
	int drop;	/* 1 goes first when narrow; 0: never dropped */
	bool right;	/* right-aligned */
	int x;		/* set by draw_cols_fit; < 0 when not shown */
	int w;
};

/*
 * A view's columns as one X-macro table, _(E, HEADER, WIDTH, MIN, DROP,
 * RIGHT) a row: DRAW_COLS(TABLE, cols) makes its enum (COL_E, COL_COUNT)
 * and cols, its struct draw_col array.
 */
#define DRAW_COL_ENUM(e, header, width, min, drop, right) COL_##e,
#define DRAW_COL_SPEC(e, header, width, min, drop, right) \
	[COL_##e] = { header, width, min, drop, right, 0, 0 },
#define DRAW_COLS(table, cols) \
	enum { table(DRAW_COL_ENUM) COL_COUNT }; \
	static const struct draw_col cols[COL_COUNT] = { table(DRAW_COL_SPEC) }

void draw_cols_fit(struct draw_col *c, size_t n, int x0, int width);
void draw_cols_header(WINDOW *w, int y, const struct draw_col *c, size_t n);
/* s in column c of a row; nothing when the column is not shown. */
int draw_col_text(WINDOW *w, int y, const struct draw_col *c, attr_t a, const char *s);

/*
 * A sortable view's keys as one X-macro table, _(E, "name", DESC) a row:
 * DRAW_SORTS(TABLE, sorts) makes its enum (SORT_E, SORT_COUNT) and sorts,
 * its struct sort_spec array. An out-of-range vs->sort means the first key.
 */
struct sort_spec {
	const char *name;
	bool desc;	/* biggest first: the rows to look at come on top */
};

#define DRAW_SORT_ENUM(e, name, desc) SORT_##e,
#define DRAW_SORT_SPEC(e, name, desc) [SORT_##e] = { name, desc },
#define DRAW_SORTS(table, sorts) \
	enum { table(DRAW_SORT_ENUM) SORT_COUNT }; \
	static const struct sort_spec sorts[SORT_COUNT] = { table(DRAW_SORT_SPEC) }

/* The key of sorts[n] that vs sorts by. */
int draw_sort_key(const struct view_state *vs, int n);
/* The title tag "sort: lease ▼" of the key vs sorts by; returns the next x. */
int draw_sort_tag(WINDOW *w, int x, int end, const struct ui_model *m,
		  const struct view_state *vs, const struct sort_spec *sorts, int n);
/* The title tag "filter: run" when vs has a filter; returns the next x. */
int draw_filter_tag(WINDOW *w, int x, int end, const struct ui_model *m,
		    const struct view_state *vs);

/* The larger of have and s's length, no more than cap: a column's width. */
int draw_widest(int have, const char *s, int cap);

/*
 * Check items (admission reports, host checks) as VERDICT CHECK EXPECTED
 * OBSERVED from x, the CHECK column idw wide and the values sharing the
 * rest: PASS, fail_word ("REFUSE", "FAIL") with the whole line in FAIL,
 * or "--" and "not run". An item NULL draws the column headers.
 */
void draw_check_row(WINDOW *w, int y, int x, int idw, const struct check_item *it,
		    const char *fail_word, bool sel);
/* The CHECK column's width for items, starting from have. */
int draw_check_width(const struct check_item *items, size_t n, int have);

/* What an empty list says instead, in DIM, at (y, x) up to width. */
void draw_empty(WINDOW *w, int y, int x, int width, const char *text);

#endif
