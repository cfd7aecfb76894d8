/*
 * The supervisor's life: open, shutdown and close, and the small helpers
 * its files share. The other parts live in supervisor_*.c, around the
 * private state in supervisor_int.h.
 */

#include "supervisor.h"
#include "supervisor_int.h"

#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <pwd.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <jansson.h>

#include "docker.h"
#include "err.h"
#include "journal.h"
#include "parser.h"
#include "preflight.h"
#include "profile.h"
#include "reaper.h"
#include "watchdog.h"

/* Bounded copy; a longer source is cut (every source is a name or fixed word). */
void
sup_copy_word(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void
sup_stop(struct supervisor *s, pthread_t t, bool *started, bool *quit, pthread_cond_t *cond)
{
	if (!*started)
		return;
	pthread_mutex_lock(&s->lock);
	*quit = true;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(t, NULL);
	*started = false;
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

/* The containers a start-up reap removed, for the audit (bounded: the rest are counted). */
#define REAPED_AUDIT_MAX	SUPERVISOR_SESSIONS_MAX

struct reaped {
	struct {
		char container[SNAP_CONTAINER_MAX];
		char session[SNAP_ID_MAX];
		bool open;	/* its session started in this log and never ended */
	} v[REAPED_AUDIT_MAX];
	size_t n, unlisted;
};

static void
reaped_seen(void *ctx, const char *container, const char *session, enum reap_fate fate)
{
	struct reaped *r = ctx;

	if (fate != REAP_REAPED)
		return;
	if (r->n == REAPED_AUDIT_MAX) {
		r->unlisted++;
		return;
	}
	sup_copy_word(r->v[r->n].container, sizeof r->v[0].container, container);
	sup_copy_word(r->v[r->n].session, sizeof r->v[0].session, session);
	r->n++;
}

/* Mark (or unmark) the reaped containers of a session as left open by the log. */
static void
reaped_mark(struct reaped *r, const char *session, bool open)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].session, session) == 0)
			r->v[i].open = open;
}

static void
reaped_open(void *ctx, const char *session, const char *start_detail)
{
	(void)start_detail;
	reaped_mark(ctx, session, true);
}

/* The end an engine writes for a session its dead predecessor left open. */
static int
write_lost(struct supervisor *s, const char *session)
{
	struct journal j = { s->o.audit, s->o.otlp };
	struct audit_entry e = { .session_id = session, .rule = "engine_lost",
				 .detail = "{\"ended\":\"engine_lost\",\"normal\":false}" };

	return journal_write(&j, NULL, AUDIT_D_ABNORMAL, &e, NULL);
}

/*
 * Each container removed, as a reap entry of its session; and a session
 * its dead engine started in this log and never ended, whose start named
 * no owner (an older log: end_lost passed it by), gets its end here,
 * abnormal, engine_lost (once, at its first container). Ids only: nothing
 * of the container's output is read.
 */
static void
reaped_audit(struct supervisor *s, struct reaped *r)
{
	struct journal j = { s->o.audit, s->o.otlp };
	struct audit_entry e;
	char detail[SNAP_CONTAINER_MAX + 32];
	size_t refused = 0;

	if (r->n == 0)
		return;
	/* Unread, no session is ended here: verify still lists them as never ended. */
	if (audit_unended(s->o.audit, reaped_open, r) < 0)
		for (size_t i = 0; i < r->n; i++)
			r->v[i].open = false;
	for (size_t i = 0; i < r->n; i++) {
		snprintf(detail, sizeof detail, "{\"container\":\"%.12s\"}", r->v[i].container);
		e = (struct audit_entry){ .session_id = r->v[i].session[0] ? r->v[i].session : "-",
					  .rule = "owner_gone", .detail = detail };
		refused += journal_write(&j, NULL, AUDIT_D_REAPED, &e, NULL) < 0;
		if (!r->v[i].open)
			continue;
		reaped_mark(r, r->v[i].session, false);	/* one end per session */
		refused += write_lost(s, r->v[i].session) < 0;
	}
	if (refused) {
		pthread_mutex_lock(&s->lock);
		sup_audit_refused(s, NULL, refused);
		pthread_mutex_unlock(&s->lock);
	}
}

/* The open sessions of the log whose start names an owner that is gone. */
struct lost {
	char (*ids)[SNAP_ID_MAX];
	size_t n;
	const char *boot;	/* this boot's id */
};

/* Under the log's lock: one open session; its start's detail names its owner. */
static void
lost_one(void *ctx, const char *session, const char *start_detail)
{
	struct lost *l = ctx;
	json_t *owner;
	bool gone;

	/* No owner named (an older log): its container's reap ends it. */
	if (!start_detail || l->n == REAPED_AUDIT_MAX || strlen(session) >= SNAP_ID_MAX)
		return;
	owner = json_loads(start_detail, 0, NULL);
	gone = json_is_object(owner) && json_object_get(owner, LABEL_OWNER_PID) &&
	       reaper_owner_gone(owner, l->boot);
	json_decref(owner);
	if (gone)
		memcpy(l->ids[l->n++], session, strlen(session) + 1);
}

