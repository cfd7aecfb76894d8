#include "gateway.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#include "frame.h"
#include "ids.h"
#include "journal.h"
#include "mcp.h"
#include "mcp_uids.h"
#include "parser.h"

struct gateway {
	struct gateway_options o;
	struct journal journal;		/* o's audit log and exporter */
	const struct airlock_config *cfg;
	struct mcp_client *mcp[CONFIG_UPSTREAMS_MAX];
	struct upstream_box *box[CONFIG_UPSTREAMS_MAX];	/* container upstreams' */
	bool receipt_due[CONFIG_UPSTREAMS_MAX];	/* started; its confinement not yet audited */
	char seen[CONFIG_TOOLS_MAX][HASH_HEX_LEN + 1];	/* first definition hash seen */
	int session_class;
	struct gateway_counters n;
	struct audit_lane lane;		/* this session's queued terminal entries */
	bool lane_counted;		/* its refusal is in n.audit_failures */
	struct hash_ctx *hc;		/* request and response digests, keyed by the log */
	struct parser *parser;		/* the agent's lines are parsed there, never here */
	char fault[SNAP_REASON_MAX];	/* why the latest GW_FAULT: fixed text and names */
	uint64_t tool_calls[CONFIG_TOOLS_MAX];	/* calls of each tool so far (a held call's count) */
	struct mcp_uid uid;		/* its upstreams' own uid (mcp_uids.h); 0: none taken */
};

/* Randomness for one call, drawn at once: its call id and both entry ids. */
#define CALL_ID_BYTES	8
#define ENTRY_ID_BYTES	16
_Static_assert(2 * ENTRY_ID_BYTES + 1 == AUDIT_ENTRY_ID_MAX, "an entry id is its bytes in hex");
_Static_assert(RULE_COUNT <= SNAP_RULES_MAX, "denials by rule fit the counters");

/* One request on its way through the gateway. */
struct call {
	struct gateway *g;
	const struct catalog_tool *t;
	int tool;
	const char *alias;	/* the name the agent used */
	char id[ID_MAX];
	char dispatch_id[AUDIT_ENTRY_ID_MAX];	/* entry id of its dispatch */
	char terminal_id[AUDIT_ENTRY_ID_MAX];	/* entry id of its terminal entry */
	bool dispatched;	/* its dispatch entry is durable */
	const char *args;	/* canonical arguments JSON: hashed, then sent as is */
	size_t args_len;
	char request_hash[HASH_HEX_LEN + 1];
	char response_hash[HASH_HEX_LEN + 1];
	int class_before;
	int64_t revision;
	int64_t t0_us;		/* when the line arrived */
	struct gate_flow flow;	/* its class flow: the gate holds flows too */
	unsigned held;		/* what held it (GATE_HELD_*), at its latest entry */
	bool declassified;	/* approved past its sink ceiling (a flow hold, opted in) */
};

/*
 * HMAC under the log's payload key: a view-role reader of the hashes (ctl
 * audit, pending, OTLP) cannot test guesses of a low-entropy payload. No
 * key, no gateway: never a plain SHA-256 instead.
 */
static struct hash_ctx *
payload_hasher(struct audit *a)
{
	unsigned char key[AUDIT_KEY_LEN];
	struct hash_ctx *h = NULL;

	if (audit_payload_key(a, key) == 0)
		h = hash_ctx_new_keyed(key, sizeof key);
	explicit_bzero(key, sizeof key);
	return h;
}

