#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "audit.h"
#include "audit_tail.h"

#include "sample_entry.h"
#include "audit_fixture.h"

/*
 * The console's audit tail, read back from logs written by the real writer
 * (audit_open/audit_append), also while a writer thread appends. SQL here
 * only reads what the writer stored, or makes files that are not audit logs.
 */

/* Short enough to fit whole in any text field of a row, and not hex. */
#define CANARY		"Qz7CNRY"
#define REQ_HASH	"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define RESP_HASH	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define CONC_N		2000
#define CONC_PAGE	64

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct audit_entry
call_entry(const char *session)
{
	struct audit_entry e = sample_entry(session, "allowlisted");

	e.response_hash = RESP_HASH;
	return e;
}

static struct audit *
writer_open(const struct fixture *f)
{
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	return a;
}

static int64_t
append(struct audit *a, const struct audit_entry *e)
{
	struct al_err err;
	int64_t seq = 0;

	assert_int_equal(audit_append(a, e, NULL, &seq, &err), 0);
	return seq;
}

static void
append_n(struct audit *a, const char *session, int n)
{
	struct audit_entry e = call_entry(session);
	int i;

	for (i = 0; i < n; i++)
		append(a, &e);
}

static struct audit_tail *
tail_open(const struct fixture *f)
{
	struct audit_tail *t;
	struct al_err err;

	assert_int_equal(audit_tail_open(f->db, &t, &err), 0);
	assert_non_null(t);
	return t;
}

/* The stored text of one column of one entry, through a connection of our own. */
static void
stored_text(const char *db, int64_t seq, const char *col, char *out, size_t cap)
{
	char sql[128];
	sqlite3 *h;
	sqlite3_stmt *st;

	snprintf(sql, sizeof sql, "SELECT %s FROM audit_entries WHERE seq = ?", col);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, seq);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static bool
is_hex16(const char *s)
{
	return strlen(s) == 16 && strspn(s, "0123456789abcdef") == 16;
}

static void
test_empty_log(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t = tail_open(f);
	struct audit_row rows[4];
	size_t n = 99;

	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 4, &n), 0);
	assert_int_equal(n, 0);
	n = 99;
	assert_int_equal(audit_tail_last(t, 4, NULL, rows, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(audit_tail_max_seq(t), 0);
	assert_string_equal(audit_tail_error(t), "");
	audit_tail_close(t);
	audit_close(a);
}

static void
test_after_in_order(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[32];
	size_t n, i;

	append_n(a, "sess-A", 10);
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 3, NULL, rows, 32, &n), 0);
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++) {
		assert_int_equal(rows[i].seq, 4 + (int64_t)i);
		assert_string_equal(rows[i].session, "sess-A");
		assert_string_equal(rows[i].call, "call-0001");
		assert_string_equal(rows[i].type, audit_type_id(AUDIT_T_CALL));
		assert_string_equal(rows[i].tool, "fs.read");
		assert_string_equal(rows[i].decision, "allowed");
		assert_string_equal(rows[i].rule, "allowlisted");
		assert_int_equal(rows[i].revision, 7);
		assert_int_equal(rows[i].latency_us, 1234);
		/* 2026-11-30T07:50:46.123456Z */
		assert_int_equal(strlen(rows[i].time), 27);
		assert_int_equal(rows[i].time[26], 'Z');
	}
	assert_int_equal(audit_tail_read(t, 10, NULL, rows, 32, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(audit_tail_max_seq(t), 10);
	audit_tail_close(t);
	audit_close(a);
}

static void
test_paging_exactly_once(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[4];
	int64_t after = 0;
	size_t n, i;
	int calls = 0;

	append_n(a, "sess-A", 25);
	t = tail_open(f);
	do {
		assert_int_equal(audit_tail_read(t, after, NULL, rows, 4, &n), 0);
		assert_true(n <= 4);
		for (i = 0; i < n; i++) {
			assert_int_equal(rows[i].seq, after + 1);
			after = rows[i].seq;
		}
		calls++;
	} while (n > 0 && calls < 100);
	assert_int_equal(after, 25);
	assert_int_equal(calls, 8);	/* 6 full pages, 1 of 1, 1 empty */
	/* cap 0 asks for nothing and is not an error */
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 0, &n), 0);
	assert_int_equal(n, 0);
	audit_tail_close(t);
	audit_close(a);
}

