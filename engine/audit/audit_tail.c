#include "audit_tail.h"
#include "audit.h"
#include "audit_read.h"
#include "ids.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/*
 * Failures report fixed text only, as audit.c does: sqlite3_errmsg() can
 * quote SQL or stored values.
 */

/*
 * The columns of struct audit_row, in its order, and nothing else: never
 * detail, the data classes, entry_id or prev_hash. The table and column
 * names are audit.c's schema.
 */
#define TAIL_COLS \
	"seq, ts, session_id, call_id, type, tool, decision, rule," \
	" revision, latency_us, request_hash, response_hash, entry_hash"

enum {
	TC_SEQ,
	TC_TS,
	TC_SESSION,
	TC_CALL,
	TC_TYPE,
	TC_TOOL,
	TC_DECISION,
	TC_RULE,
	TC_REVISION,
	TC_LATENCY,
	TC_REQUEST_HASH,
	TC_RESPONSE_HASH,
	TC_ENTRY_HASH,
};

enum tail_st {
	TAIL_AFTER,		/* audit_tail_read */
	TAIL_LAST,		/* audit_tail_last */
	TAIL_MAX,		/* audit_tail_max_seq */
	TAIL_UNKNOWN,		/* audit_tail_unknown */
	TAIL_N
};

/*
 * "? IS NULL OR" lets one statement serve the whole log and one session:
 * the planner still walks the primary key (there is no index on
 * session_id, and a read-only connection cannot add one).
 */
static const char *const tail_sql[TAIL_N] = {
	[TAIL_AFTER] = "SELECT " TAIL_COLS " FROM audit_entries"
		       " WHERE seq > ?1 AND (?2 IS NULL OR session_id = ?2)"
		       " ORDER BY seq LIMIT ?3",
	[TAIL_LAST] = "SELECT " TAIL_COLS " FROM audit_entries"
		      " WHERE ?1 IS NULL OR session_id = ?1"
		      " ORDER BY seq DESC LIMIT ?2",
	[TAIL_MAX] = "SELECT max(seq) FROM audit_entries",
	/* ?3 and ?4: the dispatch and call type names, bound from audit.h's table. */
	[TAIL_UNKNOWN] = "SELECT " TAIL_COLS " FROM audit_entries WHERE seq IN"
			 " (SELECT min(seq) FROM audit_entries"
			 "  WHERE seq <= ?1 AND call_id IS NOT NULL AND type IN (?3, ?4)"
			 "  GROUP BY call_id HAVING sum(type = ?4) = 0 AND sum(type = ?3) > 0)"
			 " ORDER BY seq LIMIT ?2",
};

static const char hex_digits[] = "0123456789abcdefABCDEF";

struct audit_tail {
	sqlite3 *db;
	sqlite3_stmt *st[TAIL_N];
	char why[48];		/* fixed text of the latest failure: AUDIT_TAIL_ERR_* */
};

/* Preparing reads the schema: that is where a wrong file shows. */
static int
prepare_all(struct audit_tail *t)
{
	int rc = SQLITE_OK;

	for (int i = 0; rc == SQLITE_OK && i < TAIL_N; i++)
		rc = sqlite3_prepare_v3(t->db, tail_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					&t->st[i], NULL);
	return rc;
}

/* Opened as every reader opens a log (audit_read.h): read-only, never created. */
int
audit_tail_open(const char *path, struct audit_tail **out, struct al_err *err)
{
	struct audit_tail *t;
	const char *why;
	int rc;

	*out = NULL;
	if (!(t = calloc(1, sizeof *t)))
		return al_fail(err, "%s", AUDIT_TAIL_ERR_OPEN);
	why = audit_read_open(path, &t->db);
	if (!why && (rc = prepare_all(t)) != SQLITE_OK)
		why = audit_read_prepare_error(rc);
	if (why) {
		audit_tail_close(t);
		return al_fail(err, "audit tail: %s", why);
	}
	*out = t;
	return 0;
}

