/*
 * A console following the policy timeline (its view open, the engine
 * asked twice a second): each ask when no change came since the last.
 * A log of one session's start, one revoke, then ENTRIES calls of that
 * session. The baseline asks from the revoke, where a follower's cursor
 * stayed until 2026-12-07 (each ask read every call since again); airlock
 * asks from the cursor the first page gave, the newest entry. Both through
 * audit_timeline_page, as the control server's "timeline" op does; warm
 * page cache. Prints figures and a ratio; asserts nothing.
 *
 * usage: timeline_bench [ENTRIES] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "audit_timeline.h"
#include "bench.h"
#include "bench_log.h"

#define PAGE_ROWS	64	/* as the control op asks: CONTROL_TIMELINE_ROWS */

/* A session's start (seq 1), a revoke (seq 2), then its calls. */
static int
fill(const char *path, int entries)
{
	char sql[2048];

	snprintf(sql, sizeof sql,
		 "BEGIN;"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, prev_hash,"
		 " entry_hash) VALUES ('0', '2026-12-07T00:00:00.000Z', 's-1', 'session_start',"
		 " '', '');"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, tool, decision, rule,"
		 " revision, detail, prev_hash, entry_hash) VALUES ('1', '2026-12-07T00:00:00.000Z',"
		 " 's-1', 'policy', 'store', 'applied', 'revoke applied', 1,"
		 " '{\"by\":\"ana\",\"uid\":1000,\"via\":\"ctl\"}', '', '');"
		 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d)"
		 " INSERT INTO audit_entries (entry_id, ts, session_id, call_id, type, tool,"
		 " decision, rule, detail, prev_hash, entry_hash)"
		 " SELECT hex(randomblob(16)), '2026-12-07T00:00:01.000Z', 's-1',"
		 " 'call-' || x, 'call', 'fetch', 'allowed', 'allow', '{\"n\":1}',"
		 " hex(randomblob(32)), hex(randomblob(32)) FROM c;"
		 "COMMIT;", entries);
	return bench_log_fill(path, sql, "timeline_bench");
}

/* One ask from after: its time in ms, or -1 unless it found no event. */
static double
ask(const char *path, int64_t after)
{
	struct audit_timeline tl;
	struct al_err err;
	int64_t next;
	double t = bench_now_ms();
	int rc = audit_timeline_page(path, after, PAGE_ROWS, &tl, &next, &err);
	size_t n = tl.n;

	t = bench_now_ms() - t;
	if (rc == 0)
		audit_timeline_free(&tl);
	return rc == 0 && n == 0 ? t : -1;
}

int
main(int argc, char **argv)
{
	int entries = argc > 1 ? atoi(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, i, rc = 1;
	double *from_event = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *from_event);
	double *from_head = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *from_head);
	char dir[] = "/tmp/airlock-timeline-bench-XXXXXX", path[64];
	struct audit_timeline tl = { 0 };
	struct al_err err;
	int64_t cursor = 0;

	if (!from_event || !from_head || entries < 1 || rounds < 1 || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/audit.db", dir);
	if (fill(path, entries) < 0 ||
	    audit_timeline_page(path, 0, PAGE_ROWS, &tl, &cursor, &err) < 0)
		goto out;
	if (tl.n != 2) {	/* the start and the revoke */
		audit_timeline_free(&tl);
		goto out;
	}
	audit_timeline_free(&tl);
	for (i = 0; i < rounds; i++) {
		from_event[i] = ask(path, 2);
		from_head[i] = ask(path, cursor);
		if (from_event[i] < 0 || from_head[i] < 0)
			goto out;
		printf("sample: timeline_follow baseline=%.3f airlock=%.3f unit=ms\n",
		       from_event[i], from_head[i]);
	}
	printf("a log of one session's start, a revoke, then %d calls; the next cursor %lld\n",
	       entries, (long long)cursor);
	bench_medians("median of rounds, an ask with nothing new",
		      "from the last event (the cursor before)", from_event,
		      "from the newest entry (the cursor now)", from_head, (size_t)rounds);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "timeline_bench: a read failed\n");
	free(from_event);
	free(from_head);
	return bench_remove_dir(dir) | rc;
}
