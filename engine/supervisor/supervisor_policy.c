/*
 * Policy: cutovers (a revision, a delta posted to each gate), the tools
 * that stand revoked for sessions started later, whole updates, the
 * gates' acknowledgements, and the thread that writes policy entries to
 * the audit log.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit.h"
#include "config.h"
#include "err.h"
#include "gate.h"
#include "journal.h"

/* ---- the policy audit writer ---- */

/*
 * Under s->lock: queue a policy entry for the writer thread. It is woken
 * here unless a cutover is posting, which wakes it once when done.
 */
static void
policy_queue(struct supervisor *s, const struct policy_entry *p)
{
	if (s->q_n == POLICY_QUEUE_MAX) {
		sup_audit_refused(s, NULL, 1);	/* counted and shown: never silent */
		return;
	}
	s->queue[(s->q_head + s->q_n++) % POLICY_QUEUE_MAX] = *p;
	if (!s->posting)
		pthread_cond_signal(&s->writer_cond);
}

/* Queue a policy entry; the writer thread appends it. */
static void
policy_record(struct supervisor *s, const struct policy_entry *p)
{
	pthread_mutex_lock(&s->lock);
	policy_queue(s, p);
	pthread_mutex_unlock(&s->lock);
}

void
sup_policy_record(struct supervisor *s, const struct policy_entry *p)
{
	policy_record(s, p);
}

/*
 * Under s->policy, around a cutover's posts to its gates. An idle gate
 * acknowledges at once, on this thread: in between, each acknowledgement
 * only queues its event and entry, and the readers and the writer are
 * woken once at the end, not once a session (at 500 sessions those
 * wake-ups, and the writer taking the lock between them, were most of
 * a revoke's time). An acknowledgement from a session's own thread in
 * between is woken for by the same end.
 */
static void
posting_begin(struct supervisor *s)
{
	pthread_mutex_lock(&s->lock);
	s->posting = true;
	pthread_mutex_unlock(&s->lock);
}

