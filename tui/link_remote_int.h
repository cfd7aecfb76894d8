#ifndef AIRLOCK_LINK_REMOTE_INT_H
#define AIRLOCK_LINK_REMOTE_INT_H

/*
 * The remote link's private parts, shared by its files only: link_remote.c
 * (the ops, queueing requests, the connection and its thread),
 * link_remote_reads.c (the logs the UI follows: the audit tail, the
 * timeline, the held calls) and link_remote_frames.c (what the engine
 * sends, taken on the thread).
 */

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "link.h"
#include "clock.h"
#include "control.h"
#include "control_server.h"
#include "frame.h"
#include "link_dial.h"
#include "supervisor.h"

#define EVENTS_MAX	1024	/* arrived, not yet taken by the UI */
#define RESULTS_MAX	64
#define PENDING_MAX	64	/* requests sent, not yet answered */
#define OUT_MAX		(256u << 10)	/* queued lines past this: "engine busy" */
#define HELLO_MS	10000	/* the hello must come within this */
#define DETAIL_MS	250	/* a shown detail is asked for again after this */
#define HOST_MS		5000	/* the host checks, likewise */
#define AUDIT_MS	1000	/* the engine's audit rows, likewise */
#define CUTOVER_WAIT_MS	5000	/* a cutover's reply waits this long for acks */
#define MISFITS_MAX	3	/* deltas in a row that did not apply: whole snapshots from then on */
#define RETRY_FIRST_MS	250
#define RETRY_MAX_MS	8000

/* What a pending request becomes when its reply arrives. */
enum pending_kind { P_REQUEST, P_DETAIL, P_HOST, P_AUDIT, P_QUIET, P_TIMELINE, P_HOLDS };

struct pending {
	int64_t id;
	enum pending_kind kind;
	struct link_result proto;	/* P_REQUEST: filled in from the reply */
};

struct link_remote {
	struct link base;
	/* Set at creation, then read only. */
	struct link_target target;
	int ctl[2];			/* UI → thread: queued lines, stop */
	int wake[2];			/* thread → UI */
	pthread_t thread;
	bool started;
	volatile bool stopping;

	pthread_mutex_t mu;		/* everything below */
	struct link_status st;
	int fd;				/* the thread's; -1 while down */
	pid_t ssh_pid;
	char *out;			/* queued lines */
	size_t out_len, out_off;
	int64_t next_id;
	struct pending pending[PENDING_MAX];
	size_t n_pending;
	struct supervisor_snapshot snap;	/* the latest decoded */
	struct supervisor_snapshot stage;	/* the thread's, decoded into before the swap */
	json_t *pushed;			/* the thread's: the last pushed body, deltas' base */
	bool deltas;			/* the thread's: the engine offers deltas */
	bool resync;			/* the thread's: asked again, a whole one is due */
	unsigned misfits;		/* the thread's: deltas in a row that did not apply */
	bool snap_fresh;
	struct supervisor_event events[EVENTS_MAX];	/* a ring */
	size_t ev_head, ev_n;
	int64_t last_wall;		/* the newest event taken: replays skipped */
	uint64_t last_seq;
	struct link_result results[RESULTS_MAX];
	size_t n_results;
	struct session_detail *detail;
	bool have_detail, detail_asked;
	int64_t detail_at;
	struct host_snapshot host;
	bool host_asked;
	int64_t host_at;
	struct control_audit *audit;	/* the latest audit answer */
	bool audit_asked, audit_new;
	int64_t audit_at;
	char audit_error[LINK_TEXT_MAX];	/* the engine refused it: why */
	struct control_timeline *timeline;	/* the latest timeline answer */
	bool timeline_asked, timeline_new;
	int64_t timeline_at;		/* monotonic ms of the last ask */
	int64_t timeline_for;		/* the after it was asked with */
	char timeline_error[LINK_TEXT_MAX];	/* the engine refused it: why */
	struct control_pending *holds;	/* the latest pending answer (held calls) */
	bool holds_asked, holds_have;	/* holds_have: it is this connection's */
	bool holds_stale;		/* a hold event (or a gap) since it was asked */
	int64_t holds_at;
	char holds_error[LINK_TEXT_MAX];	/* the engine refused it: why */
};

static inline struct link_remote *
link_remote_of(struct link *l)
{
	return (struct link_remote *)l;
}

/* link_remote.c: wake the UI; ask for events and snapshots again (under mu). */
void link_remote_wake_ui(struct link_remote *r);
void link_remote_subscribe_events(struct link_remote *r);
/*
 * Under mu: queue req (its id the next one) for the thread, whose reply
 * becomes kind (proto: a P_REQUEST's result); -1 with *why when it
 * cannot go.
 */
int link_remote_queue_line(struct link_remote *r, struct control_request *req,
			   enum pending_kind kind, const struct link_result *proto, const char **why);

/* link_remote_reads.c: the link ops audit, timeline and pending (link.h). */
int link_remote_audit(struct link *l, int64_t *after, struct audit_row *out, size_t cap,
		      size_t *n, char *why, size_t why_cap);
int link_remote_timeline(struct link *l, int64_t *after, struct timeline_row *out, size_t cap,
			 size_t *n, bool *more, char *why, size_t why_cap);
int link_remote_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n,
			char *why, size_t why_cap);

/* link_remote_frames.c: a result for the UI (under mu); one line from the engine, -1: it said goodbye. */
void link_remote_push_result(struct link_remote *r, const struct link_result *res);
int link_remote_take_frame(struct link_remote *r, const char *line, size_t len);

#endif
