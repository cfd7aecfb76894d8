#ifndef AIRLOCK_HOLD_H
#define AIRLOCK_HOLD_H

/*
 * Held calls (issue 43, item 1), pure bookkeeping: the board of calls that
 * wait for an operator's approve or deny. The supervisor owns one board
 * under a lock of its own (supervisor_hold.c) and does the waiting, the
 * timeout and the audit; nothing here has a thread, a clock or a lock, so
 * a unit test drives it with plain numbers.
 *
 * A call is added waiting and named by an id that is never reused. A
 * decision (approve, deny, the timeout, the engine's stop) settles it once;
 * its waiter then takes it off the board. An approve for the rest of the
 * session also waives the hold of that tool in that session: its later
 * calls do not wait (hold_waived), until the session ends or the tool is
 * held again there.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

#define HOLD_MAX		SNAP_HOLDS_MAX	/* calls waiting at once, engine-wide */
#define HOLD_WAIVERS_MAX	1024		/* (session, tool) pairs approved for good */
#define HOLD_TIMEOUT_MIN_S	1
#define HOLD_TIMEOUT_MAX_S	3600
#define HOLD_TIMEOUT_DEFAULT_S	60

enum hold_outcome {
	HOLD_WAITING,
	HOLD_APPROVED,
	HOLD_DENIED,		/* by an operator */
	HOLD_TIMED_OUT,		/* by the expiry: no one decided within the timeout */
	HOLD_STOPPED,		/* by the engine: it or the session stopped */
	HOLD_LIFTED,		/* the gate changed under it (revoke, restore, freeze) */
};

struct hold_entry {
	struct hold_view v;
	int64_t start_ms;		/* monotonic: when it began waiting */
	enum hold_outcome outcome;
	bool rest;			/* approved for the rest of the session */
	struct snap_author by;		/* the decision's author */
	int64_t decided_ms;		/* monotonic */
};

struct hold_board {
	struct hold_entry e[HOLD_MAX];
	bool used[HOLD_MAX];
	int64_t serial;			/* the latest id given */
	struct {
		char session[SNAP_ID_MAX];	/* as struct hold_view's */
		char tool[SNAP_NAME_MAX];
	} waiver[HOLD_WAIVERS_MAX];
	size_t n_waivers;
};

/* A call begins waiting at now_ms (v's id and waited_ms are set here): its id, or 0 when full. */
int64_t hold_add(struct hold_board *b, const struct hold_view *v, int64_t now_ms);
/* The entry id names, waiting or settled; NULL when there is none (taken, never given). */
const struct hold_entry *hold_find(const struct hold_board *b, int64_t id);
/*
 * Settle a waiting call: outcome is not HOLD_WAITING; rest only with
 * HOLD_APPROVED (then the waiver too, -1 when the waivers are full and
 * nothing is settled). 0; -1 when id names no waiting call.
 */
int hold_decide(struct hold_board *b, int64_t id, enum hold_outcome outcome, bool rest,
		const struct snap_author *by, int64_t now_ms);
/* Off the board, into *out (may be NULL): 0, or -1 when there is none. */
int hold_take(struct hold_board *b, int64_t id, struct hold_entry *out);
/*
 * Settle as timed out every call that has waited timeout_ms by now_ms:
 * how many. *next_ms is lowered to the earliest timeout still ahead.
 */
size_t hold_expire(struct hold_board *b, int64_t now_ms, int64_t timeout_ms, int64_t *next_ms);
/* Settle every waiting call of session (NULL: all) as outcome, by by: how many. */
size_t hold_settle_all(struct hold_board *b, const char *session, enum hold_outcome outcome,
		       const struct snap_author *by, int64_t now_ms);
/* The waiting calls, oldest id first, with waited_ms at now_ms: how many (at most cap). */
size_t hold_list(const struct hold_board *b, int64_t now_ms, struct hold_view *out, size_t cap);
/* Is the hold of tool waived in session (approved for the rest of it)? */
bool hold_waived(const struct hold_board *b, const char *session, const char *tool);
/* The session's waivers gone (it ended). */
void hold_forget(struct hold_board *b, const char *session);
/* The waiver of tool in session gone: a new hold of the tool is decided call by call again. */
void hold_unwaive(struct hold_board *b, const char *session, const char *tool);
/* "approved", "denied", "timed out", "engine stop", "lifted", "waiting". */
const char *hold_outcome_text(enum hold_outcome o);

#endif
