#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "audit.h"
#include "audit_propose.h"
#include "audit_timeline.h"
#include "incident.h"
#include "policy.h"

#include "audit_fixture.h"

/*
 * The offline readers of `airlock audit timeline` and `audit propose`,
 * on logs written by the real writer (audit_open/audit_append) with
 * entries as the engine's writers make them: the supervisor's policy
 * entries ("<op> <gate's reason>", "<op> at start", the author in the
 * detail), the control server's ("stop by request"), sessions' starts,
 * ends and admissions, the gateway's calls, the reaper's entries.
 */

/* Short enough to fit whole in any text field, and in a hash column as hex would. */
#define CANARY		"Qz7CNRY"
#define CANARY_HASH	"00" CANARY "00"
#define ALICE		"{\"by\":\"alice\",\"uid\":1001,\"via\":\"ctl\",\"note\":\"" CANARY "\"}"
#define BOB		"{\"by\":\"bob\",\"uid\":1002,\"via\":\"console\"}"

struct row {
	enum audit_decision d;
	const char *session, *tool, *rule, *detail;
	int64_t revision;
};

static int64_t
put(struct audit *a, const struct row *r)
{
	struct audit_entry e = {
		.session_id = r->session,
		.type = audit_type_id(audit_decision_type(r->d)),
		.decision = audit_decision_id(r->d),
		.tool = r->tool,
		.rule = r->rule,
		.revision = r->revision,
		.detail = r->detail,
		.class_before = CANARY,
		.class_after = CANARY,
	};
	struct al_err err;
	int64_t seq = 0;

	if (r->d == AUDIT_D_DENIED || r->d == AUDIT_D_ALLOWED || r->d == AUDIT_D_EGRESS_DENIED) {
		e.call_id = "call-" CANARY;
		e.request_hash = CANARY_HASH;
		e.response_hash = CANARY_HASH;
		e.detail = "{\"bytes\":12,\"text\":\"" CANARY "\"}";
	}
	assert_int_equal(audit_append(a, &e, NULL, &seq, &err), 0);
	return seq;
}

static void
put_all(const struct fixture *f, const struct row *rows, size_t n)
{
	struct audit *a;
	struct al_err err;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (size_t i = 0; i < n; i++)
		put(a, &rows[i]);
	audit_close(a);
}

/* An incident: revoke store (r1), a denial, a freeze (r2), a thaw, a restore (r4). */
static const struct row story[] = {
	{ AUDIT_D_START, "s-1", NULL, NULL, NULL, 0 },
	{ AUDIT_D_START, "s-2", NULL, NULL, NULL, 0 },
	{ AUDIT_D_REFUSED, "s-3", NULL, "read_only_rootfs", "{\"x\":\"" CANARY "\"}", 0 },
	{ AUDIT_D_ALLOWED, "s-1", "store", "allowed", NULL, 0 },
	{ AUDIT_D_APPLIED, "s-1", "store", "revoke applied", ALICE, 1 },
	{ AUDIT_D_START, "s-4", NULL, NULL, NULL, 1 },	/* between the acks of r1 */
	{ AUDIT_D_NOT_APPLICABLE, "s-2", "store", "revoke tool not in this session", ALICE, 1 },
	{ AUDIT_D_APPLIED, "s-4", "store", "revoke at start", ALICE, 1 },
	{ AUDIT_D_DENIED, "s-1", "store", "revoked", NULL, 1 },
	{ AUDIT_D_DENIED, "s-4", "store", "revoked", NULL, 1 },
	{ AUDIT_D_DENIED, "s-1", "store", "revoked", NULL, 1 },
	{ AUDIT_D_DENIED, "s-1", "mail.send", "sink_ceiling", NULL, 1 },
	{ AUDIT_D_APPLIED, "s-1", NULL, "freeze applied", BOB, 2 },
	{ AUDIT_D_REJECTED, "s-2", NULL, "freeze stale revision", BOB, 2 },
	{ AUDIT_D_APPLIED, "s-4", NULL, "freeze applied", BOB, 2 },
	{ AUDIT_D_DENIED, "s-2", "fetch", "frozen", NULL, 2 },
	{ AUDIT_D_APPLIED, "s-1", NULL, "thaw applied", BOB, 3 },
	{ AUDIT_D_REJECTED, "engine", NULL, "revoke refused: view only", BOB, 3 },
	{ AUDIT_D_APPLIED, "engine", "mail.send", "revoke on no live session", BOB, 3 },
	{ AUDIT_D_APPLIED, "engine", "mail.send", "grant: 2 calls", ALICE, 3 },
	{ AUDIT_D_NORMAL, "s-2", NULL, "agent_eof", "{\"calls\":1,\"x\":\"" CANARY "\"}", 3 },
	{ AUDIT_D_APPLIED, "s-1", "store", "restore applied", ALICE, 4 },
	{ AUDIT_D_APPLIED, "s-4", "store", "restore applied", ALICE, 4 },
	{ AUDIT_D_APPLIED, "s-1", NULL, "stop by request", ALICE, 4 },
	{ AUDIT_D_ABNORMAL, "s-1", NULL, "operator_stop", NULL, 4 },
	{ AUDIT_D_REAPED, "s-4", NULL, "owner_gone", "{\"container\":\"" CANARY "\"}", 4 },
	{ AUDIT_D_ABNORMAL, "s-4", NULL, "engine_lost", NULL, 4 },
};

