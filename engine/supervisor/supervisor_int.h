#ifndef AIRLOCK_SUPERVISOR_INT_H
#define AIRLOCK_SUPERVISOR_INT_H

/*
 * The supervisor's private state, shared by its own files and included
 * only by engine/supervisor*.c: nothing outside the supervisor may see a
 * slot or the supervisor's fields. Two locks: policy (revisions, and
 * adding or removing a slot) is always taken before lock, never while
 * lock is held.
 */

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admission.h"
#include "config.h"
#include "docker.h"
#include "gate.h"
#include "gateway.h"
#include "grant.h"
#include "hold.h"
#include "pool.h"
#include "quarantine.h"
#include "session.h"
#include "snapshot.h"
#include "supervisor.h"
#include "thread.h"
#include "watchdog.h"

/*
 * Cutover audit entries waiting for the writer: room for four cutovers on
 * the most sessions there can be (each is one entry and one per session's
 * acknowledgement).
 */
#define POLICY_QUEUE_MAX	(4 * (SUPERVISOR_SESSIONS_MAX + 1))

_Static_assert(ADMISSION_CHECK_COUNT <= SNAP_CHECKS_MAX, "admission report fits a snapshot");
_Static_assert(GATE_TOOLS_MAX <= SNAP_TOOLS_MAX, "gate tools fit a snapshot");
_Static_assert(DOCKER_ID_MAX <= SNAP_CONTAINER_MAX, "container ids fit a snapshot");
_Static_assert(CONFIG_UPSTREAMS_MAX <= SNAP_UPSTREAMS_MAX, "a config's upstreams fit a detail");

/* One session's place in the supervisor. */
struct slot {
	struct supervisor *sup;
	pthread_t thread;
	bool thread_started, joined;
	const struct airlock_config *cfg;
	struct airlock_config *owned_cfg;	/* started from a file */
	struct gate *gate;
	const char *names[GATE_TOOLS_MAX];
	atomic_bool stop;
	char id[SNAP_ID_MAX];
	int64_t started_mono_ms;
	/* Under sup->lock: */
	struct session_row row;
	/* NULL until reported; each sized to its checks (sup_report_*), not to SNAP_CHECKS_MAX */
	struct admission_report *first, *second;
	size_t n_upstreams;		/* as the worker last published them */
	struct upstream_view upstreams[SNAP_UPSTREAMS_MAX];
	struct supervisor_event timeline[SNAP_TIMELINE_MAX];
	size_t tl_head, tl_n;
	struct lease *lease;		/* live between the session's two lease hooks */
	struct lease_view last_lease;	/* what the lease said when it closed */
	int64_t ended_mono_ms;
	bool ended;
	/* The warm pool (supervisor_pool.c): set before the worker starts. */
	bool pooled;			/* claim from the pool keyed pool_key */
	char pool_key[POOL_KEY_LEN + 1];
	char pool_label[SNAP_ID_MAX];	/* under lock: the claimed container's label */
	/* Quarantine (supervisor_quarantine.c), under sup->lock. */
	struct quarantine_view quar;	/* its pause word is filled for rows only */
	enum quarantine_pause quar_pause;
	bool freezer_busy;		/* a freezer thread pauses or unpauses it */
	/* Under sup->grant_lock: the grant each tool is under here (its serial; 0: none). */
	uint64_t grant[GATE_TOOLS_MAX];
	struct gateway_hold hold;	/* its gateway's held calls wait here (supervisor_hold.c) */
};

/* One pooled container's place (under the supervisor's pool_lock). */
struct pool_member {
	struct sup_pool *pool;
	enum pool_state state;
	struct warm *w;			/* READY: the container; else NULL */
	pthread_t thread;		/* WARMING: its launcher */
	bool thread_live, done;		/* done: the launcher has returned its result */
	struct warm *got;		/* the launcher's result (NULL: failed) */
	char label[SNAP_ID_MAX];
	char container[SNAP_CONTAINER_MAX];
	int64_t ready_ms;
	bool exited;			/* the daemon reported it not running */
};

/* The containers kept warm for one profile key. */
struct sup_pool {
	struct supervisor *sup;
	char key[POOL_KEY_LEN + 1];
	struct profile profile;		/* a copy: the sessions' configs come and go */
	unsigned size;
	int64_t max_age_ms;
	struct pool_member m[POOL_SIZE_MAX];
	uint64_t claimed, discarded, failed;
};

