#include "audit_verify.h"
#include "audit_read.h"
#include "audit_row.h"
#include "grow.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

static bool
has_text(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_TEXT && sqlite3_column_bytes(st, i) > 0;
}

static bool
text_is(sqlite3_stmt *st, int i, const char *want)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s && (size_t)sqlite3_column_bytes(st, i) == strlen(want) &&
	       strcmp(s, want) == 0;
}

/* The first problem of one row, or NULL when it is sound. */
static const char *
check_row(struct hash_ctx *hc, sqlite3_stmt *st, int64_t want_seq, const char *prev)
{
	char hash[HASH_HEX_LEN + 1];

	if (sqlite3_column_type(st, AUDIT_COL_SEQ) != SQLITE_INTEGER ||
	    sqlite3_column_int64(st, AUDIT_COL_SEQ) != want_seq)
		return "sequence gap";
	if (!has_text(st, AUDIT_COL_ENTRY_ID) || !has_text(st, AUDIT_COL_TS) ||
	    !has_text(st, AUDIT_COL_SESSION_ID) || !has_text(st, AUDIT_COL_TYPE) ||
	    !has_text(st, AUDIT_COL_PREV_HASH) || !has_text(st, AUDIT_COL_ENTRY_HASH))
		return "missing field";
	if (!text_is(st, AUDIT_COL_PREV_HASH, prev))
		return "chain broken";
	if (audit_row_hash_stored(hc, st, hash) < 0 || !text_is(st, AUDIT_COL_ENTRY_HASH, hash))
		return "hash mismatch";
	return NULL;
}

static void
verify_report(struct audit_verify *out, int64_t seq, const char *reason)
{
	out->ok = false;
	out->first_bad_seq = seq;
	snprintf(out->reason, sizeof out->reason, "%s", reason);
}

static void
verify_fail(struct audit_verify *out, int64_t seq, const char *reason)
{
	if (out->ok)		/* only the first problem is reported */
		verify_report(out, seq, reason);
}

static const char *
column_str(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_TEXT ?
	       (const char *)sqlite3_column_text(st, i) : NULL;
}

static const char *
column_or_empty(sqlite3_stmt *st, int i)
{
	const char *s = column_str(st, i);

	return s ? s : "";
}

/*
 * A dispatch waits for its terminal entry, a session_start for its
 * session_end: one list each, grown by doubling; -1 when out of memory.
 */
static int
pending_open(struct audit_unknown **list, size_t *n, size_t *cap, sqlite3_stmt *st)
{
	struct audit_unknown *u;

	if (grow(list, cap, *n + 1, sizeof **list, 16, SIZE_MAX / sizeof **list) < 0)
		return -1;
	/* Zeroed again: pending_close moves the list down and leaves its old last entry. */
	u = memset(&(*list)[(*n)++], 0, sizeof *u);
	u->seq = sqlite3_column_int64(st, AUDIT_COL_SEQ);
	audit_read_text(u->session_id, sizeof u->session_id,
		  column_or_empty(st, AUDIT_COL_SESSION_ID));
	audit_read_text(u->call_id, sizeof u->call_id, column_or_empty(st, AUDIT_COL_CALL_ID));
	audit_read_text(u->tool, sizeof u->tool, column_or_empty(st, AUDIT_COL_TOOL));
	return 0;
}

/* The row, an end, closes its opening: by call id, or by session (the newest first). */
static void
pending_close(struct audit_unknown *list, size_t *n, bool session, sqlite3_stmt *st)
{
	const char *key = column_str(st, session ? AUDIT_COL_SESSION_ID : AUDIT_COL_CALL_ID);
	size_t i;

	for (i = *n; key && i-- > 0;)
		if (strcmp(session ? list[i].session_id : list[i].call_id, key) == 0) {
			memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof list[0]);
			(*n)--;
			return;
		}
}

/* One more part of a rule: after its colon, or after a comma. */
static void
rule_add(char *rule, size_t cap, const char *part)
{
	size_t len = strlen(rule);

	snprintf(rule + len, cap - len, "%s %s", rule[len - 1] == ':' ? "" : ",", part);
}

