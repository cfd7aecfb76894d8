#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

/* ---- the ops and their keys ---- */

static const struct {
	const char *name;
	bool changes;
} ops[CONTROL_OP_COUNT] = {
#define CONTROL_OP_ROW(e, name, changes) [CONTROL_OP_##e] = { name, changes },
	CONTROL_OPS(CONTROL_OP_ROW)
#undef CONTROL_OP_ROW
};

const char *
control_op_name(enum control_op op)
{
	return (unsigned)op < CONTROL_OP_COUNT ? ops[op].name : "unknown";
}

bool
control_op_changes(enum control_op op)
{
	return (unsigned)op < CONTROL_OP_COUNT && ops[op].changes;
}

/* The keys a request may carry besides id and op. */
enum {
	K_SESSION = 1u << 0,
	K_PATH = 1u << 1,
	K_CONFIG = 1u << 2,
	K_TOOL = 1u << 3,
	K_SESSIONS = 1u << 4,
	K_ALL = 1u << 5,
	K_WAIT = 1u << 6,
	K_FOLLOW = 1u << 7,
	K_SNAPSHOTS = 1u << 8,
	K_REFRESH = 1u << 9,
	K_RUNTIME = 1u << 10,
	K_CLIENT = 1u << 11,
	K_DELTAS = 1u << 12,
};

static const char *const key_names[] = {
	"session", "path", "config", "tool", "sessions", "all", "wait_ms",
	"follow", "snapshots", "refresh", "runtime",
	"client", "deltas",
};
#define N_KEYS (sizeof key_names / sizeof key_names[0])
#define KEYS_MAX (N_KEYS + 2)

/* What each op allows, and what it requires (one of any_of at least). */
static const struct {
	unsigned allowed, required, any_of;
} op_keys[CONTROL_OP_COUNT] = {
	[CONTROL_OP_HELLO] = { K_CLIENT, 0, 0 },
	[CONTROL_OP_DETAIL] = { K_SESSION, K_SESSION, 0 },
	[CONTROL_OP_EVENTS] = { K_FOLLOW | K_SNAPSHOTS | K_DELTAS, 0, 0 },
	[CONTROL_OP_HOST] = { K_REFRESH | K_RUNTIME, 0, 0 },
	[CONTROL_OP_START] = { K_PATH | K_CONFIG, 0, K_PATH | K_CONFIG },
	[CONTROL_OP_STOP] = { K_SESSION, K_SESSION, 0 },
	[CONTROL_OP_REVOKE] = { K_TOOL | K_SESSIONS | K_ALL | K_WAIT, K_TOOL, K_SESSIONS | K_ALL },
	[CONTROL_OP_RESTORE] = { K_TOOL | K_SESSIONS | K_ALL | K_WAIT, K_TOOL, K_SESSIONS | K_ALL },
	[CONTROL_OP_FORGET] = { K_SESSIONS, 0, 0 },
	[CONTROL_OP_FREEZE] = { K_WAIT, 0, 0 },
	[CONTROL_OP_THAW] = { K_WAIT, 0, 0 },
};

static int
key_bit(const char *key)
{
	size_t i;

	for (i = 0; i < N_KEYS; i++)
		if (strcmp(key, key_names[i]) == 0)
			return 1 << i;
	return 0;
}

/* ---- value checks ---- */

/* An identifier the engine made or the operator named: [A-Za-z0-9._:-], 1..cap-1. */
static bool
word_ok(const char *s, size_t cap)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= cap)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '.' && c != '_' && c != '-' && c != ':')
			return false;
	}
	return true;
}

static int
copy_word(const json_t *v, char *out, size_t cap)
{
	if (!json_is_string(v) || !word_ok(json_string_value(v), cap))
		return -1;
	snprintf(out, cap, "%s", json_string_value(v));
	return 0;
}

/* An absolute path without NUL (the parser refuses \u0000). */
static int
copy_path(const json_t *v, char *out, size_t cap)
{
	const char *s = json_string_value(v);

	if (!s || s[0] != '/' || json_string_length(v) >= cap || strlen(s) != json_string_length(v))
		return -1;
	memcpy(out, s, json_string_length(v) + 1);
	return 0;
}