static void
posting_end(struct supervisor *s)
{
	pthread_mutex_lock(&s->lock);
	s->posting = false;
	if (s->q_n > 0)
		pthread_cond_signal(&s->writer_cond);
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/* A cutover's answer as the audit table names it. */
static enum audit_decision
policy_decision(enum cutover_result r)
{
	switch (r) {
	case CUTOVER_APPLIED:
		return AUDIT_D_APPLIED;
	case CUTOVER_NOT_APPLICABLE:
		return AUDIT_D_NOT_APPLICABLE;
	case CUTOVER_REJECTED:
		break;
	}
	return AUDIT_D_REJECTED;
}

/*
 * {"by": user, "uid": N, "via": kind}: who made the change, for the
 * entry's detail; a hold's decision adds "wait_ms": how long the call waited.
 */
static char *
author_json(const struct policy_entry *p)
{
	json_t *o = json_pack("{s:s, s:I, s:s}", "by", p->by.user, "uid", (json_int_t)p->by.uid,
			      "via", p->by.via);
	char *text;

	if (o && p->has_wait)
		json_object_set_new(o, "wait_ms", json_integer(p->wait_ms));
	if (o && p->flow[0]) {	/* names and a hash, never the call's payload */
		json_object_set_new(o, "flow", json_string(p->flow));
		json_object_set_new(o, "request_hash", json_string(p->request_hash));
		json_object_set_new(o, "declassified", json_boolean(p->declassified));
	}
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

static void
policy_write(struct supervisor *s, const struct policy_entry *p)
{
	struct journal j = { s->o.audit, s->o.otlp };
	char *detail = p->by.user[0] ? author_json(p) : NULL;
	struct audit_entry e = {
		.session_id = p->session,
		.tool = p->tool[0] ? p->tool : NULL,
		.rule = p->rule,
		.revision = p->revision,
		.detail = detail,
	};

	if (journal_write(&j, NULL, policy_decision(p->result), &e, NULL) < 0) {
		pthread_mutex_lock(&s->lock);
		sup_audit_refused(s, NULL, 1);
		pthread_mutex_unlock(&s->lock);
		sup_wake(s);
	}
	free(detail);
}

void *
sup_writer_main(void *arg)
{
	struct supervisor *s = arg;
	struct policy_entry p;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->q_n == 0 && !s->writer_quit)
			pthread_cond_wait(&s->writer_cond, &s->lock);
		if (s->q_n == 0)
			break;	/* quit, and everything queued is written */
		p = s->queue[s->q_head];
		pthread_mutex_unlock(&s->lock);
		policy_write(s, &p);
		pthread_mutex_lock(&s->lock);
		s->q_head = (s->q_head + 1) % POLICY_QUEUE_MAX;
		s->q_n--;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void
sup_writer_stop(struct supervisor *s)
{
	sup_stop(s, s->writer, &s->writer_started, &s->writer_quit, &s->writer_cond);
}

void
supervisor_record(struct supervisor *s, const struct snap_author *by, const char *session_id,
		  const char *tool, enum cutover_result result, const char *rule)
{
	struct policy_entry p = { .result = result, .by = by ? *by : s->self };

	pthread_mutex_lock(&s->policy);
	p.revision = s->revision;
	pthread_mutex_unlock(&s->policy);
	sup_copy_word(p.session, sizeof p.session, session_id ? session_id : "engine");
	sup_copy_word(p.tool, sizeof p.tool, tool ? tool : "");
	sup_copy_word(p.rule, sizeof p.rule, rule);
	policy_record(s, &p);
}

void
sup_policy_note(struct supervisor *s, const struct snap_author *by, const char *tool,
		const char *rule, int64_t revision)
{
	struct policy_entry p = { .result = CUTOVER_APPLIED, .revision = revision, .by = *by };

	sup_copy_word(p.session, sizeof p.session, "engine");
	sup_copy_word(p.tool, sizeof p.tool, tool);
	sup_copy_word(p.rule, sizeof p.rule, rule);
	policy_record(s, &p);
}

static void
hold_entry(struct policy_entry *p, const struct slot *sl, const char *tool, const char *rule,
	   const struct snap_author *by, const int64_t *wait_ms)
{
	*p = (struct policy_entry){ .result = CUTOVER_APPLIED, .by = *by };
	/* The session's own revision: s->revision is the policy lock's, not taken here. */
	gate_read(sl->gate, &p->revision, NULL, NULL, 0);
	p->has_wait = wait_ms != NULL;
	p->wait_ms = wait_ms ? *wait_ms : 0;
	sup_copy_word(p->session, sizeof p->session, sl->id);
	sup_copy_word(p->tool, sizeof p->tool, tool);
	sup_copy_word(p->rule, sizeof p->rule, rule);
}

void
sup_hold_note_flow(struct supervisor *s, const struct slot *sl, const struct hold_view *v,
		   const char *rule, const struct snap_author *by, int64_t wait_ms,
		   bool declassified)
{
	struct policy_entry p;

	hold_entry(&p, sl, v->tool, rule, by, &wait_ms);
	snprintf(p.flow, sizeof p.flow, "%s>%s", v->session_class, v->sink_ceiling);
	sup_copy_word(p.request_hash, sizeof p.request_hash, v->request_hash);
	p.declassified = declassified;
	policy_record(s, &p);
}

void
sup_hold_note(struct supervisor *s, const struct slot *sl, const char *tool, const char *rule,
	      const struct snap_author *by, const int64_t *wait_ms)
{
	struct policy_entry p;

	hold_entry(&p, sl, tool, rule, by, wait_ms);
	policy_record(s, &p);
}

/* ---- cutover acknowledgements (a gate's ack function) ---- */

/* Under s->policy or s->lock: the cutover that assigned revision, or NULL. */
static const struct cutover *
cutover_find(const struct supervisor *s, int64_t revision)
{
	size_t i, n = s->n_cutovers < SUPERVISOR_CUTOVERS_MAX ? s->n_cutovers
							       : SUPERVISOR_CUTOVERS_MAX;

	for (i = 0; i < n; i++)
		if (s->cutovers[i].revision == revision)
			return &s->cutovers[i];
	return NULL;
}

static enum cutover_result
ack_result(enum gate_verdict v)
{
	return v == GATE_APPLIED ? CUTOVER_APPLIED : v == GATE_NOT_APPLICABLE
		? CUTOVER_NOT_APPLICABLE : CUTOVER_REJECTED;
}

static enum cutover_op
delta_op(const struct gate_delta *d)
{
	switch (d->kind) {
	case GATE_DELTA_FREEZE:
		return CUTOVER_FREEZE;
	case GATE_DELTA_THAW:
		return CUTOVER_THAW;
	case GATE_DELTA_FLOW:
		return d->hold ? CUTOVER_HOLD : CUTOVER_RESTORE;
	case GATE_DELTA_TOOL:
		break;
	}
	return d->hold ? CUTOVER_HOLD : d->allow ? CUTOVER_RESTORE : CUTOVER_REVOKE;
}

void
sup_on_gate_ack(void *ctx, const struct gate_delta *d, const struct gate_ack *ack)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_CUTOVER_ACK, .revision = d->revision,
				      .op = delta_op(d), .result = ack_result(ack->verdict),
				      .waited_us = ack->waited_us };
	struct policy_entry p = { .revision = ack->revision };
	const struct cutover *c;
	bool quiet;

	e.alert = e.result == CUTOVER_REJECTED;
	sup_copy_word(e.reason, sizeof e.reason, ack->reason);
	sup_copy_word(p.session, sizeof p.session, sl->id);
	p.result = e.result;
	snprintf(p.rule, sizeof p.rule, "%s %.32s", cutover_op_id(e.op), ack->reason);
	pthread_mutex_lock(&s->lock);
	c = cutover_find(s, d->revision);
	sup_copy_word(e.tool, sizeof e.tool, c ? c->tool : "");
	sup_copy_word(p.tool, sizeof p.tool, e.tool);
	if (c)
		e.by = p.by = c->by;
	sup_push(s, sl, &e);
	sl->row.generation++;
	s->generation++;
	policy_queue(s, &p);
	quiet = s->posting;
	pthread_mutex_unlock(&s->lock);
	sup_hold_kick(s);	/* a held call under a revoke or freeze is decided by it now */
	if (!quiet)
		sup_wake(s);
}