/* A lost session's held calls still waiting in the log: "hold N waiting" without its decision. */
#define LOST_HOLDS_MAX	16	/* a session waits for one call at a time */
struct open_holds {
	long long id[LOST_HOLDS_MAX];
	char tool[LOST_HOLDS_MAX][SNAP_NAME_MAX];
	size_t n;
};

/* Under the log's lock: one of the session's hold entries, in order. */
static void
hold_seen(void *ctx, const char *rule, const char *tool)
{
	struct open_holds *h = ctx;
	long long id;
	char word[16];
	size_t i;

	if (sscanf(rule, "hold %lld %15s", &id, word) != 2)
		return;
	if (strcmp(word, "waiting") == 0) {
		if (h->n < LOST_HOLDS_MAX) {
			h->id[h->n] = id;
			sup_copy_word(h->tool[h->n++], SNAP_NAME_MAX, tool);
		}
		return;
	}
	for (i = 0; i < h->n; i++)	/* decided: no longer open */
		if (h->id[i] == id) {
			h->id[i] = h->id[--h->n];
			memcpy(h->tool[i], h->tool[h->n], SNAP_NAME_MAX);
			break;
		}
}

/*
 * The waits a dead engine left open get their decision: denied, engine
 * lost (its call never went on: the session's end says why).
 */
static void
close_lost_holds(struct supervisor *s, const char *session)
{
	struct open_holds h = { .n = 0 };
	struct policy_entry p;
	size_t i;

	if (audit_session_holds(s->o.audit, session, hold_seen, &h) < 0)
		return;
	for (i = 0; i < h.n; i++) {
		p = (struct policy_entry){ .result = CUTOVER_APPLIED,
					   .by = { .user = "engine", .via = "lost" } };
		sup_copy_word(p.session, sizeof p.session, session);
		sup_copy_word(p.tool, sizeof p.tool, h.tool[i]);
		snprintf(p.rule, sizeof p.rule, "hold %lld denied: engine lost", h.id[i]);
		sup_policy_record(s, &p);
	}
}

/*
 * Every session this log started and never ended whose engine is gone
 * gets its end, abnormal, engine_lost, whatever became of its containers:
 * reaped below, by `airlock reap` or another engine first, or never made.
 * Its start names its owner as its containers' labels do (pid, start
 * ticks, boot), and the reaper's own test says whether that owner lives.
 * A held call it left waiting is decided first (denied: engine lost). An
 * end the log refuses is counted; the next engine tries again.
 */
static void
end_lost(struct supervisor *s)
{
	struct owner_labels me;
	struct al_err err;
	struct lost l = { 0 };
	uint64_t refused = 0;
	size_t i;

	if (owner_labels_self(&me, NULL, &err) < 0)
		return;		/* no boot id: every owner would look gone */
	l.boot = me.boot_id;
	l.ids = calloc(REAPED_AUDIT_MAX, SNAP_ID_MAX);
	if (l.ids && audit_unended(s->o.audit, lost_one, &l) == 0)
		for (i = 0; i < l.n; i++) {
			close_lost_holds(s, l.ids[i]);
			refused += write_lost(s, l.ids[i]) < 0;
		}
	free(l.ids);
	if (refused) {
		pthread_mutex_lock(&s->lock);
		sup_audit_refused(s, NULL, refused);
		pthread_mutex_unlock(&s->lock);
	}
}

static int
reap(struct supervisor *s, struct reap_report *out, struct al_err *err)
{
	struct reap_report scratch = { 0 };
	struct reap_report *r = out ? out : &scratch;
	struct docker *d = preflight_connect(s->o.docker_host, err);
	struct reaped *seen = calloc(1, sizeof *seen);
	int rc;

	if (!d || !seen) {
		docker_close(d);
		free(seen);
		return d ? al_fail(err, "supervisor: out of memory") : -1;
	}
	rc = reaper_run_seen(d, r, reaped_seen, seen, err);
	docker_close(d);
	if (rc == 0) {
		reaped_audit(s, seen);
		reaped_event(s, r);
	}
	free(seen);
	return rc;
}

void
supervisor_author_self(struct snap_author *out, const char *via)
{
	struct passwd pw, *found = NULL;
	char buf[1024];

	memset(out, 0, sizeof *out);
	out->uid = (uint32_t)getuid();
	if (getpwuid_r(out->uid, &pw, buf, sizeof buf, &found) == 0 && found)
		sup_copy_word(out->user, sizeof out->user, found->pw_name);
	else
		snprintf(out->user, sizeof out->user, "%u", out->uid);
	sup_copy_word(out->via, sizeof out->via, via);
}

