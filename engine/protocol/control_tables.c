/*
 * Every structure that crosses the control socket, declared once: one field
 * table each, in wire order. control_codec.c walks them both ways, so what
 * the engine writes and what a console reads back cannot disagree. Every
 * field here is a snapshot.h field: no payload crosses the socket.
 */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_codec.h"

/* A field, plainly; one with flags, a table or words, and a condition. */
#define MEMBER(T, m)	(((struct T *)0)->m)
#define F(T, key, type_, m) \
	{ .name = key, .type = CODEC_##type_, .off = offsetof(struct T, m), \
	  .size = sizeof MEMBER(T, m) }
#define FX(T, key, type_, m, flags_, aux_, when_) \
	{ .name = key, .type = CODEC_##type_, .off = offsetof(struct T, m), \
	  .size = sizeof MEMBER(T, m), .flags = flags_, .aux = aux_, .when = when_ }
/* An array of elem, as many as count says (within its bound). */
#define FA(T, key, elem_, m, count, flags_, aux_) \
	{ .name = key, .type = CODEC_ARR, .elem = CODEC_##elem_, .off = offsetof(struct T, m), \
	  .size = sizeof MEMBER(T, m)[0], .flags = flags_, .aux = aux_, \
	  .count_off = offsetof(struct T, count), \
	  .max = sizeof MEMBER(T, m) / sizeof MEMBER(T, m)[0] }
/* A C string the struct points to, unbounded (fixed texts). */
#define FC(T, key, m) { .name = key, .type = CODEC_CSTR, .off = offsetof(struct T, m) }
/* An array always full. */
#define FF(T, key, elem_, m) \
	{ .name = key, .type = CODEC_ARR, .elem = CODEC_##elem_, .off = offsetof(struct T, m), \
	  .size = sizeof MEMBER(T, m)[0], .count_off = CODEC_FIXED, \
	  .max = sizeof MEMBER(T, m) / sizeof MEMBER(T, m)[0] }

/* ---- the words ---- */

