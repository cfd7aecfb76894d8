/*
 * Held calls (supervisor.h, supervisor_hold_decide): the board (hold.h)
 * under hold_lock, the wait a session's gateway makes for a held call, its
 * timeout, an operator's approve or deny, and the engine's stop, which
 * denies every call still waiting. Each call that begins to wait and each
 * decision is a policy entry, the decision's with its author and the wait.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "gate.h"
#include "hold.h"

/* A session waits for one call at a time: the board can hold every session's. */
_Static_assert(HOLD_MAX >= SUPERVISOR_SESSIONS_MAX, "a held call of every session fits");

/* A waiter looks at its gate and its session's stop at least this often. */
#define HOLD_TICK_MS	200

static const struct snap_author by_engine = { .user = "engine", .via = "stop" };
static const struct snap_author by_gate = { .user = "engine", .via = "cutover" };

int
sup_hold_init(struct supervisor *s)
{
	if (pthread_mutex_init(&s->hold_lock, NULL) != 0)
		return -1;
	if (clock_cond_init(&s->hold_cond) < 0) {
		pthread_mutex_destroy(&s->hold_lock);
		return -1;
	}
	s->hold_cond_made = true;
	return 0;
}

void
sup_hold_free(struct supervisor *s)
{
	if (!s->hold_cond_made)
		return;
	pthread_cond_destroy(&s->hold_cond);
	pthread_mutex_destroy(&s->hold_lock);
	s->hold_cond_made = false;
}

void
sup_hold_stop(struct supervisor *s)
{
	if (!s->hold_cond_made)
		return;
	pthread_mutex_lock(&s->hold_lock);
	s->hold_quit = true;
	hold_settle_all(&s->holds, NULL, HOLD_STOPPED, &by_engine, clock_mono_ms());
	pthread_cond_broadcast(&s->hold_cond);
	pthread_mutex_unlock(&s->hold_lock);
}

void
sup_hold_kick(struct supervisor *s)
{
	pthread_mutex_lock(&s->hold_lock);
	pthread_cond_broadcast(&s->hold_cond);
	pthread_mutex_unlock(&s->hold_lock);
}

size_t
sup_hold_calling(struct supervisor *s, const char *tool, char (*ids)[SNAP_ID_MAX], size_t cap)
{
	struct hold_view *v = calloc(HOLD_MAX, sizeof *v);
	size_t i, n = 0, waiting;

	if (!v)
		return 0;
	pthread_mutex_lock(&s->hold_lock);
	waiting = hold_list(&s->holds, clock_mono_ms(), v, HOLD_MAX);
	pthread_mutex_unlock(&s->hold_lock);
	for (i = 0; i < waiting && n < cap; i++)
		if (strcmp(v[i].tool, tool) == 0 || strcmp(v[i].alias, tool) == 0)
			memcpy(ids[n++], v[i].session, SNAP_ID_MAX);
	free(v);
	return n;
}

void
sup_hold_unwaive(struct supervisor *s, const char *tool, struct slot *const *to, size_t n)
{
	size_t i;

	pthread_mutex_lock(&s->hold_lock);
	for (i = 0; i < n; i++)
		hold_unwaive(&s->holds, to[i]->id, tool);
	pthread_mutex_unlock(&s->hold_lock);
}

void
sup_hold_forget(struct supervisor *s, const struct slot *sl)
{
	pthread_mutex_lock(&s->hold_lock);
	hold_forget(&s->holds, sl->id);
	pthread_mutex_unlock(&s->hold_lock);
}

/*
 * Under hold_lock: settle id when nothing else has and its wait is over:
 * its time is up, its session or the engine stops, or its gate no longer
 * holds the tool (a revoke, restore or freeze under it).
 */
static void
hold_check(struct slot *sl, int64_t id, int tool, const struct gate_flow *f, int64_t deadline_ms)
{
	struct supervisor *s = sl->sup;
	static const struct snap_author expiry = { .user = "expiry", .via = "hold" };
	int64_t now = clock_mono_ms();

	if (now >= deadline_ms)
		hold_decide(&s->holds, id, HOLD_TIMED_OUT, false, &expiry, now);
	else if (s->hold_quit || atomic_load(&sl->stop))
		hold_decide(&s->holds, id, HOLD_STOPPED, false, &by_engine, now);
	else if (gate_peek_flow(sl->gate, tool, f, NULL) != RULE_HOLD_DENIED)
		hold_decide(&s->holds, id, HOLD_LIFTED, false, &by_gate, now);
}

