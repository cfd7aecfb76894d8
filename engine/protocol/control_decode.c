/*
 * The control protocol read back: the JSON that control.c writes for the
 * snapshot.h types, turned into those types again (a remote console's
 * engine link). The other end may be any engine, of any version, or a
 * broken one: every string is copied within its field's bound, every
 * array within its table's, every word looked up in its table (an unknown
 * one is refused, never guessed), and a missing field stays zero. Pure
 * code: no sockets, no threads; the control fuzzer drives it too.
 */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fields ---- */

/* Cut within cap, never inside a UTF-8 sequence: what is kept is still text. */
static void
get_str(const json_t *o, const char *key, char *out, size_t cap)
{
	const char *s = json_string_value(json_object_get(o, key));
	size_t n = s ? strlen(s) : 0;

	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s ? s : "", n);
	out[n] = '\0';
}

#define GET_STR(o, key, field)	get_str((o), (key), (field), sizeof(field))

static int64_t
get_num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static uint64_t
get_unum(const json_t *o, const char *key)
{
	int64_t v = get_num(o, key);

	return v < 0 ? 0 : (uint64_t)v;
}

static bool
get_bool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* The index of the word under key in table[0..n), or -1 (missing or unknown). */
static int
get_word(const json_t *o, const char *key, const char *(*name)(int), int n)
{
	const char *s = json_string_value(json_object_get(o, key));
	int i;

	for (i = 0; s && i < n; i++)
		if (strcmp(name(i), s) == 0)
			return i;
	return -1;
}

static const char *
state_name(int i)
{
	return session_state_id((enum session_state)i);
}

static const char *
end_name(int i)
{
	return session_end_id((enum session_end)i);
}

static const char *
verdict_name(int i)
{
	return admission_verdict_id((enum admission_verdict)i);
}

static const char *
kind_name(int i)
{
	return event_kind_id((enum event_kind)i);
}

static const char *
op_name(int i)
{
	return cutover_op_id((enum cutover_op)i);
}

static const char *
result_name(int i)
{
	return cutover_result_id((enum cutover_result)i);
}

static enum admission_verdict
get_verdict(const json_t *o, const char *key)
{
	int v = get_word(o, key, verdict_name, ADMISSION_REFUSED + 1);

	return v < 0 ? ADMISSION_NOT_RUN : (enum admission_verdict)v;
}

/* ---- a session row ---- */

static void
lease_from(const json_t *o, struct lease_view *l)
{
	const json_t *acks = json_object_get(o, "ack_us");
	size_t i;

	l->armed = get_bool(o, "armed");
	l->failed = get_bool(o, "failed");
	l->late = get_bool(o, "late");
	GET_STR(o, "reason", l->reason);
	l->pulses = get_unum(o, "pulses");
	l->acks = get_unum(o, "acks");
	l->age_ms = get_num(o, "age_ms");
	l->last_ack_us = get_num(o, "last_ack_us");
	l->max_ack_us = get_num(o, "max_ack_us");
	l->watchdog_pid = (long)get_num(o, "watchdog_pid");
	for (i = 0; i < json_array_size(acks) && i < SNAP_ACKS_MAX; i++)
		l->ack_us[i] = (int32_t)json_integer_value(json_array_get(acks, i));
	l->n_acks = i;
}

static void
counters_from(const json_t *o, struct gateway_counters *c)
{
	const json_t *by = json_object_get(o, "denied_by");
	size_t i;

	c->calls = get_unum(o, "calls");
	c->allowed = get_unum(o, "allowed");
	c->denied = get_unum(o, "denied");
	c->egress_denied = get_unum(o, "egress_denied");
	c->upstream_errors = get_unum(o, "upstream_errors");
	c->upstream_spawns = get_unum(o, "upstream_spawns");
	c->non_text_items = get_unum(o, "non_text_items");
	c->audit_failures = get_unum(o, "audit_failures");
	for (i = 0; i < json_array_size(by) && i < SNAP_RULES_MAX; i++) {
		json_int_t v = json_integer_value(json_array_get(by, i));

		c->denied_by[i] = v < 0 ? 0 : (uint64_t)v;
	}
}

static void
call_from(const json_t *o, struct call_view *c)
{
	c->active = get_bool(o, "active");
	if (!c->active)
		return;		/* the rest means something only while a call is in flight */
	GET_STR(o, "tool", c->tool);
	c->revision = get_num(o, "revision");
	c->age_ms = get_num(o, "age_ms");
}

static void
tools_from(const json_t *a, struct session_row *r)
{
	size_t i;

	for (i = 0; i < json_array_size(a) && i < SNAP_TOOLS_MAX; i++) {
		const json_t *t = json_array_get(a, i);
		struct tool_view *v = &r->tools[i];

		GET_STR(t, "name", v->name);
		GET_STR(t, "class", v->data_class);
		v->approved = get_bool(t, "approved");
		v->allowed = get_bool(t, "allowed");
	}
	r->n_tools = i;
}

