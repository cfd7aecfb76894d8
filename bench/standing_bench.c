/*
 * What an engine reads of the audit log at every start: the newest of its
 * own "standing" entries (engine/supervisor/supervisor_standing.c), through
 * audit_engine_latest and the log's partial index on the engine's policy
 * entries. Side by side with the same query made to scan (NOT INDEXED), as
 * every start read it before that index: a log of ENTRIES calls whose one
 * standing entry is the oldest, the worst case. Warm page cache on both
 * sides. Prints figures and a ratio; asserts nothing.
 *
 * usage: standing_bench [ENTRIES] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "audit.h"
#include "bench.h"

#define PREFIX	"standing"

/* The calls of ENTRIES sessions' worth, after one standing entry at seq 1. */
static int
fill(const char *path, int entries)
{
	char sql[1024];
	sqlite3 *db = NULL;
	int rc;

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
		 "COMMIT;", entries);
	rc = sqlite3_open(path, &db) == SQLITE_OK &&
	     sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	if (rc < 0)
		fprintf(stderr, "standing_bench: fill: %s\n", sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc;
}

/* The read as it was: the same WHERE, scanning back from the newest entry. */
static int
scan_once(sqlite3 *db)
{
	static const char sql[] = "SELECT detail FROM audit_entries NOT INDEXED"
				  " WHERE session_id = 'engine' AND type = 'policy'"
				  " AND substr(rule, 1, length(?1)) = ?1 ORDER BY seq DESC LIMIT 1";
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
		 sqlite3_bind_text(st, 1, PREFIX, -1, SQLITE_STATIC) == SQLITE_OK &&
		 sqlite3_step(st) == SQLITE_ROW ? 0 : -1;

	sqlite3_finalize(st);
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
	char *detail;
	double t;

	if (!scan || !idx || entries < 1 || rounds < 1 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/audit.db", dir);
	if (audit_open(path, &a, &err) < 0) {	/* the schema, with its index */
		fprintf(stderr, "standing_bench: %s\n", err.msg);
		goto out;
	}
	audit_close(a);
	a = NULL;
	if (fill(path, entries) < 0 || audit_open(path, &a, &err) < 0 ||
	    sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto out;
	for (i = 0; i < rounds; i++) {
		t = bench_now_ms();
		if (scan_once(raw) < 0)
			goto out;
		scan[i] = bench_now_ms() - t;
		t = bench_now_ms();
		if (audit_engine_latest(a, PREFIX, &detail) < 0 || !detail)
			goto out;
		idx[i] = bench_now_ms() - t;
		free(detail);
		printf("sample: standing_read baseline=%.3f airlock=%.3f unit=ms\n", scan[i], idx[i]);
	}
	bench_sort(scan, (size_t)rounds);
	bench_sort(idx, (size_t)rounds);
	printf("a log of %d calls, its one standing entry the oldest\n", entries);
	printf("%-44s %9s\n", "median of rounds", "ms");
	printf("%-44s %9.3f\n", "scan back (the read before the index)", scan[rounds / 2]);
	printf("%-44s %9.3f\n", "audit_engine_latest (partial index)", idx[rounds / 2]);
	printf("%-44s %8.4fx\n", "ratio", idx[rounds / 2] / scan[rounds / 2]);
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
