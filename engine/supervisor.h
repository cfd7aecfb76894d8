#ifndef AIRLOCK_SUPERVISOR_H
#define AIRLOCK_SUPERVISOR_H

/*
 * The supervisor runs many sessions, one worker thread each, and is the
 * console's only way into the engine (DESIGN.md §11–§12):
 *
 *   out  snapshots (a generation-counted copy of every session's status,
 *        gate and counters) and an event queue, with a wake descriptor
 *        that becomes readable when either changed;
 *   in   requests: start a session, force-stop one, apply a policy
 *        cutover to many, shut everything down.
 *
 * Nothing that crosses this interface has a payload field.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "audit.h"
#include "config.h"
#include "gate.h"
#include "otlp.h"
#include "reaper.h"
#include "session.h"

#define SUPERVISOR_SESSIONS_MAX	256
#define SUPERVISOR_EVENTS_MAX	1024
/*
 * Container create + start is serialised inside the daemon (about 0.2 s
 * each here); a hundred at once would push calls past their timeout.
 */
#define SUPERVISOR_LAUNCH_PARALLEL 4

struct supervisor;

struct supervisor_options {
	const char *docker_host;	/* DOCKER_HOST, or NULL */
	const char *watchdog_exe;	/* the airlock binary (NULL: this one) */
	struct audit *audit;		/* required, shared by all sessions */
	struct otlp *otlp;		/* optional */
	bool reap_at_start;		/* remove orphans before the first session */
};

/* One session as the console sees it. */
struct session_snapshot {
	struct session_status st;
	struct session_summary summary;	/* valid when st.state == STATE_ENDED */
	size_t n_tools;
	char tools[GATE_TOOLS_MAX][64];	/* catalog names */
	bool approved[GATE_TOOLS_MAX];
	bool allowed[GATE_TOOLS_MAX];
	int64_t revision;
	bool gate_open;
	char class_name[32];
};

struct supervisor_snapshot {
	uint64_t generation;
	size_t n;
	struct session_snapshot *sessions;	/* malloc'd; supervisor_snapshot_free */
};

enum supervisor_event_kind {
	EVENT_STATE,		/* a session changed state */
	EVENT_ALERT,		/* watchdog fired, admission refused, abnormal end, cutover */
};

struct supervisor_event {
	enum supervisor_event_kind kind;
	char session_id[40];
	char text[128];		/* fixed words plus names and numbers */
	int64_t mono_ms;
};

struct cutover_ack {
	char session_id[40];
	struct gate_ack ack;
};

int supervisor_open(const struct supervisor_options *o, struct supervisor **out,
		    struct reap_report *reaped, struct al_err *err);

/* cfg must stay valid until supervisor_close. */
int supervisor_start(struct supervisor *s, const struct airlock_config *cfg,
		     char session_id[40], struct al_err *err);
/* Ask one session to stop (its worker stops and removes the container). */
int supervisor_stop_session(struct supervisor *s, const char *session_id);

/*
 * Apply one update ({"revision": N, "allowed": [names]}) to every running
 * session named in ids (NULL: all that are not ended), concurrently; each
 * acknowledgement comes back in acks (at most cap). Returns the count.
 */
size_t supervisor_cutover(struct supervisor *s, const json_t *update,
			  const char *const *ids, size_t n_ids,
			  struct cutover_ack *acks, size_t cap);

int supervisor_snapshot(struct supervisor *s, struct supervisor_snapshot *out);
void supervisor_snapshot_free(struct supervisor_snapshot *snap);

/* Readable when a snapshot or an event is new; drain with supervisor_events. */
int supervisor_wake_fd(const struct supervisor *s);
size_t supervisor_events(struct supervisor *s, struct supervisor_event *out, size_t cap);

/* Sessions not yet ended. */
size_t supervisor_live(struct supervisor *s);

/*
 * Stop every session, wait for the workers, and re-list: returns the number
 * of containers owned by this process that are still there (0 is success).
 */
int supervisor_shutdown(struct supervisor *s);
void supervisor_close(struct supervisor *s);

#endif
