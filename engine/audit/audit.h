#ifndef AIRLOCK_AUDIT_H
#define AIRLOCK_AUDIT_H

/*
 * The tamper-evident audit log (docs/guarantees.md, "The audit log's crash contract"): SQLite in WAL mode with
 * synchronous=FULL, append-only, each entry hash-chained to the one before.
 * Entries hold names, decisions, fixed rule codes, counters and hashes —
 * never payload. Failure paths report fixed text only.
 *
 * One struct audit may be shared by many threads. Appends that arrive while
 * another append is committing are committed together, in one transaction
 * and one fsync (group commit); a lone append is committed at once.
 *
 * Re-checking a log from its file (`airlock audit verify`): audit_verify.h.
 */

#include <stdbool.h>
#include <stdint.h>

#include "audit_entry.h"
#include "err.h"
#include "hash.h"
#include "snapshot.h"	/* enum audit_tone */

struct audit;

/*
 * Entry types and the decisions each may carry: the one vocabulary of the
 * log. Writers name rows through it, `audit verify` counts by it and the
 * console colours by its tone. A call that reaches an upstream writes a
 * DISPATCH entry and then exactly one CALL entry (its terminal entry); a
 * denied call writes only the CALL entry.
 */
#define AUDIT_TYPES(_) \
	_(SESSION_START, "session_start") \
	_(ADMISSION,     "admission")     \
	_(DISPATCH,      "dispatch")      \
	_(CALL,          "call")          \
	_(SESSION_END,   "session_end")   \
	_(POLICY,        "policy")        \
	_(REAP,          "reap")

enum audit_type {
#define AUDIT_TYPE_ENUM(e, id) AUDIT_T_##e,
	AUDIT_TYPES(AUDIT_TYPE_ENUM)
#undef AUDIT_TYPE_ENUM
	AUDIT_T_COUNT
};

/* decision, its identifier, the entry type it belongs to, its tone (snapshot.h) */
#define AUDIT_DECISIONS(_) \
	_(START,          "start",          SESSION_START, PLAIN) \
	_(PASS,           "pass",           ADMISSION,     GOOD)  \
	_(ADMITTED,       "admitted",       ADMISSION,     GOOD)  \
	_(REFUSED,        "refused",        ADMISSION,     BAD)   \
	_(DISPATCH,       "dispatch",       DISPATCH,      PLAIN) \
	_(ALLOWED,        "allowed",        CALL,          GOOD)  \
	_(DENIED,         "denied",         CALL,          BAD)   \
	_(EGRESS_DENIED,  "egress_denied",  CALL,          BAD)   \
	_(ERROR,          "error",          CALL,          ALERT) \
	_(FAULT,          "fault",          CALL,          ALERT) \
	_(NORMAL,         "normal",         SESSION_END,   GOOD)  \
	_(ABNORMAL,       "abnormal",       SESSION_END,   ALERT) \
	_(APPLIED,        "applied",        POLICY,        GOOD)  \
	_(NOT_APPLICABLE, "not_applicable", POLICY,        PLAIN) \
	_(REJECTED,       "rejected",       POLICY,        ALERT) \
	_(REAPED,         "reaped",         REAP,          PLAIN)

enum audit_decision {
#define AUDIT_DECISION_ENUM(e, id, type, tone) AUDIT_D_##e,
	AUDIT_DECISIONS(AUDIT_DECISION_ENUM)
#undef AUDIT_DECISION_ENUM
	AUDIT_D_COUNT
};

/*
 * The WHERE of the log's one index, a partial one (audit.c says why): a
 * query that is to use it names it in these very words.
 */
#define AUDIT_INDEXED	"(type = 'session_start' OR type = 'session_end' OR type = 'policy')"

const char *audit_type_id(enum audit_type t);
const char *audit_decision_id(enum audit_decision d);
enum audit_type audit_decision_type(enum audit_decision d);
enum audit_tone audit_decision_tone(enum audit_decision d);
/* The decision a (type, decision) pair of stored strings names, or AUDIT_D_COUNT. */
enum audit_decision audit_decision_lookup(const char *type, const char *decision);

/*
 * Create or open; sets WAL + synchronous=FULL and creates the schema. A
 * log without a payload key gets one (fails if getrandom(2) does).
 */
int audit_open(const char *path, struct audit **out, struct al_err *err);
/* The path it was opened at (the engine's own read-only readers open it too). */
const char *audit_db_path(const struct audit *a);

/*
 * The log's payload key: the key of the request and response hashes its
 * writers store (HMAC-SHA-256, hash.h), so that a view-role reader of the
 * hashes cannot test guesses of a low-entropy payload. Random, made at the
 * first open by a writer, kept in the file (table audit_key), so anyone who
 * can read the file can still test guesses. 0, or -1 without a log.
 */