static void
test_session_filter(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[32];
	size_t n, i;
	int k;

	for (k = 0; k < 10; k++)
		append_n(a, k % 2 ? "sess-B" : "sess-A", 1);	/* B holds 2,4,…,10 */
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 0, "sess-B", rows, 32, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(rows[i].seq, 2 * (int64_t)(i + 1));
		assert_string_equal(rows[i].session, "sess-B");
	}
	assert_int_equal(audit_tail_read(t, 5, "sess-A", rows, 2, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].seq, 7);
	assert_int_equal(rows[1].seq, 9);
	assert_int_equal(audit_tail_last(t, 2, "sess-B", rows, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].seq, 8);
	assert_int_equal(rows[1].seq, 10);
	assert_int_equal(audit_tail_read(t, 0, "sess-none", rows, 32, &n), 0);
	assert_int_equal(n, 0);
	audit_tail_close(t);
	audit_close(a);
}

/*
 * A session as an operator types it: a unique prefix (with or without
 * "s-") of one that started in the log picks its whole id; two that share
 * it are refused in ids.h's words; a name no started session has (the
 * engine's own entries) is none, for the caller to use as typed.
 */
static void
test_pick_session(void **state)
{
	static const char *const started[] = { "s-aaaa1111deadbeef", "s-aaaa2222deadbeef",
						"s-bbbb3333deadbeef" };
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_entry start = { .type = audit_type_id(AUDIT_T_SESSION_START),
				     .decision = audit_decision_id(AUDIT_D_START) };
	struct audit_tail *t;
	char id[SNAP_ID_MAX], why[128];

	for (size_t i = 0; i < 3; i++) {
		start.session_id = started[i];
		append(a, &start);
		append_n(a, started[i], 2);
	}
	append_n(a, "engine", 1);
	t = tail_open(f);
	assert_int_equal(audit_tail_pick_session(t, "s-bbbb", id, why, sizeof why), 1);
	assert_string_equal(id, "s-bbbb3333deadbeef");
	assert_int_equal(audit_tail_pick_session(t, "aaaa2", id, why, sizeof why), 1);
	assert_string_equal(id, "s-aaaa2222deadbeef");
	assert_int_equal(audit_tail_pick_session(t, "s-aaaa1111deadbeef", id, why, sizeof why), 1);
	assert_string_equal(id, "s-aaaa1111deadbeef");
	assert_int_equal(audit_tail_pick_session(t, "s-aaaa", id, why, sizeof why), -1);
	assert_string_equal(why, "ambiguous session id prefix 's-aaaa': 2 sessions match");
	assert_int_equal(audit_tail_pick_session(t, "engine", id, why, sizeof why), 0);
	assert_int_equal(audit_tail_pick_session(t, "zz", id, why, sizeof why), 0);
	assert_string_equal(id, "");
	audit_tail_close(t);
	audit_close(a);
}

static void
test_last(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[64];
	size_t n, i;

	append_n(a, "sess-A", 30);
	t = tail_open(f);
	assert_int_equal(audit_tail_last(t, 5, NULL, rows, &n), 0);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++)
		assert_int_equal(rows[i].seq, 26 + (int64_t)i);
	/* cap above the count: the whole log, still ascending */
	assert_int_equal(audit_tail_last(t, 64, NULL, rows, &n), 0);
	assert_int_equal(n, 30);
	for (i = 0; i < n; i++)
		assert_int_equal(rows[i].seq, 1 + (int64_t)i);
	/* and following on from the newest row finds only what comes next */
	append_n(a, "sess-A", 3);
	assert_int_equal(audit_tail_read(t, rows[n - 1].seq, NULL, rows, 64, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].seq, 31);
	assert_int_equal(audit_tail_max_seq(t), 33);
	audit_tail_close(t);
	audit_close(a);
}

static void
test_hash_prefixes(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[8];
	char stored[128];
	size_t n, i;

	append_n(a, "sess-A", 3);
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 8, &n), 0);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++) {
		assert_true(is_hex16(rows[i].request_hash));
		assert_true(is_hex16(rows[i].response_hash));
		assert_true(is_hex16(rows[i].entry_hash));
		assert_memory_equal(rows[i].request_hash, REQ_HASH, 16);
		assert_memory_equal(rows[i].response_hash, RESP_HASH, 16);
		stored_text(f->db, rows[i].seq, "entry_hash", stored, sizeof stored);
		assert_int_equal(strlen(stored), 64);
		assert_memory_equal(rows[i].entry_hash, stored, 16);
	}
	/* chained entries: each entry hash differs */
	assert_string_not_equal(rows[0].entry_hash, rows[1].entry_hash);
	audit_tail_close(t);
	audit_close(a);
}