int
gateway_open(const struct gateway_options *o, struct gateway **out, struct al_err *err)
{
	struct gateway *g;

	g = o->config && o->audit && o->session_id ? calloc(1, sizeof *g) : NULL;
	if (!g) {
		parser_stop(o->parser);
		return al_fail(err, o->config && o->audit && o->session_id ? "gateway: out of memory" :
			       "gateway: config, audit and session id are required");
	}
	if (!(g->hc = payload_hasher(o->audit))) {
		parser_stop(o->parser);
		free(g);
		return al_fail(err, GATEWAY_ERR_KEY);
	}
	g->parser = o->parser;
	if (!g->parser &&
	    parser_start_beside(o->exe, o->config->bounds.frame_bytes, &g->parser, err) < 0) {
		hash_ctx_free(g->hc);
		free(g);
		return GATEWAY_NO_PARSER;
	}
	g->o = *o;
	g->journal = (struct journal){ o->audit, o->otlp };
	g->cfg = o->config;
	g->session_class = o->config->initial.class;
	*out = g;
	return 0;
}

/* The client first (its stdin's EOF is the polite goodbye), then the container. */
static void
upstream_end(struct gateway *g, size_t i)
{
	mcp_stop(g->mcp[i]);
	g->mcp[i] = NULL;
	upstream_box_stop(g->box[i], NULL);
	g->box[i] = NULL;
}

int
gateway_settle(struct gateway *g)
{
	/* A failure here loses entries: verify shows their calls as unknown outcomes. */
	if (audit_lane_settle(g->o.audit, &g->lane, NULL) == 0)
		return 0;
	if (!g->lane_counted)
		g->n.audit_failures++;
	g->lane_counted = true;
	return -1;
}

void
gateway_close(struct gateway *g)
{
	size_t i;

	if (!g)
		return;
	gateway_settle(g);
	for (i = 0; i < CONFIG_UPSTREAMS_MAX; i++)
		upstream_end(g, i);
	mcp_uid_give_back(&g->uid);	/* with whatever left their process groups */
	parser_stop(g->parser);
	hash_ctx_free(g->hc);
	free(g);
}

int
gateway_session_class(const struct gateway *g)
{
	return g->session_class;
}

void
gateway_get_counters(const struct gateway *g, struct gateway_counters *out)
{
	*out = g->n;
}

size_t
gateway_upstream_stderr(const struct gateway *g)
{
	struct mcp_stats st;
	size_t i, n = 0;

	for (i = 0; i < CONFIG_UPSTREAMS_MAX; i++) {
		if (!g->mcp[i])
			continue;
		mcp_get_stats(g->mcp[i], &st);
		n += st.stderr_bytes;
	}
	return n;
}

/* An audit entry for this call; its decision, rule and detail vary. */
static void
call_entry(const struct call *c, struct audit_entry *e, enum audit_decision d,
	   enum policy_rule rule, const char *detail)
{
	const struct class_list *cl = &c->g->cfg->classes;
	bool dispatch = d == AUDIT_D_DISPATCH;

	*e = (struct audit_entry){
		.session_id = c->g->o.session_id,
		.call_id = c->id,
		.tool = c->t->name,
		.rule = dispatch ? NULL : policy_rule_id(rule),
		.revision = c->revision,
		.latency_us = clock_mono_us() - c->t0_us,
		.request_hash = c->request_hash,
		.response_hash = c->response_hash[0] ? c->response_hash : NULL,
		.class_before = class_name(cl, c->class_before),
		.class_after = class_name(cl, c->g->session_class),
		.detail = detail,
		.entry_id = dispatch ? c->dispatch_id : c->terminal_id,
	};
}

/*
 * Durable when this returns 0. Entries this session queued earlier are
 * ahead of it in the log's queue, so they are decided too: one of them
 * lost fails this one.
 */
static int
call_record(struct call *c, enum audit_decision d, enum policy_rule rule, const char *detail)
{
	struct audit_entry e;

	call_entry(c, &e, d, rule, detail);
	if (journal_write(&c->g->journal, NULL, d, &e, NULL) < 0 ||
	    audit_lane_failed(c->g->o.audit, &c->g->lane))
		return -1;
	return 0;
}

/*
 * A terminal entry behind a durable dispatch: queued, to ride on the next
 * commit. Anything else is written at once.
 */
