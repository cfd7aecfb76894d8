#include "audit.h"
#include "audit_row.h"
#include "clock.h"

#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#define AUDIT_STR_(x)		#x
#define AUDIT_STR(x)		AUDIT_STR_(x)
/*
 * The WAL is checkpointed into the database every AUDIT_CHECKPOINT_PAGES
 * pages (SQLite's automatic checkpoint, run by the committing thread) and
 * truncated back to AUDIT_WAL_LIMIT bytes after each reset, so a long-lived
 * engine's log does not keep a large WAL file beside it.
 */
#define AUDIT_CHECKPOINT_PAGES	256
#define AUDIT_WAL_LIMIT		(1 << 20)
/*
 * A new log's page size. A commit writes each page it touched to the WAL
 * and checksums it: with a row or two per commit, smaller pages are less
 * to write and sum. (An existing file keeps the size it was made with.)
 */
#define AUDIT_PAGE_SIZE		2048

/*
 * The table is append-only at the SQL level; the hash chain is what still
 * catches someone who drops the triggers or edits the file.
 *
 * entry_id has no index: a UNIQUE one cost a second b-tree insert per
 * entry and more than doubled the pages each commit writes (random keys),
 * about a tenth of a call's instructions, for a lookup nothing makes.
 * Uniqueness is checked by `audit verify` instead. A log made before keeps
 * its index (the table is created only if missing) and verifies as ever.
 */
static const char schema_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS audit_entries ("
	" seq INTEGER PRIMARY KEY,"
	" entry_id TEXT NOT NULL,"
	" ts TEXT NOT NULL,"
	" session_id TEXT NOT NULL,"
	" call_id TEXT,"
	" type TEXT NOT NULL,"
	" tool TEXT,"
	" decision TEXT,"
	" rule TEXT,"
	" revision INTEGER,"
	" latency_us INTEGER,"
	" request_hash TEXT,"
	" response_hash TEXT,"
	" class_before TEXT,"
	" class_after TEXT,"
	" detail TEXT,"
	" prev_hash TEXT NOT NULL,"
	" entry_hash TEXT NOT NULL);"
	"CREATE TRIGGER IF NOT EXISTS audit_entries_no_update"
	" BEFORE UPDATE ON audit_entries"
	" BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;"
	"CREATE TRIGGER IF NOT EXISTS audit_entries_no_delete"
	" BEFORE DELETE ON audit_entries"
	" BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;"
	"COMMIT;";

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

struct audit {
	sqlite3 *db;
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
	sqlite3_stmt *begin, *commit, *rollback;
	sqlite3_stmt *last, *insert, *count_all, *count_session;
};

/* Run a statement that returns no rows we need, and make it reusable. */
static int
step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static int
prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	return sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL)
	       == SQLITE_OK ? 0 : -1;
}

