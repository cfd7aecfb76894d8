#ifndef AIRLOCK_VIEW_INFO_H
#define AIRLOCK_VIEW_INFO_H

/*
 * The console's views, declared once. Each line names a view:
 *
 *	_(x, ENUM, name, "Title", "help of its view-NAME request")
 *
 * and everything else that names a view is made from it: enum view_id and
 * the registry (view.h, views.c), the keymap section NAME (keymap.h), the
 * request view-NAME with its help line (request.h), and the console's
 * handling of that request. A new view costs one line here, its file in
 * views/ (and meson.build), and its key in keymaps/default.keys.
 *
 * x is passed through to each row, so a table can adapt the row to the
 * macro it was given (see VIEW_INFO in view.h, REQ_INFO in request.h).
 * No includes: the keymaps take it without curses or the engine.
 */
#define VIEW_TABLE(_, x) \
	_(x, SESSIONS, sessions, "Sessions", "Show the sessions") \
	_(x, DETAIL,   detail,   "Session",  "Show the selected session in depth") \
	_(x, TOOLS,    tools,    "Tools",    "Show the tools across sessions") \
	_(x, AUDIT,    audit,    "Audit",    "Show the audit log tail") \
	_(x, HOST,     host,     "Host",     "Show the host and daemon checks") \
	_(x, TIMELINE, timeline, "Timeline", "Show the policy story: changes, authors, acks") \
	_(x, PENDING,  pending,  "Pending",  "Show the calls held for an operator's approve or deny")

#endif
