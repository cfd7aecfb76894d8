#ifndef AIRLOCK_CONTROL_SERVER_INT_H
#define AIRLOCK_CONTROL_SERVER_INT_H

/*
 * The control server's private parts, shared by its files only:
 * control_server.c (accept, read, the loop), control_ops.c (the ops),
 * control_starts.c (the threads that read a start's config),
 * control_events.c (pending cutovers, the supervisor's events) and
 * control_io.c (queues, replies, pushes): each calls only those after it.
 */

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit_tail.h"
#include "clock.h"
#include "config.h"
#include "control_server.h"
#include "frame.h"

struct outq {
	char *buf;
	size_t off, len, alloc;		/* unsent bytes: buf[off, off + len) */
};

struct client {
	int fd;
	unsigned serial;		/* "client N" in the log */
	pid_t pid;
	uid_t uid;
	char user[64];
	char via[16];			/* the kind its hello named: "ctl" unless "console" */
	enum control_role role;
	struct linebuf in;
	struct parser *parser;		/* its lines are parsed there, never here; NULL until one */
	bool lent;			/* parser is one kept ready (cs_owner_parser) */
	struct outq out;
	bool follow, snapshots, deltas;
	int64_t base_ms;		/* deltas: the push it holds (its taken_ms), 0 none */
	uint64_t seq, gap, drops_in_row;
	bool more;			/* complete lines left unserved this round */
	bool eof;			/* nothing more to read */
	bool input_done;		/* the end of its input was judged */
	bool dead;			/* close at the end of the round */
};

/* A revoke or restore whose reply waits for its sessions' acks. */
struct pending {
	unsigned client;		/* serial */
	int64_t id;
	enum cutover_op op;
	char tool[SNAP_NAME_MAX];
	int64_t revision;
	size_t targets, n;
	char ids[SUPERVISOR_SESSIONS_MAX][SNAP_ID_MAX];
	enum { WAITING, ACKED, ENDED } state[SUPERVISOR_SESSIONS_MAX];
	enum cutover_result result[SUPERVISOR_SESSIONS_MAX];
	int64_t waited_us[SUPERVISOR_SESSIONS_MAX];
	int64_t deadline_ms;
	bool unsaved;			/* what stands on every session is not in the log */
};

/* A config the engine read for a client: the supervisor borrows it until the session is forgotten. */
struct owned {
	char id[SNAP_ID_MAX];
	bool loading;			/* a start's thread reads it still: no session yet */
	struct airlock_config cfg;
};

/*
 * A start whose config a thread reads and checks (control_starts.c): the
 * thread writes o's config, rc and err, then done; the loop reads them
 * once done, and starts the session.
 */
struct start_job {
	struct control_server *cs;
	struct client who;		/* who asked: its identity only (no socket, no queues) */
	struct control_request req;	/* the request, without its config */
	json_t *config;			/* its inline config, a copy the thread alone reads; NULL: req.path */
	struct owned *o;		/* read into; held in cs->owned[slot] from the start */
	size_t slot;
	uint64_t seq;			/* the order it came in */
	bool running;			/* its thread started (the loop's alone) */
	pthread_t thread;
	int rc;
	struct al_err err;
	bool done;			/* under cs->starts_lock */
};

#define CONTROL_STARTS_MAX	64	/* starts waiting or read; one more is refused (busy) */
#define CONTROL_START_THREADS	4	/* configs read at once */

#define OWNED_MAX (2 * SUPERVISOR_SESSIONS_MAX)

/* Refusals logged and audited in a minute, up to CONTROL_REFUSALS_AUDITED. */
struct refusal_budget {
	int64_t since_ms;		/* the minute they are counted in */
	unsigned in_minute;
};

struct control_server {
	struct control_server_options o;
	int listen_fd;
	int spare_fd;			/* /dev/null, closed to take one peer at EMFILE */
	int64_t listen_rest_ms;		/* out of descriptors, no spare: not polled until */
	/*
	 * Parsers started ahead for root's and the engine's own peers, one for
	 * each of their reserved slots (cs_owner_parser), each lent to one
	 * connection and stopped with it: a connection's parser is a process,
	 * and once the service's tasks ran out (upstreams forking up to the
	 * bound) none could be started and every peer, root in the middle of
	 * an incident too, was told "parser failed".
	 */
	struct parser *ready[CONTROL_CLIENTS_OWNER_MIN];
	size_t n_ready, lent;		/* ready, and lent to clients: at most the slots */
	int64_t ready_retry_ms;		/* a start failed: none tried before */
	struct client *clients[CONTROL_CLIENTS_MAX];
	unsigned serials;
	struct supervisor_snapshot snap;
	bool snap_ok;
	struct supervisor_event recent[CONTROL_RECENT_MAX];
	size_t n_recent, recent_next;
	struct pending *pending[CONTROL_PENDING_MAX];
	struct owned *owned[OWNED_MAX];
	struct start_job *starts[CONTROL_STARTS_MAX];	/* changed by the loop only */
	uint64_t starts_seq;
	pthread_mutex_t starts_lock;	/* each start's done */
	int starts_wake;		/* an eventfd a start's thread writes when done */
	bool stopping;			/* control_server_stopping: a start read now is refused */
	struct control_counts counts;
	int64_t snap_pushed_ms;		/* pushed snapshots are rate-limited */
	bool snap_due;
	json_t *pushed;			/* the last pushed body, while a client takes deltas */
	struct audit_tail *tail;	/* o.audit read-only, opened at the first "audit" */
	struct refusal_budget peers;	/* refused at accept: anyone may connect */
	struct refusal_budget views;	/* a view peer's change refused: it may ask again */
};