/* ---- cutover ---- */

/* Under s->policy, before the slot is listed: a session started while frozen starts frozen. */
static void
start_frozen(struct supervisor *s, struct slot *sl, struct policy_entry *p)
{
	if (!s->frozen)
		return;
	gate_set_frozen(sl->gate, true, s->revision);
	p->result = CUTOVER_APPLIED;
	p->by = s->frozen_by;
	snprintf(p->rule, sizeof p->rule, "%s at start", cutover_op_id(CUTOVER_FREEZE));
	policy_record(s, p);
}

/* Under s->policy, before the slot is listed: the tools held on every session are held here. */
static void
start_held(struct supervisor *s, struct slot *sl, struct policy_entry *p)
{
	size_t i;
	int t;

	for (i = 0; i < s->n_standing_hold; i++) {
		if ((t = config_tool_index(sl->cfg, s->standing_hold[i])) < 0)
			continue;
		gate_set_held(sl->gate, t, s->revision);
		p->result = CUTOVER_APPLIED;
		p->by = s->self;
		sup_copy_word(p->tool, sizeof p->tool, s->standing_hold[i]);
		snprintf(p->rule, sizeof p->rule, "%s at start", cutover_op_id(CUTOVER_HOLD));
		policy_record(s, p);
	}
	p->tool[0] = '\0';
}

/*
 * Under s->policy, before the slot is listed (so before any cutover can
 * reach it, and before its worker runs): the standing revocations as one
 * update at the engine's revision, then the standing holds, flows and a
 * freeze, and a policy entry for each. The update goes first: a hold or
 * flow raises the gate's revision to the engine's, and an update at that
 * revision would then be stale, the gate closed, and the tool allowed
 * again by the next cutover that reopened it.
 */
