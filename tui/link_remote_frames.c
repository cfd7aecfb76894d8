/*
 * What an engine sends a remote link (link_remote.c), taken on the link's
 * thread: replies, pushed events and snapshots (whole or as deltas), the
 * audit rows it was asked for. Every body is decoded by the protocol's
 * tables (engine/protocol/control_tables.c), within their bounds.
 */
#include "link_remote_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
link_remote_push_result(struct link_remote *r, const struct link_result *res)
{
	if (r->n_results == RESULTS_MAX)
		memmove(r->results, r->results + 1, --r->n_results * sizeof *res);
	r->results[r->n_results++] = *res;
}

/* An event, unless a reconnect's replay already gave it. */
static void
push_event(struct link_remote *r, const json_t *body, bool replayed)
{
	struct supervisor_event e;

	if (control_event_from_json(body, &e) < 0)
		return;
	e.replayed = replayed;
	if (e.wall_ms < r->last_wall || (e.wall_ms == r->last_wall && e.seq <= r->last_seq))
		return;
	r->last_wall = e.wall_ms;
	r->last_seq = e.seq;
	if (r->ev_n == EVENTS_MAX) {
		r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
		r->ev_n--;
		r->st.gaps++;
	}
	r->events[(r->ev_head + r->ev_n++) % EVENTS_MAX] = e;
	if (e.kind == SUPERVISOR_EVENT_HOLD_WAITING || e.kind == SUPERVISOR_EVENT_HOLD_DECIDED)
		r->holds_stale = true;	/* the held calls are asked for again (remote_pending) */
}

/* Decoded off the lock (a big engine's snapshot is not small), swapped under it. */
static void
take_snapshot(struct link_remote *r, const json_t *body)
{
	struct supervisor_snapshot t;

	if (control_snapshot_from_json(body, &r->stage) < 0)
		return;
	pthread_mutex_lock(&r->mu);
	t = r->snap;
	r->snap = r->stage;
	r->stage = t;
	r->snap_fresh = true;
	pthread_mutex_unlock(&r->mu);
}

/* A whole pushed snapshot: shown, and kept as the next delta's base. */
static void
keep_pushed(struct link_remote *r, const json_t *body)
{
	take_snapshot(r, body);
	json_decref(r->pushed);
	r->pushed = r->deltas ? json_incref((json_t *)body) : NULL;
	r->resync = false;
}

/*
 * A pushed delta onto the last pushed snapshot. One that does not apply
 * (not our base, malformed) is not shown: the base is dropped and the
 * subscription asked again, whose answer starts with a whole snapshot.
 * After MISFITS_MAX in a row the engine's deltas are not trusted again
 * on this connection: it is asked for whole snapshots only.
 */
static void
take_delta(struct link_remote *r, const json_t *delta)
{
	if (r->pushed && control_snapshot_apply(r->pushed, delta) == 0) {
		r->misfits = 0;
		take_snapshot(r, r->pushed);
		return;
	}
	json_decref(r->pushed);
	r->pushed = NULL;
	if (r->resync)		/* the deltas sent before the engine read our request */
		return;
	r->resync = true;
	if (++r->misfits >= MISFITS_MAX)
		r->deltas = false;
	pthread_mutex_lock(&r->mu);
	r->st.gaps++;
	link_remote_subscribe_events(r);
	pthread_mutex_unlock(&r->mu);
}

/* A cutover's answer into res, as control.h declares it: false when unreadable. */
static bool
cutover_read(struct link_result *res, const json_t *f)
{
	struct control_cutover *a = calloc(1, sizeof *a);
	bool read = a && control_cutover_from_json(f, a) == 0;

	if (read) {
		res->revision = a->revision;
		res->targets = a->targets;
		res->acks = a->n_acks;
		res->pending = a->n_pending;
		snprintf(res->acted, sizeof res->acted, "%s", a->tool);
	}
	free(a);
	return read;
}

/* Another change's answer (control_done) into res: false when unreadable. */
static bool
done_read(struct link_result *res, const json_t *f)
{
	enum control_op op = res->req == LINK_REQ_START ? CONTROL_OP_START
			     : res->req == LINK_REQ_STOP_ALL ? CONTROL_OP_STOP_ALL
			     : res->req == LINK_REQ_QUARANTINE ? CONTROL_OP_QUARANTINE
			     : CONTROL_OP_COUNT;
	struct control_done *d = op == CONTROL_OP_COUNT ? NULL : calloc(1, sizeof *d);
	bool read = d && control_done_from_json(op, f, d) == 0;

	if (read && op == CONTROL_OP_START)
		snprintf(res->session, sizeof res->session, "%s", d->session);
	else if (read)
		res->targets = op == CONTROL_OP_STOP_ALL ? d->stopped : d->n_ids;
	free(d);
	return read || op == CONTROL_OP_COUNT;	/* the others' answers say nothing more */
}

