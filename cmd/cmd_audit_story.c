#include "cmd_audit_story.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit_propose.h"
#include "audit_timeline.h"
#include "cli.h"
#include "cmd_audit_lines.h"
#include "incident.h"
#include "path_reason.h"

/* A note audit_propose writes must be one the incident reader takes. */
_Static_assert(AUDIT_PROPOSE_WHY_MAX - 1 <= INCIDENT_WHY_MAX, "a proposed note the reader refuses");

/* "audit WHAT DB: <reason>: <why the path would not open>", as tail says it. */
static int
read_failed(const struct audit_story_args *a, const char *what, const struct al_err *err)
{
	char text[512];

	path_failure(text, sizeof text, what, a->db, false, err->msg);
	return cli_fail(a->json, "audit", "%s", text);
}

/* --- timeline ------------------------------------------------------------------ */

int
cmd_audit_timeline(const struct audit_story_args *a)
{
	struct audit_timeline tl;
	struct al_err err;
	int rc = EXIT_OK;

	if (audit_timeline_read(a->db, a->since, &tl, &err) < 0)
		return read_failed(a, "audit timeline", &err);
	for (size_t i = 0; rc == EXIT_OK && i < tl.n; i++) {
		struct timeline_row row;

		audit_timeline_row(&tl.v[i], &row);
		rc = audit_line_event(a->json, &row);
	}
	if (rc == EXIT_OK && fflush(stdout) != 0)
		rc = EXIT_ERROR;
	if (tl.truncated)
		fprintf(stderr, "airlock audit: timeline %s: stopped at %d events: narrow it "
			"with --since\n", a->db, AUDIT_TIMELINE_MAX);
	audit_timeline_free(&tl);
	return rc;
}

static const char *
dash(const char *s)
{
	return s[0] ? s : "-";
}

/* --- propose ------------------------------------------------------------------- */

static const char *
plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

/* One line on stderr for each denial the file does not express. */
static size_t
report_unexpressed(const struct audit_propose *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++) {
		const struct propose_denial *d = &p->v[i];
		const char *what = audit_propose_restorable(d->rule)
				   ? "nothing: the log names no tool a file could restore"
				   : audit_propose_hint(d->rule);

		if (audit_propose_restorable(d->rule) && d->tool_ok)
			continue;
		fprintf(stderr, "airlock audit: not proposed: %lld call%s of %s in %lld session%s "
			"denied %s; what would change it: %s\n", (long long)d->calls,
			plural(d->calls), dash(d->tool), (long long)d->sessions, plural(d->sessions),
			dash(d->rule), what);
		n++;
	}
	/*
	 * A class flow hold is lifted by ctl restore --flow, which no incident
	 * file holds; and a declassification is the operator's, call by call:
	 * said here, never proposed.
	 */
	for (i = 0; i < p->n_flows; i++, n++)
		fprintf(stderr, "airlock audit: not proposed: %lld call%s of %s in %lld session%s "
			"denied %s under the class flow hold %s; what would change it: airlock "
			"ctl restore --flow %s (an incident file names tools only; a "
			"declassification is never proposed)\n", (long long)p->flows[i].calls,
			plural(p->flows[i].calls), dash(p->flows[i].tool),
			(long long)p->flows[i].sessions, plural(p->flows[i].sessions),
			dash(p->flows[i].rule), dash(p->flows[i].flow), dash(p->flows[i].flow));
	return n;
}

/*
 * What applying the file reaches beyond what was observed: every session
 * (an incident file names no session), and calls an operator refused.
 */
static void
report_reach(const struct audit_propose *p, const char *session)
{
	int64_t sessions = 0;
	size_t i;

	for (i = 0; i < p->n; i++) {
		const struct propose_denial *d = &p->v[i];

		if (!audit_propose_restorable(d->rule) || !d->tool_ok)
			continue;
		if (d->sessions > sessions)
			sessions = d->sessions;
		if (strcmp(d->rule, "hold_denied") == 0)
			fprintf(stderr, "airlock audit: proposed: %lld call%s of %s denied hold_denied "
				"were refused by an operator's deny or an engine stop; restored, such "
				"calls go through unasked\n", (long long)d->calls, plural(d->calls),
				d->tool);
	}
	fprintf(stderr, "airlock audit: proposed: ctl apply restores each tool on every session, "
		"those started later too, and lifts its holds there; the calls were denied in %s"
		"%lld session%s%s\n", session ? "" : "at least ", (long long)sessions,
		plural(sessions), session ? " (--session)" : "");
}

/* The file, checked by the reader `ctl apply` and `:apply` use, on stdout. */
static int
print_file(const struct audit_story_args *a, json_t *file)
{
	struct incident inc;
	struct al_err err;
	char *text;
	int rc = EXIT_ERROR;

	if (incident_from_json(file, &inc, &err) < 0)
		return cli_fail(false, "audit", "propose %s: the proposal does not read back: %s",
				a->db, err.msg);
	text = json_dumps(file, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text && puts(text) >= 0 && fflush(stdout) == 0)
		rc = EXIT_OK;
	free(text);
	return rc;
}

int
cmd_audit_propose(const struct audit_story_args *a)
{
	struct audit_propose p;
	struct al_err err;
	json_t *file;
	size_t left;
	int rc;

	if (audit_propose_read(a->db, a->since, a->session, &p, &err) < 0)
		return read_failed(a, "audit propose", &err);
	if (audit_propose_file(&p, INCIDENT_TOOLS_MAX, &file, &left) < 0) {
		audit_propose_free(&p);
		return cli_fail(false, "audit", "out of memory");
	}
	report_unexpressed(&p);
	if (left)
		fprintf(stderr, "airlock audit: not proposed: %zu more tool%s denied revoked: an "
			"incident file takes %d; narrow with --since or --session\n", left,
			left == 1 ? "" : "s", INCIDENT_TOOLS_MAX);
	if (p.truncated)
		fprintf(stderr, "airlock audit: propose %s: more than %d (rule, tool) pairs, the "
			"later ones not read; narrow with --since or --session\n", a->db,
			AUDIT_PROPOSE_MAX);
	if (file) {
		report_reach(&p, a->session);
		rc = print_file(a, file);
	}
	else {
		fprintf(stderr, "airlock audit: propose %s: nothing to propose: %s\n", a->db,
			p.n ? "no call was denied by a rule an incident file can change (revoked)"
			    : "no call was denied");
		rc = EXIT_REFUSED;
	}
	json_decref(file);
	audit_propose_free(&p);
	return rc;
}
