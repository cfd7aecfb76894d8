#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

/*
 * White box: the audit module is compiled into this test so that the
 * synchronous setting can be read on the module's own connection (the
 * pragma is per connection; a fresh one would show its own default).
 */
#include "audit.c"
#include "audit_commit.c"
#include "audit_row.c"	/* its timestamp writer, driven below */
#include "audit_read.h"
#include "audit_timeline.h"
#include "audit_verify.h"

#include "no_random.h"
#include "sample_entry.h"
#include "audit_fixture.h"

/*
 * The audit log. It is driven from several threads and a killed child,
 * then tampered with through SQL (triggers on and off) and through the
 * file's bytes. (The OTLP exporter has its own test, test_otlp.c.)
 */

static void
append_n(struct audit *a, const char *session, const char *rule, int n)
{
	struct audit_entry e = sample_entry(session, rule);
	struct al_err err;
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
}

static void
make_log(const char *path, const char *rule, int n)
{
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(path, &a, &err), 0);
	append_n(a, "sess-A", rule, n);
	audit_close(a);
}

static sqlite3 *
raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static int64_t
raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void
raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = raw_open(path);

	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void
assert_verify(const char *path, bool ok, int64_t entries, int64_t bad, const char *reason)
{
	struct audit_verify v;
	struct al_err err;

	assert_int_equal(audit_verify_file(path, &v, &err), 0);
	assert_int_equal(v.ok, ok);
	assert_int_equal(v.entries, entries);
	if (!ok) {
		assert_int_equal(v.first_bad_seq, bad);
		assert_string_equal(v.reason, reason);
	}
	audit_verify_free(&v);
}

/* Concurrency: 4 threads × 25 appends. */

#define N_THREADS	4
#define PER_THREAD	25

struct appender {
	struct audit *a;
	char session[16];
	int64_t seqs[PER_THREAD];
	char ids[PER_THREAD][33];
	int failures;
};

static void *
appender_run(void *arg)
{
	struct appender *ap = arg;
	struct audit_entry e = sample_entry(ap->session, "sink_ceiling");
	struct al_err err;
	int i;

	for (i = 0; i < PER_THREAD; i++)
		if (audit_append(ap->a, &e, ap->ids[i], &ap->seqs[i], &err) < 0)
			ap->failures++;
	return NULL;
}

static void
test_concurrent_appends(void **state)
{
	struct fixture *f = *state;
	struct appender ap[N_THREADS];
	pthread_t th[N_THREADS];
	bool seen[N_THREADS * PER_THREAD + 1] = { false };
	struct audit *a;
	struct al_err err;
	sqlite3 *db;
	int i, j;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (i = 0; i < N_THREADS; i++) {
		memset(&ap[i], 0, sizeof ap[i]);
		ap[i].a = a;
		snprintf(ap[i].session, sizeof ap[i].session, "sess-%d", i);
		assert_int_equal(pthread_create(&th[i], NULL, appender_run, &ap[i]), 0);
	}
	for (i = 0; i < N_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(ap[i].failures, 0);
		for (j = 0; j < PER_THREAD; j++) {
			assert_in_range(ap[i].seqs[j], 1, N_THREADS * PER_THREAD);
			assert_false(seen[ap[i].seqs[j]]);
			seen[ap[i].seqs[j]] = true;
			assert_int_equal(strlen(ap[i].ids[j]), 32);
		}
		assert_int_equal(audit_count(a, ap[i].session), PER_THREAD);
	}
	assert_int_equal(audit_count(a, NULL), N_THREADS * PER_THREAD);
	assert_int_equal(audit_count(a, "nobody"), 0);
	/* Verified while the writer still holds the database open. */
	assert_verify(f->db, true, N_THREADS * PER_THREAD, 0, NULL);
	audit_close(a);

	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "SELECT count(DISTINCT entry_hash) FROM audit_entries"), 100);
	assert_int_equal(raw_int(db, "SELECT count(DISTINCT entry_id) FROM audit_entries"), 100);
	assert_int_equal(raw_int(db, "SELECT min(seq) FROM audit_entries"), 1);
	assert_int_equal(raw_int(db, "SELECT max(seq) FROM audit_entries"), 100);
	sqlite3_close(db);
}

/*
 * Group commit: 16 threads × 200. Commits are counted with a commit hook on
 * the module's own connection; fewer commits than entries is the batching.
 */

#define GC_THREADS	16
#define GC_PER_THREAD	200
#define GC_TOTAL	(GC_THREADS * GC_PER_THREAD)

struct gc_appender {
	struct audit *a;
	char session[16];
	int64_t seqs[GC_PER_THREAD];
	int failures;
};

static int
count_commit(void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int
refuse_commit(void *arg)
{
	(void)arg;
	return 1;		/* turns the COMMIT into a ROLLBACK */
}

static void *
gc_run(void *arg)
{
	struct gc_appender *ap = arg;
	struct audit_entry e = sample_entry(ap->session, "sink_ceiling");
	struct al_err err;
	int i;

	for (i = 0; i < GC_PER_THREAD; i++)
		if (audit_append(ap->a, &e, NULL, &ap->seqs[i], &err) < 0)
			ap->failures++;
	return NULL;
}

/* Every seq 1..GC_TOTAL exactly once; each thread's in increasing order. */
static void
check_gc_seqs(struct gc_appender *ap)
{
	static bool seen[GC_TOTAL + 1];
	int i, j;

	memset(seen, 0, sizeof seen);
	for (i = 0; i < GC_THREADS; i++) {
		assert_int_equal(ap[i].failures, 0);
		for (j = 0; j < GC_PER_THREAD; j++) {
			assert_in_range(ap[i].seqs[j], 1, GC_TOTAL);
			assert_false(seen[ap[i].seqs[j]]);
			seen[ap[i].seqs[j]] = true;
			if (j > 0)
				assert_true(ap[i].seqs[j] > ap[i].seqs[j - 1]);
		}
	}
}

static void
test_group_commit(void **state)
{
	struct fixture *f = *state;
	static struct gc_appender ap[GC_THREADS];
	pthread_t th[GC_THREADS];
	struct audit *a;
	struct al_err err;
	int i, commits = 0;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, count_commit, &commits);
	for (i = 0; i < GC_THREADS; i++) {
		memset(&ap[i], 0, sizeof ap[i]);
		ap[i].a = a;
		snprintf(ap[i].session, sizeof ap[i].session, "sess-%d", i);
		assert_int_equal(pthread_create(&th[i], NULL, gc_run, &ap[i]), 0);
	}
	for (i = 0; i < GC_THREADS; i++)
		pthread_join(th[i], NULL);
	check_gc_seqs(ap);
	assert_int_equal(audit_count(a, NULL), GC_TOTAL);
	print_message("group commit: %d entries in %d transactions\n", GC_TOTAL, commits);
	assert_true(commits >= 1 && commits < GC_TOTAL / 2);
	audit_close(a);
	assert_verify(f->db, true, GC_TOTAL, 0, NULL);
}

/*
 * The gateway's pattern from many threads at once: a durable dispatch,
 * then its terminal entry queued on the thread's lane, again and again,
 * then a settle. Every entry lands, each session's entries alternate in
 * the order they were written, and the chain holds.
 */
#define MIX_THREADS	8
#define MIX_CALLS	100

struct mixer {
	struct audit *a;
	struct audit_lane lane;
	char session[16];
	int failures;
};

static void *
mix_run(void *arg)
{
	struct mixer *m = arg;
	struct audit_entry d = sample_entry(m->session, NULL), t = sample_entry(m->session, "allowed");
	struct al_err err;
	int i;

	d.type = audit_type_id(AUDIT_T_DISPATCH);
	d.decision = "dispatch";
	for (i = 0; i < MIX_CALLS; i++) {
		if (audit_append(m->a, &d, NULL, NULL, &err) < 0 ||
		    audit_lane_failed(m->a, &m->lane) ||
		    audit_append_later(m->a, &m->lane, &t, &err) < 0)
			m->failures++;
	}
	if (audit_lane_settle(m->a, &m->lane, &err) < 0)
		m->failures++;
	return NULL;
}

static void
test_mixed_lanes_concurrent(void **state)
{
	struct fixture *f = *state;
	static struct mixer m[MIX_THREADS];
	pthread_t th[MIX_THREADS];
	char sql[160];
	sqlite3_stmt *st;
	struct audit *a;
	struct al_err err;
	sqlite3 *db;
	int i, n;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (i = 0; i < MIX_THREADS; i++) {
		memset(&m[i], 0, sizeof m[i]);
		m[i].a = a;
		snprintf(m[i].session, sizeof m[i].session, "mix-%d", i);
		assert_int_equal(pthread_create(&th[i], NULL, mix_run, &m[i]), 0);
	}
	for (i = 0; i < MIX_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(m[i].failures, 0);
		assert_int_equal(m[i].lane.pending, 0);
	}
	audit_close(a);
	assert_verify(f->db, true, MIX_THREADS * MIX_CALLS * 2, 0, NULL);
	db = raw_open(f->db);
	for (i = 0; i < MIX_THREADS; i++) {
		snprintf(sql, sizeof sql, "SELECT type FROM audit_entries WHERE session_id = 'mix-%d'"
			 " ORDER BY seq", i);
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
		for (n = 0; sqlite3_step(st) == SQLITE_ROW; n++)
			assert_string_equal((const char *)sqlite3_column_text(st, 0),
					    audit_type_id(n % 2 ? AUDIT_T_CALL : AUDIT_T_DISPATCH));
		sqlite3_finalize(st);
		assert_int_equal(n, MIX_CALLS * 2);
	}
	sqlite3_close(db);
}