static void
no_canary(const void *mem, size_t len)
{
	if (len && memmem(mem, len, CANARY, strlen(CANARY)))
		fail_msg("the canary left the log");
}

/* "kind op tool session rule rN A/N/R by" for each event, one a line. */
static void
describe(const struct audit_timeline *tl, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t i = 0; i < tl->n; i++) {
		const struct timeline_event *e = &tl->v[i];
		size_t n = strlen(out);

		snprintf(out + n, cap - n, "%s %s %s %s %s%s r%lld %lld/%lld/%lld %s\n",
			 audit_timeline_kind_id(e->kind), e->op[0] ? e->op : "-",
			 e->tool[0] ? e->tool : "-", e->session[0] ? e->session : "-",
			 e->rule[0] ? e->rule : "-",
			 e->kind == TIMELINE_SESSION_END ? (e->normal ? " normal" : " abnormal") : "",
			 (long long)e->revision, (long long)e->applied,
			 (long long)e->not_applicable, (long long)e->rejected,
			 e->has_author ? e->by.user : "-");
	}
}

static void
test_timeline_story(void **state)
{
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct al_err err;
	char got[4096];

	put_all(f, story, sizeof story / sizeof story[0]);
	if (audit_timeline_read(f->db, NULL, &tl, &err) < 0)
		fail_msg("%s", err.msg);
	describe(&tl, got, sizeof got);
	assert_string_equal(got,
		"session_start - - s-1 - r0 0/0/0 -\n"
		"session_start - - s-2 - r0 0/0/0 -\n"
		"admission_refused - - s-3 read_only_rootfs r0 0/0/0 -\n"
		"policy revoke store - - r1 1/1/0 alice\n"
		"session_start - - s-4 - r1 0/0/0 -\n"
		"policy_at_start revoke store s-4 - r1 1/0/0 alice\n"
		"policy freeze - - - r2 2/0/1 bob\n"
		"policy thaw - - - r3 1/0/0 bob\n"
		"request revoke - engine revoke refused: view only r3 0/0/1 bob\n"
		"request revoke mail.send engine revoke on no live session r3 1/0/0 bob\n"
		"request grant mail.send engine grant: 2 calls r3 1/0/0 alice\n"
		"session_end - - s-2 agent_eof normal r3 0/0/0 -\n"
		"policy restore store - - r4 2/0/0 alice\n"
		"request stop - s-1 stop by request r4 1/0/0 alice\n"
		"session_end - - s-1 operator_stop abnormal r4 0/0/0 -\n"
		"reap - - s-4 owner_gone r4 0/0/0 -\n"
		"session_end - - s-4 engine_lost abnormal r4 0/0/0 -\n");
	/* The author whole; the revoke's time and sequence are its first ack's. */
	assert_int_equal(tl.v[3].by.uid, 1001);
	assert_string_equal(tl.v[3].by.via, "ctl");
	assert_int_equal(tl.v[3].seq, 5);
	assert_int_equal(tl.v[6].by.uid, 1002);
	assert_string_equal(tl.v[6].by.via, "console");
	assert_false(tl.truncated);
	no_canary(tl.v, tl.n * sizeof tl.v[0]);
	audit_timeline_free(&tl);
}

