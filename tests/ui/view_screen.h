#ifndef AIRLOCK_TESTS_VIEW_SCREEN_H
#define AIRLOCK_TESTS_VIEW_SCREEN_H

/*
 * One view drawn into an off-screen ncurses screen and read back, for the
 * view tests that look at lines rather than goldens (test_pending_view,
 * test_timeline_view).
 */

#include <stddef.h>

#include <curses.h>

#include "view.h"

/* The screen on /dev/null in C.UTF-8, colours off: cmocka's group setup and teardown. */
int view_screen_open(void **state);
int view_screen_close(void **state);

/* Line y as UTF-8, trailing blanks dropped. */
void view_screen_line(WINDOW *w, int y, char *out, size_t cap);
/* The first line showing a and each of b, c given (NULL: not asked); -1 when none does. */
int view_screen_find(WINDOW *w, const char *a, const char *b, const char *c);
/* A lines × cols window with view v drawn in it (the terminal resized to it). */
WINDOW *view_screen_draw(enum view_id v, int lines, int cols, const struct ui_model *m,
			 struct view_state *vs);
/* Every line on stderr, for a failing test's log. */
void view_screen_dump(WINDOW *w);

#endif