void
audit_standing_rule(char *rule, size_t cap, const json_t *sets)
{
	static const char *const parts[] = { "revoked", "held", "flows" };
	char part[32];
	size_t i, n;

	snprintf(rule, cap, "standing:");
	for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if ((n = json_array_size(json_object_get(sets, parts[i]))) > 0) {
			snprintf(part, sizeof part, "%zu %s", n, parts[i]);
			rule_add(rule, cap, part);
		}
	if (json_object_get(sets, "frozen"))
		rule_add(rule, cap, "frozen");
	if (rule[strlen(rule) - 1] == ':')
		rule_add(rule, cap, "nothing");
}

/*
 * The engine's standing entries: the newest is kept (audit_verify.h). A
 * restored one is told by the sets of its detail (its rule says only
 * that they were taken up); one that cannot be read, by its rule.
 */
static void
standing_note(struct audit_verify *out, sqlite3_stmt *st)
{
	const char *rule = column_or_empty(st, AUDIT_COL_RULE);
	json_t *sets;

	if (strcmp(column_or_empty(st, AUDIT_COL_SESSION_ID), "engine") != 0 ||
	    strncmp(rule, "standing", strlen("standing")) != 0)
		return;
	out->standing_seq = sqlite3_column_int64(st, AUDIT_COL_SEQ);
	out->standing_revision = sqlite3_column_int64(st, AUDIT_COL_REVISION);
	audit_read_text(out->standing_rule, sizeof out->standing_rule, rule);
	if (strcmp(rule, "standing restored") != 0 ||
	    !(sets = json_loads(column_or_empty(st, AUDIT_COL_DETAIL), 0, NULL)))
		return;
	if (json_is_object(sets))
		audit_standing_rule(out->standing_rule, sizeof out->standing_rule, sets);
	json_decref(sets);
}

struct pending_caps {
	size_t calls, sessions;
};

/* Counted by the vocabulary; dispatches and starts matched with their ends. */
static int
tally(struct audit_verify *out, struct pending_caps *cap, sqlite3_stmt *st)
{
	enum audit_decision d = audit_decision_lookup(column_str(st, AUDIT_COL_TYPE),
						      column_str(st, AUDIT_COL_DECISION));

	if (d == AUDIT_D_COUNT) {
		out->unrecognised++;
		return 0;
	}
	out->decisions[d]++;
	switch (audit_decision_type(d)) {
	case AUDIT_T_DISPATCH:
		return pending_open(&out->unknown, &out->n_unknown, &cap->calls, st);
	case AUDIT_T_CALL:
		pending_close(out->unknown, &out->n_unknown, false, st);
		return 0;
	case AUDIT_T_SESSION_START:
		return pending_open(&out->unended, &out->n_unended, &cap->sessions, st);
	case AUDIT_T_SESSION_END:
		pending_close(out->unended, &out->n_unended, true, st);
		return 0;
	case AUDIT_T_POLICY:
		standing_note(out, st);
		return 0;
	default:
		return 0;
	}
}

void
audit_verify_free(struct audit_verify *v)
{
	if (!v)
		return;
	free(v->unknown);
	v->unknown = NULL;
	v->n_unknown = 0;
	free(v->unended);
	v->unended = NULL;
	v->n_unended = 0;
}