/*
 * The timeline a follower reads (the console's, through supervisor_timeline):
 * page after page of at most cap events from a cursor, a change's later
 * acks folded in as the console does, gives exactly the rows of one whole
 * read, for every cap; past the end a page is empty and the cursor stays.
 */
static size_t
follow_pages(const char *db, size_t cap, struct timeline_row *rows, size_t max)
{
	struct audit_timeline tl;
	struct timeline_row r;
	struct al_err err;
	int64_t after = 0, next;
	size_t n = 0, pages = 0;
	bool more;

	do {
		assert_int_equal(audit_timeline_page(db, after, cap, &tl, &next, &err), 0);
		assert_true(tl.n <= cap);
		assert_true(next >= after);
		for (size_t i = 0; i < tl.n; i++) {
			audit_timeline_row(&tl.v[i], &r);
			if (!audit_timeline_fold(rows, n, &r) && n < max)
				rows[n++] = r;
		}
		after = next;
		more = tl.truncated;
		audit_timeline_free(&tl);
		assert_true(++pages < 100);
	} while (more);
	return n;
}

static void
test_timeline_follow(void **state)
{
	struct fixture *f = *state;
	struct timeline_row whole[32], paged[32];
	struct audit_timeline tl;
	struct al_err err;
	int64_t next;
	size_t n, cap;

	put_all(f, story, sizeof story / sizeof story[0]);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	assert_true(tl.n <= 32);
	for (size_t i = 0; i < tl.n; i++)
		audit_timeline_row(&tl.v[i], &whole[i]);
	n = tl.n;
	assert_string_equal(whole[3].kind, "policy");
	assert_string_equal(whole[3].by.user, "alice");
	assert_int_equal(whole[3].not_applicable, 1);
	audit_timeline_free(&tl);
	for (cap = 1; cap <= n + 1; cap++) {
		memset(paged, 0, sizeof paged);
		assert_int_equal(follow_pages(f->db, cap, paged, 32), n);
		assert_memory_equal(paged, whole, n * sizeof whole[0]);
	}
	/* Past the end: nothing, the cursor where it was. */
	assert_int_equal(audit_timeline_page(f->db, 27, 5, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 0);
	assert_int_equal(next, 27);
	audit_timeline_free(&tl);
	/* The middle of a change: its later acks an event of their own, folded back. */
	assert_int_equal(audit_timeline_page(f->db, 6, 1, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_int_equal(tl.v[0].kind, TIMELINE_CUTOVER);
	assert_int_equal(tl.v[0].not_applicable, 1);
	assert_int_equal(next, 7);
	audit_timeline_free(&tl);
	no_canary(paged, sizeof paged);
	/* A bad page is refused in fixed words, the cursor kept. */
	assert_int_equal(audit_timeline_page(f->db, -1, 5, &tl, &next, &err), -1);
	assert_string_equal(err.msg, "audit timeline: bad page");
	assert_int_equal(next, -1);
	assert_int_equal(audit_timeline_page(f->db, 0, 0, &tl, &next, &err), -1);
}

/*
 * A follower's cursor moves past the calls it read through: read to the
 * end, the next page starts at the newest entry, not at the last event,
 * so a follower asking again does not read those calls again.
 */
static void
test_timeline_cursor_past_calls(void **state)
{
	static const struct row change = { AUDIT_D_APPLIED, "s-1", "store", "revoke applied",
					   ALICE, 1 };
	static const struct row call = { AUDIT_D_ALLOWED, "s-1", "fetch", "allowed", NULL, 1 };
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct audit *a;
	struct al_err err;
	int64_t next, last_call = 0, second;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	put(a, &change);
	for (int i = 0; i < 40; i++)
		last_call = put(a, &call);
	assert_int_equal(audit_timeline_page(f->db, 0, 5, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_false(tl.truncated);
	assert_int_equal(next, last_call);	/* past the 40 calls, not at the change */
	audit_timeline_free(&tl);

	for (int i = 0; i < 10; i++)
		put(a, &call);
	second = put(a, &change);
	last_call = put(a, &call);
	assert_int_equal(audit_timeline_page(f->db, next, 5, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 1);	/* the new change alone */
	assert_int_equal(tl.v[0].seq, second);
	assert_int_equal(next, last_call);
	audit_timeline_free(&tl);

	/* Cut at a full page: the cursor is the last event given, the rest comes next. */
	put(a, &(struct row){ AUDIT_D_APPLIED, "s-1", "store", "restore applied", ALICE, 2 });
	put(a, &(struct row){ AUDIT_D_APPLIED, "s-1", "store", "revoke applied", ALICE, 3 });
	assert_int_equal(audit_timeline_page(f->db, next, 1, &tl, &next, &err), 0);
	assert_true(tl.truncated);
	assert_int_equal(next, tl.v[0].seq);
	audit_timeline_free(&tl);
	audit_close(a);
}

/*
 * n calls of s-1, then a revoke by alice, at the log's end in one
 * transaction, as the engine writes them but for the chain (the timeline
 * never reads it; the writer would not append after them): a log long
 * enough for a page's scan without n durable appends.
 */
static void
put_calls_then_change(const char *path, int n)
{
	char sql[2048];
	sqlite3 *db;

	snprintf(sql, sizeof sql,
		 "BEGIN;"
		 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d)"
		 " INSERT INTO audit_entries (entry_id, ts, session_id, call_id, type, tool,"
		 " decision, rule, prev_hash, entry_hash)"
		 " SELECT 'e-' || x, '2026-12-07T00:00:01.000Z', 's-1', 'call-' || x, 'call',"
		 " 'fetch', 'allowed', 'allowed', '', '' FROM c;"
		 "INSERT INTO audit_entries (entry_id, ts, session_id, type, tool, decision, rule,"
		 " revision, detail, prev_hash, entry_hash) VALUES ('e-last',"
		 " '2026-12-07T00:00:02.000Z', 's-1', 'policy', 'store', 'applied',"
		 " 'revoke applied', 2, '%s', '', '');"
		 "COMMIT;", n, ALICE);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/*
 * A page goes through AUDIT_TIMELINE_SCAN entries at most: on a long log
 * with few events, the first page is cut there (no event in it, more to
 * come) and the cursor moves past what it read; the next pages reach the
 * later change. The whole read (audit timeline) has no such bound.
 */
static void
test_timeline_scan_bound(void **state)
{
	static const struct row change = { AUDIT_D_APPLIED, "s-1", "store", "revoke applied",
					   ALICE, 1 };
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct audit *a;
	struct al_err err;
	int64_t first, last, next;

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	first = put(a, &change);
	audit_close(a);
	put_calls_then_change(f->db, 2 * AUDIT_TIMELINE_SCAN + 10);
	last = first + 2 * AUDIT_TIMELINE_SCAN + 11;

	assert_int_equal(audit_timeline_page(f->db, 0, 64, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_int_equal(tl.v[0].seq, first);
	assert_true(tl.truncated);
	assert_int_equal(next, AUDIT_TIMELINE_SCAN);
	audit_timeline_free(&tl);

	assert_int_equal(audit_timeline_page(f->db, next, 64, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 0);	/* calls only, and it says more */
	assert_true(tl.truncated);
	assert_int_equal(next, 2 * AUDIT_TIMELINE_SCAN);
	audit_timeline_free(&tl);

	assert_int_equal(audit_timeline_page(f->db, next, 64, &tl, &next, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_int_equal(tl.v[0].seq, last);
	assert_int_equal(tl.v[0].revision, 2);
	assert_string_equal(tl.v[0].by.user, "alice");
	assert_false(tl.truncated);
	assert_int_equal(next, last);
	audit_timeline_free(&tl);

	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	assert_int_equal(tl.n, 2);
	assert_false(tl.truncated);
	audit_timeline_free(&tl);
}

/* --since: the events with an entry at or after it; before the first, all; past the last, none. */
static void
test_timeline_since(void **state)
{
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct al_err err;
	char cut[32];
	size_t all, i;

	put_all(f, story, sizeof story / sizeof story[0]);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	all = tl.n;
	for (i = 0; i < tl.n && strcmp(tl.v[i].op, "restore") != 0; i++)
		;
	assert_true(i < tl.n);
	snprintf(cut, sizeof cut, "%s", tl.v[i].time);	/* the restore's */
	audit_timeline_free(&tl);
	assert_int_equal(audit_timeline_read(f->db, cut, &tl, &err), 0);
	assert_true(tl.n >= 5 && tl.n < all);
	assert_int_equal(tl.v[0].kind, TIMELINE_CUTOVER);
	assert_string_equal(tl.v[0].op, "restore");
	assert_int_equal(tl.v[0].applied, 2);
	for (i = 0; i < tl.n; i++)
		assert_true(strcmp(tl.v[i].time, cut) >= 0);
	audit_timeline_free(&tl);
	assert_int_equal(audit_timeline_read(f->db, "2000-01-01T00:00", &tl, &err), 0);
	assert_int_equal(tl.n, all);
	audit_timeline_free(&tl);
	assert_int_equal(audit_timeline_read(f->db, "9999-01-01T00:00", &tl, &err), 0);
	assert_int_equal(tl.n, 0);
	audit_timeline_free(&tl);
}

/* Many sessions' acks of one revision, more than a page, are one event. */
static void
test_timeline_pages(void **state)
{
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct audit *a;
	struct al_err err;
	char id[16];
	struct row r = { AUDIT_D_APPLIED, id, "store", "revoke applied", BOB, 9 };

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (int i = 0; i < 600; i++) {
		snprintf(id, sizeof id, "s-%d", i);
		r.d = i % 3 == 0 ? AUDIT_D_REJECTED : AUDIT_D_APPLIED;
		put(a, &r);
	}
	audit_close(a);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	assert_int_equal(tl.n, 1);
	assert_int_equal(tl.v[0].applied, 400);
	assert_int_equal(tl.v[0].rejected, 200);
	assert_string_equal(tl.v[0].by.user, "bob");
	audit_timeline_free(&tl);
}

/* An author that is not the three fields as written is no author; names are bounded and cleaned. */
static void
test_timeline_hostile_detail(void **state)
{
	struct fixture *f = *state;
	static const struct row rows[] = {
		{ AUDIT_D_APPLIED, "s-1", "a", "revoke applied", "{\"by\":7,\"uid\":1,\"via\":\"x\"}", 1 },
		{ AUDIT_D_APPLIED, "s-1", "b", "revoke applied", "{\"by\":\"x\",\"uid\":-1,\"via\":\"x\"}", 2 },
		{ AUDIT_D_APPLIED, "s-1", "c", "revoke applied", "not json " CANARY, 3 },
		{ AUDIT_D_APPLIED, "s-1", "d", "revoke applied",
		  "{\"by\":\"ev\\u001bil\",\"uid\":5,\"via\":\"ctl\"}", 4 },
	};
	struct audit_timeline tl;
	struct al_err err;

	put_all(f, rows, sizeof rows / sizeof rows[0]);
	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), 0);
	assert_int_equal(tl.n, 4);
	assert_false(tl.v[0].has_author);
	assert_false(tl.v[1].has_author);
	assert_false(tl.v[2].has_author);
	assert_true(tl.v[3].has_author);
	assert_string_equal(tl.v[3].by.user, "ev?il");
	no_canary(tl.v, tl.n * sizeof tl.v[0]);
	audit_timeline_free(&tl);
}

static void
test_readers_refuse(void **state)
{
	struct fixture *f = *state;
	struct audit_timeline tl;
	struct audit_propose p;
	struct al_err err;
	char path[128];
	FILE *fp;

	assert_int_equal(audit_timeline_read(f->db, NULL, &tl, &err), -1);
	assert_string_equal(err.msg, "audit timeline: cannot open database");
	assert_int_equal(access(f->db, F_OK), -1);	/* not created */
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), -1);
	assert_string_equal(err.msg, "audit propose: cannot open database");
	assert_int_equal(audit_timeline_read(f->dir, NULL, &tl, &err), -1);
	assert_string_equal(err.msg, "audit timeline: cannot open database");
	snprintf(path, sizeof path, "%s/notes.txt", f->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("not a database at all, not even close to one, some more bytes\n", fp);
	fclose(fp);
	assert_int_equal(audit_timeline_read(path, NULL, &tl, &err), -1);
	assert_string_equal(err.msg, "audit timeline: not an audit database");
	assert_int_equal(audit_propose_read(path, NULL, NULL, &p, &err), -1);
	assert_string_equal(err.msg, "audit propose: not an audit database");
}

/* ---- propose ---- */

static const struct propose_denial *
denial(const struct audit_propose *p, const char *rule, const char *tool)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].rule, rule) == 0 && strcmp(p->v[i].tool, tool) == 0)
			return &p->v[i];
	fail_msg("no denial %s of %s", rule, tool);
	return NULL;
}

static void
test_propose_story(void **state)
{
	struct fixture *f = *state;
	struct audit_propose p;
	struct al_err err;
	struct incident inc;
	json_t *file;
	size_t left;
	char *text;

	put_all(f, story, sizeof story / sizeof story[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	assert_int_equal(p.n, 3);	/* never an allowed call */
	assert_int_equal(denial(&p, "revoked", "store")->calls, 3);
	assert_int_equal(denial(&p, "revoked", "store")->sessions, 2);
	assert_int_equal(denial(&p, "sink_ceiling", "mail.send")->calls, 1);
	assert_int_equal(denial(&p, "frozen", "fetch")->sessions, 1);
	no_canary(p.v, p.n * sizeof p.v[0]);
	assert_int_equal(audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left), 0);
	assert_non_null(file);
	assert_int_equal(left, 0);
	/* What the reader of :apply and ctl apply takes: a restore of store, and only that. */
	assert_int_equal(incident_from_json(file, &inc, &err), 0);
	assert_int_equal(inc.n, 1);
	assert_int_equal(inc.op[0], CUTOVER_RESTORE);
	assert_string_equal(inc.tool[0], "store");
	text = json_dumps(file, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(strstr(text, "\"why\":{\"store\":\"3 calls in 2 sessions denied revoked, "));
	no_canary(text, strlen(text));
	free(text);
	json_decref(file);
	audit_propose_free(&p);
}

/*
 * Class flow holds: the calls a flow hold held and denied are read from
 * the decisions' detail; a tool only a flow held is not proposed for a
 * restore (it would lift nothing), one a tool hold held too still is.
 */
#define FLOW_D	"{\"by\":\"alice\",\"uid\":1001,\"via\":\"ctl\",\"wait_ms\":5," \
		"\"flow\":\"confidential>public\",\"request_hash\":\"" CANARY_HASH "\"," \
		"\"declassified\":false}"
/*
 * A row edited by hand (the tool of a denial, the triggers dropped and put
 * back): the proposal would restore what was never denied. The log does
 * not verify, and nothing is proposed from it.
 */
static void
test_propose_refuses_edited_log(void **state)
{
	struct fixture *f = *state;
	struct audit_propose p;
	struct al_err err;
	sqlite3 *db;

	put_all(f, story, sizeof story / sizeof story[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	audit_propose_free(&p);
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TRIGGER audit_entries_no_update;"
				      "UPDATE audit_entries SET tool = 'shell.exec' WHERE seq = ("
				      "SELECT min(seq) FROM audit_entries WHERE decision = 'denied');"
				      "CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries"
				      " BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), -1);
	assert_non_null(strstr(err.msg, "audit propose: the log does not verify (hash mismatch at entry "));
	assert_int_equal(p.n, 0);
}

static void
test_propose_flows(void **state)
{
	struct fixture *f = *state;
	static const struct row rows[] = {
		{ AUDIT_D_APPLIED, "s-1", "mail.send", "hold 1 denied", FLOW_D, 1 },
		{ AUDIT_D_DENIED, "s-1", "mail.send", "hold_denied", NULL, 1 },
		{ AUDIT_D_APPLIED, "s-2", "mail.send", "hold 2 timed out", FLOW_D, 1 },
		{ AUDIT_D_DENIED, "s-2", "mail.send", "hold_timeout", NULL, 1 },
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 3 denied: engine stop", FLOW_D, 1 },
		{ AUDIT_D_DENIED, "s-1", "store", "hold_denied", NULL, 1 },
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 4 denied", BOB, 1 },	/* a tool hold */
		{ AUDIT_D_DENIED, "s-1", "store", "hold_denied", NULL, 1 },
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 5 approved, declassified", FLOW_D, 1 },
	};
	struct audit_propose p;
	struct al_err err;
	struct incident inc;
	json_t *file;
	size_t left, i;

	put_all(f, rows, sizeof rows / sizeof rows[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.n_flows, 3);	/* never an approval */
	for (i = 0; i < p.n_flows; i++)
		assert_string_equal(p.flows[i].flow, "confidential>public");
	assert_string_equal(p.flows[0].tool, "mail.send");
	assert_string_equal(p.flows[0].rule, "hold_denied");
	assert_string_equal(p.flows[1].rule, "hold_timeout");
	assert_int_equal(p.flows[1].sessions, 1);
	assert_string_equal(p.flows[2].tool, "store");
	assert_int_equal(p.flows[2].calls, 1);
	no_canary(p.flows, p.n_flows * sizeof p.flows[0]);
	assert_int_equal(audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left), 0);
	assert_non_null(file);
	assert_int_equal(incident_from_json(file, &inc, &err), 0);
	assert_int_equal(inc.n, 1);	/* store (a tool hold too), never mail.send */
	assert_string_equal(inc.tool[0], "store");
	json_decref(file);
	audit_propose_free(&p);
}

/*
 * A tool held first (one call denied by its operator), then revoked (two
 * calls in another session): proposed once, and its note tells both
 * rules with their calls, not only the first.
 */
static void
test_propose_every_rule_of_a_tool(void **state)
{
	struct fixture *f = *state;
	static const struct row rows[] = {
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 4 denied", BOB, 1 },
		{ AUDIT_D_DENIED, "s-1", "store", "hold_denied", NULL, 1 },
		{ AUDIT_D_DENIED, "s-2", "store", "revoked", NULL, 2 },
		{ AUDIT_D_DENIED, "s-2", "store", "revoked", NULL, 2 },
	};
	struct audit_propose p;
	struct al_err err;
	json_t *file;
	size_t left;
	const char *why;

	put_all(f, rows, sizeof rows / sizeof rows[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	assert_int_equal(p.n, 2);
	assert_int_equal(audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left), 0);
	assert_non_null(file);
	assert_int_equal(json_array_size(json_object_get(file, "restore")), 1);
	why = json_string_value(json_object_get(json_object_get(file, "why"), "store"));
	assert_non_null(why);
	assert_memory_equal(why, "3 calls in at least 1 session denied 1 hold_denied, 2 revoked, ",
			    strlen("3 calls in at least 1 session denied 1 hold_denied, 2 revoked, "));
	json_decref(file);
	audit_propose_free(&p);
}

/*
 * The timeline of a class flow hold: its cutover grouped on the flow (one
 * session applied, one not applicable: no declassification), the wait
 * and the declassifying approval told as written, the restore; the hash
 * in the decision's detail never reaches an event.
 */
static void
test_timeline_flows(void **state)
{
	struct fixture *f = *state;
	static const struct row rows[] = {
		{ AUDIT_D_APPLIED, "engine", "confidential>public", "hold by request", BOB, 5 },
		{ AUDIT_D_APPLIED, "s-1", "confidential>public", "hold applied", BOB, 5 },
		{ AUDIT_D_NOT_APPLICABLE, "s-2", "confidential>public", "hold no declassification",
		  BOB, 5 },
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 9 waiting", NULL, 5 },
		{ AUDIT_D_APPLIED, "s-1", "store", "hold 9 approved, declassified", FLOW_D, 5 },
		{ AUDIT_D_ALLOWED, "s-1", "store", "allowed", NULL, 5 },
		{ AUDIT_D_APPLIED, "s-1", "confidential>public", "restore applied", BOB, 6 },
	};
	struct audit_timeline tl;
	struct al_err err;
	char got[2048];

	put_all(f, rows, sizeof rows / sizeof rows[0]);
	if (audit_timeline_read(f->db, NULL, &tl, &err) < 0)
		fail_msg("%s", err.msg);
	describe(&tl, got, sizeof got);
	assert_string_equal(got,
		"request hold confidential>public engine hold by request r5 1/0/0 bob\n"
		"policy hold confidential>public - - r5 1/1/0 bob\n"
		"request hold store s-1 hold 9 waiting r5 1/0/0 -\n"
		"request hold store s-1 hold 9 approved, declassified r5 1/0/0 alice\n"
		"policy restore confidential>public - - r6 1/0/0 bob\n");
	no_canary(tl.v, tl.n * sizeof tl.v[0]);
	audit_timeline_free(&tl);
}

/* --session and --since narrow the denials counted. */
static void
test_propose_filters(void **state)
{
	struct fixture *f = *state;
	struct audit_propose p;
	struct al_err err;

	put_all(f, story, sizeof story / sizeof story[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, "s-4", &p, &err), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].calls, 1);
	assert_int_equal(p.v[0].sessions, 1);
	audit_propose_free(&p);
	assert_int_equal(audit_propose_read(f->db, NULL, "s-", &p, &err), 0);
	assert_int_equal(p.n, 0);	/* a whole id, not a prefix */
	audit_propose_free(&p);
	assert_int_equal(audit_propose_read(f->db, "9999-01-01T00:00", NULL, &p, &err), 0);
	assert_int_equal(p.n, 0);
	audit_propose_free(&p);
}

/* Nothing an incident file can express: no file, and each denial still there to report. */
static void
test_propose_nothing_expressible(void **state)
{
	struct fixture *f = *state;
	static const struct row rows[] = {
		{ AUDIT_D_DENIED, "s-1", "mail.send", "sink_ceiling", NULL, 0 },
		{ AUDIT_D_EGRESS_DENIED, "s-1", "vault.read", "egress_denied", NULL, 0 },
		{ AUDIT_D_DENIED, "s-1", "", "revoked", NULL, 0 },	/* no name to restore */
	};
	struct audit_propose p;
	struct al_err err;
	json_t *file = (json_t *)1;
	size_t left;

	put_all(f, rows, sizeof rows / sizeof rows[0]);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	assert_int_equal(p.n, 3);
	assert_false(p.v[2].tool_ok);
	assert_int_equal(audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left), 0);
	assert_null(file);
	assert_string_equal(audit_propose_hint("sink_ceiling"),
			    "the tool's sink_ceiling in the session's config, or a session of a "
			    "lower class");
	audit_propose_free(&p);
}

/* Past the incident file's bound, the rest are counted as left out. */
static void
test_propose_bound(void **state)
{
	struct fixture *f = *state;
	struct audit_propose p;
	struct audit *a;
	struct al_err err;
	struct incident inc;
	json_t *file;
	size_t left;
	char tool[16];
	struct row r = { AUDIT_D_DENIED, "s-1", tool, "revoked", NULL, 0 };

	assert_int_equal(audit_open(f->db, &a, &err), 0);
	for (int i = 0; i < INCIDENT_TOOLS_MAX + 3; i++) {
		snprintf(tool, sizeof tool, "t%d", i);
		put(a, &r);
	}
	audit_close(a);
	assert_int_equal(audit_propose_read(f->db, NULL, NULL, &p, &err), 0);
	assert_int_equal(audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left), 0);
	assert_int_equal(left, 3);
	assert_int_equal(incident_from_json(file, &inc, &err), 0);
	assert_int_equal(inc.n, INCIDENT_TOOLS_MAX);
	assert_string_equal(inc.tool[0], "t0");
	json_decref(file);
	audit_propose_free(&p);
}

/*
 * Every denial rule of the gateway has its own hint, and only revoked and
 * the holds' (a restore lifts a hold) are restorable.
 */
static void
test_propose_every_rule(void **state)
{
	(void)state;
	assert_string_equal(audit_propose_hint("no such rule"), audit_propose_hint(NULL));
	for (int r = 0; r < RULE_COUNT; r++) {
		const char *id = policy_rule_id((enum policy_rule)r);

		if (policy_rule_allowed((enum policy_rule)r) || policy_rule_fatal((enum policy_rule)r))
			continue;
		if (strcmp(audit_propose_hint(id), audit_propose_hint(NULL)) == 0)
			fail_msg("rule %s has no hint", id);
		assert_int_equal(audit_propose_restorable(id), r == RULE_REVOKED ||
				 r == RULE_HOLD_DENIED || r == RULE_HOLD_TIMEOUT);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timeline_story, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_cursor_past_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_scan_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_since, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_hostile_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readers_refuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_story, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_refuses_edited_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_flows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_every_rule_of_a_tool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_flows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_nothing_expressible, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_propose_every_rule, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
