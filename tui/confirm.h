#ifndef AIRLOCK_CONFIRM_H
#define AIRLOCK_CONFIRM_H

/*
 * The state of what the operator asked: the y/N question before an action
 * and the answers of a request sent to several engines. Types only, so the
 * console's state (app.h) can hold them; actions.c is what acts on them.
 */

#include <stdbool.h>
#include <stddef.h>

#include "incident.h"
#include "link.h"
#include "snapshot.h"
#include "status.h"

#define FANOUT_MAX 8		/* MODEL_LINKS_MAX */

/*
 * The answers of a request sent to several engines, gathered on one status
 * line in the engines' order, "waiting" until each comes.
 */
struct fanout {
	int req;			/* enum link_request */
	size_t n_sent, answered;
	bool sent[FANOUT_MAX], done[FANOUT_MAX];
	bool failed;
	char part[FANOUT_MAX][STATUS_TEXT_MAX / 2];
};

/* What a yes to the question does. */
enum confirm_action {
	CONFIRM_NONE,
	CONFIRM_STOP,		/* force-stop .session */
	CONFIRM_QUARANTINE,	/* .op freeze: quarantine .session; thaw: release it */
	CONFIRM_CUTOVER,	/* .op on .tool for every session */
	CONFIRM_APPLY,		/* the incident policy in .policy */
	CONFIRM_THAW,
	CONFIRM_STOP_ALL,
	CONFIRM_DECIDE,		/* approve (.rest: for the session) or deny held call .hold */
	CONFIRM_QUIT,
};

struct confirm {
	enum confirm_action action;
	char question[STATUS_TEXT_MAX];
	char session[SNAP_ID_MAX];
	char tool[SNAP_NAME_MAX];
	enum cutover_op op;
	struct link_grant grant;	/* CUTOVER: a restore's grant (zeros: none) */
	struct incident policy;
	int64_t hold;			/* DECIDE: the held call, on engine .engine */
	unsigned engine;
	bool approve, rest;
};

#endif