/* Alone, each append commits by itself at once: nothing waits for company. */
static void
test_lone_appends_commit_alone(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-A", "sink_ceiling");
	struct audit *a;
	struct al_err err;
	int64_t seq;
	int i, commits = 0;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, count_commit, &commits);
	for (i = 1; i <= 20; i++) {
		assert_int_equal(audit_append(a, &e, NULL, &seq, &err), 0);
		assert_int_equal(seq, i);
		assert_int_equal(commits, i);
	}
	audit_close(a);
	assert_verify(f->db, true, 20, 0, NULL);
}

/* White box: queue reqs by hand, as appenders that are all waiting. */
static void
queue_reqs(struct audit *a, struct audit_req *r, const struct audit_entry *e, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		r[i] = (struct audit_req){ .e = &e[i], .rc = -1 };
		assert_int_equal(pthread_mutex_init(&r[i].m, NULL), 0);
		assert_int_equal(pthread_cond_init(&r[i].wake, NULL), 0);
		r[i].next = i + 1 < n ? &r[i + 1] : NULL;
	}
	pthread_mutex_lock(&a->lock);
	a->head = &r[0];
	a->tail = &r[n - 1];
	pthread_mutex_unlock(&a->lock);
}

/* This thread leads once: one batch from the head of the queue. */
static void
lead_once(struct audit *a)
{
	pthread_mutex_lock(&a->lock);
	lead(a);
	assert_false(a->committing);
	pthread_mutex_unlock(&a->lock);
}

static void
lead_batch(struct audit *a, struct audit_req *r, const struct audit_entry *e, int n)
{
	int i;

	queue_reqs(a, r, e, n);
	lead_once(a);
	assert_null(a->head);
	for (i = 0; i < n; i++) {
		assert_true(r[i].done);
		pthread_cond_destroy(&r[i].wake);
		pthread_mutex_destroy(&r[i].m);
	}
}

static void
test_batch_fails_whole(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e[3] = { sample_entry("sess-A", "r1"), sample_entry("sess-B", "r2"),
				    sample_entry("sess-C", "r3") };
	struct audit_req r[3];
	struct audit *a;
	struct al_err err;
	int64_t seq;
	int i, commits = 0;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, refuse_commit, NULL);
	lead_batch(a, r, e, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(r[i].rc, -1);
	assert_int_equal(audit_count(a, NULL), 0);

	/* A bad entry fails alone; its batch-mates are chained past it. */
	sqlite3_commit_hook(a->db, count_commit, &commits);
	e[1].session_id = "bad-\xff-utf8";
	lead_batch(a, r, e, 3);
	assert_int_equal(commits, 1);
	assert_int_equal(r[0].rc, 0);
	assert_int_equal(r[0].seq, 1);
	assert_int_equal(r[1].rc, -1);
	assert_int_equal(r[2].rc, 0);
	assert_int_equal(r[2].seq, 2);
	assert_int_equal(audit_append(a, &e[0], NULL, &seq, &err), 0);
	assert_int_equal(seq, 3);
	audit_close(a);
	assert_verify(f->db, true, 3, 0, NULL);
}

/* A batch takes at most AUDIT_BATCH_MAX; the rest wait for the next lead. */
static void
test_batch_bounded(void **state)
{
	struct fixture *f = *state;
	int n = AUDIT_BATCH_MAX + 44, i, commits = 0;
	struct audit_entry *e = calloc((size_t)n, sizeof *e);
	struct audit_req *r = calloc((size_t)n, sizeof *r);
	struct audit *a;
	struct al_err err;

	assert_true(e && r);
	for (i = 0; i < n; i++)
		e[i] = sample_entry("sess-bound", "sink_ceiling");
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, count_commit, &commits);
	queue_reqs(a, r, e, n);
	lead_once(a);
	assert_int_equal(commits, 1);
	assert_ptr_equal(a->head, &r[AUDIT_BATCH_MAX]);
	assert_true(r[AUDIT_BATCH_MAX - 1].done);
	assert_false(r[AUDIT_BATCH_MAX].done);
	lead_once(a);
	assert_int_equal(commits, 2);
	assert_null(a->head);
	for (i = 0; i < n; i++) {
		assert_true(r[i].done);
		assert_int_equal(r[i].rc, 0);
		assert_int_equal(r[i].seq, i + 1);
		pthread_cond_destroy(&r[i].wake);
		pthread_mutex_destroy(&r[i].m);
	}
	audit_close(a);
	assert_verify(f->db, true, n, 0, NULL);
	free(e);
	free(r);
}

/* Close drains: appends already waiting are committed, new ones refused. */

#define DRAIN_THREADS	4

struct drainer {
	struct audit *a;
	int64_t seq;
	int rc;
};

static void *
drain_append(void *arg)
{
	struct drainer *d = arg;
	struct audit_entry e = sample_entry("sess-drain", "sink_ceiling");
	struct al_err err;

	d->rc = audit_append(d->a, &e, NULL, &d->seq, &err);
	return NULL;
}

static void *
drain_close(void *arg)
{
	audit_close(arg);
	return NULL;
}

/* Poll a field of the queue (tests only) until it holds; 5 s at most. */
static void
await_state(struct audit *a, int users, bool closing)
{
	struct timespec ms = { 0, 1000000 };
	bool ok = false;
	int i;

	for (i = 0; i < 5000 && !ok; i++) {
		pthread_mutex_lock(&a->lock);
		ok = a->users == users && a->closing == closing;
		pthread_mutex_unlock(&a->lock);
		if (!ok)
			nanosleep(&ms, NULL);
	}
	assert_true(ok);
}

static void
test_close_drains(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-late", "sink_ceiling");
	struct drainer d[DRAIN_THREADS];
	pthread_t th[DRAIN_THREADS], closer;
	struct audit *a;
	struct al_err err;
	int i;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	pthread_mutex_lock(&a->lock);
	a->committing = true;	/* a leader that never finishes, until we say */
	pthread_mutex_unlock(&a->lock);
	for (i = 0; i < DRAIN_THREADS; i++) {
		d[i] = (struct drainer){ .a = a, .rc = 1 };
		assert_int_equal(pthread_create(&th[i], NULL, drain_append, &d[i]), 0);
	}
	await_state(a, DRAIN_THREADS, false);
	assert_int_equal(pthread_create(&closer, NULL, drain_close, a), 0);
	await_state(a, DRAIN_THREADS, true);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "audit: cannot append entry");

	pthread_mutex_lock(&a->lock);
	a->committing = false;
	pass_lead(a);			/* as a finishing leader hands it on */
	pthread_mutex_unlock(&a->lock);	/* a may be freed from here on */
	pthread_join(closer, NULL);
	for (i = 0; i < DRAIN_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(d[i].rc, 0);
		assert_in_range(d[i].seq, 1, DRAIN_THREADS);
	}
	assert_verify(f->db, true, DRAIN_THREADS, 0, NULL);
}

