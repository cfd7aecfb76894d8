#include "audit_int.h"
#include "clock.h"
#include "ids.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#define AUDIT_STR_(x)		#x
#define AUDIT_STR(x)		AUDIT_STR_(x)
/*
 * The WAL is checkpointed into the database every AUDIT_CHECKPOINT_PAGES
 * pages (SQLite's automatic checkpoint, run by the committing thread) and
 * truncated back to AUDIT_WAL_LIMIT bytes after each reset, so a long-lived
 * engine's log does not keep a large WAL file beside it.
 */
#define AUDIT_CHECKPOINT_PAGES	256
#define AUDIT_WAL_LIMIT		(1 << 20)
/*
 * A new log's page size. A commit writes each page it touched to the WAL
 * and checksums it: with a row or two per commit, smaller pages are less
 * to write and sum. (An existing file keeps the size it was made with.)
 */
#define AUDIT_PAGE_SIZE		2048

/*
 * The table is append-only at the SQL level; the hash chain is what still
 * catches someone who drops the triggers or edits the file.
 *
 * entry_id has no index: a UNIQUE one cost a second b-tree insert per
 * entry and more than doubled the pages each commit writes (random keys),
 * about a tenth of a call's instructions, for a lookup nothing makes.
 * Uniqueness is checked by `audit verify` instead. A log made before keeps
 * its index (the table is created only if missing) and verifies as ever.
 *
 * The one index is what an engine reads at every start: the sessions'
 * starts and ends (audit_unended) and the policy entries, among them its
 * own standing ones (audit_engine_latest). A partial one: another entry
 * costs its insert the WHERE alone. Without it each start read the whole
 * log (2.1 and 2.3 s cold for 2 million entries; bench/standing_bench.c). A log made before gets
 * it at its engine's first open, in one pass. A query names the WHERE in
 * the same words, or the planner does not take the index. Not "type IN
 * (…)": that builds a table at every insert (147k instructions a call
 * against 88k).
 */
#define AUDIT_LIFECYCLE_INDEX \
	"CREATE INDEX IF NOT EXISTS audit_lifecycle ON audit_entries(type, session_id)" \
	" WHERE " AUDIT_INDEXED ";"
/*
 * The key of the payload hashes (hash.h: HMAC-SHA-256): one row, written
 * at a writer's first open and never changed, or the hashes already
 * written could no longer be checked. Not chained: the file holds it, and
 * whoever can rewrite the file can rewrite the chain too. REPLACE deletes
 * without the DELETE trigger (recursive_triggers is off): the INSERT one
 * turns any second row into nothing.
 */
#define AUDIT_CREATE_TRIGGER(name, body) "CREATE TRIGGER IF NOT EXISTS " name body ";"
#define AUDIT_KEY_TABLE \
	"CREATE TABLE IF NOT EXISTS audit_key (" \
	" id INTEGER PRIMARY KEY CHECK (id = 1)," \
	" key BLOB NOT NULL CHECK (length(key) = " AUDIT_STR(AUDIT_KEY_LEN) "));" \
	AUDIT_KEY_TRIGGERS(AUDIT_CREATE_TRIGGER)