size_t
supervisor_sessions_default(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t kb, n;

	if (pages <= 0 || size <= 0)
		return SUPERVISOR_SESSIONS_MIN;
	kb = (uint64_t)pages * (uint64_t)size / 1024;
	n = kb / SUPERVISOR_SESSION_BUDGET_KB;
	return n < SUPERVISOR_SESSIONS_MIN ? SUPERVISOR_SESSIONS_MIN
	       : n > SUPERVISOR_SESSIONS_MAX ? SUPERVISOR_SESSIONS_MAX : (size_t)n;
}

size_t
supervisor_sessions_max(const struct supervisor *s)
{
	return s->o.sessions_max;
}

const char *
supervisor_upstreams_dir(const struct supervisor *s)
{
	return s->o.upstreams_dir;
}

/*
 * glibc gives each new thread its own malloc arena, up to eight per core;
 * an engine's threads are mostly its sessions' workers, idle between
 * calls, and every arena keeps pages of its own: with 500 sessions on two
 * cores that was 20 kB a session (bench/run, dense). A few arenas serve
 * them: a quarter of the cores, at least two, at most eight.
 */
static void
arenas_for_sessions(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN) / 4;

	mallopt(M_ARENA_MAX, cores < 2 ? 2 : cores > 8 ? 8 : (int)cores);
}

/*
 * Every session needs its watchdog and its parser: an engine that cannot
 * find them refuses to start, saying where it looked, rather than end
 * each session it launches.
 */
static int
helpers_found(const char *exe, struct al_err *err)
{
	char path[PATH_MAX];

	if (lease_program(exe, path, sizeof path) < 0 || parser_program(exe, path, sizeof path) < 0)
		return al_fail(err, "supervisor: %s (install airlock whole, with meson install, or "
			       "run the airlock of its build tree)", path);
	return 0;
}

int
supervisor_open(const struct supervisor_options *o, struct supervisor **out,
		struct reap_report *reaped, struct al_err *err)
{
	struct supervisor *s;

	*out = NULL;
	arenas_for_sessions();
	if (!o->audit)
		return al_fail(err, "supervisor: an audit log is required");
	if (helpers_found(o->watchdog_exe, err) < 0)
		return -1;
	s = calloc(1, sizeof *s);
	if (!s)
		return al_fail(err, "supervisor: out of memory");
	s->o = *o;
	if (s->o.sessions_max == 0)
		s->o.sessions_max = supervisor_sessions_default();
	else if (s->o.sessions_max > SUPERVISOR_SESSIONS_MAX)
		s->o.sessions_max = SUPERVISOR_SESSIONS_MAX;
	supervisor_author_self(&s->self, "engine");
	sup_rings_init(s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->policy, NULL);
	pthread_mutex_init(&s->grant_lock, NULL);
	pthread_cond_init(&s->writer_cond, NULL);
	sem_init(&s->launch_slots, 0, SUPERVISOR_LAUNCH_PARALLEL);
	sem_init(&s->cleanup_slots, 0, SUPERVISOR_CLEANUP_PARALLEL);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->writer_started = thread_start(&s->writer, NULL, sup_writer_main, s) == 0;
	if (s->wake < 0 || !s->writer_started || sup_hold_init(s) < 0 || sup_keeper_start(s) < 0 ||
	    sup_pool_init(s) < 0) {
		supervisor_close(s);
		return al_fail(err, "supervisor: cannot create the wake descriptor, the writer or"
			       " the keeper");
	}
	/*
	 * The log first: one that cannot be read stops the start before a
	 * container is touched. Then the ends of the sessions whose engine
	 * died, then its containers.
	 */
	if (sup_standing_load(s, err) < 0) {
		supervisor_close(s);
		return -1;
	}
	end_lost(s);
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

	sup_hold_stop(s);	/* every held call denied, each audited by its worker */
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
	sup_pool_stop(s);	/* after the sessions: none claims any more */
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
supervisor_close(struct supervisor *s)
{
	size_t i;

	if (!s)
		return;
	stop_all(s);
	join_all(s);
	sup_pool_stop(s);
	wait_stoppers(s);
	sup_keeper_stop(s);
	sup_ends_close(s);	/* every session has ended: one more try */
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
	if (s->pool_cond_made) {
		pthread_cond_destroy(&s->pool_cond);
		pthread_mutex_destroy(&s->pool_lock);
	}
	sup_hold_free(s);
	pthread_mutex_destroy(&s->grant_lock);
	pthread_mutex_destroy(&s->policy);
	pthread_mutex_destroy(&s->lock);
	sem_destroy(&s->launch_slots);
	sem_destroy(&s->cleanup_slots);
	free(s);
}