/* A cutover the supervisor assigned a revision to. */
struct cutover {
	int64_t revision;
	char tool[SNAP_NAME_MAX];	/* "" for a freeze or thaw */
	enum cutover_op op;
	struct snap_author by;
};

/* What a restore grants: seconds and/or calls (0: none; both 0: no grant). */
struct grant_terms {
	int64_t for_s, calls;
};

/* A policy entry for the audit writer. */
struct policy_entry {
	char session[SNAP_ID_MAX];
	char tool[SNAP_NAME_MAX];
	enum cutover_result result;
	char rule[SNAP_WORD_MAX];
	int64_t revision;
	struct snap_author by;
	bool has_wait;			/* a hold's decision: how long the call waited */
	int64_t wait_ms;
	char flow[SNAP_NAME_MAX];	/* a class flow hold's decision: "class>sink" */
	char request_hash[SNAP_HASH_MAX];	/* and its call's request hash */
	bool declassified;		/* an approval past the sink ceiling */
};

/* An event ring; the oldest entry is dropped (and counted) when full. */
struct ring {
	struct supervisor_event *ev;
	size_t cap, head, n;
	uint64_t dropped;
};

struct supervisor {
	struct supervisor_options o;
	pthread_mutex_t lock;
	struct slot *slots[SUPERVISOR_SESSIONS_MAX];	/* in start order */
	size_t n_slots;
	uint64_t generation, started_total, forgotten_total;
	struct supervisor_event ev_store[SUPERVISOR_EVENTS_MAX];
	struct supervisor_event alert_store[SUPERVISOR_ALERTS_MAX];
	struct ring events, alerts;
	uint64_t seq;
	int wake;			/* eventfd */
	sem_t launch_slots;		/* containers created and started at once */
	sem_t cleanup_slots;		/* containers stopped and removed at once */
	/* Policy: revisions are assigned and posted under this lock. */
	pthread_mutex_t policy;
	int64_t revision;
	struct cutover cutovers[SUPERVISOR_CUTOVERS_MAX];
	size_t n_cutovers;		/* a ring: the latest at (n_cutovers - 1) % MAX */
	/*
	 * Tools revoked on every session and not restored on every session
	 * since. Changed under policy and lock; read under either.
	 */
	char standing[SUPERVISOR_STANDING_MAX][SNAP_NAME_MAX];
	struct snap_author standing_by[SUPERVISOR_STANDING_MAX];
	int64_t standing_revision[SUPERVISOR_STANDING_MAX];
	size_t n_standing;
	/* Tools held on every session, for those started later too (the same locks). */
	char standing_hold[SUPERVISOR_STANDING_MAX][SNAP_NAME_MAX];
	size_t n_standing_hold;
	/* Class flows held on every session, "class>sink" (the same locks). */
	char standing_flow[SNAP_FLOWS_MAX][SNAP_NAME_MAX];
	size_t n_standing_flow;
	/* The kill switch, under policy and lock like the standing set. */
	bool frozen;
	struct snap_author frozen_by;
	int64_t frozen_revision;
	/*
	 * Set under lock (cleared and read without: atomic):
	 * the log refused the latest standing entry; the keeper writes the
	 * sets again from standing_retry_ms on, until one is taken.
	 */
	atomic_bool standing_unsaved;
	int64_t standing_retry_ms;
	/*
	 * Under lock: sessions' end entries the log refused (a session's
	 * end_unsaved hook); the keeper writes them again from ends_retry_ms
	 * on, and close once more. Past SUPERVISOR_SESSIONS_MAX one is lost
	 * (it was counted as refused when it was).
	 */
	struct session_end_entry *unsaved_ends[SUPERVISOR_SESSIONS_MAX];
	size_t n_unsaved_ends;
	int64_t ends_retry_ms;
	struct snap_author self;	/* the author of a request that names none */
	/*
	 * Time-boxed grants (supervisor_grant.c): changed under policy and
	 * grant_lock, read under either. grant_lock is a leaf: no other lock
	 * is taken while it is held (a gate's meter takes it under the gate's
	 * lock, the keeper and the snapshot under lock).
	 */
	pthread_mutex_t grant_lock;
	struct grant_table grants;
	atomic_size_t grant_budgets;	/* grants.budgets: calls are metered only when > 0 */
	/*
	 * Held calls (supervisor_hold.c), under hold_lock: a leaf but for a
	 * gate's (a waiter peeks at its gate under it; no gate takes it).
	 */
	pthread_mutex_t hold_lock;
	pthread_cond_t hold_cond;	/* on the monotonic clock */
	bool hold_cond_made;
	bool hold_quit;			/* the engine stops: every held call denied */
	struct hold_board holds;
	/* The audit writer for policy entries (under lock). */
	pthread_t writer;
	bool writer_started, writer_quit;
	pthread_cond_t writer_cond;
	bool posting;			/* a cutover posts: acks wake no one (supervisor_policy.c) */
	struct policy_entry queue[POLICY_QUEUE_MAX];
	size_t q_head, q_n;
	uint64_t audit_failures;
	/* Host checks (under lock). */
	struct host_snapshot host;
	pthread_t host_thread;
	bool host_started;
	char host_runtime[16];
	char keeper_runtime[16];	/* the keeper's own: what its host run checks */
	/* Force-stop threads still running. */
	atomic_int stoppers;
	/*
	 * The keeper (under lock): sweeps this process's containers left by
	 * ended sessions until they are gone, lapses grants, writes again
	 * what stands when the log refused it, pauses again a quarantined
	 * container unpaused outside airlock, and re-runs the host checks
	 * when an end points at the daemon and while they fail, so that an
	 * outage and its end both show without a key (its jobs: supervisor_host.c).
	 */
	pthread_t keeper;
	bool keeper_started, keeper_quit;
	pthread_cond_t keeper_cond;	/* on the monotonic clock */
	bool keeper_cond_made;
	bool sweep_due;
	int64_t sweep_at_ms, sweep_delay_ms;
	size_t containers_left;
	bool host_kick;			/* an end pointed at the daemon */
	int64_t host_run_ms;		/* the latest host check started (monotonic) */
	int64_t quar_look_ms;		/* the latest look at the paused quarantined (monotonic) */
	/*
	 * The warm pools (supervisor_pool.c), under pool_lock, which is never
	 * held together with lock or policy.
	 */
	pthread_mutex_t pool_lock;
	pthread_cond_t pool_cond;	/* on the monotonic clock */
	bool pool_cond_made;
	pthread_t pool_thread;
	bool pool_started;
	atomic_bool pool_quit;
	struct sup_pool *pools[SUPERVISOR_POOLS_MAX];
	size_t n_pools;
};