void
audit_tail_close(struct audit_tail *t)
{
	if (!t)
		return;
	for (int i = 0; i < TAIL_N; i++)
		sqlite3_finalize(t->st[i]);
	sqlite3_close(t->db);
	free(t);
}

const char *
audit_tail_error(const struct audit_tail *t)
{
	return t ? t->why : AUDIT_TAIL_ERR_READ;
}

/* audit_read.h's text for a failed step, as the tail's own (AUDIT_TAIL_ERR_*). */
static int
fail(struct audit_tail *t, int rc)
{
	snprintf(t->why, sizeof t->why, "audit tail: %s", audit_read_step_error(rc));
	return -1;
}

/* Bounded and control bytes replaced (audit_read.h): the console draws these strings. */
static void
copy_text(char *dst, size_t cap, sqlite3_stmt *st, int col)
{
	audit_read_text(dst, cap, (const char *)sqlite3_column_text(st, col));
}

/* A prefix only of something that is a hash: anything else shows as none. */
static void
copy_hash(char dst[SNAP_HASH_PREFIX + 1], sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	if (s && strspn(s, hex_digits) >= SNAP_HASH_PREFIX)
		snprintf(dst, SNAP_HASH_PREFIX + 1, "%.*s", SNAP_HASH_PREFIX, s);
	else
		dst[0] = '\0';
}

static void
fill_row(struct audit_row *r, sqlite3_stmt *st)
{
	memset(r, 0, sizeof *r);
	r->seq = sqlite3_column_int64(st, TC_SEQ);
	copy_text(r->time, sizeof r->time, st, TC_TS);
	copy_text(r->session, sizeof r->session, st, TC_SESSION);
	copy_text(r->call, sizeof r->call, st, TC_CALL);
	copy_text(r->type, sizeof r->type, st, TC_TYPE);
	copy_text(r->tool, sizeof r->tool, st, TC_TOOL);
	copy_text(r->decision, sizeof r->decision, st, TC_DECISION);
	copy_text(r->rule, sizeof r->rule, st, TC_RULE);
	r->revision = sqlite3_column_int64(st, TC_REVISION);
	r->latency_us = sqlite3_column_int64(st, TC_LATENCY);
	copy_hash(r->request_hash, st, TC_REQUEST_HASH);
	copy_hash(r->response_hash, st, TC_RESPONSE_HASH);
	copy_hash(r->entry_hash, st, TC_ENTRY_HASH);
	r->tone = audit_decision_tone(audit_decision_lookup(r->type, r->decision));
}

static sqlite3_int64
limit_of(size_t cap)
{
	return cap > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)cap;
}

static int
bind_session(sqlite3_stmt *st, int i, const char *session)
{
	/* STATIC is safe: run() clears the bindings before returning. */
	return session ? sqlite3_bind_text(st, i, session, -1, SQLITE_STATIC)
		       : sqlite3_bind_null(st, i);
}

/* A read's statement (NULL: no tail), bound by the read before run() checks the rest. */
static sqlite3_stmt *
stmt(struct audit_tail *t, enum tail_st which)
{
	return t ? t->st[which] : NULL;
}

/* Arguments every read checks the same way: 1 to read, 0 when cap asks for nothing, or -1. */
static int
read_args(struct audit_tail *t, const struct audit_row *rows, size_t cap, size_t *n)
{
	if (n)
		*n = 0;
	if (!t)
		return -1;
	if (!n || (cap > 0 && !rows))
		return fail(t, SQLITE_ERROR);
	return cap > 0;
}

/*
 * The arguments checked, then step to the end (not at all when a binding
 * failed: bound false), then reset: the read transaction ends here
 * whatever happened, and no binding outlives the caller's strings. The
 * LIMIT is cap, so the loop's own bound never cuts a statement short in
 * practice.
 */
static int
run(struct audit_tail *t, sqlite3_stmt *st, bool bound, struct audit_row *rows, size_t cap,
    size_t *n)
{
	int go = read_args(t, rows, cap, n);
	int rc = bound ? SQLITE_DONE : SQLITE_ERROR;

	while (go > 0 && bound && *n < cap && (rc = sqlite3_step(st)) == SQLITE_ROW)
		fill_row(&rows[(*n)++], st);
	if (st) {	/* NULL: no tail (go is -1) */
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
	}
	if (go <= 0)
		return go;
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	*n = 0;
	return fail(t, rc);
}