int
control_row_from_json(const json_t *o, struct session_row *r)
{
	int state = get_word(o, "state", state_name, SESSION_STATE_COUNT);
	int end = get_word(o, "end", end_name, SESSION_END_COUNT);

	memset(r, 0, sizeof *r);
	if (!json_is_object(o) || state < 0)
		return -1;
	GET_STR(o, "id", r->id);
	if (!r->id[0])
		return -1;
	r->state = (enum session_state)state;
	GET_STR(o, "container", r->container);
	GET_STR(o, "image", r->image);
	GET_STR(o, "runtime", r->runtime);
	r->started_ms = get_num(o, "started_ms");
	r->uptime_ms = get_num(o, "uptime_ms");
	GET_STR(o, "class", r->class_name);
	r->revision = get_num(o, "revision");
	r->gate_open = get_bool(o, "gate_open");
	r->frozen = get_bool(o, "frozen");
	r->pending = (unsigned)get_unum(o, "pending");
	r->pending_revision = get_num(o, "pending_revision");
	r->pending_age_ms = get_num(o, "pending_age_ms");
	r->stdout_bytes = get_unum(o, "stdout_bytes");
	r->stderr_bytes = get_unum(o, "stderr_bytes");
	r->audit_failures = (unsigned)get_unum(o, "audit_failures");
	r->admission_first = get_verdict(o, "admission_first");
	r->admission_second = get_verdict(o, "admission_second");
	lease_from(json_object_get(o, "lease"), &r->lease);
	counters_from(json_object_get(o, "counters"), &r->counters);
	call_from(json_object_get(o, "call"), &r->call);
	tools_from(json_object_get(o, "tools"), r);
	if (r->state != SESSION_STATE_ENDED)
		return 0;
	r->end = end < 0 ? SESSION_END_NONE : (enum session_end)end;
	GET_STR(o, "refused_check", r->refused_check);
	GET_STR(o, "failed_step", r->failed_step);
	GET_STR(o, "reason", r->reason);
	r->exit_code = (long)get_num(o, "exit_code");
	r->started = get_bool(o, "ran");
	r->container_left = get_bool(o, "container_left");
	r->oom_killed = get_bool(o, "oom_killed");
	r->duration_ms = get_num(o, "duration_ms");
	return 0;
}

/* ---- the snapshot ---- */

static void
author_from(const json_t *o, struct snap_author *a)
{
	memset(a, 0, sizeof *a);
	GET_STR(o, "by", a->user);
	a->uid = (uint32_t)get_unum(o, "uid");
	GET_STR(o, "via", a->via);
}

static void
standing_from(const json_t *o, struct supervisor_snapshot *s)
{
	const json_t *names = json_object_get(o, "standing"), *by = json_object_get(o, "standing_by");
	const json_t *revs = json_object_get(o, "standing_revision");
	size_t i;

	for (i = 0; i < json_array_size(names) && i < SNAP_STANDING_MAX; i++) {
		const char *t = json_string_value(json_array_get(names, i));

		snprintf(s->standing[i], sizeof s->standing[i], "%s", t ? t : "");
		author_from(json_array_get(by, i), &s->standing_by[i]);
		s->standing_revision[i] = json_integer_value(json_array_get(revs, i));
	}
	s->n_standing = i;
}

/* A snapshot without "pools" (an older engine) has none. */
static void
pools_from(const json_t *a, struct supervisor_snapshot *s)
{
	size_t i;

	memset(s->pools, 0, sizeof s->pools);
	for (i = 0; i < json_array_size(a) && i < SNAP_POOLS_MAX; i++) {
		const json_t *o = json_array_get(a, i);
		struct snap_pool *p = &s->pools[i];

		GET_STR(o, "key", p->key);
		GET_STR(o, "image", p->image);
		GET_STR(o, "runtime", p->runtime);
		p->size = (uint32_t)get_unum(o, "size");
		p->ready = (uint32_t)get_unum(o, "ready");
		p->warming = (uint32_t)get_unum(o, "warming");
		p->claimed = get_unum(o, "claimed");
		p->discarded = get_unum(o, "discarded");
		p->failed = get_unum(o, "failed");
	}
	s->n_pools = i;
}

static int
rows_from(const json_t *a, struct supervisor_snapshot *s)
{
	size_t n = json_array_size(a), i;

	if (n > s->cap) {
		struct session_row *rows = realloc(s->rows, n * sizeof *rows);

		if (!rows)
			return -1;
		s->rows = rows;
		s->cap = n;
	}
	s->n = 0;
	for (i = 0; i < n; i++)
		if (control_row_from_json(json_array_get(a, i), &s->rows[s->n]) == 0)
			s->n++;
	return 0;
}