static void
test_entry_shape(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-A", "sink_ceiling");
	struct audit *a;
	struct al_err err;
	sqlite3_stmt *st;
	sqlite3 *db;
	char id[33];
	int64_t seq;
	const char *ts;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_append(a, &e, id, &seq, &err), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(strspn(id, "0123456789abcdef"), 32);
	audit_close(a);

	db = raw_open(f->db);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT ts, prev_hash, entry_id FROM"
					    " audit_entries WHERE seq = 1", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	ts = (const char *)sqlite3_column_text(st, 0);
	/* 2026-11-30T07:50:46.123456Z */
	assert_int_equal(strlen(ts), 27);
	assert_true(ts[4] == '-' && ts[10] == 'T' && ts[19] == '.' && ts[26] == 'Z');
	assert_int_equal(strspn((const char *)sqlite3_column_text(st, 1), "0"), 64);
	assert_string_equal((const char *)sqlite3_column_text(st, 2), id);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void
test_pragmas(void **state)
{
	struct fixture *f = *state;
	struct audit *a;
	struct al_err err;
	sqlite3 *db;
	sqlite3_stmt *st;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(raw_int(a->db, "PRAGMA synchronous"), 2);

	/* The journal mode is a property of the file: a fresh connection sees it. */
	db = raw_open(f->db);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
	audit_close(a);
}

static void
test_triggers_refuse(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db;

	make_log(f->db, "sink_ceiling", 3);
	db = raw_open(f->db);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE audit_entries SET decision = 'denied'"
					  " WHERE seq = 2", NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(db, "DELETE FROM audit_entries WHERE seq = 2",
					  NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(db, "DELETE FROM audit_entries", NULL, NULL, NULL),
			     SQLITE_OK);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM audit_entries"), 3);
	sqlite3_close(db);
	assert_verify(f->db, true, 3, 0, NULL);
}

#define DROP_TRIGGERS "DROP TRIGGER audit_entries_no_update;" \
		      "DROP TRIGGER audit_entries_no_delete;"
/* A careful hand puts them back as they were: the schema then tells nothing. */
#define PUT_BACK_TRIGGERS AUDIT_ENTRY_TRIGGERS(AUDIT_CREATE_TRIGGER)

static void
test_tamper_update(void **state)
{
	struct fixture *f = *state;

	make_log(f->db, "sink_ceiling", 10);
	raw_exec(f->db, DROP_TRIGGERS "UPDATE audit_entries SET decision = 'allowes' WHERE seq = 4");
	assert_verify(f->db, false, 10, 4, "hash mismatch");
}

static void
test_tamper_type_change(void **state)
{
	struct fixture *f = *state;

	/* The same bytes stored as a blob: the typed canonical form tells them apart. */
	make_log(f->db, "sink_ceiling", 5);
	raw_exec(f->db, DROP_TRIGGERS "UPDATE audit_entries SET tool = CAST(tool AS BLOB)"
		 " WHERE seq = 2;");
	assert_verify(f->db, false, 5, 2, "hash mismatch");
}

static void
test_tamper_delete(void **state)
{
	struct fixture *f = *state;

	make_log(f->db, "sink_ceiling", 10);
	raw_exec(f->db, DROP_TRIGGERS "DELETE FROM audit_entries WHERE seq = 6");
	assert_verify(f->db, false, 9, 6, "sequence gap");
}

static void
test_tamper_delete_first(void **state)
{
	struct fixture *f = *state;

	make_log(f->db, "sink_ceiling", 3);
	raw_exec(f->db, DROP_TRIGGERS "DELETE FROM audit_entries WHERE seq = 1");
	assert_verify(f->db, false, 2, 1, "sequence gap");
}

static void
test_tamper_relink(void **state)
{
	struct fixture *f = *state;

	make_log(f->db, "sink_ceiling", 6);
	raw_exec(f->db, DROP_TRIGGERS "UPDATE audit_entries SET prev_hash ="
		 " (SELECT entry_hash FROM audit_entries WHERE seq = 1) WHERE seq = 3");
	assert_verify(f->db, false, 6, 3, "chain broken");
}

static const char *raw_text(sqlite3 *db, const char *sql, char *buf, size_t cap);

/* "SEQ:HASH" of entry seq, as verify prints the head. */
static void
anchor_of(const char *path, int64_t seq, struct audit_anchor *out)
{
	char sql[96], hash[HASH_HEX_LEN + 1], text[128];
	sqlite3 *db = raw_open(path);

	snprintf(sql, sizeof sql, "SELECT entry_hash FROM audit_entries WHERE seq = %lld",
		 (long long)seq);
	raw_text(db, sql, hash, sizeof hash);
	sqlite3_close(db);
	snprintf(text, sizeof text, "%lld:%s", (long long)seq, hash);
	assert_int_equal(audit_anchor_parse(text, out), 0);
}

static void
assert_anchored(const char *path, const struct audit_anchor *an, bool ok, int64_t entries,
		const char *reason)
{
	struct audit_verify v;
	struct al_err err;

	assert_int_equal(audit_verify_anchored(path, an, &v, &err), 0);
	assert_int_equal(v.ok, ok);
	assert_int_equal(v.anchored, ok);
	assert_int_equal(v.entries, entries);
	if (!ok) {
		assert_int_equal(v.first_bad_seq, an->seq);
		assert_string_equal(v.reason, reason);
	}
	audit_verify_free(&v);
}

/* The head verify reports is the newest entry; an anchor on it catches a cut tail. */
static void
test_anchor_cut_tail(void **state)
{
	struct fixture *f = *state;
	struct audit_anchor head, mid;
	struct audit_verify v;
	struct al_err err;

	make_log(f->db, "sink_ceiling", 10);
	assert_int_equal(audit_verify_file(f->db, &v, &err), 0);
	anchor_of(f->db, 10, &head);
	assert_int_equal(v.head_seq, 10);
	assert_string_equal(v.head_hash, head.hash);
	assert_false(v.anchored);
	audit_verify_free(&v);
	anchor_of(f->db, 4, &mid);
	assert_anchored(f->db, &head, true, 10, NULL);
	assert_anchored(f->db, &mid, true, 10, NULL);
	raw_exec(f->db, DROP_TRIGGERS "DELETE FROM audit_entries WHERE seq > 7;" PUT_BACK_TRIGGERS);
	assert_verify(f->db, true, 7, 0, NULL);		/* the file alone cannot tell */
	assert_anchored(f->db, &head, false, 7,
			"the anchor's entry is missing: the log ends at entry 7 (cut)");
	assert_anchored(f->db, &mid, true, 7, NULL);	/* what the anchor vouches for is there */
}

/*
 * The writer's head: nothing for an empty log; then the newest entry, the
 * one verify names; and a row another writer appended shows at once.
 */
static void
test_writer_head(void **state)
{
	struct fixture *f = *state;
	char hash[HASH_HEX_LEN + 1];
	struct audit_anchor newest;
	struct audit *a;
	struct al_err err;
	int64_t seq;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_head(a, &seq, hash), 0);
	assert_int_equal(seq, 0);
	assert_string_equal(hash, "");
	append_n(a, "sess-A", "sink_ceiling", 5);
	assert_int_equal(audit_head(a, &seq, hash), 0);
	anchor_of(f->db, 5, &newest);
	assert_int_equal(seq, 5);
	assert_string_equal(hash, newest.hash);
	make_log(f->db, "sink_ceiling", 2);	/* a second writer on the file */
	assert_int_equal(audit_head(a, &seq, hash), 0);
	anchor_of(f->db, 7, &newest);
	assert_int_equal(seq, 7);
	assert_string_equal(hash, newest.hash);
	raw_exec(f->db, "DROP TABLE audit_entries");
	assert_int_equal(audit_head(a, &seq, hash), -1);
	assert_int_equal(seq, 0);
	assert_string_equal(hash, "");
	audit_close(a);
}

/*
 * The log deleted under an open writer: its next commits fail (they would
 * land in a file that is gone once closed), and it has no head to give.
 * Renamed, the same: the path names no file of this log.
 */
static void
test_log_deleted_while_open(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-A", "sink_ceiling");
	char hash[HASH_HEX_LEN + 1], moved[600];
	struct audit *a;
	struct al_err err;
	int64_t seq;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	append_n(a, "sess-A", "sink_ceiling", 3);
	assert_int_equal(unlink(f->db), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "audit: cannot append entry");
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	assert_int_equal(audit_head(a, &seq, hash), -1);
	audit_close(a);

	make_log(f->db, "sink_ceiling", 2);
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	append_n(a, "sess-A", "sink_ceiling", 1);
	snprintf(moved, sizeof moved, "%s.moved", f->db);
	assert_int_equal(rename(f->db, moved), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	audit_close(a);
	unlink(moved);
}

/* The tail replaced by new entries with valid hashes: the anchor's entry is not the same. */
static void
test_anchor_rewritten_tail(void **state)
{
	struct fixture *f = *state;
	struct audit_anchor head;
	struct audit *a;
	struct al_err err;

	make_log(f->db, "sink_ceiling", 6);
	anchor_of(f->db, 6, &head);
	raw_exec(f->db, DROP_TRIGGERS "DELETE FROM audit_entries WHERE seq >= 4;" PUT_BACK_TRIGGERS);
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	append_n(a, "sess-A", "sink_ceiling", 3);
	audit_close(a);
	assert_verify(f->db, true, 6, 0, NULL);
	assert_anchored(f->db, &head, false, 6, "not the anchor's entry: the log was rewritten");
}

static void
test_anchor_parse(void **state)
{
	static const char hex[] = "4dfb90d53b2f6a967a156469f422c9d4df191805b66df90fcfdea176112e5d22";
	/* Printed before the hash: a bad sequence, or no colon at all. */
	static const char *const bad_seq[] = { "", "12", "0:", "-3:", "012:", "1x:", "+4:", " 4:",
					       "99999999999999999999:" };
	struct audit_anchor an;
	char text[160];
	size_t i;

	(void)state;
	snprintf(text, sizeof text, "12:%s", hex);
	assert_int_equal(audit_anchor_parse(text, &an), 0);
	assert_int_equal(an.seq, 12);
	assert_string_equal(an.hash, hex);
	for (i = 0; i < sizeof bad_seq / sizeof bad_seq[0]; i++) {
		snprintf(text, sizeof text, "%s%s", bad_seq[i], hex);
		assert_int_equal(audit_anchor_parse(text, &an), -1);
	}
	/* Hex in capitals is hex: taken, and kept as the log writes it. */
	snprintf(text, sizeof text, "12:4DFB%s", hex + 4);
	assert_int_equal(audit_anchor_parse(text, &an), 0);
	assert_string_equal(an.hash, hex);
	/* A hash that is not 64 hex digits. */
	snprintf(text, sizeof text, "12:%sa", hex);
	assert_int_equal(audit_anchor_parse(text, &an), -1);
	snprintf(text, sizeof text, "12:%.63s", hex);
	assert_int_equal(audit_anchor_parse(text, &an), -1);
	snprintf(text, sizeof text, "12:%.63sG", hex);
	assert_int_equal(audit_anchor_parse(text, &an), -1);
	assert_int_equal(audit_anchor_parse("12:", &an), -1);
	assert_int_equal(audit_anchor_parse(NULL, &an), -1);
}

static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf;
	long n;

	*len = 0;
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static void
write_file(const char *path, const unsigned char *buf, size_t len)
{
	FILE *fp = fopen(path, "r+b");

	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static unsigned char *
find_bytes(unsigned char *hay, size_t len, const char *needle)
{
	return memmem(hay, len, needle, strlen(needle));
}

static void
test_tamper_file_bytes(void **state)
{
	struct fixture *f = *state;
	struct audit_verify v;
	struct al_err err;
	unsigned char *buf, *p;
	sqlite3 *db;
	size_t len;

	make_log(f->db, "sink_ceiling", 20);
	db = raw_open(f->db);
	assert_int_equal(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	buf = read_file(f->db, &len);
	assert_non_null(buf);
	p = find_bytes(buf, len, "sink_ceiling");
	assert_non_null(p);
	p[5] = 'k';		/* sink_keiling */
	write_file(f->db, buf, len);
	free(buf);

	if (audit_verify_file(f->db, &v, &err) == 0)
		assert_false(v.ok);
	else
		assert_non_null(strstr(err.msg, "audit: "));
}

static const char *
raw_text(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* The UNIQUE index on entry_id that older logs carry (SQLite names it). */
#define ENTRY_ID_INDEXES "SELECT count(*) FROM sqlite_master WHERE type = 'index'" \
			 " AND name LIKE 'sqlite_autoindex_audit_entries%'"

/*
 * A log as versions before this one made it: the table with a UNIQUE
 * index on entry_id (today's writer keeps an existing table as it is).
 */
static void
make_indexed_log(const char *path, const char *rule, int n)
{
	static const char col[] = " entry_id TEXT";
	const char *table = strstr(schema_sql, "CREATE TABLE"), *at;
	sqlite3 *db = NULL;
	char sql[1024];

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
					 NULL), SQLITE_OK);
	assert_non_null(table);
	at = strstr(table, col);
	assert_non_null(at);
	/* today's CREATE TABLE with "UNIQUE" after the column's type */
	snprintf(sql, sizeof sql, "%.*s UNIQUE%.*s", (int)(at + strlen(col) - table), table,
		 (int)(strchr(table, ';') - at - strlen(col)), at + strlen(col));
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	make_log(path, rule, n);
	db = raw_open(path);
	assert_int_equal(raw_int(db, ENTRY_ID_INDEXES), 1);
	sqlite3_close(db);
}

/* A log made with the index still verifies; a new one has no index. */
static void
test_indexed_log_verifies(void **state)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	struct fixture *f = *state;
	char newer[128], path[160];
	sqlite3 *db;
	size_t i;

	make_indexed_log(f->db, "allowed", 30);
	assert_verify(f->db, true, 30, 0, NULL);
	snprintf(newer, sizeof newer, "%s/newer.db", f->dir);
	make_log(newer, "allowed", 3);
	db = raw_open(newer);
	assert_int_equal(raw_int(db, ENTRY_ID_INDEXES), 0);
	/* its one index: what a start reads, partial (audit.c) */
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			 " AND tbl_name = 'audit_entries'"), 1);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			 " AND name = 'audit_lifecycle' AND sql LIKE '%WHERE (type = ''session_start''"
			 " OR type = ''session_end'' OR type = ''policy'')%'"), 1);
	sqlite3_close(db);
	assert_verify(newer, true, 3, 0, NULL);
	for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		snprintf(path, sizeof path, "%s%s", newer, suffix[i]);
		unlink(path);
	}
}