/* supervisor.c: shared helpers. */
void sup_copy_word(char *dst, size_t cap, const char *src);
/*
 * A worker that waits on cond under s->lock: told to quit (*quit, cond
 * signalled) and joined; *started is then false. Nothing when not started.
 */
void sup_stop(struct supervisor *s, pthread_t t, bool *started, bool *quit,
	      pthread_cond_t *cond);

/* supervisor_events.c */
void sup_wake(struct supervisor *s);
/* These two under s->lock. */
void sup_push(struct supervisor *s, struct slot *sl, struct supervisor_event *e);
void sup_audit_refused(struct supervisor *s, struct slot *sl, uint64_t n);
void sup_rings_init(struct supervisor *s);

/* supervisor_hooks.c */
/* Under s->lock. */
void sup_state_events(struct supervisor *s, struct slot *sl, enum session_state state);
void sup_lease_view_fill(struct lease_view *v, const struct lease_status *ls,
			 int64_t now_mono_ms);
struct session_hooks sup_hooks(struct slot *sl);

/* supervisor_policy.c */
void *sup_writer_main(void *arg);
void sup_writer_stop(struct supervisor *s);
void sup_on_gate_ack(void *ctx, const struct gate_delta *d, const struct gate_ack *ack);
/* Under s->policy: an engine-wide policy entry about tool for the writer. */
void sup_policy_note(struct supervisor *s, const struct snap_author *by, const char *tool,
		     const char *rule, int64_t revision);
/*
 * Under s->policy: assign a revision to a revoke or restore of tool and
 * post it to ids (NULL: every session), as supervisor_cutover_by does;
 * terms (NULL: none) make a restore a grant. A lapse is never refused for
 * a full policy queue or standing set (fail closed: the revoke goes out).
 */
int sup_cutover_locked(struct supervisor *s, enum cutover_op op, const char *tool,
		       const char *const *ids, size_t n_ids, const struct snap_author *by,
		       const struct grant_terms *terms, bool lapse, int64_t *revision,
		       size_t *targets, struct al_err *err);
