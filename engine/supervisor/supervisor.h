#ifndef AIRLOCK_SUPERVISOR_H
#define AIRLOCK_SUPERVISOR_H

/*
 * The supervisor runs many sessions, one worker thread each, and is the
 * console's only way into the engine (docs/architecture.md §3–§4):
 *
 *   out  snapshots (snapshot.h: rows read live where it matters — lease,
 *        gate, call in flight — and per-session detail on demand), typed
 *        events, host checks, with one wake descriptor;
 *   in   requests that return at once: start a session, force-stop one,
 *        revoke or restore one tool on many, forget ended sessions,
 *        re-run the host checks; and shutdown.
 *
 * Nothing that crosses this interface has a payload field.
 *
 * Threads: any thread may call any function here except supervisor_close,
 * which must be the last call. None of the request calls waits for a
 * worker, a container or an upstream.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "audit.h"
#include "config.h"
#include "err.h"
#include "gate.h"
#include "otlp.h"
#include "reaper.h"
#include "snapshot.h"

/*
 * Sessions one engine holds at once (live, and ended until forgotten).
 * SUPERVISOR_SESSIONS_MAX is the ceiling the engine's tables are sized by;
 * the bound in force is the options' sessions_max, by default sized to the
 * host's memory: SUPERVISOR_SESSION_BUDGET_KB a session, at least
 * SUPERVISOR_SESSIONS_MIN. Measured with 238 containers under runc
 * (docs/performance.md): the runtime shim 2.8 MiB private, dockerd and
 * containerd 0.7 MiB more each, the engine and watchdog 0.34 MiB; the
 * rest of the budget is the agent's own pages.
 */
#define SUPERVISOR_SESSIONS_MAX	1024
#define SUPERVISOR_SESSIONS_MIN	16
#define SUPERVISOR_SESSION_BUDGET_KB	(32 * 1024)
#define SUPERVISOR_EVENTS_MAX	1024	/* state and ack events queued for the console */
#define SUPERVISOR_ALERTS_MAX	512	/* alerts, queued apart: a burst of state
					   events never pushes one out */
#define SUPERVISOR_CUTOVERS_MAX	64	/* recent cutovers remembered for their acks */
#define SUPERVISOR_STANDING_MAX	SNAP_STANDING_MAX
/*
 * Container create + start is serialised inside the daemon (about 0.2 s
 * each here); a hundred at once would push calls past their timeout.
 */
#define SUPERVISOR_LAUNCH_PARALLEL 4
/*
 * Containers stopped and removed at once. Hundreds at once (a shutdown, a
 * stop-all) overwhelm a 2-core daemon: containerd's shims disconnect and
 * the daemon leaves containers it can no longer remove ("Removal In
 * Progress" until it restarts; docs/performance.md).
 */
#define SUPERVISOR_CLEANUP_PARALLEL 8
/*
 * Warm pools one engine keeps at once, one per profile key (engine/sandbox/pool.h);
 * a session whose config asks for one more starts cold.
 */
#define SUPERVISOR_POOLS_MAX	SNAP_POOLS_MAX

struct supervisor;

struct supervisor_options {
	const char *docker_host;	/* DOCKER_HOST, or NULL */
	const char *watchdog_exe;	/* the airlock binary (NULL: this one) */
	struct audit *audit;		/* required, shared by all sessions */
	struct otlp *otlp;		/* optional */
	bool reap_at_start;		/* remove orphans before the first session */
	size_t sessions_max;		/* 0: supervisor_sessions_default(); clamped to
					   1 .. SUPERVISOR_SESSIONS_MAX */
	const char *upstreams_dir;	/* installed upstreams (upstream_catalog.h);
					   NULL: UPSTREAM_CATALOG_DIR; must outlive it */
};

/* The host's memory over SUPERVISOR_SESSION_BUDGET_KB, clamped as above. */
size_t supervisor_sessions_default(void);
/* The bound an open supervisor enforces. */
size_t supervisor_sessions_max(const struct supervisor *s);
/* Where its configs' installed upstreams are (the options'; NULL: the default). */
const char *supervisor_upstreams_dir(const struct supervisor *s);

int supervisor_open(const struct supervisor_options *o, struct supervisor **out,
		    struct reap_report *reaped, struct al_err *err);

/*
 * Start a session (its worker launches it). cfg must stay valid until the
 * session is forgotten or the supervisor closed. When all slots are taken,
 * the oldest ended session is forgotten to make room.
 */
int supervisor_start(struct supervisor *s, const struct airlock_config *cfg,
		     char session_id[SNAP_ID_MAX], struct al_err *err);