/* Under hold_lock: wait until id is settled; then it is taken off the board into *e. */
static void
hold_await(struct slot *sl, int64_t id, int tool, const struct gate_flow *f,
	   struct hold_entry *e)
{
	struct supervisor *s = sl->sup;
	int64_t deadline = clock_mono_ms() + sl->cfg->bounds.hold_timeout_s * 1000, left;
	const struct hold_entry *h;
	struct timespec ts;

	while ((h = hold_find(&s->holds, id)) && h->outcome == HOLD_WAITING) {
		hold_check(sl, id, tool, f, deadline);
		if (hold_find(&s->holds, id)->outcome != HOLD_WAITING)
			break;
		left = deadline - clock_mono_ms();
		ts = clock_deadline(CLOCK_MONOTONIC, left < HOLD_TICK_MS ? (left > 0 ? left : 1)
								 : HOLD_TICK_MS);
		pthread_cond_timedwait(&s->hold_cond, &s->hold_lock, &ts);
	}
	hold_take(&s->holds, id, e);
}

static enum gateway_hold_answer
hold_answer(enum hold_outcome o)
{
	switch (o) {
	case HOLD_APPROVED:
		return GW_HOLD_APPROVED;
	case HOLD_TIMED_OUT:
		return GW_HOLD_TIMEOUT;
	case HOLD_LIFTED:
		return GW_HOLD_RECHECK;
	case HOLD_WAITING:
	case HOLD_DENIED:
	case HOLD_STOPPED:
		break;
	}
	return GW_HOLD_DENIED;
}

/* A decision's word in its event (snapshot.h, HOLD_DECIDED): fixed, never the audit's rule. */
static const char *
hold_word(const struct hold_entry *e)
{
	switch (e->outcome) {
	case HOLD_APPROVED:
		return e->rest ? "approved_rest" : "approved";
	case HOLD_TIMED_OUT:
		return "timeout";
	case HOLD_STOPPED:
		return "stopped";
	case HOLD_LIFTED:
		return "lifted";
	case HOLD_WAITING:
	case HOLD_DENIED:
		break;
	}
	return "denied";
}

/*
 * Under nothing (s->lock is taken here, hold_lock must not be held): a
 * call began to wait (e NULL: v says which) or was decided. Its id and
 * tool only: a held call's arguments never reach an event.
 */