/*
 * Nothing refuses a repeated entry id at the insert any more: verify
 * names the second entry that carries it, even when its chain is sound.
 */
static void
test_duplicate_entry_id(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-D", NULL);
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	append_n(a, "sess-D", NULL, 3);
	e.entry_id = "00112233445566778899aabbccddeeff";
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);	/* seq 4 */
	append_n(a, "sess-D", NULL, 2);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);	/* seq 7, again */
	append_n(a, "sess-D", NULL, 2);
	audit_close(a);
	assert_verify(f->db, false, 9, 7, "duplicate entry id");
}

/* The entries stay intact; only the UNIQUE index on entry_id is damaged. */
static void
test_tamper_index_page(void **state)
{
	struct fixture *f = *state;
	unsigned char *buf, *p;
	int64_t root, psz;
	sqlite3 *db;
	char id[40];
	size_t len;

	make_indexed_log(f->db, "sink_ceiling", 50);
	db = raw_open(f->db);
	root = raw_int(db, "SELECT rootpage FROM sqlite_master WHERE type = 'index'"
		       " AND name LIKE 'sqlite_autoindex_audit_entries%'");
	psz = raw_int(db, "PRAGMA page_size");
	raw_text(db, "SELECT entry_id FROM audit_entries WHERE seq = 10", id, sizeof id);
	assert_int_equal(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	buf = read_file(f->db, &len);
	assert_true((size_t)(root * psz) <= len);
	p = find_bytes(buf + (root - 1) * psz, (size_t)psz, id);
	assert_non_null(p);
	p[0] = p[0] == 'a' ? 'b' : 'a';
	write_file(f->db, buf, len);
	free(buf);
	assert_verify(f->db, false, 50, 0, "database corrupt");
}

/* Crash durability: a child appends and is killed without closing. */
static void
test_crash_durability(void **state)
{
	struct fixture *f = *state;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct audit *a;
		struct al_err err;
		struct audit_entry e = sample_entry("sess-crash", "sink_ceiling");
		int i;

		if (audit_open(f->db, &a, &err) < 0)
			_exit(1);
		for (i = 0; i < 10; i++)
			if (audit_append(a, &e, NULL, NULL, &err) < 0)
				_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_verify(f->db, true, 10, 0, NULL);
}

/*
 * Crash durability under concurrency: 8 threads in a child report each seq
 * once audit_append has returned it; the child is killed mid-stream. Every
 * reported seq must be in the file, and the chain must verify.
 */

#define CRASH_THREADS	8
#define CRASH_PER	5000
#define CRASH_KILL_AT	400	/* reports seen before the kill */

struct crasher {
	struct audit *a;
	int fd;
	int id;
};

static void *
crasher_run(void *arg)
{
	struct crasher *c = arg;
	struct audit_entry e = sample_entry("sess-crash", "sink_ceiling");
	struct al_err err;
	int64_t seq = 0, rec;
	int i;

	for (i = 0; i < CRASH_PER; i++) {
		if (audit_append(c->a, &e, NULL, &seq, &err) < 0)
			_exit(1);
		rec = seq * CRASH_THREADS + c->id;	/* atomic: < PIPE_BUF */
		if (write(c->fd, &rec, sizeof rec) != sizeof rec)
			_exit(1);
	}
	return NULL;
}

/*
 * A commit that lingers before its WAL write, as on a slow disk. A SIGKILL
 * loses nothing already written, so without the pause an append released
 * before its COMMIT would almost never be caught; with it, it would be
 * reported and then lost.
 */
static int
slow_commit(void *arg)
{
	struct timespec pause = { 0, 2000000 };

	(void)arg;
	nanosleep(&pause, NULL);
	return 0;
}

static void
crash_child(const char *path, int fd)
{
	struct crasher c[CRASH_THREADS];
	pthread_t th[CRASH_THREADS];
	struct al_err err;
	struct audit *a;
	int i;

	if (audit_open(path, &a, &err) < 0)
		_exit(1);
	sqlite3_commit_hook(a->db, slow_commit, NULL);
	for (i = 0; i < CRASH_THREADS; i++) {
		c[i] = (struct crasher){ .a = a, .fd = fd, .id = i };
		if (pthread_create(&th[i], NULL, crasher_run, &c[i]) != 0)
			_exit(1);
	}
	for (i = 0; i < CRASH_THREADS; i++)
		pthread_join(th[i], NULL);
	_exit(2);		/* finished before the kill: the test is too slow */
}

static bool
wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* Read records until EOF, killing the child once enough have come. */
static size_t
collect_reports(int fd, pid_t pid, int64_t *recs, size_t cap)
{
	size_t bytes = 0, room = cap * sizeof *recs;
	bool killed = false;
	ssize_t got;

	while (bytes < room && wait_readable(fd, 10000) &&
	       (got = read(fd, (char *)recs + bytes, room - bytes)) > 0) {
		bytes += (size_t)got;
		if (!killed && bytes / sizeof *recs >= CRASH_KILL_AT)
			killed = kill(pid, SIGKILL) == 0;
	}
	assert_true(killed);
	return bytes / sizeof *recs;
}

static void
check_reports(const char *path, const int64_t *recs, size_t n)
{
	int64_t last[CRASH_THREADS] = { 0 };
	struct audit_verify v;
	struct al_err err;
	bool *seen;
	size_t i;

	assert_int_equal(audit_verify_file(path, &v, &err), 0);
	assert_true(v.ok);	/* so the file holds exactly seq 1 .. v.entries */
	print_message("crash: %zu appends reported, %lld entries in the file\n", n,
		      (long long)v.entries);
	assert_true(v.entries >= (int64_t)n);
	seen = calloc((size_t)v.entries + 1, sizeof *seen);
	assert_non_null(seen);
	for (i = 0; i < n; i++) {
		int64_t seq = recs[i] / CRASH_THREADS, id = recs[i] % CRASH_THREADS;

		assert_in_range(seq, 1, v.entries);
		assert_false(seen[seq]);
		seen[seq] = true;
		assert_true(seq > last[id]);
		last[id] = seq;
	}
	free(seen);
}

static void
test_crash_durability_concurrent(void **state)
{
	struct fixture *f = *state;
	size_t cap = CRASH_THREADS * CRASH_PER, n;
	int64_t *recs = calloc(cap, sizeof *recs);
	int p[2], status;
	pid_t pid;

	assert_non_null(recs);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		crash_child(f->db, p[1]);
	}
	close(p[1]);
	n = collect_reports(p[0], pid, recs, cap);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	check_reports(f->db, recs, n);
	free(recs);
}

static bool
file_has(const char *path, const char *needle)
{
	size_t len;
	unsigned char *buf = read_file(path, &len);
	bool found = buf && find_bytes(buf, len, needle) != NULL;

	free(buf);
	return found;
}

static void
test_canary_only_hashed(void **state)
{
	struct fixture *f = *state;
	static const char canary[] = "CANARY-5e1f0c-the-agent-asked-for-this-secret";
	struct audit_entry e = sample_entry("sess-canary", "sink_ceiling");
	char hash[HASH_HEX_LEN + 1], wal[128];
	struct audit *a;
	struct al_err err;
	int i;

	hash_sha256_hex(canary, strlen(canary), hash);
	e.request_hash = hash;
	e.response_hash = hash;
	e.detail = "{\"bytes\":46,\"verdict\":\"allowed\"}";
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);

	/* While open, the entries live in the WAL. */
	snprintf(wal, sizeof wal, "%s-wal", f->db);
	assert_true(file_has(f->db, hash) || file_has(wal, hash));
	assert_false(file_has(f->db, canary));
	assert_false(file_has(wal, canary));
	audit_close(a);

	assert_true(file_has(f->db, hash));
	assert_false(file_has(f->db, canary));
	assert_false(file_has(wal, canary));
}

