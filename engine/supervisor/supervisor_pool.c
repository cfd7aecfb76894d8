/*
 * The warm pools (docs/guarantees.md, "Pooled sessions"): one per profile
 * key, each keeping its size of containers launched (engine/sandbox/warm.h) and
 * waiting. One thread, the filler, refills them off the claim's path
 * (each launch on a thread of its own, within the launch limit) and
 * discards what aged, lost its lease or exited; a session's worker claims
 * from them (engine/session/session.c runs the second admission). The bookkeeping
 * is engine/sandbox/pool.c's.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "docker.h"
#include "ids.h"
#include "mutant.h"
#include "preflight.h"
#include "warm.h"

#define POOL_TICK_MS		250	/* the filler's pace: ages, leases */
#define POOL_INSPECT_MS		1000	/* how often a ready container's state is read */

/* Under pool_lock: the bookkeeping's view of p. */
static void
entries(struct sup_pool *p, struct pool_entry e[POOL_SIZE_MAX])
{
	size_t i;

	for (i = 0; i < POOL_SIZE_MAX; i++)
		e[i] = (struct pool_entry){
			.state = p->m[i].state,
			.ready_ms = p->m[i].ready_ms,
			.lease_failed = p->m[i].w && !warm_lease_ok(p->m[i].w),
			.exited = p->m[i].exited,
		};
}

/* Under pool_lock. */
static struct sup_pool *
pool_find(struct supervisor *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_pools; i++)
		if (strcmp(s->pools[i]->key, key) == 0)
			return s->pools[i];
	return NULL;
}

/* ---- a launch ---- */

/* A launch slot, shared with the sessions' own launches; false at shutdown. */
static bool
slot_take(struct supervisor *s)
{
	while (!atomic_load(&s->pool_quit)) {
		struct timespec ts = clock_deadline(CLOCK_REALTIME, 100);	/* sem_timedwait's clock */

		if (sem_timedwait(&s->launch_slots, &ts) == 0)
			return true;
	}
	return false;
}

static void *
launcher_main(void *arg)
{
	struct pool_member *m = arg;
	struct sup_pool *p = m->pool;
	struct supervisor *s = p->sup;
	struct warm_options o = {
		.profile = &p->profile,
		.docker_host = s->o.docker_host,
		.watchdog_exe = s->o.watchdog_exe,
		.label = m->label,
	};
	struct warm *w = NULL;
	struct al_err err;

	if (slot_take(s)) {
		warm_launch(&o, &w, &err);
		sem_post(&s->launch_slots);
	}
	pthread_mutex_lock(&s->pool_lock);
	m->got = w;
	m->done = true;
	pthread_cond_signal(&s->pool_cond);
	pthread_mutex_unlock(&s->pool_lock);
	return NULL;
}

/* Under pool_lock: start warming member m. */
static void
warm_start(struct sup_pool *p, struct pool_member *m)
{
	m->pool = p;
	if (id_random(m->label, sizeof m->label, "p-", 8) < 0)
		return;
	m->state = POOL_WARMING;
	m->done = false;
	m->got = NULL;
	m->exited = false;
	m->container[0] = '\0';
	m->thread_live = thread_start(&m->thread, NULL, launcher_main, m) == 0;
	if (!m->thread_live) {
		m->state = POOL_EMPTY;
		p->failed++;
	}
}

/* Under pool_lock: a launch that returned becomes ready, or a failure. */
static void
warm_settle(struct supervisor *s, struct sup_pool *p, struct pool_member *m)
{
	pthread_mutex_unlock(&s->pool_lock);
	pthread_join(m->thread, NULL);	/* it has returned: a short wait */
	pthread_mutex_lock(&s->pool_lock);
	m->thread_live = false;
	m->w = m->got;
	m->got = NULL;
	m->state = m->w ? POOL_READY : POOL_EMPTY;
	m->ready_ms = clock_mono_ms();
	p->failed += m->w == NULL;
	if (m->w)
		sup_copy_word(m->container, sizeof m->container, warm_container_id(m->w));
}

/* ---- the filler ---- */

