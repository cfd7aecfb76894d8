#include "audit_int.h"
#include "clock.h"
#include "thread.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Run a statement that returns no rows we need, and make it reusable. */
static int
step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/*
 * Appends already queued or committing were promised an answer: let them
 * finish, refuse new ones, and free nothing while an appender is inside.
 */
void
audit_drain(struct audit *a)
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

static bool
data_version(sqlite3 *db, unsigned *v)
{
	return sqlite3_file_control(db, "main", SQLITE_FCNTL_DATA_VERSION, v) == SQLITE_OK;
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
	rc = audit_row_bind(a->st[AUDIT_ST_INSERT], r->e, *seq + 1, r->id, ts, prev, hash);
	if (rc == 0)
		rc = step_done(a->st[AUDIT_ST_INSERT]);
	/* One row or none at all: a trigger planted by hand may drop it and answer success. */
	if (rc < 0 || sqlite3_changes64(a->db) != 1)
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
	return audit_read_last(a, seq, prev);
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
	if (step_done(a->st[AUDIT_ST_BEGIN]) == 0) {
		rc = insert_batch(a, batch, &seq, prev);
		if (rc == 0)
			rc = step_done(a->st[AUDIT_ST_COMMIT]);
		if (rc == 0 && audit_file_moved(a->db))
			rc = -1;
		if (rc == 0)
			head_committed(a, seq, prev);
		if (rc < 0 && !sqlite3_get_autocommit(a->db))
			step_done(a->st[AUDIT_ST_ROLLBACK]);
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
void
audit_timer_start(struct audit *a)
{
	a->timer_on = thread_start(&a->timer, NULL, timer_main, a) == 0;
}
