#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "audit.h"
#include "audit_row.h"
#include "audit_spool.h"
#include "audit_verify.h"

#include "sample_entry.h"
#include "audit_fixture.h"

/*
 * The sessions' journals (audit_spool.h): what a crash leaves in one and
 * not in the log is appended at the next open, and `audit verify` holds
 * each journal to the log. A crash is a journal closed without its
 * removal (its writer's lock goes, as when the process dies) and records
 * put in it that never reached the log's queue.
 */

/* One record of e, with a fresh id (returned), put straight into s. */
static void
put_raw(struct audit_spool *s, const char *call, char id[AUDIT_ENTRY_ID_MAX])
{
	struct audit_entry e = sample_entry("sess-j", "allowed");
	struct hash_canon c;

	e.call_id = call;
	assert_int_equal(audit_row_body(&e, id, &c), 0);
	assert_int_equal(audit_spool_put(s, id, c.buf, c.len, true), 0);
	hash_canon_free(&c);
}

/* The log with 2 entries, then a journal: 1 record through the log, n more only in it. */
static void
crashed_journal(const char *db, int n, char ids[][AUDIT_ENTRY_ID_MAX])
{
	struct audit_entry e = sample_entry("sess-j", "allowed");
	struct audit_lane lane = { 0 };
	struct audit_spool *s;
	struct audit *a;
	int i;

	assert_int_equal(audit_open(db, &a, NULL), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, NULL), 0);
	assert_int_equal(audit_append(a, &e, NULL, NULL, NULL), 0);
	assert_int_equal(audit_spool_begin(a, &s, NULL), 0);
	assert_int_equal(audit_append_spooled(a, &lane, s, &e, true, NULL), 0);
	assert_int_equal(audit_lane_settle(a, &lane, NULL), 0);
	for (i = 0; i < n; i++)
		put_raw(s, "call-crash", ids[i]);
	audit_spool_close(s, false);	/* the writer dies: its journal stays */
	audit_close(a);
}

static int
journal_name(const char *db, char name[AUDIT_SPOOL_NAME_LEN + 1])
{
	char dir[160];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof dir, "%s" AUDIT_SPOOL_SUFFIX, db);
	if (!(dp = opendir(dir)))
		return 0;
	while ((d = readdir(dp)))
		if (d->d_name[0] != '.') {
			snprintf(name, AUDIT_SPOOL_NAME_LEN + 1, "%.32s", d->d_name);
			n++;
		}
	closedir(dp);
	return n;
}

static void
journal_path(const char *db, char *path, size_t cap)
{
	char name[AUDIT_SPOOL_NAME_LEN + 1];

	assert_int_equal(journal_name(db, name), 1);
	snprintf(path, cap, "%s" AUDIT_SPOOL_SUFFIX "/%s", db, name);
}