void
sup_start_standing(struct supervisor *s, struct slot *sl)
{
	struct policy_entry p = { .revision = s->revision };
	bool allowed[GATE_TOOLS_MAX];
	int revoked[SUPERVISOR_STANDING_MAX];
	size_t standing[SUPERVISOR_STANDING_MAX];	/* the standing entry of each */
	struct gate_state g;
	struct gate_ack ack;
	size_t i, n = 0;
	int t;

	sup_copy_word(p.session, sizeof p.session, sl->id);
	sup_grant_start(s, sl);
	gate_state(sl->gate, &g);
	memcpy(allowed, g.allowed, sizeof allowed);
	for (i = 0; i < s->n_standing; i++) {
		t = config_tool_index(sl->cfg, s->standing[i]);
		if (t >= 0 && allowed[t]) {
			allowed[t] = false;
			standing[n] = i;
			revoked[n++] = t;
		}
	}
	if (n > 0) {	/* idle and fresh, its gate applies it at once; a refusal closes it */
		gate_update(sl->gate, s->revision, allowed, g.n_tools, &ack);
		p.result = ack_result(ack.verdict);
		snprintf(p.rule, sizeof p.rule, "%s at start", cutover_op_id(CUTOVER_REVOKE));
		for (i = 0; i < n; i++) {
			sup_copy_word(p.tool, sizeof p.tool, sl->cfg->tools[revoked[i]].name);
			p.by = s->standing_by[standing[i]];
			policy_record(s, &p);
		}
		p.tool[0] = '\0';
	}
	start_held(s, sl, &p);
	sup_flow_start(s, sl);
	start_frozen(s, sl, &p);	/* at the same revision: after the update */
}

static bool
targeted(const struct slot *sl, const char *const *ids, size_t n_ids)
{
	size_t i;

	if (!ids)
		return true;
	for (i = 0; i < n_ids; i++)
		if (strcmp(ids[i], sl->id) == 0)
			return true;
	return false;
}

/* Under s->policy: remember which tool and op a revision stands for. */
static void
cutover_remember(struct supervisor *s, enum cutover_op op, const char *tool,
		 const struct snap_author *by)
{
	struct cutover *c = &s->cutovers[s->n_cutovers++ % SUPERVISOR_CUTOVERS_MAX];

	c->revision = s->revision;
	c->op = op;
	c->by = *by;
	sup_copy_word(c->tool, sizeof c->tool, tool);
}

/* Under s->lock: take name out of list[0..*n) if it is there. */
static void
names_drop(char (*list)[SNAP_NAME_MAX], size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n && strcmp(list[i], name) != 0; i++)
		;
	if (i == *n)
		return;
	(*n)--;
	memmove(list[i], list[i + 1], (*n - i) * sizeof list[0]);
}

/* Under s->lock: a tool standing revoked leaves the standing set. */
static void
standing_drop(struct supervisor *s, size_t i)
{
	size_t after = --s->n_standing - i;

	memmove(s->standing[i], s->standing[i + 1], after * sizeof s->standing[0]);
	memmove(&s->standing_by[i], &s->standing_by[i + 1], after * sizeof s->standing_by[0]);
	memmove(&s->standing_revision[i], &s->standing_revision[i + 1],
		after * sizeof s->standing_revision[0]);
}

/* Under s->lock: a hold on every session stands for later sessions (not revoked any more). */
static int
standing_hold(struct supervisor *s, const char *tool, size_t revoked_at)
{
	size_t i;

	if (revoked_at < s->n_standing)
		standing_drop(s, revoked_at);
	for (i = 0; i < s->n_standing_hold; i++)
		if (strcmp(s->standing_hold[i], tool) == 0)
			return 0;
	if (s->n_standing_hold == SUPERVISOR_STANDING_MAX)
		return -1;
	sup_copy_word(s->standing_hold[s->n_standing_hold++], SNAP_NAME_MAX, tool);
	return 0;
}

/*
 * Under s->policy: a cutover on every session moves the standing sets (a
 * restore lifts the tool, a revoke adds it to the revoked and a hold to
 * the held, each out of the other). -1 when one is full.
 */
static int
standing_change(struct supervisor *s, enum cutover_op op, const char *tool,
		const struct snap_author *by)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_standing && strcmp(s->standing[i], tool) != 0; i++)
		;
	if (op != CUTOVER_HOLD)
		names_drop(s->standing_hold, &s->n_standing_hold, tool);
	if (op == CUTOVER_HOLD)
		rc = standing_hold(s, tool, i);
	else if (op == CUTOVER_RESTORE && i < s->n_standing)
		standing_drop(s, i);
	else if (op == CUTOVER_REVOKE && i == s->n_standing) {
		if (s->n_standing == SUPERVISOR_STANDING_MAX)
			rc = -1;
		else {
			sup_copy_word(s->standing[i], sizeof s->standing[0], tool);
			s->standing_by[i] = *by;
			s->standing_revision[i] = s->revision + 1;	/* the one about to be assigned */
			s->n_standing++;
		}
	}
	s->generation += rc == 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/*
 * Under s->policy: assign the next revision to op, remember it, announce
 * it, and list the live sessions it goes to. Returns how many.
 */
