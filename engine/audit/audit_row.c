#include "audit_row.h"
#include "ids.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

const char audit_genesis_hash[HASH_HEX_LEN + 1] =
	"0000000000000000000000000000000000000000000000000000000000000000";

/*
 * The canonical form is a compact JSON array in column order — typed, so a
 * number can never pass for a string, and unambiguous, so no shift of bytes
 * between neighbouring fields keeps the same hash. NULL is null; a string
 * that is not valid UTF-8 cannot be written and the append fails. Written
 * field by field (hash.h's canonical writer), never through a json_t: the
 * fields that do not depend on the chain by the appender (audit_row_body),
 * the array around them by the log's leader (audit_row_seal), so that the
 * leader's serial step is short. The bytes are the same as in one go.
 */
static void
canon_text(struct hash_canon *c, const char *s)
{
	hash_canon_str(c, s, s ? strlen(s) : 0);
}

/*
 * A stored value is rendered by its storage class, so a field whose type
 * was changed no longer hashes like the original; a class the writer never
 * stores (real, blob) cannot be genuine.
 */
int
audit_row_hash_stored(struct hash_ctx *hc, sqlite3_stmt *st, char out[HASH_HEX_LEN + 1])
{
	struct hash_canon c;
	int i, bad = 0;

	hash_canon_init(&c);
	hash_canon_array_open(&c);
	for (i = 0; !bad && i < AUDIT_HASHED_COLS; i++) {
		switch (sqlite3_column_type(st, i)) {
		case SQLITE_NULL:
			hash_canon_str(&c, NULL, 0);
			break;
		case SQLITE_INTEGER:
			hash_canon_int(&c, sqlite3_column_int64(st, i));
			break;
		case SQLITE_TEXT:
			hash_canon_str(&c, (const char *)sqlite3_column_text(st, i),
				       (size_t)sqlite3_column_bytes(st, i));
			break;
		default:
			bad = 1;
		}
	}
	hash_canon_array_close(&c);
	bad |= c.bad;
	if (!bad)
		hash_ctx_hex(hc, c.buf, c.len, out);
	hash_canon_free(&c);
	return bad ? -1 : 0;
}

/* The caller's pre-drawn id (32 hex digits), or a fresh one. */
static int
make_entry_id(const struct audit_entry *e, char id[AUDIT_ENTRY_ID_MAX])
{
	if (!e->entry_id)
		return id_random(id, 33, "", 16);
	if (strlen(e->entry_id) != 32 || strspn(e->entry_id, "0123456789abcdef") != 32)
		return -1;
	memcpy(id, e->entry_id, 33);
	return 0;
}

/* n decimal digits of v, zero-padded. */
static char *
put_digits(char *p, unsigned v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

/*
 * 2026-11-30T07:50:46.123456Z, written by hand: strftime and printf per
 * entry showed, and so did gmtime_r (see struct ts_cache).
 */
static int
ts_head(struct ts_cache *tc, time_t sec)
{
	struct tm tm;
	char *p = tc->head;

	if (tc->valid && tc->sec == sec)
		return 0;
	tc->valid = false;
	if (!gmtime_r(&sec, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		return -1;
	p = put_digits(p, (unsigned)(tm.tm_year + 1900), 4);
	*p++ = '-';
	p = put_digits(p, (unsigned)tm.tm_mon + 1, 2);
	*p++ = '-';
	p = put_digits(p, (unsigned)tm.tm_mday, 2);
	*p++ = 'T';
	p = put_digits(p, (unsigned)tm.tm_hour, 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)tm.tm_min, 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)tm.tm_sec, 2);
	*p = '.';
	tc->sec = sec;
	tc->valid = true;
	return 0;
}

static int
make_ts(struct ts_cache *tc, char ts[AUDIT_TS_LEN + 1])
{
	struct timespec now;
	char *p;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || ts_head(tc, now.tv_sec) < 0)
		return -1;
	memcpy(ts, tc->head, AUDIT_TS_SECS);
	p = put_digits(ts + AUDIT_TS_SECS, (unsigned)(now.tv_nsec / 1000) % 1000000u, 6);
	*p++ = 'Z';
	*p = '\0';
	return 0;
}

