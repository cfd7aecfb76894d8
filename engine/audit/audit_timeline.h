#ifndef AIRLOCK_AUDIT_TIMELINE_H
#define AIRLOCK_AUDIT_TIMELINE_H

/*
 * `airlock audit timeline`: the policy story of a log, for the review
 * after an incident, read from the log alone. Session starts and ends,
 * admissions refused, policy changes (one event a revision, with the
 * acknowledgements the sessions gave it), what a standing revoke or
 * freeze did to a session at its start, the operators' other requests
 * (stop, start, refusals) and reaps, in sequence order.
 *
 * Payload-free by construction: only names, ids, counts, times, rules
 * and revisions are copied. Of a policy entry's detail only its author
 * ({"by", "uid", "via"}, as the supervisor writes it) is read; no other
 * detail, no hash and no class leaves the file. Copies are bounded and
 * their control bytes replaced (audit_read.h).
 *
 * The log is read on a connection of its own, read-only, a page of
 * entries a statement (audit_read.h). Call and dispatch entries are never
 * read.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "snapshot.h"

/* Events one read keeps; past it the read stops and says so (truncated). */
#define AUDIT_TIMELINE_MAX	200000
/*
 * Entries one page of audit_timeline_page goes through at most, events or
 * not (about 3 ms): the first page of a long log with few events would
 * otherwise read it whole on serve's control loop (0.34 s for 2 million
 * entries, and any view client may ask again).
 */
#define AUDIT_TIMELINE_SCAN	16384

#define AUDIT_TIMELINE_KINDS(_) \
	_(SESSION_START,     "session_start")     \
	_(SESSION_END,       "session_end")       \
	_(ADMISSION_REFUSED, "admission_refused") \
	_(CUTOVER,           "policy")            \
	_(AT_START,          "policy_at_start")   \
	_(REQUEST,           "request")           \
	_(REAP,              "reap")

enum timeline_kind {
#define TIMELINE_KIND_ENUM(e, id) TIMELINE_##e,
	AUDIT_TIMELINE_KINDS(TIMELINE_KIND_ENUM)
#undef TIMELINE_KIND_ENUM
	TIMELINE_KIND_COUNT
};

/*
 * One event. Which fields a kind fills:
 *  session_start      session
 *  session_end        session, normal, rule (the end's reason)
 *  admission_refused  session, rule (the refusing check)
 *  policy             op (revoke, restore, freeze, thaw, hold; update for a
 *                     whole update), tool (none for freeze and thaw),
 *                     revision, by, the acks: one a session it reached
 *  policy_at_start    session, op, tool, revision, by, one ack: a tool
 *                     standing revoked, or a freeze, applied to a session
 *                     as it started
 *  request            session ("engine" when none), op (the rule's first
 *                     word), rule (the whole rule: "stop by request",
 *                     "revoke refused: view only", …), by, applied or
 *                     rejected (the entry's decision, as an ack); also a
 *                     held call's wait and decision ("hold 7 waiting",
 *                     "hold 7 approved", "hold 7 timed out"), its session's
 *                     own, by the decision's author
 *  reap               session, rule
 * seq and time are the event's first entry's.
 */
struct timeline_event {
	enum timeline_kind kind;
	int64_t seq;
	char time[32];
	char session[SNAP_ID_MAX];
	char op[16];
	char tool[SNAP_NAME_MAX];
	char rule[SNAP_WORD_MAX];
	int64_t revision;
	bool normal;
	bool has_author;
	struct snap_author by;
	int64_t applied, not_applicable, rejected;
};

struct audit_timeline {
	struct timeline_event *v;
	size_t n;
	bool truncated;		/* the read's bound reached: later ones not read */
	size_t limit;		/* events a read keeps; 0: AUDIT_TIMELINE_MAX */
};

const char *audit_timeline_kind_id(enum timeline_kind k);
/* The kind a word names (a row's kind); TIMELINE_KIND_COUNT for none (a newer engine's). */
enum timeline_kind audit_timeline_kind_by_id(const char *id);

/*
 * The timeline of the log at path: every event with an entry at or after
 * since (a stored UTC time, compared as text; NULL: all). A revision's
 * acknowledgements are grouped into one event by (revision, op, tool), so
 * one whose first entry is before since shows only the acks after it.
 * 0, or -1 with fixed text in err ("audit timeline: <audit_read.h reason>").
 */
int audit_timeline_read(const char *path, const char *since, struct audit_timeline *out,
			struct al_err *err);

void audit_timeline_free(struct audit_timeline *tl);

/*
 * For a reader that follows the log (the console's timeline view, through
 * supervisor_timeline): the events of the entries after seq after, at most
 * cap (1 .. AUDIT_TIMELINE_MAX), in order. *next: the last entry read (after
 * when none), the cursor of the next page; out->truncated: more may follow
 * (cap was reached, or the page's scan). Only entries after the cursor are
 * read (by seq, the log's key), so following costs what was written since,
 * and a page goes through a bounded number of entries, events or not
 * (a page may hold no event and still say more). A revision's
 * acks on a later page come as an event of their own, which the reader
 * folds into the one it holds (audit_timeline_fold). 0, or -1 as
 * audit_timeline_read.
 */
int audit_timeline_page(const char *path, int64_t after, size_t cap, struct audit_timeline *out,
			int64_t *next, struct al_err *err);

/* An event as the console's row (snapshot.h): the kind as its word. */
void audit_timeline_row(const struct timeline_event *e, struct timeline_row *r);

/*
 * r (a later page's) continues a change among the last rows of
 * rows[0..n) from the same engine (same revision, op and tool, as
 * audit_timeline_read groups them): its acks are added there (and its
 * author when that had none), and true. False: r is an event of its own.
 */
bool audit_timeline_fold(struct timeline_row *rows, size_t n, const struct timeline_row *r);

#endif
