#ifndef AIRLOCK_SESSION_H
#define AIRLOCK_SESSION_H

/*
 * One confined session, end to end (DESIGN.md §3): preflight, the initial
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

/* Every way a session ends: the code, and whether that is a normal end. */
#define SESSION_ENDS(_) \
	_(AGENT_EXIT,           "agent_exit",           true)  \
	_(AGENT_FAILED,         "agent_failed",         false) \
	_(INVALID_REQUEST,      "invalid_request",      false) \
	_(FRAME_TOO_LARGE,      "frame_too_large",      false) \
	_(STDOUT_BUDGET,        "stdout_budget",        false) \
	_(STDERR_BUDGET,        "stderr_budget",        false) \
	_(CALL_BUDGET,          "call_budget",          false) \
	_(SESSION_TIMEOUT,      "session_timeout",      false) \
	_(UPSTREAM_FAULT,       "upstream_fault",       false) \
	_(UPSTREAM_TIMEOUT,     "upstream_timeout",     false) \
	_(UPSTREAM_UNAVAILABLE, "upstream_unavailable", false) \
	_(AUDIT_FAILED,         "audit_failed",         false) \
	_(STREAM_FAILED,        "stream_failed",        false) \
	_(INITIAL_REFUSED,      "initial_refused",      false) \
	_(PREFLIGHT_REFUSED,    "preflight_refused",    false) \
	_(ADMISSION_REFUSED,    "admission_refused",    false) \
	_(CONTAINER_FAILED,     "container_failed",     false) \
	_(CLEANUP_FAILED,       "cleanup_failed",       false) \
	_(WATCHDOG_FAILED,      "watchdog_failed",      false) \
	_(OPERATOR_STOP,        "operator_stop",        false)

enum session_end {
#define SESSION_END_ENUM(e, id, normal) END_##e,
	SESSION_ENDS(SESSION_END_ENUM)
#undef SESSION_END_ENUM
	END_COUNT
};

const char *session_end_id(enum session_end e);
bool session_end_normal(enum session_end e);
/* The one outward message of an abnormal end. */
const char *session_end_message(enum session_end e);

/* Where a session is in its life (DESIGN.md §3). */
#define SESSION_STATES(_) \
	_(PREFLIGHT,   "preflight")    \
	_(CREATING,    "creating")     \
	_(ADMITTING,   "admitting")    \
	_(ATTACHING,   "attaching")    \
	_(STARTING,    "starting")     \
	_(ARMING,      "arming")       \
	_(READMITTING, "re-admitting") \
	_(RUNNING,     "running")      \
	_(STOPPING,    "stopping")     \
	_(ENDED,       "ended")

enum session_state {
#define SESSION_STATE_ENUM(e, id) STATE_##e,
	SESSION_STATES(SESSION_STATE_ENUM)
#undef SESSION_STATE_ENUM
	STATE_COUNT
};

const char *session_state_id(enum session_state s);

struct session_summary;

/*
 * What a session publishes about itself: names, numbers and verdicts, no
 * payload field. The session fills it and hands a pointer to publish();
 * the receiver copies it.
 */
struct session_status {
	enum session_state state;
	char session_id[40];
	char container_id[DOCKER_ID_MAX];
	char image[72];
	int64_t started_mono_ms;
	size_t stdout_bytes, stderr_bytes;
	struct gateway_counters counters;
	struct lease_status lease;
	int session_class;
	char admission_first[16], admission_second[16];
	struct check_item report[ADMISSION_CHECK_COUNT];	/* the latest admission */
	size_t n_report;
	const struct session_summary *summary;	/* set once ENDED */
};

struct session_options {
	const struct airlock_config *config;	/* frozen for the session */
	const char *docker_host;		/* DOCKER_HOST, or NULL */
	struct audit *audit;			/* required */
	struct otlp *otlp;			/* optional */
	struct gate *gate;			/* the live policy gate, or NULL */
	const char *watchdog_exe;		/* airlock binary for the lease (NULL: this one) */
	atomic_bool *stop;			/* operator force-stop (signal-safe), or NULL */
	void (*publish)(void *ctx, const struct session_status *st);	/* or NULL */
	void *publish_ctx;
	const char *session_id;			/* NULL: generated */
	sem_t *launch_slots;			/* bounds concurrent launches, or NULL */
};

struct session_summary {
	char session_id[40];
	enum session_end end;
	long exit_code;			/* -1 when the container never ran */
	bool oom_killed;
	int64_t duration_ms;
	size_t stdout_bytes, stderr_bytes, upstream_stderr_bytes;
	struct gateway_counters counters;
	char admission_first[16];	/* admitted, refused, not_run */
	char admission_second[16];
	char refused_check[32];		/* the first refusing check id, if any */
	char failed_step[16];		/* container_failed: connect, create, attach, start, inspect */
	char session_class[32];
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
