#ifndef AIRLOCK_APP_H
#define AIRLOCK_APP_H

/*
 * The operator console's state, owned by the UI thread (DESIGN.md §11–§12).
 * The engine runs on the supervisor's threads; the console reaches it only
 * through supervisor.h and sees only snapshot.h types. Handlers return
 * bit-flags to one loop (as htop's do) instead of redrawing by themselves.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curses.h>

#include "incident.h"
#include "keymap.h"
#include "snapshot.h"
#include "view.h"

struct supervisor;
struct audit;
struct audit_tail;
struct demo;
struct notifier;

#define APP_HISTORY_MAX	512	/* events the console keeps for its views */
#define APP_AUDIT_MAX	400	/* audit tail rows kept */
#define APP_ALERTS_MAX	32	/* alerts waiting to be dismissed */
#define APP_TEXT_MAX	192
#define APP_PATH_MAX	4096	/* the audit log's path, kept for the quit message */
#define APP_INPUT_MAX	256
#define APP_COMMANDS_MAX	32	/* ':' commands Up and Down recall */
#define APP_DRAW_MS	250	/* engine updates: at most four frames a second */
#define APP_KEY_DRAW_MS	50	/* the answer to a key: at once, at most 20 a second */
#define APP_FLASH_MS	5000	/* informational messages expire; alerts stick */
#define APP_STALE_MS	1500	/* a snapshot this old is marked stale */

/* What a handler asks the loop to do next. */
enum {
	APP_HANDLED = 1 << 0,
	APP_REDRAW = 1 << 1,	/* draw at the next frame */
	APP_RELAYOUT = 1 << 2,	/* the terminal changed size */
	APP_QUIT = 1 << 3,	/* leave: stop every session first */
	APP_KEYED = 1 << 4,	/* the operator pressed a key: answer at once */
};

enum overlay {
	OVERLAY_NONE,
	OVERLAY_HELP,
	OVERLAY_PROMPT,		/* ':' command line */
	OVERLAY_FILTER,		/* '/' filter line, applied as typed */
	OVERLAY_CONFIRM,	/* y/N question */
};

/* What a yes to the confirm question does. */
enum confirm_action {
	CONFIRM_NONE,
	CONFIRM_STOP,		/* force-stop arg_session */
	CONFIRM_CUTOVER,	/* op on arg_tool for the chosen sessions */
	CONFIRM_APPLY,		/* the incident policy in arg_file */
	CONFIRM_QUIT,
};

struct app {
	struct supervisor *sup;
	struct audit *audit;
	struct audit_tail *tail;
	struct demo *demo;
	struct notifier *notifier;
	struct keymap keys;
	char runtime[16];	/* for the host checks */
	bool read_only, mouse, color, ascii;

	/* The model views draw from. */
	struct supervisor_snapshot snap;
	bool snap_ok;
	int64_t snap_ms;		/* wall clock of the latest good snapshot */
	struct session_detail *detail;	/* of the session views act on, or NULL */
	bool have_detail;
	struct host_snapshot host;
	struct supervisor_event history[APP_HISTORY_MAX];	/* a ring */
	size_t hist_head, hist_n;
	struct supervisor_event *hist_flat;	/* oldest first, for views */
	struct audit_row audit_rows[APP_AUDIT_MAX];
	size_t n_audit;
	int64_t audit_seq;
	char tail_error[APP_TEXT_MAX];	/* why the tail cannot be read; "" while it can */
	char audit_path[APP_PATH_MAX];	/* the log, when it outlives the console; else "" */
	char marks[UI_MARKS_MAX][SNAP_ID_MAX];
	size_t n_marks;

	/* Views. */
	enum view_id view;
	struct view_state vs[VIEW_COUNT];

	/* Screen. */
	WINDOW *header, *body, *keybar, *status;
	int lines, cols;

	/* Overlays and the status line. */
	enum overlay overlay;
	char input[APP_INPUT_MAX];
	size_t input_len;
	/* ':' commands entered, oldest first; this run only, never written down. */
	char commands[APP_COMMANDS_MAX][APP_INPUT_MAX];
	size_t n_commands;
	size_t command_at;		/* the entry Up/Down show; n_commands: the draft */
	char draft[APP_INPUT_MAX];	/* the line being typed, kept while browsing */
	int help_top;
	char question[APP_TEXT_MAX];
	enum confirm_action action;
	char arg_session[SNAP_ID_MAX];
	char arg_tool[SNAP_NAME_MAX];
	enum cutover_op arg_op;
	bool arg_all;
	struct incident arg_policy;
	char alerts[APP_ALERTS_MAX][APP_TEXT_MAX];	/* oldest first */
	size_t n_alerts;
	char flash[APP_TEXT_MAX];
	bool flash_error;
	int64_t flash_until;

	bool quitting;
};

/* display.c: the terminal and what the console draws around the views. */
int display_open(struct app *a);
void display_close(struct app *a);
void display_layout(struct app *a);
void display_draw(struct app *a, const struct ui_model *m);
void display_quitting(struct app *a, size_t live);
/* After the shutdown: what was stopped and what is left (shown for a moment). */
void display_stopped(struct app *a, size_t live, int left);

/* dispatch.c: keys to requests to actions; ':' commands. */
int dispatch_key(struct app *a, int key);
int dispatch_command(struct app *a, const char *line);
/* The session and tool the current view acts on (either may be empty). */
void dispatch_target(struct app *a, char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX]);

/* console.c: the model, messages and events. */
void app_model(struct app *a, struct ui_model *m);
void app_flash(struct app *a, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void app_alert(struct app *a, const char *text);
void app_dismiss(struct app *a);
bool app_marked(const struct app *a, const char *id);

#endif
