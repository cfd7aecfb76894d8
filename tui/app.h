#ifndef AIRLOCK_APP_H
#define AIRLOCK_APP_H

/*
 * The operator console, owned by the UI thread (docs/console.md). The
 * engine runs on the supervisor's threads, or in `airlock serve`; the
 * console reaches either only through link.h and sees only snapshot.h
 * types.
 *
 * The console's rooms, each with its own state:
 *	console.c	the loop: set-up, wait, draw, shut down
 *	model.c		snapshots, history, audit tail, selection, what is offered
 *	dispatch.c	keys to requests to handlers
 *	actions.c	what changes sessions, and the y/N question before it
 *	verbs.c		the ':' commands
 *	prompt.c	the ':' and '/' line editor
 *	status.c	the status line's messages
 *	display.c	the terminal
 * Handlers return the bit-flags below to the one loop in console.c (as
 * htop's do) instead of redrawing by themselves; nothing calls back into
 * console.c.
 *
 * Includes run one way: the state types (model.h, status.h, prompt.h,
 * screen.h, confirm.h, keymap.h, link.h) below this header; the pieces
 * that act on a struct app (actions, verbs, display, dispatch) above it;
 * console.c, the loop, on top.
 */

#include <stdbool.h>
#include <stddef.h>

#include "confirm.h"
#include "keymap.h"
#include "link.h"
#include "model.h"
#include "prompt.h"
#include "screen.h"
#include "status.h"

struct demo;
struct notifier;

#define APP_PATH_MAX	4096	/* the audit log's path, kept for the quit message */
#define APP_DRAW_MS	250	/* engine updates: at most four frames a second */
#define APP_KEY_DRAW_MS	50	/* the answer to a key: at once, at most 20 a second */

/* What a handler asks the loop to do next. */
enum {
	APP_HANDLED = 1 << 0,
	APP_REDRAW = 1 << 1,	/* draw at the next frame */
	APP_RELAYOUT = 1 << 2,	/* the terminal changed size */
	APP_QUIT = 1 << 3,	/* leave: stop every session first */
	APP_KEYED = 1 << 4,	/* the operator pressed a key: answer at once */
};

struct app {
	/*
	 * The engines, as the one interface link.h: the console's own (local,
	 * on worker threads), or those it attached to (attached: quitting
	 * detaches and stops nothing).
	 */
	struct link *links[MODEL_LINKS_MAX];
	size_t n_links;
	bool attached;
	struct link *local;		/* links[0], the console's own (link_local.h); NULL when attached */
	struct demo *demo;
	struct notifier *notifier;
	char runtime[16];		/* for the host checks */
	struct snap_author author;	/* who the console's requests are from */
	char audit_path[APP_PATH_MAX];	/* the log, when it outlives the console; else "" */
	struct keymap keys;

	struct model model;		/* what there is, and where the operator stands */
	struct screen screen;		/* the terminal and its overlays */
	struct status status;		/* what the status line says */
	struct prompt prompt;		/* the ':' and '/' line */
	struct confirm confirm;		/* the y/N question and what a yes does */
	struct fanout fanout;		/* the answers of the latest request, gathered */
};

#endif
