/*
 * The supervisor's events: two rings (alerts apart, so a burst of state
 * events never pushes one out), each session's timeline, and the wake
 * descriptor the console polls.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"

static bool
event_alert(enum event_kind k)
{
	static const bool alert[] = {
#define SUPERVISOR_EVENT_KIND_ALERT(e, id, a) a,
		SUPERVISOR_EVENT_KINDS(SUPERVISOR_EVENT_KIND_ALERT)
#undef SUPERVISOR_EVENT_KIND_ALERT
	};

	return (unsigned)k < SUPERVISOR_EVENT_KIND_COUNT && alert[k];
}

static void
ring_push(struct ring *r, const struct supervisor_event *e)
{
	if (r->n == r->cap) {
		r->head = (r->head + 1) % r->cap;
		r->n--;
		r->dropped++;
	}
	r->ev[(r->head + r->n++) % r->cap] = *e;
}

static void
timeline_push(struct slot *sl, const struct supervisor_event *e)
{
	if (sl->tl_n == SNAP_TIMELINE_MAX) {
		sl->tl_head = (sl->tl_head + 1) % SNAP_TIMELINE_MAX;
		sl->tl_n--;
	}
	sl->timeline[(sl->tl_head + sl->tl_n++) % SNAP_TIMELINE_MAX] = *e;
}

/* Under s->lock: number e, queue it (alerts apart), and keep it on the timeline. */
void
sup_push(struct supervisor *s, struct slot *sl, struct supervisor_event *e)
{
	e->seq = ++s->seq;
	e->wall_ms = clock_wall_ms();
	e->alert = e->alert || event_alert(e->kind);
	if (sl)
		snprintf(e->session, sizeof e->session, "%s", sl->id);
	ring_push(e->alert ? &s->alerts : &s->events, e);
	if (sl)
		timeline_push(sl, e);
}

/*
 * Under s->lock: the log refused n writes (of sl's, or policy entries).
 * Counted and shown; the first refusal is an alert (the header says FAIL
 * from then on, and every session it ends is an alert of its own).
 */
void
sup_audit_refused(struct supervisor *s, struct slot *sl, uint64_t n)
{
	struct supervisor_event e = { .kind = SUPERVISOR_EVENT_AUDIT_REFUSED };

	if (n == 0)
		return;
	e.count = (long)n;
	if (s->audit_failures == 0)
		sup_push(s, sl, &e);
	s->audit_failures += n;
}

void
sup_wake(struct supervisor *s)
{
	uint64_t one = 1;

	if (write(s->wake, &one, sizeof one) < 0) {
		/* A full counter still reads as readable: nothing is lost. */
	}
}

void
sup_rings_init(struct supervisor *s)
{
	s->events = (struct ring){ .ev = s->ev_store, .cap = SUPERVISOR_EVENTS_MAX };
	s->alerts = (struct ring){ .ev = s->alert_store, .cap = SUPERVISOR_ALERTS_MAX };
}

int
supervisor_wake_fd(const struct supervisor *s)
{
	return s->wake;
}

static const struct supervisor_event *
ring_peek(const struct ring *r)
{
	return r->n ? &r->ev[r->head] : NULL;
}

static void
ring_pop(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

size_t
supervisor_events(struct supervisor *s, struct supervisor_event *out, size_t cap)
{
	const struct supervisor_event *a, *b;
	uint64_t count;
	size_t n = 0;
	bool more;

	if (read(s->wake, &count, sizeof count) < 0) {
		/* Nothing pending (non-blocking): fine. */
	}
	pthread_mutex_lock(&s->lock);
	while (n < cap) {
		a = ring_peek(&s->alerts);
		b = ring_peek(&s->events);
		if (!a && !b)
			break;
		if (a && (!b || a->seq < b->seq)) {
			out[n++] = *a;
			ring_pop(&s->alerts);
		} else {
			out[n++] = *b;
			ring_pop(&s->events);
		}
	}
	more = s->alerts.n + s->events.n > 0;
	pthread_mutex_unlock(&s->lock);
	if (more)
		sup_wake(s);	/* re-armed: the caller comes back for the rest */
	return n;
}
