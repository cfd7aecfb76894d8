/*
 * The remote link's reads of what the UI follows (link_remote_int.h): the
 * audit tail, the timeline and the held calls. Each op answers at once
 * from what the thread last took, and asks the engine again when that is
 * stale (a period, or an event that says it changed): the UI never waits
 * on the socket.
 */
#include <stdio.h>
#include <string.h>

#include "link_remote_int.h"

static void
ask_audit(struct link_remote *r, int64_t after)
{
	struct control_request req;
	const char *why;

	control_request_init(&req, CONTROL_OP_AUDIT);
	if (after >= 0)
		control_request_int(&req, CONTROL_K_AFTER, after);
	if (link_remote_queue_line(r, &req, P_AUDIT, NULL, &why) == 0) {
		r->audit_asked = true;
		r->audit_at = clock_mono_ms();
	}
}

int
link_remote_audit(struct link *l, int64_t *after, struct audit_row *out, size_t cap,
		  size_t *n, char *why, size_t why_cap)
{
	struct link_remote *r = link_remote_of(l);
	const struct control_audit *a = r->audit;
	size_t i;
	int rc = 0;

	*n = 0;
	pthread_mutex_lock(&r->mu);
	if (r->audit_error[0]) {
		snprintf(why, why_cap, "%s", r->audit_error);
		rc = -1;
	}
	for (i = 0; r->audit_new && i < a->n && *n < cap; i++)
		if (*after < 0 || a->rows[i].seq > *after)
			out[(*n)++] = a->rows[i];
	if (r->audit_new)
		*after = *n > 0 ? out[*n - 1].seq : *after < 0 ? a->head : *after;
	r->audit_new = false;
	if (!r->audit_asked && clock_mono_ms() - r->audit_at >= AUDIT_MS)
		ask_audit(r, *after);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static void
ask_timeline(struct link_remote *r, int64_t after)
{
	struct control_request req;
	const char *why;

	control_request_init(&req, CONTROL_OP_TIMELINE);
	control_request_int(&req, CONTROL_K_AFTER, after);
	if (link_remote_queue_line(r, &req, P_TIMELINE, NULL, &why) == 0) {
		r->timeline_asked = true;
		r->timeline_at = clock_mono_ms();
		r->timeline_for = after;
	}
}

static void
ask_holds(struct link_remote *r)
{
	struct control_request req;
	const char *why;

	control_request_init(&req, CONTROL_OP_PENDING);
	if (link_remote_queue_line(r, &req, P_HOLDS, NULL, &why) == 0) {
		r->holds_asked = true;
		r->holds_at = clock_mono_ms();
	}
}

/*
 * The engine's policy story, from its latest answer: taken when it was
 * asked with the cursor the caller holds (an answer to an older cursor is
 * dropped). Asked again at once while the engine has more, else every
 * LINK_TIMELINE_MS while the caller asks.
 */
int
link_remote_timeline(struct link *l, int64_t *after, struct timeline_row *out, size_t cap,
		     size_t *n, bool *more, char *why, size_t why_cap)
{
	struct link_remote *r = link_remote_of(l);
	const struct control_timeline *t = r->timeline;
	bool again = false;
	int rc = 0;

	*n = 0;
	*more = false;
	pthread_mutex_lock(&r->mu);
	if (r->timeline_error[0]) {
		snprintf(why, why_cap, "%s", r->timeline_error);
		rc = -1;
	}
	if (r->timeline_new && r->timeline_for == *after) {
		for (size_t i = 0; i < t->n && *n < cap; i++)
			out[(*n)++] = t->rows[i];
		*after = t->next;
		*more = again = t->more;
	}
	r->timeline_new = false;
	if (!r->timeline_asked && r->st.state == LINK_UP &&
	    (again || clock_mono_ms() - r->timeline_at >= LINK_TIMELINE_MS))
		ask_timeline(r, *after);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/*
 * The held calls from the engine's latest pending answer; asked again
 * when a hold event came since (whatever made a call wait, the engine
 * says so), or after LINK_PENDING_SAFETY_MS in case one was lost.
 * LINK_SENT while the newer answer is on its way.
 */
int
link_remote_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n,
		    char *why, size_t why_cap)
{
	struct link_remote *r = link_remote_of(l);
	int rc = 0;
	size_t i;

	*n = 0;
	pthread_mutex_lock(&r->mu);
	if (r->st.state != LINK_UP) {
		snprintf(why, why_cap, "engine %s: not connected", r->st.name);
		rc = -1;
	} else if (r->holds_error[0]) {
		snprintf(why, why_cap, "%s", r->holds_error);
		rc = -1;
	}
	for (i = 0; rc == 0 && r->holds_have && i < r->holds->n && *n < cap; i++)
		out[(*n)++] = r->holds->calls[i];
	if (r->st.state == LINK_UP && !r->holds_asked &&
	    (r->holds_stale || clock_mono_ms() - r->holds_at >= LINK_PENDING_SAFETY_MS)) {
		ask_holds(r);
		r->holds_stale = !r->holds_asked;	/* not queued: asked at the next call */
	}
	if (rc == 0 && (r->holds_asked || r->holds_stale))
		rc = LINK_SENT;
	pthread_mutex_unlock(&r->mu);
	return rc;
}
