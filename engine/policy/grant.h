#ifndef AIRLOCK_GRANT_H
#define AIRLOCK_GRANT_H

/*
 * Time-boxed grants (issue 43, item 2), pure bookkeeping: a restore that
 * lapses by itself, after a time (a monotonic deadline), after a number of
 * allowed calls (a budget shared by every session it covers), or at
 * whichever comes first. The supervisor owns one table under a lock of
 * its own and turns a due grant into a revoke authored by the expiry;
 * nothing here has a thread, a clock or a lock, so a unit test drives it
 * with plain numbers.
 *
 * One grant a tool: a new grant of the same tool, or any revoke or
 * restore of it, replaces it (grant_drop). A grant is named by a serial
 * that is never reused, so a session that still names an old one finds
 * nothing and is not metered.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate.h"

#define GRANT_MAX		64		/* grants at once, one a tool */
#define GRANT_TOOL_MAX		64		/* a catalog tool name, NUL included */
#define GRANT_FOR_MIN_S		1
#define GRANT_FOR_MAX_S		(24 * 3600)	/* --for: at most a day */
#define GRANT_CALLS_MAX		1000000		/* --calls: at most a million */

struct grant {
	uint64_t serial;	/* 0: a free entry */
	char tool[GRANT_TOOL_MAX];
	bool all;		/* every session, and those started while it runs */
	int64_t deadline_ms;	/* monotonic; 0: none */
	int64_t calls_left;	/* -1: no budget */
	bool spent;		/* the budget ran out: its lapse is due */
	int64_t revision;	/* the restore's */
};

struct grant_table {
	struct grant g[GRANT_MAX];
	uint64_t serial;	/* the latest given */
	size_t budgets;		/* grants with a call budget not yet spent */
};

/* "90s", "15m", "2h": a number and one unit, GRANT_FOR_MIN_S .. GRANT_FOR_MAX_S. 0, or -1. */
int grant_duration_parse(const char *s, int64_t *seconds);
/* A whole number 1 .. GRANT_CALLS_MAX, digits only. 0, or -1. */
int grant_calls_parse(const char *s, int64_t *calls);

/*
 * Tool granted from now_ms: for_s seconds (0: no deadline) and/or calls
 * (0: no budget), at least one of them, each within its bounds. Replaces
 * the tool's grant. Its serial, or 0 when the terms are out of bounds or
 * the table is full.
 */
uint64_t grant_set(struct grant_table *t, const char *tool, bool all, int64_t now_ms,
		   int64_t for_s, int64_t calls, int64_t revision);
/* The tool's grant gone: its serial, or 0 when it had none. */
uint64_t grant_drop(struct grant_table *t, const char *tool);
/* By serial or by tool: NULL when none. */
const struct grant *grant_find(const struct grant_table *t, uint64_t serial);
const struct grant *grant_of(const struct grant_table *t, const char *tool);

enum grant_spend {
	GRANT_FREE,		/* no such grant, or no budget: not metered */
	GRANT_SPENT,		/* one call taken from the budget */
	GRANT_SPENT_LAST,	/* the last one: the lapse is due now */
	GRANT_EXHAUSTED,	/* none left: deny the call */
};
/* One allowed call of the grant serial names. */
enum grant_spend grant_spend(struct grant_table *t, uint64_t serial);
/* What a gate's meter answers for a spend (gate.h): allow, allow the last, or deny. */
enum gate_meter_answer grant_meter_answer(enum grant_spend r);

/*
 * A grant due at now_ms (its budget spent or its deadline passed), copied
 * to *due: 1; 0 when none is, with *next_ms lowered to the earliest
 * deadline still ahead (left as it is when there is none).
 */
int grant_due(const struct grant_table *t, int64_t now_ms, struct grant *due, int64_t *next_ms);
/* Why a due grant lapses: "calls spent" or "time up". */
const char *grant_lapse_why(const struct grant *g);

/* What remains at now_ms: calls (-1: no budget) and ms (-1: no deadline; never below 0). */
void grant_left(const struct grant *g, int64_t now_ms, int64_t *calls, int64_t *ms);

/* "2 calls", "15m", "90s or 5 calls": the terms as written, for a rule or a screen. */
void grant_terms_text(int64_t for_s, int64_t calls, char *buf, size_t cap);

#endif