#define AUDIT_KEY_LEN	32
int audit_payload_key(const struct audit *a, unsigned char key[AUDIT_KEY_LEN]);

/*
 * The path names something other than a regular file: a directory, or a
 * FIFO or device, which would hold SQLite in its first read for ever. The
 * openers refuse it up front (a missing path is not this).
 */
bool audit_not_a_file(const char *path);

/*
 * Appends already in progress on other threads finish first (their entries
 * are committed and they get their answer); one that starts once the close
 * has begun fails. No call may start after audit_close has returned.
 */
void audit_close(struct audit *a);

/*
 * Append one entry, durable when this returns 0: its transaction (shared
 * with entries appended concurrently) has committed with synchronous=FULL.
 * Entries are chained in sequence order, so one thread's successive entries
 * get increasing sequences. If a shared transaction fails, every entry in
 * it fails and none is stored; an entry that cannot be hashed (a string
 * that is not valid UTF-8) fails alone. The entry's strings are only read
 * during the call. Fills the generated entry id (UUID-like hex) and
 * sequence if non-NULL.
 */
int audit_append(struct audit *a, const struct audit_entry *e,
		 char entry_id[AUDIT_ENTRY_ID_MAX], int64_t *seq, struct al_err *err);

/*
 * Entries that ride on a later commit. A call's terminal entry need not
 * cost an fsync of its own: it is queued behind the call's (durable)
 * dispatch entry and committed with the next transaction of the log —
 * the session's next dispatch, any other session's append, the session's
 * end, or the log's own timer, at most AUDIT_LATER_MS after it was
 * queued. Queue order is sequence order: an entry queued later (by any
 * thread) never commits before it. A crash before that commit loses the
 * entry; `audit verify` then reports its dispatch as an unknown outcome.
 *
 * A lane collects the outcome of one writer's (one session's) queued
 * entries. It must stay valid until audit_lane_settle() has returned.
 */
#define AUDIT_LATER_MS	2

struct audit_lane {
	int pending;		/* queued, not yet decided (under the log's lock) */
	bool failed;		/* one of them could not be committed */
};

/*
 * Queue a copy of e (its strings are copied). 0 once queued: its place in
 * the sequence is fixed, after every entry already durable or queued.
 * -1 when the entry cannot be made (a string that is not valid UTF-8, a
 * malformed id: it then takes no place and the lane is unchanged), the log
 * is closing, out of memory, or the lane already failed.
 */
int audit_append_later(struct audit *a, struct audit_lane *l, const struct audit_entry *e,
		       struct al_err *err);

/* Did an entry queued on this lane fail to commit? (It is then lost.) */
bool audit_lane_failed(struct audit *a, struct audit_lane *l);

/*
 * Commit what is queued now (no waiting for the timer) and wait until
 * every entry of the lane is decided. 0 when all of them are durable.
 */
int audit_lane_settle(struct audit *a, struct audit_lane *l, struct al_err *err);

/* Count entries (all, or of a session when session_id is non-NULL). */
int64_t audit_count(struct audit *a, const char *session_id);

/*
 * Each session whose session_start is in the log and whose session_end is
 * not, to each with its start's detail (its owner; NULL in older logs): a
 * restarted engine ends what its dead predecessor left open. One query
 * over the log: for start-up, not for every call; each runs under the
 * log's lock and must not write to it. 0, or -1.
 */
int audit_unended(struct audit *a,
		  void (*each)(void *ctx, const char *session_id, const char *start_detail),
		  void *ctx);

/*
 * The held-call entries of one session ("hold N waiting", "hold N
 * approved", …), oldest first, each with its tool: a restarted engine
 * closes a wait its dead predecessor left open. Indexed; for start-up,
 * like audit_unended: each runs under the log's lock. 0, or -1.
 */
int audit_session_holds(struct audit *a, const char *session_id,
			void (*each)(void *ctx, const char *rule, const char *tool), void *ctx);

/*
 * The detail of the engine's newest policy entry (session "engine") whose
 * rule starts with prefix, into *detail (malloc'd; NULL when the log has
 * none). For start-up, like audit_unended. 0, or -1.
 */
int audit_engine_latest(struct audit *a, const char *prefix, char **detail);

/*
 * The highest policy revision and held call id ("hold N …") the log's
 * policy entries name (0 when none does), through the log's index: a
 * restarted engine goes on past them, so no revision names two changes
 * and no id two held calls. For start-up. 0, or -1.
 */
int audit_policy_highest(struct audit *a, int64_t *revision, int64_t *hold_id);

/*
 * The log's head now: sequence and entry hash of its newest entry (0 and
 * "" when empty), as `airlock audit verify` prints it. Recorded outside
 * the log, it anchors a later verify. -1 when it cannot be read.
 */
int audit_head(struct audit *a, int64_t *seq, char hash[HASH_HEX_LEN + 1]);

#endif