/* setup_db ends its transaction: the key is taken inside it. */
static const char schema_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS audit_entries ("
	" seq INTEGER PRIMARY KEY,"
	" entry_id TEXT NOT NULL,"
	" ts TEXT NOT NULL,"
	" session_id TEXT NOT NULL,"
	" call_id TEXT,"
	" type TEXT NOT NULL,"
	" tool TEXT,"
	" decision TEXT,"
	" rule TEXT,"
	" revision INTEGER,"
	" latency_us INTEGER,"
	" request_hash TEXT,"
	" response_hash TEXT,"
	" class_before TEXT,"
	" class_after TEXT,"
	" detail TEXT,"
	" prev_hash TEXT NOT NULL,"
	" entry_hash TEXT NOT NULL);"
	AUDIT_ENTRY_TRIGGERS(AUDIT_CREATE_TRIGGER)
	AUDIT_LIFECYCLE_INDEX
	AUDIT_KEY_TABLE;

/* journal_mode answers with the mode in force, which may not be WAL. */
static int
set_wal(sqlite3 *db)
{
	sqlite3_stmt *st;
	int ok;

	if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
		return -1;
	ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
	     strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	return ok ? 0 : -1;
}

/*
 * The log's payload key: read, or drawn and written if it has none (a new
 * log, or one an older version made). Drawn from getrandom(2) or not at
 * all: no randomness fails the open, never a weak key.
 */
static const char *
take_key(sqlite3 *db, unsigned char key[AUDIT_KEY_LEN])
{
	unsigned char fresh[AUDIT_KEY_LEN];
	sqlite3_stmt *st = NULL;
	int rc, got = audit_key_row(db, key, AUDIT_KEY_LEN, &rc);

	if (got != 1)
		return got == 0 ? NULL : AUDIT_ERR_KEY;
	if (id_draw(fresh, sizeof fresh) < 0)
		return AUDIT_ERR_NO_RANDOM;
	rc = sqlite3_prepare_v2(db, "INSERT INTO audit_key (id, key) VALUES (1, ?)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_blob(st, 1, fresh, sizeof fresh, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	explicit_bzero(fresh, sizeof fresh);
	return rc == SQLITE_DONE && audit_key_row(db, key, AUDIT_KEY_LEN, &rc) == 0 ?
	       NULL : AUDIT_ERR_KEY;
}

/*
 * A key table with no row beside entries: the key was deleted (a log an
 * older version made has no key table at all, and gets its first key).
 */
static bool
key_removed(sqlite3 *db)
{
	unsigned char key[AUDIT_KEY_LEN];
	sqlite3_stmt *st = NULL;
	bool stands = false;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE"
			       " type = 'table' AND name = 'audit_key')"
			       " AND EXISTS (SELECT 1 FROM audit_entries)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		stands = sqlite3_column_int(st, 0) == 1;
	sqlite3_finalize(st);
	return stands && audit_key_row(db, key, sizeof key, &rc) == 1;
}

/* NULL, or the fixed text of what failed (AUDIT_ERR_OPEN for SQLite's own). */
static const char *
setup_db(sqlite3 *db, unsigned char key[AUDIT_KEY_LEN])
{
	const char *why = AUDIT_ERR_OPEN;
	char limits[96];

	snprintf(limits, sizeof limits, "PRAGMA wal_autocheckpoint=%d;"
		 "PRAGMA journal_size_limit=%d", AUDIT_CHECKPOINT_PAGES, AUDIT_WAL_LIMIT);
	if (sqlite3_busy_timeout(db, AUDIT_BUSY_MS) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA page_size=" AUDIT_STR(AUDIT_PAGE_SIZE), NULL, NULL,
			 NULL) != SQLITE_OK || set_wal(db) < 0 ||
	    sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, limits, NULL, NULL, NULL) != SQLITE_OK)
		return why;
	/* Judged before the schema's IF NOT EXISTS would mend what is missing. */
	if (audit_schema_check(db) != AUDIT_SCHEMA_OK)
		return sqlite3_errcode(db) == SQLITE_NOTADB ? AUDIT_ERR_OPEN : AUDIT_ERR_ALTERED;
	if (key_removed(db))
		return AUDIT_ERR_KEY_LOST;
	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    (why = take_key(db, key)) ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return why ? why : AUDIT_ERR_OPEN;
	}
	return NULL;
}

/* The statements every commit and count reuses, prepared once at open. */
static const char *const st_sql[AUDIT_ST_N] = {
	[AUDIT_ST_BEGIN] = "BEGIN IMMEDIATE",
	[AUDIT_ST_COMMIT] = "COMMIT",
	[AUDIT_ST_ROLLBACK] = "ROLLBACK",
	[AUDIT_ST_LAST] = "SELECT seq, entry_hash FROM audit_entries ORDER BY seq DESC LIMIT 1",
	[AUDIT_ST_INSERT] = "INSERT INTO audit_entries (" AUDIT_COLS ") VALUES"
			    " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[AUDIT_ST_COUNT_ALL] = "SELECT count(*) FROM audit_entries",
	[AUDIT_ST_COUNT_SESSION] = "SELECT count(*) FROM audit_entries WHERE session_id = ?",
};

static int
prepare_all(struct audit *a)
{
	for (int i = 0; i < AUDIT_ST_N; i++)
		if (sqlite3_prepare_v3(a->db, st_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &a->st[i],
				       NULL) != SQLITE_OK)
			return -1;
	return 0;
}

static int
sync_init(struct audit *a)
{
	if (pthread_mutex_init(&a->lock, NULL) != 0)
		return -1;
	if (pthread_mutex_init(&a->db_lock, NULL) != 0)
		goto lock;
	if (pthread_cond_init(&a->idle, NULL) != 0)
		goto db_lock;
	if (clock_cond_init(&a->flush) < 0)
		goto idle;
	if (pthread_cond_init(&a->settled, NULL) != 0)
		goto flush;
	return 0;
flush:
	pthread_cond_destroy(&a->flush);
idle:
	pthread_cond_destroy(&a->idle);
db_lock:
	pthread_mutex_destroy(&a->db_lock);
lock:
	pthread_mutex_destroy(&a->lock);
	return -1;
}