/* An enum's words on the wire: its id function, taking the codec's int. */
#define WORDS(name, id_fn, E, count) \
	static const char *name##_word(int i) \
	{ \
		return id_fn((enum E)i); \
	} \
	static const struct codec_words name = { name##_word, count }

WORDS(states, session_state_id, session_state, SESSION_STATE_COUNT);
WORDS(ends, session_end_id, session_end, SESSION_END_COUNT);
WORDS(verdicts, admission_verdict_id, admission_verdict, ADMISSION_REFUSED + 1);
WORDS(kinds, event_kind_id, event_kind, SUPERVISOR_EVENT_KIND_COUNT);
WORDS(cutover_ops, cutover_op_id, cutover_op, CUTOVER_HOLD + 1);
WORDS(results, cutover_result_id, cutover_result, CUTOVER_REJECTED + 1);
WORDS(roles, control_role_name, control_role, CONTROL_ROLE_OPERATE + 1);

static const char *
tone_word(int i)
{
	static const char *const names[] = { "plain", "good", "bad", "alert" };

	return (unsigned)i < 4 ? names[i] : "plain";
}

static const struct codec_words tones = { tone_word, AUDIT_TONE_ALERT + 1 };

/* ---- a session row ---- */

/* {"by": user, "uid": N, "via": kind}: who asked, as the audit's detail says it. */
static const struct codec_field author_fields[] = {
	F(snap_author, "by", STR, user),
	F(snap_author, "uid", U32, uid),
	F(snap_author, "via", STR, via),
};
static const struct codec_table author_table = CODEC_TABLE(snap_author, author_fields);

/* A session's quarantine (quarantine.h): since when, by whom, how its pause went. */
static const struct codec_field quarantine_fields[] = {
	F(quarantine_view, "on", BOOL, on),
	F(quarantine_view, "since_ms", I64, since_ms),
	FX(quarantine_view, "by", OBJ, by, 0, &author_table, NULL),
	F(quarantine_view, "pause", STR, pause),
};
static const struct codec_table quarantine_table = CODEC_TABLE(quarantine_view, quarantine_fields);

static const struct codec_field lease_fields[] = {
	F(lease_view, "armed", BOOL, armed),
	F(lease_view, "failed", BOOL, failed),
	F(lease_view, "late", BOOL, late),
	F(lease_view, "reason", STR, reason),
	F(lease_view, "pulses", U64, pulses),
	F(lease_view, "acks", U64, acks),
	F(lease_view, "age_ms", I64, age_ms),
	F(lease_view, "last_ack_us", I64, last_ack_us),
	F(lease_view, "max_ack_us", I64, max_ack_us),
	F(lease_view, "watchdog_pid", LONG, watchdog_pid),
	FA(lease_view, "ack_us", I32, ack_us, n_acks, 0, NULL),
};
static const struct codec_table lease_table = CODEC_TABLE(lease_view, lease_fields);

static const struct codec_field counters_fields[] = {
	F(gateway_counters, "calls", U64, calls),
	F(gateway_counters, "allowed", U64, allowed),
	F(gateway_counters, "denied", U64, denied),
	F(gateway_counters, "egress_denied", U64, egress_denied),
	F(gateway_counters, "upstream_errors", U64, upstream_errors),
	F(gateway_counters, "upstream_spawns", U64, upstream_spawns),
	F(gateway_counters, "non_text_items", U64, non_text_items),
	F(gateway_counters, "audit_failures", U64, audit_failures),
	FF(gateway_counters, "denied_by", U64, denied_by),
};
static const struct codec_table counters_table = CODEC_TABLE(gateway_counters, counters_fields);

/* The rest of a call means something only while it is in flight. */
static bool
call_active(const void *c)
{
	return ((const struct call_view *)c)->active;
}

static const struct codec_field call_fields[] = {
	F(call_view, "active", BOOL, active),
	FX(call_view, "tool", STR, tool, CODEC_GATED, NULL, call_active),
	FX(call_view, "revision", I64, revision, CODEC_GATED, NULL, call_active),
	FX(call_view, "age_ms", I64, age_ms, CODEC_GATED, NULL, call_active),
};
static const struct codec_table call_table = CODEC_TABLE(call_view, call_fields);

/* What remains of a grant means something only while the tool is under one. */
static bool
tool_granted(const void *t)
{
	return ((const struct tool_view *)t)->granted;
}

static const struct codec_field tool_fields[] = {
	F(tool_view, "name", STR, name),
	F(tool_view, "class", STR, data_class),
	F(tool_view, "approved", BOOL, approved),
	F(tool_view, "allowed", BOOL, allowed),
	FX(tool_view, "held", BOOL, held, CODEC_NO_ZERO, NULL, NULL),
	FX(tool_view, "granted", BOOL, granted, 0, NULL, tool_granted),
	FX(tool_view, "grant_calls", I64, grant_calls, CODEC_GATED | CODEC_NULL_NEG, NULL,
	   tool_granted),
	FX(tool_view, "grant_ms", I64, grant_ms, CODEC_GATED | CODEC_NULL_NEG, NULL, tool_granted),
};
static const struct codec_table tool_table = CODEC_TABLE(tool_view, tool_fields);

/* A row's end means something once it ended. */
static bool
row_ended(const void *r)
{
	return ((const struct session_row *)r)->state == SESSION_STATE_ENDED;
}

static json_t *
end_normal(const void *r)
{
	return json_boolean(session_end_normal(((const struct session_row *)r)->end));
}

static const struct codec_hook end_normal_hook = { end_normal, NULL };

#define R(key, type_, m)	F(session_row, key, type_, m)
#define RE(key, type_, m, aux)	FX(session_row, key, type_, m, CODEC_GATED, aux, row_ended)
static const struct codec_field row_fields[] = {
	FX(session_row, "id", STR, id, CODEC_REQUIRED, NULL, NULL),
	FX(session_row, "state", WORD, state, CODEC_REQUIRED, &states, NULL),
	R("container", STR, container),
	R("image", STR, image),
	R("runtime", STR, runtime),
	R("started_ms", I64, started_ms),
	R("uptime_ms", I64, uptime_ms),
	R("class", STR, class_name),
	R("revision", I64, revision),
	R("gate_open", BOOL, gate_open),
	R("pending", UINT, pending),
	R("pending_revision", I64, pending_revision),
	R("pending_age_ms", I64, pending_age_ms),
	R("flows_held", UINT, flows_held),
	R("stdout_bytes", U64, stdout_bytes),
	R("stderr_bytes", U64, stderr_bytes),
	R("audit_failures", UINT, audit_failures),
	FX(session_row, "admission_first", WORD, admission_first, 0, &verdicts, NULL),
	FX(session_row, "admission_second", WORD, admission_second, 0, &verdicts, NULL),
	FX(session_row, "lease", OBJ, lease, 0, &lease_table, NULL),
	FX(session_row, "counters", OBJ, counters, 0, &counters_table, NULL),
	FX(session_row, "call", OBJ, call, 0, &call_table, NULL),
	FA(session_row, "tools", OBJ, tools, n_tools, 0, &tool_table),
	R("frozen", BOOL, frozen),
	FX(session_row, "quarantine", OBJ, quarantine, 0, &quarantine_table, NULL),
	RE("end", WORD, end, &ends),
	FX(session_row, "end_normal", HOOK, end, CODEC_GATED, &end_normal_hook, row_ended),
	RE("refused_check", STR, refused_check, NULL),
	RE("failed_step", STR, failed_step, NULL),
	RE("reason", STR, reason, NULL),
	RE("exit_code", LONG, exit_code, NULL),
	RE("ran", BOOL, started, NULL),
	RE("container_left", BOOL, container_left, NULL),
	RE("oom_killed", BOOL, oom_killed, NULL),
	RE("duration_ms", I64, duration_ms, NULL),
};
#undef R
#undef RE
static const struct codec_table row_table = CODEC_TABLE(session_row, row_fields);

/* ---- the snapshot ---- */

static const struct codec_field pool_fields[] = {
	F(snap_pool, "key", STR, key),
	F(snap_pool, "image", STR, image),
	F(snap_pool, "runtime", STR, runtime),
	F(snap_pool, "size", U32, size),
	F(snap_pool, "ready", U32, ready),
	F(snap_pool, "warming", U32, warming),
	F(snap_pool, "claimed", U64, claimed),
	F(snap_pool, "discarded", U64, discarded),
	F(snap_pool, "failed", U64, failed),
};
static const struct codec_table pool_table = CODEC_TABLE(snap_pool, pool_fields);

static json_t *
rows_enc(const void *obj)
{
	const struct supervisor_snapshot *s = obj;
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < s->n; i++)
		if (json_array_append_new(a, codec_encode(&row_table, &s->rows[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The rows array grows as needed; a row that cannot be read is left out. */
static int
rows_dec(const json_t *a, void *obj)
{
	struct supervisor_snapshot *s = obj;
	size_t n = json_array_size(a), i;

	if (!json_is_array(a))
		return -1;
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

static const struct codec_hook rows_hook = { rows_enc, rows_dec };

static bool
snap_frozen(const void *s)
{
	return ((const struct supervisor_snapshot *)s)->frozen;
}

#define S(key, type_, m)	F(supervisor_snapshot, key, type_, m)
static const struct codec_field snapshot_fields[] = {
	S("generation", U64, generation),
	S("taken_ms", I64, taken_ms),
	S("revision", I64, revision),
	S("live", SIZE, live),
	S("started_total", U64, started_total),
	S("forgotten_total", U64, forgotten_total),
	S("events_dropped", U64, events_dropped),
	S("alerts_dropped", U64, alerts_dropped),
	S("audit_backlog", U64, audit_backlog),
	S("audit_failures", U64, audit_failures),
	S("containers_left", SIZE, containers_left),
	FA(supervisor_snapshot, "standing", STR, standing, n_standing, 0, NULL),
	FA(supervisor_snapshot, "standing_flows", STR, standing_flow, n_standing_flow, 0, NULL),
	FA(supervisor_snapshot, "standing_holds", STR, standing_hold, n_standing_hold, 0, NULL),
	FA(supervisor_snapshot, "standing_by", OBJ, standing_by, n_standing, CODEC_SHARED,
	   &author_table),
	FA(supervisor_snapshot, "standing_revision", I64, standing_revision, n_standing,
	   CODEC_SHARED, NULL),
	S("frozen", BOOL, frozen),
	FX(supervisor_snapshot, "frozen_by", OBJ, frozen_by, 0, &author_table, snap_frozen),
	FX(supervisor_snapshot, "frozen_revision", I64, frozen_revision, 0, NULL, snap_frozen),
	FA(supervisor_snapshot, "pools", OBJ, pools, n_pools, 0, &pool_table),
	FX(supervisor_snapshot, "sessions", HOOK, rows, CODEC_REQUIRED, &rows_hook, NULL),
};
#undef S
static const struct codec_table snapshot_table = CODEC_TABLE(supervisor_snapshot, snapshot_fields);

/* ---- events ---- */

#define KIND(k)	(1u << SUPERVISOR_EVENT_##k)

static bool
kind_in(const void *e, unsigned kinds_mask)
{
	return (1u << ((const struct supervisor_event *)e)->kind) & kinds_mask;
}

static bool
ev_session(const void *e)
{
	return ((const struct supervisor_event *)e)->session[0] != '\0';
}

/* Which kinds of event carry a field (snapshot.h says what it means for each). */
#define CARRIED_BY(name, kinds_mask) \
	static bool name(const void *e) \
	{ \
		return kind_in(e, kinds_mask); \
	}

CARRIED_BY(ev_state, KIND(STATE))
CARRIED_BY(ev_end, KIND(END))
CARRIED_BY(ev_check, KIND(END) | KIND(ADMISSION_REFUSED))
CARRIED_BY(ev_cutover, KIND(CUTOVER) | KIND(CUTOVER_ACK))
CARRIED_BY(ev_tool, KIND(CUTOVER) | KIND(CUTOVER_ACK) | KIND(HOLD_WAITING) | KIND(HOLD_DECIDED))
CARRIED_BY(ev_hold, KIND(HOLD_WAITING) | KIND(HOLD_DECIDED))
CARRIED_BY(ev_count, KIND(CUTOVER) | KIND(REAPER) | KIND(SWEEP))
CARRIED_BY(ev_ack, KIND(CUTOVER_ACK))
CARRIED_BY(ev_waited, KIND(CUTOVER_ACK) | KIND(HOLD_DECIDED))
CARRIED_BY(ev_reason, KIND(CUTOVER_ACK) | KIND(REAPER) | KIND(SWEEP) | KIND(ADMISSION_REFUSED) |
		      KIND(LEASE_FAILED) | KIND(AUDIT_REFUSED) | KIND(HOLD_DECIDED) |
		      KIND(PAUSE_FAILED))
#undef CARRIED_BY

/* Who asked, for the kinds someone asks for, when one is named. */
static bool
ev_by(const void *e)
{
	return kind_in(e, KIND(CUTOVER) | KIND(CUTOVER_ACK) | KIND(HOLD_DECIDED) |
			  KIND(QUARANTINE) | KIND(RELEASE)) &&
	       ((const struct supervisor_event *)e)->by.user[0];
}

bool
control_event_says_state(const struct supervisor_event *e)
{
	return ev_state(e);
}

bool
control_event_says_end(const struct supervisor_event *e)
{
	return ev_end(e);
}

bool
control_event_says_result(const struct supervisor_event *e)
{
	return ev_ack(e);
}

/* The fields each kind of event gives meaning to (snapshot.h); all are read back. */
#define E(key, type_, m, aux, when)	FX(supervisor_event, key, type_, m, 0, aux, when)
static const struct codec_field event_fields[] = {
	E("seq", U64, seq, NULL, NULL),
	E("wall_ms", I64, wall_ms, NULL, NULL),
	FX(supervisor_event, "kind", WORD, kind, CODEC_REQUIRED, &kinds, NULL),
	E("alert", BOOL, alert, NULL, NULL),
	E("session", STR, session, NULL, ev_session),
	E("state", WORD, state, &states, ev_state),
	E("end", WORD, end, &ends, ev_end),
	E("check", STR, check, NULL, ev_check),
	E("tool", STR, tool, NULL, ev_tool),
	E("op", WORD, op, &cutover_ops, ev_cutover),
	E("revision", I64, revision, NULL, ev_cutover),
	E("by", OBJ, by, &author_table, ev_by),
	E("count", LONG, count, NULL, ev_count),
	E("result", WORD, result, &results, ev_ack),
	E("waited_us", I64, waited_us, NULL, ev_waited),
	E("reason", STR, reason, NULL, ev_reason),
	E("hold", I64, hold, NULL, ev_hold),
};
#undef E
static const struct codec_table event_table = CODEC_TABLE(supervisor_event, event_fields);

/* ---- detail, host ---- */

static const struct codec_field item_fields[] = {
	F(check_item, "id", STR, id),
	F(check_item, "pass", BOOL, pass),
	F(check_item, "run", BOOL, run),
	F(check_item, "expected", STR, expected),
	F(check_item, "observed", STR, observed),
};
static const struct codec_table item_table = CODEC_TABLE(check_item, item_fields);

static const struct codec_field report_fields[] = {
	FX(admission_report, "verdict", WORD, verdict, 0, &verdicts, NULL),
	FA(admission_report, "checks", OBJ, items, n, 0, &item_table),
};
static const struct codec_table report_table = CODEC_TABLE(admission_report, report_fields);

/* The rest of an upstream's confinement exists once it started. */
static bool
upstream_started(const void *u)
{
	return ((const struct upstream_view *)u)->started;
}

#define U(key, type_, m)	F(upstream_view, key, type_, m)
#define US(key, type_, m)	FX(upstream_view, key, type_, m, CODEC_GATED, NULL, upstream_started)
static const struct codec_field upstream_fields[] = {
	U("name", STR, name),
	U("started", BOOL, started),
	U("user", STR, user),
	US("uid", U32, uid),
	US("gid", U32, gid),
	US("uid_changed", BOOL, uid_changed),
	US("landlock_abi", I32, landlock_abi),
	US("landlock_rules", U32, landlock_rules),
	U("paths_ro", U32, paths_ro),
	U("paths_rw", U32, paths_rw),
	US("seccomp", STR, seccomp),
	U("network", STR, network),
	U("isolation", STR, isolation),
	U("privileged", BOOL, privileged),
	U("unconfined_ok", BOOL, unconfined_ok),
};
#undef U
#undef US
static const struct codec_table upstream_table = CODEC_TABLE(upstream_view, upstream_fields);

static const struct codec_field detail_fields[] = {
	FX(session_detail, "session", OBJ, row, CODEC_REQUIRED, &row_table, NULL),
	FX(session_detail, "first", OBJ, first, 0, &report_table, NULL),
	FX(session_detail, "second", OBJ, second, 0, &report_table, NULL),
	FA(session_detail, "timeline", OBJ, timeline, n_timeline, 0, &event_table),
	FA(session_detail, "upstreams", OBJ, upstreams, n_upstreams, 0, &upstream_table),
};
static const struct codec_table detail_table = CODEC_TABLE(session_detail, detail_fields);

static const struct codec_field host_fields[] = {
	F(host_snapshot, "generation", U64, generation),
	F(host_snapshot, "running", BOOL, running),
	F(host_snapshot, "passed", BOOL, passed),
	F(host_snapshot, "at_ms", I64, at_ms),
	F(host_snapshot, "endpoint", STR, endpoint),
	F(host_snapshot, "daemon_version", STR, daemon_version),
	F(host_snapshot, "runtime", STR, runtime),
	FA(host_snapshot, "checks", OBJ, items, n, 0, &item_table),
};
static const struct codec_table host_table = CODEC_TABLE(host_snapshot, host_fields);

/* ---- the audit view (payload-free rows) ---- */

static const struct codec_field audit_row_fields[] = {
	F(audit_row, "seq", I64, seq),
	F(audit_row, "time", STR, time),
	F(audit_row, "session", STR, session),
	F(audit_row, "call", STR, call),
	F(audit_row, "type", STR, type),
	F(audit_row, "tool", STR, tool),
	F(audit_row, "decision", STR, decision),
	F(audit_row, "rule", STR, rule),
	F(audit_row, "revision", I64, revision),
	F(audit_row, "latency_us", I64, latency_us),
	F(audit_row, "request_hash", STR, request_hash),
	F(audit_row, "response_hash", STR, response_hash),
	F(audit_row, "entry_hash", STR, entry_hash),
	FX(audit_row, "tone", WORD, tone, 0, &tones, NULL),
	F(audit_row, "unknown_outcome", BOOL, unknown_outcome),
};
static const struct codec_table audit_row_table = CODEC_TABLE(audit_row, audit_row_fields);

static const struct codec_field audit_fields[] = {
	FA(control_audit, "rows", OBJ, rows, n, 0, &audit_row_table),
	F(control_audit, "head", I64, head),
};
static const struct codec_table audit_table = CODEC_TABLE(control_audit, audit_fields);

static const struct codec_field hold_fields[] = {
	F(hold_view, "id", I64, id),
	F(hold_view, "session", STR, session),
	F(hold_view, "tool", STR, tool),
	F(hold_view, "alias", STR, alias),
	F(hold_view, "session_class", STR, session_class),
	F(hold_view, "sink_ceiling", STR, sink_ceiling),
	F(hold_view, "request_bytes", I64, request_bytes),
	F(hold_view, "request_hash", STR, request_hash),
	F(hold_view, "since_ms", I64, since_ms),
	F(hold_view, "waited_ms", I64, waited_ms),
	F(hold_view, "earlier_calls", I64, earlier_calls),
	F(hold_view, "held_by", STR, held_by),
	F(hold_view, "declassify", BOOL, declassify),
};
static const struct codec_table hold_table = CODEC_TABLE(hold_view, hold_fields);

static const struct codec_field pending_fields[] = {
	FA(control_pending, "pending", OBJ, calls, n, 0, &hold_table),
};
static const struct codec_table pending_table = CODEC_TABLE(control_pending, pending_fields);

/* ---- the timeline view (names, ids, counts and times) ---- */

static const struct codec_field timeline_row_fields[] = {
	F(timeline_row, "seq", I64, seq),
	F(timeline_row, "time", STR, time),
	F(timeline_row, "event", STR, kind),
	F(timeline_row, "session", STR, session),
	F(timeline_row, "op", STR, op),
	F(timeline_row, "tool", STR, tool),
	F(timeline_row, "rule", STR, rule),
	F(timeline_row, "revision", I64, revision),
	F(timeline_row, "normal", BOOL, normal),
	F(timeline_row, "has_by", BOOL, has_author),
	FX(timeline_row, "by", OBJ, by, 0, &author_table, NULL),
	F(timeline_row, "applied", I64, applied),
	F(timeline_row, "not_applicable", I64, not_applicable),
	F(timeline_row, "rejected", I64, rejected),
};
static const struct codec_table timeline_row_table =
	CODEC_TABLE(timeline_row, timeline_row_fields);

static const struct codec_field timeline_fields[] = {
	FA(control_timeline, "events", OBJ, rows, n, 0, &timeline_row_table),
	F(control_timeline, "next", I64, next),
	F(control_timeline, "more", BOOL, more),
};
static const struct codec_table timeline_table = CODEC_TABLE(control_timeline, timeline_fields);

/* ---- frames ---- */

static const struct codec_field hello_fields[] = {
	F(control_hello_msg, "airlock", I64, airlock),
	F(control_hello_msg, "engine", STR, engine),
	FX(control_hello_msg, "role", WORD, role, 0, &roles, NULL),
	F(control_hello_msg, "uid", I64, uid),
	F(control_hello_msg, "user", STR, user),
	F(control_hello_msg, "deltas", BOOL, deltas),	/* it pushes snapshot deltas to who asks */
};
static const struct codec_table hello_table = CODEC_TABLE(control_hello_msg, hello_fields);

#define REPLY_ID	FX(control_reply, "id", I64, id, CODEC_NULL_NEG, NULL, NULL)
static const struct codec_field ok_fields[] = { REPLY_ID, F(control_reply, "ok", BOOL, ok) };
static bool
has_reason(const void *r)
{
	return ((const struct control_reply *)r)->reason != NULL;
}

static const struct codec_field error_fields[] = {
	REPLY_ID, F(control_reply, "ok", BOOL, ok), FC(control_reply, "error", error),
	{ .name = "reason", .type = CODEC_CSTR, .off = offsetof(struct control_reply, reason),
	  .when = has_reason },
};
static const struct codec_field bye_fields[] = {
	F(control_reply, "airlock", I64, airlock), F(control_reply, "ok", BOOL, ok),
	FC(control_reply, "error", error),
};
static const struct codec_table ok_table = CODEC_TABLE(control_reply, ok_fields);
static const struct codec_table error_table = CODEC_TABLE(control_reply, error_fields);
static const struct codec_table bye_table = CODEC_TABLE(control_reply, bye_fields);

/* ---- the answers of changes ---- */

static const struct codec_field ack_fields[] = {
	F(control_ack, "session", STR, session),
	FX(control_ack, "result", WORD, result, CODEC_REQUIRED, &results, NULL),
	F(control_ack, "waited_us", I64, waited_us),
};
static const struct codec_table ack_table = CODEC_TABLE(control_ack, ack_fields);

static const struct codec_field cutover_fields[] = {
	F(control_cutover, "revision", I64, revision),
	F(control_cutover, "targets", SIZE, targets),
	F(control_cutover, "tool", STR, tool),
	FA(control_cutover, "acks", OBJ, acks, n_acks, 0, &ack_table),
	FA(control_cutover, "pending", STR, pending, n_pending, 0, NULL),
	FA(control_cutover, "ended", STR, ended, n_ended, 0, NULL),
	F(control_cutover, "unsaved", BOOL, unsaved),
};
static const struct codec_table cutover_table = CODEC_TABLE(control_cutover, cutover_fields);

static const struct codec_field session_fields[] = { F(control_done, "session", STR, session) };
static const struct codec_field stopped_fields[] = { F(control_done, "stopped", SIZE, stopped) };
static const struct codec_field forget_fields[] = {
	FA(control_done, "forgotten", STR, ids, n_ids, 0, NULL),
	FA(control_done, "not_ended", STR, kept, n_kept, 0, NULL),
};
static const struct codec_field sessions_fields[] = {
	FA(control_done, "sessions", STR, ids, n_ids, 0, NULL),
};
static const struct codec_table session_table = CODEC_TABLE(control_done, session_fields);
static const struct codec_table stopped_table = CODEC_TABLE(control_done, stopped_fields);
static const struct codec_table forget_table = CODEC_TABLE(control_done, forget_fields);
static const struct codec_table sessions_table = CODEC_TABLE(control_done, sessions_fields);

/* Each op's answer table, NULL for an op whose answer is not a control_done. */
static const struct codec_table *
done_table(enum control_op op)
{
	switch (op) {
	case CONTROL_OP_START:
	case CONTROL_OP_STOP:
		return &session_table;
	case CONTROL_OP_STOP_ALL:
		return &stopped_table;
	case CONTROL_OP_FORGET:
		return &forget_table;
	case CONTROL_OP_QUARANTINE:
	case CONTROL_OP_RELEASE:
		return &sessions_table;
	default:
		return NULL;
	}
}

/* A pushed frame's envelope; its body goes under the key of its kind. */
static const struct codec_field push_fields[] = {
	F(control_push_msg, "seq", U64, seq),
	FX(control_push_msg, "gap", U64, gap, CODEC_NO_ZERO, NULL, NULL),
};
static const struct codec_table push_table = CODEC_TABLE(control_push_msg, push_fields);

/* ---- the public names ---- */

/* v read into obj, cleared first: 0, or -1 when v is not an object or lacks what is required. */
static int
decode(const struct codec_table *t, const json_t *v, void *obj)
{
	memset(obj, 0, t->size);
	return json_is_object(v) ? codec_decode(t, v, obj) : -1;
}

/*
 * Each message's public names, from its table: control_NAME_json (a new
 * object) or control_NAME_into (fields set into a reply), and
 * control_NAME_from_json (control.h says what each returns).
 */
#define ENCODER(name, type, table) \
	json_t * \
	control_##name##_json(const struct type *x) \
	{ \
		return codec_encode(&(table), x); \
	}
#define ENCODER_INTO(name, type, table) \
	int \
	control_##name##_into(const struct type *x, json_t *reply) \
	{ \
		return codec_encode_into(&(table), x, reply); \
	}
#define DECODER(name, type, table) \
	int \
	control_##name##_from_json(const json_t *v, struct type *x) \
	{ \
		return decode(&(table), v, x); \
	}

ENCODER(row, session_row, row_table)
ENCODER(snapshot, supervisor_snapshot, snapshot_table)
ENCODER(detail, session_detail, detail_table)
ENCODER(upstream, upstream_view, upstream_table)
ENCODER(event, supervisor_event, event_table)
ENCODER(host, host_snapshot, host_table)
ENCODER_INTO(audit, control_audit, audit_table)
ENCODER_INTO(pending, control_pending, pending_table)
ENCODER_INTO(timeline, control_timeline, timeline_table)
ENCODER_INTO(cutover, control_cutover, cutover_table)
DECODER(row, session_row, row_table)
DECODER(event, supervisor_event, event_table)
DECODER(detail, session_detail, detail_table)
DECODER(host, host_snapshot, host_table)
DECODER(hello, control_hello_msg, hello_table)
DECODER(audit, control_audit, audit_table)
DECODER(pending, control_pending, pending_table)
DECODER(timeline, control_timeline, timeline_table)
DECODER(cutover, control_cutover, cutover_table)

int
control_done_into(enum control_op op, const struct control_done *d, json_t *reply)
{
	const struct codec_table *t = done_table(op);

	return t ? codec_encode_into(t, d, reply) : -1;
}

int
control_done_from_json(enum control_op op, const json_t *v, struct control_done *d)
{
	const struct codec_table *t = done_table(op);

	if (!t) {
		memset(d, 0, sizeof *d);
		return -1;
	}
	return decode(t, v, d);
}

int
control_snapshot_from_json(const json_t *v, struct supervisor_snapshot *s)
{
	/* Checked first: a refused snapshot leaves the last one whole. */
	if (!json_is_object(v) || !json_is_array(json_object_get(v, "sessions")))
		return -1;
	return codec_decode(&snapshot_table, v, s);
}

json_t *
control_hello(const char *engine, enum control_role role, uid_t uid, const char *user)
{
	struct control_hello_msg h = { .airlock = CONTROL_VERSION, .role = role, .uid = uid,
				       .deltas = true };

	snprintf(h.engine, sizeof h.engine, "%s", engine);
	snprintf(h.user, sizeof h.user, "%s", user);
	return codec_encode(&hello_table, &h);
}

json_t *
control_bye(const char *reason)
{
	struct control_reply r = { .airlock = CONTROL_VERSION, .ok = false, .error = reason };

	return codec_encode(&bye_table, &r);
}

json_t *
control_ok(int64_t id)
{
	struct control_reply r = { .id = id, .ok = true };

	return codec_encode(&ok_table, &r);
}

json_t *
control_error(int64_t id, const char *error, const char *reason)
{
	struct control_reply r = { .id = id, .ok = false, .error = error, .reason = reason };

	return codec_encode(&error_table, &r);
}

json_t *
control_push(uint64_t seq, uint64_t gap, const char *key, json_t *body)
{
	struct control_push_msg m = { .seq = seq, .gap = gap };
	json_t *o = body ? codec_encode(&push_table, &m) : NULL;

	if (!o) {
		json_decref(body);
		return NULL;
	}
	if (json_object_set_new(o, key, body) < 0) {	/* body taken either way */
		json_decref(o);
		return NULL;
	}
	return o;
}
