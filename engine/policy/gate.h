#ifndef AIRLOCK_GATE_H
#define AIRLOCK_GATE_H

/*
 * The live policy gate of one session (docs/guarantees.md, "What supervision guarantees"): the operator revokes
 * and restores tools while the session runs, without restarting anything.
 *
 * approved  the tools the session may ever use, frozen at start
 * allowed   the subset allowed now
 * revision  an integer, 0 at start; each valid update carries a larger one
 * open      false after an invalid or stale update: every call is denied
 *           until a valid newer revision arrives
 * frozen    the kill switch: every call is denied (`frozen`) until a thaw
 * held      the subset of allowed whose calls wait for an operator (hold.h):
 *           the gate answers RULE_HOLD_DENIED for them without entering
 *           the in-flight state, so a revoke or freeze posted while a call
 *           waits applies at once; an approved call re-enters with
 *           gate_begin_waived (revoked, frozen and closed still deny)
 * flows     class flow holds (issue 43, item 1): (session class, sink
 *           ceiling) pairs, by rank, whose calls wait for an operator like
 *           a held tool's. A flow the sink ceiling would deny (class above
 *           sink) is held only when the session's config opted in to
 *           declassification by hold (gate_set_declassify); else such a
 *           hold is not applicable and changes nothing. At most
 *           GATE_FLOWS_MAX; one more is rejected and closes admission.
 * quarantined  one session held for an operator: every call is denied
 *           (`quarantined`) until a release; set at once, outside the
 *           revisions (gate_set_quarantined)
 *
 * Dispatch and updates share one lock. A call holds the gate from its
 * decision until its upstream answered (gate_begin … gate_end). An update
 * waits for that in-flight call, then applies; a call that arrives while
 * an update waits is queued behind the update and sees the new set. Only
 * then is the update acknowledged. The gate is never reachable from agent
 * frames: only the engine API and the console call gate_update.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy.h"

#define GATE_TOOLS_MAX 64
#define GATE_DELTAS_MAX 64	/* cutover deltas queued behind one call */
#define GATE_FLOWS_MAX	16	/* class flows held at once in one session */

/*
 * One cutover delta: revoke or restore one tool at a revision the caller
 * assigned. Posted without waiting (gate_post); it applies at once when no
 * call is in flight, else when that call ends, in the order posted.
 */
enum gate_delta_kind {
	GATE_DELTA_TOOL,	/* revoke or restore one tool */
	GATE_DELTA_FREEZE,	/* deny every call from here on */
	GATE_DELTA_THAW,	/* lift a freeze */
	GATE_DELTA_FLOW,	/* hold (hold true) or lift one class flow */
};

struct gate_delta {
	int64_t revision;
	enum gate_delta_kind kind;
	int tool;		/* index, or -1: this session has no such tool */
	bool allow;		/* restore or hold (true), or revoke */
	bool hold;		/* with allow: the tool's calls wait for an operator;
				   GATE_DELTA_FLOW: held (true) or lifted */
	int cls, sink;		/* GATE_DELTA_FLOW: ranks, -1 when this session has
				   no such class */
	int64_t posted_us;	/* monotonic */
};

struct gate_ack;
/* Called once per posted delta when it applied, outside the gate's lock. */
typedef void (*gate_ack_fn)(void *ctx, const struct gate_delta *d, const struct gate_ack *ack);

struct gate;	/* opaque: read it through gate_state and gate_read */

enum gate_verdict {
	GATE_APPLIED,
	GATE_REJECTED,		/* invalid or stale: admission is now closed */
	GATE_NOT_APPLICABLE,	/* a delta for a tool the session never had: only
				   the revision moved, the gate is as it was */
};

struct gate_ack {
	enum gate_verdict verdict;
	int64_t revision;	/* the gate's revision after the update */
	bool open;
	char reason[48];	/* fixed text: "applied", "stale revision", "unknown tool", … */
	int64_t waited_us;	/* time spent waiting for the in-flight call */
};

