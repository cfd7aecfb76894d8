#include "gate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/*
 * Fixed ack texts. An update comes from the operator, never from an agent,
 * but the texts stay fixed anyway so nothing of the update is echoed back.
 */
#define WHY_APPLIED		"applied"
#define WHY_STALE		"stale revision"
#define WHY_NOT_APPROVED	"tool not approved"
#define WHY_UNKNOWN		"unknown tool"
#define WHY_MALFORMED		"malformed update"
#define WHY_NOT_HELD		"tool not in this session"
#define WHY_QUEUE_FULL		"too many pending deltas"
#define WHY_NO_CLASS		"class not in this session"
#define WHY_NO_DECLASSIFY	"no declassification"
#define WHY_FLOWS_FULL		"too many class flow holds"

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool approved[GATE_TOOLS_MAX];
	bool allowed[GATE_TOOLS_MAX];
	bool held[GATE_TOOLS_MAX];	/* of the allowed: calls wait for an operator */
	struct gate_flow flows[GATE_FLOWS_MAX];	/* class flows whose calls wait */
	size_t n_flows;
	bool declassify;	/* a held flow above its sink may be held (and approved) */
	size_t n_tools;
	int64_t revision;
	bool open;
	bool frozen;		/* the kill switch: every call denied */
	bool quarantined;	/* this session held: every call denied */
	bool busy;		/* a call is between gate_begin and gate_end */
	int64_t closed_at;	/* a closed gate reopens only past this revision */
	unsigned pending;	/* updates waiting for the in-flight call */
	uint64_t updates_applied, updates_rejected;
	int busy_tool;		/* the call in flight: its tool, revision, start */
	int64_t busy_revision;
	int64_t busy_since_us;
	struct gate_delta queue[GATE_DELTAS_MAX];	/* posted deltas, oldest first */
	size_t queued;
	gate_ack_fn on_ack;
	void *ack_ctx;
	struct gate_meter meter;
};