/* Under pool_lock: take out what must go; the caller discards it unlocked. */
static size_t
cull(struct supervisor *s, struct warm **out, size_t cap)
{
	struct pool_entry e[POOL_SIZE_MAX];
	int64_t now = clock_mono_ms();
	size_t i, k, n = 0;

	for (i = 0; i < s->n_pools; i++) {
		struct sup_pool *p = s->pools[i];

		entries(p, e);
		for (k = 0; k < POOL_SIZE_MAX && n < cap; k++) {
			if (pool_judge(&e[k], now, p->max_age_ms) == POOL_KEEP)
				continue;
			out[n++] = p->m[k].w;
			p->m[k].w = NULL;
			p->m[k].state = POOL_EMPTY;
			p->discarded++;
		}
	}
	return n;
}

/* Under pool_lock: settle finished launches, start the ones each pool lacks. */
static void
refill(struct supervisor *s)
{
	struct pool_entry e[POOL_SIZE_MAX];
	size_t i, k, want;

	for (i = 0; i < s->n_pools; i++) {
		struct sup_pool *p = s->pools[i];

		for (k = 0; k < POOL_SIZE_MAX; k++)
			if (p->m[k].state == POOL_WARMING && p->m[k].done)
				warm_settle(s, p, &p->m[k]);
		entries(p, e);
		want = pool_to_warm(e, POOL_SIZE_MAX, p->size);
		for (k = 0; k < POOL_SIZE_MAX && want > 0; k++)
			if (p->m[k].state == POOL_EMPTY) {
				warm_start(p, &p->m[k]);
				want--;
			}
	}
}

/*
 * Without pool_lock: is each ready container still running? An exit (the
 * agent's own, or a stop by its watchdog) marks it, and the next cull
 * discards it. The claim's second admission reads it again anyway. The
 * test-only mutant "pool_unwatched" skips this, so a test meets a
 * container stopped and started again at the claim alone.
 */
static void
inspect_ready(struct supervisor *s)
{
	char ids[SUPERVISOR_POOLS_MAX * POOL_SIZE_MAX][SNAP_CONTAINER_MAX];
	bool running[SUPERVISOR_POOLS_MAX * POOL_SIZE_MAX];
	struct docker *d;
	struct al_err err;
	json_t *in;
	size_t i, k, n = 0;

	if (mutant("pool_unwatched"))
		return;
	pthread_mutex_lock(&s->pool_lock);
	for (i = 0; i < s->n_pools; i++)
		for (k = 0; k < POOL_SIZE_MAX; k++)
			if (s->pools[i]->m[k].state == POOL_READY)
				memcpy(ids[n++], s->pools[i]->m[k].container, SNAP_CONTAINER_MAX);
	pthread_mutex_unlock(&s->pool_lock);
	if (n == 0 || !(d = preflight_connect(s->o.docker_host, &err)))
		return;
	for (i = 0; i < n; i++) {
		in = NULL;
		running[i] = docker_inspect(d, ids[i], &in, &err) < 0 ||	/* no answer: no verdict */
			     json_is_true(json_object_get(json_object_get(in, "State"), "Running"));
		json_decref(in);
	}
	docker_close(d);
	pthread_mutex_lock(&s->pool_lock);
	for (i = 0; i < s->n_pools; i++)
		for (k = 0; k < POOL_SIZE_MAX; k++)
			for (size_t j = 0; j < n; j++)
				if (!running[j] && s->pools[i]->m[k].state == POOL_READY &&
				    strcmp(s->pools[i]->m[k].container, ids[j]) == 0)
					s->pools[i]->m[k].exited = true;
	pthread_mutex_unlock(&s->pool_lock);
}

static void
discard_all(struct warm **w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		warm_discard(w[i]);
}

static void
tick_wait(struct supervisor *s)
{
	struct timespec ts = clock_deadline(CLOCK_MONOTONIC, POOL_TICK_MS);

	pthread_cond_timedwait(&s->pool_cond, &s->pool_lock, &ts);
}