/*
 * A gate for n tools, approved[i] for each (all of them allowed at
 * revision 0). NULL when n exceeds GATE_TOOLS_MAX, approved is missing, or
 * memory or a lock cannot be had.
 */
struct gate *gate_new(const bool *approved, size_t n);
/* No call may be in flight and no thread waiting on it. */
void gate_free(struct gate *g);

/*
 * Admit one call to tool: waits while a call is in flight or an update is
 * pending, then decides under the lock. Returns RULE_ALLOWED (the caller
 * must call gate_end when the call is over), RULE_QUARANTINED, RULE_FROZEN,
 * RULE_GATE_CLOSED, RULE_REVOKED or RULE_HOLD_DENIED: the tool is held (no
 * gate_end needed for any of these; the gate is not busy). *revision gets
 * the deciding revision. A held call is never metered: its grant's budget,
 * if any, is spent when it re-enters.
 */
enum policy_rule gate_begin(struct gate *g, int tool, int64_t *revision);
/* The same for a call an operator approved: a hold no longer stops it. */
enum policy_rule gate_begin_waived(struct gate *g, int tool, int64_t *revision);
/*
 * What gate_begin would answer now, without waiting, entering or
 * metering: a held call's waiter reads it to see a revoke or a freeze.
 */
enum policy_rule gate_peek(struct gate *g, int tool);
void gate_end(struct gate *g);

/*
 * The flow of one call: the session's class (the higher of entry and
 * now, as policy_check_sink reads it) and the tool's sink ceiling, ranks.
 */
struct gate_flow {
	int cls;
	int sink;
};
#define GATE_HELD_TOOL	1u	/* the call's tool is held */
#define GATE_HELD_FLOW	2u	/* the call's class flow is held */
/*
 * gate_begin (waive false) or gate_begin_waived (true) for a call with
 * flow f (NULL: none): a held flow answers RULE_HOLD_DENIED like a held
 * tool. *held (may be NULL) gets what holds it (GATE_HELD_*), also when
 * waived: an approved call learns whether its flow is held still.
 */
enum policy_rule gate_begin_flow(struct gate *g, int tool, const struct gate_flow *f,
				 bool waive, int64_t *revision, unsigned *held);
/* gate_peek for a call with flow f; *held (may be NULL) as above. */
enum policy_rule gate_peek_flow(struct gate *g, int tool, const struct gate_flow *f,
				unsigned *held);

/*
 * Apply an update: revision must be strictly greater than the current one
 * and allowed ⊆ approved. Waits for the in-flight call first.
 */
void gate_update(struct gate *g, int64_t revision, const bool *allowed, size_t n,
		 struct gate_ack *ack);

/*
 * The same from JSON {"revision": <integer>, "allowed": ["tool", …]},
 * naming tools by catalog name (names[i] is tool i). A malformed update
 * (revision not an integer, allowed not an array of known names) is
 * rejected and closes admission like any invalid one.
 */
void gate_update_json(struct gate *g, const json_t *update, const char *const *names,
		      size_t n, struct gate_ack *ack);

/*
 * A meter for allowed calls (time-boxed grants, grant.h): spend is asked,
 * under the gate's lock, about every call the gate would allow; it
 * answers GATE_METER_FREE or _TAKEN (allow), _LAST (allow: it was the
 * last of a budget) or _NONE (deny: RULE_REVOKED, the budget is spent and
 * its lapse not yet applied). spend must take no lock but a leaf one.
 * After a _LAST, spent is called once the gate's lock is released, on
 * the calling thread. Set once, before the first gate_begin.
 */
enum gate_meter_answer {
	GATE_METER_FREE,
	GATE_METER_TAKEN,
	GATE_METER_LAST,
	GATE_METER_NONE,
};
struct gate_meter {
	enum gate_meter_answer (*spend)(void *ctx, int tool);
	void (*spent)(void *ctx, int tool);
	void *ctx;
};
void gate_set_meter(struct gate *g, const struct gate_meter *m);