static int
copy_bool(const json_t *v, bool *out)
{
	if (!json_is_boolean(v))
		return -1;
	*out = json_is_true(v);
	return 0;
}

static int
copy_ids(const json_t *v, struct control_request *r)
{
	size_t i;

	if (!json_is_array(v) || json_array_size(v) > CONTROL_IDS_MAX)
		return -1;
	for (i = 0; i < json_array_size(v); i++)
		if (copy_word(json_array_get(v, i), r->ids[i], SNAP_ID_MAX) < 0)
			return -1;
	r->n_ids = json_array_size(v);
	return 0;
}

static int
copy_wait(const json_t *v, int64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > CONTROL_WAIT_MAX_MS)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/* The kinds of client a hello may name: informational, the uid is the identity. */
static int
copy_client(const json_t *v, char *out, size_t cap)
{
	const char *s = json_string_value(v);

	if (!s || (strcmp(s, "ctl") != 0 && strcmp(s, "console") != 0))
		return -1;
	snprintf(out, cap, "%s", s);
	return 0;
}

/* One argument, by its bit. */
static int
take_arg(unsigned bit, const json_t *v, struct control_request *r)
{
	switch (bit) {
	case K_SESSION:
		return copy_word(v, r->session, sizeof r->session);
	case K_PATH:
		return copy_path(v, r->path, sizeof r->path);
	case K_CONFIG:
		if (!json_is_object(v))
			return -1;
		r->config = json_incref((json_t *)v);
		return 0;
	case K_TOOL:
		return copy_word(v, r->tool, sizeof r->tool);
	case K_SESSIONS:
		return copy_ids(v, r);
	case K_ALL:
		return copy_bool(v, &r->all);
	case K_WAIT:
		return copy_wait(v, &r->wait_ms);
	case K_FOLLOW:
		return copy_bool(v, &r->follow);
	case K_SNAPSHOTS:
		return copy_bool(v, &r->snapshots);
	case K_DELTAS:
		return copy_bool(v, &r->deltas);
	case K_REFRESH:
		return copy_bool(v, &r->refresh);
	case K_RUNTIME:
		return copy_word(v, r->runtime, sizeof r->runtime);
	case K_CLIENT:
		return copy_client(v, r->client, sizeof r->client);
	}
	return -1;
}

/* ---- the parser ---- */

static json_t *
load(const char *line, size_t len, const char **error)
{
	json_error_t e;
	json_t *v;

	if (len > CONTROL_LINE_MAX) {
		*error = CONTROL_E_TOO_LONG;
		return NULL;
	}
	if (memchr(line, '\0', len) || !frame_utf8_valid((const unsigned char *)line, len)) {
		*error = memchr(line, '\0', len) ? CONTROL_E_JSON : CONTROL_E_UTF8;
		return NULL;
	}
	v = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (!v)
		*error = json_error_code(&e) == json_error_duplicate_key ? CONTROL_E_DUPLICATE
		       : json_error_code(&e) == json_error_out_of_memory ? CONTROL_E_MEMORY
									  : CONTROL_E_JSON;
	else if (!json_is_object(v)) {
		*error = CONTROL_E_OBJECT;
		json_decref(v);
		v = NULL;
	}
	return v;
}

static int
read_id(const json_t *o, struct control_request *r)
{
	const json_t *id = json_object_get(o, "id");

	if (!json_is_integer(id) || json_integer_value(id) < 0 ||
	    json_integer_value(id) > CONTROL_ID_MAX)
		return -1;
	r->id = json_integer_value(id);
	return 0;
}

static int
read_op(const json_t *o, struct control_request *r)
{
	const char *name = json_string_value(json_object_get(o, "op"));
	int i;

	for (i = 0; name && i < CONTROL_OP_COUNT; i++)
		if (strcmp(name, ops[i].name) == 0) {
			r->op = (enum control_op)i;
			return 0;
		}
	return -1;
}

