#include "supervisor.h"
#include "supervisor_int.h"
#include "clock.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "ids.h"
#include "journal.h"
#include "preflight.h"
#include "profile.h"
#include "session.h"
#include "watchdog.h"

#define SUPERVISOR_SWEEP_FIRST_MS	1000	/* then doubling, up to: */
#define SUPERVISOR_SWEEP_MAX_MS		30000
#define SUPERVISOR_HOST_KICK_MS		3000	/* host checks after an end, at most this often */
#define SUPERVISOR_HOST_FAILING_MS	10000	/* and this often while they fail */

/* Bounded copy; a longer source is cut (every source is a name or fixed word). */
void
sup_copy_word(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

/* Queue a policy entry; the writer thread appends it. */
static void
policy_record(struct supervisor *s, const struct policy_entry *p)
{
	pthread_mutex_lock(&s->lock);
	if (s->q_n == POLICY_QUEUE_MAX)
		sup_audit_refused(s, NULL, 1);	/* counted and shown: never silent */
	else {
		s->queue[(s->q_head + s->q_n++) % POLICY_QUEUE_MAX] = *p;
		pthread_cond_signal(&s->writer_cond);
	}
	pthread_mutex_unlock(&s->lock);
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

static void
policy_write(struct supervisor *s, const struct policy_entry *p)
{
	struct journal j = { s->o.audit, s->o.otlp };
	struct audit_entry e = {
		.session_id = p->session,
		.tool = p->tool[0] ? p->tool : NULL,
		.rule = p->rule,
		.revision = p->revision,
	};

	if (journal_write(&j, NULL, policy_decision(p->result), &e, NULL) < 0) {
		pthread_mutex_lock(&s->lock);
		sup_audit_refused(s, NULL, 1);
		pthread_mutex_unlock(&s->lock);
		sup_wake(s);
	}
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

void
sup_on_gate_ack(void *ctx, const struct gate_delta *d, const struct gate_ack *ack)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_CUTOVER_ACK, .revision = d->revision,
				      .op = d->allow ? CUTOVER_RESTORE : CUTOVER_REVOKE,
				      .result = ack_result(ack->verdict),
				      .waited_us = ack->waited_us };
	struct policy_entry p = { .revision = ack->revision };
	const struct cutover *c;

	e.alert = e.result == CUTOVER_REJECTED;
	sup_copy_word(e.reason, sizeof e.reason, ack->reason);
	pthread_mutex_lock(&s->lock);
	c = cutover_find(s, d->revision);
	sup_copy_word(e.tool, sizeof e.tool, c ? c->tool : "");
	sup_push(s, sl, &e);
	sl->row.generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
	sup_copy_word(p.session, sizeof p.session, sl->id);
	sup_copy_word(p.tool, sizeof p.tool, e.tool);
	p.result = e.result;
	snprintf(p.rule, sizeof p.rule, "%s %.32s", cutover_op_id(e.op), ack->reason);
	policy_record(s, &p);
}

static void *
worker_main(void *arg)
{
	struct slot *sl = arg;
	struct supervisor *s = sl->sup;
	struct session_summary sum;
	struct session_options so = {
		.config = sl->cfg,
		.docker_host = s->o.docker_host,
		.audit = s->o.audit,
		.otlp = s->o.otlp,
		.gate = sl->gate,
		.watchdog_exe = s->o.watchdog_exe,
		.stop = &sl->stop,
		.hooks = sup_hooks(sl),
		.session_id = sl->id,
		.launch_slots = &s->launch_slots,
	};

	session_run(&so, &sum);
	sup_keeper_note_end(s, &sum);
	return NULL;
}

/* The approved set: every tool an alias reaches, frozen now. */
static int
slot_gate(struct slot *sl)
{
	bool approved[GATE_TOOLS_MAX] = { false };
	size_t i;

	for (i = 0; i < sl->cfg->n_aliases; i++)
		approved[sl->cfg->aliases[i].tool] = true;
	for (i = 0; i < sl->cfg->n_tools; i++)
		sl->names[i] = sl->cfg->tools[i].name;
	sl->gate = gate_new(approved, sl->cfg->n_tools);
	if (!sl->gate)
		return -1;
	gate_set_ack(sl->gate, sup_on_gate_ack, sl);
	return 0;
}

/* The row's fixed part: what never changes during the session. */
static void
slot_row(struct slot *sl)
{
	const struct airlock_config *c = sl->cfg;
	struct session_row *r = &sl->row;
	struct gate_state g;
	size_t i;

	sup_copy_word(r->id, sizeof r->id, sl->id);
	sup_copy_word(r->image, sizeof r->image, c->profile.image);
	sup_copy_word(r->runtime, sizeof r->runtime, c->profile.runtime);
	sup_copy_word(r->class_name, sizeof r->class_name, class_name(&c->classes, c->initial.class));
	r->state = SESSION_STATE_QUEUED;
	r->started_ms = clock_wall_ms();
	r->exit_code = -1;
	r->n_tools = c->n_tools;
	gate_state(sl->gate, &g);
	for (i = 0; i < c->n_tools; i++) {
		sup_copy_word(r->tools[i].name, sizeof r->tools[i].name, c->tools[i].name);
		sup_copy_word(r->tools[i].data_class, sizeof r->tools[i].data_class,
			      class_name(&c->classes, c->tools[i].data_class));
		r->tools[i].approved = g.approved[i];
	}
}

static struct slot *
slot_new(struct supervisor *s, const struct airlock_config *cfg, struct al_err *err)
{
	struct slot *sl;

	if (cfg->n_tools > GATE_TOOLS_MAX) {
		al_fail(err, "supervisor: too many tools for the gate");
		return NULL;
	}
	sl = calloc(1, sizeof *sl);
	if (!sl) {
		al_fail(err, "supervisor: out of memory");
		return NULL;
	}
	sl->sup = s;
	sl->cfg = cfg;
	if (id_random(sl->id, sizeof sl->id, "s-", 8) < 0) {
		free(sl);
		al_fail(err, "supervisor: no randomness for a session id");
		return NULL;
	}
	if (slot_gate(sl) < 0) {
		free(sl);
		al_fail(err, "supervisor: cannot set up the policy gate");
		return NULL;
	}
	sl->started_mono_ms = clock_mono_ms();
	slot_row(sl);
	return sl;
}

void
sup_slot_free(struct slot *sl)
{
	gate_free(sl->gate);
	if (sl->owned_cfg) {
		config_free(sl->owned_cfg);
		free(sl->owned_cfg);
	}
	free(sl);
}

/* Under s->lock: remove slot i (ended and joined) from the list. */
static struct slot *
slot_unlink(struct supervisor *s, size_t i)
{
	struct slot *sl = s->slots[i];

	memmove(&s->slots[i], &s->slots[i + 1], (s->n_slots - i - 1) * sizeof s->slots[0]);
	s->n_slots--;
	s->forgotten_total++;
	s->generation++;
	return sl;
}

void
sup_slot_join(struct slot *sl)
{
	if (sl->thread_started && !sl->joined)
		pthread_join(sl->thread, NULL);
	sl->joined = true;
}

/* Under s->lock: the oldest ended slot, or SIZE_MAX. */
static size_t
oldest_ended(const struct supervisor *s)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (s->slots[i]->ended)
			return i;
	return SIZE_MAX;
}

