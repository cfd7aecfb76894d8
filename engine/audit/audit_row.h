#ifndef AIRLOCK_AUDIT_ROW_H
#define AIRLOCK_AUDIT_ROW_H

/*
 * One entry as a row of the log, for the writer (audit.c) and the verifier
 * (audit_verify.c): the columns in canonical order, the chain's first
 * link, what the writer adds to an entry (id, time, entry hash) and how it
 * binds it, and the entry hash recomputed from a row read back. Both
 * hashes are here so that the canonical form is written in one place, and
 * the hash, the binding and the copy of an entry so that a new field of
 * struct audit_entry is added in one file. And the one row that is not an
 * entry, the payload key's, which the writer and audit_read read alike.
 * Internal to the audit files
 * (snapshot.h's struct audit_row is another thing: a few columns copied
 * for the console).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <sqlite3.h>

#include "audit_entry.h"
#include "hash.h"

/*
 * Every failure reports fixed text: sqlite3_errmsg() can quote SQL or
 * bound values, and values are exactly what must never leave the log.
 */
#define AUDIT_ERR_OPEN		"audit: cannot open database"
#define AUDIT_ERR_APPEND	"audit: cannot append entry"
#define AUDIT_ERR_NOT_AUDIT	"audit: not an audit database"
#define AUDIT_ERR_MEMORY	"audit: out of memory"
#define AUDIT_ERR_NO_RANDOM	"audit: no randomness for the log's payload key"
#define AUDIT_ERR_KEY		"audit: cannot read or write the log's payload key"
#define AUDIT_ERR_KEY_LOST	"audit: the log's payload key was removed (its table is empty" \
				" and entries stand): a new key would leave every hash written" \
				" unmatchable; restore the file"
#define AUDIT_ERR_ALTERED	"audit: altered by hand: a trigger or view the writer never" \
				" makes, or one of its own missing or changed"
#define AUDIT_ERR_WAL_HERE	"audit: its WAL file cannot be read where it is (read-only):" \
				" copy the log and its -wal file to a writable directory"

#define AUDIT_BUSY_MS		5000

/*
 * Column order is the canonical order: the entry hash covers columns
 * 0 .. AUDIT_HASHED_COLS-1 (seq through prev_hash) and entry_hash follows.
 */
#define AUDIT_COLS \
	"seq, entry_id, ts, session_id, call_id, type, tool, decision, rule," \
	" revision, latency_us, request_hash, response_hash, class_before," \
	" class_after, detail, prev_hash, entry_hash"
#define AUDIT_HASHED_COLS	17

/* The columns read by name, in AUDIT_COLS' order. */
enum {
	AUDIT_COL_SEQ, AUDIT_COL_ENTRY_ID, AUDIT_COL_TS, AUDIT_COL_SESSION_ID,
	AUDIT_COL_CALL_ID, AUDIT_COL_TYPE, AUDIT_COL_TOOL, AUDIT_COL_DECISION,
	AUDIT_COL_RULE, AUDIT_COL_REVISION,
	AUDIT_COL_DETAIL = 15, AUDIT_COL_PREV_HASH, AUDIT_COL_ENTRY_HASH,
};

/* The prev_hash of the first entry. */
extern const char audit_genesis_hash[HASH_HEX_LEN + 1];

#define AUDIT_TS_LEN		27	/* 2026-11-30T07:50:46.123456Z */
/* An entry's time up to its seconds, kept for the second it was made in. */
#define AUDIT_TS_SECS	20	/* "2026-11-30T07:50:46." */

struct ts_cache {
	time_t sec;
	bool valid;
	char head[AUDIT_TS_SECS];
};

/*
 * An entry is made in two steps. First what does not depend on its place
 * in the chain, on the appender's own thread: its id (the caller's
 * pre-drawn one, checked, or a fresh one) and the canonical text of its
 * fields session_id .. detail (array elements, no brackets) in c, which the
 * caller frees. -1 when it cannot be made (a string that is not valid
 * UTF-8, or no id); c is then empty.
 */
int audit_row_body(const struct audit_entry *e, char id[AUDIT_ENTRY_ID_MAX],
		   struct hash_canon *c);
/*
 * Then, by the log's leader, in sequence order: its time (tc keeps the
 * writer's clock text) and its entry hash as entry seq after prev, over
 * the body's len bytes. -1 when there is no clock.
 */
int audit_row_seal(struct ts_cache *tc, struct hash_ctx *hc, int64_t seq, const char *id,
		   const char *body, size_t len, const char *prev, char ts[AUDIT_TS_LEN + 1],
		   char hash[HASH_HEX_LEN + 1]);

/*
 * The entry hash of the row st stands on (selected as AUDIT_COLS). -1 when
 * a column holds a storage class the writer never stores.
 */
int audit_row_hash_stored(struct hash_ctx *hc, sqlite3_stmt *st, char out[HASH_HEX_LEN + 1]);

/* Bind all 18 parameters of an insert of AUDIT_COLS, in their order. */
int audit_row_bind(sqlite3_stmt *st, const struct audit_entry *e, int64_t seq,
		   const char *id, const char *ts, const char *prev, const char *hash);

/*
 * A copy of an entry that outlives the caller's strings: *dst = *src with
 * every string copied into buf, which holds audit_row_strings_size(src)
 * bytes.
 */
size_t audit_row_strings_size(const struct audit_entry *e);
void audit_row_copy(struct audit_entry *dst, const struct audit_entry *src, char *buf);

/*
 * The payload key's row (audit.c's audit_key table) on an open connection,
 * len bytes: 0 and the key; 1 when there is none (no table: a log an
 * older version made; or no row); -1 otherwise, SQLite's last answer in
 * *rc (SQLITE_ROW: a key of another length).
 */
int audit_key_row(sqlite3 *db, unsigned char *key, size_t len, int *rc);

/*
 * The triggers the writer makes (name, and what follows the name in their
 * CREATE TRIGGER, as SQLite keeps it): the log is append-only, its key
 * written once. A trigger is code that runs inside every insert: one
 * planted by hand can drop each entry while the insert answers success.
 */
#define AUDIT_ENTRY_TRIGGERS(_) \
	_("audit_entries_no_update", " BEFORE UPDATE ON audit_entries" \
	  " BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END") \
	_("audit_entries_no_delete", " BEFORE DELETE ON audit_entries" \
	  " BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END")
#define AUDIT_KEY_TRIGGERS(_) \
	_("audit_key_no_update", " BEFORE UPDATE ON audit_key" \
	  " BEGIN SELECT RAISE(ABORT, 'audit key is written once'); END") \
	_("audit_key_no_delete", " BEFORE DELETE ON audit_key" \
	  " BEGIN SELECT RAISE(ABORT, 'audit key is written once'); END") \
	_("audit_key_once", " BEFORE INSERT ON audit_key" \
	  " WHEN EXISTS (SELECT 1 FROM audit_key) BEGIN SELECT RAISE(IGNORE); END")

/*
 * Whether the file was altered by hand below the chain. TABLES:
 * audit_entries or audit_key is not a table (a view there can make every
 * reader loop for good), or the schema cannot be read (the file is not to
 * be trusted either way; sqlite3_errcode tells why). TRIGGERS: a trigger
 * or view the writer never makes, or one of its triggers missing or with
 * other text; its triggers are required once audit_entries holds a row,
 * the key's once its table exists (a log an older version made has
 * neither).
 */
enum audit_schema { AUDIT_SCHEMA_OK, AUDIT_SCHEMA_TRIGGERS, AUDIT_SCHEMA_TABLES };

enum audit_schema audit_schema_check(sqlite3 *db);

#endif