#define SNAPSHOT_PUSH_MS 250	/* at most four pushed snapshots a second */
#define SNAPSHOT_IDLE_MS 1000	/* and one a second when only the live parts moved */

/* A client wants pushed snapshots. */
bool cs_snapshots_wanted(const struct control_server *cs);

/* control_io.c: the helpers below the loop, the ops and the events */
void cs_say(struct control_server *cs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A reply: always queued (a client that never reads meets the hard bound). */
void cs_reply(struct control_server *cs, struct client *c, int64_t id, json_t *v);
void cs_reply_error(struct control_server *cs, struct client *c, int64_t id, const char *error);
/*
 * A fault that ends what a client may send (a line too long, its parser
 * gone): logged, answered with why, nothing more read; closed once the
 * answer is out.
 */
void cs_end_input(struct control_server *cs, struct client *c, const char *why);
void cs_reply_reason(struct control_server *cs, struct client *c, int64_t id, const char *error,
		     const char *reason);
/* Closing at the end of the round, with reason in the log; the queue written out. */
void cs_kill_client(struct control_server *cs, struct client *c, const char *reason);
void cs_flush(struct control_server *cs, struct client *c);
/* A pushed frame: dropped and counted when the client is behind. */
void cs_push(struct control_server *cs, struct client *c, const char *key, json_t *body);
/*
 * The same with the body already written (compact JSON), for a frame every
 * client gets. False when it was dropped, or the client is now closing.
 */
bool cs_push_text(struct control_server *cs, struct client *c, const char *key, const char *body,
		  size_t len);
/* 1: changed, 0: live parts only, -1: out of memory. */
int cs_refresh(struct control_server *cs);
struct client *cs_client_by_serial(struct control_server *cs, unsigned serial);
size_t cs_n_clients(const struct control_server *cs);
/* The uid's name, or the uid in decimal. */
const char *cs_user_name(uid_t uid, char *out, size_t cap);

/* control_events.c */
bool cs_pending_done(const struct pending *p);
void cs_pending_finish(struct control_server *cs, size_t k);
void cs_pending_expire(struct control_server *cs);
int cs_pending_timeout(const struct control_server *cs, int timeout_ms);
void cs_drain_events(struct control_server *cs);

/* control_starts.c: -1 with err when the eventfd or the lock cannot be made. */
int cs_starts_open(struct control_server *cs, struct al_err *err);
/*
 * Client c's start r handed to a thread that reads its config (from
 * r->config, a copy, or the file r->path); installed_only for a peer that
 * is not trusted. 0; -1 with err when busy (CONTROL_STARTS_MAX), out of
 * memory or no owned slot is free: nothing was started.
 */
int cs_start_begin(struct control_server *cs, const struct client *c,
		   const struct control_request *r, bool installed_only, struct al_err *err);
/* The oldest start whose config was read (its thread joined), off the list; NULL when none. */
struct start_job *cs_start_next_done(struct control_server *cs);
/* Freed; session: the config is that session's now (kept until it is forgotten), or NULL. */
void cs_start_end(struct control_server *cs, struct start_job *j, const char *session);
/*
 * A parser for owner client c (root, the engine's uid) from those started
 * ahead, NULL when none is left or c is no owner: its own is started then.
 * It is stopped when c closes, and another started ahead in its place
 * once a task can be had: up to four owner connections need no new
 * process when none can be.
 */
struct parser *cs_owner_parser(struct control_server *cs, struct client *c);

/* CONTROL_STARTS_MAX starts wait or are being read: one more is refused (CONTROL_E_BUSY). */
bool cs_starts_busy(const struct control_server *cs);
/* Some start's config is being read, or read and not yet finished. */
bool cs_starts_any(const struct control_server *cs);
/* A start of the client serial is being read: the client waits for its answer. */
bool cs_start_waits_for(const struct control_server *cs, unsigned serial);
/* Each thread joined, each start dropped (no session from it), the eventfd closed. */
void cs_starts_close(struct control_server *cs);

/* control_ops.c */
void cs_author(const struct client *c, struct snap_author *a);
/* Logged and audited (why is what the peer was told), up to CONTROL_REFUSALS_AUDITED a minute. */
void cs_audit_refused_peer(struct control_server *cs, pid_t pid, uid_t uid, bool no_role,
			   const char *why);
/* Each start whose config was read: started or refused, audited, answered if its client is there. */
void cs_starts_finish(struct control_server *cs);
/* One request line: refused with a fixed text, or served by its op. */
void cs_serve_line(struct control_server *cs, struct client *c, const char *line, size_t len);

#endif