/* A journal left by a test on purpose goes before the teardown checks the directory. */
static void
journal_drop(const char *db)
{
	char path[256];

	journal_path(db, path, sizeof path);
	assert_int_equal(unlink(path), 0);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void
spit(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static int64_t
count(const char *db)
{
	struct audit *a;
	int64_t n;

	assert_int_equal(audit_open(db, &a, NULL), 0);	/* recovers, too */
	n = audit_count(a, NULL);
	audit_close(a);
	return n;
}

static void
expect_verify(const char *db, bool ok, int64_t entries, int64_t pending, const char *reason)
{
	struct audit_verify v;
	struct al_err err;

	assert_int_equal(audit_verify_file(db, &v, &err), 0);
	if (reason)
		assert_string_equal(v.reason, reason);
	assert_int_equal(v.ok, ok);
	assert_int_equal(v.entries, entries);
	assert_int_equal(v.journal_pending, pending);
	audit_verify_free(&v);
}

/* The last n rows' entry ids, oldest first, against ids. */
static void
expect_tail_ids(const char *db, char ids[][AUDIT_ENTRY_ID_MAX], int n)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char sql[128];
	int i = 0;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	snprintf(sql, sizeof sql, "SELECT entry_id FROM (SELECT seq, entry_id FROM audit_entries"
		 " ORDER BY seq DESC LIMIT %d) ORDER BY seq", n);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		assert_string_equal((const char *)sqlite3_column_text(st, 0), ids[i++]);
	assert_int_equal(i, n);
	sqlite3_finalize(st);
	sqlite3_close(h);
}

static void
test_recovered_at_open(void **state)
{
	struct fixture *f = *state;
	char ids[2][AUDIT_ENTRY_ID_MAX], name[AUDIT_SPOOL_NAME_LEN + 1];

	crashed_journal(f->db, 2, ids);
	/* Before the next open: the chain is whole, two records wait. */
	expect_verify(f->db, true, 3, 2, NULL);
	assert_int_equal(count(f->db), 5);
	expect_tail_ids(f->db, ids, 2);		/* in the journal's order, after the log's */
	assert_int_equal(journal_name(f->db, name), 0);
	expect_verify(f->db, true, 5, 0, NULL);
	assert_int_equal(count(f->db), 5);	/* nothing twice */
}

static void
test_live_journal_left_alone(void **state)
{
	struct fixture *f = *state;
	struct audit_verify v;
	struct audit_spool *s;
	struct audit *a, *b;
	char id[AUDIT_ENTRY_ID_MAX];

	assert_int_equal(audit_open(f->db, &a, NULL), 0);
	assert_int_equal(audit_spool_begin(a, &s, NULL), 0);
	put_raw(s, "call-live", id);
	/* Another engine opens the log: the record is the living writer's to commit. */
	assert_int_equal(audit_open(f->db, &b, NULL), 0);
	assert_int_equal(audit_count(b, NULL), 0);
	audit_close(b);
	assert_int_equal(audit_verify_file(f->db, &v, NULL), 0);
	assert_true(v.ok);
	assert_int_equal(v.journal_in_flight, 1);
	assert_int_equal(v.journal_pending, 0);
	audit_verify_free(&v);
	audit_spool_close(s, true);
	audit_close(a);
}

static void
test_altered_record_named(void **state)
{
	struct fixture *f = *state;
	char ids[2][AUDIT_ENTRY_ID_MAX], path[256], *buf, *p, reason[96], name[40];
	size_t len;

	crashed_journal(f->db, 2, ids);
	journal_path(f->db, path, sizeof path);
	buf = slurp(path, &len);
	p = strstr(buf, "call-crash");		/* record 2's body */
	assert_non_null(p);
	p[5] = 'X';
	spit(path, buf, len);
	free(buf);
	journal_name(f->db, name);
	snprintf(reason, sizeof reason, "journal %s record 2: altered", name);
	expect_verify(f->db, false, 3, 0, reason);
	/* Not recovered: the damaged journal stays for verify to name. */
	assert_int_equal(count(f->db), 3);
	expect_verify(f->db, false, 3, 0, reason);
	journal_drop(f->db);
}

static void
test_dropped_record_named(void **state)
{
	struct fixture *f = *state;
	char ids[2][AUDIT_ENTRY_ID_MAX], path[256], *buf, *nl, reason[96], name[40];
	size_t len;

	crashed_journal(f->db, 2, ids);
	journal_path(f->db, path, sizeof path);
	buf = slurp(path, &len);
	nl = strchr(buf, '\n');			/* drop record 1 (the one in the log) */
	assert_non_null(nl);
	spit(path, nl + 1, strlen(nl + 1));
	free(buf);
	journal_name(f->db, name);
	snprintf(reason, sizeof reason, "journal %s record 1: missing", name);
	expect_verify(f->db, false, 3, 0, reason);
	assert_int_equal(count(f->db), 3);
	journal_drop(f->db);
}

/* A record rewritten whole (its own hash recomputed) still disagrees with the log. */
static void
test_record_differs_from_log(void **state)
{
	struct fixture *f = *state;
	struct audit_entry e = sample_entry("sess-j", "allowed");
	struct audit_spool *s;
	struct hash_canon c;
	struct audit *a;
	char id[AUDIT_ENTRY_ID_MAX], reason[96], name[40];

	assert_int_equal(audit_open(f->db, &a, NULL), 0);
	assert_int_equal(audit_append(a, &e, id, NULL, NULL), 0);
	assert_int_equal(audit_spool_begin(a, &s, NULL), 0);
	e.tool = "fs.write";
	e.entry_id = id;
	assert_int_equal(audit_row_body(&e, id, &c), 0);
	assert_int_equal(audit_spool_put(s, id, c.buf, c.len, true), 0);
	hash_canon_free(&c);
	audit_spool_close(s, false);
	audit_close(a);
	journal_name(f->db, name);
	snprintf(reason, sizeof reason, "journal %s record 1: differs from the log", name);
	expect_verify(f->db, false, 1, 0, reason);
	journal_drop(f->db);
}

/* A record cut by the crash (its sync never returned) is not one; those before it are. */
static void
test_torn_tail_recovered(void **state)
{
	struct fixture *f = *state;
	char ids[2][AUDIT_ENTRY_ID_MAX], path[256], *buf, *last;
	size_t len;

	crashed_journal(f->db, 2, ids);
	journal_path(f->db, path, sizeof path);
	buf = slurp(path, &len);
	len = strlen(buf);			/* up to the zeros written ahead */
	buf[len - 1] = '\0';
	last = strrchr(buf, '\n');
	assert_non_null(last);
	spit(path, buf, (size_t)(last - buf) + 40);	/* record 3 cut in its middle */
	free(buf);
	expect_verify(f->db, true, 3, 1, NULL);
	assert_int_equal(count(f->db), 4);
	expect_tail_ids(f->db, ids, 1);
	expect_verify(f->db, true, 4, 0, NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_recovered_at_open),
		T(test_live_journal_left_alone),
		T(test_altered_record_named),
		T(test_dropped_record_named),
		T(test_record_differs_from_log),
		T(test_torn_tail_recovered),
	};

	return cmocka_run_group_tests_name("audit_journal", tests, NULL, NULL);
}