/* Under s->policy, before sl is listed. */
void sup_start_standing(struct supervisor *s, struct slot *sl);

/* supervisor_grant.c */
/* The meter a session's gate asks about allowed calls. */
struct gate_meter sup_grant_meter(struct slot *sl);
/*
 * Under s->policy, once op's revision is assigned and before its deltas
 * are posted: any cutover of tool ends its grant; a restore with terms
 * starts one (serial, and each of to[0..n) that has the tool under it).
 * A policy entry for a grant started. -1 when the grant table is full.
 */
int sup_grant_cutover(struct supervisor *s, enum cutover_op op, const char *tool, bool all,
		      const struct grant_terms *terms, struct slot *const *to, size_t n,
		      const struct snap_author *by);
/* Under s->policy: room for a grant of tool (one a tool, GRANT_MAX at once). */
bool sup_grant_room(struct supervisor *s, const char *tool);
/* Under s->policy, before sl is listed: the grants on every session cover it too. */
void sup_grant_start(struct supervisor *s, struct slot *sl);
/*
 * Under s->lock (the keeper): is a grant due now? Else *next_ms is lowered
 * to the earliest deadline ahead.
 */
bool sup_grant_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms);
/* Under nothing: lapse every due grant, each as a revoke by the expiry. */
void sup_grant_lapse(struct supervisor *s);
/* The author of a lapse: the engine's uid, named for what did it. */
void sup_grant_expiry_author(const struct supervisor *s, struct snap_author *a);
/*
 * Under s->policy: the tools granted on every session, whose lapse
 * revokes them on every one, each with its grant's revision. How many.
 */
size_t sup_grant_all(struct supervisor *s, char (*tool)[SNAP_NAME_MAX], int64_t *revision,
		     size_t max);
/*
 * The standing sets in the log (supervisor_standing.c). Under s->policy,
 * once a cutover on every session or a freeze has moved them and before
 * it is posted: an entry "standing: …" of the engine's with the sets
 * as they will stand after every grant has lapsed (a grant lifts nothing
 * for the next engine). Durable when this returns, or counted as a
 * refused write and marked unsaved: the keeper tries again.
 */
void sup_standing_save(struct supervisor *s, const struct snap_author *by);
/*
 * Under s->lock (the keeper): is the sets' writing again due (the last
 * save was refused, and its retry time came; the turn is taken)? Else
 * *next_ms is lowered to when it is. sup_standing_retry: under nothing.
 */
bool sup_standing_retry_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms);
void sup_standing_retry(struct supervisor *s);
/*
 * A session's end entry the log refused, kept (e is the supervisor's):
 * sup_ends_retry_due and sup_ends_retry as the standing sets' above;
 * sup_ends_close at close: one more try, then what is left is freed.
 */
void sup_end_unsaved(struct supervisor *s, struct session_end_entry *e);
bool sup_ends_retry_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms);
void sup_ends_retry(struct supervisor *s);
void sup_ends_close(struct supervisor *s);
/*
 * At open, before any session: the sets the last engine saved, and its
 * revision; an entry "standing restored" says so. An entry that cannot be
 * read starts the engine frozen (fail closed). -1 when the log cannot be read.
 */
int sup_standing_load(struct supervisor *s, struct al_err *err);
/* Under s->lock: what remains of the grants sl's tools are under, into its row. */
void sup_grant_row(struct supervisor *s, struct slot *sl, struct session_row *r, int64_t now_ms);

/* supervisor_hold.c */
int sup_hold_init(struct supervisor *s);
void sup_hold_free(struct supervisor *s);
/* The wait sl's gateway calls for a held call. */
struct gateway_hold sup_hold_hook(struct slot *sl);
/* Every held call denied by the engine's stop, now and from here on. */
void sup_hold_stop(struct supervisor *s);
/* A gate changed: its waiters look at it again. */
void sup_hold_kick(struct supervisor *s);
/* tool held again on to[0..n): its approvals for the rest of those sessions go. */
void sup_hold_unwaive(struct supervisor *s, const char *tool, struct slot *const *to, size_t n);
/*
 * Under nothing: the sessions with a call of tool (its catalog name or
 * the alias the agent used) waiting on a hold now, into ids: how many.
 */
size_t sup_hold_calling(struct supervisor *s, const char *tool, char (*ids)[SNAP_ID_MAX],
			size_t cap);
/* sl ended: its approvals for the rest of the session go. */
void sup_hold_forget(struct supervisor *s, const struct slot *sl);