static size_t
cutover_begin(struct supervisor *s, enum cutover_op op, const char *tool,
	      const char *const *ids, size_t n_ids, const struct snap_author *by,
	      struct slot **to)
{
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_CUTOVER, .op = op, .by = *by };
	size_t i, n = 0;

	s->revision++;
	cutover_remember(s, op, tool, by);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		if (!s->slots[i]->ended && targeted(s->slots[i], ids, n_ids))
			to[n++] = s->slots[i];
	e.revision = s->revision;
	e.count = (long)n;
	sup_copy_word(e.tool, sizeof e.tool, tool);
	sup_push(s, NULL, &e);
	pthread_mutex_unlock(&s->lock);
	if (n == 0) {	/* no session acknowledges it: the log still says who did what */
		char rule[SNAP_WORD_MAX];

		snprintf(rule, sizeof rule, "%s on no live session", cutover_op_id(op));
		sup_policy_note(s, by, tool, rule, s->revision);
	}
	return n;
}

/*
 * Is there room in the policy queue for a cutover's entries (its own and
 * one per live session's acknowledgement)? When there is not, a revoke or
 * restore is refused before it is assigned a revision: the log would
 * otherwise lose entries. A freeze is never refused for it: the kill
 * switch goes first, and an entry it cannot queue is counted as refused.
 */
static bool
policy_room(struct supervisor *s, size_t *waiting)
{
	size_t i, live = 0;
	bool room;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		live += !s->slots[i]->ended;
	*waiting = s->q_n;
	room = s->q_n + live + 2 <= POLICY_QUEUE_MAX;	/* its own, a grant's, one an ack */
	pthread_mutex_unlock(&s->lock);
	return room;
}

int
supervisor_cutover(struct supervisor *s, enum cutover_op op, const char *tool,
		   const char *const *ids, size_t n_ids, int64_t *revision,
		   size_t *targets, struct al_err *err)
{
	struct cutover_done done;

	if (supervisor_cutover_by(s, op, tool, ids, n_ids, NULL, &done, err) < 0)
		return -1;
	if (revision)
		*revision = done.revision;
	if (targets)
		*targets = done.targets;
	return 0;
}

int
sup_cutover_locked(struct supervisor *s, enum cutover_op op, const char *tool,
		   const char *const *ids, size_t n_ids, const struct snap_author *by,
		   const struct grant_terms *terms, bool lapse, int64_t *revision,
		   size_t *targets, struct al_err *err)
{
	struct slot *to[SUPERVISOR_SESSIONS_MAX];
	size_t i, n;

	if (!lapse && !policy_room(s, &i))
		return al_fail(err, "cutover: the engine is busy: %zu policy entries wait for the "
			       "audit log", i);
	if (terms && !sup_grant_room(s, tool))
		return al_fail(err, "grant: %d tools are already granted", GRANT_MAX);
	if (!ids && standing_change(s, op, tool, by) < 0 && !lapse)
		return al_fail(err, "cutover: %d tools already stand %s on every session",
			       SUPERVISOR_STANDING_MAX, op == CUTOVER_HOLD ? "held" : "revoked");
	n = cutover_begin(s, op, tool, ids, n_ids, by, to);
	/* Before the deltas: the first call the restore allows is metered already. */
	sup_grant_cutover(s, op, tool, !ids, terms, to, n, by);
	if (!ids)	/* a grant is saved revoked, as its lapse leaves it */
		sup_standing_save(s, by);
	if (op == CUTOVER_HOLD)	/* held again: decided call by call again */
		sup_hold_unwaive(s, tool, to, n);
	posting_begin(s);
	for (i = 0; i < n; i++)
		if (op == CUTOVER_HOLD)
			gate_post_hold(to[i]->gate, s->revision, config_tool_index(to[i]->cfg, tool));
		else
			gate_post(to[i]->gate, s->revision, config_tool_index(to[i]->cfg, tool),
				  op == CUTOVER_RESTORE);
	sup_cutover_posted(s, n, revision, targets);
	return 0;
}

