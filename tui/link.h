#ifndef AIRLOCK_LINK_H
#define AIRLOCK_LINK_H

/*
 * One engine as the console sees it (docs/console.md, "Attaching"): the one
 * interface the console consumes, snapshots and events out, requests in.
 * Two implementations:
 *	link_local.c	the engine in this process, on worker threads
 *	link_remote.c	an `airlock serve` over its control socket, directly
 *			or through `ssh HOST airlock ctl --stdio`
 * The console drives several at once (one per --connect) and never knows
 * which kind it holds.
 *
 * Nothing here blocks the UI thread for longer than a local call: a remote
 * request is queued on a non-blocking socket and answered later through
 * link_results; a lost engine keeps its last snapshot (marked stale) while
 * the link reconnects with back-off on its own thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "snapshot.h"

struct supervisor;

#define LINK_NAME_MAX	32
#define LINK_WHERE_MAX	192
#define LINK_TEXT_MAX	AL_ERR_MAX	/* an engine's error, whole */
#define LINK_TIMELINE_MS	500	/* the timeline is asked for again after this */
/* A remote engine's held calls are asked for again after this without a hold event. */
#define LINK_PENDING_SAFETY_MS	5000

enum link_state {
	LINK_UP,		/* snapshots arrive */
	LINK_CONNECTING,	/* the first attempt, or a retry under way */
	LINK_LOST,		/* down; the next attempt is due at retry_ms */
};

struct link_status {
	enum link_state state;
	char name[LINK_NAME_MAX];	/* the engine's name (its hello), or "local" */
	char where[LINK_WHERE_MAX];	/* the socket, or ssh://host */
	char role[16];			/* "operate" or "view" */
	char why[LINK_TEXT_MAX];	/* why it is down (fixed text and names) */
	int64_t retry_ms;		/* LOST: the next attempt, monotonic ms */
	unsigned attempts;		/* failed in a row */
	uint64_t gaps;			/* pushed frames the engine dropped for us */
};

enum link_request {
	LINK_REQ_START,
	LINK_REQ_STOP,
	LINK_REQ_STOP_ALL,
	LINK_REQ_CUTOVER,	/* revoke, restore, freeze, thaw */
	LINK_REQ_FORGET,
	LINK_REQ_QUARANTINE,	/* quarantine or release one session (op: freeze/thaw) */
	LINK_REQ_APPROVE,	/* a held call let through (rest: and its tool's later calls) */
	LINK_REQ_DENY,		/* a held call denied */
};

/* A restore's grant (grant.h's bounds): both 0, or no terms at all, restores for good. */
struct link_grant {
	int64_t for_s;		/* seconds; 0: no deadline */
	int64_t calls;		/* a call budget; 0: none */
	bool flow;		/* hold, restore: the tool is a class flow "CLASS>SINK" */
};

/* A request's answer: at once (local), or later through link_results (remote). */
struct link_result {
	enum link_request req;
	unsigned engine;		/* set by the console: the link's index */
	bool ok;
	char error[LINK_TEXT_MAX];	/* !ok: fixed text */
	enum cutover_op op;
	char tool[SNAP_NAME_MAX];
	char acted[SNAP_NAME_MAX];	/* cutover: the catalog tool it acted on (an alias resolved) */
	char session[SNAP_ID_MAX];	/* start: the new id; stop: the one stopped */
	char path[128];			/* start: the file */
	int64_t revision;
	size_t targets;			/* cutover: sessions posted to; stop-all: stopping */
	size_t acks, pending;		/* remote cutover: acknowledged, still waited on */
	struct link_grant grant;	/* cutover: a restore's grant (zeros: none) */
	int64_t hold;			/* approve, deny: the held call's id */
	bool rest;			/* approve: for the rest of its session */
};

/* What a request call returns. */
#define LINK_DONE	0	/* *res is the answer */
#define LINK_SENT	1	/* the answer comes through link_results */

struct link;

struct link_ops {
	/* The latest snapshot; -1 when none is fresh (the old one stays in *snap). */
	int (*snapshot)(struct link *l, struct supervisor_snapshot *snap);
	/* One session's detail; -1 when not (yet) known. */
	int (*detail)(struct link *l, const char *id, struct session_detail *out);
	void (*host)(struct link *l, struct host_snapshot *out);
	void (*host_refresh)(struct link *l, const char *runtime);
	size_t (*events)(struct link *l, struct supervisor_event *out, size_t cap);
	size_t (*results)(struct link *l, struct link_result *out, size_t cap);
	/* Readable when events, results or a snapshot arrived. */
	int (*wake_fd)(struct link *l);
	void (*status)(struct link *l, struct link_status *out);