/* supervisor_policy.c: a policy entry about a held call (under nothing; never s->policy). */
void sup_hold_note(struct supervisor *s, const struct slot *sl, const char *tool,
		   const char *rule, const struct snap_author *by, const int64_t *wait_ms);

/* The same for a class flow hold's decision: the flow, the call's hash, a declassification. */
void sup_hold_note_flow(struct supervisor *s, const struct slot *sl, const struct hold_view *v,
			const char *rule, const struct snap_author *by, int64_t wait_ms,
			bool declassified);
/*
 * Under s->policy: a cutover of what (a tool, or a class flow's text) is
 * about to be posted: the queue has room, the revision is assigned and
 * announced, to[0..*n) are the live sessions ids names (NULL: all, and
 * the standing sets, moved already, are saved); posting has begun:
 * sup_cutover_posted ends it. -1 when refused.
 */
int sup_cutover_open(struct supervisor *s, enum cutover_op op, const char *what,
		     const char *const *ids, size_t n_ids, const struct snap_author *by,
		     struct slot **to, size_t *n, struct al_err *err);
/* Posting ends; the cutover's revision and how many sessions it went to, when asked. */
void sup_cutover_posted(struct supervisor *s, size_t n, int64_t *revision, size_t *targets);

/* Queue a policy entry for the writer (under nothing, or s->policy). */
void sup_policy_record(struct supervisor *s, const struct policy_entry *p);

/* supervisor_flow.c: class flow holds */
/* Under s->policy, before sl is listed: the flows held on every session are held here. */
void sup_flow_start(struct supervisor *s, struct slot *sl);

/* supervisor_quarantine.c, both under s->lock */
/* sl's container runs now: a quarantine that waited for it pauses it. */
void sup_quarantine_running(struct supervisor *s, struct slot *sl);
void sup_quarantine_row(const struct slot *sl, struct session_row *r);
/*
 * Under s->lock (the keeper): is a look at the quarantined sessions'
 * paused containers due now? Else *next_ms is lowered to when it is.
 */
bool sup_quarantine_look_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms);
/*
 * Under nothing: ask the daemon about each quarantined session's paused
 * container; one found running unpaused (unpaused outside airlock) is
 * paused again, written down and announced.
 */
void sup_quarantine_look(struct supervisor *s);

/* supervisor_host.c */
void sup_keeper_note_end(struct supervisor *s, const struct session_summary *sum);
void sup_keeper_sweep(struct supervisor *s);
int sup_keeper_start(struct supervisor *s);
void sup_keeper_stop(struct supervisor *s);

/* supervisor_pool.c */
int sup_pool_init(struct supervisor *s);
/* Stop refilling, stop and remove every pooled container, free the pools. */
void sup_pool_stop(struct supervisor *s);
/* A session of cfg: its pool made or resized; sl claims from it. */
void sup_pool_use(struct supervisor *s, struct slot *sl, const struct airlock_config *cfg);
/* The pool's hooks for sl's session (claim is NULL when it has none). */
struct session_pool sup_pool_hooks(struct slot *sl);
/* Is label a pooled container's, warming, ready, or claimed by a live session? */
bool sup_pool_label_live(struct supervisor *s, const char *label);
void sup_pool_snapshot(struct supervisor *s, struct supervisor_snapshot *snap);

/* supervisor_session.c */
/* Under s->lock. */
struct slot *sup_find(struct supervisor *s, const char *id);
/* Under s->lock: as supervisor_session_id (supervisor.h), the slot itself. */
struct slot *sup_pick(struct supervisor *s, const char *typed, struct al_err *err);
int sup_pick_ids(struct supervisor *s, const char *const *ids, size_t n,
		 char (*to)[SNAP_ID_MAX], struct al_err *err);
/*
 * What a cutover may name (supervisor_names.c): tool, a catalog tool or an
 * alias of one, into named (SNAP_NAME_MAX) as the catalog tool; and ids
 * (NULL: none), each a held session's id or unique prefix, into to[] as
 * whole ids. 0, or -1 (err) in the words every client gets.
 */
int sup_cutover_names(struct supervisor *s, const char *tool, char *named,
		      const char *const *ids, size_t n_ids, char (*to)[SNAP_ID_MAX],
		      struct al_err *err);
void sup_slot_free(struct slot *sl);
void sup_slot_join(struct slot *sl);

#endif