/* Under s->policy: make room by forgetting the oldest ended session. */
static int
make_room(struct supervisor *s)
{
	struct slot *sl = NULL;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (s->n_slots < SUPERVISOR_SESSIONS_MAX) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	i = oldest_ended(s);
	if (i != SIZE_MAX)
		sl = slot_unlink(s, i);
	pthread_mutex_unlock(&s->lock);
	if (!sl)
		return -1;
	sup_slot_join(sl);	/* ended: the worker is returning */
	sup_slot_free(sl);
	return 0;
}

/*
 * Every supervisor thread is started with all signals blocked: SIGWINCH,
 * SIGINT and the rest belong to the console's UI thread.
 */
int
sup_spawn(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static int
spawn_worker(struct slot *sl)
{
	int rc = sup_spawn(&sl->thread, NULL, worker_main, sl);

	sl->thread_started = rc == 0;
	return rc;
}

/* A worker that could not start: the session ends without a normal end. */
static void
worker_failed(struct supervisor *s, struct slot *sl)
{
	pthread_mutex_lock(&s->lock);
	sl->row.end = SESSION_END_WORKER_FAILED;
	sup_copy_word(sl->row.reason, sizeof sl->row.reason, "cannot start a worker thread");
	sl->ended = true;
	sl->joined = true;
	sl->row.state = SESSION_STATE_ENDED;
	sup_state_events(s, sl, SESSION_STATE_ENDED);
	sl->row.generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/*
 * Under s->policy, before the slot is listed (so before any cutover can
 * reach it, and before its worker runs): the standing revocations, as one
 * update at the engine's revision, and a policy entry for each tool.
 */
void
sup_start_standing(struct supervisor *s, struct slot *sl)
{
	struct policy_entry p = { .revision = s->revision };
	bool allowed[GATE_TOOLS_MAX];
	int revoked[SUPERVISOR_STANDING_MAX];
	struct gate_state g;
	struct gate_ack ack;
	size_t i, n = 0;
	int t;

	gate_state(sl->gate, &g);
	memcpy(allowed, g.allowed, sizeof allowed);
	for (i = 0; i < s->n_standing; i++) {
		t = config_tool_index(sl->cfg, s->standing[i]);
		if (t >= 0 && allowed[t]) {
			allowed[t] = false;
			revoked[n++] = t;
		}
	}
	if (n == 0)
		return;
	/* Idle and fresh, its gate applies it at once; a refusal closes it. */
	gate_update(sl->gate, s->revision, allowed, g.n_tools, &ack);
	sup_copy_word(p.session, sizeof p.session, sl->id);
	p.result = ack_result(ack.verdict);
	snprintf(p.rule, sizeof p.rule, "%s at start", cutover_op_id(CUTOVER_REVOKE));
	for (i = 0; i < n; i++) {
		sup_copy_word(p.tool, sizeof p.tool, sl->cfg->tools[revoked[i]].name);
		policy_record(s, &p);
	}
}

static int
start_slot(struct supervisor *s, struct slot *sl, char session_id[SNAP_ID_MAX],
	   struct al_err *err)
{
	pthread_mutex_lock(&s->policy);
	if (make_room(s) < 0) {
		pthread_mutex_unlock(&s->policy);
		sup_slot_free(sl);
		return al_fail(err, "supervisor: %d sessions live, none ended to make room",
			       SUPERVISOR_SESSIONS_MAX);
	}
	sup_start_standing(s, sl);
	pthread_mutex_lock(&s->lock);
	s->slots[s->n_slots++] = sl;
	s->started_total++;
	sup_state_events(s, sl, SESSION_STATE_QUEUED);
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->policy);
	memcpy(session_id, sl->id, SNAP_ID_MAX);
	if (spawn_worker(sl) != 0) {
		worker_failed(s, sl);
		return al_fail(err, "supervisor: cannot start a worker thread");
	}
	sup_wake(s);
	return 0;
}

int
supervisor_start(struct supervisor *s, const struct airlock_config *cfg,
		 char session_id[SNAP_ID_MAX], struct al_err *err)
{
	struct slot *sl = slot_new(s, cfg, err);

	if (!sl)
		return -1;
	return start_slot(s, sl, session_id, err);
}

int
supervisor_start_file(struct supervisor *s, const char *path,
		      char session_id[SNAP_ID_MAX], struct al_err *err)
{
	struct airlock_config *cfg = calloc(1, sizeof *cfg);
	struct slot *sl;

	if (!cfg)
		return al_fail(err, "supervisor: out of memory");
	config_init(cfg);
	if (config_load_file(cfg, path, config_host_cores(), err) < 0) {
		config_free(cfg);
		free(cfg);
		return -1;
	}
	sl = slot_new(s, cfg, err);
	if (!sl) {
		config_free(cfg);
		free(cfg);
		return -1;
	}
	sl->owned_cfg = cfg;
	return start_slot(s, sl, session_id, err);
}

/* Under s->lock. */
struct slot *
sup_find(struct supervisor *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (strcmp(s->slots[i]->id, id) == 0)
			return s->slots[i];
	return NULL;
}

struct stopper {
	struct supervisor *sup;
	char docker_host[256];
	bool has_host;
	char container[SNAP_CONTAINER_MAX];
};

/* Its own connection: the worker may be blocked on its own, mid-step. */
static void *
stopper_main(void *arg)
{
	struct stopper *st = arg;
	struct al_err err;
	struct docker *d = preflight_connect(st->has_host ? st->docker_host : NULL, &err);

	if (d && docker_stop(d, st->container, 0, &err) < 0)
		docker_kill(d, st->container, "KILL", &err);
	docker_close(d);
	atomic_fetch_sub(&st->sup->stoppers, 1);
	free(st);
	return NULL;
}

static void
stop_container_now(struct supervisor *s, const char *container)
{
	struct stopper *st = calloc(1, sizeof *st);
	pthread_attr_t attr;
	pthread_t t;

	if (!st)
		return;		/* the worker still stops it at its next step */
	st->sup = s;
	st->has_host = s->o.docker_host != NULL;
	sup_copy_word(st->docker_host, sizeof st->docker_host, s->o.docker_host);
	sup_copy_word(st->container, sizeof st->container, container);
	atomic_fetch_add(&s->stoppers, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (sup_spawn(&t, &attr, stopper_main, st) != 0) {
		atomic_fetch_sub(&s->stoppers, 1);
		free(st);
	}
	pthread_attr_destroy(&attr);
}

int
supervisor_stop_session(struct supervisor *s, const char *session_id)
{
	char container[SNAP_CONTAINER_MAX] = "";
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = sup_find(s, session_id);
	if (sl && !sl->ended) {
		struct supervisor_event e = { .kind = SUPERVISOR_EVENT_STOP_REQUESTED };

		/* The flag first: every symptom of the stop then names its cause. */
		atomic_store(&sl->stop, true);
		sup_copy_word(container, sizeof container, sl->row.container);
		sup_push(s, sl, &e);
	}
	pthread_mutex_unlock(&s->lock);
	if (!sl || sl->ended)
		return -1;
	if (container[0])
		stop_container_now(s, container);
	sup_wake(s);
	return 0;
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
cutover_remember(struct supervisor *s, enum cutover_op op, const char *tool)
{
	struct cutover *c = &s->cutovers[s->n_cutovers++ % SUPERVISOR_CUTOVERS_MAX];

	c->revision = s->revision;
	c->op = op;
	sup_copy_word(c->tool, sizeof c->tool, tool);
}

/*
 * Under s->policy: a cutover on every session moves the standing set (a
 * restore lifts the tool, a revoke adds it). -1 when it is full.
 */
static int
standing_change(struct supervisor *s, enum cutover_op op, const char *tool)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_standing && strcmp(s->standing[i], tool) != 0; i++)
		;
	if (op == CUTOVER_RESTORE && i < s->n_standing) {
		s->n_standing--;
		memmove(s->standing[i], s->standing[i + 1],
			(s->n_standing - i) * sizeof s->standing[0]);
	} else if (op == CUTOVER_REVOKE && i == s->n_standing) {
		if (s->n_standing == SUPERVISOR_STANDING_MAX)
			rc = -1;
		else
			sup_copy_word(s->standing[s->n_standing++], sizeof s->standing[0], tool);
	}
	s->generation += rc == 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int
supervisor_cutover(struct supervisor *s, enum cutover_op op, const char *tool,
		   const char *const *ids, size_t n_ids, int64_t *revision,
		   size_t *targets, struct al_err *err)
{
	struct slot *to[SUPERVISOR_SESSIONS_MAX];
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_CUTOVER, .op = op };
	size_t i, n = 0;

	if (!tool || !tool[0] || strlen(tool) >= SNAP_NAME_MAX)
		return al_fail(err, "cutover: no such tool name");
	/*
	 * Assigned and posted under one lock: two cutovers can never reach a
	 * gate out of order, so no valid cutover is ever stale.
	 */
	pthread_mutex_lock(&s->policy);
	if (!ids && standing_change(s, op, tool) < 0) {
		pthread_mutex_unlock(&s->policy);
		return al_fail(err, "cutover: %d tools already stand revoked on every session",
			       SUPERVISOR_STANDING_MAX);
	}
	s->revision++;
	cutover_remember(s, op, tool);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		if (!s->slots[i]->ended && targeted(s->slots[i], ids, n_ids))
			to[n++] = s->slots[i];
	e.revision = s->revision;
	e.count = (long)n;
	sup_copy_word(e.tool, sizeof e.tool, tool);
	sup_push(s, NULL, &e);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		gate_post(to[i]->gate, s->revision, config_tool_index(to[i]->cfg, tool),
			  op == CUTOVER_RESTORE);
	if (revision)
		*revision = s->revision;
	pthread_mutex_unlock(&s->policy);
	if (targets)
		*targets = n;
	sup_wake(s);
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
	struct update_job *jobs = calloc(SUPERVISOR_SESSIONS_MAX, sizeof *jobs);
	size_t i, n = 0;

	if (!jobs)
		return 0;
	pthread_mutex_lock(&s->policy);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots && n < cap; i++)
		if (!s->slots[i]->ended && targeted(s->slots[i], ids, n_ids))
			jobs[n++] = (struct update_job){ .slot = s->slots[i], .update = update };
	pthread_mutex_unlock(&s->lock);
	/* Concurrently: one session's in-flight call must not delay another's update. */
	for (i = 0; i < n; i++) {
		jobs[i].threaded = sup_spawn(&jobs[i].thread, NULL, update_main, &jobs[i]) == 0;
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

int
supervisor_forget(struct supervisor *s, const char *session_id)
{
	struct slot *sl = NULL;
	size_t i;

	pthread_mutex_lock(&s->policy);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		if (strcmp(s->slots[i]->id, session_id) == 0 && s->slots[i]->ended) {
			sl = slot_unlink(s, i);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->policy);
	if (!sl)
		return -1;
	sup_slot_join(sl);
	sup_slot_free(sl);
	sup_wake(s);
	return 0;
}

static void
host_fill(struct host_snapshot *h, const struct doctor_report *r, bool ok)
{
	const struct check_item *it;
	size_t i;

	h->passed = ok;
	h->at_ms = clock_wall_ms();
	sup_copy_word(h->endpoint, sizeof h->endpoint, r->socket);
	h->n = r->checks.n < SNAP_CHECKS_MAX ? r->checks.n : SNAP_CHECKS_MAX;
	for (i = 0; i < h->n; i++)
		h->items[i] = r->checks.items[i];
	it = check_list_find(&r->checks, "daemon_version");
	sup_copy_word(h->daemon_version, sizeof h->daemon_version, it ? it->observed : "");
}

static void *
host_main(void *arg)
{
	struct supervisor *s = arg;
	struct doctor_report r;
	bool ok = doctor_run(s->o.docker_host, s->host_runtime, &r);

	pthread_mutex_lock(&s->lock);
	host_fill(&s->host, &r, ok);
	sup_copy_word(s->host.runtime, sizeof s->host.runtime, s->host_runtime);
	s->host.running = false;
	s->host.generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	doctor_report_free(&r);
	sup_wake(s);
	return NULL;
}

int
supervisor_host_refresh(struct supervisor *s, const char *runtime)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (s->host.running) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (s->host_started)
		pthread_join(s->host_thread, NULL);	/* finished: it cleared running */
	s->host.running = true;
	s->host_run_ms = clock_mono_ms();
	sup_copy_word(s->host_runtime, sizeof s->host_runtime, runtime ? runtime : "runc");
	s->host_started = sup_spawn(&s->host_thread, NULL, host_main, s) == 0;
	if (!s->host_started) {
		s->host.running = false;
		rc = -1;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void
supervisor_host(struct supervisor *s, struct host_snapshot *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->host;
	pthread_mutex_unlock(&s->lock);
}

/* Is the session with this id still running? (Called without the lock.) */
static bool
keeper_session_live(const char *session_id, void *ctx)
{
	struct supervisor *s = ctx;
	struct slot *sl;
	bool live;

	pthread_mutex_lock(&s->lock);
	sl = sup_find(s, session_id);
	live = sl && !sl->ended;
	pthread_mutex_unlock(&s->lock);
	return live;
}

/*
 * A session ended: one whose container was left starts the sweep (at
 * once), and an end that points at the daemon asks for the host checks.
 */
void
sup_keeper_note_end(struct supervisor *s, const struct session_summary *sum)
{
	bool daemon = sum->container_left || sum->end == SESSION_END_PREFLIGHT_REFUSED ||
		      sum->end == SESSION_END_CONTAINER_FAILED ||
		      sum->end == SESSION_END_STREAM_FAILED;

	if (!daemon)
		return;
	pthread_mutex_lock(&s->lock);
	if (sum->container_left) {
		s->containers_left++;
		if (!s->sweep_due) {
			s->sweep_due = true;
			s->sweep_delay_ms = SUPERVISOR_SWEEP_FIRST_MS;
			s->sweep_at_ms = clock_mono_ms();
		}
		s->generation++;
	}
	s->host_kick = true;
	pthread_cond_signal(&s->keeper_cond);
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/* One sweep, without the lock. Returns with what it found recorded. */
void
sup_keeper_sweep(struct supervisor *s)
{
	struct reap_report r = { 0 };
	struct al_err err = { 0 };
	struct docker *d = preflight_connect(s->o.docker_host, &err);
	int rc = d ? reaper_sweep_own(d, keeper_session_live, s, &r, &err) : -1;
	size_t i;

	docker_close(d);
	pthread_mutex_lock(&s->lock);
	if (rc == 0)
		s->containers_left = r.failed;
	if (rc == 0 && r.failed == 0) {
		s->sweep_due = false;
		for (i = 0; i < s->n_slots; i++)
			if (s->slots[i]->ended && s->slots[i]->row.container_left) {
				s->slots[i]->row.container_left = false;
				s->slots[i]->row.generation++;
			}
	} else {
		s->sweep_delay_ms = s->sweep_delay_ms * 2 < SUPERVISOR_SWEEP_MAX_MS ?
				    s->sweep_delay_ms * 2 : SUPERVISOR_SWEEP_MAX_MS;
		s->sweep_at_ms = clock_mono_ms() + s->sweep_delay_ms;
		s->host_kick = true;
	}
	if (rc == 0 && (r.reaped || r.failed)) {
		struct supervisor_event e = { .kind = SUPERVISOR_EVENT_SWEEP, .count = (long)r.reaped };

		snprintf(e.reason, sizeof e.reason, "%zu removed, %zu failed", r.reaped, r.failed);
		sup_push(s, NULL, &e);
	}
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/*
 * Under the lock: should the keeper run the host checks now? Only once
 * somebody asked for them (the console does at start): after an end that
 * pointed at the daemon, or while they fail; never more often than the
 * intervals. next: when to look again.
 */
static bool
keeper_host_due(struct supervisor *s, int64_t now, int64_t *next)
{
	int64_t at;

	if (!s->host_run_ms || s->host.running)
		return false;
	if (s->host_kick) {
		at = s->host_run_ms + SUPERVISOR_HOST_KICK_MS;
	} else if (s->host.at_ms && !s->host.passed) {
		at = s->host_run_ms + SUPERVISOR_HOST_FAILING_MS;
	} else {
		return false;
	}
	if (now >= at)
		return true;
	if (at < *next)
		*next = at;
	return false;
}

static void
keeper_wait(struct supervisor *s, int64_t until_ms)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ms / 1000),
			       .tv_nsec = (long)(until_ms % 1000) * 1000000L };

	pthread_cond_timedwait(&s->keeper_cond, &s->lock, &ts);
}

static void *
keeper_main(void *arg)
{
	struct supervisor *s = arg;
	char runtime[sizeof s->host_runtime];

	pthread_mutex_lock(&s->lock);
	while (!s->keeper_quit) {
		int64_t now = clock_mono_ms(), next = now + SUPERVISOR_HOST_FAILING_MS;

		if (s->sweep_due && now >= s->sweep_at_ms) {
			pthread_mutex_unlock(&s->lock);
			sup_keeper_sweep(s);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (keeper_host_due(s, now, &next)) {
			s->host_kick = false;
			sup_copy_word(runtime, sizeof runtime, s->host_runtime[0] ? s->host_runtime : "runc");
			pthread_mutex_unlock(&s->lock);
			supervisor_host_refresh(s, runtime);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (s->sweep_due && s->sweep_at_ms < next)
			next = s->sweep_at_ms;
		keeper_wait(s, next);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int
sup_keeper_start(struct supervisor *s)
{
	pthread_condattr_t at;

	if (pthread_condattr_init(&at) != 0)
		return -1;
	if (pthread_condattr_setclock(&at, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&s->keeper_cond, &at) != 0) {
		pthread_condattr_destroy(&at);
		return -1;
	}
	pthread_condattr_destroy(&at);
	s->keeper_cond_made = true;
	s->keeper_started = sup_spawn(&s->keeper, NULL, keeper_main, s) == 0;
	return s->keeper_started ? 0 : -1;
}

void
sup_keeper_stop(struct supervisor *s)
{
	if (!s->keeper_started)
		return;
	pthread_mutex_lock(&s->lock);
	s->keeper_quit = true;
	pthread_cond_signal(&s->keeper_cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->keeper, NULL);
	s->keeper_started = false;
}

size_t
supervisor_live(struct supervisor *s)
{
	size_t i, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		n += !s->slots[i]->ended;
	pthread_mutex_unlock(&s->lock);
	return n;
}

uint64_t
supervisor_audit_failures(struct supervisor *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->audit_failures;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void
reaped_event(struct supervisor *s, const struct reap_report *r)
{
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_REAPER, .count = (long)r->reaped };

	if (r->reaped == 0 && r->failed == 0)
		return;
	snprintf(e.reason, sizeof e.reason, "%zu removed, %zu failed", r->reaped, r->failed);
	pthread_mutex_lock(&s->lock);
	sup_push(s, NULL, &e);
	pthread_mutex_unlock(&s->lock);
}

static int
reap(struct supervisor *s, struct reap_report *out, struct al_err *err)
{
	struct reap_report scratch = { 0 };
	struct reap_report *r = out ? out : &scratch;
	struct docker *d = preflight_connect(s->o.docker_host, err);
	int rc;

	if (!d)
		return -1;
	rc = reaper_run(d, r, err);
	docker_close(d);
	if (rc == 0)
		reaped_event(s, r);
	return rc;
}

int
supervisor_open(const struct supervisor_options *o, struct supervisor **out,
		struct reap_report *reaped, struct al_err *err)
{
	struct supervisor *s;

	*out = NULL;
	if (!o->audit)
		return al_fail(err, "supervisor: an audit log is required");
	s = calloc(1, sizeof *s);
	if (!s)
		return al_fail(err, "supervisor: out of memory");
	s->o = *o;
	sup_rings_init(s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->policy, NULL);
	pthread_cond_init(&s->writer_cond, NULL);
	sem_init(&s->launch_slots, 0, SUPERVISOR_LAUNCH_PARALLEL);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->writer_started = sup_spawn(&s->writer, NULL, sup_writer_main, s) == 0;
	if (s->wake < 0 || !s->writer_started || sup_keeper_start(s) < 0) {
		supervisor_close(s);
		return al_fail(err, "supervisor: cannot create the wake descriptor, the writer or"
			       " the keeper");
	}
	if (o->reap_at_start && reap(s, reaped, err) < 0) {
		supervisor_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

static void
stop_all(struct supervisor *s)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		atomic_store(&s->slots[i]->stop, true);
	pthread_mutex_unlock(&s->lock);
}

/* Workers are joined without the lock: their hooks take it on the way out. */
static void
join_all(struct supervisor *s)
{
	struct slot *to[SUPERVISOR_SESSIONS_MAX];
	size_t i, n;

	pthread_mutex_lock(&s->policy);
	pthread_mutex_lock(&s->lock);
	n = s->n_slots;
	memcpy(to, s->slots, n * sizeof to[0]);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		sup_slot_join(to[i]);
	pthread_mutex_unlock(&s->policy);
}

/* Containers this process still owns, by label. */
static int
owned_left(struct supervisor *s)
{
	char label[64];
	struct al_err err;
	struct docker *d = preflight_connect(s->o.docker_host, &err);
	json_t *list = NULL;
	int n;

	if (!d)
		return -1;
	snprintf(label, sizeof label, "%s=%ld", LABEL_OWNER_PID, (long)getpid());
	n = docker_list_by_label(d, label, &list, &err) < 0 ? -1 : (int)json_array_size(list);
	json_decref(list);
	docker_close(d);
	return n;
}

static void
wait_stoppers(struct supervisor *s)
{
	int i;

	/*
	 * Each makes at most three Docker calls (connect, stop, kill), each
	 * bounded by the Docker timeout; wait a little longer than all three.
	 */
	for (i = 0; i < (3 * DOCKER_TIMEOUT_MS + 5000) / 10 && atomic_load(&s->stoppers) > 0; i++)
		usleep(10 * 1000);
}

int
supervisor_shutdown(struct supervisor *s)
{
	bool due;

	stop_all(s);
	join_all(s);
	wait_stoppers(s);
	sup_keeper_stop(s);
	pthread_mutex_lock(&s->lock);
	due = s->sweep_due;
	pthread_mutex_unlock(&s->lock);
	if (due)
		sup_keeper_sweep(s);	/* one last try: every session has ended */
	return owned_left(s);
}

void
sup_writer_stop(struct supervisor *s)
{
	if (!s->writer_started)
		return;
	pthread_mutex_lock(&s->lock);
	s->writer_quit = true;
	pthread_cond_signal(&s->writer_cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->writer, NULL);
	s->writer_started = false;
}

void
supervisor_close(struct supervisor *s)
{
	size_t i;

	if (!s)
		return;
	stop_all(s);
	join_all(s);
	wait_stoppers(s);
	sup_keeper_stop(s);
	if (s->host_started)
		pthread_join(s->host_thread, NULL);
	sup_writer_stop(s);
	for (i = 0; i < s->n_slots; i++)
		sup_slot_free(s->slots[i]);
	if (s->wake >= 0)
		close(s->wake);
	pthread_cond_destroy(&s->writer_cond);
	if (s->keeper_cond_made)
		pthread_cond_destroy(&s->keeper_cond);
	pthread_mutex_destroy(&s->policy);
	pthread_mutex_destroy(&s->lock);
	sem_destroy(&s->launch_slots);
	free(s);
}
