#ifndef AIRLOCK_SESSION_INT_H
#define AIRLOCK_SESSION_INT_H

/*
 * What the session's files share: session.c holds a session's state, its
 * end and its audit entries, runs the bridge loop and cleans up;
 * session_launch.c gets it to its first byte of data (the initial payload,
 * the preflight, create and both admissions, the lease, or a claim from
 * the pool). Not for other callers: session.h is the interface.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "doctor.h"

/* Everything one running session holds. */
struct session {
	const struct session_options *o;
	const struct airlock_config *cfg;
	struct profile profile;		/* cfg's, with the engine's shim digest (MCP) */
	struct session_summary *sum;
	struct docker *docker;
	char socket[DOCKER_SOCKET_MAX];
	struct host_facts facts;
	struct doctor_report pre;	/* preflight; its daemon half on pre_thread */
	pthread_t pre_thread;
	bool pre_begun, pre_running, pre_done;
	struct container *box;		/* NULL until the daemon answers */
	struct warm *warm;		/* a claimed pooled container's shell, or NULL */
	struct gateway *gw;
	/* The parser of agent lines, started on its own thread while the container launches. */
	pthread_t parser_thread;
	bool parser_begun;
	struct parser *parser;		/* until the gateway takes it */
	int parser_rc;
	struct al_err parser_err;
	struct upstream_host up;	/* what container upstreams take (gateway.h) */
	struct bridge *br;		/* while the agent runs */
	int64_t t0_ms;
	int64_t deadline_ms;	/* on the monotonic clock */
	struct gateway_hold hold;	/* o->hold's wait, then the deadline moved by it */
	int64_t tick_ms;	/* the bridge's last tick: a quarantine's time is added back */
	bool ended;
	struct lease *lease;
	atomic_int lease_failed;	/* set by the pulse thread */
	char lease_reason[SNAP_WORD_MAX];	/* written before lease_failed is set */
	struct session_status st;	/* what publish() hands out */
	int64_t published_ms;
	struct audit_lane lane;		/* the session's own queued entries (record_later) */
	bool lane_counted;		/* its refusal is in sum->audit_failures */
	uint64_t mcp_listed;		/* MCP sessions: the aliases the shim lists now */
};

/*
 * session.c: the parser of agent lines started on its own thread (true:
 * a failure is said when the gateway opens); taken once, joined first (NULL
 * with parser_err when it did not start).
 */
bool session_parser_begin(struct session *s);
struct parser *session_parser_take(struct session *s);
/* session.c: the state, handed to the observer with fresh counts. */
void session_set_state(struct session *s, enum session_state state);
bool session_stop_requested(const struct session *s);
/* session.c: the first end wins; an operator's stop or a failed lease is the cause. */
void session_end(struct session *s, enum session_end e);
/* An end with its reason for the operator (fixed text and names only). */
void session_fail(struct session *s, enum session_end e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* session.c: an audit entry of the session's, durable when it returns; a failure ends it. */
void session_record(struct session *s, enum audit_decision d, const char *rule,
		    const char *detail);
/* session.c: an entry that rides on the session's next durable one (audit.h). */
void session_record_later(struct session *s, enum audit_decision d, const char *rule);

/*
 * session_launch.c: the preflight's verdict recorded (a refusal ends the
 * session); true while the session goes on. Idempotent.
 */
bool session_preflight_end(struct session *s);
/*
 * session_launch.c: the initial frame made and a container admitted
 * twice, claimed or cold; false when the session ended on the way.
 */
bool session_launched(struct session *s, char **frame, size_t *len);

#endif