	int (*start)(struct link *l, const char *path, struct link_result *res);
	int (*stop)(struct link *l, const char *id, struct link_result *res);
	int (*stop_all)(struct link *l, struct link_result *res);
	/*
	 * ids NULL: every live session (and, for a revoke, later ones). A
	 * restore with grant terms (NULL: none) is a time-boxed grant, the
	 * control protocol's restore with for_s and calls.
	 */
	int (*cutover)(struct link *l, enum cutover_op op, const char *tool,
		       const char *const *ids, size_t n, const struct link_grant *grant,
		       struct link_result *res);
	int (*forget)(struct link *l, const char *id, struct link_result *res);
	/*
	 * Quarantine (on) or release one session: the control protocol's
	 * quarantine/release naming it. The answer's targets: 1 when it
	 * changed, 0 when it was so already.
	 */
	int (*quarantine)(struct link *l, const char *id, bool on, struct link_result *res);
	/*
	 * The engine's audit log, payload-free rows with seq > *after, oldest
	 * first, at most cap; *after moves to the last one given (*after < 0:
	 * start at the log's end, with the calls it left without an outcome).
	 * -1 with why when the log cannot be read; a remote link answers from
	 * its latest reply and asks again on its own.
	 */
	int (*audit)(struct link *l, int64_t *after, struct audit_row *out, size_t cap, size_t *n,
		     char *why, size_t why_cap);
	/*
	 * The engine's policy story (audit_timeline.h): the events of the
	 * entries after seq *after (0: from the log's start), oldest first, at
	 * most cap; *after moves to the last entry read; *more: there are
	 * more to take at once. A change's later acks come as an event of
	 * their own (audit_timeline_fold). -1 with why when the log cannot be
	 * read. The local link asks the supervisor (at most every
	 * LINK_TIMELINE_MS unless more); a remote one answers from its latest
	 * reply and asks again on its own, as often.
	 */
	int (*timeline)(struct link *l, int64_t *after, struct timeline_row *out, size_t cap,
			size_t *n, bool *more, char *why, size_t why_cap);
	/*
	 * The calls held for an operator now (ctl pending: what each is,
	 * never its payload), oldest first, at most cap into out, *n of them;
	 * -1 with why when the engine does not say (refused, not connected).
	 * The local link asks the supervisor. A remote one answers from its
	 * latest reply and, while it is called, asks the engine's pending op
	 * again once a hold event (or a gap) came since, or every
	 * LINK_PENDING_SAFETY_MS; it returns LINK_SENT while that newer
	 * answer is on its way (the console is woken when it comes).
	 */
	int (*pending)(struct link *l, struct hold_view *out, size_t cap, size_t *n, char *why,
		       size_t why_cap);
	/* Approve (rest: for the rest of its session) or deny the held call id. */
	int (*decide)(struct link *l, int64_t id, bool approve, bool rest, struct link_result *res);
	void (*close)(struct link *l);
};

struct link {
	const struct link_ops *ops;
	bool remote;		/* quitting detaches; the engine's sessions go on */
};

/*
 * The engine in this process: requests carry author (the console's own
 * uid); its audit rows are audit_path's (read-only; NULL: none).
 */
struct link *link_local_new(struct supervisor *sup, const struct snap_author *author,
			    const char *audit_path);

/*
 * An engine elsewhere: target is a socket path, or ssh://[user@]host[/socket]
 * (ssh -T host airlock ctl --stdio [--socket path]). The link's thread
 * connects at once and again after every loss, with back-off. NULL only
 * when out of memory or target is malformed (*why says which).
 */
struct link *link_remote_new(const char *target, const char **why);

/* ---- calls through the ops, for readability ---- */

static inline int
link_snapshot(struct link *l, struct supervisor_snapshot *s)
{
	return l->ops->snapshot(l, s);
}

static inline int
link_detail(struct link *l, const char *id, struct session_detail *d)
{
	return l->ops->detail(l, id, d);
}

static inline void
link_host(struct link *l, struct host_snapshot *h)
{
	l->ops->host(l, h);
}

static inline void
link_host_refresh(struct link *l, const char *runtime)
{
	l->ops->host_refresh(l, runtime);
}

static inline size_t
link_events(struct link *l, struct supervisor_event *ev, size_t cap)
{
	return l->ops->events(l, ev, cap);
}

static inline size_t
link_results(struct link *l, struct link_result *r, size_t cap)
{
	return l->ops->results(l, r, cap);
}

static inline int
link_audit(struct link *l, int64_t *after, struct audit_row *out, size_t cap, size_t *n,
	   char *why, size_t why_cap)
{
	return l->ops->audit(l, after, out, cap, n, why, why_cap);
}

static inline int
link_timeline(struct link *l, int64_t *after, struct timeline_row *out, size_t cap, size_t *n,
	      bool *more, char *why, size_t why_cap)
{
	return l->ops->timeline(l, after, out, cap, n, more, why, why_cap);
}

static inline int
link_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n, char *why,
	     size_t why_cap)
{
	return l->ops->pending(l, out, cap, n, why, why_cap);
}

static inline int
link_wake_fd(struct link *l)
{
	return l->ops->wake_fd(l);
}

static inline void
link_status(struct link *l, struct link_status *s)
{
	l->ops->status(l, s);
}

static inline void
link_close(struct link *l)
{
	if (l)
		l->ops->close(l);
}

const char *link_state_name(enum link_state s);

#endif