/* Every key known to the op and of its type; the required ones there. */
static const char *
read_args(const json_t *o, struct control_request *r)
{
	unsigned seen = 0, allowed = op_keys[r->op].allowed;
	const char *key;
	json_t *v;

	if (json_object_size(o) > KEYS_MAX)
		return CONTROL_E_KEY;
	json_object_foreach((json_t *)o, key, v) {
		unsigned bit = (unsigned)key_bit(key);

		if (strcmp(key, "id") == 0 || strcmp(key, "op") == 0)
			continue;
		if (!(bit & allowed))
			return CONTROL_E_KEY;
		if (take_arg(bit, v, r) < 0)
			return CONTROL_E_ARG;
		seen |= bit;
	}
	if ((seen & op_keys[r->op].required) != op_keys[r->op].required)
		return CONTROL_E_MISSING;
	if (op_keys[r->op].any_of && !(seen & op_keys[r->op].any_of))
		return CONTROL_E_MISSING;
	/* A cutover names its sessions (at least one) or all of them. */
	if ((r->op == CONTROL_OP_REVOKE || r->op == CONTROL_OP_RESTORE) && (seen & K_SESSIONS) &&
	    r->n_ids == 0)
		return CONTROL_E_ARG;
	/* One target only: a path or a config; named sessions or all. */
	if ((seen & (K_PATH | K_CONFIG)) == (K_PATH | K_CONFIG) ||
	    ((seen & K_SESSIONS) && r->all) || ((seen & K_ALL) && !r->all && !(seen & K_SESSIONS)))
		return CONTROL_E_ARG;
	return NULL;
}

int
control_parse(const char *line, size_t len, struct control_request *req, const char **error)
{
	json_t *o;

	memset(req, 0, sizeof *req);
	req->id = -1;
	*error = NULL;
	o = load(line, len, error);
	if (!o)
		return -1;
	if (read_id(o, req) < 0)
		*error = CONTROL_E_ID;
	else if (read_op(o, req) < 0)
		*error = json_is_string(json_object_get(o, "op")) ? CONTROL_E_OP : CONTROL_E_MISSING;
	else
		*error = read_args(o, req);
	json_decref(o);
	return *error ? -1 : 0;
}

void
control_request_free(struct control_request *req)
{
	json_decref(req->config);
	req->config = NULL;
}

/* ---- roles ---- */

const char *
control_role_name(enum control_role r)
{
	return r == CONTROL_ROLE_OPERATE ? "operate" : r == CONTROL_ROLE_VIEW ? "view" : "none";
}

static bool
member(const struct control_peer *p, struct control_group g)
{
	size_t i;

	if (!g.present)
		return false;
	if (p->gid == g.gid)
		return true;
	for (i = 0; i < p->n_groups; i++)
		if (p->groups[i] == g.gid)
			return true;
	return false;
}

enum control_role
control_role_of(const struct control_peer *p, uid_t self, struct control_group operate,
		struct control_group view)
{
	if (p->uid == 0 || p->uid == self || member(p, operate))
		return CONTROL_ROLE_OPERATE;
	return member(p, view) ? CONTROL_ROLE_VIEW : CONTROL_ROLE_NONE;
}

/* ---- building JSON, with one out-of-memory flag per object ---- */

struct jb {
	json_t *o;
	bool bad;
};

static struct jb
jb_new(void)
{
	struct jb b = { .o = json_object() };

	b.bad = !b.o;
	return b;
}

static void
put(struct jb *b, const char *key, json_t *v)
{
	if (b->bad || !v || json_object_set_new(b->o, key, v) < 0) {
		json_decref(v);
		b->bad = true;
	}
}

static json_t *
jb_done(struct jb *b)
{
	if (!b->bad)
		return b->o;
	json_decref(b->o);
	return NULL;
}

/*
 * A snapshot string, at most cap bytes. Engine strings are ASCII; a
 * daemon's message might not be valid UTF-8: such bytes become '?'.
 */
static json_t *
str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap), i;
	char buf[CHECK_VALUE_MAX > SNAP_REASON_MAX ? CHECK_VALUE_MAX : SNAP_REASON_MAX];

	if (frame_utf8_valid((const unsigned char *)s, n))
		return json_stringn(s, n);
	n = n < sizeof buf ? n : sizeof buf;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	return json_stringn(buf, n);
}

#define STR(field)	str((field), sizeof(field))

static json_t *
num(int64_t v)
{
	return json_integer(v);
}

