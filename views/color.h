#ifndef AIRLOCK_COLOR_H
#define AIRLOCK_COLOR_H

/*
 * The console's semantic colours: views and the console ask for a meaning
 * (ALERT, LEASE_LATE, REVOKED), never for a colour number. One table gives
 * the enum, the name a theme would use, the colours and both attributes:
 * attr goes with the colour pair, mono stands alone when colour is off
 * (NO_COLOR, or a terminal without colours), so each meaning stays
 * distinguishable in monochrome too. -1 is the terminal's own colour.
 */

#include <stdbool.h>

#include <curses.h>

/* Monochrome needs more than bold to make an alert stand out from a mark. */
#define ALERT_MONO	(A_BOLD | A_UNDERLINE)
#define STALE_MONO	(A_BOLD | A_REVERSE)

/*  name            id                fg             bg            attr      mono */
#define UI_COLORS(_) \
	_(DEFAULT,        "default",        -1,            -1,           A_NORMAL, A_NORMAL) \
	_(TITLE,          "title",          COLOR_CYAN,    -1,           A_BOLD,   A_BOLD) \
	_(HEADER,         "header",         -1,            -1,           A_BOLD,   A_BOLD) \
	_(CURSOR,         "cursor",         COLOR_BLACK,   COLOR_CYAN,   A_NORMAL, A_REVERSE) \
	_(MARKED,         "marked",         COLOR_YELLOW,  -1,           A_BOLD,   A_BOLD) \
	_(STATE_RUNNING,  "state-running",  COLOR_GREEN,   -1,           A_NORMAL, A_NORMAL) \
	_(STATE_STARTING, "state-starting", COLOR_YELLOW,  -1,           A_NORMAL, A_NORMAL) \
	_(STATE_ENDED,    "state-ended",    -1,            -1,           A_DIM,    A_DIM) \
	_(ALERT,          "alert",          COLOR_RED,     -1,           A_BOLD,   ALERT_MONO) \
	_(LEASE_OK,       "lease-ok",       COLOR_GREEN,   -1,           A_NORMAL, A_NORMAL) \
	_(LEASE_LATE,     "lease-late",     COLOR_YELLOW,  -1,           A_BOLD,   A_BOLD) \
	_(REVOKED,        "revoked",        COLOR_MAGENTA, -1,           A_BOLD,   A_BOLD) \
	_(ALLOWED,        "allowed",        COLOR_GREEN,   -1,           A_NORMAL, A_NORMAL) \
	_(DENIED,         "denied",         COLOR_RED,     -1,           A_NORMAL, A_BOLD) \
	_(PENDING,        "pending",        COLOR_YELLOW,  -1,           A_NORMAL, A_UNDERLINE) \
	_(STALE,          "stale",          COLOR_BLACK,   COLOR_YELLOW, A_BOLD,   STALE_MONO) \
	_(STATUS,         "status",         -1,            -1,           A_NORMAL, A_NORMAL) \
	_(KEY,            "key",            COLOR_CYAN,    -1,           A_BOLD,   A_BOLD) \
	_(PROMPT,         "prompt",         -1,            -1,           A_BOLD,   A_BOLD) \
	_(DIM,            "dim",            -1,            -1,           A_DIM,    A_DIM) \
	_(PASS,           "pass",           COLOR_GREEN,   -1,           A_NORMAL, A_NORMAL) \
	_(FAIL,           "fail",           COLOR_RED,     -1,           A_BOLD,   ALERT_MONO) \
	_(QUARANTINED,    "quarantined",    COLOR_WHITE,   COLOR_MAGENTA, A_BOLD,  A_REVERSE)

enum ui_color {
#define UI_COLOR_ENUM(e, id, fg, bg, attr, mono) UI_COLOR_##e,
	UI_COLORS(UI_COLOR_ENUM)
#undef UI_COLOR_ENUM
	UI_COLOR_COUNT
};

/*
 * Once, after newterm/initscr, from the UI thread. With use_color and a
 * terminal that has colours: one pair per row, on the terminal's default
 * colours where it supports them. Otherwise attributes only.
 */
void color_init(bool use_color);

/* What to draw c with (until color_init: the monochrome attributes). */
attr_t color_attr(enum ui_color c);

/* c on the selected row: the cursor's colours, c's attributes kept. */
attr_t color_attr_sel(enum ui_color c, bool selected);

/* The theme name of c ("lease-late"), and back; UI_COLOR_COUNT if none. */
const char *color_name(enum ui_color c);
enum ui_color color_by_name(const char *name);

#endif