/* A consistent copy for snapshots. */
void gate_read(struct gate *g, int64_t *revision, bool *open, bool *allowed, size_t n);

/* Where deltas are acknowledged (set once, before any gate_post). */
void gate_set_ack(struct gate *g, gate_ack_fn fn, void *ctx);

/*
 * Post one delta and return at once. The ack comes through the ack
 * function: from this thread when no call is in flight, else from the
 * worker's gate_end. A stale revision closes admission like any invalid
 * update; a full queue rejects the delta and closes admission too (fail
 * closed: the operator sees the rejection and posts a newer revision).
 */
void gate_post(struct gate *g, int64_t revision, int tool, bool allow);
/* A hold of tool: allowed, its calls waiting for an operator; ordered and acked alike. */
void gate_post_hold(struct gate *g, int64_t revision, int tool);
/*
 * Hold (hold true) or lift the class flow cls > sink (ranks, -1: this
 * session has no such class: not applicable); ordered and acked alike.
 */
void gate_post_flow(struct gate *g, int64_t revision, int cls, int sink, bool hold);
/* The same for a freeze (frozen true) or a thaw: ordered, acked, stale-checked alike. */
void gate_post_freeze(struct gate *g, int64_t revision, bool frozen);
/*
 * Freeze a gate no call has reached yet (a session started while its
 * engine is frozen) at the engine's revision (kept when the gate's own is
 * newer), with no acknowledgement.
 */
void gate_set_frozen(struct gate *g, bool frozen, int64_t revision);
/*
 * Hold an allowed tool of a gate no call has reached yet (a standing
 * hold) at the engine's revision (kept when the gate's own is newer), with
 * no acknowledgement.
 */
void gate_set_held(struct gate *g, int tool, int64_t revision);
/*
 * The same for a standing class flow hold: false when it does not apply
 * (no such class, a denied flow without the opt-in) or the set is full
 * (then admission is closed: fail closed).
 */
bool gate_set_flow_held(struct gate *g, int cls, int sink, int64_t revision);
/* The session's config opted in to declassification by hold (set once, at start). */
void gate_set_declassify(struct gate *g, bool on);

/*
 * Quarantine (issue 43, item 3): not a revision, not queued behind
 * deltas. It takes effect as soon as the lock is had: a call already at
 * the upstream finishes, the next one is denied RULE_QUARANTINED, also
 * one that was waiting behind it. Only the engine calls this; nothing an
 * agent sends reaches it.
 */
void gate_set_quarantined(struct gate *g, bool on);
bool gate_quarantined(struct gate *g);

/* What the console shows of the gate, read live. */
struct gate_state {
	int64_t revision;
	bool open;
	bool frozen;
	bool quarantined;
	bool allowed[GATE_TOOLS_MAX];
	bool held[GATE_TOOLS_MAX];	/* allowed, and its calls wait for an operator */
	struct gate_flow flows[GATE_FLOWS_MAX];	/* class flows held */
	size_t n_flows;
	bool declassify;		/* its config opted in (gate_set_declassify) */
	unsigned pending;		/* deltas and updates not yet applied */
	int64_t pending_revision;	/* the newest queued delta's */
	int64_t pending_since_us;	/* the oldest queued delta's post time */
	bool busy;
	int busy_tool;
	int64_t busy_revision;
	int64_t busy_since_us;
	size_t n_tools;
	bool approved[GATE_TOOLS_MAX];	/* frozen at start */
	unsigned updates_waiting;	/* gate_update calls waiting for the call */
	size_t deltas_queued;		/* posted deltas not yet applied */
	uint64_t updates_applied, updates_rejected;
};
void gate_state(struct gate *g, struct gate_state *out);

#endif