static void
test_errors_fixed_text(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry(NULL, "sink_ceiling");
	struct audit_verify v;
	struct audit *a;
	struct al_err err;
	char path[128];
	FILE *fp;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "audit: cannot append entry");
	e.session_id = "bad-\xff-utf8";
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "audit: cannot append entry");
	assert_int_equal(audit_count(a, NULL), 0);
	audit_close(a);
	assert_verify(f->db, true, 0, 0, NULL);

	snprintf(path, sizeof path, "%s/missing.db", f->dir);
	assert_int_equal(audit_verify_file(path, &v, &err), -1);
	assert_string_equal(err.msg, "audit: cannot open database");
	assert_int_equal(access(path, F_OK), -1);	/* read-only: never created */

	snprintf(path, sizeof path, "%s/plain.txt", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("this is not a database, it is a file with secret words in it\n", fp);
	fclose(fp);
	assert_int_equal(audit_verify_file(path, &v, &err), -1);
	assert_string_equal(err.msg, "audit: not an audit database");
	unlink(path);

	snprintf(path, sizeof path, "%s/missing-dir/x.db", f->dir);
	assert_int_equal(audit_open(path, &a, &err), -1);
	assert_string_equal(err.msg, "audit: cannot open database");
	assert_null(a);
}

static void
test_other_sqlite_db(void **state)
{
	struct fixture *f = *state;
	struct audit_verify v;
	struct al_err err;
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(audit_verify_file(f->db, &v, &err), -1);
	assert_string_equal(err.msg, "audit: not an audit database");
}

/* The hand-written timestamp is what strftime + printf wrote before. */
static void
test_timestamp_format(void **state)
{
	char ts[AUDIT_TS_LEN + 1], want[64];
	struct timespec before, after;
	struct ts_cache tc = { 0 };
	struct tm tm;
	int i;

	(void)state;
	/* The kept part follows the second it is asked for, back and forth. */
	assert_int_equal(ts_head(&tc, 86399), 0);
	assert_memory_equal(tc.head, "1970-01-01T23:59:59.", AUDIT_TS_SECS);
	assert_int_equal(ts_head(&tc, 86400), 0);
	assert_memory_equal(tc.head, "1970-01-02T00:00:00.", AUDIT_TS_SECS);
	assert_int_equal(ts_head(&tc, 1796025046), 0);
	assert_memory_equal(tc.head, "2026-11-30T07:50:46.", AUDIT_TS_SECS);
	assert_int_equal(ts_head(&tc, 86399), 0);
	assert_memory_equal(tc.head, "1970-01-01T23:59:59.", AUDIT_TS_SECS);
	for (i = 0; i < 100; i++) {
		assert_int_equal(clock_gettime(CLOCK_REALTIME, &before), 0);
		assert_int_equal(make_ts(&tc, ts), 0);
		assert_int_equal(clock_gettime(CLOCK_REALTIME, &after), 0);
		if (before.tv_sec != after.tv_sec)
			continue;	/* a second boundary in between: compare the next one */
		assert_non_null(gmtime_r(&before.tv_sec, &tm));
		strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%S", &tm);
		assert_int_equal(strlen(ts), AUDIT_TS_LEN);
		assert_memory_equal(ts, want, 19);
		assert_true(ts[19] == '.' && ts[26] == 'Z' && ts[27] == '\0');
		assert_int_equal(strspn(ts + 20, "0123456789"), 6);
		assert_true(strncmp(ts + 20, "000000", 6) >= 0);
	}
}

/* Entries that ride on a later commit. */

static struct audit_entry
call_entry(const char *session, const char *call, enum audit_decision d)
{
	struct audit_entry e = sample_entry(session, "allowed");

	e.call_id = call;
	e.type = audit_type_id(audit_decision_type(d));
	e.decision = audit_decision_id(d);
	return e;
}

/*
 * Queue e on lane where the timer cannot take it (as if the next append
 * came at once): while the lead looks busy, then due never.
 */
static void
queue_held(struct audit *a, struct audit_lane *lane, const struct audit_entry *e)
{
	struct al_err err;

	pthread_mutex_lock(&a->lock);
	assert_false(a->committing);
	a->committing = true;
	pthread_mutex_unlock(&a->lock);
	assert_int_equal(audit_append_later(a, lane, e, &err), 0);
	pthread_mutex_lock(&a->lock);
	assert_non_null(a->tail);
	assert_ptr_equal(a->tail->lane, lane);
	a->tail->due_ms = INT64_MAX;
	a->committing = false;
	pthread_mutex_unlock(&a->lock);
}

static void
test_later_rides_on_next_commit(void **state)
{
	struct fixture *f = *state;
	struct audit_entry d1 = call_entry("sess-L", "call-1", AUDIT_D_DISPATCH);
	struct audit_entry t1 = call_entry("sess-L", "call-1", AUDIT_D_ALLOWED);
	struct audit_entry d2 = call_entry("sess-L", "call-2", AUDIT_D_DISPATCH);
	struct audit_lane lane = { 0 };
	struct audit *a;
	struct al_err err;
	int64_t seq;
	int commits = 0;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, count_commit, &commits);
	assert_int_equal(audit_append(a, &d1, NULL, &seq, &err), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(commits, 1);
	queue_held(a, &lane, &t1);
	assert_int_equal(lane.pending, 1);
	assert_int_equal(audit_count(a, NULL), 1);	/* queued, not yet in the file */
	assert_int_equal(audit_append(a, &d2, NULL, &seq, &err), 0);
	assert_int_equal(commits, 2);			/* one fsync for both */
	assert_int_equal(seq, 3);			/* the terminal entry went first */
	assert_int_equal(lane.pending, 0);
	assert_false(lane.failed);
	assert_int_equal(audit_count(a, NULL), 3);
	assert_int_equal(audit_lane_settle(a, &lane, &err), 0);
	audit_close(a);
	assert_verify(f->db, true, 3, 0, NULL);
}

static int
lane_pending(struct audit *a, const struct audit_lane *lane)
{
	int n;

	pthread_mutex_lock(&a->lock);
	n = lane->pending;
	pthread_mutex_unlock(&a->lock);
	return n;
}

/* Nobody else commits: the timer does, once it is due. */
static void
test_later_timer_commits(void **state)
{
	struct fixture *f = *state;
	struct audit_entry t = call_entry("sess-T", "call-1", AUDIT_D_ALLOWED);
	struct audit_lane lane = { 0 };
	struct audit *a;
	struct al_err err;
	int i;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_append_later(a, &lane, &t, &err), 0);
	/* The row is in the file when the commit ends; the lane is told just after. */
	for (i = 0; i < 500 && (audit_count(a, NULL) < 1 || lane_pending(a, &lane) > 0); i++)
		poll(NULL, 0, 10);
	assert_int_equal(audit_count(a, NULL), 1);
	assert_int_equal(lane_pending(a, &lane), 0);
	assert_int_equal(audit_lane_settle(a, &lane, &err), 0);
	audit_close(a);
	assert_verify(f->db, true, 1, 0, NULL);
}

/* Settling commits at once; closing commits what is still queued. */
static void
test_later_settle_and_close(void **state)
{
	struct fixture *f = *state;
	struct audit_entry t = call_entry("sess-S", "call-1", AUDIT_D_ALLOWED);
	struct audit_lane lane = { 0 };
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	queue_held(a, &lane, &t);
	assert_int_equal(audit_lane_settle(a, &lane, &err), 0);
	assert_int_equal(audit_count(a, NULL), 1);
	queue_held(a, &lane, &t);
	audit_close(a);
	assert_verify(f->db, true, 2, 0, NULL);
}

/* A lost terminal entry fails its lane: it is reported, and the lane takes no more. */
static void
test_later_failure_sticks(void **state)
{
	struct fixture *f = *state;
	struct audit_entry t = call_entry("sess-F", "call-1", AUDIT_D_ALLOWED);
	struct audit_lane lane = { 0 }, other = { 0 };
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	sqlite3_commit_hook(a->db, refuse_commit, NULL);
	assert_int_equal(audit_append_later(a, &lane, &t, &err), 0);
	assert_int_equal(audit_lane_settle(a, &lane, &err), -1);
	assert_string_equal(err.msg, "audit: cannot append entry");
	assert_true(audit_lane_failed(a, &lane));
	sqlite3_commit_hook(a->db, NULL, NULL);
	assert_int_equal(audit_append_later(a, &lane, &t, &err), -1);
	assert_int_equal(audit_append_later(a, &other, &t, &err), 0);	/* lanes are separate */
	assert_int_equal(audit_lane_settle(a, &other, &err), 0);
	assert_int_equal(audit_count(a, NULL), 1);
	audit_close(a);
}

/* A log of exactly these rows, then verified. */
static void
verify_rows(const char *db, const struct audit_entry *rows, size_t n, struct audit_verify *v)
{
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(db, &a, &err), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(audit_append(a, &rows[i], NULL, NULL, &err), 0);
	audit_close(a);
	assert_int_equal(audit_verify_file(db, v, &err), 0);
}

/*
 * Unknown outcomes: dispatches with no terminal entry, by session; a
 * denied call (no dispatch) and a completed one are not among them.
 */