static int
terminal_record(struct call *c, enum audit_decision d, enum policy_rule rule,
		const char *detail)
{
	struct audit_entry e;

	if (!c->dispatched)
		return call_record(c, d, rule, detail);
	call_entry(c, &e, d, rule, detail);
	return journal_write(&c->g->journal, &c->g->lane, d, &e, NULL);
}

/* The reply line; without one (no memory, or too long) the exchange cannot go on. */
static enum gateway_status
reply_with(struct gateway *g, bool allowed, const char *text, size_t n,
	   char **reply, size_t *reply_len, enum policy_rule *why)
{
	*reply = frame_reply(allowed, text, n, g->cfg->bounds.frame_bytes, reply_len);
	if (*reply)
		return GW_REPLY;
	*why = RULE_OUT_OF_MEMORY;
	return GW_FAULT;
}

/* The audit log refused an entry: nothing more may leave. */
static enum gateway_status
audit_fault(struct gateway *g, enum policy_rule *why)
{
	snprintf(g->fault, sizeof g->fault, "audit log: cannot append an entry");
	g->n.audit_failures++;
	g->lane_counted |= audit_lane_failed(g->o.audit, &g->lane);
	*why = RULE_AUDIT_FAILED;
	return GW_FAULT;
}

/* allowed:false with no reason; one terminal entry says why. */
static enum gateway_status
deny(struct call *c, enum policy_rule rule, enum audit_decision d,
     char **reply, size_t *reply_len, enum policy_rule *why)
{
	c->g->n.denied++;
	c->g->n.denied_by[rule]++;
	if (terminal_record(c, d, rule, NULL) < 0)
		return audit_fault(c->g, why);
	*why = rule;
	return reply_with(c->g, false, NULL, 0, reply, reply_len, why);
}

/* The exchange cannot go on: the terminal entry is written if it can be. */
static enum gateway_status
fault(struct call *c, enum policy_rule rule, enum policy_rule *why)
{
	/* Whatever the upstream seemed to do, a lost parser is why: nothing was read. */
	if (parser_lost(c->g->parser)) {
		rule = RULE_PARSER_LOST;
		snprintf(c->g->fault, sizeof c->g->fault, "the session's parser failed");
	}
	if (!c->g->fault[0])
		snprintf(c->g->fault, sizeof c->g->fault, "tool %s (upstream %s): %s",
			 c->t->name, c->t->upstream, policy_rule_id(rule));
	c->dispatched = false;		/* the session ends: no later commit to ride on */
	call_record(c, AUDIT_D_FAULT, rule, NULL);
	*why = rule;
	return GW_FAULT;
}

const char *
gateway_fault_reason(const struct gateway *g)
{
	return g->fault[0] ? g->fault : "gateway fault";
}

/*
 * At first contact every catalog tool on this upstream must be in its
 * first tools/list: a mistyped remote name is a config error, named as
 * such, not catalog_drift (which means the definition changed).
 */
static bool
catalog_listed(struct gateway *g, int upstream, struct mcp_client *m)
{
	const struct catalog_tool *t;
	char h[HASH_HEX_LEN + 1];
	size_t i;

	for (i = 0; i < g->cfg->n_tools; i++) {
		t = &g->cfg->tools[i];
		if (config_upstream_index(g->cfg, t->upstream) != upstream ||
		    mcp_tool_hash(m, t->remote, h) == 0)
			continue;
		/* each name cut so that all three fit the fault's room */
		snprintf(g->fault, sizeof g->fault, "tools.%.40s.remote: upstream %.40s lists no tool "
			 "%.64s", t->name, t->upstream, t->remote);
		return false;
	}
	return true;
}

/*
 * An admission of a container upstream's container, durable before it
 * starts (first) or before its stdio reaches the client (second): the
 * session's entry with the upstream's name and the container's id prefix.
 * A refused entry that cannot be written refuses anyway.
 */