/*
 * The same from a config file, which the supervisor loads (with the
 * engine's rights: its own operator's files, or a trusted peer's) and owns.
 */
int supervisor_start_file(struct supervisor *s, const char *path,
			  char session_id[SNAP_ID_MAX], struct al_err *err);

/*
 * Force-stop: flags the session and, once its container exists, stops it
 * at once over a Docker connection of its own — also while the worker is
 * inside a Docker step or an upstream call. A session stopped before its
 * launch never creates a container. -1 when no such live session.
 */
int supervisor_stop_session(struct supervisor *s, const char *session_id);
/*
 * The session an operator's typed id names (ids.h, id_pick): the whole id,
 * or a prefix of one held session's id, with or without "s-", into id.
 * -1 with err the fixed words when none or several match.
 */
int supervisor_session_id(struct supervisor *s, const char *typed, char id[SNAP_ID_MAX],
			  struct al_err *err);
/* Force-stop every live session, as above; returns how many were asked to stop. */
size_t supervisor_stop_all(struct supervisor *s);

/*
 * Revoke or restore one catalog tool on the sessions named in ids (NULL:
 * every session not ended), as a delta. The engine assigns the next policy
 * revision (*revision) and posts the delta to each gate; this returns at
 * once. A revoke on every session also stands for the sessions started
 * after it: each starts with the tool revoked, at the engine's revision
 * then (a policy entry "revoke at start" for it), until a restore on every
 * session lifts it. A revoke on named sessions stays theirs. At most
 * SUPERVISOR_STANDING_MAX tools stand revoked: one more is refused, before
 * any revision is assigned. Each session acknowledges with an SUPERVISOR_EVENT_CUTOVER_ACK: at once when
 * idle, after its in-flight call when busy; a session without the tool
 * acknowledges not_applicable and its gate stays as it was. Audit entries
 * are written by the supervisor's own thread. *targets gets the count.
 */
/*
 * A cutover (revoke, restore, hold, grant) may name a catalog tool or an
 * alias, acted on as the catalog tool it maps to. One naming neither in
 * any config the engine holds (a held session's, ended or not), and no
 * tool that stands revoked, is refused with E_TOOL before any revision;
 * one naming an alias that two configs map to different tools with
 * E_ALIAS; one naming a session that supervisor_session_id does not find
 * with its words. Every client gets the same refusal: ctl and attached
 * consoles through the control op, the console in this process through
 * its link.
 */
#define SUPERVISOR_E_TOOL	"no config this engine holds has a tool '%s'"
/* The same with no session held (after a restart): an alias has no config to map it. */
#define SUPERVISOR_E_TOOL_NONE	"no config this engine holds has a tool '%s' (it holds " \
				"none yet: name a standing tool by its catalog name)"
#define SUPERVISOR_E_ALIAS	"'%s' is an alias of %s in one config this engine holds " \
				"and of %s in another: name the catalog tool"
/*
 * Held calls (ctl hold, issue 43 item 1): a hold is a cutover like a
 * revoke (op CUTOVER_HOLD; a restore lifts it, a revoke revokes it; on
 * every session it stands for sessions started later). A held call
 * waits (supervisor_hold.c) until an operator decides, its config's
 * bounds.hold_timeout passes (denied hold_timeout), its gate no longer
 * holds the tool (decided by the gate again) or the engine or its session
 * stops (denied). The calls waiting now, oldest first: how many.
 */
size_t supervisor_holds(struct supervisor *s, struct hold_view *out, size_t cap);
/*
 * Decide the waiting call id: approve (rest: and the later calls of its
 * tool in its session, without a wait) or deny. 0; -1 with err when no
 * call id is waiting (never given, decided, timed out).
 */
int supervisor_hold_decide(struct supervisor *s, int64_t id, bool approve, bool rest,
			   const struct snap_author *by, struct al_err *err);
int supervisor_cutover(struct supervisor *s, enum cutover_op op, const char *tool,
		       const char *const *ids, size_t n_ids, int64_t *revision,
		       size_t *targets, struct al_err *err);
/*
 * The same, and the policy entries, events and the standing set name by as
 * its author (NULL: this process's user, via "engine"). op must be revoke,
 * restore or hold.
 */
/*
 * A class flow hold (op CUTOVER_HOLD) or its lift (CUTOVER_RESTORE):
 * flow is "CLASS>SINK", two class names some held config (or the default
 * list) has; a cutover like a tool's, its acks naming the flow as their
 * tool. On every session (ids NULL) it stands for later sessions too, at
 * most SNAP_FLOWS_MAX (one more is refused). A session whose config has
 * no declassify_by_hold acks a hold of a flow its ceiling denies as not
 * applicable: nothing changes there.
 */
