#include "audit_propose.h"
#include "audit.h"
#include "audit_read.h"
#include "audit_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/*
 * One row a (rule, tool): the calls, the sessions they came from, the
 * first and last time. LIMIT is one past the bound, to know it was hit.
 */
static const char denied_sql[] =
	"SELECT rule, tool, count(*), count(DISTINCT session_id), min(ts), max(ts)"
	" FROM audit_entries"
	" WHERE type = ?1 AND decision IN (?2, ?3)"
	" AND (?4 IS NULL OR session_id = ?4) AND (?5 IS NULL OR ts >= ?5)"
	" GROUP BY rule, tool ORDER BY min(seq) LIMIT ?6";

enum { C_RULE, C_TOOL, C_CALLS, C_SESSIONS, C_FIRST, C_LAST };

/*
 * A class flow hold's decisions that denied its call: the policy entries
 * "hold N denied…" and "hold N timed out" whose detail names the flow
 * (supervisor_hold.c), one row a (rule, tool, flow), in C_* order, then
 * the flow. Only the flow is read of the detail: never a hash.
 */
static const char flows_sql[] =
	"SELECT CASE WHEN rule GLOB 'hold [0-9]* timed out' THEN 'hold_timeout'"
	" ELSE 'hold_denied' END, tool, count(*), count(DISTINCT session_id), min(ts), max(ts),"
	" json_extract(detail, '$.flow') FROM audit_entries"
	" WHERE type = ?1 AND json_valid(detail) AND json_extract(detail, '$.flow') IS NOT NULL"
	" AND (rule GLOB 'hold [0-9]* denied*' OR rule GLOB 'hold [0-9]* timed out')"
	" AND (?4 IS NULL OR session_id = ?4) AND (?5 IS NULL OR ts >= ?5)"
	" GROUP BY 1, 2, 7 ORDER BY min(seq) LIMIT ?6";

/* The gateway's denial rules (engine/policy/policy.h) and what changes each. */
static const struct {
	const char *rule, *hint;
} hints[] = {
	{ "revoked", "a restore of the tool (this file)" },
	{ "gate_closed", "a valid newer cutover on the session (a stale or malformed update "
	  "closed its gate)" },
	{ "frozen", "the engine's freeze lifted (airlock ctl thaw)" },
	{ "quarantined", "the session's quarantine released (airlock ctl release SESSION)" },
	{ "hold_denied", "a restore of the tool, which lifts its hold (this file); or an "
	  "operator's approval of each held call (airlock ctl approve ID)" },
	{ "hold_timeout", "a restore of the tool, which lifts its hold (this file); or a "
	  "decision within the hold timeout (bounds.hold_timeout in the config)" },
	{ "unknown_tool", "an alias and a catalog tool for it in the session's config" },
	{ "sink_ceiling", "the tool's sink_ceiling in the session's config, or a session of a "
	  "lower class" },
	{ "catalog_drift", "the upstream's tool definition reviewed, then its pin in the "
	  "session's config" },
	{ "egress_denied", "the tool's response_ceiling in the session's config" },
	{ "response_too_large", "the session's bounds.frame_bytes in its config" },
};

#define HINT_NONE	"nothing an operator sets: not a policy denial"

bool
audit_propose_restorable(const char *rule)
{
	/* A restore allows a revoked tool, and lifts a held one's hold. */
	return rule && (strcmp(rule, "revoked") == 0 || strcmp(rule, "hold_denied") == 0 ||
			strcmp(rule, "hold_timeout") == 0);
}

const char *
audit_propose_hint(const char *rule)
{
	for (size_t i = 0; rule && i < sizeof hints / sizeof hints[0]; i++)
		if (strcmp(rule, hints[i].rule) == 0)
			return hints[i].hint;
	return HINT_NONE;
}

static void
fill(struct propose_denial *d, sqlite3_stmt *st)
{
	const char *tool = (const char *)sqlite3_column_text(st, C_TOOL);

	memset(d, 0, sizeof *d);
	audit_read_text(d->rule, sizeof d->rule, (const char *)sqlite3_column_text(st, C_RULE));
	audit_read_text(d->tool, sizeof d->tool, tool);
	d->tool_ok = tool && tool[0] && strcmp(d->tool, tool) == 0;
	d->calls = sqlite3_column_int64(st, C_CALLS);
	d->sessions = sqlite3_column_int64(st, C_SESSIONS);
	audit_read_text(d->first, sizeof d->first, (const char *)sqlite3_column_text(st, C_FIRST));
	audit_read_text(d->last, sizeof d->last, (const char *)sqlite3_column_text(st, C_LAST));
}

