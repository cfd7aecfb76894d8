#ifndef AIRLOCK_AUDIT_SPOOL_H
#define AIRLOCK_AUDIT_SPOOL_H

/*
 * A session's journal beside the shared log (docs/guarantees.md, "The
 * audit log's crash contract"): DB-spool/NAME, one file per writer
 * (a gateway), NAME 32 random hex digits. A call's dispatch entry is
 * appended here and fdatasynced on the session's own thread, in parallel
 * with every other session's, and the call leaves once that is durable;
 * the shared, hash-chained log takes the same entry behind it on its next
 * commit. The entries a session queues behind its dispatches (terminal
 * entries) are appended unsynced, so the next dispatch's sync makes them
 * durable first, in session order.
 *
 * One record a line, text:
 *
 *   K ID HASH BODY\n
 *
 * K the record's number in the file (1, 2, …), ID the entry id, BODY the
 * entry's chain-independent canonical text (audit_row_body: session_id
 * through detail, no brackets; it holds no raw newline), HASH the SHA-256
 * of "K ID BODY". The writer holds an exclusive flock on its file for its
 * life and removes the file once everything in it is in the log; a file
 * nobody holds is what a crash left. audit_open appends what such a file
 * holds and the log does not (audit.c), `audit verify` checks the files
 * against the log (audit_verify.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "err.h"
#include "hash.h"

#define AUDIT_SPOOL_SUFFIX	"-spool"
#define AUDIT_SPOOL_NAME_LEN	32
#define AUDIT_SPOOL_FILES_MAX	4096	/* bounds a directory walk */
#define AUDIT_SPOOL_RECORDS_MAX	(1 << 20)	/* bounds one file's read */
#define AUDIT_SPOOL_LINE_MAX	(1 << 20)

struct audit_spool;

/* Create DB-spool/NAME (and the directory), locked, durable in its directory. */
int audit_spool_open(const char *db_path, struct audit_spool **out, struct al_err *err);
/* Append one record; with sync it and all before it are durable when this returns 0. */
int audit_spool_put(struct audit_spool *s, const char *id, const char *body, size_t len,
		    bool sync);
/* Close; with drop the file is removed first (everything in it is in the log). */
void audit_spool_close(struct audit_spool *s, bool drop);

/* One record read back. */
struct audit_spool_rec {
	int64_t k;
	char id[AUDIT_ENTRY_ID_MAX];
	char *body;		/* NUL-terminated; freed with the list */
	size_t len;
};

/* A file read back, for recovery and verify. */
struct audit_spool_file {
	char name[AUDIT_SPOOL_NAME_LEN + 1];
	int fd;			/* open, or -1 */
	bool live;		/* its writer still holds it */
	struct audit_spool_rec *recs;
	size_t n;
	/* The first damaged record (0: none), and what is wrong with it (fixed text). */
	int64_t bad_k;
	const char *bad;
};

/*
 * The spool files beside db_path, sorted by name (the order recovery
 * appends in). exclusive: a file whose writer is gone is locked for the
 * caller (recovery); otherwise a shared probe tells live from dead.
 * 0 with *n 0 when there is no spool directory. -1 on a read error.
 */
int audit_spool_list(const char *db_path, bool exclusive, struct audit_spool_file **out,
		     size_t *n);
void audit_spool_list_free(struct audit_spool_file *f, size_t n);
/* Remove a recovered file (still locked by the caller). */
int audit_spool_remove(const char *db_path, const struct audit_spool_file *f);

#endif
