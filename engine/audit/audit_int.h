#ifndef AIRLOCK_AUDIT_INT_H
#define AIRLOCK_AUDIT_INT_H

/*
 * What the log's files share: audit.c opens the file (pragmas, schema,
 * statements), closes it and reads it; audit_commit.c writes it (the group
 * commit, the entries that ride on a later commit, the timer). Not for
 * other callers: audit.h is the log's interface.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "audit.h"
#include "audit_row.h"

/*
 * Group commit. Every append must be durable before it returns, and each
 * durable commit costs an fsync; so appenders that arrive while a commit is
 * in progress queue up and the next commit takes them all in one
 * transaction (one fsync). There is no committer thread: the first waiting
 * appender leads, commits whatever is queued right away (a lone caller
 * never waits for company), and hands the lead to the queue's head when it
 * is done. Batching comes only from concurrency.
 */
#define AUDIT_BATCH_MAX		256	/* bounds one transaction and its leader's time */

struct audit_req {
	const struct audit_entry *e;	/* the caller's (it waits until done), or &copy */
	struct audit_req *next;
	/*
	 * The appender sleeps on its own lock, not the log's: a leader
	 * that woke a whole batch while holding the log's lock sent every
	 * waker straight into a second sleep on that lock. (Not used for
	 * later entries.) m guards done and turn.
	 */
	pthread_mutex_t m;
	pthread_cond_t wake;		/* done, or turn */
	bool turn;			/* the lead is free: try to take it */
	bool taken;			/* in a leader's batch (under the log's lock) */
	char id[AUDIT_ENTRY_ID_MAX];
	int64_t seq;
	int rc;
	bool done;
	/* An entry that rides on a later commit: nobody waits on it. */
	struct audit_lane *lane;	/* non-NULL: heap, freed by the leader */
	int64_t due_ms;			/* when the timer commits it at the latest */
	struct audit_entry copy;	/* its strings live after the struct */
	/*
	 * The entry's chain-independent text (audit_row_body), made on the
	 * appender's thread before it queues, and id holds its id. NULL: the
	 * leader makes both (only requests queued by hand, in the unit tests).
	 */
	const char *body;
	size_t body_len;
};

/* The writer's prepared statements, a->st[AUDIT_ST_*]; their SQL is audit.c's table. */
enum audit_st {
	AUDIT_ST_BEGIN,
	AUDIT_ST_COMMIT,
	AUDIT_ST_ROLLBACK,
	AUDIT_ST_LAST,			/* the chain head */
	AUDIT_ST_INSERT,
	AUDIT_ST_COUNT_ALL,
	AUDIT_ST_COUNT_SESSION,
	AUDIT_ST_N
};

struct audit {
	sqlite3 *db;
	char *path;			/* as opened: the engine's own readers open it too */
	/*
	 * lock guards the queue and the flags, and is never held across SQL.
	 * db_lock keeps audit_count out of the leader's transaction: on one
	 * connection it would read rows not yet committed.
	 */
	pthread_mutex_t lock, db_lock;
	pthread_cond_t idle;		/* users dropped to 0 while closing */
	pthread_cond_t flush;		/* wakes the timer: queued, committed, closing */
	pthread_cond_t settled;		/* a batch is done: lanes may have drained */
	pthread_t timer;
	bool timer_on;
	/*
	 * The timer waits with no deadline: only then must a queued later
	 * entry wake it. Waiting for a deadline it wakes by itself, early
	 * enough for any entry queued since (dues follow queue order), so
	 * signalling it each commit was a context switch, and two per call
	 * under load, for nothing.
	 */
	bool timer_idle;
	struct audit_req *head, *tail;
	int users;			/* appenders inside audit_append */
	bool committing;		/* a leader owns the connection */
	bool closing;
	struct hash_ctx *hc;		/* the leader's digest context */
	unsigned char key[AUDIT_KEY_LEN];	/* the payload hashes' (audit.h) */
	/*
	 * The chain head as this connection last committed it, so that a
	 * commit need not read it back. Trusted only while the file's data
	 * version (SQLITE_FCNTL_DATA_VERSION: moved by any change, this
	 * connection's or another's) is the one seen after that commit.
	 * Under db_lock.
	 */
	int64_t head_seq;
	char head_hash[HASH_HEX_LEN + 1];
	unsigned head_version;
	bool head_known;
	struct ts_cache ts;		/* the leader's clock text, under db_lock */
	sqlite3_stmt *st[AUDIT_ST_N];
};

/* audit.c: the chain head read from the file (genesis if empty). */
int audit_read_last(struct audit *a, int64_t *seq, char prev[HASH_HEX_LEN + 1]);
/* audit.c: the log's path no longer names the file this connection writes. */
bool audit_file_moved(sqlite3 *db);

/* audit_commit.c: the timer (a->timer_on says whether it runs). */
void audit_timer_start(struct audit *a);
/* audit_commit.c: the close's first step: what is queued is committed, new appends fail. */
void audit_drain(struct audit *a);

#endif