static void
fill_flow(struct propose_flow *f, sqlite3_stmt *st)
{
	memset(f, 0, sizeof *f);
	audit_read_text(f->rule, sizeof f->rule, (const char *)sqlite3_column_text(st, C_RULE));
	audit_read_text(f->tool, sizeof f->tool, (const char *)sqlite3_column_text(st, C_TOOL));
	audit_read_text(f->flow, sizeof f->flow, (const char *)sqlite3_column_text(st, 6));
	f->calls = sqlite3_column_int64(st, C_CALLS);
	f->sessions = sqlite3_column_int64(st, C_SESSIONS);
	audit_read_text(f->first, sizeof f->first, (const char *)sqlite3_column_text(st, C_FIRST));
	audit_read_text(f->last, sizeof f->last, (const char *)sqlite3_column_text(st, C_LAST));
}

static int
bind_all(sqlite3_stmt *st, const char *since, const char *session, enum audit_type type)
{
	int rc = sqlite3_bind_text(st, 1, audit_type_id(type), -1, SQLITE_STATIC);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, audit_decision_id(AUDIT_D_DENIED), -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, audit_decision_id(AUDIT_D_EGRESS_DENIED), -1,
				       SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = session ? sqlite3_bind_text(st, 4, session, -1, SQLITE_STATIC)
			     : sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = since ? sqlite3_bind_text(st, 5, since, -1, SQLITE_STATIC)
			   : sqlite3_bind_null(st, 5);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 6, AUDIT_PROPOSE_MAX + 1);
	return rc;
}

/* The row into its list (the flow holds' when flows): false when that is full. */
static bool
keep(struct audit_propose *out, bool flows, sqlite3_stmt *st)
{
	bool room = flows ? out->n_flows < AUDIT_PROPOSE_FLOWS_MAX : out->n < AUDIT_PROPOSE_MAX;

	if (!room)
		out->truncated = true;
	else if (flows)
		fill_flow(&out->flows[out->n_flows++], st);
	else
		fill(&out->v[out->n++], st);
	return room;
}

/* What one read asks, and where it puts the rows. */
struct propose_query {
	const char *since, *session;
	struct audit_propose *out;
};

/*
 * The calls' denials, or the flow holds' (flows): one statement on db run
 * to its end, or to its list's bound, and finalized, so no read
 * transaction outlives the call.
 */
static const char *
read_rows(sqlite3 *db, const struct propose_query *q, bool flows)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, flows ? flows_sql : denied_sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return audit_read_prepare_error(rc);
	rc = bind_all(st, q->since, q->session, flows ? AUDIT_T_POLICY : AUDIT_T_CALL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = keep(q->out, flows, st) ? SQLITE_OK : SQLITE_DONE;
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_OK ? NULL : audit_read_step_error(rc);
}

/* The denials, then the flow holds' (audit_read_run's fn). */
static const char *
read_all(sqlite3 *db, void *arg)
{
	struct propose_query *q = arg;
	const char *why;

	if (!(q->out->v = calloc(AUDIT_PROPOSE_MAX, sizeof *q->out->v)))
		return "out of memory";
	why = read_rows(db, q, false);
	return why ? why : read_rows(db, q, true);
}

/*
 * What is proposed goes back to the engine as policy: it is read from a
 * log that verifies, never from rows edited by hand.
 */
static int
verified(const char *path, struct al_err *err)
{
	struct audit_verify v;
	int rc = audit_verify_file(path, &v, err);
	bool ok = v.ok;

	if (rc < 0) {
		/* verify's fixed text, as the other reasons read: "audit propose: …" */
		char why[sizeof err->msg];

		snprintf(why, sizeof why, "%s", strncmp(err->msg, "audit: ", 7) == 0 ?
			 err->msg + 7 : err->msg);
		al_fail(err, "audit propose: %s", why);
	} else if (!ok)
		al_fail(err, "audit propose: the log does not verify (%s at entry %lld): nothing "
			"is proposed from it (airlock audit verify tells more)", v.reason,
			(long long)v.first_bad_seq);
	audit_verify_free(&v);
	return rc == 0 && ok ? 0 : -1;
}

int
audit_propose_read(const char *path, const char *since, const char *session,
		   struct audit_propose *out, struct al_err *err)
{
	struct propose_query q = { since, session, out };
	const char *why;

	memset(out, 0, sizeof *out);
	if (verified(path, err) < 0)
		return -1;
	if ((why = audit_read_run(path, read_all, &q))) {
		audit_propose_free(out);
		return al_fail(err, "audit propose: %s", why);
	}
	return 0;
}

