#ifndef AIRLOCK_SESSION_H
#define AIRLOCK_SESSION_H

/*
 * One confined session, end to end (docs/architecture.md §2): preflight, the initial
 * payload (withheld fields removed), create + first admission, attach +
 * start, second admission, the initial frame, the bridge loop, and a
 * cleanup that always stops and removes the container. Every way a session
 * ends has a fixed reason code; none carries a byte the agent sent.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <semaphore.h>
#include <stdatomic.h>

#include <jansson.h>

#include "audit.h"
#include "config.h"
#include "admission.h"
#include "docker.h"
#include "gateway.h"
#include "watchdog.h"
#include "otlp.h"
#include "snapshot.h"

/*
 * The summary's message for an abnormal end: the fixed text the agent was
 * given (invalid agent request, agent exchange failed), or, for an end
 * before any exchange began, SESSION_NOT_STARTED. NULL for a normal end.
 */
#define SESSION_NOT_STARTED "session did not start: no data entered a container"
const char *session_end_message(enum session_end e);

struct session_summary;
struct lease;
struct warm;

/*
 * Where a session may claim a pooled container (docs/guarantees.md,
 * "Pooled sessions"). claim returns a ready one (or NULL: none, start
 * cold); the session takes its parts and runs the second admission on it.
 * One it refuses goes back through discard (stopped and removed), and the
 * session claims again, or starts cold.
 */
struct session_pool {
	void *ctx;
	struct warm *(*claim)(void *ctx);
	void (*discard)(void *ctx, struct warm *w);
};

/*
 * What a session publishes about itself, often (each call, each state, and
 * every half second): names, numbers and verdicts, no payload field. The
 * session fills it and hands a pointer to publish(); the receiver copies it.
 * What changes rarely (the admission reports, the lease) has its own hook.
 */
struct session_status {
	enum session_state state;
	char session_id[SNAP_ID_MAX];
	char container_id[DOCKER_ID_MAX];
	char image[SNAP_IMAGE_MAX];
	uint64_t stdout_bytes, stderr_bytes;
	struct gateway_counters counters;
	int session_class;
	size_t n_upstreams;		/* its upstreams' confinement, once the gateway is open */
	struct upstream_view upstreams[SNAP_UPSTREAMS_MAX];
	const struct session_summary *summary;	/* set once ENDED */
};

/*
 * A session's end entry the log refused (a full disk, say), kept to be
 * written again (session_end_write) once the log takes entries: else the
 * next engine on the log takes the session for lost (engine_lost) and
 * the reason it ended is gone. Written then, its time is the write's;
 * its detail says how long the session ran.
 */
struct session_end_entry {
	char session_id[SNAP_ID_MAX];
	enum audit_decision decision;
	const char *rule;		/* session_end_id's: static */
	char class_before[SNAP_CLASS_MAX], class_after[SNAP_CLASS_MAX];
	int64_t revision;
	char *detail;			/* the summary's JSON text; NULL: none */
};

/* 0 once the log holds it, -1 while it refuses it. */
int session_end_write(const struct session_end_entry *e, struct audit *a, struct otlp *otlp);
void session_end_entry_free(struct session_end_entry *e);

struct session_hooks {
	void *ctx;
	void (*publish)(void *ctx, const struct session_status *st);
	/* After each inspection: phase 1 (first) or 2 (second). */
	void (*report)(void *ctx, int phase, const struct check_list *l);
	/*
	 * The lease once armed, and NULL just before it is closed: a receiver
	 * may read it (lease_get_status) between the two, from any thread.
	 */
	void (*lease)(void *ctx, struct lease *l);
	/* The lease failed (from the pulse thread): reason is a fixed word. */
	void (*lease_failed)(void *ctx, const char *reason);
	/*
	 * The log refused the end entry: e is the receiver's to write again
	 * and free. NULL: it is freed, the end lost (counted in the summary).
	 */
	void (*end_unsaved)(void *ctx, struct session_end_entry *e);
};

struct gateway_hold;

struct session_options {
	const struct airlock_config *config;	/* frozen for the session */
	const char *docker_host;		/* DOCKER_HOST, or NULL */
	struct audit *audit;			/* required */
	struct otlp *otlp;			/* optional */
	struct gate *gate;			/* the live policy gate, or NULL */
	const char *watchdog_exe;		/* airlock binary for the lease (NULL: this one) */
	atomic_bool *stop;			/* operator force-stop (signal-safe), or NULL */
	struct session_hooks hooks;		/* each may be NULL */
	const char *session_id;			/* NULL: generated */
	sem_t *launch_slots;			/* bounds concurrent launches, or NULL */
	sem_t *cleanup_slots;			/* bounds concurrent cleanups, or NULL */
	struct session_pool pool;		/* claim is NULL: always cold */
	const struct gateway_hold *hold;	/* held calls' wait (gateway.h), or NULL */
};

struct session_summary {
	char session_id[SNAP_ID_MAX];
	enum session_end end;
	long exit_code;			/* -1 when the container never ran, or its exit is unknown */
	bool container_started;		/* the daemon started it */
	bool oom_killed;
	int64_t duration_ms;
	uint64_t stdout_bytes, stderr_bytes, upstream_stderr_bytes;
	struct gateway_counters counters;
	char admission_first[16];	/* admitted, refused, not_run */
	char admission_second[16];
	char refused_check[CHECK_ID_MAX];	/* the first refusing check id, if any */
	char failed_step[16];		/* container_failed: connect, create, attach, start, inspect */
	char reason[SNAP_REASON_MAX];	/* why, for the operator: fixed text, names, the
					   daemon's message; never agent or upstream bytes */
	char session_class[SNAP_CLASS_MAX];
	/*
	 * Its container could not be removed (the daemon did not answer, or
	 * refused): the watchdog still tries to stop it, and a supervisor
	 * sweeps it once the daemon answers again.
	 */
	bool container_left;
	/*
	 * Times the log refused one of this session's entries, its calls'
	 * (counters.audit_failures) included; a refused batch of later
	 * entries counts once. Each ended the session, but for a refusal of
	 * its last entries. Not 0: its log is incomplete.
	 */
	unsigned audit_failures;
	/* It ran in a pooled container (claimed, second admission passed). */
	bool pooled;
};

/* Run one session to its end. Returns 0 when it ended normally. */
int session_run(const struct session_options *o, struct session_summary *out);

/* The payload-free summary `airlock run` prints. */
json_t *session_summary_json(const struct session_summary *s);

/*
 * The initial frame: the payload object with withheld fields (top-level
 * names or dotted paths) removed, compact, plus a newline; at most max
 * bytes. Pure; returns NULL on any refusal (fixed reasons only).
 */
char *session_initial_frame(const json_t *payload, const struct strv *withhold,
			    size_t max, size_t *len);

#endif
