#ifndef AIRLOCK_REQUEST_H
#define AIRLOCK_REQUEST_H

/*
 * Every request a key can be bound to: one table gives the enum, the name
 * used in keymap files and the help text, grouped as the help screen shows
 * them. A destructive request changes a session or the policy; read-only
 * mode refuses those in the dispatcher and greys them in help.
 */

#include <stdbool.h>

#include "view_info.h"

/* view-NAME for each view in view_info.h: REQ_VIEW_<ENUM>, in its order. */
#define REQ_VIEW_ROW(_, e, name, title, help) _(VIEW_##e, "view-" #name, false, help)

#define REQ_INFO(_, GROUP) \
	GROUP("Navigation") \
	_(MOVE_UP,        "move-up",        false, "Move the selection up") \
	_(MOVE_DOWN,      "move-down",      false, "Move the selection down") \
	_(PAGE_UP,        "page-up",        false, "Move one page up") \
	_(PAGE_DOWN,      "page-down",      false, "Move one page down") \
	_(MOVE_FIRST,     "move-first",     false, "Move to the first row") \
	_(MOVE_LAST,      "move-last",      false, "Move to the last row") \
	_(ENTER,          "enter",          false, "Open the selected session") \
	_(BACK,           "back",           false, "Close the overlay or go back") \
	GROUP("Views") \
	VIEW_TABLE(REQ_VIEW_ROW, _) \
	_(VIEW_NEXT,      "view-next",      false, "Cycle to the next view") \
	_(HELP,           "help",           false, "Show this help") \
	GROUP("Lists") \
	_(SORT_NEXT,      "sort-next",      false, "Sort by the next column") \
	_(SORT_REVERSE,   "sort-reverse",   false, "Reverse the sort order") \
	_(FILTER,         "filter",         false, "Filter the rows (Esc clears)") \
	_(MARK,           "mark",           false, "Mark or unmark the selected session") \
	_(MARK_CLEAR,     "mark-clear",     false, "Clear every mark") \
	_(HOST_REFRESH,   "host-refresh",   false, "Run the host checks again") \
	_(JUMP_PREV,      "jump-prev",      false, "Jump to the previous operator's change") \
	_(JUMP_NEXT,      "jump-next",      false, "Jump to the next operator's change") \
	GROUP("Incident") \
	_(REVOKE,         "revoke",         true,  "Revoke the selected tool (marked sessions, else the selected one)") \
	_(RESTORE,        "restore",        true,  "Restore the selected tool (marked sessions, else the selected one)") \
	_(REVOKE_ALL,     "revoke-all",     true,  "Revoke the selected tool on every session") \
	_(RESTORE_ALL,    "restore-all",    true,  "Restore the selected tool on every session") \
	_(FORCE_STOP,     "force-stop",     true,  "Stop the selected session now (asks first)") \
	_(QUARANTINE,     "quarantine",     true,  "Quarantine the selected session, or release it (asks first)") \
	_(FREEZE,         "freeze",         true,  "Freeze every session: each call denied, at once") \
	_(THAW,           "thaw",           true,  "Lift the freeze (asks first)") \
	_(STOP_ALL,       "stop-all",       true,  "Stop every session now (asks first)") \
	_(APPROVE,        "approve",        true,  "Let the selected held call through (asks first)") \
	_(APPROVE_REST,   "approve-rest",   true,  "Approve it and its tool's later calls in its session (asks first)") \
	_(DENY,           "deny",           true,  "Deny the selected held call (asks first)") \
	GROUP("Console") \
	_(PROMPT,         "prompt",         false, "Open the command prompt") \
	_(DISMISS,        "dismiss",        false, "Dismiss the alert on the status line") \
	_(DISMISS_ALL,    "dismiss-all",    false, "Dismiss every alert waiting on the status line") \
	_(MOUSE,          "toggle-mouse",   false, "Turn the mouse on or off") \
	_(REDRAW,         "redraw",         false, "Redraw the screen") \
	_(QUIT,           "quit",           false, "Quit (asks first while sessions run)")

enum request {
	REQ_NONE,
#define REQ_ENUM(e, name, destructive, help) REQ_##e,
#define REQ_GROUP_NONE(g)
	REQ_INFO(REQ_ENUM, REQ_GROUP_NONE)
#undef REQ_GROUP_NONE
#undef REQ_ENUM
	REQ_COUNT
};

/* The keymap name of req ("move-up"), or NULL for REQ_NONE. */
const char *request_name(enum request req);
/* One line for the help screen, or NULL for REQ_NONE. */
const char *request_help(enum request req);
/* Changes a session or the policy: read-only mode refuses it. */
bool request_destructive(enum request req);
/* The request called name, or REQ_NONE (also for "none"). */
enum request request_by_name(const char *name);
/*
 * The help group title req belongs to ("Navigation"), or NULL for REQ_NONE.
 * Groups are contiguous in enum order, so the help screen walks
 * REQ_NONE + 1 .. REQ_COUNT - 1 and starts a heading whenever this changes.
 */
const char *request_group(enum request req);

#endif
