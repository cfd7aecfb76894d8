#ifndef AIRLOCK_SCREEN_H
#define AIRLOCK_SCREEN_H

/*
 * The terminal's state: its windows, size and overlay. A type only, so the
 * console's state (app.h) can hold it; display.c is what acts on it.
 */

#include <stdbool.h>

#include <curses.h>

enum overlay {
	OVERLAY_NONE,
	OVERLAY_HELP,
	OVERLAY_PROMPT,		/* ':' command line */
	OVERLAY_FILTER,		/* '/' filter line, applied as typed */
	OVERLAY_CONFIRM,	/* y/N question */
};

struct screen {
	WINDOW *header, *body, *keybar, *status;
	int lines, cols;
	long page;		/* rows a page key moves */
	bool mouse, color, ascii;
	enum overlay overlay;
	int help_top;		/* the help overlay's first line */
};

#endif