bool
audit_not_a_file(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/*
 * Whoever else may write the file may rewrite its chain, or plant a
 * trigger: the log is the engine's (or root's) alone, and not group- or
 * world-writable. A missing file is made 0600 just before this.
 */
static int
owned_alone(const char *path, struct al_err *err)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return 0;	/* SQLite's open says what is wrong */
	if (!(st.st_mode & 022) && (st.st_uid == geteuid() || st.st_uid == 0))
		return 0;
	return al_fail(err, "audit: the log may be written by others than its engine (mode %04o,"
		       " owner uid %u): chmod 600 it and chown it to the engine's user",
		       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
}

int
audit_open(const char *path, struct audit **out, struct al_err *err)
{
	struct audit *a = calloc(1, sizeof *a);
	/* No SQLite mutex: every use of the connection is under db_lock. */
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	const char *why = NULL;

	*out = NULL;
	if (!a || audit_not_a_file(path)) {
		free(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	if (sync_init(a) < 0) {
		free(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	/* Hashes and names only, but still the operator's business alone. */
	if (path)
		close(open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600));
	if (owned_alone(path, err) < 0) {
		audit_close(a);
		return -1;
	}
	a->hc = hash_ctx_new();
	a->path = path ? strdup(path) : NULL;
	if (!a->path || !a->hc || sqlite3_open_v2(path, &a->db, flags, NULL) != SQLITE_OK ||
	    (why = setup_db(a->db, a->key)) || prepare_all(a) < 0) {
		/* SQLite reads the header only at the first statement: say what it found. */
		bool not_db = a->db && sqlite3_errcode(a->db) == SQLITE_NOTADB;

		audit_close(a);
		return al_fail(err, "%s", not_db ? AUDIT_ERR_NOT_AUDIT : why ? why : AUDIT_ERR_OPEN);
	}
	audit_timer_start(a);
	if (!a->timer_on) {
		audit_close(a);
		return al_fail(err, AUDIT_ERR_OPEN);
	}
	*out = a;
	return 0;
}

const char *
audit_db_path(const struct audit *a)
{
	return a ? a->path : NULL;
}

int
audit_payload_key(const struct audit *a, unsigned char key[AUDIT_KEY_LEN])
{
	if (!a)
		return -1;
	memcpy(key, a->key, AUDIT_KEY_LEN);
	return 0;
}

void
audit_close(struct audit *a)
{
	if (!a)
		return;
	audit_drain(a);
	for (int i = 0; i < AUDIT_ST_N; i++)
		sqlite3_finalize(a->st[i]);
	sqlite3_close(a->db);
	hash_ctx_free(a->hc);
	explicit_bzero(a->key, sizeof a->key);
	free(a->path);
	pthread_cond_destroy(&a->settled);
	pthread_cond_destroy(&a->flush);
	pthread_cond_destroy(&a->idle);
	pthread_mutex_destroy(&a->db_lock);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* The chain head: sequence and hash of the newest entry (genesis if none). */
int
audit_read_last(struct audit *a, int64_t *seq, char prev[HASH_HEX_LEN + 1])
{
	sqlite3_stmt *st = a->st[AUDIT_ST_LAST];
	const unsigned char *h;
	int rc = sqlite3_step(st);

	*seq = 0;
	memcpy(prev, audit_genesis_hash, sizeof audit_genesis_hash);
	if (rc == SQLITE_ROW) {
		*seq = sqlite3_column_int64(st, 0);
		h = sqlite3_column_text(st, 1);
		if (!h || strlen((const char *)h) != HASH_HEX_LEN)
			rc = SQLITE_CORRUPT;
		else
			memcpy(prev, h, HASH_HEX_LEN + 1);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/*
 * The log's path no longer names the file this connection writes: it was
 * deleted (or moved) while open. What is committed there is gone when the
 * engine closes it, or lives on under a name nobody reads; so it fails.
 */
bool
audit_file_moved(sqlite3 *db)
{
	int moved = 0;

	return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK ||
	       moved;
}

int64_t
audit_count(struct audit *a, const char *session_id)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	st = a->st[session_id ? AUDIT_ST_COUNT_SESSION : AUDIT_ST_COUNT_ALL];
	if ((!session_id ||
	     sqlite3_bind_text(st, 1, session_id, -1, SQLITE_STATIC) == SQLITE_OK) &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_unlock(&a->db_lock);
	return n;
}

/*
 * The rows sql gives with ?1 and ?2 bound to two texts, their first two
 * columns to each (rows whose first is NULL passed over), under the log's
 * lock: the start-up reads of one query each. 0, or -1.
 */
static int
read_pairs(struct audit *a, const char *sql, const char *one, const char *two,
	   void (*each)(void *ctx, const char *x, const char *y), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, one, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
	    sqlite3_bind_text(st, 2, two, -1, SQLITE_TRANSIENT) == SQLITE_OK) {
		while ((step = sqlite3_step(st)) == SQLITE_ROW)
			if (sqlite3_column_text(st, 0))
				each(ctx, (const char *)sqlite3_column_text(st, 0),
				     (const char *)sqlite3_column_text(st, 1));
		rc = step == SQLITE_DONE ? 0 : -1;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&a->db_lock);
	return rc;
}

int
audit_unended(struct audit *a,
	      void (*each)(void *ctx, const char *session_id, const char *start_detail), void *ctx)
{
	static const char sql[] = "SELECT session_id, detail FROM audit_entries WHERE "
				  AUDIT_INDEXED " AND type = ?1 AND session_id NOT IN"
				  " (SELECT session_id FROM audit_entries WHERE "
				  AUDIT_INDEXED " AND type = ?2)";

	return read_pairs(a, sql, audit_type_id(AUDIT_T_SESSION_START),
			  audit_type_id(AUDIT_T_SESSION_END), each, ctx);
}

int
audit_session_holds(struct audit *a, const char *session_id,
		    void (*each)(void *ctx, const char *rule, const char *tool), void *ctx)
{
	static const char sql[] = "SELECT rule, tool FROM audit_entries WHERE " AUDIT_INDEXED
				  " AND type = ?1 AND session_id = ?2"
				  " AND rule GLOB 'hold [0-9]* *' ORDER BY seq";

	return read_pairs(a, sql, audit_type_id(AUDIT_T_POLICY), session_id, each, ctx);
}

int
audit_engine_latest(struct audit *a, const char *prefix, char **detail)
{
	static const char sql[] = "SELECT detail FROM audit_entries WHERE "
				  AUDIT_INDEXED " AND type = ?1 AND session_id = 'engine'"
				  " AND substr(rule, 1, length(?2)) = ?2 ORDER BY seq DESC LIMIT 1";
	sqlite3_stmt *st = NULL;
	const unsigned char *text;
	int rc = -1, step;

	*detail = NULL;
	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, audit_type_id(AUDIT_T_POLICY), -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_bind_text(st, 2, prefix, -1, SQLITE_STATIC) == SQLITE_OK) {
		step = sqlite3_step(st);
		rc = step == SQLITE_DONE ? 0 : -1;
		if (step == SQLITE_ROW) {
			text = sqlite3_column_text(st, 0);
			*detail = strdup(text ? (const char *)text : "");
			rc = *detail ? 0 : -1;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&a->db_lock);
	return rc;
}

int
audit_policy_highest(struct audit *a, int64_t *revision, int64_t *hold_id)
{
	/* CAST takes the number leading "12 waiting". */
	static const char sql[] = "SELECT MAX(revision), MAX(CASE WHEN rule GLOB 'hold [0-9]*'"
				  " THEN CAST(substr(rule, 6) AS INTEGER) END) FROM audit_entries"
				  " WHERE " AUDIT_INDEXED " AND type = ?1";
	sqlite3_stmt *st = NULL;
	int rc = -1;

	*revision = *hold_id = 0;
	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, audit_type_id(AUDIT_T_POLICY), -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		*revision = sqlite3_column_int64(st, 0);	/* NULL (no such entry) reads 0 */
		*hold_id = sqlite3_column_int64(st, 1);
		rc = 0;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&a->db_lock);
	return rc;
}

int
audit_head(struct audit *a, int64_t *seq, char hash[HASH_HEX_LEN + 1])
{
	int rc;

	*seq = 0;
	hash[0] = '\0';
	if (!a)
		return -1;
	pthread_mutex_lock(&a->db_lock);
	rc = audit_file_moved(a->db) ? -1 : audit_read_last(a, seq, hash);
	pthread_mutex_unlock(&a->db_lock);
	if (rc < 0 || *seq == 0) {
		*seq = 0;
		hash[0] = '\0';
	}
	return rc;
}
