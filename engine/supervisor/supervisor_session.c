/*
 * Sessions: a slot each, started on a worker thread of its own; force-stop
 * over a Docker connection of its own; forgetting an ended one.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "docker.h"
#include "err.h"
#include "gate.h"
#include "gateway.h"
#include "ids.h"
#include "policy.h"
#include "preflight.h"
#include "session.h"

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
		.cleanup_slots = &s->cleanup_slots,
		.pool = sup_pool_hooks(sl),
		.hold = &sl->hold,
	};

	sl->hold = sup_hold_hook(sl);
	session_run(&so, &sum);
	sup_hold_forget(s, sl);
	sup_keeper_note_end(s, &sum);
	return NULL;
}

/* The approved set: every tool an alias reaches, frozen now. */
static int
slot_gate(struct slot *sl)
{
	bool approved[GATE_TOOLS_MAX] = { false };
	struct gate_meter meter;
	size_t i;

	for (i = 0; i < sl->cfg->n_aliases; i++)
		approved[sl->cfg->aliases[i].tool] = true;
	for (i = 0; i < sl->cfg->n_tools; i++)
		sl->names[i] = sl->cfg->tools[i].name;
	sl->gate = gate_new(approved, sl->cfg->n_tools);
	if (!sl->gate)
		return -1;
	gate_set_ack(sl->gate, sup_on_gate_ack, sl);
	gate_set_declassify(sl->gate, sl->cfg->policy.declassify_by_hold);
	meter = sup_grant_meter(sl);
	gate_set_meter(sl->gate, &meter);
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
	sl->n_upstreams = gateway_upstream_plans(cfg, sl->upstreams, SNAP_UPSTREAMS_MAX);
	return sl;
}

void
sup_slot_free(struct slot *sl)
{
	gate_free(sl->gate);
	free(sl->first);
	free(sl->second);
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
	if (s->n_slots < s->o.sessions_max) {
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

static int
spawn_worker(struct slot *sl)
{
	int rc = thread_start(&sl->thread, NULL, worker_main, sl);

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

static int
start_slot(struct supervisor *s, struct slot *sl, char session_id[SNAP_ID_MAX],
	   struct al_err *err)
{
	pthread_mutex_lock(&s->policy);
	if (make_room(s) < 0) {
		pthread_mutex_unlock(&s->policy);
		sup_slot_free(sl);
		return al_fail(err, "supervisor: %zu sessions live, none ended to make room",
			       s->o.sessions_max);
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
	sup_pool_use(s, sl, cfg);
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
	cfg->upstreams_dir = s->o.upstreams_dir;
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
	sup_pool_use(s, sl, cfg);
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

/* Under s->lock: the slot typed names (an id or its unique prefix), or NULL with why. */
struct slot *
sup_pick(struct supervisor *s, const char *typed, struct al_err *err)
{
	struct id_pick k;
	size_t i;

	id_pick_init(&k, typed);
	for (i = 0; i < s->n_slots; i++)
		id_pick_offer(&k, s->slots[i]->id, i);
	if (id_pick_done(&k, err->msg, sizeof err->msg) < 0)
		return NULL;
	return s->slots[k.at];
}

/* Under s->lock: the whole id of each of the n sessions ids names, into to; -1 with why. */
int
sup_pick_ids(struct supervisor *s, const char *const *ids, size_t n, char (*to)[SNAP_ID_MAX],
	     struct al_err *err)
{
	struct slot *sl;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(sl = sup_pick(s, ids[i], err)))
			return -1;
		memcpy(to[i], sl->id, SNAP_ID_MAX);
	}
	return 0;
}

int
supervisor_session_id(struct supervisor *s, const char *typed, char id[SNAP_ID_MAX],
		      struct al_err *err)
{
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = sup_pick(s, typed, err);
	if (sl)
		memcpy(id, sl->id, SNAP_ID_MAX);
	pthread_mutex_unlock(&s->lock);
	return sl ? 0 : -1;
}

/* ---- force-stop ---- */

struct stopper {
	struct supervisor *sup;
	char docker_host[256];
	bool has_host;
	bool held;		/* quarantined: its container may be paused */
	char container[SNAP_CONTAINER_MAX];
};

/* Its own connection: the worker may be blocked on its own, mid-step. */
static void *
stopper_main(void *arg)
{
	struct stopper *st = arg;
	struct al_err err;
	struct docker *d = preflight_connect(st->has_host ? st->docker_host : NULL, &err);

	/*
	 * A paused container is unpaused first: runsc takes the daemon some
	 * 12 s to stop one still paused (runc none). Its gate still denies
	 * every call: whatever it sends in between is refused.
	 */
	if (d && st->held && docker_unpause(d, st->container, &err) < 0)
		al_err_clear(&err);
	if (d && docker_stop(d, st->container, 0, &err) < 0)
		docker_kill(d, st->container, "KILL", &err);
	docker_close(d);
	atomic_fetch_sub(&st->sup->stoppers, 1);
	free(st);
	return NULL;
}

static void
stop_container_now(struct supervisor *s, const char *container, bool held)
{
	struct stopper *st = calloc(1, sizeof *st);
	pthread_attr_t attr;
	pthread_t t;

	if (!st)
		return;		/* the worker still stops it at its next step */
	st->sup = s;
	st->has_host = s->o.docker_host != NULL;
	st->held = held;
	sup_copy_word(st->docker_host, sizeof st->docker_host, s->o.docker_host);
	sup_copy_word(st->container, sizeof st->container, container);
	atomic_fetch_add(&s->stoppers, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (thread_start(&t, &attr, stopper_main, st) != 0) {
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
	bool held = false;

	pthread_mutex_lock(&s->lock);
	sl = sup_find(s, session_id);
	if (sl && !sl->ended) {
		struct supervisor_event e = { .kind = SUPERVISOR_EVENT_STOP_REQUESTED };

		/* The flag first: every symptom of the stop then names its cause. */
		atomic_store(&sl->stop, true);
		sup_copy_word(container, sizeof container, sl->row.container);
		held = sl->quar.on;
		sup_push(s, sl, &e);
	}
	pthread_mutex_unlock(&s->lock);
	if (!sl || sl->ended)
		return -1;
	if (container[0])
		stop_container_now(s, container, held);
	sup_wake(s);
	return 0;
}

size_t
supervisor_stop_all(struct supervisor *s)
{
	char (*ids)[SNAP_ID_MAX] = calloc(SUPERVISOR_SESSIONS_MAX, SNAP_ID_MAX);
	size_t i, n = 0, stopped = 0;

	if (!ids)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		if (!s->slots[i]->ended)
			memcpy(ids[n++], s->slots[i]->id, SNAP_ID_MAX);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		stopped += supervisor_stop_session(s, ids[i]) == 0;
	free(ids);
	return stopped;
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