static void
hold_event(struct slot *sl, const struct hold_view *v, int64_t id, const struct hold_entry *e)
{
	struct supervisor *s = sl->sup;
	struct supervisor_event ev = { .kind = e ? SUPERVISOR_EVENT_HOLD_DECIDED
						 : SUPERVISOR_EVENT_HOLD_WAITING, .hold = id };

	sup_copy_word(ev.tool, sizeof ev.tool, v->tool);
	if (e) {
		ev.by = e->by;
		ev.waited_us = (e->decided_ms - e->start_ms) * 1000;
		sup_copy_word(ev.reason, sizeof ev.reason, hold_word(e));
	}
	pthread_mutex_lock(&s->lock);
	sup_push(s, sl, &ev);
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/* The decision's policy entry: "hold 7 approved", "hold 7 denied: engine stop", … */
static void
hold_decided(struct slot *sl, const struct hold_entry *e, bool engine_stop)
{
	char rule[SNAP_WORD_MAX];
	int64_t wait = e->decided_ms - e->start_ms;

	switch (e->outcome) {
	case HOLD_STOPPED:
		snprintf(rule, sizeof rule, "hold %lld denied: %s", (long long)e->v.id,
			 engine_stop ? "engine stop" : "session stop");
		break;
	case HOLD_APPROVED:
		snprintf(rule, sizeof rule, "hold %lld approved%s", (long long)e->v.id,
			 e->v.declassify ? ", declassified" : e->rest ? " for the session" : "");
		break;
	default:
		snprintf(rule, sizeof rule, "hold %lld %s", (long long)e->v.id,
			 hold_outcome_text(e->outcome));
		break;
	}
	if (strcmp(e->v.held_by, "tool") != 0)	/* a class flow's: both classes, the hash */
		sup_hold_note_flow(sl->sup, sl, &e->v, rule, &e->by, wait,
				   e->outcome == HOLD_APPROVED && e->v.declassify);
	else
		sup_hold_note(sl->sup, sl, e->v.tool, rule, &e->by, &wait);
}

/* The gateway's hook: a held call waits here for its decision. */
static enum gateway_hold_answer
hold_wait(void *ctx, struct hold_view *v)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	int tool = config_tool_index(sl->cfg, v->tool);
	struct gate_flow f = { class_rank(&sl->cfg->classes, v->session_class),
			       class_rank(&sl->cfg->classes, v->sink_ceiling) };
	struct hold_entry e = { .outcome = HOLD_DENIED };	/* as taken, else denied */
	char rule[SNAP_WORD_MAX];
	bool stopping;
	int64_t id = 0;

	pthread_mutex_lock(&s->hold_lock);
	/* A waiver is a tool's: a class flow's calls are decided one by one. */
	if (strcmp(v->held_by, "tool") == 0 && hold_waived(&s->holds, sl->id, v->tool)) {
		pthread_mutex_unlock(&s->hold_lock);
		return GW_HOLD_APPROVED;	/* approved for the rest of the session */
	}
	v->since_ms = clock_wall_ms();
	stopping = s->hold_quit || atomic_load(&sl->stop);
	if (!stopping)
		id = hold_add(&s->holds, v, clock_mono_ms());
	pthread_mutex_unlock(&s->hold_lock);
	if (id == 0) {
		sup_hold_note(s, sl, v->tool, stopping ? "hold refused: stopping"
			      : "hold refused: too many waiting", &by_engine, NULL);
		return GW_HOLD_DENIED;
	}
	snprintf(rule, sizeof rule, "hold %lld waiting", (long long)id);
	sup_hold_note(s, sl, v->tool, rule, &s->self, NULL);
	hold_event(sl, v, id, NULL);
	pthread_mutex_lock(&s->hold_lock);
	hold_await(sl, id, tool, &f, &e);
	stopping = s->hold_quit;
	pthread_mutex_unlock(&s->hold_lock);
	hold_decided(sl, &e, stopping);
	hold_event(sl, v, id, &e);
	return hold_answer(e.outcome);
}

struct gateway_hold
sup_hold_hook(struct slot *sl)
{
	return (struct gateway_hold){ .wait = hold_wait, .ctx = sl };
}

size_t
supervisor_holds(struct supervisor *s, struct hold_view *out, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&s->hold_lock);
	n = hold_list(&s->holds, clock_mono_ms(), out, cap);
	pthread_mutex_unlock(&s->hold_lock);
	return n;
}

int
supervisor_hold_decide(struct supervisor *s, int64_t id, bool approve, bool rest,
		       const struct snap_author *by, struct al_err *err)
{
	const struct hold_entry *e;
	int rc;

	if (rest && !approve)
		return al_fail(err, "hold: only an approve is for the rest of the session");
	pthread_mutex_lock(&s->hold_lock);
	e = hold_find(&s->holds, id);
	rc = e && e->outcome == HOLD_WAITING ? 0 : -1;
	if (rc == 0 && rest && strcmp(e->v.held_by, "tool") != 0)
		rc = -3;	/* a class flow hold, maybe a declassification: one call at a time */
	if (rc == 0 && hold_decide(&s->holds, id, approve ? HOLD_APPROVED : HOLD_DENIED, rest,
				   by ? by : &s->self, clock_mono_ms()) < 0)
		rc = -2;
	pthread_cond_broadcast(&s->hold_cond);
	pthread_mutex_unlock(&s->hold_lock);
	if (rc == -1)
		return al_fail(err, "hold: no call %lld is waiting", (long long)id);
	if (rc == -2)
		return al_fail(err, "hold: %d approvals for the rest of a session already",
			       HOLD_WAIVERS_MAX);
	if (rc == -3)
		return al_fail(err, "hold: a class flow's calls are approved one at a time");
	return 0;
}
