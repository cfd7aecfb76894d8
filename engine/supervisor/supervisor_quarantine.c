/*
 * Quarantine (issue 43, item 3): one session held for an operator. Its
 * gate denies every call `quarantined` at once (gate_set_quarantined);
 * its container is paused over a Docker connection of its own and kept,
 * past its session deadline (the session's clock stops while it is held:
 * engine/session), until a release (unpaused, the gate as it was) or a
 * stop. The lease is untouched: the watchdog still stops a held
 * container within its lease when the engine dies.
 *
 * One freezer thread a slot at most: it pauses or unpauses, then looks at
 * what the slot wants now and goes again until the two agree, so a
 * release that overtakes a pause still ends unpaused. A pause the daemon
 * refuses is written down and shown ("pause failed"); the gate denies
 * every call all the same (fail closed).
 *
 * The keeper looks at each paused container every QUARANTINE_LOOK_MS: one
 * the daemon says runs unpaused was unpaused outside airlock (`docker
 * unpause` by whoever holds the daemon's socket). The operator's decision
 * stands: it is paused again, written down and announced.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "docker.h"
#include "preflight.h"
#include "hold.h"
#include "quarantine.h"

#define FREEZER_ROUNDS	8	/* a quarantine and a release overtaking each other */
#define QUARANTINE_LOOK_MS	2000	/* how often the paused containers are looked at */

struct freezer {
	struct supervisor *sup;
	char docker_host[256];
	bool has_host;
	bool want;			/* pause (true) or unpause */
	char id[SNAP_ID_MAX];
	char container[SNAP_CONTAINER_MAX];
};

/* Under s->lock: the row changed; consoles see it at their next snapshot. */
static void
quar_changed(struct supervisor *s, struct slot *sl)
{
	sl->row.generation++;
	s->generation++;
}

/* Under s->lock: a quarantine, a release (by its author) or a failed pause, as an event. */
static void
quar_event(struct supervisor *s, struct slot *sl, enum event_kind kind,
	   const struct snap_author *by, const char *what)
{
	struct supervisor_event e = { .kind = kind };

	if (by)
		e.by = *by;
	if (what)
		sup_copy_word(e.reason, sizeof e.reason, what);
	sup_push(s, sl, &e);
}

/* Under s->lock: the slot id names, while it runs. */
static struct slot *
live_slot(struct supervisor *s, const char *id)
{
	struct slot *sl = sup_find(s, id);

	return sl && !sl->ended ? sl : NULL;
}

/*
 * Under s->lock, after an op: true when the slot wants what was done (or
 * is gone); else false and *want the next op. The outcome is kept.
 */
static bool
freezer_settle(struct supervisor *s, const struct freezer *f, bool did, bool ok, bool *want)
{
	struct slot *sl = live_slot(s, f->id);

	if (!sl)
		return true;
	if (sl->quar.on != did) {
		*want = sl->quar.on;
		sl->quar_pause = *want ? QUARANTINE_PAUSE_PAUSING : QUARANTINE_PAUSE_NONE;
		quar_changed(s, sl);
		return false;
	}
	if (did && ok)
		pthread_cond_signal(&s->keeper_cond);	/* its looks start now */
	if (did)
		sl->quar_pause = ok ? QUARANTINE_PAUSE_PAUSED : QUARANTINE_PAUSE_FAILED;
	else
		sl->quar_pause = QUARANTINE_PAUSE_NONE;
	if (!ok)	/* the daemon's words stay out: which op it refused, no more */
		quar_event(s, sl, SUPERVISOR_EVENT_PAUSE_FAILED, NULL, did ? "pause" : "unpause");
	sl->freezer_busy = false;
	quar_changed(s, sl);
	return true;
}