int
audit_row_body(const struct audit_entry *e, char id[AUDIT_ENTRY_ID_MAX], struct hash_canon *c)
{
	const char *const head[] = { e->session_id, e->call_id, e->type, e->tool, e->decision,
				     e->rule };
	const char *const tail[] = { e->request_hash, e->response_hash, e->class_before,
				     e->class_after, e->detail };
	size_t i;

	hash_canon_init(c);
	for (i = 0; i < sizeof head / sizeof head[0]; i++)
		canon_text(c, head[i]);
	hash_canon_int(c, e->revision);
	hash_canon_int(c, e->latency_us);
	for (i = 0; i < sizeof tail / sizeof tail[0]; i++)
		canon_text(c, tail[i]);
	if (c->bad || make_entry_id(e, id) < 0) {
		hash_canon_free(c);
		return -1;
	}
	return 0;
}

int
audit_row_seal(struct ts_cache *tc, struct hash_ctx *hc, int64_t seq, const char *id,
	       const char *body, size_t len, const char *prev, char ts[AUDIT_TS_LEN + 1],
	       char hash[HASH_HEX_LEN + 1])
{
	struct hash_canon c;
	int rc;

	if (make_ts(tc, ts) < 0)
		return -1;
	hash_canon_init(&c);
	hash_canon_array_open(&c);
	hash_canon_int(&c, seq);
	canon_text(&c, id);
	canon_text(&c, ts);
	hash_canon_raw(&c, ",", 1);
	hash_canon_raw(&c, body, len);
	hash_canon_raw(&c, ",", 1);	/* raw text: prev gets no comma of its own */
	canon_text(&c, prev);
	hash_canon_array_close(&c);
	rc = c.bad ? -1 : 0;
	if (rc == 0)
		hash_ctx_hex(hc, c.buf, c.len, hash);
	hash_canon_free(&c);
	return rc;
}

static int
bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return (s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC)
		  : sqlite3_bind_null(st, i)) == SQLITE_OK ? 0 : -1;
}

int
audit_row_bind(sqlite3_stmt *st, const struct audit_entry *e, int64_t seq,
	       const char *id, const char *ts, const char *prev, const char *hash)
{
	return (sqlite3_bind_int64(st, 1, seq) != SQLITE_OK) | bind_text(st, 2, id) |
	       bind_text(st, 3, ts) | bind_text(st, 4, e->session_id) |
	       bind_text(st, 5, e->call_id) | bind_text(st, 6, e->type) |
	       bind_text(st, 7, e->tool) | bind_text(st, 8, e->decision) |
	       bind_text(st, 9, e->rule) |
	       (sqlite3_bind_int64(st, 10, e->revision) != SQLITE_OK) |
	       (sqlite3_bind_int64(st, 11, e->latency_us) != SQLITE_OK) |
	       bind_text(st, 12, e->request_hash) | bind_text(st, 13, e->response_hash) |
	       bind_text(st, 14, e->class_before) | bind_text(st, 15, e->class_after) |
	       bind_text(st, 16, e->detail) | bind_text(st, 17, prev) |
	       bind_text(st, 18, hash) ? -1 : 0;
}

/* Every string field of an entry, for a copy that keeps them. */
static const size_t entry_strings[] = {
	offsetof(struct audit_entry, session_id), offsetof(struct audit_entry, call_id),
	offsetof(struct audit_entry, type), offsetof(struct audit_entry, tool),
	offsetof(struct audit_entry, decision), offsetof(struct audit_entry, rule),
	offsetof(struct audit_entry, request_hash), offsetof(struct audit_entry, response_hash),
	offsetof(struct audit_entry, class_before), offsetof(struct audit_entry, class_after),
	offsetof(struct audit_entry, detail), offsetof(struct audit_entry, entry_id),
};
#define N_ENTRY_STRINGS (sizeof entry_strings / sizeof entry_strings[0])

static const char **
field(struct audit_entry *e, size_t i)
{
	return (const char **)(void *)((char *)e + entry_strings[i]);
}

size_t
audit_row_strings_size(const struct audit_entry *e)
{
	struct audit_entry src = *e;
	size_t total = 0, i;

	for (i = 0; i < N_ENTRY_STRINGS; i++)
		total += *field(&src, i) ? strlen(*field(&src, i)) + 1 : 0;
	return total;
}

void
audit_row_copy(struct audit_entry *dst, const struct audit_entry *src, char *buf)
{
	size_t len, i;

	*dst = *src;
	for (i = 0; i < N_ENTRY_STRINGS; i++) {
		if (!*field(dst, i))
			continue;
		len = strlen(*field(dst, i)) + 1;
		memcpy(buf, *field(dst, i), len);
		*field(dst, i) = buf;
		buf += len;
	}
}