static void *
filler_main(void *arg)
{
	struct supervisor *s = arg;
	struct warm *gone[SUPERVISOR_POOLS_MAX * POOL_SIZE_MAX];
	int64_t inspected = 0;
	size_t n;

	pthread_mutex_lock(&s->pool_lock);
	while (!atomic_load(&s->pool_quit)) {
		n = cull(s, gone, sizeof gone / sizeof gone[0]);
		refill(s);
		pthread_mutex_unlock(&s->pool_lock);
		sup_wake(s);
		discard_all(gone, n);
		if (clock_mono_ms() - inspected >= POOL_INSPECT_MS) {
			inspect_ready(s);
			inspected = clock_mono_ms();
		}
		pthread_mutex_lock(&s->pool_lock);
		if (!atomic_load(&s->pool_quit))
			tick_wait(s);
	}
	pthread_mutex_unlock(&s->pool_lock);
	return NULL;
}

int
sup_pool_init(struct supervisor *s)
{
	pthread_mutex_init(&s->pool_lock, NULL);
	if (clock_cond_init(&s->pool_cond) < 0)
		return -1;
	s->pool_cond_made = true;
	return 0;
}

/* Under pool_lock: the filler, started with the first pool. */
static void
filler_start(struct supervisor *s)
{
	if (!s->pool_started)
		s->pool_started = thread_start(&s->pool_thread, NULL, filler_main, s) == 0;
}

/* Under pool_lock: a new pool for cfg's profile, or NULL. */
static struct sup_pool *
pool_new(struct supervisor *s, const struct airlock_config *cfg, const char *key)
{
	struct sup_pool *p;

	if (s->n_pools >= SUPERVISOR_POOLS_MAX || !(p = calloc(1, sizeof *p)))
		return NULL;
	if (profile_copy(&p->profile, &cfg->profile) < 0) {
		free(p);
		return NULL;
	}
	p->sup = s;
	memcpy(p->key, key, sizeof p->key);
	s->pools[s->n_pools++] = p;
	return p;
}

void
sup_pool_use(struct supervisor *s, struct slot *sl, const struct airlock_config *cfg)
{
	struct sup_pool *p;

	if (cfg->pool.size == 0 || !s->pool_cond_made || pool_key(&cfg->profile, sl->pool_key) < 0)
		return;
	pthread_mutex_lock(&s->pool_lock);
	p = atomic_load(&s->pool_quit) ? NULL : pool_find(s, sl->pool_key);
	if (!p && !atomic_load(&s->pool_quit))
		p = pool_new(s, cfg, sl->pool_key);
	if (p) {
		/* The latest session's config sizes it. */
		p->size = cfg->pool.size;
		p->max_age_ms = cfg->pool.max_age_ms;
		sl->pooled = true;
		filler_start(s);
		pthread_cond_signal(&s->pool_cond);
	}
	pthread_mutex_unlock(&s->pool_lock);
}

/* Under pool_lock: take p's best ready container, or NULL. */
static struct warm *
take(struct sup_pool *p)
{
	struct pool_entry e[POOL_SIZE_MAX];
	struct warm *w;
	int i;

	entries(p, e);
	i = pool_pick(e, POOL_SIZE_MAX, clock_mono_ms(), p->max_age_ms);
	if (i < 0)
		return NULL;
	w = p->m[i].w;
	p->m[i].w = NULL;
	p->m[i].state = POOL_EMPTY;
	p->claimed++;
	return w;
}

static struct warm *
claim(void *ctx)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct sup_pool *p;
	struct warm *w = NULL;

	pthread_mutex_lock(&s->pool_lock);
	p = pool_find(s, sl->pool_key);
	if (p && (w = take(p)) != NULL)
		pthread_cond_signal(&s->pool_cond);	/* refill, on the filler's thread */
	pthread_mutex_unlock(&s->pool_lock);
	if (!w)
		return NULL;
	pthread_mutex_lock(&s->lock);
	sup_copy_word(sl->pool_label, sizeof sl->pool_label, warm_label(w));
	pthread_mutex_unlock(&s->lock);
	return w;
}

