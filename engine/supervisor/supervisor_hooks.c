/*
 * What a session publishes about itself (from its worker, or its lease's
 * pulse thread), copied into its row and told as events.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "clock.h"
#include "policy.h"
#include "watchdog.h"

#define LEASE_LATE_MS		(LEASE_PULSE_MS + LEASE_ACK_MS / 2)

static void
end_row(struct slot *sl, const struct session_summary *sum)
{
	struct session_row *r = &sl->row;

	r->end = sum->end;
	sup_copy_word(r->refused_check, sizeof r->refused_check, sum->refused_check);
	sup_copy_word(r->failed_step, sizeof r->failed_step, sum->failed_step);
	sup_copy_word(r->reason, sizeof r->reason, sum->reason);
	r->exit_code = sum->exit_code;
	r->started = sum->container_started;
	r->container_left = sum->container_left;
	if (!sl->ended)
		sup_audit_refused(sl->sup, sl, sum->audit_failures);
	r->audit_failures = sum->audit_failures;
	r->oom_killed = sum->oom_killed;
	r->duration_ms = sum->duration_ms;
	r->counters = sum->counters;
	sup_copy_word(r->class_name, sizeof r->class_name, sum->session_class);
	sl->ended = true;
	sl->ended_mono_ms = clock_mono_ms();
}

/* Under s->lock: a state change and, at the end, its alert. */
void
sup_state_events(struct supervisor *s, struct slot *sl, enum session_state state)
{
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_STATE, .state = state };

	sup_push(s, sl, &e);
	if (state != SESSION_STATE_ENDED)
		return;
	e = (struct supervisor_event){ .kind = SUPERVISOR_EVENT_END, .end = sl->row.end,
				       .alert = !session_end_normal(sl->row.end) };
	sup_copy_word(e.check, sizeof e.check, sl->row.refused_check);
	sup_push(s, sl, &e);
}

static void
on_publish(void *ctx, const struct session_status *st)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct session_row *r = &sl->row;
	bool changed;

	pthread_mutex_lock(&s->lock);
	changed = st->state != r->state;
	sup_copy_word(r->container, sizeof r->container, st->container_id);
	r->stdout_bytes = st->stdout_bytes;
	r->stderr_bytes = st->stderr_bytes;
	r->counters = st->counters;
	sup_copy_word(r->class_name, sizeof r->class_name,
		      class_name(&sl->cfg->classes, st->session_class));
	if (st->n_upstreams) {	/* the gateway's; until it opens, the slot's plans */
		sl->n_upstreams = st->n_upstreams;
		memcpy(sl->upstreams, st->upstreams, st->n_upstreams * sizeof st->upstreams[0]);
	}
	if (st->summary)
		end_row(sl, st->summary);
	r->state = st->state;
	if (changed)
		sup_state_events(s, sl, st->state);
	if (st->state == SESSION_STATE_RUNNING)
		sup_quarantine_running(s, sl);
	r->generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/*
 * A report kept for the detail view, as long as its checks: a full
 * admission_report is 18 kB, a session keeps two, an engine 500 sessions.
 */
static struct admission_report *
copy_report(struct admission_report *old, const struct check_list *l,
	    enum admission_verdict verdict)
{
	size_t n = l->n < SNAP_CHECKS_MAX ? l->n : SNAP_CHECKS_MAX;
	struct admission_report *r = realloc(old, offsetof(struct admission_report, items) +
					      n * sizeof r->items[0]);

	if (!r) {
		free(old);
		return NULL;
	}
	r->n = n;
	memcpy(r->items, l->items, n * sizeof r->items[0]);
	r->verdict = verdict;
	return r;
}

static void
on_report(void *ctx, int phase, const struct check_list *l)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct admission_report **rep = phase == 1 ? &sl->first : &sl->second;
	const struct check_item *bad = check_list_first_failure(l);
	enum admission_verdict verdict = check_list_passed(l) ? ADMISSION_ADMITTED
							      : ADMISSION_REFUSED;

	pthread_mutex_lock(&s->lock);
	*rep = copy_report(*rep, l, verdict);	/* NULL when out of memory: the verdict still stands */
	if (phase == 1)
		sl->row.admission_first = verdict;
	else
		sl->row.admission_second = verdict;
	if (verdict == ADMISSION_REFUSED) {
		struct supervisor_event e = { .kind = SUPERVISOR_EVENT_ADMISSION_REFUSED };

		sup_copy_word(e.check, sizeof e.check, bad ? bad->id : "report");
		sup_copy_word(e.reason, sizeof e.reason, phase == 1 ? "first" : "second");
		sup_push(s, sl, &e);
	}
	sl->row.generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

void
sup_lease_view_fill(struct lease_view *v, const struct lease_status *ls, int64_t now_mono_ms)
{
	memset(v, 0, sizeof *v);
	v->armed = ls->armed;
	v->failed = ls->failed;
	sup_copy_word(v->reason, sizeof v->reason, ls->reason);
	v->pulses = ls->pulses;
	v->acks = ls->acks;
	v->age_ms = ls->armed ? now_mono_ms - ls->last_ack_mono_ms : 0;
	v->late = ls->armed && (ls->failed || v->age_ms > LEASE_LATE_MS);
	v->last_ack_us = ls->last_ack_us;
	v->max_ack_us = ls->max_ack_us;
	v->n_acks = ls->n_history < SNAP_ACKS_MAX ? ls->n_history : SNAP_ACKS_MAX;
	memcpy(v->ack_us, ls->history_us, v->n_acks * sizeof v->ack_us[0]);
	v->watchdog_pid = ls->watchdog_pid;
}

static void
on_lease(void *ctx, struct lease *l)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct lease_status ls;

	pthread_mutex_lock(&s->lock);
	if (!l && sl->lease) {
		/* Closing: keep its last word, without the "late" of a lease that ended. */
		lease_get_status(sl->lease, &ls);
		sup_lease_view_fill(&sl->last_lease, &ls, clock_mono_ms());
		sl->last_lease.armed = false;
		sl->last_lease.late = false;
	}
	sl->lease = l;
	sl->row.generation++;
	s->generation++;
	pthread_mutex_unlock(&s->lock);
}

static void
on_lease_failed(void *ctx, const char *reason)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_LEASE_FAILED };

	sup_copy_word(e.reason, sizeof e.reason, reason);
	pthread_mutex_lock(&s->lock);
	sup_push(s, sl, &e);
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	sup_wake(s);
}

/* The hooks a session's worker runs with: each reports into sl. */
static void
on_end_unsaved(void *ctx, struct session_end_entry *e)
{
	struct slot *sl = ctx;

	sup_end_unsaved(sl->sup, e);
}

struct session_hooks
sup_hooks(struct slot *sl)
{
	return (struct session_hooks){
		.ctx = sl,
		.publish = on_publish,
		.report = on_report,
		.lease = on_lease,
		.lease_failed = on_lease_failed,
		.end_unsaved = on_end_unsaved,
	};
}