static void
box_admission(void *ctx, const char *upstream, const char *id, const char *phase,
	      const struct check_list *l)
{
	struct gateway *g = ctx;
	const struct check_item *bad = check_list_first_failure(l);
	enum audit_decision d = check_list_passed(l) ? AUDIT_D_ADMITTED : AUDIT_D_REFUSED;
	struct audit_entry e = { .session_id = g->o.session_id, .rule = bad ? bad->id : phase };
	char detail[192];

	snprintf(detail, sizeof detail, "{\"phase\":\"%s\",\"checks\":%zu,\"refused\":%zu,"
		 "\"upstream\":\"%.64s\",\"container\":\"%.12s\"}", phase, l->n,
		 check_list_failures(l), upstream, id);
	e.detail = detail;
	if (journal_write(&g->journal, NULL, d, &e, NULL) < 0)
		g->n.audit_failures++;
}

/* Its container admitted twice, then the handshake over the relay's descriptors. */
static int
upstream_boxed(struct gateway *g, int i, const struct mcp_server_config *sc,
	       struct al_err *err)
{
	int fds[3];

	if (upstream_box_start(g->o.host, &g->cfg->upstreams[i], box_admission, g, &g->box[i],
			       fds, err) < 0)
		return -1;
	return mcp_start_fds(sc, fds[0], fds[1], fds[2], &g->mcp[i], err);
}

/* The tool's upstream, started on the first allowed call to it. */
/*
 * An upstream of the default user (named or not) runs as the session's own uid
 * (mcp_uids.h), taken at the first such start and given back at close;
 * without one it does not start.
 */
static int
session_uid(struct gateway *g, struct mcp_server_config *sc, struct al_err *err)
{
	struct al_err why;

	if ((sc->confine.user && strcmp(sc->confine.user, MCP_UIDS_OWNER) != 0) ||
	    !mcp_confine_can_change_ids())
		return 0;
	if (g->uid.uid == 0 && mcp_uid_take(&g->uid, &why) < 0)
		return al_fail(err, "upstream %s: %s", sc->name, why.msg);
	sc->confine.session_uid = g->uid.uid;
	return 0;
}

static struct mcp_client *
upstream_for(struct gateway *g, const struct catalog_tool *t)
{
	int i = config_upstream_index(g->cfg, t->upstream);
	struct mcp_server_config sc;
	struct al_err err;
	int rc;

	if (i < 0)
		return NULL;
	if (!g->mcp[i]) {
		config_upstream_mcp(g->cfg, (size_t)i, &sc);
		sc.digest = parser_mcp_digest;	/* its lines are read there, never here */
		sc.digest_ctx = g->parser;
		sc.stop = g->o.stop;
		if (g->cfg->upstreams[i].isolation == UPSTREAM_CONTAINER)
			rc = upstream_boxed(g, i, &sc, &err);
		else
			rc = session_uid(g, &sc, &err) < 0 ? -1 : mcp_start(&sc, &g->mcp[i], &err);
		if (rc == 0)
			g->n.upstream_spawns++;
		if (rc == 0 && mcp_pid(g->mcp[i]) > 0 && g->o.host && g->o.host->spawned)
			g->o.host->spawned(g->o.host->spawned_ctx, mcp_pid(g->mcp[i]));
		if (rc < 0 || !catalog_listed(g, i, g->mcp[i])) {
			/* err is fixed text, names, a check id, the daemon's message */
			if (rc < 0)
				snprintf(g->fault, sizeof g->fault, "%.190s", err.msg);
			upstream_end(g, (size_t)i);
			return NULL;
		}
		g->receipt_due[i] = true;
	}
	return g->mcp[i];
}

/* A container upstream's receipt: where it runs, never what it said. */
static json_t *
box_receipt(const struct upstream_box *b)
{
	const struct profile *p = upstream_box_profile(b);
	char id[13], image[20];

	snprintf(id, sizeof id, "%.12s", upstream_box_id(b));
	snprintf(image, sizeof image, "%.19s", p->image);
	return json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "confinement",
			 "isolation", "container", "container", id, "image", image,
			 "runtime", p->runtime, "user", p->user, "network", "none");
}