static void
test_verify_unknown_outcomes(void **state)
{
	struct fixture *f = *state;
	const struct audit_entry rows[] = {
		call_entry("sess-B", "call-b1", AUDIT_D_DISPATCH),
		call_entry("sess-A", "call-a1", AUDIT_D_DISPATCH),
		call_entry("sess-A", "call-a1", AUDIT_D_ALLOWED),
		call_entry("sess-A", "call-a2", AUDIT_D_DISPATCH),
		call_entry("sess-A", "call-a3", AUDIT_D_DENIED),
		call_entry("sess-A", "call-a4", AUDIT_D_DISPATCH),
		call_entry("sess-A", "call-a4", AUDIT_D_ERROR),
	};
	struct audit_verify v;

	verify_rows(f->db, rows, sizeof rows / sizeof rows[0], &v);
	assert_true(v.ok);
	assert_int_equal(v.entries, 7);
	assert_int_equal(v.n_unknown, 2);
	assert_string_equal(v.unknown[0].session_id, "sess-A");
	assert_string_equal(v.unknown[0].call_id, "call-a2");
	assert_int_equal(v.unknown[0].seq, 4);
	assert_string_equal(v.unknown[0].tool, "fs.read");
	assert_string_equal(v.unknown[1].session_id, "sess-B");
	assert_string_equal(v.unknown[1].call_id, "call-b1");
	assert_int_equal(v.unknown[1].seq, 1);
	assert_int_equal(v.decisions[AUDIT_D_DISPATCH], 4);
	assert_int_equal(v.decisions[AUDIT_D_ALLOWED], 1);
	assert_int_equal(v.decisions[AUDIT_D_DENIED], 1);
	assert_int_equal(v.decisions[AUDIT_D_ERROR], 1);
	assert_int_equal(v.unrecognised, 0);
	audit_verify_free(&v);
	assert_null(v.unknown);
}

/*
 * Sessions started and never ended (an engine that died, or one still
 * running): listed oldest first; an ended one and one ended abnormally
 * are not among them.
 */
static void
test_verify_unended_sessions(void **state)
{
	struct fixture *f = *state;
	const struct audit_entry rows[] = {
		call_entry("sess-A", NULL, AUDIT_D_START),
		call_entry("sess-B", NULL, AUDIT_D_START),
		call_entry("sess-C", NULL, AUDIT_D_START),
		call_entry("sess-B", NULL, AUDIT_D_NORMAL),
		call_entry("sess-D", NULL, AUDIT_D_START),
		call_entry("sess-D", NULL, AUDIT_D_ABNORMAL),
	};
	struct audit_verify v;

	verify_rows(f->db, rows, sizeof rows / sizeof rows[0], &v);
	assert_true(v.ok);
	assert_int_equal(v.n_unended, 2);
	assert_string_equal(v.unended[0].session_id, "sess-A");
	assert_int_equal(v.unended[0].seq, 1);
	assert_string_equal(v.unended[1].session_id, "sess-C");
	assert_int_equal(v.unended[1].seq, 3);
	assert_int_equal(v.n_unknown, 0);
	assert_int_equal(v.standing_seq, 0);	/* no engine entry: nothing stood */
	audit_verify_free(&v);
	assert_null(v.unended);
}

/* A policy entry of session's with rule and revision. */
static struct audit_entry
policy_entry(const char *session, const char *rule, int64_t revision)
{
	struct audit_entry e = call_entry(session, NULL, AUDIT_D_APPLIED);

	e.rule = rule;
	e.revision = revision;
	return e;
}

/*
 * What a restarted engine goes on past: the highest revision and held
 * call id of the policy entries, whatever their order and session; a
 * call's revision and a rule that only looks like a hold do not count.
 */
static void
test_policy_highest(void **state)
{
	struct fixture *f = *state;
	struct audit_entry call = call_entry("sess-A", "call-1", AUDIT_D_ALLOWED);
	const struct audit_entry rows[] = {
		policy_entry("sess-A", "hold 12 waiting", 4),
		policy_entry("engine", "standing: 1 revoked", 9),
		policy_entry("sess-B", "hold 7 approved", 5),
		policy_entry("sess-A", "revoke applied", 8),
		policy_entry("sess-A", "holdout 99", 3),
	};
	int64_t revision = -1, hold = -1;
	struct audit *a;
	struct al_err err;
	size_t i;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_policy_highest(a, &revision, &hold), 0);
	assert_int_equal(revision, 0);	/* an empty log */
	assert_int_equal(hold, 0);
	call.revision = 40;	/* a call's is the revision it met, not a change */
	assert_int_equal(audit_append(a, &call, NULL, NULL, &err), 0);
	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		assert_int_equal(audit_append(a, &rows[i], NULL, NULL, &err), 0);
	assert_int_equal(audit_policy_highest(a, &revision, &hold), 0);
	assert_int_equal(revision, 9);
	assert_int_equal(hold, 12);
	audit_close(a);
}

/* An engine's "standing restored" is told by the sets in its detail. */
static void
test_verify_standing_restored(void **state)
{
	struct fixture *f = *state;
	struct audit_entry rows[] = {
		policy_entry("engine", "standing: 1 revoked, 1 flows", 3),
		policy_entry("engine", "standing restored", 3),
	};
	struct audit_verify v;

	rows[1].detail = "{\"revoked\":[{\"tool\":\"store\"}],\"held\":[],"
			 "\"flows\":[\"confidential>public\"],\"frozen\":{\"by\":\"x\"}}";
	verify_rows(f->db, rows, 2, &v);
	assert_true(v.ok);
	assert_int_equal(v.standing_seq, 2);
	assert_string_equal(v.standing_rule, "standing: 1 revoked, 1 flows, frozen");
	audit_verify_free(&v);
}

/*
 * What the next engine takes up: the engine's newest standing entry, not
 * a session's entry with the same words, its rule made printable.
 */
static void
test_verify_standing(void **state)
{
	struct fixture *f = *state;
	const struct audit_entry rows[] = {
		policy_entry("engine", "standing: 1 revoked", 3),
		policy_entry("engine", "standing: 1 revoked, \x1b[2Jfrozen", 5),
		policy_entry("sess-A", "standing: 9 revoked", 6),
		policy_entry("engine", "freeze", 6),
		call_entry("sess-A", NULL, AUDIT_D_START),
	};
	struct audit_verify v;

	verify_rows(f->db, rows, 1, &v);
	assert_true(v.ok);
	assert_int_equal(v.standing_seq, 1);
	assert_int_equal(v.standing_revision, 3);
	assert_string_equal(v.standing_rule, "standing: 1 revoked");
	audit_verify_free(&v);
	/* the same log, all five appended (seq 2 to 6) */
	verify_rows(f->db, rows, sizeof rows / sizeof rows[0], &v);
	assert_true(v.ok);
	assert_int_equal(v.standing_seq, 3);
	assert_int_equal(v.standing_revision, 5);
	assert_null(strchr(v.standing_rule, '\x1b'));
	assert_non_null(strstr(v.standing_rule, "frozen"));
	audit_verify_free(&v);
}

static void
collect_unended(void *ctx, const char *session, const char *start_detail)
{
	char *seen = ctx;

	strncat(seen, session, 200 - strlen(seen) - 2);
	strncat(seen, start_detail ? start_detail : "", 200 - strlen(seen) - 2);
	strcat(seen, " ");
}

/* The engine's own question at start-up: which sessions of its log are open. */
static void
test_unended_query(void **state)
{
	struct fixture *f = *state;
	const struct audit_entry rows[] = {
		call_entry("sess-A", NULL, AUDIT_D_START),
		call_entry("sess-B", NULL, AUDIT_D_START),
		call_entry("sess-B", NULL, AUDIT_D_NORMAL),
		call_entry("sess-C", NULL, AUDIT_D_START),
		call_entry("sess-C", "call-1", AUDIT_D_DISPATCH),
	};
	char seen[200] = "";
	struct audit_entry owned;
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		owned = rows[i];	/* C's start names its owner; A's (an older log's) does not */
		owned.detail = i == 3 ? "{\"o\":1}" : NULL;
		assert_int_equal(audit_append(a, &owned, NULL, NULL, &err), 0);
	}
	assert_int_equal(audit_unended(a, collect_unended, seen), 0);
	audit_close(a);
	assert_true(strstr(seen, "sess-A ") != NULL);
	assert_true(strstr(seen, "sess-C{\"o\":1} ") != NULL);
	assert_null(strstr(seen, "sess-B"));
	assert_int_equal(strlen(seen), strlen("sess-A sess-C{\"o\":1} "));
}

static void
collect_holds(void *ctx, const char *rule, const char *tool)
{
	char *seen = ctx;

	snprintf(seen + strlen(seen), 300 - strlen(seen), "%s/%s;", rule, tool ? tool : "-");
}

/* A restarted engine's other start-up read: one session's held-call entries, in order. */
static void
test_session_holds_query(void **state)
{
	static const char *const rules[] = { "hold 1 waiting", "revoke applied", "hold 1 approved",
					     "hold 2 waiting", "hold 3 waiting" };
	struct fixture *f = *state;
	struct audit_entry e;
	char seen[300] = "";
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		e = call_entry(i == 4 ? "sess-B" : "sess-A", NULL, AUDIT_D_APPLIED);
		e.rule = rules[i];
		e.tool = "store";
		assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	}
	assert_int_equal(audit_session_holds(a, "sess-A", collect_holds, seen), 0);
	audit_close(a);
	assert_string_equal(seen, "hold 1 waiting/store;hold 1 approved/store;hold 2 waiting/store;");
}

/* Names from an edited file reach a terminal only without control bytes. */
static void
test_verify_unknown_sanitized(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = call_entry("sess-\x1b[31m", "call-\x07", AUDIT_D_DISPATCH);
	char long_tool[200];
	struct audit_verify v;
	struct audit *a;
	struct al_err err;

	memset(long_tool, 'x', sizeof long_tool);
	memcpy(long_tool + 62, "\xc3\xa9", 2);	/* a cut at 63 bytes would split it */
	long_tool[sizeof long_tool - 1] = '\0';
	e.tool = long_tool;
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	audit_close(a);
	assert_int_equal(audit_verify_file(f->db, &v, &err), 0);
	assert_int_equal(v.n_unknown, 1);
	assert_string_equal(v.unknown[0].session_id, "sess-?[31m");
	assert_string_equal(v.unknown[0].call_id, "call-?");
	assert_int_equal(strlen(v.unknown[0].tool), 62);	/* before the 2-byte sequence */
	audit_verify_free(&v);
}

