/*
 * What an engine reads of the audit log at every start: the sessions with
 * no end (audit_unended, for the reaper) and the newest of its own
 * "standing" entries (audit_engine_latest, engine/supervisor/
 * supervisor_standing.c), through the log's partial index. Side by side
 * with the same two queries made to scan (NOT INDEXED), as every start
 * read them before that index: a log of ENTRIES calls, a session start
 * and end every 50 (one session left open), its one standing entry the
 * oldest, the worst case. Warm page cache on both sides. Prints figures
 * and a ratio; asserts nothing.
 *
 * usage: standing_bench [ENTRIES] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "audit.h"
#include "bench.h"
#include "bench_log.h"

#define PREFIX	"standing"

/* The calls of ENTRIES sessions' worth, after one standing entry at seq 1. */
static int
fill(const char *path, int entries)
{
	char sql[2048];

	snprintf(sql, sizeof sql,
		 "BEGIN;"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, rule, detail,"
		 " prev_hash, entry_hash) VALUES ('0', '2026-12-06T00:00:00.000Z', 'engine',"
		 " 'policy', 'standing: 1 revoked', '{\"revoked\":[]}', '', '');"
		 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d)"
		 " INSERT INTO audit_entries (entry_id, ts, session_id, call_id, type, tool,"
		 " decision, rule, detail, prev_hash, entry_hash)"
		 " SELECT hex(randomblob(16)), '2026-12-06T00:00:00.000Z', 'sess-' || (x / 50),"
		 " 'call-' || x, 'call', 'store', 'allowed', 'allow', '{\"n\":1}',"
		 " hex(randomblob(32)), hex(randomblob(32)) FROM c;"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, prev_hash,"
		 " entry_hash) SELECT hex(randomblob(16)), ts, session_id, 'session_start', '',"
		 " '' FROM audit_entries WHERE type = 'call' AND seq %% 50 = 2;"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, prev_hash,"
		 " entry_hash) SELECT hex(randomblob(16)), ts, session_id, 'session_end', '', ''"
		 " FROM audit_entries WHERE type = 'session_start' AND session_id != 'sess-7';"
		 "COMMIT;", entries);
	return bench_log_fill(path, sql, "standing_bench");
}

/* One query's rows, counted: how many, or -1. */
static int
rows_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int n = 0, step = SQLITE_ERROR;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    (sqlite3_bind_parameter_count(st) == 0 ||
	     sqlite3_bind_text(st, 1, PREFIX, -1, SQLITE_STATIC) == SQLITE_OK))
		while ((step = sqlite3_step(st)) == SQLITE_ROW)
			n++;
	sqlite3_finalize(st);
	return step == SQLITE_DONE ? n : -1;
}

/* The reads as they were: the same questions, scanning the log. */
static int
scan_once(sqlite3 *db)
{
	return rows_of(db, "SELECT DISTINCT session_id FROM audit_entries NOT INDEXED"
		       " WHERE type = 'session_start' AND session_id NOT IN (SELECT session_id"
		       " FROM audit_entries NOT INDEXED WHERE type = 'session_end')") == 1 &&
	       rows_of(db, "SELECT detail FROM audit_entries NOT INDEXED WHERE"
		       " session_id = 'engine' AND type = 'policy'"
		       " AND substr(rule, 1, length(?1)) = ?1 ORDER BY seq DESC LIMIT 1") == 1 ?
	       0 : -1;
}

static void
count_open(void *ctx, const char *session_id, const char *start_detail)
{
	(void)session_id;
	(void)start_detail;
	(*(int *)ctx)++;
}

/* The engine's reads: 0 when each found what the log holds. */
static int
read_once(struct audit *a)
{
	char *detail = NULL;
	int open = 0, rc = audit_unended(a, count_open, &open) == 0 && open == 1 &&
			   audit_engine_latest(a, PREFIX, &detail) == 0 && detail ? 0 : -1;

	free(detail);
	return rc;
}

int
main(int argc, char **argv)
{
	int entries = argc > 1 ? atoi(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, i, rc = 1;
	double *scan = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *scan);
	double *idx = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *idx);
	char dir[] = "/tmp/airlock-standing-bench-XXXXXX", path[64];
	struct audit *a = NULL;
	struct al_err err;
	sqlite3 *raw = NULL;
	double t;

	if (!scan || !idx || entries < 1 || rounds < 1 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/audit.db", dir);
	if (fill(path, entries) < 0 || audit_open(path, &a, &err) < 0 ||
	    sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto out;
	for (i = 0; i < rounds; i++) {
		t = bench_now_ms();
		if (scan_once(raw) < 0)
			goto out;
		scan[i] = bench_now_ms() - t;
		t = bench_now_ms();
		if (read_once(a) < 0)
			goto out;
		idx[i] = bench_now_ms() - t;
		printf("sample: standing_read baseline=%.3f airlock=%.3f unit=ms\n", scan[i], idx[i]);
	}
	printf("a log of %d calls in %d sessions, its one standing entry the oldest\n",
	       entries, entries / 50);
	bench_medians("median of rounds", "scan (the reads before the index)", scan,
		      "audit_unended + audit_engine_latest", idx, (size_t)rounds);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "standing_bench: a read failed\n");
	sqlite3_close(raw);
	audit_close(a);
	free(scan);
	free(idx);
	return bench_remove_dir(dir) | rc;
}