/*
 * What the upstream's process got at spawn (mcp_confinement), as the
 * detail of the first dispatch to it: names and numbers, no payload.
 * NULL when already audited (or out of memory: the call is not held up).
 */
static char *
confinement_detail(struct call *c, struct mcp_client *m)
{
	int i = config_upstream_index(c->g->cfg, c->t->upstream);
	const struct mcp_confine_receipt *r = mcp_confinement(m);
	json_t *d;
	char *text;

	if (i < 0 || !c->g->receipt_due[i])
		return NULL;
	d = c->g->box[i] ? box_receipt(c->g->box[i]) :
	    json_pack("{s:{s:s, s:s, s:I, s:I, s:b, s:b, s:I, s:i, s:I, s:s, s:s, s:b}}", "confinement",
		      "isolation", "process", "user", r->user, "uid", (json_int_t)r->uid, "gid", (json_int_t)r->gid,
		      "uid_changed", r->uid_changed, "session_uid", r->session_uid,
		      "tasks", (json_int_t)r->tasks, "landlock_abi", r->landlock_abi,
		      "landlock_rules", (json_int_t)r->landlock_rules,
		      "seccomp_sha256", r->seccomp_sha256, "network", r->network,
		      "privileged", r->privileged);
	text = d ? json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(d);
	return text;
}

/* An upstream not started: its config's plan. */
static void
plan_view(const struct upstream_config *u, struct upstream_view *out)
{
	struct mcp_confine_receipt plan;

	mcp_confine_plan(&u->confine, &plan);
	mcp_confine_view(u->name, &plan, false, u->user, out);
}

size_t
gateway_upstream_plans(const struct airlock_config *cfg, struct upstream_view *out, size_t cap)
{
	size_t i;

	for (i = 0; i < cfg->n_upstreams && i < cap; i++)
		plan_view(&cfg->upstreams[i], &out[i]);
	return i;
}

size_t
gateway_upstreams(const struct gateway *g, struct upstream_view *out, size_t cap)
{
	const struct upstream_config *u;
	size_t i;

	for (i = 0; i < g->cfg->n_upstreams && i < cap; i++) {
		u = &g->cfg->upstreams[i];
		if (g->mcp[i])
			mcp_confine_view(u->name, mcp_confinement(g->mcp[i]), true, NULL, &out[i]);
		else
			plan_view(u, &out[i]);
	}
	return i;
}

/* The tool's definition must match its pin, or the first one seen. */
static bool
definition_ok(struct call *c, struct mcp_client *m)
{
	char *seen = c->g->seen[c->tool];
	char h[HASH_HEX_LEN + 1];

	if (mcp_tool_hash(m, c->t->remote, h) < 0)
		return false;
	if (c->t->pinned)
		return strcmp(h, c->t->pin) == 0;
	if (!seen[0])
		memcpy(seen, h, sizeof h);
	return strcmp(h, seen) == 0;
}

static enum gateway_status
on_result(struct call *c, struct mcp_call_result *res, char **reply, size_t *reply_len,
	  enum policy_rule *why)
{
	struct gateway *g = c->g;
	enum policy_rule r;

	hash_ctx_hex(g->hc, res->text, res->text_len, c->response_hash);
	g->n.non_text_items += res->other_items;
	r = policy_check_response(c->t, res->text_len, g->cfg->bounds.frame_bytes);
	if (r == RULE_ALLOWED && reply_with(g, true, res->text, res->text_len,
					    reply, reply_len, why) != GW_REPLY)
		r = RULE_RESPONSE_TOO_LARGE;	/* escaping made it longer than a frame */
	if (r != RULE_ALLOWED) {
		g->n.egress_denied++;
		return deny(c, r, AUDIT_D_EGRESS_DENIED, reply, reply_len, why);
	}
	g->session_class = policy_class_after(g->session_class, c->t);
	if (terminal_record(c, AUDIT_D_ALLOWED, RULE_ALLOWED, NULL) < 0) {
		free(*reply);	/* not in the log's order: not released */
		*reply = NULL;
		return audit_fault(g, why);
	}
	g->n.allowed++;
	*why = RULE_ALLOWED;
	return GW_REPLY;
}

