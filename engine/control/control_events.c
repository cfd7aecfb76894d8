/* Pending cutovers of `airlock serve`, and the supervisor's events: logged, kept, fanned out. */
#include "control_server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENTS_PER_ROUND 1024

/* ---- pending cutovers ---- */

_Static_assert(SUPERVISOR_SESSIONS_MAX <= CONTROL_SESSIONS_MAX, "an answer names every session");

/* The cutover's answer: each session's ack, or that it ended or still waits. */
static json_t *
pending_reply(const struct pending *p)
{
	struct control_cutover *a = calloc(1, sizeof *a);
	json_t *r = a ? control_ok(p->id) : NULL;
	size_t i;

	for (i = 0; r && i < p->n; i++) {
		if (p->state[i] == ACKED) {
			struct control_ack *k = &a->acks[a->n_acks++];

			snprintf(k->session, sizeof k->session, "%s", p->ids[i]);
			k->result = p->result[i];
			k->waited_us = p->waited_us[i];
		} else if (p->state[i] == ENDED)
			snprintf(a->ended[a->n_ended++], SNAP_ID_MAX, "%s", p->ids[i]);
		else
			snprintf(a->pending[a->n_pending++], SNAP_ID_MAX, "%s", p->ids[i]);
	}
	if (r) {
		a->revision = p->revision;
		a->targets = p->targets;
		a->unsaved = p->unsaved;
		snprintf(a->tool, sizeof a->tool, "%s", p->tool);
	}
	if (r && control_cutover_into(a, r) < 0)
		r = (json_decref(r), NULL);
	free(a);
	return r;
}

bool
cs_pending_done(const struct pending *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->state[i] == WAITING)
			return false;
	return true;
}

void
cs_pending_finish(struct control_server *cs, size_t k)
{
	struct pending *p = cs->pending[k];
	struct client *c = cs_client_by_serial(cs, p->client);

	if (c)
		cs_reply(cs, c, p->id, pending_reply(p));
	free(p);
	cs->pending[k] = NULL;
}

/* An ack or an end for one of the sessions a pending cutover waits on. */
static void
pending_event(struct control_server *cs, const struct supervisor_event *e)
{
	size_t k, i;

	for (k = 0; k < CONTROL_PENDING_MAX; k++) {
		struct pending *p = cs->pending[k];
		bool ack = e->kind == SUPERVISOR_EVENT_CUTOVER_ACK && p && e->revision == p->revision;

		if (!p || !(ack || e->kind == SUPERVISOR_EVENT_END))
			continue;
		for (i = 0; i < p->n; i++) {
			if (p->state[i] != WAITING || strcmp(p->ids[i], e->session) != 0)
				continue;
			p->state[i] = ack ? ACKED : ENDED;
			p->result[i] = e->result;
			p->waited_us[i] = e->waited_us;
		}
		if (cs_pending_done(p))
			cs_pending_finish(cs, k);
	}
}

void
cs_pending_expire(struct control_server *cs)
{
	int64_t t = clock_mono_ms();
	size_t k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (cs->pending[k] && (t >= cs->pending[k]->deadline_ms ||
				       !cs_client_by_serial(cs, cs->pending[k]->client)))
			cs_pending_finish(cs, k);
}

int
cs_pending_timeout(const struct control_server *cs, int timeout_ms)
{
	int64_t t = clock_mono_ms();
	size_t k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (cs->pending[k] && cs->pending[k]->deadline_ms - t < timeout_ms)
			timeout_ms = cs->pending[k]->deadline_ms <= t
				     ? 0 : (int)(cs->pending[k]->deadline_ms - t);
	return timeout_ms;
}

/* ---- events from the supervisor ---- */

/* A held call's or a quarantine's line: names, ids and fixed words, never a call's arguments. */
static void
log_hold_event(struct control_server *cs, const struct supervisor_event *e)
{
	switch (e->kind) {
	case SUPERVISOR_EVENT_HOLD_WAITING:
		cs_say(cs, "session %s hold %lld waiting: %s", e->session, (long long)e->hold,
		    e->tool);
		break;
	case SUPERVISOR_EVENT_HOLD_DECIDED:
		cs_say(cs, "session %s hold %lld %s: %s by %s via %s after %lld ms", e->session,
		    (long long)e->hold, e->reason, e->tool, e->by.user, e->by.via,
		    (long long)(e->waited_us / 1000));
		break;
	case SUPERVISOR_EVENT_QUARANTINE:
	case SUPERVISOR_EVENT_RELEASE:
		cs_say(cs, "session %s %s by %s via %s", e->session,
		    e->kind == SUPERVISOR_EVENT_RELEASE ? "released" : "quarantined", e->by.user,
		    e->by.via);
		break;
	case SUPERVISOR_EVENT_PAUSE_FAILED:
		cs_say(cs, "session %s quarantine: %s failed", e->session, e->reason);
		break;
	case SUPERVISOR_EVENT_UNPAUSED:
		cs_say(cs, "session %s quarantine: unpaused outside airlock, paused again",
		    e->session);
		break;
	default:
		break;
	}
}

/*
 * A session's end; one that is not normal says where it stopped, in its
 * row's words (fixed text, names, the daemon's message: never payload),
 * so that the journal answers "why" without a console.
 */