/* A request's reply, as the result the console shows. */
static void
reply_result(struct link_remote *r, struct link_result *res, const json_t *f)
{
	res->ok = json_is_true(json_object_get(f, "ok"));
	if (!res->ok) {
		const char *e = json_string_value(json_object_get(f, "error"));
		const char *why = json_string_value(json_object_get(f, "reason"));

		snprintf(res->error, sizeof res->error, "engine %s: %.60s%s%.400s", r->st.name,
			 e ? e : "refused", why ? ": " : "", why ? why : "");
	} else if (!(res->req == LINK_REQ_CUTOVER ? cutover_read(res, f) : done_read(res, f))) {
		res->ok = false;
		snprintf(res->error, sizeof res->error, "engine %s: its answer cannot be read",
			 r->st.name);
	}
	link_remote_push_result(r, res);
}

/*
 * An answer to one of the reads the UI follows (its name what): true when
 * the engine gave it, else why not in error.
 */
static bool
read_answered(const struct link_remote *r, const json_t *f, const char *what,
	      char error[LINK_TEXT_MAX])
{
	error[0] = '\0';
	if (json_is_true(json_object_get(f, "ok")))
		return true;
	snprintf(error, LINK_TEXT_MAX, "engine %s: %s: %.80s", r->st.name, what,
		 json_string_value(json_object_get(f, "error")) ?: "refused");
	return false;
}

/* A pending answer: the held calls waiting now, none when the engine would not list them. */
static void
take_holds(struct link_remote *r, const json_t *f)
{
	r->holds_asked = false;
	if (read_answered(r, f, "pending", r->holds_error))
		r->holds_have = control_pending_from_json(f, r->holds) == 0;
	if (!r->holds_have)
		r->holds->n = 0;
}

static void
take_reply(struct link_remote *r, const json_t *f)
{
	int64_t id = json_integer_value(json_object_get(f, "id"));
	struct pending p;
	size_t i;

	for (i = 0; i < r->n_pending && r->pending[i].id != id; i++)
		;
	if (i == r->n_pending)
		return;
	p = r->pending[i];
	memmove(r->pending + i, r->pending + i + 1, (--r->n_pending - i) * sizeof p);
	switch (p.kind) {
	case P_REQUEST:
		reply_result(r, &p.proto, f);
		break;
	case P_DETAIL:
		r->detail_asked = false;
		r->have_detail = json_is_true(json_object_get(f, "ok")) &&
				 control_detail_from_json(json_object_get(f, "detail"), r->detail) == 0;
		break;
	case P_HOST:
		r->host_asked = false;
		if (json_is_true(json_object_get(f, "ok")))
			control_host_from_json(json_object_get(f, "host"), &r->host);
		break;
	case P_AUDIT:
		r->audit_asked = false;
		if (read_answered(r, f, "audit", r->audit_error))
			r->audit_new = control_audit_from_json(f, r->audit) == 0;
		break;
	case P_TIMELINE:
		r->timeline_asked = false;
		if (read_answered(r, f, "timeline", r->timeline_error))
			r->timeline_new = control_timeline_from_json(f, r->timeline) == 0;
		break;
	case P_HOLDS:
		take_holds(r, f);
		break;
	case P_QUIET: {
		const json_t *ev = json_object_get(f, "events"), *e;
		size_t k;

		json_array_foreach(ev, k, e)
			push_event(r, e, true);
		break;
	}
	}
}

/* One line from the engine. -1: it said goodbye. */
int
link_remote_take_frame(struct link_remote *r, const char *line, size_t len)
{
	json_t *f = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const json_t *body = json_object_get(f, "snapshot");
	bool pushed = json_object_get(f, "seq") != NULL;
	int rc = 0;

	if (!json_is_object(f)) {
		json_decref(f);
		return 0;
	}
	if (body && pushed)
		keep_pushed(r, body);
	else if (body && json_object_get(f, "id"))
		take_snapshot(r, body);
	else if (pushed && (body = json_object_get(f, "snapshot_delta")))
		take_delta(r, body);
	pthread_mutex_lock(&r->mu);
	if (json_integer_value(json_object_get(f, "gap")) > 0) {
		r->st.gaps += (uint64_t)json_integer_value(json_object_get(f, "gap"));
		r->holds_stale = true;	/* a hold event may be among those lost */
	}
	if (pushed && (body = json_object_get(f, "event")))
		push_event(r, body, false);
	else if (!pushed && json_object_get(f, "id"))
		take_reply(r, f);
	else if (!pushed && json_is_false(json_object_get(f, "ok"))) {
		snprintf(r->st.why, sizeof r->st.why, "the engine closed: %.100s",
			 json_string_value(json_object_get(f, "error")) ?: "no reason");
		rc = -1;
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(f);
	link_remote_wake_ui(r);
	return rc;
}

