#ifndef AIRLOCK_ACTIONS_H
#define AIRLOCK_ACTIONS_H

/*
 * What the operator does to sessions, whether from a key (dispatch.c) or a
 * ':' command (verbs.c): post a cutover, stop a session, quit, and the y/N
 * question that goes first when an action reaches every session or cannot
 * be undone. Each asks the engines through link.h, which answer at once
 * (the console's own) or later (attached). Each returns the APP_* flags
 * for the loop.
 */

#include <stdbool.h>

#include "confirm.h"
#include "incident.h"
#include "link.h"
#include "snapshot.h"

struct app;
struct link_result;

/*
 * Post one cutover now: on every session, the marked ones, or session; a
 * restore with grant terms (NULL: none) is a time-boxed grant.
 */
int action_cutover(struct app *a, enum cutover_op op, const char *tool, bool all,
		   const char *session, const struct link_grant *grant);

/* Start a session from path (a file the engine reads) on engine k. */
int action_start(struct app *a, const char *path, unsigned engine);

/* Forget every ended session, on each its own engine. */
int action_forget_ended(struct app *a);

/* An engine's answer, now or later: on the status line. */
int action_result(struct app *a, const struct link_result *r);

/* Ask before op on tool (with grant, or NULL) reaches every session; the question is fmt. */
int action_ask_all(struct app *a, enum cutover_op op, const char *tool,
		   const struct link_grant *grant, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Ask before force-stopping session. */
int action_ask_stop(struct app *a, const char *session);
/* Ask before quarantining session (on) or releasing it. */
int action_ask_quarantine(struct app *a, const char *session, bool on);

/* Ask before posting policy's cutovers, kept until the answer. */
int action_ask_apply(struct app *a, const struct incident *policy, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The kill switch: freeze at once (it stops and loses nothing); ask before a thaw. */
int action_freeze(struct app *a);
int action_ask_thaw(struct app *a);
/* Ask before force-stopping every live session. */
int action_ask_stop_all(struct app *a);

/*
 * Ask before approving (rest: with its tool's later calls in its session)
 * or denying the held call t names (t->hold, on engine t->hold_engine).
 */
struct target;
int action_ask_decide(struct app *a, bool approve, bool rest, const struct target *t);

/* Quit: at once with no session live, else after asking. */
int action_quit(struct app *a);

/* The answer to the question: y or Y carries it out, any other key cancels. */
int action_answer(struct app *a, int key);

#endif