void
audit_propose_free(struct audit_propose *p)
{
	if (!p)
		return;
	free(p->v);
	memset(p, 0, sizeof *p);
}

/*
 * Were all of d's denials a class flow hold's? Then a restore of its tool
 * would lift nothing: it is left to the operator (ctl restore --flow).
 */
static bool
flow_held_only(const struct audit_propose *p, const struct propose_denial *d)
{
	int64_t n = 0;
	size_t i;

	for (i = 0; i < p->n_flows; i++)
		if (strcmp(p->flows[i].rule, d->rule) == 0 && strcmp(p->flows[i].tool, d->tool) == 0)
			n += p->flows[i].calls;
	return strcmp(d->rule, "revoked") != 0 && n >= d->calls;
}

/* Would an incident file's restore allow d's calls? */
static bool
proposed(const struct audit_propose *p, const struct propose_denial *d)
{
	return audit_propose_restorable(d->rule) && d->tool_ok && !flow_held_only(p, d);
}

/* The first proposed denial of p->v[at]'s tool: a tool left out is counted once. */
static size_t
first_of_tool(const struct audit_propose *p, size_t at)
{
	size_t i;

	for (i = 0; i < at; i++)
		if (strcmp(p->v[i].tool, p->v[at].tool) == 0 && proposed(p, &p->v[i]))
			return i;
	return at;
}

/*
 * The note of the tool of p->v[at], its first proposed denial, with every
 * later one of the same tool: "3 calls in 2 sessions denied revoked,
 * 2026-12-05T13:00:01Z to 2026-12-05T13:04:10Z"; denied by more than one
 * rule, "24 calls in at least 1 session denied 23 revoked, 1 hold_denied,
 * …" (a session may be counted under two rules).
 */
static void
note(char out[AUDIT_PROPOSE_WHY_MAX], const struct audit_propose *p, size_t at)
{
	const struct propose_denial *d = &p->v[at];
	int64_t calls = 0, sessions = 0;
	const char *first = d->first, *last = d->last;
	char rules[AUDIT_PROPOSE_WHY_MAX] = "";
	size_t i, len = 0, n = 0;

	for (i = at; i < p->n; i++) {
		d = &p->v[i];
		if (strcmp(d->tool, p->v[at].tool) != 0 || !proposed(p, d))
			continue;
		calls += d->calls;
		sessions = d->sessions > sessions ? d->sessions : sessions;
		first = strcmp(d->first, first) < 0 ? d->first : first;
		last = strcmp(d->last, last) > 0 ? d->last : last;
		len += (size_t)snprintf(rules + len, sizeof rules - len, n++ ? ", %lld %s" : "%lld %s",
					(long long)d->calls, d->rule);
		len = len < sizeof rules ? len : sizeof rules - 1;
	}
	if (n == 1)	/* one rule: its calls need not be said twice */
		snprintf(rules, sizeof rules, "%s", p->v[at].rule);
	snprintf(out, AUDIT_PROPOSE_WHY_MAX, "%lld call%s in %s%lld session%s denied %s, "
		 "%.19sZ to %.19sZ", (long long)calls, calls == 1 ? "" : "s",
		 n > 1 ? "at least " : "", (long long)sessions, sessions == 1 ? "" : "s", rules,
		 first, last);
}

int
audit_propose_file(const struct audit_propose *p, size_t tools_max, json_t **file,
		   size_t *left_out)
{
	json_t *restore = json_array(), *why = json_object();
	char text[AUDIT_PROPOSE_WHY_MAX];
	size_t i;
	int rc = restore && why ? 0 : -1;

	*file = NULL;
	*left_out = 0;
	for (i = 0; rc == 0 && i < p->n; i++) {
		const struct propose_denial *d = &p->v[i];

		/* Grouped by (rule, tool): a tool revoked and held comes once, at its first. */
		if (!proposed(p, d) || first_of_tool(p, i) != i)
			continue;
		if (json_array_size(restore) == tools_max) {
			(*left_out)++;
			continue;
		}
		note(text, p, i);
		if (json_array_append_new(restore, json_string(d->tool)) < 0 ||
		    json_object_set_new(why, d->tool, json_string(text)) < 0)
			rc = -1;
	}
	if (rc == 0 && json_array_size(restore) > 0 &&
	    !(*file = json_pack("{s:o, s:o}", "restore", restore, "why", why)))
		return -1;	/* json_pack's "o" took both, even failing */
	if (!*file) {
		json_decref(restore);
		json_decref(why);
	}
	return rc;
}
