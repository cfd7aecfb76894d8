/*
 * A console on the policy timeline of a long log with few events: a log
 * of one session's start, one revoke, then ENTRIES calls of that session.
 * Two figures, both through audit_timeline_page as the control server's
 * "timeline" op reads, warm page cache; prints figures and ratios,
 * asserts nothing.
 *  - timeline_first, the view opened: the first ask, from the log's start.
 *    The baseline reads the whole log for its events (audit_timeline_read,
 *    as that first ask did before a page's scan was bounded, 2026-12-07);
 *    airlock is one page.
 *  - timeline_follow, the view open: an ask when no change came since the
 *    last. The baseline asks from the revoke, where a follower's cursor
 *    stayed until 2026-12-07 (each ask read every call since again, now
 *    one page's scan of them); airlock asks from the cursor the pages gave,
 *    the newest entry.
 *
 * usage: timeline_bench [ENTRIES] [ROUNDS]
 */
#include <stdbool.h>
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

/* One ask from after: its time in ms, or -1 unless it found want events. */
static double
ask(const char *path, int64_t after, size_t want)
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
	return rc == 0 && n == want ? t : -1;
}

/* The whole log's events, as a first ask read them before: its time in ms, or -1. */
static double
read_whole(const char *path)
{
	struct audit_timeline tl;
	struct al_err err;
	double t = bench_now_ms();
	int rc = audit_timeline_read(path, NULL, &tl, &err);
	size_t n = tl.n;

	t = bench_now_ms() - t;
	if (rc == 0)
		audit_timeline_free(&tl);
	return rc == 0 && n == 2 ? t : -1;
}

/* The pages from the start to the end, as the view reads them: the cursor they end on. */
static int64_t
read_through(const char *path, unsigned *pages)
{
	struct audit_timeline tl;
	struct al_err err;
	int64_t at = 0;
	bool more = true;

	for (*pages = 0; more; (*pages)++) {
		if (audit_timeline_page(path, at, PAGE_ROWS, &tl, &at, &err) < 0)
			return -1;
		more = tl.truncated;
		audit_timeline_free(&tl);
	}
	return at;
}

int
main(int argc, char **argv)
{
	int entries = argc > 1 ? atoi(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, i, rc = 1;
	size_t nr = (size_t)(rounds > 0 ? rounds : 1);
	double *whole = calloc(nr, sizeof *whole), *first = calloc(nr, sizeof *first);
	double *from_event = calloc(nr, sizeof *from_event);
	double *from_head = calloc(nr, sizeof *from_head);
	char dir[] = "/tmp/airlock-timeline-bench-XXXXXX", path[64];
	int64_t cursor;
	unsigned pages;

	if (!whole || !first || !from_event || !from_head || entries < 1 || rounds < 1 ||
	    !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/audit.db", dir);
	if (fill(path, entries) < 0 || (cursor = read_through(path, &pages)) != entries + 2)
		goto out;
	for (i = 0; i < rounds; i++) {
		whole[i] = read_whole(path);
		first[i] = ask(path, 0, 2);
		from_event[i] = ask(path, 2, 0);
		from_head[i] = ask(path, cursor, 0);
		if (whole[i] < 0 || first[i] < 0 || from_event[i] < 0 || from_head[i] < 0)
			goto out;
		printf("sample: timeline_first baseline=%.3f airlock=%.3f unit=ms\n", whole[i],
		       first[i]);
		printf("sample: timeline_follow baseline=%.3f airlock=%.3f unit=ms\n",
		       from_event[i], from_head[i]);
	}
	printf("a log of one session's start, a revoke, then %d calls: read through in %u pages,"
	       " the cursor then %lld\n", entries, pages, (long long)cursor);
	bench_medians("median of rounds, the first ask", "the whole log (before)", whole,
		      "one page (now)", first, nr);
	bench_medians("median of rounds, an ask with nothing new",
		      "from the last event (the cursor before)", from_event,
		      "from the newest entry (the cursor now)", from_head, nr);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "timeline_bench: a read failed\n");
	free(whole);
	free(first);
	free(from_event);
	free(from_head);
	return bench_remove_dir(dir) | rc;
}
