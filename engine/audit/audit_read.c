#include "audit_read.h"
#include "audit.h"
#include "audit_row.h"
#include "canon.h"

#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

/* A reader may wait out a checkpoint, never hang on a writer. */
#define AUDIT_READ_BUSY_MS	250

const char *
audit_read_open(const char *path, sqlite3 **db)
{
	*db = NULL;
	if (!path || audit_not_a_file(path))
		return AUDIT_READ_ERR_OPEN;
	const char *why = NULL;
	int rc;

	/* No SQLITE_OPEN_CREATE: a reader must never make an empty log. */
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK || sqlite3_busy_timeout(*db, AUDIT_READ_BUSY_MS) != SQLITE_OK)
		why = AUDIT_READ_ERR_OPEN;
	else if (audit_schema_check(*db) != AUDIT_SCHEMA_OK) {
		/* what reading the schema met, or what it found there */
		rc = sqlite3_errcode(*db);
		why = rc == SQLITE_NOTADB ? AUDIT_READ_ERR_NOT_AUDIT :
		      rc == SQLITE_BUSY ? AUDIT_READ_ERR_BUSY :
		      rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY ? AUDIT_READ_ERR_OPEN :
		      AUDIT_READ_ERR_ALTERED;
	}
	if (why) {
		sqlite3_close(*db);
		*db = NULL;
	}
	return why;
}

const char *
audit_read_run(const char *path, const char *(*fn)(sqlite3 *db, void *arg), void *arg)
{
	sqlite3 *db;
	const char *why = audit_read_open(path, &db);

	if (why)
		return why;
	why = fn(db, arg);
	sqlite3_close(db);
	return why;
}

/* No table (SQLITE_ERROR) or not SQLite at all (SQLITE_NOTADB). */
const char *
audit_read_prepare_error(int rc)
{
	if (rc == SQLITE_ERROR || rc == SQLITE_NOTADB)
		return AUDIT_READ_ERR_NOT_AUDIT;
	return rc == SQLITE_BUSY ? AUDIT_READ_ERR_BUSY : AUDIT_READ_ERR_OPEN;
}

const char *
audit_read_step_error(int rc)
{
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? AUDIT_READ_ERR_BUSY : AUDIT_READ_ERR_READ;
}

void
audit_read_text(char *dst, size_t cap, const char *s)
{
	canon_printable(dst, cap, s);
}

static const char *
read_key(sqlite3 *db, void *key)
{
	int rc, got = audit_key_row(db, key, AUDIT_KEY_LEN, &rc);

	if (got == 0)
		return NULL;
	if (got == 1)
		return AUDIT_READ_ERR_NO_KEY;
	return rc == SQLITE_ROW ? AUDIT_READ_ERR_BAD_KEY :
	       rc == SQLITE_NOTADB ? AUDIT_READ_ERR_NOT_AUDIT : audit_read_step_error(rc);
}

const char *
audit_read_key(const char *path, unsigned char *key)
{
	return audit_read_run(path, read_key, key);
}