/* An error from the tool: allowed, answered with null; only the code is kept. */
static enum gateway_status
on_error(struct call *c, const struct mcp_call_result *res, char **reply,
	 size_t *reply_len, enum policy_rule *why)
{
	char detail[48];

	snprintf(detail, sizeof detail, "{\"code\":%ld}", res->error_code);
	c->g->n.upstream_errors++;
	c->g->n.allowed++;
	if (terminal_record(c, AUDIT_D_ERROR, RULE_UPSTREAM_ERROR, detail) < 0)
		return audit_fault(c->g, why);
	*why = RULE_UPSTREAM_ERROR;
	return reply_with(c->g, true, NULL, 0, reply, reply_len, why);
}

static enum gateway_status
dispatch(struct call *c, char **reply, size_t *reply_len, enum policy_rule *why)
{
	struct mcp_call_result res = { 0 };
	struct mcp_client *m = upstream_for(c->g, c->t);
	enum gateway_status st;
	struct al_err err;
	char *detail;
	int rc;

	if (!m)
		return fault(c, RULE_UPSTREAM_UNAVAILABLE, why);
	if (!definition_ok(c, m))	/* a parser lost while re-listing is not a drift */
		return parser_lost(c->g->parser) ? fault(c, RULE_PARSER_LOST, why) :
		       deny(c, RULE_CATALOG_DRIFT, AUDIT_D_DENIED, reply, reply_len, why);
	/* Durable before anything leaves: the upstream sees nothing unaudited. */
	detail = confinement_detail(c, m);
	rc = call_record(c, AUDIT_D_DISPATCH, RULE_ALLOWED, detail);
	free(detail);
	if (rc < 0)
		return audit_fault(c->g, why);
	c->g->receipt_due[config_upstream_index(c->g->cfg, c->t->upstream)] = false;
	c->dispatched = true;
	if (mcp_call_text(m, c->t->remote, c->args, c->args_len, 0, &res, &err) < 0) {
		snprintf(c->g->fault, sizeof c->g->fault, "%.190s", err.msg);
		return fault(c, RULE_UPSTREAM_FAULT, why);
	}
	switch (res.outcome) {
	case MCP_OK:
		st = on_result(c, &res, reply, reply_len, why);
		break;
	case MCP_TOOL_ERROR:
	case MCP_RPC_ERROR:
		st = on_error(c, &res, reply, reply_len, why);
		break;
	case MCP_TIMEOUT:
		st = fault(c, RULE_UPSTREAM_TIMEOUT, why);
		break;
	case MCP_STOPPED:
		snprintf(c->g->fault, sizeof c->g->fault, "stopped by the operator during a call of "
			 "tool %s (upstream %s)", c->t->name, c->t->upstream);
		st = fault(c, RULE_STOPPED, why);
		break;
	default:
		st = fault(c, RULE_UPSTREAM_FAULT, why);
		break;
	}
	mcp_call_result_free(&res);
	return st;
}

/*
 * Would an approval let the call past its sink ceiling? Only when a class
 * flow hold holds it, the flow is one the ceiling denies, and the
 * session's config opted in (the gate holds such a flow only then; the
 * config is asked again so that neither alone declassifies).
 */
static bool
declassifies(const struct call *c)
{
	return (c->held & GATE_HELD_FLOW) && c->flow.cls > c->flow.sink &&
	       c->g->cfg->policy.declassify_by_hold;
}

