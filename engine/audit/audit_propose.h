#ifndef AIRLOCK_AUDIT_PROPOSE_H
#define AIRLOCK_AUDIT_PROPOSE_H

/*
 * `airlock audit propose`, learn mode: the calls the gateway denied, read
 * from the log and counted by (rule, tool), and the incident file that
 * would allow what an incident file can express. Today that is three
 * rules: a call denied `revoked` is allowed again by a restore of its
 * tool, and one denied `hold_denied` or `hold_timeout` too, since a restore
 * lifts the tool's hold (a tool both revoked and held is restored once). Every
 * other denial (sink_ceiling, frozen, gate_closed, catalog_drift,
 * egress_denied, …) needs something an incident file does not hold, and
 * audit_propose_hint() names it.
 *
 * It proposes and never applies. Only the rule, the tool, counts and
 * times are read from the call entries: no hash, class or detail.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "snapshot.h"

#define AUDIT_PROPOSE_MAX	4096	/* (rule, tool) pairs one read keeps */
#define AUDIT_PROPOSE_WHY_MAX	200	/* a note's bytes, as an incident file's "why" takes them */

/* Denied calls of one tool by one rule. */
struct propose_denial {
	char rule[SNAP_WORD_MAX];
	char tool[SNAP_NAME_MAX];	/* "" when the call named no catalog tool */
	bool tool_ok;			/* stored as is: not empty, not cut, no byte replaced */
	int64_t calls, sessions;
	char first[32], last[32];	/* the first and last such call's times */
};

/*
 * Calls a class flow hold held that were denied (hold_denied: by an
 * operator or a stop; hold_timeout), by (flow, tool, rule), read from the
 * holds' decision entries. A restore of the tool does not lift a flow
 * hold, and an incident file names tools only: these are never proposed,
 * and a declassification (policy.declassify_by_hold) never is either.
 */
#define AUDIT_PROPOSE_FLOWS_MAX	256
struct propose_flow {
	char flow[SNAP_NAME_MAX];	/* "CLASS>SINK" */
	char tool[SNAP_NAME_MAX];
	char rule[SNAP_WORD_MAX];	/* hold_denied or hold_timeout, as the call's entry */
	int64_t calls, sessions;
	char first[32], last[32];
};

/* In order of each pair's first denial. */
struct audit_propose {
	struct propose_denial *v;
	size_t n;
	bool truncated;		/* more than AUDIT_PROPOSE_MAX pairs: the later ones not read */
	struct propose_flow flows[AUDIT_PROPOSE_FLOWS_MAX];
	size_t n_flows;
};

/*
 * The denied calls (decision denied or egress_denied) of the log at path,
 * at or after since (a stored UTC time, compared as text) and of one
 * session (its whole id) when given. The whole log is verified first
 * (audit_verify.h): a log that does not verify proposes nothing. Then one
 * statement, run to its end on a read-only connection of its own. 0, or
 * -1 with fixed text in err ("audit propose: <audit_read.h reason>", "audit
 * propose: the log does not verify (REASON at entry N): …", or verify's).
 */
int audit_propose_read(const char *path, const char *since, const char *session,
		       struct audit_propose *out, struct al_err *err);

void audit_propose_free(struct audit_propose *p);

/* Can an incident file allow a call denied by rule? (revoked, hold_*: a restore.) */
bool audit_propose_restorable(const char *rule);

/*
 * What would change a denial by rule, for the operator to decide: fixed
 * text ("the tool's sink_ceiling in the session's config").
 */
const char *audit_propose_hint(const char *rule);

/*
 * The proposed incident file, {"restore": [tools], "why": {tool: note}}:
 * each tool denied `revoked` (or held: hold_denied, hold_timeout, unless
 * every such denial was a class flow hold's) whose name the log holds as is, once, in
 * order of first denial, up to tools_max; the note says how many calls in
 * how many sessions, by which rules when more than one, and between which
 * times (at most
 * AUDIT_PROPOSE_WHY_MAX - 1 bytes). *file is NULL when there is none;
 * *left_out counts the tools past tools_max. -1 when out of memory.
 */
int audit_propose_file(const struct audit_propose *p, size_t tools_max, json_t **file,
		       size_t *left_out);

#endif