int
audit_tail_read(struct audit_tail *t, int64_t after_seq, const char *session_or_null,
		struct audit_row *rows, size_t cap, size_t *n)
{
	sqlite3_stmt *st = stmt(t, TAIL_AFTER);
	bool bound = st && sqlite3_bind_int64(st, 1, after_seq) == SQLITE_OK &&
		     bind_session(st, 2, session_or_null) == SQLITE_OK &&
		     sqlite3_bind_int64(st, 3, limit_of(cap)) == SQLITE_OK;

	return run(t, st, bound, rows, cap, n);
}

static void
reverse(struct audit_row *rows, size_t n)
{
	struct audit_row tmp;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		tmp = rows[i];
		rows[i] = rows[n - 1 - i];
		rows[n - 1 - i] = tmp;
	}
}

/* Read newest first, so LIMIT keeps the newest; the caller wants them ascending. */
int
audit_tail_last(struct audit_tail *t, size_t cap, const char *session_or_null,
		struct audit_row *rows, size_t *n)
{
	sqlite3_stmt *st = stmt(t, TAIL_LAST);
	bool bound = st && bind_session(st, 1, session_or_null) == SQLITE_OK &&
		     sqlite3_bind_int64(st, 2, limit_of(cap)) == SQLITE_OK;

	if (run(t, st, bound, rows, cap, n) < 0)
		return -1;
	reverse(rows, *n);
	return 0;
}

int
audit_tail_unknown(struct audit_tail *t, int64_t upto, struct audit_row *rows, size_t cap,
		   size_t *n)
{
	sqlite3_stmt *st = stmt(t, TAIL_UNKNOWN);
	bool bound = st && sqlite3_bind_int64(st, 1, upto) == SQLITE_OK &&
		     sqlite3_bind_int64(st, 2, limit_of(cap)) == SQLITE_OK &&
		     sqlite3_bind_text(st, 3, audit_type_id(AUDIT_T_DISPATCH), -1, SQLITE_STATIC) ==
		     SQLITE_OK &&
		     sqlite3_bind_text(st, 4, audit_type_id(AUDIT_T_CALL), -1, SQLITE_STATIC) ==
		     SQLITE_OK;
	size_t i;

	if (run(t, st, bound, rows, cap, n) < 0)
		return -1;
	for (i = 0; i < *n; i++)
		rows[i].unknown_outcome = true;
	return 0;
}

int64_t
audit_tail_max_seq(struct audit_tail *t)
{
	sqlite3_stmt *st;
	int64_t seq = -1;
	int rc;

	if (!t)
		return -1;
	st = t->st[TAIL_MAX];
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		seq = sqlite3_column_int64(st, 0);	/* NULL, an empty log: 0 */
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		fail(t, rc);
	return seq;
}

int
audit_tail_pick_session(struct audit_tail *t, const char *typed, char out[SNAP_ID_MAX],
			char *why, size_t cap)
{
	static const char sql[] = "SELECT session_id FROM audit_entries WHERE " AUDIT_INDEXED
				  " AND type = ?1";
	struct id_pick k;
	sqlite3_stmt *st;
	size_t i = 0;
	int rc = sqlite3_prepare_v2(t->db, sql, -1, &st, NULL);

	out[0] = '\0';
	id_pick_init(&k, typed);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, audit_type_id(AUDIT_T_SESSION_START), -1,
				       SQLITE_STATIC);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);

		rc = SQLITE_OK;
		id_pick_offer(&k, id ? id : "", i);
		if (k.at == i++ && k.matches && id)	/* this one is the pick so far */
			audit_read_text(out, SNAP_ID_MAX, id);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_OK) {
		fail(t, rc);
		snprintf(why, cap, "%s", t->why);
		return -1;
	}
	if (k.matches == 0)
		return 0;
	return id_pick_done(&k, why, cap) == 0 ? 1 : -1;
}