int
sup_cutover_open(struct supervisor *s, enum cutover_op op, const char *what,
		 const char *const *ids, size_t n_ids, const struct snap_author *by,
		 struct slot **to, size_t *n, struct al_err *err)
{
	size_t waiting;

	if (!policy_room(s, &waiting))
		return al_fail(err, "cutover: the engine is busy: %zu policy entries wait for the "
			       "audit log", waiting);
	*n = cutover_begin(s, op, what, ids, n_ids, by, to);
	if (!ids)
		sup_standing_save(s, by);
	posting_begin(s);
	return 0;
}

void
sup_cutover_posted(struct supervisor *s, size_t n, int64_t *revision, size_t *targets)
{
	posting_end(s);
	if (revision)
		*revision = s->revision;
	if (targets)
		*targets = n;
}

/*
 * Under nothing: assign the revision and post it to the sessions ids names
 * (whole ids). Assigned and posted under one lock: two cutovers can never
 * reach a gate out of order, so no valid cutover is ever stale.
 */
static int
cutover_post(struct supervisor *s, enum cutover_op op, const char *tool,
	     const char *const *ids, size_t n_ids, const struct snap_author *by,
	     const struct grant_terms *terms, int64_t *revision, size_t *targets,
	     struct al_err *err)
{
	int rc;

	pthread_mutex_lock(&s->policy);
	rc = sup_cutover_locked(s, op, tool, ids, n_ids, by, terms, false, revision, targets, err);
	pthread_mutex_unlock(&s->policy);
	return rc;
}

/* The sessions a cutover names, as whole ids (the operator may type prefixes). */
struct named {
	char id[SUPERVISOR_SESSIONS_MAX][SNAP_ID_MAX];
	const char *p[SUPERVISOR_SESSIONS_MAX];
};

static int
cutover_by(struct supervisor *s, enum cutover_op op, const char *tool,
	   const char *const *ids, size_t n_ids, const struct snap_author *by,
	   const struct grant_terms *terms, struct cutover_done *done, struct al_err *err)
{
	struct cutover_done own;
	struct named *nm = NULL;
	size_t i;
	int rc;

	if (op != CUTOVER_REVOKE && op != CUTOVER_RESTORE && op != CUTOVER_HOLD)
		return al_fail(err, "cutover: only revoke, restore or hold names a tool");
	if (!tool || !tool[0] || strlen(tool) >= SNAP_NAME_MAX)
		return al_fail(err, "cutover: no such tool name");
	if (ids && n_ids > SUPERVISOR_SESSIONS_MAX)
		return al_fail(err, "cutover: more than %d sessions named", SUPERVISOR_SESSIONS_MAX);
	if (ids && !(nm = calloc(1, sizeof *nm)))
		return al_fail(err, "out of memory");
	if (!done)
		done = &own;
	rc = sup_cutover_names(s, tool, done->tool, ids, n_ids, nm ? nm->id : NULL, err);
	for (i = 0; nm && i < n_ids; i++)
		nm->p[i] = nm->id[i];
	if (rc == 0)
		rc = cutover_post(s, op, done->tool, nm ? nm->p : NULL, n_ids, by ? by : &s->self,
				  terms, &done->revision, &done->targets, err);
	free(nm);
	return rc;
}

int
supervisor_cutover_by(struct supervisor *s, enum cutover_op op, const char *tool,
		      const char *const *ids, size_t n_ids, const struct snap_author *by,
		      struct cutover_done *done, struct al_err *err)
{
	return cutover_by(s, op, tool, ids, n_ids, by, NULL, done, err);
}

int
supervisor_grant(struct supervisor *s, const char *tool, const char *const *ids, size_t n_ids,
		 const struct snap_author *by, int64_t for_s, int64_t calls, struct cutover_done *done,
		 struct al_err *err)
{
	struct grant_terms t = { .for_s = for_s, .calls = calls };

	if ((for_s == 0 && calls == 0) || for_s < 0 || calls < 0)
		return al_fail(err, "grant: a time (--for) or a number of calls (--calls) is needed");
	if (for_s && (for_s < GRANT_FOR_MIN_S || for_s > GRANT_FOR_MAX_S))
		return al_fail(err, "grant: --for is %d s to %d h", GRANT_FOR_MIN_S,
			       GRANT_FOR_MAX_S / 3600);
	if (calls > GRANT_CALLS_MAX)
		return al_fail(err, "grant: --calls is 1 to %d", GRANT_CALLS_MAX);
	return cutover_by(s, CUTOVER_RESTORE, tool, ids, n_ids, by, &t, done, err);
}