static int
by_session(const void *x, const void *y)
{
	const struct audit_unknown *a = x, *b = y;
	int c = strcmp(a->session_id, b->session_id);

	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

int
audit_anchor_parse(const char *text, struct audit_anchor *out)
{
	const char *colon = text ? strchr(text, ':') : NULL;
	char *end;
	long long seq;
	size_t i;

	memset(out, 0, sizeof *out);
	if (!colon || colon == text || text[0] < '1' || text[0] > '9' ||
	    strlen(colon + 1) != HASH_HEX_LEN)
		return -1;
	errno = 0;
	seq = strtoll(text, &end, 10);
	if (errno || end != colon || seq <= 0)
		return -1;
	for (i = 0; i < HASH_HEX_LEN; i++) {	/* hex either case, kept as the log writes it */
		if (!colon[1 + i] || !strchr("0123456789abcdefABCDEF", colon[1 + i]))
			return -1;
		out->hash[i] = (char)tolower((unsigned char)colon[1 + i]);
	}
	out->seq = seq;
	return 0;
}

/* The row is the anchor's entry: its hash must be the anchor's. */
static void
check_anchor(sqlite3_stmt *st, const struct audit_anchor *anchor, struct audit_verify *out)
{
	if (text_is(st, AUDIT_COL_ENTRY_HASH, anchor->hash))
		out->anchored = true;
	else
		verify_fail(out, anchor->seq, "not the anchor's entry: the log was rewritten");
}

/* After the walk: an anchor past the newest entry means a cut tail. */
static void
anchor_missing(const struct audit_anchor *anchor, struct audit_verify *out)
{
	char why[sizeof out->reason];

	snprintf(why, sizeof why, "the anchor's entry is missing: the log ends at entry %lld"
		 " (cut)", (long long)out->head_seq);
	verify_fail(out, anchor->seq, why);
}

/*
 * Walk every row: the count covers the whole file, the report names the
 * first failure. After a gap the walk carries on from the row it found.
 * With an anchor, its entry must be there with its hash.
 */
static int
verify_walk(struct hash_ctx *hc, sqlite3_stmt *st, const struct audit_anchor *anchor,
	    struct audit_verify *out)
{
	char prev[HASH_HEX_LEN + 1];
	const char *why, *h;
	int64_t want = 1, seq;
	bool seen = false;
	struct pending_caps cap = { 0 };
	int rc;

	memcpy(prev, audit_genesis_hash, sizeof audit_genesis_hash);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->entries++;
		why = check_row(hc, st, want, prev);
		if (why)
			verify_fail(out, want, why);
		if (tally(out, &cap, st) < 0)
			return -1;
		seq = sqlite3_column_int64(st, AUDIT_COL_SEQ);
		if (anchor && seq == anchor->seq) {
			seen = true;
			check_anchor(st, anchor, out);
		}
		want = seq + 1;
		h = (const char *)sqlite3_column_text(st, AUDIT_COL_ENTRY_HASH);
		snprintf(prev, sizeof prev, "%s", h ? h : "");
		out->head_seq = seq;
		memcpy(out->head_hash, prev, sizeof prev);
	}
	if (rc != SQLITE_DONE)
		verify_fail(out, want, "database corrupt");
	else if (anchor && !seen)
		anchor_missing(anchor, out);
	if (out->n_unknown > 1)
		qsort(out->unknown, out->n_unknown, sizeof out->unknown[0], by_session);
	if (out->n_unknown == 0 && out->n_unended == 0)
		audit_verify_free(out);		/* every dispatch and start found its end */
	return 0;
}

/*
 * Two entries with one id: the second is where the log goes wrong. Ids
 * are drawn at random or handed in by the writer; the file has no index
 * that would refuse a repeat. 0 when there is none, -1 when the query fails.
 */
static int64_t
duplicate_id(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t seq = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT seq FROM (SELECT seq, row_number() OVER"
			       " (PARTITION BY entry_id ORDER BY seq) AS n FROM audit_entries)"
			       " WHERE n = 2 ORDER BY seq LIMIT 1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		seq = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		seq = -1;
	sqlite3_finalize(st);
	return seq;
}

/* A repeated id is reported when it comes before the first problem the walk found. */
static void
verify_ids(sqlite3 *db, struct audit_verify *out)
{
	int64_t seq = duplicate_id(db);

	if (seq < 0) {
		verify_fail(out, 0, "database corrupt");
		return;
	}
	/* Damage to the file itself, or a problem at an earlier entry, comes first. */
	if (seq == 0 || (!out->ok && (out->first_bad_seq == 0 || out->first_bad_seq <= seq)))
		return;
	verify_report(out, seq, "duplicate entry id");
}

/*
 * Damage the walk cannot see (an index, a free page) still means someone
 * edited the file; SQLite's own check finds it.
 */
static bool
structure_ok(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool ok;

	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, NULL) != SQLITE_OK)
		return false;
	ok = sqlite3_step(st) == SQLITE_ROW && text_is(st, 0, "ok");
	sqlite3_finalize(st);
	return ok;
}

/* 1: PATH-wal is there and holds frames; 0: absent or empty; -1: cannot tell. */
static int
wal_holds_frames(const char *path)
{
	char wal[PATH_MAX];
	struct stat sb;

	if (snprintf(wal, sizeof wal, "%s-wal", path) >= (int)sizeof wal)
		return -1;
	if (stat(wal, &sb) < 0)
		return errno == ENOENT ? 0 : -1;
	return sb.st_size > 0;
}