/* Under nothing: the freezer gave up (rounds spent); the slot may start another. */
static void
freezer_done(struct supervisor *s, const struct freezer *f)
{
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = live_slot(s, f->id);
	if (sl) {
		sl->freezer_busy = false;
		if (sl->quar.on) {
			sl->quar_pause = QUARANTINE_PAUSE_FAILED;
			quar_event(s, sl, SUPERVISOR_EVENT_PAUSE_FAILED, NULL, "pause");
		}
		quar_changed(s, sl);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *
freezer_main(void *arg)
{
	struct freezer *f = arg;
	struct supervisor *s = f->sup;
	struct al_err err;
	struct docker *d = preflight_connect(f->has_host ? f->docker_host : NULL, &err);
	bool want = f->want, done = false, ok;
	int round;

	for (round = 0; !done && round < FREEZER_ROUNDS; round++) {
		ok = d && (want ? docker_pause(d, f->container, &err)
				: docker_unpause(d, f->container, &err)) == 0;
		if (!ok)	/* the engine's own entry: the daemon's words stay out */
			supervisor_record(s, NULL, f->id, NULL, CUTOVER_REJECTED,
					  want ? "quarantine: pause failed"
					       : "release: unpause failed");
		pthread_mutex_lock(&s->lock);
		done = freezer_settle(s, f, want, ok, &want);
		pthread_mutex_unlock(&s->lock);
		sup_wake(s);
	}
	if (!done)
		freezer_done(s, f);
	docker_close(d);
	atomic_fetch_sub(&s->stoppers, 1);
	free(f);
	return NULL;
}

/* Under s->lock: no freezer could start; a quarantine's pause failed, a release has none. */
static void
freezer_failed(struct supervisor *s, struct slot *sl)
{
	sl->quar_pause = sl->quar.on ? QUARANTINE_PAUSE_FAILED : QUARANTINE_PAUSE_NONE;
	if (sl->quar.on)
		quar_event(s, sl, SUPERVISOR_EVENT_PAUSE_FAILED, NULL, "pause");
}

/* Under s->lock: start sl's freezer toward what it wants now. */
static void
freezer_start(struct supervisor *s, struct slot *sl)
{
	struct freezer *f = calloc(1, sizeof *f);
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (!f) {
		freezer_failed(s, sl);
		return;
	}
	f->sup = s;
	f->want = sl->quar.on;
	f->has_host = s->o.docker_host != NULL;
	sup_copy_word(f->docker_host, sizeof f->docker_host, s->o.docker_host);
	sup_copy_word(f->id, sizeof f->id, sl->id);
	sup_copy_word(f->container, sizeof f->container, sl->row.container);
	atomic_fetch_add(&s->stoppers, 1);	/* waited for like a stopper */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = thread_start(&t, &attr, freezer_main, f);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		atomic_fetch_sub(&s->stoppers, 1);
		free(f);
		freezer_failed(s, sl);
		return;
	}
	sl->freezer_busy = true;
	if (sl->quar.on)
		sl->quar_pause = QUARANTINE_PAUSE_PAUSING;
}

/*
 * Under s->lock: bring the container toward what sl wants. A running
 * freezer sees the change itself; a container not running yet is paused
 * once it runs (sup_quarantine_running); one never paused needs no
 * unpause.
 */
static void
quar_kick(struct supervisor *s, struct slot *sl, bool was_paused)
{
	if (sl->freezer_busy)
		return;
	if (!sl->quar.on) {
		sl->quar_pause = QUARANTINE_PAUSE_NONE;
		if (was_paused)
			freezer_start(s, sl);
		return;
	}
	if (sl->row.state == SESSION_STATE_RUNNING && sl->row.container[0])
		freezer_start(s, sl);
	else
		sl->quar_pause = QUARANTINE_PAUSE_WAITING;
}

void
sup_quarantine_running(struct supervisor *s, struct slot *sl)
{
	if (sl->quar.on && sl->quar_pause == QUARANTINE_PAUSE_WAITING && !sl->freezer_busy)
		quar_kick(s, sl, false);
}

/* Under s->lock: quarantine or release one slot; false when it was so already. */
static bool
quar_set(struct supervisor *s, struct slot *sl, bool on, const struct snap_author *by)
{
	bool was_paused;

	if (sl->ended || sl->quar.on == on)
		return false;
	was_paused = sl->quar_pause == QUARANTINE_PAUSE_PAUSED ||
		     sl->quar_pause == QUARANTINE_PAUSE_PAUSING;
	/* The gate first: from here on no call of this session is admitted. */
	gate_set_quarantined(sl->gate, on);
	sl->quar.on = on;
	sl->quar.since_ms = on ? clock_wall_ms() : 0;
	if (on)
		sl->quar.by = *by;
	else
		memset(&sl->quar.by, 0, sizeof sl->quar.by);
	/* The event before the freezer's: a pause refused at once follows its quarantine. */
	quar_event(s, sl, on ? SUPERVISOR_EVENT_QUARANTINE : SUPERVISOR_EVENT_RELEASE, by, NULL);
	quar_kick(s, sl, was_paused);
	quar_changed(s, sl);
	return true;
}

size_t
supervisor_quarantine(struct supervisor *s, bool on, const char *const *ids, size_t n_ids,
		      const struct snap_author *by, char (*done)[SNAP_ID_MAX], size_t cap)
{
	struct snap_author self;
	struct slot *sl;
	size_t i, n = 0, total = ids ? n_ids : 0;

	if (!by) {
		supervisor_author_self(&self, "engine");
		by = &self;
	}
	pthread_mutex_lock(&s->lock);
	if (!ids)
		total = s->n_slots;
	for (i = 0; i < total && n < cap; i++) {
		sl = ids ? sup_find(s, ids[i]) : s->slots[i];
		if (sl && quar_set(s, sl, on, by))
			memcpy(done[n++], sl->id, SNAP_ID_MAX);
	}
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		supervisor_record(s, by, done[i], NULL, CUTOVER_APPLIED,
				  on ? "quarantine" : "release");
	sup_wake(s);
	return n;
}

/* Is id among the n ids? */
static bool
id_among(const char *id, char (*ids)[SNAP_ID_MAX], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return true;
	return false;
}

size_t
supervisor_called_within(struct supervisor *s, const char *tool, int64_t within_ms,
			 char (*out)[SNAP_ID_MAX], size_t cap)
{
	int64_t now = clock_mono_ms();
	char (*held)[SNAP_ID_MAX] = calloc(HOLD_MAX, SNAP_ID_MAX);
	struct slot *sl;
	size_t i, t, n = 0, n_held;
	int alias;

	/* A call waiting on a hold called it just now: its row's counters come after. */
	n_held = held ? sup_hold_calling(s, tool, held, HOLD_MAX) : 0;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots && n < cap; i++) {
		sl = s->slots[i];
		if (sl->ended)
			continue;
		if (id_among(sl->id, held, n_held)) {
			memcpy(out[n++], sl->id, SNAP_ID_MAX);
			continue;
		}
		alias = config_alias_tool(sl->cfg, tool);	/* the tool its alias names here */
		for (t = 0; t < sl->cfg->n_tools && t < SNAP_TOOLS_MAX; t++)
			if ((strcmp(sl->cfg->tools[t].name, tool) == 0 || (int)t == alias) &&
			    quarantine_called_within(sl->row.counters.last_call_ms[t], now,
						     within_ms)) {
				memcpy(out[n++], sl->id, SNAP_ID_MAX);
				break;
			}
	}
	pthread_mutex_unlock(&s->lock);
	free(held);
	return n;
}

