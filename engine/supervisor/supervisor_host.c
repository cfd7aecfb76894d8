/*
 * Host checks (airlock doctor's, but for its runsc probe container; and one
 * per installed upstream) on a thread of their own, and the keeper: it
 * sweeps the containers ended sessions left, lapses grants, pauses again
 * a quarantined container unpaused outside airlock, and re-runs the host
 * checks after an end that points at the daemon and while they fail.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "checks.h"
#include "clock.h"
#include "docker.h"
#include "doctor.h"
#include "preflight.h"
#include "reaper.h"

#define SUPERVISOR_SWEEP_FIRST_MS	1000	/* then doubling, up to: */
#define SUPERVISOR_SWEEP_MAX_MS		30000
#define SUPERVISOR_HOST_KICK_MS		3000	/* host checks after an end, at most this often */
#define SUPERVISOR_HOST_FAILING_MS	10000	/* and this often while they fail */

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

	doctor_confine_host(&r, NULL, s->o.watchdog_exe);	/* what every upstream and parser needs */
	doctor_installed(&r, supervisor_upstreams_dir(s));	/* what an operator may start */
	ok = ok && check_list_passed(&r.checks);
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
	s->host_started = thread_start(&s->host_thread, NULL, host_main, s) == 0;
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

/* ---- the keeper ---- */

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
	return live || sup_pool_label_live(s, session_id);
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

/* Under the lock: the sweep's turn, once its delay is over. */
static bool
sweep_due(struct supervisor *s, int64_t now, int64_t *next)
{
	if (!s->sweep_due)
		return false;
	if (now >= s->sweep_at_ms)
		return true;
	if (s->sweep_at_ms < *next)
		*next = s->sweep_at_ms;
	return false;
}

/* Under the lock: the host checks' turn; the runtime they check, taken for the run. */
static bool
host_due(struct supervisor *s, int64_t now, int64_t *next)
{
	if (!keeper_host_due(s, now, next))
		return false;
	s->host_kick = false;
	sup_copy_word(s->keeper_runtime, sizeof s->keeper_runtime,
		      s->host_runtime[0] ? s->host_runtime : "runc");
	return true;
}

static void
host_run(struct supervisor *s)
{
	supervisor_host_refresh(s, s->keeper_runtime);
}

/*
 * The keeper's jobs, each asked in turn whether it is due (under the
 * lock, lowering next to when it will be) and the first due run without
 * the lock: the sweep; a grant's lapse (policy, before the housekeeping);
 * what stands, and sessions' ends, written again after the log refused
 * them; a look at the
 * quarantined containers' pause; the host checks.
 */
static const struct keeper_job {
	bool (*due)(struct supervisor *s, int64_t now_ms, int64_t *next_ms);
	void (*run)(struct supervisor *s);
} keeper_jobs[] = {
	{ sweep_due, sup_keeper_sweep },
	{ sup_grant_due, sup_grant_lapse },
	{ sup_standing_retry_due, sup_standing_retry },
	{ sup_ends_retry_due, sup_ends_retry },
	{ sup_quarantine_look_due, sup_quarantine_look },
	{ host_due, host_run },
};

static void *
keeper_main(void *arg)
{
	struct supervisor *s = arg;
	size_t i, n = sizeof keeper_jobs / sizeof keeper_jobs[0];

	pthread_mutex_lock(&s->lock);
	while (!s->keeper_quit) {
		int64_t now = clock_mono_ms(), next = now + SUPERVISOR_HOST_FAILING_MS;

		for (i = 0; i < n && !keeper_jobs[i].due(s, now, &next); i++)
			;
		if (i == n) {
			keeper_wait(s, next);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		keeper_jobs[i].run(s);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int
sup_keeper_start(struct supervisor *s)
{
	if (clock_cond_init(&s->keeper_cond) < 0)
		return -1;
	s->keeper_cond_made = true;
	s->keeper_started = thread_start(&s->keeper, NULL, keeper_main, s) == 0;
	return s->keeper_started ? 0 : -1;
}

void
sup_keeper_stop(struct supervisor *s)
{
	sup_stop(s, s->keeper, &s->keeper_started, &s->keeper_quit, &s->keeper_cond);
}
