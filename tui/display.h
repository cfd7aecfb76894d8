#ifndef AIRLOCK_DISPLAY_H
#define AIRLOCK_DISPLAY_H

/*
 * The terminal: its windows and what the console draws around the views
 * (header, key bar, status line, prompt, help). Everything the console
 * draws, and the mouse, go through here; elsewhere curses is only read
 * from (console.c's wgetch) and its KEY_* codes named. Only the UI thread
 * calls it.
 */

#include <stdbool.h>
#include <stddef.h>

#include "screen.h"

struct app;
struct ui_model;

int display_open(struct screen *s);
void display_close(struct screen *s);
void display_layout(struct screen *s);
void display_draw(struct app *a, const struct ui_model *m);
/* Mouse reports on (the wheel scrolls) or off. */
void display_mouse(struct screen *s, bool on);
/* The rows a mouse report scrolls by: -3, 3, or 0 for anything else. */
long display_wheel(void);
/* How far the help scrolls: its last row at the body's bottom (0 when it fits). */
int display_help_top_max(const struct screen *s);
void display_quitting(struct screen *s, size_t live);
/* After the shutdown: what was stopped and what is left (shown for a moment). */
void display_stopped(struct screen *s, size_t live, int left);

#endif