/* Under s->lock: what a row shows of sl's quarantine. */
void
sup_quarantine_row(const struct slot *sl, struct session_row *r)
{
	/* An ended session holds nothing any more: its row says so. */
	if (sl->ended) {
		memset(&r->quarantine, 0, sizeof r->quarantine);
		return;
	}
	r->quarantine = sl->quar;
	sup_copy_word(r->quarantine.pause, sizeof r->quarantine.pause,
		      quarantine_pause_word(sl->quar_pause));
}

/* ---- the keeper's look: a pause undone outside airlock ---- */

/* Under s->lock: a quarantined session whose container should be paused now. */
static bool
look_wanted(const struct slot *sl)
{
	return sl && !sl->ended && sl->quar.on && sl->quar_pause == QUARANTINE_PAUSE_PAUSED &&
	       !sl->freezer_busy && !atomic_load(&sl->stop) && sl->row.container[0];
}

bool
sup_quarantine_look_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms)
{
	int64_t at = s->quar_look_ms + QUARANTINE_LOOK_MS;
	size_t i;

	for (i = 0; i < s->n_slots && !look_wanted(s->slots[i]); i++)
		;
	if (i == s->n_slots)
		return false;
	if (now_ms >= at)
		return true;
	if (at < *next_ms)
		*next_ms = at;
	return false;
}

struct look {
	char id[SNAP_ID_MAX];
	char container[SNAP_CONTAINER_MAX];
	bool unpaused;
};

/* Does the daemon say the container runs unpaused? No answer: no verdict. */
static bool
runs_unpaused(struct docker *d, const char *container)
{
	struct al_err err;
	json_t *in = NULL, *state;
	bool unpaused;

	if (docker_inspect(d, container, &in, &err) < 0)
		return false;
	state = json_object_get(in, "State");
	unpaused = json_is_true(json_object_get(state, "Running")) &&
		   json_is_false(json_object_get(state, "Paused"));
	json_decref(in);
	return unpaused;
}

void
sup_quarantine_look(struct supervisor *s)
{
	struct look *v;
	struct docker *d;
	struct al_err err;
	struct slot *sl;
	size_t i, n = 0;

	pthread_mutex_lock(&s->lock);
	s->quar_look_ms = clock_mono_ms();
	v = calloc(s->n_slots ? s->n_slots : 1, sizeof *v);
	for (i = 0; v && i < s->n_slots; i++)
		if (look_wanted(s->slots[i])) {
			sup_copy_word(v[n].id, sizeof v[n].id, s->slots[i]->id);
			sup_copy_word(v[n].container, sizeof v[n].container,
				      s->slots[i]->row.container);
			n++;
		}
	pthread_mutex_unlock(&s->lock);
	if (n == 0 || !(d = preflight_connect(s->o.docker_host, &err))) {
		free(v);
		return;
	}
	for (i = 0; i < n; i++)
		v[i].unpaused = runs_unpaused(d, v[i].container);
	docker_close(d);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++) {
		sl = sup_find(s, v[i].id);
		/* Still held, by nobody's freezer: else the op under way decides. */
		v[i].unpaused = v[i].unpaused && look_wanted(sl);
		if (!v[i].unpaused)
			continue;
		quar_event(s, sl, SUPERVISOR_EVENT_UNPAUSED, NULL, NULL);
		freezer_start(s, sl);
		quar_changed(s, sl);
	}
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)
		if (v[i].unpaused)
			supervisor_record(s, NULL, v[i].id, NULL, CUTOVER_REJECTED,
					  "quarantine: unpaused outside airlock");
	free(v);
	sup_wake(s);
}