struct gate *
gate_new(const bool *approved, size_t n)
{
	struct gate *g;
	size_t i;

	if (n > GATE_TOOLS_MAX || (n > 0 && !approved))
		return NULL;
	g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	for (i = 0; i < n; i++)
		g->approved[i] = g->allowed[i] = approved[i];
	g->n_tools = n;
	g->open = true;
	if (pthread_mutex_init(&g->lock, NULL) != 0) {
		free(g);
		return NULL;
	}
	if (pthread_cond_init(&g->changed, NULL) != 0) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

void
gate_free(struct gate *g)
{
	if (!g)
		return;
	pthread_cond_destroy(&g->changed);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/*
 * Under the lock. approved is checked as well as allowed so that a bad
 * allowed[] could never admit a tool outside the frozen set.
 */
static bool
gate_tool_allowed(const struct gate *g, int tool)
{
	return tool >= 0 && (size_t)tool < g->n_tools &&
	       g->approved[tool] && g->allowed[tool];
}

/* Under the lock: what the meter says of an allowed call (FREE when there is none). */
static enum gate_meter_answer
gate_meter_spend(struct gate *g, int tool)
{
	return g->meter.spend ? g->meter.spend(g->meter.ctx, tool) : GATE_METER_FREE;
}

/* Under the lock: where cls > sink is in the held set, or -1. */
static int
gate_flow_at(const struct gate *g, int cls, int sink)
{
	size_t i;

	for (i = 0; i < g->n_flows; i++)
		if (g->flows[i].cls == cls && g->flows[i].sink == sink)
			return (int)i;
	return -1;
}

/*
 * Under the lock: may this gate hold cls > sink at all? A flow the sink
 * ceiling denies is held only with the opt-in: otherwise the hold would
 * only delay a call that is denied anyway.
 */
static bool
gate_flow_applies(const struct gate *g, int cls, int sink)
{
	return cls >= 0 && sink >= 0 && (cls <= sink || g->declassify);
}

/* Under the lock: is the call's flow held? */
static bool
gate_flow_held(const struct gate *g, const struct gate_flow *f)
{
	return f && gate_flow_applies(g, f->cls, f->sink) && gate_flow_at(g, f->cls, f->sink) >= 0;
}

/* Under the lock: the answer for tool, before any meter; *held what holds it. */
static enum policy_rule
gate_rule(const struct gate *g, int tool, const struct gate_flow *f, bool waive,
	  unsigned *held)
{
	*held = 0;
	if (g->quarantined)
		return RULE_QUARANTINED;
	if (g->frozen)
		return RULE_FROZEN;
	if (!g->open)
		return RULE_GATE_CLOSED;
	if (!gate_tool_allowed(g, tool))
		return RULE_REVOKED;
	*held = (g->held[tool] ? GATE_HELD_TOOL : 0) | (gate_flow_held(g, f) ? GATE_HELD_FLOW : 0);
	return *held && !waive ? RULE_HOLD_DENIED : RULE_ALLOWED;
}

static enum policy_rule
gate_enter(struct gate *g, int tool, const struct gate_flow *f, bool waive, int64_t *revision,
	   unsigned *held)
{
	unsigned h;
	enum policy_rule rule;
	enum gate_meter_answer m = GATE_METER_FREE;

	pthread_mutex_lock(&g->lock);
	/*
	 * Waiting for pending updates too is what queues a call behind an
	 * update that arrived first: it decides on the new set, never the old.
	 */
	while (g->busy || g->pending > 0)
		pthread_cond_wait(&g->changed, &g->lock);
	rule = gate_rule(g, tool, f, waive, &h);
	if (held)
		*held = h;
	if (rule == RULE_ALLOWED && (m = gate_meter_spend(g, tool)) == GATE_METER_NONE)
		rule = RULE_REVOKED;
	if (rule == RULE_ALLOWED) {
		g->busy = true;
		g->busy_tool = tool;
		g->busy_revision = g->revision;
		g->busy_since_us = clock_mono_us();
	}
	if (revision)
		*revision = g->revision;
	pthread_mutex_unlock(&g->lock);
	if (m == GATE_METER_LAST && g->meter.spent)
		g->meter.spent(g->meter.ctx, tool);
	return rule;
}

enum policy_rule
gate_begin(struct gate *g, int tool, int64_t *revision)
{
	return gate_enter(g, tool, NULL, false, revision, NULL);
}

enum policy_rule
gate_begin_waived(struct gate *g, int tool, int64_t *revision)
{
	return gate_enter(g, tool, NULL, true, revision, NULL);
}

enum policy_rule
gate_begin_flow(struct gate *g, int tool, const struct gate_flow *f, bool waive,
		int64_t *revision, unsigned *held)
{
	return gate_enter(g, tool, f, waive, revision, held);
}

enum policy_rule
gate_peek_flow(struct gate *g, int tool, const struct gate_flow *f, unsigned *held)
{
	enum policy_rule rule;
	unsigned h;

	pthread_mutex_lock(&g->lock);
	rule = gate_rule(g, tool, f, false, &h);
	pthread_mutex_unlock(&g->lock);
	if (held)
		*held = h;
	return rule;
}

enum policy_rule
gate_peek(struct gate *g, int tool)
{
	return gate_peek_flow(g, tool, NULL, NULL);
}

/* Deltas applied under the lock, acknowledged after it is released. */
struct gate_done {
	struct gate_delta d[GATE_DELTAS_MAX];
	struct gate_ack ack[GATE_DELTAS_MAX];
	size_t n;
};

static void gate_drain(struct gate *g, struct gate_done *done);

static void
gate_deliver(struct gate *g, const struct gate_done *done)
{
	size_t i;

	for (i = 0; i < done->n; i++)
		if (g->on_ack)
			g->on_ack(g->ack_ctx, &done->d[i], &done->ack[i]);
}

void
gate_end(struct gate *g)
{
	struct gate_done done = { .n = 0 };

	pthread_mutex_lock(&g->lock);
	g->busy = false;
	gate_drain(g, &done);	/* between this call and the next */
	/* Both updates and queued calls wait on the one condition. */
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
	gate_deliver(g, &done);
}

/*
 * Why the update cannot apply, or NULL when it can. Under the lock and
 * after the wait: the revision to beat is the one current at apply time.
 */
static const char *
gate_check(const struct gate *g, int64_t revision, const bool *allowed, size_t n)
{
	size_t i;

	/* The approved set is frozen: an update of another size is no update. */
	if (n != g->n_tools || (n > 0 && !allowed))
		return WHY_MALFORMED;
	if (revision <= g->revision)
		return WHY_STALE;
	for (i = 0; i < n; i++)
		if (allowed[i] && !g->approved[i])
			return WHY_NOT_APPROVED;
	return NULL;
}

/* Under the lock: apply the update, or close admission when why is set. */
static void
gate_settle(struct gate *g, int64_t revision, const bool *allowed, const char *why)
{
	size_t i;

	if (why) {
		/* The revision stays: only a valid newer one may reopen. */
		g->open = false;
		g->closed_at = g->revision;
		g->updates_rejected++;
		return;
	}
	for (i = 0; i < g->n_tools; i++)
		g->allowed[i] = allowed[i];
	g->revision = revision;
	g->open = true;
	g->updates_applied++;
}

/*
 * Every update, valid or not, goes through here: it waits for the
 * in-flight call, so even a rejection takes effect between two calls.
 * why, when set, is a rejection already decided by the caller.
 */
static void
gate_apply(struct gate *g, int64_t revision, const bool *allowed, size_t n,
	   const char *why, struct gate_ack *ack)
{
	struct gate_done done = { .n = 0 };
	struct gate_ack a = { 0 };
	int64_t t0;

	pthread_mutex_lock(&g->lock);
	g->pending++;
	t0 = clock_mono_us();
	while (g->busy)
		pthread_cond_wait(&g->changed, &g->lock);
	a.waited_us = clock_mono_us() - t0;
	if (!why)
		why = gate_check(g, revision, allowed, n);
	gate_settle(g, revision, allowed, why);
	g->pending--;
	a.verdict = why ? GATE_REJECTED : GATE_APPLIED;
	a.revision = g->revision;
	a.open = g->open;
	if (g->pending == 0)
		gate_drain(g, &done);	/* deltas posted while this one waited */
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
	gate_deliver(g, &done);
	snprintf(a.reason, sizeof a.reason, "%s", why ? why : WHY_APPLIED);
	if (ack)
		*ack = a;
}

void
gate_update(struct gate *g, int64_t revision, const bool *allowed, size_t n,
	    struct gate_ack *ack)
{
	gate_apply(g, revision, allowed, n, NULL, ack);
}

/* Mark the tool called name as allowed. Duplicates are harmless. */
static const char *
gate_mark(const json_t *name, const char *const *names, size_t n, bool *allowed)
{
	const char *s = json_string_value(name);
	size_t i, len = json_string_length(name);

	if (!s)
		return WHY_MALFORMED;
	/* Compare lengths too: "store\u0000x" must not pass as "store". */
	for (i = 0; i < n; i++)
		if (names[i] && strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
			allowed[i] = true;
			return NULL;
		}
	return WHY_UNKNOWN;
}

/* {"revision": <integer>, "allowed": [names]} into revision and allowed[]. */
static const char *
gate_parse(const json_t *update, const char *const *names, size_t n,
	   int64_t *revision, bool *allowed)
{
	json_t *rev, *list, *name;
	const char *why;
	size_t i;

	if (!json_is_object(update) || json_object_size(update) != 2)
		return WHY_MALFORMED;
	rev = json_object_get(update, "revision");
	list = json_object_get(update, "allowed");
	/* json_is_integer is false for 2.0: a revision is never a real. */
	if (!json_is_integer(rev) || !json_is_array(list))
		return WHY_MALFORMED;
	*revision = json_integer_value(rev);
	json_array_foreach(list, i, name)
		if ((why = gate_mark(name, names, n, allowed)))
			return why;
	return NULL;
}

void
gate_update_json(struct gate *g, const json_t *update, const char *const *names,
		 size_t n, struct gate_ack *ack)
{
	bool allowed[GATE_TOOLS_MAX] = { false };
	const char *why = WHY_MALFORMED;
	int64_t revision = 0;

	if (names && n <= GATE_TOOLS_MAX)
		why = gate_parse(update, names, n, &revision, allowed);
	/* A malformed update still closes admission, in turn like any other. */
	gate_apply(g, revision, allowed, n, why, ack);
}

void
gate_read(struct gate *g, int64_t *revision, bool *open, bool *allowed, size_t n)
{
	size_t i;

	pthread_mutex_lock(&g->lock);
	if (revision)
		*revision = g->revision;
	if (open)
		*open = g->open;
	for (i = 0; allowed && i < n; i++)
		allowed[i] = i < g->n_tools && g->allowed[i];
	pthread_mutex_unlock(&g->lock);
}

void
gate_set_ack(struct gate *g, gate_ack_fn fn, void *ctx)
{
	pthread_mutex_lock(&g->lock);
	g->on_ack = fn;
	g->ack_ctx = ctx;
	pthread_mutex_unlock(&g->lock);
}

void
gate_set_meter(struct gate *g, const struct gate_meter *m)
{
	pthread_mutex_lock(&g->lock);
	g->meter = *m;
	pthread_mutex_unlock(&g->lock);
}

/* Under the lock: the revision moves, nothing else (a delta that does not apply here). */
static void
gate_not_applicable(struct gate *g, const struct gate_delta *d, struct gate_ack *a,
		    const char *why)
{
	g->revision = d->revision;
	a->verdict = GATE_NOT_APPLICABLE;
	snprintf(a->reason, sizeof a->reason, "%s", why);
}

/* Under the lock: hold or lift one class flow; a full set closes admission. */
static void
gate_apply_flow(struct gate *g, const struct gate_delta *d, struct gate_ack *a)
{
	int at = gate_flow_at(g, d->cls, d->sink);

	if (d->cls < 0 || d->sink < 0 || (d->hold && !gate_flow_applies(g, d->cls, d->sink))) {
		gate_not_applicable(g, d, a, d->cls < 0 || d->sink < 0 ? WHY_NO_CLASS
								 : WHY_NO_DECLASSIFY);
		return;
	}
	if (d->hold && at < 0 && g->n_flows == GATE_FLOWS_MAX) {
		gate_settle(g, d->revision, NULL, WHY_FLOWS_FULL);
		a->verdict = GATE_REJECTED;
		snprintf(a->reason, sizeof a->reason, "%s", WHY_FLOWS_FULL);
		return;
	}
	if (d->hold && at < 0)
		g->flows[g->n_flows++] = (struct gate_flow){ d->cls, d->sink };
	else if (!d->hold && at >= 0)
		g->flows[at] = g->flows[--g->n_flows];
	g->revision = d->revision;
	g->open = g->open || d->revision > g->closed_at;
	g->updates_applied++;
	a->verdict = GATE_APPLIED;
	snprintf(a->reason, sizeof a->reason, "%s", WHY_APPLIED);
}

/* Under the lock: one delta, settled like a whole update would be. */
static void
gate_apply_delta(struct gate *g, const struct gate_delta *d, struct gate_ack *a)
{
	memset(a, 0, sizeof *a);
	a->waited_us = clock_mono_us() - d->posted_us;
	if (d->revision <= g->revision) {
		gate_settle(g, d->revision, NULL, WHY_STALE);
		a->verdict = GATE_REJECTED;
		snprintf(a->reason, sizeof a->reason, "%s", WHY_STALE);
	} else if (d->kind == GATE_DELTA_FLOW) {
		gate_apply_flow(g, d, a);
	} else if (d->kind != GATE_DELTA_TOOL) {
		g->frozen = d->kind == GATE_DELTA_FREEZE;
		g->revision = d->revision;
		g->open = g->open || d->revision > g->closed_at;
		g->updates_applied++;
		a->verdict = GATE_APPLIED;
		snprintf(a->reason, sizeof a->reason, "%s", WHY_APPLIED);
	} else if (d->tool < 0 || (size_t)d->tool >= g->n_tools || !g->approved[d->tool]) {
		/* Nothing to change here, and nothing wrong: the gate stays as it is. */
		gate_not_applicable(g, d, a, WHY_NOT_HELD);
	} else {
		g->allowed[d->tool] = d->allow;
		g->held[d->tool] = d->allow && d->hold;
		g->revision = d->revision;
		g->open = g->open || d->revision > g->closed_at;
		g->updates_applied++;
		a->verdict = GATE_APPLIED;
		snprintf(a->reason, sizeof a->reason, "%s", WHY_APPLIED);
	}
	a->revision = g->revision;
	a->open = g->open;
}

/* Under the lock: apply every queued delta, oldest first. */
static void
gate_drain(struct gate *g, struct gate_done *done)
{
	size_t i;

	for (i = 0; i < g->queued; i++) {
		done->d[done->n] = g->queue[i];
		gate_apply_delta(g, &g->queue[i], &done->ack[done->n]);
		done->n++;
	}
	g->queued = 0;
}

static void
gate_post_delta(struct gate *g, struct gate_delta d)
{
	struct gate_done done = { .n = 0 };
	int64_t revision = d.revision;

	pthread_mutex_lock(&g->lock);
	if (g->queued == GATE_DELTAS_MAX) {
		gate_settle(g, revision, NULL, WHY_QUEUE_FULL);
		/* Those still queued are older: they apply, but do not reopen. */
		g->closed_at = revision > g->closed_at ? revision : g->closed_at;
		done.d[0] = d;
		done.ack[0] = (struct gate_ack){ .verdict = GATE_REJECTED,
						 .revision = g->revision, .open = false };
		snprintf(done.ack[0].reason, sizeof done.ack[0].reason, "%s", WHY_QUEUE_FULL);
		done.n = 1;
	} else {
		g->queue[g->queued++] = d;
		if (!g->busy && g->pending == 0)
			gate_drain(g, &done);
	}
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
	gate_deliver(g, &done);
}

void
gate_post(struct gate *g, int64_t revision, int tool, bool allow)
{
	gate_post_delta(g, (struct gate_delta){ .revision = revision, .kind = GATE_DELTA_TOOL,
						.tool = tool, .allow = allow,
						.posted_us = clock_mono_us() });
}

void
gate_post_hold(struct gate *g, int64_t revision, int tool)
{
	gate_post_delta(g, (struct gate_delta){ .revision = revision, .kind = GATE_DELTA_TOOL,
						.tool = tool, .allow = true, .hold = true,
						.posted_us = clock_mono_us() });
}

void
gate_post_flow(struct gate *g, int64_t revision, int cls, int sink, bool hold)
{
	gate_post_delta(g, (struct gate_delta){ .revision = revision, .kind = GATE_DELTA_FLOW,
						.tool = -1, .hold = hold, .cls = cls, .sink = sink,
						.posted_us = clock_mono_us() });
}

void
gate_post_freeze(struct gate *g, int64_t revision, bool frozen)
{
	gate_post_delta(g, (struct gate_delta){ .revision = revision, .tool = -1,
						.kind = frozen ? GATE_DELTA_FREEZE : GATE_DELTA_THAW,
						.posted_us = clock_mono_us() });
}

void
gate_set_frozen(struct gate *g, bool frozen, int64_t revision)
{
	pthread_mutex_lock(&g->lock);
	g->frozen = frozen;
	if (revision > g->revision)
		g->revision = revision;
	pthread_mutex_unlock(&g->lock);
}

void
gate_set_held(struct gate *g, int tool, int64_t revision)
{
	pthread_mutex_lock(&g->lock);
	if (tool >= 0 && (size_t)tool < g->n_tools && gate_tool_allowed(g, tool))
		g->held[tool] = true;
	if (revision > g->revision)
		g->revision = revision;
	pthread_mutex_unlock(&g->lock);
}

bool
gate_set_flow_held(struct gate *g, int cls, int sink, int64_t revision)
{
	bool held = false;

	pthread_mutex_lock(&g->lock);
	if (gate_flow_applies(g, cls, sink)) {
		if (gate_flow_at(g, cls, sink) >= 0) {
			held = true;
		} else if (g->n_flows < GATE_FLOWS_MAX) {
			g->flows[g->n_flows++] = (struct gate_flow){ cls, sink };
			held = true;
		} else {
			g->open = false;	/* fail closed: a newer revision reopens */
			g->closed_at = revision > g->revision ? revision : g->revision;
		}
	}
	if (revision > g->revision)
		g->revision = revision;
	pthread_mutex_unlock(&g->lock);
	return held;
}

void
gate_set_declassify(struct gate *g, bool on)
{
	pthread_mutex_lock(&g->lock);
	g->declassify = on;
	pthread_mutex_unlock(&g->lock);
}

void
gate_set_quarantined(struct gate *g, bool on)
{
	pthread_mutex_lock(&g->lock);
	g->quarantined = on;
	pthread_mutex_unlock(&g->lock);
}

bool
gate_quarantined(struct gate *g)
{
	bool on;

	pthread_mutex_lock(&g->lock);
	on = g->quarantined;
	pthread_mutex_unlock(&g->lock);
	return on;
}

void
gate_state(struct gate *g, struct gate_state *out)
{
	size_t i;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&g->lock);
	out->revision = g->revision;
	out->open = g->open;
	out->frozen = g->frozen;
	out->quarantined = g->quarantined;
	out->n_tools = g->n_tools;
	for (i = 0; i < g->n_tools; i++) {
		out->allowed[i] = g->allowed[i];
		out->held[i] = g->allowed[i] && g->held[i];
		out->approved[i] = g->approved[i];
	}
	memcpy(out->flows, g->flows, g->n_flows * sizeof g->flows[0]);
	out->n_flows = g->n_flows;
	out->declassify = g->declassify;
	out->updates_waiting = g->pending;
	out->deltas_queued = g->queued;
	out->updates_applied = g->updates_applied;
	out->updates_rejected = g->updates_rejected;
	out->pending = g->pending + (unsigned)g->queued;
	if (g->queued > 0) {
		out->pending_revision = g->queue[g->queued - 1].revision;
		out->pending_since_us = g->queue[0].posted_us;
	}
	out->busy = g->busy;
	out->busy_tool = g->busy_tool;
	out->busy_revision = g->busy_revision;
	out->busy_since_us = g->busy_since_us;
	pthread_mutex_unlock(&g->lock);
}