/*
 * The vocabulary is one table, and verify knows all of it: an entry of
 * every decision is counted under it; anything else is unrecognised.
 */
static void
test_vocabulary(void **state)
{
	struct fixture *f = *state;
	/* As stored: the words readers of old logs know, written out. */
	const char *const types[] = { "session_start", "admission", "dispatch",
				      "call", "session_end", "policy", "reap" };
	struct audit_entry e = sample_entry("sess-V", NULL);
	bool type_used[AUDIT_T_COUNT] = { false };
	struct audit_verify v;
	struct audit *a;
	struct al_err err;
	int d, t;

	assert_int_equal(sizeof types / sizeof types[0], AUDIT_T_COUNT);
	for (t = 0; t < AUDIT_T_COUNT; t++)
		assert_string_equal(types[t], audit_type_id((enum audit_type)t));
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (d = 0; d < AUDIT_D_COUNT; d++) {
		e.call_id = "call-v";
		e.type = audit_type_id(audit_decision_type((enum audit_decision)d));
		e.decision = audit_decision_id((enum audit_decision)d);
		assert_int_equal(audit_decision_lookup(e.type, e.decision), d);
		type_used[audit_decision_type((enum audit_decision)d)] = true;
		assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	}
	for (t = 0; t < AUDIT_T_COUNT; t++)
		assert_true(type_used[t]);		/* every type has a decision */
	e.type = audit_type_id(AUDIT_T_CALL);
	e.decision = "maybe";
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	e.decision = "start";			/* a session_start decision on a call */
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	audit_close(a);
	assert_int_equal(audit_verify_file(f->db, &v, &err), 0);
	assert_true(v.ok);
	for (d = 0; d < AUDIT_D_COUNT; d++)
		assert_int_equal(v.decisions[d], 1);
	assert_int_equal(v.unrecognised, 2);
	audit_verify_free(&v);
	assert_int_equal(audit_decision_lookup(audit_type_id(AUDIT_T_CALL), NULL), AUDIT_D_COUNT);
	/* The console names a cutover result as the policy decision it is audited as. */
	assert_int_equal(audit_decision_lookup("policy", cutover_result_id(CUTOVER_APPLIED)),
			 AUDIT_D_APPLIED);
	assert_int_equal(audit_decision_lookup("policy",
					       cutover_result_id(CUTOVER_NOT_APPLICABLE)),
			 AUDIT_D_NOT_APPLICABLE);
	assert_int_equal(audit_decision_lookup("policy", cutover_result_id(CUTOVER_REJECTED)),
			 AUDIT_D_REJECTED);
	assert_string_equal(audit_decision_id(AUDIT_D_COUNT), "unknown");
}

/* A caller's pre-drawn entry id is used as it is; a malformed one fails alone. */
static void
test_entry_id_given(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-I", NULL);
	char id[33];
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	e.entry_id = "00112233445566778899aabbccddeeff";
	assert_int_equal(audit_append(a, &e, id, NULL, &err), 0);
	assert_string_equal(id, e.entry_id);
	e.entry_id = "0011223344556677";
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	e.entry_id = "00112233445566778899AABBCCDDEEFF";
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), -1);
	audit_close(a);
	assert_verify(f->db, true, 1, 0, NULL);
}

/*
 * The WAL stays bounded over many commits: checkpointed every
 * AUDIT_CHECKPOINT_PAGES and truncated to AUDIT_WAL_LIMIT. Without the
 * checkpoint, 1500 commits of at least two pages each would leave a WAL of
 * several MiB.
 */
static void
test_wal_bounded(void **state)
{
	struct fixture *f = *state;
	char wal[128];
	struct audit *a;
	struct al_err err;
	struct stat st;
	off_t most = 0;
	int i;

	snprintf(wal, sizeof wal, "%s-wal", f->db);
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(raw_int(a->db, "PRAGMA wal_autocheckpoint"), AUDIT_CHECKPOINT_PAGES);
	assert_int_equal(raw_int(a->db, "PRAGMA journal_size_limit"), AUDIT_WAL_LIMIT);
	for (i = 0; i < 15; i++) {
		append_n(a, "sess-W", "allowed", 100);
		assert_int_equal(stat(wal, &st), 0);	/* there is a WAL to measure */
		if (st.st_size > most)
			most = st.st_size;
	}
	assert_true(most > 0);
	assert_true(most <= AUDIT_WAL_LIMIT);
	assert_int_equal(audit_count(a, NULL), 1500);
	audit_close(a);
	assert_verify(f->db, true, 1500, 0, NULL);
}

/*
 * A commit does not read the chain head back while the file is as this
 * connection left it. Two logs open on one file take turns, and a third
 * comes and goes between two appends of the first: every append must
 * still link to the true head (a stale one would reuse a sequence, and
 * the insert fail, or break the chain).
 */
static void
test_head_followed_across_writers(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-H", NULL);
	struct audit *a, *b, *c;
	struct al_err err;
	int64_t seq = 0, want = 0;
	int i;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_open(f->db, &b, &err), 0);
	for (i = 0; i < 20; i++) {
		assert_int_equal(audit_append(i % 3 ? a : b, &e, NULL, &seq, &err), 0);
		assert_int_equal(seq, ++want);
	}
	audit_close(b);
	assert_int_equal(audit_append(a, &e, NULL, &seq, &err), 0);
	assert_int_equal(seq, ++want);
	assert_int_equal(audit_open(f->db, &c, &err), 0);
	assert_int_equal(audit_append(c, &e, NULL, &seq, &err), 0);
	assert_int_equal(seq, ++want);
	audit_close(c);
	assert_int_equal(audit_append(a, &e, NULL, &seq, &err), 0);
	assert_int_equal(seq, ++want);
	audit_close(a);
	assert_verify(f->db, true, want, 0, NULL);
}

/* --- the payload key ---------------------------------------------------------- */

static void
key_of(const char *path, unsigned char key[AUDIT_KEY_LEN])
{
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(path, &a, &err), 0);
	assert_int_equal(audit_payload_key(a, key), 0);
	audit_close(a);
}

/*
 * A new log has a 32-byte random key, stored in it (read back from the
 * file as the one the writer uses); reopening gives the same key, another
 * log another.
 */
static void
test_payload_key(void **state)
{
	static const unsigned char zero[AUDIT_KEY_LEN];
	unsigned char k1[AUDIT_KEY_LEN], k2[AUDIT_KEY_LEN], stored[AUDIT_KEY_LEN];
	struct fixture *f = *state;
	char other[128];
	sqlite3 *db;

	key_of(f->db, k1);
	assert_memory_not_equal(k1, zero, sizeof zero);
	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM audit_key"), 1);
	assert_int_equal(raw_int(db, "SELECT length(key) FROM audit_key"), AUDIT_KEY_LEN);
	sqlite3_close(db);
	assert_null(audit_read_key(f->db, stored));
	assert_memory_equal(stored, k1, sizeof k1);
	key_of(f->db, k2);
	assert_memory_equal(k2, k1, sizeof k1);
	snprintf(other, sizeof other, "%s/other.db", f->dir);
	key_of(other, k2);
	assert_memory_not_equal(k2, k1, sizeof k1);
	assert_int_equal(audit_payload_key(NULL, k2), -1);
}

/* Written once: UPDATE and DELETE refused, REPLACE and a second row are nothing. */
static void
test_payload_key_written_once(void **state)
{
	unsigned char k1[AUDIT_KEY_LEN], k2[AUDIT_KEY_LEN];
	struct fixture *f = *state;
	sqlite3 *db;

	key_of(f->db, k1);
	db = raw_open(f->db);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE audit_key SET key = zeroblob(32)",
					  NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(db, "DELETE FROM audit_key", NULL, NULL, NULL),
			     SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT OR REPLACE INTO audit_key VALUES"
				      " (1, zeroblob(32))", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT OR IGNORE INTO audit_key VALUES"
				      " (2, zeroblob(32))", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM audit_key"), 1);
	sqlite3_close(db);
	key_of(f->db, k2);
	assert_memory_equal(k2, k1, sizeof k1);
}

/*
 * A log an older version made (no key table) gets its key at the first
 * open of a writer, its entries untouched; a reader never makes one.
 */
static void
test_payload_key_older_log(void **state)
{
	unsigned char key[AUDIT_KEY_LEN];
	struct fixture *f = *state;
	sqlite3 *db;

	make_log(f->db, "sink_ceiling", 3);
	raw_exec(f->db, "DROP TRIGGER audit_key_no_update; DROP TRIGGER audit_key_no_delete;"
		 "DROP TRIGGER audit_key_once; DROP TABLE audit_key;");
	assert_verify(f->db, true, 3, 0, NULL);
	assert_string_equal(audit_read_key(f->db, key), AUDIT_READ_ERR_NO_KEY);
	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'audit_key'"), 0);
	sqlite3_close(db);
	key_of(f->db, key);
	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM audit_key"), 1);
	sqlite3_close(db);
	assert_verify(f->db, true, 3, 0, NULL);
}

/*
 * A key deleted by hand (its triggers dropped first) beside entries: the
 * writer refuses the log rather than draw a new key, under which every
 * hash already written could never be matched again.
 */
static void
test_payload_key_removed(void **state)
{
	struct fixture *f = *state;
	struct audit *a = NULL;
	struct al_err err;

	make_log(f->db, "sink_ceiling", 3);
	raw_exec(f->db, "DROP TRIGGER audit_key_no_delete; DELETE FROM audit_key;"
		 AUDIT_KEY_TRIGGERS(AUDIT_CREATE_TRIGGER));
	assert_int_equal(audit_open(f->db, &a, &err), -1);
	assert_null(a);
	assert_string_equal(err.msg, AUDIT_ERR_KEY_LOST);
}