int
audit_key_row(sqlite3 *db, unsigned char *key, size_t len, int *rc)
{
	sqlite3_stmt *st = NULL;
	int got = -1;

	*rc = sqlite3_prepare_v2(db, "SELECT key FROM audit_key WHERE id = 1", -1, &st, NULL);
	if (*rc != SQLITE_OK)
		return *rc == SQLITE_ERROR ? 1 : -1;	/* SQLITE_ERROR: no such table */
	*rc = sqlite3_step(st);
	if (*rc == SQLITE_DONE)
		got = 1;
	else if (*rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_BLOB &&
		 (size_t)sqlite3_column_bytes(st, 0) == len) {
		memcpy(key, sqlite3_column_blob(st, 0), len);
		got = 0;
	}
	sqlite3_finalize(st);
	return got;
}

/* The writer's triggers, as sqlite_master holds them. */
#define TRIGGER_ROW(name, body) { name, "CREATE TRIGGER " name body },
static const struct {
	const char *name, *sql;
} entry_triggers[] = { AUDIT_ENTRY_TRIGGERS(TRIGGER_ROW) },
  key_triggers[] = { AUDIT_KEY_TRIGGERS(TRIGGER_ROW) };
#undef TRIGGER_ROW

#define N_ENTRY_TRIGGERS	(sizeof entry_triggers / sizeof entry_triggers[0])
#define N_KEY_TRIGGERS		(sizeof key_triggers / sizeof key_triggers[0])

/* Which of the writer's triggers a row is (its text the same): bit i; 0 when none. */
static unsigned
trigger_bit(const char *name, const char *sql)
{
	size_t i;

	for (i = 0; i < N_ENTRY_TRIGGERS; i++)
		if (strcmp(name, entry_triggers[i].name) == 0)
			return sql && strcmp(sql, entry_triggers[i].sql) == 0 ? 1U << i : 0;
	for (i = 0; i < N_KEY_TRIGGERS; i++)
		if (strcmp(name, key_triggers[i].name) == 0)
			return sql && strcmp(sql, key_triggers[i].sql) == 0 ?
			       1U << (N_ENTRY_TRIGGERS + i) : 0;
	return 0;
}

/* Whether audit_entries (a table) holds a row; a failed read counts as one. */
static bool
has_entries(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	bool any = true;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM audit_entries)", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		any = sqlite3_column_int(st, 0) != 0;
	sqlite3_finalize(st);
	return any;
}

enum audit_schema
audit_schema_check(sqlite3 *db)
{
	const unsigned entry_all = (1U << N_ENTRY_TRIGGERS) - 1;
	const unsigned key_all = ((1U << N_KEY_TRIGGERS) - 1) << N_ENTRY_TRIGGERS;
	sqlite3_stmt *st = NULL;
	enum audit_schema v = AUDIT_SCHEMA_OK;
	bool entries = false, key = false;
	unsigned seen = 0, bit;
	const char *type, *name, *sql;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master WHERE type IN"
			       " ('trigger', 'view') OR name IN ('audit_entries', 'audit_key')",
			       -1, &st, NULL) != SQLITE_OK)
		return AUDIT_SCHEMA_TABLES;
	while (v != AUDIT_SCHEMA_TABLES && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		type = (const char *)sqlite3_column_text(st, 0);
		name = (const char *)sqlite3_column_text(st, 1);
		sql = (const char *)sqlite3_column_text(st, 2);
		if (!type || !name)
			v = AUDIT_SCHEMA_TABLES;
		else if (strcmp(name, "audit_entries") == 0 || strcmp(name, "audit_key") == 0) {
			if (strcmp(type, "table") != 0)
				v = AUDIT_SCHEMA_TABLES;
			entries |= name[6] == 'e';
			key |= name[6] == 'k';
		} else if (strcmp(type, "trigger") != 0 || !(bit = trigger_bit(name, sql)) ||
			   (seen & bit))
			v = AUDIT_SCHEMA_TRIGGERS;
		else
			seen |= bit;
	}
	if (v != AUDIT_SCHEMA_TABLES && rc != SQLITE_DONE)
		v = AUDIT_SCHEMA_TABLES;
	sqlite3_finalize(st);
	if (v != AUDIT_SCHEMA_OK || !entries || !has_entries(db))
		return v;
	if ((seen & entry_all) != entry_all || (key && (seen & key_all) != key_all) ||
	    (!key && (seen & key_all)))
		return AUDIT_SCHEMA_TRIGGERS;
	return AUDIT_SCHEMA_OK;
}