/* "file:" and the path with every byte but [A-Za-z0-9/._~-] as %XX. */
static char *
immutable_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *uri = malloc(5 + 3 * n + sizeof "?immutable=1"), *p;

	if (!uri)
		return NULL;
	p = stpcpy(uri, "file:");
	for (; *path; path++) {
		unsigned char c = (unsigned char)*path;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("/._~-", c)) {
			*p++ = (char)c;
			continue;
		}
		*p++ = '%';
		*p++ = hex[c >> 4];
		*p++ = hex[c & 15];
	}
	strcpy(p, "?immutable=1");
	return uri;
}

#define VERIFY_SQL "SELECT " AUDIT_COLS " FROM audit_entries ORDER BY seq"

/*
 * The log's rows in order. A log on read-only media (an archived copy)
 * fails to open: a WAL database needs its shared-memory file, which
 * SQLite cannot make there. With no WAL beside it the file alone is the
 * whole log, and it is opened immutable (no locks, no WAL); a WAL that
 * holds frames cannot be read from there, and immutable would hide it.
 */
static int
verify_open(const char *path, sqlite3 **db, sqlite3_stmt **st, struct al_err *err)
{
	char *uri;
	int rc;

	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return SQLITE_CANTOPEN;
	sqlite3_busy_timeout(*db, AUDIT_BUSY_MS);
	rc = sqlite3_prepare_v2(*db, VERIFY_SQL, -1, st, NULL);
	/* SQLite 3.40 answers READONLY where it cannot make the shared-memory file */
	if (rc != SQLITE_CANTOPEN && rc != SQLITE_READONLY)
		return rc;
	if (wal_holds_frames(path) != 0) {
		al_fail(err, AUDIT_ERR_WAL_HERE);
		return SQLITE_READONLY;
	}
	sqlite3_close(*db);
	*db = NULL;
	if (!(uri = immutable_uri(path)))
		return SQLITE_NOMEM;
	rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return SQLITE_CANTOPEN;
	return sqlite3_prepare_v2(*db, VERIFY_SQL, -1, st, NULL);
}

int
audit_verify_file(const char *path, struct audit_verify *out, struct al_err *err)
{
	return audit_verify_anchored(path, NULL, out, err);
}

int
audit_verify_anchored(const char *path, const struct audit_anchor *anchor,
		      struct audit_verify *out, struct al_err *err)
{
	struct hash_ctx *hc;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	enum audit_schema schema;
	int rc;

	memset(out, 0, sizeof *out);
	out->ok = true;
	if (!path || audit_not_a_file(path))
		return al_fail(err, AUDIT_ERR_OPEN);
	rc = verify_open(path, &db, &st, err);
	if (rc == SQLITE_READONLY) {
		sqlite3_close(db);
		return err->msg[0] ? -1 : al_fail(err, AUDIT_ERR_OPEN);
	}
	if (rc == SQLITE_CORRUPT) {
		/* Damage under the table is tampering evidence, not a usage error. */
		sqlite3_close(db);
		verify_fail(out, 0, "database corrupt");
		return 0;
	}
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return al_fail(err, rc == SQLITE_ERROR || rc == SQLITE_NOTADB ?
			       AUDIT_ERR_NOT_AUDIT : rc == SQLITE_NOMEM ? AUDIT_ERR_MEMORY
			       : AUDIT_ERR_OPEN);
	}
	/* a view in the table's place can make the walk endless: judged first */
	schema = audit_schema_check(db);
	if (schema == AUDIT_SCHEMA_TABLES) {
		sqlite3_finalize(st);
		sqlite3_close(db);
		verify_fail(out, 0, "altered by hand: audit_entries or audit_key is not a table");
		return 0;
	}
	hc = hash_ctx_new();
	if (!hc || verify_walk(hc, st, anchor, out) < 0) {
		hash_ctx_free(hc);
		sqlite3_finalize(st);
		sqlite3_close(db);
		audit_verify_free(out);
		return al_fail(err, AUDIT_ERR_MEMORY);
	}
	hash_ctx_free(hc);
	sqlite3_finalize(st);
	verify_ids(db, out);
	if (out->ok && !structure_ok(db))
		verify_fail(out, 0, "database corrupt");
	/* after the walk, which names the entry an edit reached if there is one */
	if (schema == AUDIT_SCHEMA_TRIGGERS)
		verify_fail(out, 0, "altered by hand: its triggers or views are not the writer's");
	sqlite3_close(db);
	return 0;
}