#define SUPERVISOR_E_FLOW	"no such class flow (CLASS>SINK, two configured classes)"
/*
 * What a cutover by an operator did: the revision it was assigned, the
 * sessions it was posted to, and what it acted on (the catalog tool an
 * alias names, resolved once, under the lock the cutover took; a flow as
 * given). Each _by function and supervisor_grant fill it when not NULL.
 */
struct cutover_done {
	int64_t revision;
	size_t targets;
	char tool[SNAP_NAME_MAX];
};

int supervisor_flow_cutover_by(struct supervisor *s, enum cutover_op op, const char *flow,
			       const char *const *ids, size_t n_ids,
			       const struct snap_author *by, struct cutover_done *done,
			       struct al_err *err);
int supervisor_cutover_by(struct supervisor *s, enum cutover_op op, const char *tool,
			  const char *const *ids, size_t n_ids, const struct snap_author *by,
			  struct cutover_done *done, struct al_err *err);

/*
 * A time-boxed grant (issue 43, item 2): a restore of tool on ids (NULL:
 * every session, and those started while it runs) that lapses by itself
 * after for_s seconds (0: no deadline; GRANT_FOR_MIN_S .. GRANT_FOR_MAX_S)
 * or after calls allowed calls of the tool (0: no budget; at most
 * GRANT_CALLS_MAX), whichever comes first. The budget is one count for
 * every session the grant covers, taken when the gate admits a call; a
 * call past it is denied `revoked` even before the lapse applies. The
 * lapse is a revoke on the same sessions (every session: it stands again
 * for later ones), assigned its own revision by the keeper thread and
 * authored {"by": "expiry", "via": "grant"}, after a policy entry
 * "grant lapsed: calls spent" or "grant lapsed: time up"; each session
 * acknowledges it like any cutover. Any later revoke or restore of the
 * tool, or another grant of it, replaces the grant. Grants live in
 * memory, as the gates' state does: an engine that stops forgets them
 * (docs/operations.md, "Time-boxed grants").
 */
int supervisor_grant(struct supervisor *s, const char *tool, const char *const *ids, size_t n_ids,
		     const struct snap_author *by, int64_t for_s, int64_t calls,
		     struct cutover_done *done, struct al_err *err);

/*
 * The kill switch. A freeze denies every call of every live session with
 * the rule `frozen` (audited; no upstream is contacted; containers keep
 * running for inspection), in the gate's order: calls queued behind it are
 * denied, the call in flight finishes first. Sessions started while frozen
 * start frozen ("freeze at start"). A thaw lifts it. Each is a revision of
 * its own, acknowledged per session like a cutover, with policy entries
 * naming by (NULL: this process's user). A freeze of a frozen engine, or a
 * thaw of one that is not, is refused (-1) before any revision.
 */
int supervisor_freeze(struct supervisor *s, bool frozen, const struct snap_author *by,
		      int64_t *revision, size_t *targets, struct al_err *err);

/*
 * Quarantine (issue 43, item 3; docs/operations.md, "Quarantine"): on
 * holds each session ids names (whole ids; NULL: every live session)
 * — its gate denies every call `quarantined` from its next call on (the
 * call at the upstream finishes), its container is paused (runc and
 * runsc alike) and kept past its session deadline, the lease still held —
 * and off releases it (unpaused; the gate as the revisions left it).
 * Returns at once; the pause and unpause run on a thread of their own,
 * and the row's quarantine.pause says how they went ("pause failed" is
 * also a policy entry; the gate holds regardless). Each session that
 * changed is a policy entry "quarantine" or "release" naming by (NULL:
 * this process's user) and its id is put in done (up to cap); ended
 * sessions and those already so are left as they are. Returns how many
 * changed.
 */
size_t supervisor_quarantine(struct supervisor *s, bool on, const char *const *ids, size_t n_ids,
			     const struct snap_author *by, char (*done)[SNAP_ID_MAX], size_t cap);
/*
 * The live sessions whose gateway decided a call of tool within the last
 * within_ms (quarantine.h), into out (up to cap): how many. tool is a
 * catalog tool, or an alias: in each session, the tool its config maps
 * the alias to.
 */
size_t supervisor_called_within(struct supervisor *s, const char *tool, int64_t within_ms,
				char (*out)[SNAP_ID_MAX], size_t cap);