static void
log_end(struct control_server *cs, const struct supervisor_event *e)
{
	struct session_row row;
	const char *why = e->alert && supervisor_row(cs->o.sup, e->session, &row) == 0 ?
			  row.reason : "";

	cs_say(cs, "session %s ended %s%s%s%s%s", e->session, session_end_id(e->end),
	    e->check[0] ? ", refused by " : "", e->check, why[0] ? ": " : "", why);
}

static void
log_event(struct control_server *cs, const struct supervisor_event *e)
{
	switch (e->kind) {
	case SUPERVISOR_EVENT_END:
		log_end(cs, e);
		break;
	case SUPERVISOR_EVENT_CUTOVER:
		cs->counts.cutovers++;
		cs_say(cs, "cutover %s %s revision %lld on %ld sessions", cutover_op_id(e->op), e->tool,
		    (long long)e->revision, e->count);
		break;
	case SUPERVISOR_EVENT_CUTOVER_ACK:
		control_count_ack(&cs->counts, e->waited_us);
		break;
	case SUPERVISOR_EVENT_LEASE_FAILED:
		cs->counts.lease_failures++;
		cs_say(cs, "session %s lease failed: %s", e->session, e->reason);
		break;
	case SUPERVISOR_EVENT_AUDIT_REFUSED:	/* the first refusal: no reason, a count */
		cs_say(cs, "audit log refused %ld write%s%s%s (the first; all are counted: "
		    "airlock_audit_failures_total)", e->count, e->count == 1 ? "" : "s",
		    e->session[0] ? " of session " : "", e->session);
		break;
	case SUPERVISOR_EVENT_REAPER:
	case SUPERVISOR_EVENT_SWEEP:
	case SUPERVISOR_EVENT_ADMISSION_REFUSED:
		cs_say(cs, "%s %s%s%s", event_kind_id(e->kind), e->session, e->session[0] ? ": " : "",
		    e->reason);
		break;
	default:
		log_hold_event(cs, e);
		break;
	}
}

static void
remember(struct control_server *cs, const struct supervisor_event *e)
{
	cs->recent[cs->recent_next] = *e;
	cs->recent_next = (cs->recent_next + 1) % CONTROL_RECENT_MAX;
	if (cs->n_recent < CONTROL_RECENT_MAX)
		cs->n_recent++;
}

static void
fan_out_event(struct control_server *cs, const struct supervisor_event *e)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];

		if (c && !c->dead && c->follow)
			cs_push(cs, c, "event", control_event_json(e));
	}
}

static bool
deltas_wanted(const struct control_server *cs)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && !cs->clients[i]->dead && cs->clients[i]->snapshots &&
		    cs->clients[i]->deltas)
			return true;
	return false;
}

/*
 * A client that asked for deltas gets one when it holds the previous push;
 * any other time (its first, after a dropped frame, a delta that cannot be
 * said) the whole body.
 */
static void
push_to(struct control_server *cs, struct client *c, const char *whole, const char *delta,
	int64_t base_ms, int64_t taken_ms)
{
	bool sent;

	if (c->deltas && delta && c->base_ms == base_ms) {
		sent = cs_push_text(cs, c, "snapshot_delta", delta, strlen(delta));
		cs->counts.pushed_delta += sent;
	} else {
		sent = whole && cs_push_text(cs, c, "snapshot", whole, strlen(whole));
		cs->counts.pushed_whole += sent;
	}
	c->base_ms = sent ? taken_ms : 0;
}

static void
fan_out_snapshot(struct control_server *cs)
{
	json_t *body, *delta = NULL;
	char *text, *dtext = NULL;
	int64_t base_ms = 0;
	size_t i;
	int rc;

	if (!cs_snapshots_wanted(cs)) {
		cs->snap_due = false;	/* its reader left: nothing is due (else the loop spins) */
		return;
	}
	if (clock_mono_ms() - cs->snap_pushed_ms < SNAPSHOT_PUSH_MS) {
		cs->snap_due = true;
		return;
	}
	cs->snap_due = false;
	rc = cs_refresh(cs);
	/* Unchanged but for the live parts (uptime, lease ages): once a second. */
	if (rc < 0 || (rc == 0 && clock_mono_ms() - cs->snap_pushed_ms < SNAPSHOT_IDLE_MS))
		return;
	cs->snap_pushed_ms = clock_mono_ms();
	/* Written once, however many clients follow: its cost is the engine's, per push. */
	body = control_snapshot_json(&cs->snap);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	if (cs->pushed && body && deltas_wanted(cs)) {
		base_ms = json_integer_value(json_object_get(cs->pushed, "taken_ms"));
		delta = control_snapshot_delta(cs->pushed, body);
		dtext = delta ? json_dumps(delta, JSON_COMPACT) : NULL;
		json_decref(delta);
	}
	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];

		if (c && !c->dead && c->snapshots)
			push_to(cs, c, text, dtext, base_ms, cs->snap.taken_ms);
	}
	json_decref(cs->pushed);
	cs->pushed = text && deltas_wanted(cs) ? json_incref(body) : NULL;
	json_decref(body);
	free(dtext);
	free(text);
}

void
cs_drain_events(struct control_server *cs)
{
	struct supervisor_event ev[64];
	size_t n, i, total = 0;

	while (total < EVENTS_PER_ROUND && (n = supervisor_events(cs->o.sup, ev, 64)) > 0) {
		for (i = 0; i < n; i++) {
			log_event(cs, &ev[i]);
			remember(cs, &ev[i]);
			pending_event(cs, &ev[i]);
			fan_out_event(cs, &ev[i]);
		}
		total += n;
	}
	fan_out_snapshot(cs);
}