int
control_snapshot_from_json(const json_t *o, struct supervisor_snapshot *s)
{
	if (!json_is_object(o) || !json_is_array(json_object_get(o, "sessions")))
		return -1;
	if (rows_from(json_object_get(o, "sessions"), s) < 0)
		return -1;
	s->generation = get_unum(o, "generation");
	s->taken_ms = get_num(o, "taken_ms");
	s->revision = get_num(o, "revision");
	s->live = (size_t)get_unum(o, "live");
	s->started_total = get_unum(o, "started_total");
	s->forgotten_total = get_unum(o, "forgotten_total");
	s->events_dropped = get_unum(o, "events_dropped");
	s->alerts_dropped = get_unum(o, "alerts_dropped");
	s->audit_backlog = get_unum(o, "audit_backlog");
	s->audit_failures = get_unum(o, "audit_failures");
	s->containers_left = (size_t)get_unum(o, "containers_left");
	standing_from(o, s);
	s->frozen = get_bool(o, "frozen");
	author_from(json_object_get(o, "frozen_by"), &s->frozen_by);
	s->frozen_revision = get_num(o, "frozen_revision");
	pools_from(json_object_get(o, "pools"), s);
	return 0;
}

/* ---- events, detail, host ---- */

int
control_event_from_json(const json_t *o, struct supervisor_event *e)
{
	int kind = get_word(o, "kind", kind_name, SUPERVISOR_EVENT_KIND_COUNT);
	int state = get_word(o, "state", state_name, SESSION_STATE_COUNT);
	int end = get_word(o, "end", end_name, SESSION_END_COUNT);
	int op = get_word(o, "op", op_name, CUTOVER_THAW + 1);
	int result = get_word(o, "result", result_name, CUTOVER_REJECTED + 1);

	memset(e, 0, sizeof *e);
	if (!json_is_object(o) || kind < 0)
		return -1;
	e->kind = (enum event_kind)kind;
	e->seq = get_unum(o, "seq");
	e->wall_ms = get_num(o, "wall_ms");
	e->alert = get_bool(o, "alert");
	GET_STR(o, "session", e->session);
	e->state = state < 0 ? SESSION_STATE_QUEUED : (enum session_state)state;
	e->end = end < 0 ? SESSION_END_NONE : (enum session_end)end;
	GET_STR(o, "check", e->check);
	GET_STR(o, "tool", e->tool);
	e->op = op < 0 ? CUTOVER_REVOKE : (enum cutover_op)op;
	e->revision = get_num(o, "revision");
	e->result = result < 0 ? CUTOVER_APPLIED : (enum cutover_result)result;
	e->waited_us = get_num(o, "waited_us");
	e->count = (long)get_num(o, "count");
	GET_STR(o, "reason", e->reason);
	author_from(json_object_get(o, "by"), &e->by);
	return 0;
}

static void
items_from(const json_t *a, struct check_item *items, size_t *n)
{
	size_t i;

	for (i = 0; i < json_array_size(a) && i < SNAP_CHECKS_MAX; i++) {
		const json_t *t = json_array_get(a, i);

		GET_STR(t, "id", items[i].id);
		GET_STR(t, "expected", items[i].expected);
		GET_STR(t, "observed", items[i].observed);
		items[i].pass = get_bool(t, "pass");
		items[i].run = get_bool(t, "run");
	}
	*n = i;
}

static void
report_from(const json_t *o, struct admission_report *r)
{
	r->verdict = get_verdict(o, "verdict");
	items_from(json_object_get(o, "checks"), r->items, &r->n);
}

int
control_detail_from_json(const json_t *o, struct session_detail *d)
{
	const json_t *timeline = json_object_get(o, "timeline");
	size_t i;

	memset(d, 0, sizeof *d);
	if (control_row_from_json(json_object_get(o, "session"), &d->row) < 0)
		return -1;
	report_from(json_object_get(o, "first"), &d->first);
	report_from(json_object_get(o, "second"), &d->second);
	for (i = 0; i < json_array_size(timeline) && d->n_timeline < SNAP_TIMELINE_MAX; i++)
		if (control_event_from_json(json_array_get(timeline, i),
					    &d->timeline[d->n_timeline]) == 0)
			d->n_timeline++;
	return 0;
}

int
control_host_from_json(const json_t *o, struct host_snapshot *h)
{
	memset(h, 0, sizeof *h);
	if (!json_is_object(o))
		return -1;
	h->generation = get_unum(o, "generation");
	h->running = get_bool(o, "running");
	h->passed = get_bool(o, "passed");
	h->at_ms = get_num(o, "at_ms");
	GET_STR(o, "endpoint", h->endpoint);
	GET_STR(o, "daemon_version", h->daemon_version);
	GET_STR(o, "runtime", h->runtime);
	items_from(json_object_get(o, "checks"), h->items, &h->n);
	return 0;
}
