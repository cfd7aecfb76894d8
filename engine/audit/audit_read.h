#ifndef AIRLOCK_AUDIT_READ_H
#define AIRLOCK_AUDIT_READ_H

/*
 * What the log's readers share (audit_timeline, audit_propose, and the
 * console's tail, audit_tail.h, which keeps its own prepared statements):
 * a read-only connection that never creates a file (or one read on it
 * from open to close), the fixed texts of their failures, and the bounded
 * copy of a stored string they print.
 *
 * Readers run each statement to completion and reset it before they
 * return, so no read transaction outlives a call and the engine's writer
 * (WAL mode) checkpoints as ever.
 */

#include <stddef.h>

#define AUDIT_READ_ERR_OPEN	"cannot open database"
#define AUDIT_READ_ERR_NOT_AUDIT	"not an audit database"
#define AUDIT_READ_ERR_BUSY	"database busy"
#define AUDIT_READ_ERR_READ	"cannot read entries"
#define AUDIT_READ_ERR_NO_KEY	"no payload key (no engine of this version has opened it)"
#define AUDIT_READ_ERR_BAD_KEY	"its payload key is not 32 bytes"
#define AUDIT_READ_ERR_ALTERED	"altered by hand (a trigger or view the writer never makes, or" \
				" one of its own missing or changed): run airlock audit verify"

struct sqlite3;

/*
 * Open an existing log read-only (a missing file fails, a directory or a
 * FIFO is refused before SQLite sees it). NULL on success, else one of the
 * fixed texts above; *db is then NULL.
 */
const char *audit_read_open(const char *path, struct sqlite3 **db);

/*
 * A one-shot read: the log opened as audit_read_open does, fn run on it,
 * the connection closed. NULL, or the fixed text of what failed: the
 * open's, or fn's (which finalizes what it prepares).
 */
const char *audit_read_run(const char *path, const char *(*fn)(struct sqlite3 *db, void *arg),
			   void *arg);

/*
 * The fixed text for a failed prepare (where a file that is not an audit
 * log shows: no table, or not SQLite) or step.
 */
const char *audit_read_prepare_error(int rc);
const char *audit_read_step_error(int rc);

/*
 * A string of the log for its readers, who print it (and put it in JSON):
 * the file may have been edited (engine/base/canon.h: canon_printable).
 */
void audit_read_text(char *dst, size_t cap, const char *s);

/*
 * The log's payload key (audit.h, AUDIT_KEY_LEN bytes) from the file,
 * read-only (a log without one is not given one): NULL, or a fixed text
 * above (AUDIT_READ_ERR_NO_KEY: a log no writer of this version opened).
 */
const char *audit_read_key(const char *path, unsigned char *key);

#endif