/* journal_mode answers with the mode in force, which may not be WAL. */
static int
set_wal(sqlite3 *db)
{
	sqlite3_stmt *st;
	int ok;

	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
		return -1;
	ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
	     strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

static int
setup_db(sqlite3 *db)
{
	char limits[96];

	snprintf(limits, sizeof limits, "PRAGMA wal_autocheckpoint=%d;"
		 "PRAGMA journal_size_limit=%d", AUDIT_CHECKPOINT_PAGES, AUDIT_WAL_LIMIT);
	if (sqlite3_busy_timeout(db, AUDIT_BUSY_MS) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA page_size=" AUDIT_STR(AUDIT_PAGE_SIZE), NULL, NULL,
			 NULL) != SQLITE_OK || set_wal(db) < 0 ||
	    sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, limits, NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

static int
prepare_all(struct audit *a)
{
	return prepare(a->db, "BEGIN IMMEDIATE", &a->begin) < 0 ||
	       prepare(a->db, "COMMIT", &a->commit) < 0 ||
	       prepare(a->db, "ROLLBACK", &a->rollback) < 0 ||
	       prepare(a->db, "SELECT seq, entry_hash FROM audit_entries"
		       " ORDER BY seq DESC LIMIT 1", &a->last) < 0 ||
	       prepare(a->db, "INSERT INTO audit_entries (" AUDIT_COLS ") VALUES"
		       " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &a->insert) < 0 ||
	       prepare(a->db, "SELECT count(*) FROM audit_entries", &a->count_all) < 0 ||
	       prepare(a->db, "SELECT count(*) FROM audit_entries WHERE session_id = ?",
		       &a->count_session) < 0 ? -1 : 0;
}

/* The timer waits with deadlines on the monotonic clock. */
static int
mono_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t at;
	int rc;

	if (pthread_condattr_init(&at) != 0)
		return -1;
	rc = pthread_condattr_setclock(&at, CLOCK_MONOTONIC) == 0 &&
	     pthread_cond_init(c, &at) == 0 ? 0 : -1;
	pthread_condattr_destroy(&at);
	return rc;
}

static int
sync_init(struct audit *a)
{
	if (pthread_mutex_init(&a->lock, NULL) != 0)
		return -1;
	if (pthread_mutex_init(&a->db_lock, NULL) != 0)
		goto lock;
	if (pthread_cond_init(&a->idle, NULL) != 0)
		goto db_lock;
	if (mono_cond_init(&a->flush) < 0)
		goto idle;
	if (pthread_cond_init(&a->settled, NULL) != 0)
		goto flush;
	return 0;
flush:
	pthread_cond_destroy(&a->flush);
idle:
	pthread_cond_destroy(&a->idle);
db_lock:
	pthread_mutex_destroy(&a->db_lock);
lock:
	pthread_mutex_destroy(&a->lock);
	return -1;
}

static void timer_start(struct audit *a);

bool
audit_not_a_file(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

int
audit_open(const char *path, struct audit **out, struct al_err *err)
{
	struct audit *a = calloc(1, sizeof *a);
	/* No SQLite mutex: every use of the connection is under db_lock. */
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	*out = NULL;
	if (!a || audit_not_a_file(path)) {
		free(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	if (sync_init(a) < 0) {
		free(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	/* Hashes and names only, but still the operator's business alone. */
	if (path)
		close(open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600));
	a->hc = hash_ctx_new();
	if (!path || !a->hc || sqlite3_open_v2(path, &a->db, flags, NULL) != SQLITE_OK ||
	    setup_db(a->db) < 0 || prepare_all(a) < 0) {
		/* SQLite reads the header only at the first statement: say what it found. */
		bool not_db = a->db && sqlite3_errcode(a->db) == SQLITE_NOTADB;

		audit_close(a);
		return al_fail(err, not_db ? AUDIT_ERR_NOT_AUDIT : AUDIT_ERR_OPEN);
	}
	timer_start(a);
	if (!a->timer_on) {
		audit_close(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	*out = a;
	return 0;
}

/*
 * Appends already queued or committing were promised an answer: let them
 * finish, refuse new ones, and free nothing while an appender is inside.
 */
static void
drain(struct audit *a)
{
	pthread_mutex_lock(&a->lock);
	a->closing = true;
	pthread_cond_signal(&a->flush);
	pthread_mutex_unlock(&a->lock);
	if (a->timer_on)
		pthread_join(a->timer, NULL);	/* it commits what is still queued */
	pthread_mutex_lock(&a->lock);
	while (a->users > 0)
		pthread_cond_wait(&a->idle, &a->lock);
	pthread_mutex_unlock(&a->lock);
}

void
audit_close(struct audit *a)
{
	if (!a)
		return;
	drain(a);
	sqlite3_finalize(a->begin);
	sqlite3_finalize(a->commit);
	sqlite3_finalize(a->rollback);
	sqlite3_finalize(a->last);
	sqlite3_finalize(a->insert);
	sqlite3_finalize(a->count_all);
	sqlite3_finalize(a->count_session);
	sqlite3_close(a->db);
	hash_ctx_free(a->hc);
	pthread_cond_destroy(&a->settled);
	pthread_cond_destroy(&a->flush);
	pthread_cond_destroy(&a->idle);
	pthread_mutex_destroy(&a->db_lock);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static bool
data_version(sqlite3 *db, unsigned *v)
{
	return sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, v) == SQLITE_OK;
}

/* The chain head: sequence and hash of the newest entry (genesis if none). */
static int
read_last(struct audit *a, int64_t *seq, char prev[HASH_HEX_LEN + 1])
{
	const unsigned char *h;
	int rc = sqlite3_step(a->last);

	*seq = 0;
	memcpy(prev, audit_genesis_hash, sizeof audit_genesis_hash);
	if (rc == SQLITE_ROW) {
		*seq = sqlite3_column_int64(a->last, 0);
		h = sqlite3_column_text(a->last, 1);
		if (!h || strlen((const char *)h) != HASH_HEX_LEN)
			rc = SQLITE_CORRUPT;
		else
			memcpy(prev, h, HASH_HEX_LEN + 1);
	}
	sqlite3_reset(a->last);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Inside the write transaction: link one entry to the chain head and insert
 * it. 1 when inserted (prev and seq move on to it); 0 when the entry cannot
 * be prepared (a string that is not valid UTF-8, no id or no clock): it
 * fails alone and takes no sequence, as it did with a transaction of its
 * own; -1 when the insert fails, which fails the whole transaction.
 */
static int
insert_one(struct audit *a, struct audit_req *r, int64_t *seq,
	   char prev[HASH_HEX_LEN + 1])
{
	char ts[AUDIT_TS_LEN + 1], hash[HASH_HEX_LEN + 1];
	struct hash_canon c;
	bool own = !r->body;
	int rc;

	if (own) {
		if (audit_row_body(r->e, r->id, &c) < 0)
			return 0;
		r->body = c.buf;
		r->body_len = c.len;
	}
	rc = audit_row_seal(&a->ts, a->hc, *seq + 1, r->id, r->body, r->body_len, prev, ts, hash);
	if (own) {
		r->body = NULL;
		hash_canon_free(&c);
	}
	if (rc < 0)
		return 0;
	/* All 18 parameters are bound for every row: no clearing in between. */
	rc = audit_row_bind(a->insert, r->e, *seq + 1, r->id, ts, prev, hash);
	if (rc == 0)
		rc = step_done(a->insert);
	if (rc < 0)
		return -1;
	r->seq = ++*seq;
	r->rc = 0;
	memcpy(prev, hash, sizeof hash);
	return 1;
}

/*
 * Inside the write transaction, whose start has seen any other writer's
 * commit: the head this connection left, or read back when the file has
 * changed since (or its version cannot be read).
 */
static int
chain_head(struct audit *a, int64_t *seq, char prev[HASH_HEX_LEN + 1])
{
	unsigned v;

	if (a->head_known && data_version(a->db, &v) && v == a->head_version) {
		*seq = a->head_seq;
		memcpy(prev, a->head_hash, sizeof a->head_hash);
		return 0;
	}
	return read_last(a, seq, prev);
}

/* The batch in queue order, each linked to the one inserted before it. */
static int
insert_batch(struct audit *a, struct audit_req *batch, int64_t *seq,
	     char prev[HASH_HEX_LEN + 1])
{
	struct audit_req *r;

	if (chain_head(a, seq, prev) < 0)
		return -1;
	for (r = batch; r; r = r->next)
		if (insert_one(a, r, seq, prev) < 0)
			return -1;
	return 0;
}

/* After a commit: the head it left, and the file's version that vouches for it. */
static void
head_committed(struct audit *a, int64_t seq, const char prev[HASH_HEX_LEN + 1])
{
	a->head_known = data_version(a->db, &a->head_version);
	a->head_seq = seq;
	memcpy(a->head_hash, prev, sizeof a->head_hash);
}

/*
 * The log's path no longer names the file this connection writes: it was
 * deleted (or moved) while open. What is committed there is gone when the
 * engine closes it, or lives on under a name nobody reads; so it fails.
 */
static bool
file_moved(sqlite3 *db)
{
	int moved = 0;

	return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK ||
	       moved;
}

/*
 * One transaction, one fsync at COMMIT (synchronous=FULL). If it does not
 * commit, nothing of it is in the file, so every entry of it fails; so
 * does a commit into a file no longer at the log's path (checked after
 * it, so that a deletion before the entries are durable is seen).
 */
static void
commit_batch(struct audit *a, struct audit_req *batch)
{
	char prev[HASH_HEX_LEN + 1];
	struct audit_req *r;
	int64_t seq;
	int rc = -1;

	pthread_mutex_lock(&a->db_lock);
	if (step_done(a->begin) == 0) {
		rc = insert_batch(a, batch, &seq, prev);
		if (rc == 0)
			rc = step_done(a->commit);
		if (rc == 0 && file_moved(a->db))
			rc = -1;
		if (rc == 0)
			head_committed(a, seq, prev);
		if (rc < 0 && !sqlite3_get_autocommit(a->db))
			step_done(a->rollback);
	}
	if (rc < 0)
		a->head_known = false;	/* whatever the file holds now, read it back */
	pthread_mutex_unlock(&a->db_lock);
	for (r = batch; rc < 0 && r; r = r->next)
		r->rc = -1;
}

/* Called with the lock held. Detaches up to AUDIT_BATCH_MAX from the head. */
static struct audit_req *
take_batch(struct audit *a)
{
	struct audit_req *batch = a->head, *r = batch;
	int n;

	for (n = 1; r && r->next && n < AUDIT_BATCH_MAX; n++) {
		r->taken = true;
		r = r->next;
	}
	if (!r)
		return NULL;
	r->taken = true;
	a->head = r->next;
	if (!a->head)
		a->tail = NULL;
	r->next = NULL;
	return batch;
}

/* Called with the lock held: a later entry is decided, and nobody waits on it. */
static void
later_done(struct audit_req *r)
{
	r->lane->pending--;
	if (r->rc < 0)
		r->lane->failed = true;
	free(r);
}

/* Called with the lock held: what is queued, or the close, may need the timer. */
static void
wake_timer(struct audit *a)
{
	if (a->timer_idle && (a->head || a->closing))
		pthread_cond_signal(&a->flush);
}

/*
 * Called with the lock held: the lead is free again. The first appender
 * that waits for it takes it; when only later entries are queued, the
 * timer does (at their due time).
 */
static void
pass_lead(struct audit *a)
{
	struct audit_req *r;

	for (r = a->head; r && r->lane; r = r->next)
		;
	if (r) {
		/* Under the log's lock: r is still queued, so still there. */
		pthread_mutex_lock(&r->m);
		r->turn = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->m);
	} else {
		wake_timer(a);
	}
	pthread_cond_broadcast(&a->settled);
}

/* Called with the lock held: later entries decided and freed; the appenders stay. */
static struct audit_req *
drop_later(struct audit_req *batch)
{
	struct audit_req *r, *next, *keep = NULL, **tail = &keep;

	for (r = batch; r; r = next) {
		next = r->next;
		if (r->lane) {
			later_done(r);
			continue;
		}
		*tail = r;
		tail = &r->next;
	}
	*tail = NULL;
	return keep;
}

/*
 * Called with the lock held and the lead free; returns with the lock held
 * (dropped for the commit, so that others can queue behind it, and while
 * the batch's appenders are told).
 */
static void
lead(struct audit *a)
{
	struct audit_req *batch = take_batch(a), *r, *next;

	a->committing = true;
	pthread_mutex_unlock(&a->lock);
	commit_batch(a, batch);
	pthread_mutex_lock(&a->lock);
	batch = drop_later(batch);
	a->committing = false;
	pass_lead(a);
	pthread_mutex_unlock(&a->lock);
	/* Its appenders cannot return before they are told: no lock needed to tell them. */
	for (r = batch; r; r = next) {
		next = r->next;		/* its appender may return once told */
		pthread_mutex_lock(&r->m);
		r->done = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->m);
	}
	pthread_mutex_lock(&a->lock);
}

/* Called with the lock held. */
static void
enqueue(struct audit *a, struct audit_req *r)
{
	if (a->tail)
		a->tail->next = r;
	else
		a->head = r;
	a->tail = r;
}

/* Called with r->m held: decided (true), or told the lead is free (false). */
static bool
await_told(struct audit_req *r)
{
	while (!r->done && !r->turn)
		pthread_cond_wait(&r->wake, &r->m);
	return r->done;
}

/* Called with the lock held: decided, by this thread's lead or another's. */
static bool
req_done(struct audit_req *r)
{
	bool done;

	pthread_mutex_lock(&r->m);
	done = r->done;
	pthread_mutex_unlock(&r->m);
	return done;
}

/*
 * Called with the lock held: queue r and wait until its batch is decided.
 * The turn is cleared with both locks held, so a leader that frees the
 * lead later (under the log's lock) cannot be missed; once r is taken
 * into a batch only its leader's word is awaited.
 */
static void
enqueue_wait(struct audit *a, struct audit_req *r)
{
	bool done = false;

	enqueue(a, r);
	a->users++;
	while (!done) {
		if (!r->taken && !a->committing) {
			lead(a);
			done = req_done(r);
			continue;
		}
		pthread_mutex_lock(&r->m);
		r->turn = false;
		pthread_mutex_unlock(&a->lock);
		done = await_told(r);
		pthread_mutex_unlock(&r->m);
		pthread_mutex_lock(&a->lock);
	}
	if (--a->users == 0 && a->closing)
		pthread_cond_signal(&a->idle);
}

int
audit_append(struct audit *a, const struct audit_entry *e,
	     char entry_id[AUDIT_ENTRY_ID_MAX], int64_t *seq, struct al_err *err)
{
	struct audit_req r = { .e = e, .rc = -1 };
	struct hash_canon body;
	bool refused;

	/* Off the leader's path: only the chain's own step waits in line. */
	if (!a || !e || !e->session_id || !e->type || audit_row_body(e, r.id, &body) < 0)
		return al_fail(err, AUDIT_ERR_APPEND);
	r.body = body.buf;
	r.body_len = body.len;
	if (pthread_mutex_init(&r.m, NULL) != 0) {
		hash_canon_free(&body);
		return al_fail(err, AUDIT_ERR_APPEND);
	}
	if (pthread_cond_init(&r.wake, NULL) != 0) {
		pthread_mutex_destroy(&r.m);
		hash_canon_free(&body);
		return al_fail(err, AUDIT_ERR_APPEND);
	}
	pthread_mutex_lock(&a->lock);
	refused = a->closing;
	if (!refused)
		enqueue_wait(a, &r);
	pthread_mutex_unlock(&a->lock);
	pthread_cond_destroy(&r.wake);
	pthread_mutex_destroy(&r.m);
	hash_canon_free(&body);
	if (refused || r.rc < 0)
		return al_fail(err, AUDIT_ERR_APPEND);
	if (entry_id)
		memcpy(entry_id, r.id, sizeof r.id);
	if (seq)
		*seq = r.seq;
	return 0;
}

/* --- entries that ride on a later commit ---------------------------------- */

/* One allocation: the request, its strings, then its body. NULL if it cannot be made. */
static struct audit_req *
later_copy(const struct audit_entry *e, struct audit_lane *l)
{
	size_t strings = audit_row_strings_size(e);
	char id[AUDIT_ENTRY_ID_MAX], *text;
	struct audit_req *r = NULL;
	struct hash_canon body;

	if (audit_row_body(e, id, &body) < 0)
		return NULL;
	r = calloc(1, sizeof *r + strings + body.len + 1);
	if (r) {
		audit_row_copy(&r->copy, e, (char *)(r + 1));
		text = (char *)(r + 1) + strings;
		memcpy(text, body.buf, body.len + 1);
		memcpy(r->id, id, sizeof id);
		r->body = text;
		r->body_len = body.len;
		r->e = &r->copy;
		r->lane = l;
		r->rc = -1;
	}
	hash_canon_free(&body);
	return r;
}

int
audit_append_later(struct audit *a, struct audit_lane *l, const struct audit_entry *e,
		   struct al_err *err)
{
	struct audit_req *r;

	if (!a || !l || !e || !e->session_id || !e->type || !(r = later_copy(e, l)))
		return al_fail(err, AUDIT_ERR_APPEND);
	r->due_ms = clock_mono_ms() + AUDIT_LATER_MS;
	pthread_mutex_lock(&a->lock);
	if (a->closing || l->failed) {
		pthread_mutex_unlock(&a->lock);
		free(r);
		return al_fail(err, AUDIT_ERR_APPEND);
	}
	l->pending++;
	enqueue(a, r);
	if (!a->committing && a->head == r)
		wake_timer(a);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

bool
audit_lane_failed(struct audit *a, struct audit_lane *l)
{
	bool failed;

	pthread_mutex_lock(&a->lock);
	failed = l->failed;
	pthread_mutex_unlock(&a->lock);
	return failed;
}

int
audit_lane_settle(struct audit *a, struct audit_lane *l, struct al_err *err)
{
	bool failed;

	if (!a || !l)
		return al_fail(err, AUDIT_ERR_APPEND);
	pthread_mutex_lock(&a->lock);
	a->users++;
	while (l->pending > 0) {
		if (!a->committing && a->head)
			lead(a);
		else
			pthread_cond_wait(&a->settled, &a->lock);
	}
	failed = l->failed;
	if (--a->users == 0 && a->closing)
		pthread_cond_signal(&a->idle);
	pthread_mutex_unlock(&a->lock);
	return failed ? al_fail(err, AUDIT_ERR_APPEND) : 0;
}

/*
 * The timer: commits queued later entries nobody else has carried by their
 * due time, and everything still queued once the log is closing. An
 * appender waiting at the head leads itself.
 */
static bool
timer_due(const struct audit *a)
{
	if (!a->head || a->committing)
		return false;
	return a->closing || (a->head->lane && a->head->due_ms <= clock_mono_ms());
}

static void
timer_wait(struct audit *a)
{
	struct timespec ts;
	int64_t due;

	if (!a->head || a->committing || !a->head->lane) {
		a->timer_idle = true;
		pthread_cond_wait(&a->flush, &a->lock);
		a->timer_idle = false;
		return;
	}
	due = a->head->due_ms;
	ts.tv_sec = (time_t)(due / 1000);
	ts.tv_nsec = (long)(due % 1000) * 1000000L;
	pthread_cond_timedwait(&a->flush, &a->lock, &ts);
}

static void *
timer_main(void *arg)
{
	struct audit *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		if (timer_due(a))
			lead(a);
		else if (a->closing && !a->head)
			break;
		else
			timer_wait(a);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Signals belong to the threads that expect them: the timer takes none. */
static void
timer_start(struct audit *a)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	a->timer_on = pthread_create(&a->timer, NULL, timer_main, a) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int64_t
audit_count(struct audit *a, const char *session_id)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	st = session_id ? a->count_session : a->count_all;
	if ((!session_id ||
	     sqlite3_bind_text(st, 1, session_id, -1, SQLITE_STATIC) == SQLITE_OK) &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_unlock(&a->db_lock);
	return n;
}

int
audit_head(struct audit *a, int64_t *seq, char hash[HASH_HEX_LEN + 1])
{
	int rc;

	*seq = 0;
	hash[0] = '\0';
	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	rc = file_moved(a->db) ? -1 : read_last(a, seq, hash);
	pthread_mutex_unlock(&a->db_lock);
	if (rc < 0 || *seq == 0) {
		*seq = 0;
		hash[0] = '\0';
	}
	return rc;
}