/*
 * Does a config the engine holds have tool, a catalog tool or an alias of
 * one (as a cutover may name it)? 0, or -1 with SUPERVISOR_E_TOOL (or
 * _ALIAS, an alias two configs map to different tools) in err: a
 * quarantine by a tool no config has is refused, not "no session changed".
 */
int supervisor_tool_check(struct supervisor *s, const char *tool, struct al_err *err);

/*
 * Did the audit log refuse the latest entry of what stands on every
 * session (revoked, held, flows, the freeze)? Then a restart would not
 * keep it; the engine writes it again every 2 s until the log takes it.
 */
bool supervisor_standing_unsaved(struct supervisor *s);

/* The author of what this process asks for itself: its uid and user name. */
void supervisor_author_self(struct snap_author *out, const char *via);

/*
 * A policy entry for what a front end decided on its own (a peer refused
 * at accept, a session stopped or started on request): session_id, or
 * "engine" when NULL; tool may be NULL; rule is fixed text and names. The
 * supervisor's writer thread appends it; a full queue is counted as a
 * refused write, never dropped silently.
 */
void supervisor_record(struct supervisor *s, const struct snap_author *by,
		       const char *session_id, const char *tool, enum cutover_result result,
		       const char *rule);

/*
 * A whole update ({"revision": N, "allowed": [names]}) to the named
 * sessions, waiting for every acknowledgement (each gate waits for its
 * in-flight call). For scripts and tests of the gate's invalid-update
 * rules; the console uses supervisor_cutover. Returns the count of acks.
 */
struct cutover_ack {
	char session_id[SNAP_ID_MAX];
	struct gate_ack ack;
};
size_t supervisor_update_json(struct supervisor *s, const json_t *update,
			      const char *const *ids, size_t n_ids,
			      struct cutover_ack *acks, size_t cap);

/*
 * Refresh snap (zeroed before the first call; rows are reused). Rows whose
 * generation did not change are not copied again, but their live parts
 * (lease, uptime, gate, call in flight) are always read now. Returns 1 when
 * the list or a row changed, 0 when only live parts were refreshed, -1 when
 * out of memory (snap is then empty).
 */
int supervisor_snapshot(struct supervisor *s, struct supervisor_snapshot *snap);
void supervisor_snapshot_free(struct supervisor_snapshot *snap);

/* One session in depth (both admission reports, timeline). -1: unknown id. */
int supervisor_detail(struct supervisor *s, const char *session_id,
		      struct session_detail *out);
/* Its row alone, as a snapshot would show it now. -1: unknown id. */
int supervisor_row(struct supervisor *s, const char *session_id, struct session_row *out);

/*
 * The wake descriptor becomes readable when the snapshot generation
 * changed or events are queued. supervisor_events drains it, copies up to
 * cap events oldest first (alerts and other events merged by sequence),
 * and makes it readable again while events remain.
 */
int supervisor_wake_fd(const struct supervisor *s);
size_t supervisor_events(struct supervisor *s, struct supervisor_event *out, size_t cap);

/* Release an ended session's slot (its row, detail and gate go). -1: not ended. */
int supervisor_forget(struct supervisor *s, const char *session_id);

/*
 * Host checks (airlock doctor) on a thread of their own, for runtime;
 * supervisor_host copies the latest result. A refresh while one runs is a
 * no-op.
 */
int supervisor_host_refresh(struct supervisor *s, const char *runtime);
void supervisor_host(struct supervisor *s, struct host_snapshot *out);

/*
 * The policy story of the engine's own audit log (audit_timeline.h), for
 * the console's timeline view: the events of the entries after seq
 * *after, at most cap (1 .. SUPERVISOR_TIMELINE_MAX), as rows; *after
 * moves to the last entry read, *more says a page was cut at cap. The log
 * is read on a read-only connection of its own, from the cursor on: what
 * was written since, never the whole log again. 0, or -1 with fixed text.
 */
#define SUPERVISOR_TIMELINE_MAX	256
int supervisor_timeline(struct supervisor *s, int64_t *after, struct timeline_row *out,
			size_t cap, size_t *n, bool *more, struct al_err *err);

/* Sessions not yet ended. */
size_t supervisor_live(struct supervisor *s);
/* Times the audit log refused an entry so far (the snapshot's audit_failures). */
uint64_t supervisor_audit_failures(struct supervisor *s);

/*
 * Stop every session, wait for the workers, and re-list: returns the number
 * of containers owned by this process that are still there (0 is success).
 */
int supervisor_shutdown(struct supervisor *s);
void supervisor_close(struct supervisor *s);

#endif