static void
test_null_columns(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_entry e = { .session_id = "sess-A", .type = audit_type_id(AUDIT_T_SESSION_START) };
	struct audit_tail *t;
	struct audit_row rows[2];
	size_t n;

	append(a, &e);
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 2, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].session, "sess-A");
	assert_string_equal(rows[0].type, audit_type_id(AUDIT_T_SESSION_START));
	assert_string_equal(rows[0].call, "");
	assert_string_equal(rows[0].tool, "");
	assert_string_equal(rows[0].decision, "");
	assert_string_equal(rows[0].rule, "");
	assert_string_equal(rows[0].request_hash, "");
	assert_string_equal(rows[0].response_hash, "");
	assert_true(is_hex16(rows[0].entry_hash));	/* never NULL */
	assert_int_equal(rows[0].revision, 0);
	assert_int_equal(rows[0].latency_us, 0);
	audit_tail_close(t);
	audit_close(a);
}

/*
 * Stored strings are bounded to the row's fields, cut on a UTF-8 boundary,
 * and lose control bytes; a hash column that is not hex shows as none.
 */
static void
test_bounded_and_sanitized(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_entry e = call_entry("sess-A");
	char tool[160];
	struct audit_tail *t;
	struct audit_row rows[2];
	size_t n, len;

	/* 62 ASCII bytes, then "é" (2 bytes) straddling the 63-byte bound */
	memset(tool, 'x', 62);
	snprintf(tool + 62, sizeof tool - 62, "\xc3\xa9tail");
	e.tool = tool;
	e.rule = "ru\x1b[2Jle";
	e.request_hash = "not-a-hash-not-a-hash";
	append(a, &e);
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 2, &n), 0);
	assert_int_equal(n, 1);
	len = strlen(rows[0].tool);
	assert_int_equal(len, 62);
	assert_memory_equal(rows[0].tool, tool, 62);
	assert_string_equal(rows[0].rule, "ru?[2Jle");
	assert_string_equal(rows[0].request_hash, "");
	assert_true(is_hex16(rows[0].response_hash));
	audit_tail_close(t);
	audit_close(a);
}

/* The canary sits in detail, the one column that may hold most: none of it. */
static void
test_canary_not_exposed(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_entry e = call_entry("sess-A");
	struct audit_tail *t;
	struct audit_row rows[16];
	size_t n, i;
	int k;

	e.detail = "{\"c\":\"" CANARY "\"}";	/* 15 bytes: fits any field */
	for (k = 0; k < 8; k++)
		append(a, &e);
	t = tail_open(f);
	memset(rows, 0, sizeof rows);
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 16, &n), 0);
	assert_int_equal(n, 8);
	for (i = 0; i < 16; i++)
		assert_null(memmem(&rows[i], sizeof rows[i], CANARY, strlen(CANARY)));
	memset(rows, 0, sizeof rows);
	assert_int_equal(audit_tail_last(t, 16, "sess-A", rows, &n), 0);
	assert_int_equal(n, 8);
	for (i = 0; i < 16; i++)
		assert_null(memmem(&rows[i], sizeof rows[i], CANARY, strlen(CANARY)));
	/* and the canary really is in the file, so the check above means something */
	{
		char stored[256];

		stored_text(f->db, 1, "detail", stored, sizeof stored);
		assert_non_null(strstr(stored, CANARY));
	}
	audit_tail_close(t);
	audit_close(a);
}

/*
 * Between calls the tail holds no read transaction: a TRUNCATE checkpoint,
 * which must wait for every reader's snapshot, completes at once (busy 0)
 * even after a read that stopped at its cap.
 */
