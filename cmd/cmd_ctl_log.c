/*
 * airlock ctl, what the engine's own audit log tells (cmd_ctl_int.h), for
 * an operator who may not read the log's file (the service's is the
 * airlock user's, 0600): `audit [--follow]`, its newest entries as
 * `airlock audit tail` prints them, and `timeline [--since TIME]
 * [--follow]`, the policy story as `airlock audit timeline` prints it.
 * Both are the view role's. The engine's answers carry names, ids,
 * counts, times and hash prefixes only, never payload.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_timeline.h"
#include "cmd_audit_lines.h"
#include "cmd_ctl_int.h"

#define CTL_AUDIT_POLL_MS	250	/* --follow: as `audit tail --follow` reads the file */
#define CTL_TIMELINE_POLL_MS	500	/* --follow: as a console's timeline view asks */
/*
 * Events held before they are printed: a change whose acks straddle two
 * answers is one line, as audit_timeline_fold looks back (4096 events).
 */
#define CTL_TIMELINE_HELD	8192

/* One request of op after the seq after (< 0: none): -1 with *r its ok answer, or the exit status. */
static int
log_call(struct ctl *c, enum control_op op, int64_t after, json_t **r)
{
	struct control_request *req = ctl_request(c, op);

	if (after >= 0)
		control_request_int(req, CONTROL_K_AFTER, after);
	return ctl_call(c, 0, r);
}

/* The answer r read (ok) or not (said so): -1, or EXIT_ERROR; r freed. */
static int
decoded(struct ctl *c, json_t *r, bool ok)
{
	json_decref(r);
	return ok ? -1 : cli_fail(c->o.json, "ctl", "%s: the engine's answer cannot be read",
				  c->verb);
}

/* ---- audit ---- */

/* One audit answer, after the seq after (< 0: the newest), into *a: -1, or the exit status. */
static int
audit_answer(struct ctl *c, int64_t after, struct control_audit *a)
{
	json_t *r;
	int rc = log_call(c, CONTROL_OP_AUDIT, after, &r);

	return rc >= 0 ? rc : decoded(c, r, control_audit_from_json(r, a) == 0);
}

/*
 * The newest entries (CONTROL_AUDIT_ROWS), oldest first; with --follow,
 * each one written since, until the engine goes: read after the last
 * given, or after the log's head at the first answer when that gave
 * none. Only then is the head a cursor: a later answer holds the oldest
 * entries after the cursor, and its head may be far past them.
 */
int
ctl_audit(struct ctl *c)
{
	struct control_audit *a = calloc(1, sizeof *a);
	int64_t after = -1;
	int rc = a ? -1 : cli_fail(c->o.json, "ctl", "out of memory");

	while (rc < 0 && (rc = audit_answer(c, after, a)) < 0) {
		if (after < 0)
			after = a->head;
		for (size_t i = 0; rc < 0 && i < a->n; i++) {
			if (audit_line_entry(c->o.json, &a->rows[i]) != 0)
				rc = EXIT_ERROR;
			after = a->rows[i].seq > after ? a->rows[i].seq : after;
		}
		if (rc < 0 && !c->o.n[OPT_FOLLOW])
			rc = EXIT_OK;
		else if (rc < 0 && a->n < CONTROL_AUDIT_ROWS)
			poll(NULL, 0, CTL_AUDIT_POLL_MS);
	}
	free(a);
	return rc;
}

/* ---- timeline ---- */

struct story {
	struct timeline_row *held;	/* events not printed yet, oldest first */
	size_t n;
	const char *since;		/* "" all; else events from then on (c->since) */
	bool json;
};

/* The oldest n held events printed (those from since on), the rest moved up: 0, or EXIT_ERROR. */
static int
story_print(struct story *s, size_t n)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		if (!s->since[0] || strcmp(s->held[i].time, s->since) >= 0)
			rc = audit_line_event(s->json, &s->held[i]);
	memmove(s->held, s->held + n, (s->n - n) * sizeof *s->held);
	s->n -= n;
	return rc == 0 && fflush(stdout) == 0 ? 0 : EXIT_ERROR;
}

/* An answer's events held, each a change's later acks folded into the one held: 0, or EXIT_ERROR. */
static int
story_take(struct story *s, const struct control_timeline *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (audit_timeline_fold(s->held, s->n, &t->rows[i]))
			continue;
		if (s->n == CTL_TIMELINE_HELD && story_print(s, CTL_TIMELINE_HELD / 2) != 0)
			return EXIT_ERROR;
		s->held[s->n++] = t->rows[i];
	}
	return 0;
}

/* One timeline answer, after the seq *after, into *t; *after moves on: -1, or the exit status. */
static int
timeline_answer(struct ctl *c, int64_t *after, struct control_timeline *t)
{
	json_t *r;
	int rc = log_call(c, CONTROL_OP_TIMELINE, *after, &r);

	if (rc < 0 && (rc = decoded(c, r, control_timeline_from_json(r, t) == 0)) < 0)
		*after = t->next;
	return rc;
}

/*
 * The story from the log's start, read answer by answer (each goes
 * through a bounded part of the log) and printed once read to its end;
 * with --follow, then each event as it comes (a change's later acks as a
 * line of their own), asked for as often as a console does.
 */
int
ctl_timeline(struct ctl *c)
{
	struct story s = { .held = calloc(CTL_TIMELINE_HELD, sizeof *s.held),
			   .since = c->since, .json = c->o.json };
	struct control_timeline *t = calloc(1, sizeof *t);
	int64_t after = 0;
	int rc = s.held && t ? -1 : cli_fail(c->o.json, "ctl", "out of memory");

	do {
		if (rc < 0 && (rc = timeline_answer(c, &after, t)) < 0 && story_take(&s, t) != 0)
			rc = EXIT_ERROR;
	} while (rc < 0 && t->more);
	if (rc < 0 && story_print(&s, s.n) != 0)
		rc = EXIT_ERROR;
	while (rc < 0 && c->o.n[OPT_FOLLOW]) {
		if ((rc = timeline_answer(c, &after, t)) < 0 &&
		    (story_take(&s, t) != 0 || story_print(&s, s.n) != 0))
			rc = EXIT_ERROR;
		if (rc < 0 && !t->more)
			poll(NULL, 0, CTL_TIMELINE_POLL_MS);
	}
	free(s.held);
	free(t);
	return rc < 0 ? EXIT_OK : rc;
}