/*
 * A trigger planted by hand runs inside every insert: one that drops each
 * entry (RAISE(IGNORE)) let the writer answer success while nothing was
 * written, and verify said "chain ok". The writer refuses such a file at
 * open, and an insert that wrote no row fails its append (a trigger
 * planted while the writer runs); the readers refuse it; verify says so
 * once the chain walk has found nothing else.
 */
#define DROP_EVERY_INSERT "CREATE TRIGGER x BEFORE INSERT ON audit_entries" \
			  " BEGIN SELECT RAISE(IGNORE); END;"

static void
test_planted_trigger(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-T", NULL);
	struct audit_timeline tl;
	struct audit *a = NULL;
	struct al_err err;
	int64_t seq = 0;
	char other[160];

	make_log(f->db, "sink_ceiling", 3);
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	raw_exec(f->db, DROP_EVERY_INSERT);
	assert_int_equal(audit_append(a, &e, NULL, &seq, &err), -1);
	audit_close(a);
	a = NULL;
	assert_int_equal(audit_open(f->db, &a, &err), -1);
	assert_string_equal(err.msg, AUDIT_ERR_ALTERED);
	assert_verify(f->db, false, 3, 0, "altered by hand: its triggers or views are not the writer's");
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), -1);
	assert_non_null(strstr(err.msg, AUDIT_READ_ERR_ALTERED));
	/* the writer's own trigger with other text is the same */
	snprintf(other, sizeof other, "%s/other.db", f->dir);
	make_log(other, "sink_ceiling", 3);
	raw_exec(other, "DROP TRIGGER audit_entries_no_delete;"
		 "CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries"
		 " BEGIN SELECT 1; END;");
	assert_int_equal(audit_open(other, &a, &err), -1);
	assert_string_equal(err.msg, AUDIT_ERR_ALTERED);
	/* and one dropped, not put back */
	snprintf(other, sizeof other, "%s/dropped.db", f->dir);
	make_log(other, "sink_ceiling", 3);
	raw_exec(other, "DROP TRIGGER audit_entries_no_update;");
	assert_verify(other, false, 3, 0, "altered by hand: its triggers or views are not the writer's");
}

/*
 * A log others may write (group or world, or another owner than the
 * engine's uid or root) could have its chain rewritten or a trigger
 * planted behind the engine: the writer refuses it, naming mode and owner.
 */
static void
test_log_others_may_write(void **state)
{
	struct fixture *f = *state;
	struct audit *a = NULL;
	struct al_err err;
	char want[160];

	make_log(f->db, "sink_ceiling", 2);
	assert_int_equal(chmod(f->db, 0666), 0);
	assert_int_equal(audit_open(f->db, &a, &err), -1);
	snprintf(want, sizeof want, "audit: the log may be written by others than its engine"
		 " (mode 0666, owner uid %u): chmod 600 it and chown it to the engine's user",
		 (unsigned)geteuid());
	assert_string_equal(err.msg, want);
	assert_int_equal(chmod(f->db, 0620), 0);
	assert_int_equal(audit_open(f->db, &a, &err), -1);
	assert_int_equal(chmod(f->db, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(f->db, 65534, 65534), 0);
		assert_int_equal(audit_open(f->db, &a, &err), -1);
		assert_non_null(strstr(err.msg, "(mode 0600, owner uid 65534)"));
		assert_int_equal(chown(f->db, 0, 0), 0);
	}
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	audit_close(a);
}

/*
 * What readers print: controls a terminal obeys (C0, DEL, and C1, which
 * UTF-8 carries as C2 80..C2 9F) and bytes that are not UTF-8 become '?';
 * other characters stay whole, and the text is always fit for JSON.
 */
static void
test_read_text_controls(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\x1b[31mb", "a?[31mb" },
		{ "s-\xc2\x9b" "31m", "s-?31m" },		/* U+009B, the CSI */
		{ "\xc2\x9d" "0;x\x07", "?0;x?" },		/* U+009D, OSC, and BEL */
		{ "raw\x9b" "31m", "raw?31m" },		/* not UTF-8 */
		{ "\xc0\xaf", "??" },				/* overlong */
		{ "\xed\xa0\x80", "???" },			/* a surrogate */
		{ "caf\xc3\xa9 \xe2\x82\xac \xc2\xa0", "caf\xc3\xa9 \xe2\x82\xac \xc2\xa0" },
		{ "ab\xe2\x82", "ab??" },			/* cut short */
		{ "del\x7f", "del?" },
		{ "a\xe2\x80\xae" "cba", "a?cba" },		/* U+202E, right-to-left override */
		{ "s\xe2\x80\x8bid\xef\xbb\xbf", "s?id?" },	/* a zero-width space, a BOM */
		{ "\xe2\x81\xa6x\xe2\x81\xa9\xc2\xad", "?x??" },	/* an isolate, its pop, a soft hyphen */
	};
	char out[64];
	json_t *j;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		audit_read_text(out, sizeof out, cases[i].in);
		assert_string_equal(out, cases[i].out);
		assert_non_null(j = json_string(out));
		json_decref(j);
	}
	audit_read_text(out, 3, "a\xe2\x82\xac");	/* cut on a character's boundary */
	assert_string_equal(out, "a");
}

/* A session id with a C1 control, as the writer takes it: the timeline shows '?'. */
static void
test_timeline_shows_no_control(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("s-\xc2\x9b" "31m", NULL);
	struct audit_timeline tl;
	struct audit *a;
	struct al_err err;

	e.type = audit_type_id(AUDIT_T_SESSION_START);
	e.call_id = e.tool = e.decision = NULL;
	assert_int_equal(audit_open(f->db, &a, &err), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
	audit_close(a);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_string_equal(tl.v[0].session, "s-?31m");
	audit_timeline_free(&tl);
}

/*
 * A view in audit_entries' place (the table renamed) can loop for good;
 * verify says so before it walks, and the writer and readers refuse.
 */
static void
test_view_in_place_of_table(void **state)
{
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct audit *a = NULL;
	struct al_err err;

	make_log(f->db, "sink_ceiling", 3);
	raw_exec(f->db, DROP_TRIGGERS "ALTER TABLE audit_entries RENAME TO real_entries;"
		 "CREATE VIEW audit_entries AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
		 " SELECT x + 1 FROM c) SELECT r.* FROM real_entries r, c WHERE c.x < 0;");
	assert_verify(f->db, false, 0, 0, "altered by hand: audit_entries or audit_key is not a table");
	assert_int_equal(audit_open(f->db, &a, &err), -1);
	assert_string_equal(err.msg, AUDIT_ERR_ALTERED);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), -1);
	assert_non_null(strstr(err.msg, AUDIT_READ_ERR_ALTERED));
}

/*
 * No randomness (in a child): a new log does not open, with the fixed
 * text, and holds no key; a log that has its key still opens.
 */
static void
test_payload_key_no_randomness(void **state)
{
	struct fixture *f = *state;
	char fresh[128];
	int status = -1;
	pid_t pid;

	make_log(f->db, "sink_ceiling", 1);
	snprintf(fresh, sizeof fresh, "%s/fresh.db", f->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct audit *a = NULL;
		struct al_err err;
		int bad;

		if (no_random_here() < 0)
			_exit(2);
		bad = audit_open(fresh, &a, &err) != -1 || a ||
		      strcmp(err.msg, "audit: no randomness for the log's payload key") != 0;
		if (!bad && audit_open(f->db, &a, &err) == 0)
			audit_close(a);
		else
			bad = 1;
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(audit_read_key(fresh, (unsigned char[AUDIT_KEY_LEN]){ 0 }),
			    AUDIT_READ_ERR_NO_KEY);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_concurrent_appends),
		T(test_group_commit),
		T(test_lone_appends_commit_alone),
		T(test_batch_fails_whole),
		T(test_batch_bounded),
		T(test_close_drains),
		T(test_entry_shape),
		T(test_pragmas),
		T(test_triggers_refuse),
		T(test_tamper_update),
		T(test_tamper_type_change),
		T(test_tamper_delete),
		T(test_tamper_delete_first),
		T(test_tamper_relink),
		T(test_anchor_cut_tail),
		T(test_anchor_rewritten_tail),
		T(test_writer_head),
		T(test_log_deleted_while_open),
		cmocka_unit_test(test_anchor_parse),
		T(test_tamper_file_bytes),
		T(test_tamper_index_page),
		T(test_crash_durability),
		T(test_crash_durability_concurrent),
		T(test_canary_only_hashed),
		T(test_errors_fixed_text),
		T(test_other_sqlite_db),
		cmocka_unit_test(test_timestamp_format),
		T(test_later_rides_on_next_commit),
		T(test_later_timer_commits),
		T(test_later_settle_and_close),
		T(test_later_failure_sticks),
		T(test_verify_unknown_outcomes),
		T(test_verify_unended_sessions),
		T(test_verify_standing),
		T(test_verify_standing_restored),
		T(test_policy_highest),
		T(test_unended_query),
		T(test_session_holds_query),
		T(test_verify_unknown_sanitized),
		T(test_vocabulary),
		T(test_entry_id_given),
		T(test_wal_bounded),
		T(test_head_followed_across_writers),
		T(test_mixed_lanes_concurrent),
		T(test_indexed_log_verifies),
		T(test_duplicate_entry_id),
		T(test_payload_key),
		T(test_payload_key_written_once),
		T(test_payload_key_older_log),
		T(test_payload_key_removed),
		T(test_planted_trigger),
		T(test_view_in_place_of_table),
		T(test_log_others_may_write),
		T(test_read_text_controls),
		T(test_timeline_shows_no_control),
		T(test_payload_key_no_randomness),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
