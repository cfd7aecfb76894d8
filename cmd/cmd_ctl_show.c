/*
 * airlock ctl, what the engine holds now (cmd_ctl_int.h): `status` (the
 * engine, your role, revision, freeze and what stands on every session),
 * `sessions` (a line each) and `tools` (each session's tools and their
 * state). Read from a snapshot through the protocol's decoders, as the
 * console's remote link reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_ctl_int.h"
#include "supervisor.h"

/*
 * What stands on every session, for later ones too (and for the next
 * engine on the log): "label some name name …", or "label none".
 */
static void
print_standing(const char *label, const char *some, const char *none,
	       const char (*names)[SNAP_NAME_MAX], size_t n)
{
	size_t i;

	printf("%-8s %s", label, n ? some : none);
	for (i = 0; i < n; i++)
		printf(" %s", names[i]);
	putchar('\n');
}

/* The snapshot an answer holds, read as the protocol declares it; NULL: said so. */
static struct supervisor_snapshot *
snapshot_of(struct ctl *c, const json_t *r)
{
	struct supervisor_snapshot *s = calloc(1, sizeof *s);

	if (s && control_snapshot_from_json(json_object_get(r, "snapshot"), s) == 0)
		return s;
	if (s)
		supervisor_snapshot_free(s);
	free(s);
	cli_fail(c->o.json, "ctl", "%s: the engine's answer cannot be read", c->verb);
	return NULL;
}

static void
snapshot_drop(struct supervisor_snapshot *s)
{
	supervisor_snapshot_free(s);
	free(s);
}

static void
print_status(const struct control_hello_msg *h, const struct supervisor_snapshot *s)
{
	printf("engine   %s (protocol %lld)\nyou      %s (uid %lld), role %s\n", h->engine,
	       (long long)h->airlock, h->user, (long long)h->uid, control_role_name(h->role));
	printf("sessions %zu held, %zu live, %llu started\nrevision %lld\n", s->n, s->live,
	       (unsigned long long)s->started_total, (long long)s->revision);
	if (s->frozen)
		printf("frozen   yes, by %s (uid %u, %s), revision %lld\n", s->frozen_by.user,
		       (unsigned)s->frozen_by.uid, s->frozen_by.via, (long long)s->frozen_revision);
	else
		printf("frozen   no\n");
	print_standing("revoked", "on every session:", "none",
		       s->standing, s->n_standing);
	print_standing("held", "on every session:", "none",
		       s->standing_hold, s->n_standing_hold);
	print_standing("flows", "held", "none held",
		       s->standing_flow, s->n_standing_flow);
}

int
ctl_status(struct ctl *c)
{
	struct control_hello_msg h;
	struct supervisor_snapshot *s;
	json_t *snap;
	int rc = (ctl_request(c, CONTROL_OP_SNAPSHOT), ctl_call(c, 0, &snap));

	if (rc >= 0)
		return rc;
	if (c->o.json) {
		cli_print_json(c->hello);
		json_object_del(json_object_get(snap, "snapshot"), "sessions");
		rc = cli_print_json(snap);
		json_decref(snap);
		return rc;
	}
	if (control_hello_from_json(c->hello, &h) < 0) {
		json_decref(snap);
		return cli_fail(false, "ctl", "status: the engine's hello cannot be read");
	}
	s = snapshot_of(c, snap);
	json_decref(snap);
	if (!s)
		return EXIT_ERROR;
	print_status(&h, s);
	snapshot_drop(s);
	return EXIT_OK;
}

static void
print_session(const struct session_row *r)
{
	printf("%-24s %-12s %8llds %6llu %6llu %8lld  %.12s", r->id, session_state_id(r->state),
	       (long long)(r->uptime_ms / 1000), (unsigned long long)r->counters.allowed,
	       (unsigned long long)r->counters.denied, (long long)r->revision, r->container);
	/*
	 * Last, so the columns before stay as they were: a held session's
	 * pause; an ended one's end, and where a failure stopped it (the
	 * refusing check, or the step and the engine's or daemon's words).
	 */
	if (r->quarantine.on)
		printf("  quarantined (%s) by %s", r->quarantine.pause, r->quarantine.by.user);
	if (r->state == SESSION_STATE_ENDED) {
		printf("  %s", session_end_id(r->end));
		if (r->refused_check[0])
			printf(", refused by %s", r->refused_check);
		if (r->reason[0])	/* it names the step: "create: docker: …" */
			printf(": %s", r->reason);
		else if (r->failed_step[0])
			printf(" at %s", r->failed_step);
	}
	printf("\n");
}

/* "allowed (grant: 2 calls, 14m05s left)": what remains of a grant, names and numbers. */
static void
grant_left_text(const struct tool_view *t, char *buf, size_t cap)
{
	long long n = t->grant_calls, s = (t->grant_ms + 999) / 1000;
	char c[32] = "", d[32] = "";

	if (t->grant_calls >= 0)
		snprintf(c, sizeof c, "%lld call%s", n, n == 1 ? "" : "s");
	if (t->grant_ms >= 0)
		snprintf(d, sizeof d, s >= 3600 ? "%lldh%02lldm" : "%lldm%02llds",
			 s >= 3600 ? s / 3600 : s / 60, s >= 3600 ? s % 3600 / 60 : s % 60);
	snprintf(buf, cap, "allowed (grant: %s%s%s left)", c, c[0] && d[0] ? ", " : "", d);
}

static void
print_tool(const struct session_row *r, const struct tool_view *t)
{
	char granted[96];
	const char *state = !t->approved ? "not approved" : !t->allowed ? "revoked"
			  : t->held ? "held" : "allowed";

	if (t->granted && strcmp(state, "allowed") == 0) {
		grant_left_text(t, granted, sizeof granted);
		state = granted;
	}
	printf("%-24s %-24s %-14s %s\n", r->id, t->name, t->data_class, state);
}

static int
sessions(struct ctl *c, bool tools)
{
	struct supervisor_snapshot *s;
	json_t *snap;
	size_t i, k;
	int rc = (ctl_request(c, CONTROL_OP_SNAPSHOT), ctl_call(c, 0, &snap));

	if (rc >= 0)
		return rc;
	if (c->o.json) {
		rc = cli_print_json(snap);
		json_decref(snap);
		return rc;
	}
	s = snapshot_of(c, snap);
	json_decref(snap);
	if (!s)
		return EXIT_ERROR;
	if (!tools)
		printf("%-24s %-12s %9s %6s %6s %8s  %s\n", "SESSION", "STATE", "UPTIME", "ALLOW",
		       "DENY", "REVISION", "CONTAINER");
	else
		printf("%-24s %-24s %-14s %s\n", "SESSION", "TOOL", "CLASS", "STATE");
	for (i = 0; i < s->n; i++) {
		if (!tools)
			print_session(&s->rows[i]);
		for (k = 0; tools && k < s->rows[i].n_tools; k++)
			print_tool(&s->rows[i], &s->rows[i].tools[k]);
	}
	snapshot_drop(s);
	return EXIT_OK;
}

int
ctl_sessions(struct ctl *c)
{
	return sessions(c, strcmp(c->verb, "tools") == 0);
}
