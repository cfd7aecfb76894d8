#ifndef AIRLOCK_AUDIT_TAIL_H
#define AIRLOCK_AUDIT_TAIL_H

/*
 * A read-only view of the audit log for the operator console: the newest
 * entries, then whatever is appended after them, as struct audit_row.
 *
 * The tail has its own connection, opened read-only, and reads while the
 * engine's writer (audit.c, WAL mode) appends. It never holds a read
 * transaction between calls: each call is one short statement, run to
 * completion and reset, so the writer's checkpoints are never held back.
 *
 * Only structural columns are copied (bounded, control bytes replaced);
 * detail, the data classes and the chain links never leave the file. Hash
 * columns come back as SNAP_HASH_PREFIX hex digits, or empty when the
 * stored value is missing or not hex. NULL text is empty, NULL numbers 0.
 * Each row's tone is its decision's in audit.h's vocabulary.
 *
 * One struct audit_tail belongs to one thread.
 */

#include <stddef.h>
#include <stdint.h>

#include "audit_read.h"
#include "err.h"
#include "snapshot.h"

#define AUDIT_TAIL_ERR_OPEN	"audit tail: " AUDIT_READ_ERR_OPEN
#define AUDIT_TAIL_ERR_NOT_AUDIT	"audit tail: " AUDIT_READ_ERR_NOT_AUDIT
#define AUDIT_TAIL_ERR_BUSY	"audit tail: " AUDIT_READ_ERR_BUSY
#define AUDIT_TAIL_ERR_READ	"audit tail: " AUDIT_READ_ERR_READ

struct audit_tail;

/* Open an existing log read-only; a missing file fails and is not created. */
int audit_tail_open(const char *path, struct audit_tail **out, struct al_err *err);

void audit_tail_close(struct audit_tail *t);

/*
 * Up to cap entries with sequence > after_seq, ascending; only those of
 * one session when session_or_null is non-NULL. To follow the log, pass
 * the sequence of the last row returned. 0, or -1 (*n is then 0 and
 * audit_tail_error() says why).
 */
int audit_tail_read(struct audit_tail *t, int64_t after_seq, const char *session_or_null,
		    struct audit_row *rows, size_t cap, size_t *n);

/*
 * The newest cap entries (of one session, if given), ascending, so that a
 * console opening on a big log starts at its end. When this returns no
 * rows of a session, follow from an audit_tail_max_seq() taken before it:
 * reading after 0 would be correct too, but scans the log on every call.
 */
int audit_tail_last(struct audit_tail *t, size_t cap, const char *session_or_null,
		    struct audit_row *rows, size_t *n);

/*
 * Calls dispatched without a terminal entry, among the entries with
 * sequence <= upto: up to cap dispatch rows, oldest first, each with
 * unknown_outcome set. Taken when the console opens (upto: the log's
 * newest sequence then), these are the calls an engine that crashed left
 * without an outcome — or, if another engine writes the same file, its
 * calls in flight. One pass over the log, grouped by call id.
 */
int audit_tail_unknown(struct audit_tail *t, int64_t upto, struct audit_row *rows, size_t cap,
		       size_t *n);

/*
 * The session typed names among those that started in the log (their
 * session_start entries, read through the log's one index), as an
 * operator types one (ids.h: the whole id or a unique prefix, "s-"
 * optional): 1 with its whole id in out; 0 when no session that started
 * has such an id (the engine's own entries, a session refused at
 * admission: named whole); -1 with why, fixed words and the text typed:
 * ambiguous, or the log unread.
 */
int audit_tail_pick_session(struct audit_tail *t, const char *typed, char out[SNAP_ID_MAX],
			    char *why, size_t cap);

/* The highest sequence in the log: 0 when empty, -1 on failure. */
int64_t audit_tail_max_seq(struct audit_tail *t);

/* The fixed text of the latest failure, or "" when none: t's own, gone with it. */
const char *audit_tail_error(const struct audit_tail *t);

#endif