static json_t *
unum(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

static json_t *
unums(const uint64_t *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, unum(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
nums32(const int32_t *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, num(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* ---- frames ---- */

json_t *
control_hello(const char *engine, enum control_role role, uid_t uid, const char *user)
{
	struct jb b = jb_new();

	put(&b, "airlock", num(CONTROL_VERSION));
	put(&b, "engine", str(engine, 256));
	put(&b, "role", json_string(control_role_name(role)));
	put(&b, "uid", num(uid));
	put(&b, "user", str(user, 256));
	put(&b, "deltas", json_true());	/* it pushes snapshot deltas to who asks */
	return jb_done(&b);
}

json_t *
control_bye(const char *reason)
{
	struct jb b = jb_new();

	put(&b, "airlock", num(CONTROL_VERSION));
	put(&b, "ok", json_false());
	put(&b, "error", json_string(reason));
	return jb_done(&b);
}

json_t *
control_ok(int64_t id)
{
	struct jb b = jb_new();

	put(&b, "id", id < 0 ? json_null() : num(id));
	put(&b, "ok", json_true());
	return jb_done(&b);
}

json_t *
control_error(int64_t id, const char *error)
{
	struct jb b = jb_new();

	put(&b, "id", id < 0 ? json_null() : num(id));
	put(&b, "ok", json_false());
	put(&b, "error", json_string(error));
	return jb_done(&b);
}

json_t *
control_push(uint64_t seq, uint64_t gap, const char *key, json_t *body)
{
	struct jb b = jb_new();

	put(&b, "seq", unum(seq));
	if (gap)
		put(&b, "gap", unum(gap));
	put(&b, key, body);
	return jb_done(&b);
}

char *
control_line(const json_t *v, size_t max, size_t *len)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;

	return text ? frame_line(text, max, len) : NULL;
}

/* ---- the snapshot types ---- */

static json_t *
lease_json(const struct lease_view *l)
{
	struct jb b = jb_new();

	put(&b, "armed", json_boolean(l->armed));
	put(&b, "failed", json_boolean(l->failed));
	put(&b, "late", json_boolean(l->late));
	put(&b, "reason", STR(l->reason));
	put(&b, "pulses", unum(l->pulses));
	put(&b, "acks", unum(l->acks));
	put(&b, "age_ms", num(l->age_ms));
	put(&b, "last_ack_us", num(l->last_ack_us));
	put(&b, "max_ack_us", num(l->max_ack_us));
	put(&b, "watchdog_pid", num(l->watchdog_pid));
	put(&b, "ack_us", nums32(l->ack_us, l->n_acks < SNAP_ACKS_MAX ? l->n_acks : SNAP_ACKS_MAX));
	return jb_done(&b);
}

static json_t *
counters_json(const struct gateway_counters *c)
{
	struct jb b = jb_new();

	put(&b, "calls", unum(c->calls));
	put(&b, "allowed", unum(c->allowed));
	put(&b, "denied", unum(c->denied));
	put(&b, "egress_denied", unum(c->egress_denied));
	put(&b, "upstream_errors", unum(c->upstream_errors));
	put(&b, "upstream_spawns", unum(c->upstream_spawns));
	put(&b, "non_text_items", unum(c->non_text_items));
	put(&b, "audit_failures", unum(c->audit_failures));
	put(&b, "denied_by", unums(c->denied_by, SNAP_RULES_MAX));
	return jb_done(&b);
}

static json_t *
call_json(const struct call_view *c)
{
	struct jb b = jb_new();

	put(&b, "active", json_boolean(c->active));
	if (c->active) {
		put(&b, "tool", STR(c->tool));
		put(&b, "revision", num(c->revision));
		put(&b, "age_ms", num(c->age_ms));
	}
	return jb_done(&b);
}

static json_t *
tools_json(const struct session_row *r)
{
	json_t *a = json_array();
	size_t i, n = r->n_tools < SNAP_TOOLS_MAX ? r->n_tools : SNAP_TOOLS_MAX;

	for (i = 0; a && i < n; i++) {
		struct jb b = jb_new();

		put(&b, "name", STR(r->tools[i].name));
		put(&b, "class", STR(r->tools[i].data_class));
		put(&b, "approved", json_boolean(r->tools[i].approved));
		put(&b, "allowed", json_boolean(r->tools[i].allowed));
		if (json_array_append_new(a, jb_done(&b)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static void
row_end(struct jb *b, const struct session_row *r)
{
	put(b, "end", json_string(session_end_id(r->end)));
	put(b, "end_normal", json_boolean(session_end_normal(r->end)));
	put(b, "refused_check", STR(r->refused_check));
	put(b, "failed_step", STR(r->failed_step));
	put(b, "reason", STR(r->reason));
	put(b, "exit_code", num(r->exit_code));
	put(b, "ran", json_boolean(r->started));
	put(b, "container_left", json_boolean(r->container_left));
	put(b, "oom_killed", json_boolean(r->oom_killed));
	put(b, "duration_ms", num(r->duration_ms));
}

json_t *
control_row_json(const struct session_row *r)
{
	struct jb b = jb_new();

	put(&b, "id", STR(r->id));
	put(&b, "state", json_string(session_state_id(r->state)));
	put(&b, "container", STR(r->container));
	put(&b, "image", STR(r->image));
	put(&b, "runtime", STR(r->runtime));
	put(&b, "started_ms", num(r->started_ms));
	put(&b, "uptime_ms", num(r->uptime_ms));
	put(&b, "class", STR(r->class_name));
	put(&b, "revision", num(r->revision));
	put(&b, "gate_open", json_boolean(r->gate_open));
	put(&b, "pending", num(r->pending));
	put(&b, "pending_revision", num(r->pending_revision));
	put(&b, "pending_age_ms", num(r->pending_age_ms));
	put(&b, "stdout_bytes", unum(r->stdout_bytes));
	put(&b, "stderr_bytes", unum(r->stderr_bytes));
	put(&b, "audit_failures", num(r->audit_failures));
	put(&b, "admission_first", json_string(admission_verdict_id(r->admission_first)));
	put(&b, "admission_second", json_string(admission_verdict_id(r->admission_second)));
	put(&b, "lease", lease_json(&r->lease));
	put(&b, "counters", counters_json(&r->counters));
	put(&b, "call", call_json(&r->call));
	put(&b, "tools", tools_json(r));
	put(&b, "frozen", json_boolean(r->frozen));
	if (r->state == SESSION_STATE_ENDED)
		row_end(&b, r);
	return jb_done(&b);
}

/* {"by": user, "uid": N, "via": kind}: who asked, as the audit's detail says it. */
static json_t *
author_json(const struct snap_author *a)
{
	struct jb b = jb_new();

	put(&b, "by", STR(a->user));
	put(&b, "uid", unum(a->uid));
	put(&b, "via", STR(a->via));
	return jb_done(&b);
}

static json_t *
standing_json(const struct supervisor_snapshot *s)
{
	json_t *a = json_array();
	size_t i, n = s->n_standing < SNAP_STANDING_MAX ? s->n_standing : SNAP_STANDING_MAX;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, STR(s->standing[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
standing_by_json(const struct supervisor_snapshot *s)
{
	json_t *a = json_array();
	size_t i, n = s->n_standing < SNAP_STANDING_MAX ? s->n_standing : SNAP_STANDING_MAX;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, author_json(&s->standing_by[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
standing_revision_json(const struct supervisor_snapshot *s)
{
	json_t *a = json_array();
	size_t i, n = s->n_standing < SNAP_STANDING_MAX ? s->n_standing : SNAP_STANDING_MAX;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, num(s->standing_revision[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
pool_json(const struct snap_pool *p)
{
	struct jb b = jb_new();

	put(&b, "key", STR(p->key));
	put(&b, "image", STR(p->image));
	put(&b, "runtime", STR(p->runtime));
	put(&b, "size", unum(p->size));
	put(&b, "ready", unum(p->ready));
	put(&b, "warming", unum(p->warming));
	put(&b, "claimed", unum(p->claimed));
	put(&b, "discarded", unum(p->discarded));
	put(&b, "failed", unum(p->failed));
	return jb_done(&b);
}

static json_t *
pools_json(const struct supervisor_snapshot *s)
{
	json_t *a = json_array();
	size_t i, n = s->n_pools < SNAP_POOLS_MAX ? s->n_pools : SNAP_POOLS_MAX;

	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, pool_json(&s->pools[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
rows_json(const struct supervisor_snapshot *s)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < s->n; i++)
		if (json_array_append_new(a, control_row_json(&s->rows[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *
control_snapshot_json(const struct supervisor_snapshot *s)
{
	struct jb b = jb_new();

	put(&b, "generation", unum(s->generation));
	put(&b, "taken_ms", num(s->taken_ms));
	put(&b, "revision", num(s->revision));
	put(&b, "live", unum(s->live));
	put(&b, "started_total", unum(s->started_total));
	put(&b, "forgotten_total", unum(s->forgotten_total));
	put(&b, "events_dropped", unum(s->events_dropped));
	put(&b, "alerts_dropped", unum(s->alerts_dropped));
	put(&b, "audit_backlog", unum(s->audit_backlog));
	put(&b, "audit_failures", unum(s->audit_failures));
	put(&b, "containers_left", unum(s->containers_left));
	put(&b, "standing", standing_json(s));
	put(&b, "standing_by", standing_by_json(s));
	put(&b, "standing_revision", standing_revision_json(s));
	put(&b, "frozen", json_boolean(s->frozen));
	if (s->frozen) {
		put(&b, "frozen_by", author_json(&s->frozen_by));
		put(&b, "frozen_revision", num(s->frozen_revision));
	}
	put(&b, "pools", pools_json(s));
	put(&b, "sessions", rows_json(s));
	return jb_done(&b);
}

static json_t *
item_json(const struct check_item *it)
{
	struct jb b = jb_new();

	put(&b, "id", STR(it->id));
	put(&b, "pass", json_boolean(it->pass));
	put(&b, "run", json_boolean(it->run));
	put(&b, "expected", STR(it->expected));
	put(&b, "observed", STR(it->observed));
	return jb_done(&b);
}

static json_t *
items_json(const struct check_item *items, size_t n)
{
	json_t *a = json_array();
	size_t i;

	n = n < SNAP_CHECKS_MAX ? n : SNAP_CHECKS_MAX;
	for (i = 0; a && i < n; i++)
		if (json_array_append_new(a, item_json(&items[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
report_json(const struct admission_report *r)
{
	struct jb b = jb_new();

	put(&b, "verdict", json_string(admission_verdict_id(r->verdict)));
	put(&b, "checks", items_json(r->items, r->n));
	return jb_done(&b);
}

json_t *
control_detail_json(const struct session_detail *d)
{
	struct jb b = jb_new();
	json_t *timeline = json_array();
	size_t i, n = d->n_timeline < SNAP_TIMELINE_MAX ? d->n_timeline : SNAP_TIMELINE_MAX;

	for (i = 0; timeline && i < n; i++)
		if (json_array_append_new(timeline, control_event_json(&d->timeline[i])) < 0) {
			json_decref(timeline);
			timeline = NULL;
		}
	put(&b, "session", control_row_json(&d->row));
	put(&b, "first", report_json(&d->first));
	put(&b, "second", report_json(&d->second));
	put(&b, "timeline", timeline);
	return jb_done(&b);
}

static void
cutover_fields(struct jb *b, const struct supervisor_event *e)
{
	put(b, "tool", STR(e->tool));
	put(b, "op", json_string(cutover_op_id(e->op)));
	put(b, "revision", num(e->revision));
	if (e->by.user[0])
		put(b, "by", author_json(&e->by));
	if (e->kind == SUPERVISOR_EVENT_CUTOVER)
		put(b, "count", num(e->count));
	if (e->kind != SUPERVISOR_EVENT_CUTOVER_ACK)
		return;
	put(b, "result", json_string(cutover_result_id(e->result)));
	put(b, "waited_us", num(e->waited_us));
	put(b, "reason", STR(e->reason));
}

/* The fields each kind of event gives meaning to (snapshot.h). */
static void
event_fields(struct jb *b, const struct supervisor_event *e)
{
	switch (e->kind) {
	case SUPERVISOR_EVENT_STATE:
		put(b, "state", json_string(session_state_id(e->state)));
		break;
	case SUPERVISOR_EVENT_END:
		put(b, "end", json_string(session_end_id(e->end)));
		put(b, "check", STR(e->check));
		break;
	case SUPERVISOR_EVENT_CUTOVER:
	case SUPERVISOR_EVENT_CUTOVER_ACK:
		cutover_fields(b, e);
		break;
	case SUPERVISOR_EVENT_REAPER:
	case SUPERVISOR_EVENT_SWEEP:
		put(b, "count", num(e->count));
		put(b, "reason", STR(e->reason));
		break;
	case SUPERVISOR_EVENT_ADMISSION_REFUSED:
		put(b, "check", STR(e->check));
		put(b, "reason", STR(e->reason));
		break;
	case SUPERVISOR_EVENT_LEASE_FAILED:
	case SUPERVISOR_EVENT_AUDIT_REFUSED:
		put(b, "reason", STR(e->reason));
		break;
	default:
		break;
	}
}

json_t *
control_event_json(const struct supervisor_event *e)
{
	struct jb b = jb_new();

	put(&b, "seq", unum(e->seq));
	put(&b, "wall_ms", num(e->wall_ms));
	put(&b, "kind", json_string(event_kind_id(e->kind)));
	put(&b, "alert", json_boolean(e->alert));
	if (e->session[0])
		put(&b, "session", STR(e->session));
	event_fields(&b, e);
	return jb_done(&b);
}

json_t *
control_host_json(const struct host_snapshot *h)
{
	struct jb b = jb_new();

	put(&b, "generation", unum(h->generation));
	put(&b, "running", json_boolean(h->running));
	put(&b, "passed", json_boolean(h->passed));
	put(&b, "at_ms", num(h->at_ms));
	put(&b, "endpoint", STR(h->endpoint));
	put(&b, "daemon_version", STR(h->daemon_version));
	put(&b, "runtime", STR(h->runtime));
	put(&b, "checks", items_json(h->items, h->n));
	return jb_done(&b);
}

/* ---- metrics ---- */

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

static void
metric_sessions(FILE *f, const struct supervisor_snapshot *s)
{
	size_t by_state[SESSION_STATE_COUNT] = { 0 }, by_end[SESSION_END_COUNT] = { 0 }, i;
	int k;

	for (i = 0; i < s->n; i++) {
		by_state[(unsigned)s->rows[i].state % SESSION_STATE_COUNT]++;
		if (s->rows[i].state == SESSION_STATE_ENDED)
			by_end[(unsigned)s->rows[i].end % SESSION_END_COUNT]++;
	}
	family(f, "airlock_sessions", "gauge", "Sessions the engine holds, by state.");
	for (k = 0; k < SESSION_STATE_COUNT; k++)
		fprintf(f, "airlock_sessions{state=\"%s\"} %zu\n",
			session_state_id((enum session_state)k), by_state[k]);
	family(f, "airlock_sessions_ended", "gauge",
	       "Ended sessions the engine still holds, by how they ended.");
	for (k = 1; k < SESSION_END_COUNT; k++)
		fprintf(f, "airlock_sessions_ended{end=\"%s\"} %zu\n",
			session_end_id((enum session_end)k), by_end[k]);
	family(f, "airlock_watchdog_stops", "gauge",
	       "Held sessions the watchdog or a lost lease ended (watchdog_failed).");
	fprintf(f, "airlock_watchdog_stops %zu\n", by_end[SESSION_END_WATCHDOG_FAILED]);
	family(f, "airlock_sessions_started", "counter", "Sessions started since the engine opened.");
	fprintf(f, "airlock_sessions_started_total %llu\n", (unsigned long long)s->started_total);
}

static void
metric_calls(FILE *f, const struct supervisor_snapshot *s)
{
	uint64_t allowed = 0, denied = 0, egress = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		allowed += s->rows[i].counters.allowed;
		denied += s->rows[i].counters.denied;
		egress += s->rows[i].counters.egress_denied;
	}
	family(f, "airlock_calls", "counter",
	       "Tool calls of the held sessions, by decision (egress_denied is part of denied).");
	fprintf(f, "airlock_calls_total{decision=\"allowed\"} %llu\n", (unsigned long long)allowed);
	fprintf(f, "airlock_calls_total{decision=\"denied\"} %llu\n", (unsigned long long)denied);
	fprintf(f, "airlock_calls_total{decision=\"egress_denied\"} %llu\n",
		(unsigned long long)egress);
}

static void
metric_counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "counter", help);
	fprintf(f, "%s_total %llu\n", name, (unsigned long long)v);
}

static void
metric_gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

void
control_count_ack(struct control_counts *c, int64_t waited_us)
{
	static const int64_t le[CONTROL_ACK_BUCKETS] = CONTROL_ACK_BUCKETS_US;
	size_t i;

	waited_us = waited_us < 0 ? 0 : waited_us;
	c->acks++;
	c->ack_sum_us += (uint64_t)waited_us;
	for (i = 0; i < CONTROL_ACK_BUCKETS; i++)
		c->ack_le[i] += waited_us <= le[i];
}

/* How long sessions took to acknowledge a cutover, freeze or thaw. */
static void
metric_acks(FILE *f, const struct control_counts *c)
{
	static const int64_t le[CONTROL_ACK_BUCKETS] = CONTROL_ACK_BUCKETS_US;
	size_t i;

	fprintf(f, "# TYPE airlock_cutover_ack_seconds histogram\n"
		   "# UNIT airlock_cutover_ack_seconds seconds\n"
		   "# HELP airlock_cutover_ack_seconds How long each session took to acknowledge a "
		   "revoke, restore, freeze or thaw (behind its call in flight).\n");
	for (i = 0; i < CONTROL_ACK_BUCKETS; i++)
		fprintf(f, "airlock_cutover_ack_seconds_bucket{le=\"%g\"} %llu\n", (double)le[i] / 1e6,
			(unsigned long long)c->ack_le[i]);
	fprintf(f, "airlock_cutover_ack_seconds_bucket{le=\"+Inf\"} %llu\n"
		   "airlock_cutover_ack_seconds_sum %.6f\nairlock_cutover_ack_seconds_count %llu\n",
		(unsigned long long)c->acks, (double)c->ack_sum_us / 1e6,
		(unsigned long long)c->acks);
}

char *
control_metrics_text(const struct supervisor_snapshot *s, const struct control_counts *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	metric_sessions(f, s);
	metric_calls(f, s);
	metric_counter(f, "airlock_lease_failures", "Leases that failed (LEASE_FAILED events).",
		       c->lease_failures);
	metric_counter(f, "airlock_cutovers",
		       "Revokes, restores, freezes and thaws the engine carried out.", c->cutovers);
	metric_acks(f, c);
	metric_counter(f, "airlock_audit_failures", "Audit entries the log refused.",
		       s->audit_failures);
	metric_counter(f, "airlock_events_dropped", "Engine events lost to a full queue.",
		       s->events_dropped + s->alerts_dropped);
	metric_gauge(f, "airlock_containers_left", "Ended sessions' containers not yet removed.",
		     s->containers_left);
	metric_gauge(f, "airlock_frozen", "1 while the kill switch denies every call.", s->frozen);
	metric_gauge(f, "airlock_clients", "Control clients connected.", c->clients);
	metric_counter(f, "airlock_clients_refused", "Peers refused at accept.", c->refused);
	metric_counter(f, "airlock_frames_dropped", "Pushed frames dropped for slow clients.",
		       c->dropped);
	metric_counter(f, "airlock_control_bytes_sent",
		       "Bytes written to control clients (replies and pushed frames).", c->bytes_sent);
	family(f, "airlock_snapshots_pushed", "counter",
	       "Snapshots pushed to subscribed clients, whole or as a delta on the client's last.");
	fprintf(f, "airlock_snapshots_pushed_total{form=\"whole\"} %llu\n"
		   "airlock_snapshots_pushed_total{form=\"delta\"} %llu\n",
		(unsigned long long)c->pushed_whole, (unsigned long long)c->pushed_delta);
	fprintf(f, "# TYPE airlock_engine_rss_bytes gauge\n# UNIT airlock_engine_rss_bytes bytes\n"
		   "# HELP airlock_engine_rss_bytes The engine's resident set.\n"
		   "airlock_engine_rss_bytes %llu\n# EOF\n", (unsigned long long)c->rss_bytes);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