static void
test_no_snapshot_held(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[4];
	sqlite3 *h;
	sqlite3_stmt *st;
	size_t n;

	append_n(a, "sess-A", 20);
	t = tail_open(f);
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 4, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(audit_tail_last(t, 4, NULL, rows, &n), 0);
	assert_int_equal(sqlite3_open_v2(f->db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	/* the tail still reads after the WAL was reset under it */
	append_n(a, "sess-A", 2);
	assert_int_equal(audit_tail_read(t, 20, NULL, rows, 4, &n), 0);
	assert_int_equal(n, 2);
	audit_tail_close(t);
	audit_close(a);
}

struct writer {
	struct audit *a;
	int n;
	int failures;
	int64_t max_us, total_us;
	atomic_bool done;
};

static void *
writer_run(void *arg)
{
	struct writer *w = arg;
	struct audit_entry e = call_entry("sess-W");
	struct al_err err;
	int64_t t0, dt;
	int i;

	for (i = 0; i < w->n; i++) {
		t0 = now_us();
		if (audit_append(w->a, &e, NULL, NULL, &err) < 0)
			w->failures++;
		dt = now_us() - t0;
		w->total_us += dt;
		if (dt > w->max_us)
			w->max_us = dt;
	}
	atomic_store(&w->done, true);
	return NULL;
}

struct reader {
	int reads;
	int64_t max_us;
	const char *bad;	/* what went wrong, or NULL */
};

/*
 * Pages the log as the writer fills it; every sequence once, in order.
 * No assert in here: a failure must not jump out while the writer thread
 * still uses the test's stack. Returns the last sequence seen in order.
 */
static int64_t
reader_follow(struct audit_tail *t, struct writer *w, struct reader *r)
{
	struct audit_row rows[CONC_PAGE];
	int64_t after = 0, deadline = now_us() + 120 * 1000000LL, t0, dt;
	size_t n, i;
	bool done;

	while (!r->bad && after < w->n && now_us() < deadline) {
		/* Before the read: an empty read after "done" then means the end. */
		done = atomic_load(&w->done);
		t0 = now_us();
		if (audit_tail_read(t, after, NULL, rows, CONC_PAGE, &n) < 0)
			r->bad = "read failed";
		dt = now_us() - t0;
		if (dt > r->max_us)
			r->max_us = dt;
		for (i = 0; !r->bad && i < n; i++) {
			if (rows[i].seq != after + 1)
				r->bad = "sequence out of order, repeated or missing";
			after = rows[i].seq;
		}
		r->reads++;
		if (n == 0 && done)
			break;
		if (n == 0)
			usleep(100);
	}
	return after;
}

static void
print_writer(const char *what, const struct writer *w)
{
	print_message("%s: %d appends, max %lld us, mean %lld us\n", what, w->n,
		      (long long)w->max_us, (long long)(w->total_us / (w->n ? w->n : 1)));
}

/* The same appends with no reader, on a log of their own: the yardstick. */
static void
writer_baseline(const struct fixture *f)
{
	struct writer w = { .n = CONC_N };
	struct al_err err;
	char path[128];

	snprintf(path, sizeof path, "%s/base.db", f->dir);
	assert_int_equal(audit_open(path, &w.a, &err), 0);
	atomic_init(&w.done, false);
	writer_run(&w);
	audit_close(w.a);
	print_writer("writer alone", &w);
	assert_int_equal(w.failures, 0);
}

static void
test_concurrent_writer(void **state)
{
	struct fixture *f = *state;
	struct writer w = { .n = CONC_N };
	struct audit_tail *t;
	struct audit_row rows[CONC_PAGE];
	pthread_t th;
	struct reader r = { 0 };
	int64_t seen;
	size_t n;

	writer_baseline(f);
	w.a = writer_open(f);
	atomic_init(&w.done, false);
	t = tail_open(f);
	assert_int_equal(pthread_create(&th, NULL, writer_run, &w), 0);
	seen = reader_follow(t, &w, &r);
	pthread_join(th, NULL);
	print_writer("writer under concurrent reads", &w);
	print_message("reader: %d reads, max %lld us\n", r.reads, (long long)r.max_us);
	if (r.bad)
		fail_msg("%s", r.bad);
	assert_int_equal(w.failures, 0);
	assert_int_equal(seen, CONC_N);
	assert_int_equal(audit_tail_last(t, CONC_PAGE, "sess-W", rows, &n), 0);
	assert_int_equal(n, CONC_PAGE);
	assert_int_equal(rows[n - 1].seq, CONC_N);
	audit_tail_close(t);
	audit_close(w.a);
}

static void
test_missing_file(void **state)
{
	struct fixture *f = *state;
	struct audit_tail *t = (struct audit_tail *)&t;
	struct al_err err;
	char wal[128];

	assert_int_equal(audit_tail_open(f->db, &t, &err), -1);
	assert_null(t);
	assert_string_equal(err.msg, AUDIT_TAIL_ERR_OPEN);
	assert_int_equal(access(f->db, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(wal, sizeof wal, "%s-wal", f->db);
	assert_int_equal(access(wal, F_OK), -1);
	assert_int_equal(audit_tail_open(NULL, &t, &err), -1);
	assert_string_equal(err.msg, AUDIT_TAIL_ERR_OPEN);
}

static void
make_file(const char *path, const char *bytes)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(bytes, fp);
	fclose(fp);
}

static void
expect_not_audit(const char *path, const char *secret)
{
	struct audit_tail *t = (struct audit_tail *)&t;
	struct al_err err;

	assert_int_equal(audit_tail_open(path, &t, &err), -1);
	assert_null(t);
	assert_string_equal(err.msg, AUDIT_TAIL_ERR_NOT_AUDIT);
	if (secret)
		assert_null(strstr(err.msg, secret));
}

/* Another SQLite database, a file that is not SQLite, an empty file. */
static void
test_not_audit_db(void **state)
{
	struct fixture *f = *state;
	char path[128];
	sqlite3 *h;

	snprintf(path, sizeof path, "%s/other.db", f->dir);
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "CREATE TABLE notes (secret TEXT);"
				      "INSERT INTO notes VALUES ('" CANARY "');",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	expect_not_audit(path, CANARY);
	snprintf(path, sizeof path, "%s/text.db", f->dir);
	make_file(path, "this is not a database " CANARY "\n");
	expect_not_audit(path, CANARY);
	snprintf(path, sizeof path, "%s/empty.db", f->dir);
	make_file(path, "");
	expect_not_audit(path, NULL);
}

static void
test_bad_args(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t = tail_open(f);
	size_t n = 5;

	assert_int_equal(audit_tail_read(t, 0, NULL, NULL, 4, &n), -1);
	assert_int_equal(n, 0);
	assert_string_equal(audit_tail_error(t), AUDIT_TAIL_ERR_READ);
	assert_int_equal(audit_tail_last(NULL, 4, NULL, NULL, &n), -1);
	assert_int_equal(audit_tail_max_seq(NULL), -1);
	audit_tail_close(NULL);
	audit_tail_close(t);
	audit_close(a);
}

static struct audit_entry
outcome_entry(const char *session, const char *call, const char *type, const char *decision)
{
	struct audit_entry e = call_entry(session);

	e.call_id = call;
	e.type = type;
	e.decision = decision;
	return e;
}

/*
 * Dispatches with no terminal entry, up to a sequence: exactly those, as
 * rows marked unknown_outcome; a completed call and a denial are not.
 */
static void
test_unknown_outcomes(void **state)
{
	struct fixture *f = *state;
	struct audit *a = writer_open(f);
	struct audit_tail *t;
	struct audit_row rows[8];
	struct audit_entry e;
	int64_t upto;
	size_t n = 99;

	e = outcome_entry("sess-A", "call-1", audit_type_id(AUDIT_T_DISPATCH), "dispatch");
	append(a, &e);
	e = outcome_entry("sess-A", "call-1", audit_type_id(AUDIT_T_CALL), "allowed");
	append(a, &e);
	e = outcome_entry("sess-A", "call-2", audit_type_id(AUDIT_T_DISPATCH), "dispatch");
	append(a, &e);						/* seq 3: no outcome */
	e = outcome_entry("sess-B", "call-3", audit_type_id(AUDIT_T_CALL), "denied");
	append(a, &e);
	e = outcome_entry("sess-B", "call-4", audit_type_id(AUDIT_T_DISPATCH), "dispatch");
	upto = append(a, &e);					/* seq 5: no outcome */
	e = outcome_entry("sess-B", "call-5", audit_type_id(AUDIT_T_DISPATCH), "dispatch");
	append(a, &e);						/* seq 6: past upto */
	t = tail_open(f);
	assert_int_equal(audit_tail_unknown(t, upto, rows, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].seq, 3);
	assert_string_equal(rows[0].call, "call-2");
	assert_string_equal(rows[0].session, "sess-A");
	assert_true(rows[0].unknown_outcome);
	assert_int_equal(rows[1].seq, 5);
	assert_string_equal(rows[1].call, "call-4");
	assert_true(rows[1].unknown_outcome);
	assert_int_equal(audit_tail_unknown(t, upto, rows, 1, &n), 0);	/* cap holds */
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].seq, 3);
	/* Ordinary rows carry their decision's tone and are not marked. */
	assert_int_equal(audit_tail_read(t, 0, NULL, rows, 8, &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(rows[1].tone, AUDIT_TONE_GOOD);
	assert_int_equal(rows[3].tone, AUDIT_TONE_BAD);
	assert_int_equal(rows[0].tone, AUDIT_TONE_PLAIN);
	assert_false(rows[0].unknown_outcome);
	audit_tail_close(t);
	audit_close(a);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_empty_log),
		T(test_after_in_order),
		T(test_paging_exactly_once),
		T(test_session_filter),
		T(test_pick_session),
		T(test_last),
		T(test_hash_prefixes),
		T(test_null_columns),
		T(test_bounded_and_sanitized),
		T(test_canary_not_exposed),
		T(test_no_snapshot_held),
		T(test_concurrent_writer),
		T(test_missing_file),
		T(test_not_audit_db),
		T(test_bad_args),
		T(test_unknown_outcomes),
	};

	return cmocka_run_group_tests_name("audit_tail", tests, NULL, NULL);
#undef T
}