/* A claimed container its second admission refused: stopped and removed now. */
static void
discard(void *ctx, struct warm *w)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct sup_pool *p;

	pthread_mutex_lock(&s->pool_lock);
	if ((p = pool_find(s, sl->pool_key)) != NULL) {
		p->claimed--;
		p->discarded++;
	}
	pthread_mutex_unlock(&s->pool_lock);
	warm_discard(w);
	pthread_mutex_lock(&s->lock);
	sl->pool_label[0] = '\0';
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

struct session_pool
sup_pool_hooks(struct slot *sl)
{
	if (!sl->pooled)
		return (struct session_pool){ 0 };
	return (struct session_pool){ .ctx = sl, .claim = claim, .discard = discard };
}

bool
sup_pool_label_live(struct supervisor *s, const char *label)
{
	bool live = false;
	size_t i, k;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots && !live; i++)
		live = !s->slots[i]->ended && strcmp(s->slots[i]->pool_label, label) == 0;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->pool_lock);
	for (i = 0; i < s->n_pools && !live; i++)
		for (k = 0; k < POOL_SIZE_MAX && !live; k++)
			live = s->pools[i]->m[k].state != POOL_EMPTY &&
			       strcmp(s->pools[i]->m[k].label, label) == 0;
	pthread_mutex_unlock(&s->pool_lock);
	return live;
}

void
sup_pool_snapshot(struct supervisor *s, struct supervisor_snapshot *snap)
{
	struct pool_entry e[POOL_SIZE_MAX];
	size_t i;

	pthread_mutex_lock(&s->pool_lock);
	snap->n_pools = s->n_pools;
	for (i = 0; i < s->n_pools; i++) {
		struct sup_pool *p = s->pools[i];
		struct snap_pool *o = &snap->pools[i];

		entries(p, e);
		memset(o, 0, sizeof *o);
		memcpy(o->key, p->key, SNAP_HASH_PREFIX);
		sup_copy_word(o->image, sizeof o->image, p->profile.image);
		sup_copy_word(o->runtime, sizeof o->runtime, p->profile.runtime);
		o->size = p->size;
		o->ready = (uint32_t)pool_count(e, POOL_SIZE_MAX, POOL_READY);
		o->warming = (uint32_t)pool_count(e, POOL_SIZE_MAX, POOL_WARMING);
		o->claimed = p->claimed;
		o->discarded = p->discarded;
		o->failed = p->failed;
	}
	pthread_mutex_unlock(&s->pool_lock);
}

/* Every launch joined, every container handed out for discarding. */
static size_t
drain_pool(struct sup_pool *p, struct warm **out)
{
	size_t k, n = 0;

	for (k = 0; k < POOL_SIZE_MAX; k++) {
		struct pool_member *m = &p->m[k];

		if (m->thread_live) {
			pthread_join(m->thread, NULL);	/* pool_quit: it returns soon */
			m->thread_live = false;
			m->w = m->got;	/* written before it returned */
			m->got = NULL;
		}
		if (m->w)
			out[n++] = m->w;
		m->w = NULL;
		m->state = POOL_EMPTY;
	}
	return n;
}

void
sup_pool_stop(struct supervisor *s)
{
	struct sup_pool *pools[SUPERVISOR_POOLS_MAX];
	struct warm *gone[POOL_SIZE_MAX];
	size_t i, n, n_pools;

	if (!s->pool_cond_made)
		return;
	pthread_mutex_lock(&s->pool_lock);
	atomic_store(&s->pool_quit, true);
	pthread_cond_broadcast(&s->pool_cond);
	n_pools = s->n_pools;
	memcpy(pools, s->pools, n_pools * sizeof pools[0]);
	s->n_pools = 0;		/* no claim, snapshot or refill sees them again */
	pthread_mutex_unlock(&s->pool_lock);
	if (s->pool_started)
		pthread_join(s->pool_thread, NULL);
	s->pool_started = false;
	for (i = 0; i < n_pools; i++) {
		n = drain_pool(pools[i], gone);
		discard_all(gone, n);
		profile_free(&pools[i]->profile);
		free(pools[i]);
	}
}