/* What the pending list shows of a held call: names, sizes, a hash; never its arguments. */
static void
held_view(const struct call *c, struct hold_view *v)
{
	const struct class_list *cl = &c->g->cfg->classes;

	memset(v, 0, sizeof *v);
	snprintf(v->session, sizeof v->session, "%s", c->g->o.session_id ? c->g->o.session_id : "");
	snprintf(v->tool, sizeof v->tool, "%s", c->t->name);
	snprintf(v->alias, sizeof v->alias, "%s", c->alias ? c->alias : "");
	snprintf(v->session_class, sizeof v->session_class, "%s",
		 class_name(cl, c->g->session_class));
	snprintf(v->sink_ceiling, sizeof v->sink_ceiling, "%s", class_name(cl, c->t->sink_ceiling));
	v->request_bytes = (int64_t)c->args_len;
	memcpy(v->request_hash, c->request_hash, sizeof c->request_hash);
	v->earlier_calls = (int64_t)c->g->tool_calls[c->tool];
	snprintf(v->held_by, sizeof v->held_by, "%s", c->held == GATE_HELD_FLOW ? "flow"
		 : c->held == GATE_HELD_TOOL ? "tool" : "both");
	v->declassify = declassifies(c);
}

/* A re-check that finds the tool held again waits again, at most this often. */
#define HOLD_ROUNDS_MAX	8

/*
 * The gate said held: wait for the operator (the gate is not busy
 * meanwhile), then enter it again: waived after an approval, as any call
 * after a change under the wait. The gate's answer, or the hold's denial.
 */
static enum policy_rule
held(struct call *c)
{
	const struct gateway_hold *h = c->g->o.hold;
	struct hold_view v;
	enum policy_rule r = RULE_HOLD_DENIED;
	int round;

	for (round = 0; h && h->wait && r == RULE_HOLD_DENIED && round < HOLD_ROUNDS_MAX; round++) {
		held_view(c, &v);
		switch (h->wait(h->ctx, &v)) {
		case GW_HOLD_APPROVED:
			/* Declassified only if its flow is held still: a restore meanwhile ends it. */
			r = gate_begin_flow(c->g->o.gate, c->tool, &c->flow, true, &c->revision,
					    &c->held);
			c->declassified = r == RULE_ALLOWED && declassifies(c);
			return r;
		case GW_HOLD_RECHECK:
			r = gate_begin_flow(c->g->o.gate, c->tool, &c->flow, false, &c->revision,
					    &c->held);
			break;
		case GW_HOLD_TIMEOUT:
			return RULE_HOLD_TIMEOUT;
		case GW_HOLD_DENIED:
			return RULE_HOLD_DENIED;
		}
	}
	return r;
}

/*
 * The gate first (revoked, closed, a held tool or class flow), then the
 * sink ceiling, skipped only for a call an operator approved past it (a
 * declassifying flow hold, opted in); the gate stays busy until the
 * upstream answered, so an update waits for this call.
 */
static enum gateway_status
decide(struct call *c, char **reply, size_t *reply_len, enum policy_rule *why)
{
	struct gateway *g = c->g;
	enum gateway_status st;
	enum policy_rule r;

	if (c->tool >= 0 && c->tool < SNAP_TOOLS_MAX)
		g->n.last_call_ms[c->tool] = clock_mono_ms();
	if (g->o.gate) {
		c->flow = (struct gate_flow){ c->class_before > g->session_class ? c->class_before
						  : g->session_class, c->t->sink_ceiling };
		r = gate_begin_flow(g->o.gate, c->tool, &c->flow, false, &c->revision, &c->held);
		if (r == RULE_HOLD_DENIED)
			r = held(c);
		g->tool_calls[c->tool]++;
		if (r != RULE_ALLOWED)
			return deny(c, r, AUDIT_D_DENIED, reply, reply_len, why);
	}
	r = c->declassified ? RULE_ALLOWED
			    : policy_check_sink(c->t, c->class_before, g->session_class);
	if (r == RULE_ALLOWED)
		st = dispatch(c, reply, reply_len, why);
	else
		st = deny(c, r, AUDIT_D_DENIED, reply, reply_len, why);
	if (g->o.gate)
		gate_end(g->o.gate);
	return st;
}