int
supervisor_freeze(struct supervisor *s, bool frozen, const struct snap_author *by,
		  int64_t *revision, size_t *targets, struct al_err *err)
{
	struct slot *to[SUPERVISOR_SESSIONS_MAX];
	size_t i, n;

	by = by ? by : &s->self;
	pthread_mutex_lock(&s->policy);
	if (s->frozen == frozen) {
		pthread_mutex_unlock(&s->policy);
		return al_fail(err, frozen ? "freeze: the engine is frozen already"
					   : "thaw: the engine is not frozen");
	}
	n = cutover_begin(s, frozen ? CUTOVER_FREEZE : CUTOVER_THAW, "", NULL, 0, by, to);
	pthread_mutex_lock(&s->lock);
	s->frozen = frozen;
	s->frozen_by = *by;
	s->frozen_revision = s->revision;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_standing_save(s, by);
	posting_begin(s);
	for (i = 0; i < n; i++)
		gate_post_freeze(to[i]->gate, s->revision, frozen);
	sup_cutover_posted(s, n, revision, targets);
	pthread_mutex_unlock(&s->policy);
	return 0;
}

struct update_job {
	pthread_t thread;
	bool threaded;
	struct slot *slot;
	const json_t *update;
	struct gate_ack ack;
};

static void *
update_main(void *arg)
{
	struct update_job *j = arg;

	gate_update_json(j->slot->gate, j->update, j->slot->names, j->slot->cfg->n_tools,
			 &j->ack);
	return NULL;
}

static void
update_record(struct supervisor *s, struct update_job *j)
{
	struct policy_entry p = { .revision = j->ack.revision };
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_CUTOVER_ACK, .revision = j->ack.revision,
				      .result = ack_result(j->ack.verdict),
				      .waited_us = j->ack.waited_us };

	e.alert = e.result == CUTOVER_REJECTED;
	sup_copy_word(e.reason, sizeof e.reason, j->ack.reason);
	sup_copy_word(p.session, sizeof p.session, j->slot->id);
	p.result = e.result;
	sup_copy_word(p.rule, sizeof p.rule, j->ack.reason);
	policy_write(s, &p);
	pthread_mutex_lock(&s->lock);
	sup_push(s, j->slot, &e);
	if (j->ack.revision > s->revision)
		s->revision = j->ack.revision;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
}

size_t
supervisor_update_json(struct supervisor *s, const json_t *update,
		       const char *const *ids, size_t n_ids,
		       struct cutover_ack *acks, size_t cap)
{
	struct update_job *jobs;
	size_t i, n = 0;

	cap = cap < SUPERVISOR_SESSIONS_MAX ? cap : SUPERVISOR_SESSIONS_MAX;
	jobs = calloc(cap ? cap : 1, sizeof *jobs);
	if (!jobs)
		return 0;
	pthread_mutex_lock(&s->policy);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots && n < cap; i++)
		if (!s->slots[i]->ended && targeted(s->slots[i], ids, n_ids))
			jobs[n++] = (struct update_job){ .slot = s->slots[i], .update = update };
	pthread_mutex_unlock(&s->lock);
	/*
	 * Concurrently: one session's in-flight call must not delay another's
	 * update. A single session's runs here: a thread would only add its start.
	 */
	for (i = 0; i < n; i++) {
		jobs[i].threaded = n > 1 &&
				   thread_start(&jobs[i].thread, NULL, update_main, &jobs[i]) == 0;
		if (!jobs[i].threaded)
			update_main(&jobs[i]);
	}
	for (i = 0; i < n; i++) {
		if (jobs[i].threaded)
			pthread_join(jobs[i].thread, NULL);
		update_record(s, &jobs[i]);
		sup_copy_word(acks[i].session_id, sizeof acks[i].session_id, jobs[i].slot->id);
		acks[i].ack = jobs[i].ack;
	}
	pthread_mutex_unlock(&s->policy);
	free(jobs);
	sup_wake(s);
	return n;
}