/* One draw of randomness: the call id and the ids of both its entries. */
static int
call_ids(struct call *c)
{
	unsigned char raw[CALL_ID_BYTES + 2 * ENTRY_ID_BYTES];

	return id_draw(raw, sizeof raw) < 0 ||
	       id_hex(c->id, sizeof c->id, "call-", raw, CALL_ID_BYTES) < 0 ||
	       id_hex(c->dispatch_id, sizeof c->dispatch_id, "", raw + CALL_ID_BYTES,
		      ENTRY_ID_BYTES) < 0 ||
	       id_hex(c->terminal_id, sizeof c->terminal_id, "", raw + CALL_ID_BYTES +
		      ENTRY_ID_BYTES, ENTRY_ID_BYTES) < 0 ? -1 : 0;
}

/* A parsed request on its way: ids, then the decision on its canonical arguments. */
static enum gateway_status
handle_request(struct call *c, const struct parsed_frame *f, char **reply, size_t *reply_len,
	       enum policy_rule *rule)
{
	if (call_ids(c) < 0) {
		*rule = RULE_NO_RANDOMNESS;
		return GW_FAULT;
	}
	/* The parser's canonical text: the request hash and the upstream get the same bytes. */
	c->args = f->args;
	c->args_len = f->args_len;
	hash_ctx_hex(c->g->hc, f->args, f->args_len, c->request_hash);
	c->g->n.calls++;
	return decide(c, reply, reply_len, rule);
}

enum gateway_status
gateway_handle(struct gateway *g, const char *line, size_t len,
	       char **reply, size_t *reply_len, enum policy_rule *rule)
{
	struct parsed_frame f;
	struct call c = { .g = g };

	*reply = NULL;
	*reply_len = 0;
	*rule = RULE_INVALID_REQUEST;
	c.t0_us = clock_mono_us();
	switch (parser_frame(g->parser, line, len, &f)) {
	case PARSER_LOST:
		snprintf(g->fault, sizeof g->fault, "the session's parser failed");
		*rule = RULE_PARSER_LOST;
		return GW_FAULT;
	case PARSER_INVALID:
		return GW_INVALID;
	case PARSER_VALID:
		break;
	}
	if ((c.tool = config_alias_tool(g->cfg, f.operation)) < 0)
		return GW_INVALID;
	c.t = &g->cfg->tools[c.tool];
	c.alias = f.operation;
	c.class_before = g->session_class;
	return handle_request(&c, &f, reply, reply_len, rule);
}

bool
gateway_tool_definition(struct gateway *g, int tool, struct mcp_tool_shown *out)
{
	const struct catalog_tool *t;
	struct mcp_client *m;
	char h[HASH_HEX_LEN + 1];
	char *seen;

	memset(out, 0, sizeof *out);
	if (tool < 0 || (size_t)tool >= g->cfg->n_tools)
		return false;
	t = &g->cfg->tools[tool];
	if (policy_check_sink(t, g->session_class, g->session_class) != RULE_ALLOWED ||
	    !(m = upstream_for(g, t)) || mcp_tool_definition(m, t->remote, h, out) < 0)
		return false;
	seen = g->seen[tool];
	if (!t->pinned && !seen[0])
		memcpy(seen, h, sizeof h);
	if (strcmp(h, t->pinned ? t->pin : seen) != 0) {
		mcp_tool_shown_free(out);	/* drifted: the call will be denied catalog_drift */
		return false;
	}
	/*
	 * Unpinned, the description and schema are the upstream's output, as
	 * its answers are: the agent gets them at the tool's class. A pinned
	 * one is the text the operator reviewed and raises nothing.
	 */
	if (!t->pinned)
		g->session_class = policy_class_after(g->session_class, t);
	return true;
}
