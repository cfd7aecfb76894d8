/*
 * The engine in this process (link.h, link_local.h): every call is the
 * supervisor's own, answered at once. Opened by link_local_open, the link
 * owns the supervisor and its audit log; link_local_new only borrows one.
 */
#include "link_local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "audit_tail.h"
#include "clock.h"
#include "config.h"
#include "config_check.h"
#include "supervisor.h"

struct link_local {
	struct link base;
	struct supervisor *sup;
	struct snap_author author;
	char audit_path[4096];
	struct audit_tail *tail;	/* audit_path read-only, opened at the first call */
	char tail_error[AL_ERR_MAX];	/* why it cannot be: said on every call */
	struct audit *audit;	/* owned, with sup, when opened here */
	int64_t timeline_at;	/* monotonic ms of the last timeline read */
	int64_t timeline_after;	/* its cursor: a new one is read at once */
	bool owned, shut;
};

static struct link_local *
local(struct link *l)
{
	return (struct link_local *)l;
}

static int
local_snapshot(struct link *l, struct supervisor_snapshot *s)
{
	return supervisor_snapshot(local(l)->sup, s) < 0 ? -1 : 0;
}

static int
local_detail(struct link *l, const char *id, struct session_detail *d)
{
	return supervisor_detail(local(l)->sup, id, d);
}

static void
local_host(struct link *l, struct host_snapshot *h)
{
	supervisor_host(local(l)->sup, h);
}

static void
local_host_refresh(struct link *l, const char *runtime)
{
	supervisor_host_refresh(local(l)->sup, runtime);
}

static size_t
local_events(struct link *l, struct supervisor_event *ev, size_t cap)
{
	return supervisor_events(local(l)->sup, ev, cap);
}

static size_t
local_results(struct link *l, struct link_result *r, size_t cap)
{
	(void)l, (void)r, (void)cap;
	return 0;
}

static int
local_wake_fd(struct link *l)
{
	return supervisor_wake_fd(local(l)->sup);
}

static void
local_status(struct link *l, struct link_status *s)
{
	(void)l;
	memset(s, 0, sizeof *s);
	s->state = LINK_UP;
	snprintf(s->name, sizeof s->name, "local");
	snprintf(s->where, sizeof s->where, "this process");
	snprintf(s->role, sizeof s->role, "operate");
}

/* A request answered at once: ok when rc is not negative, else why not. */
static int
answer(struct link_result *res, int rc, const char *why)
{
	res->ok = rc >= 0;
	if (!res->ok)
		snprintf(res->error, sizeof res->error, "%s", why);
	return LINK_DONE;
}

static int
local_start(struct link *l, const char *path, struct link_result *res)
{
	struct al_err err;

	res->req = LINK_REQ_START;
	snprintf(res->path, sizeof res->path, "%s", path);
	return answer(res, supervisor_start_file(local(l)->sup, path, res->session, &err), err.msg);
}

/* A request about one session: its id in the answer, and why not. */
static int
by_id(struct link_result *res, enum link_request req, const char *id, int rc, const char *why)
{
	res->req = req;
	snprintf(res->session, sizeof res->session, "%s", id);
	return answer(res, rc, why);
}

static int
local_stop(struct link *l, const char *id, struct link_result *res)
{
	return by_id(res, LINK_REQ_STOP, id, supervisor_stop_session(local(l)->sup, id),
		     "the session is not live");
}

static int
local_quarantine(struct link *l, const char *id, bool on, struct link_result *res)
{
	char done[1][SNAP_ID_MAX];
	const char *ids[1] = { id };

	res->req = LINK_REQ_QUARANTINE;
	res->op = on ? CUTOVER_FREEZE : CUTOVER_THAW;
	snprintf(res->session, sizeof res->session, "%s", id);
	res->targets = supervisor_quarantine(local(l)->sup, on, ids, 1, &local(l)->author, done, 1);
	res->ok = true;
	return LINK_DONE;
}

static int
local_stop_all(struct link *l, struct link_result *res)
{
	res->req = LINK_REQ_STOP_ALL;
	res->targets = supervisor_stop_all(local(l)->sup);
	res->ok = true;
	return LINK_DONE;
}

static int
local_cutover(struct link *l, enum cutover_op op, const char *tool, const char *const *ids,
	      size_t n, const struct link_grant *grant, struct link_result *res)
{
	struct link_local *ll = local(l);
	struct cutover_done done = { 0 };
	struct al_err err;
	int rc;

	res->req = LINK_REQ_CUTOVER;
	res->op = op;
	snprintf(res->tool, sizeof res->tool, "%s", tool ? tool : "");
	if (op == CUTOVER_RESTORE && grant && (grant->for_s || grant->calls)) {
		res->grant = *grant;
		rc = supervisor_grant(ll->sup, tool, ids, ids ? n : 0, &ll->author, grant->for_s,
				      grant->calls, &done, &err);
	} else if (grant && grant->flow)
		rc = supervisor_flow_cutover_by(ll->sup, op, tool, ids, ids ? n : 0, &ll->author,
						&done, &err);
	else if (op == CUTOVER_FREEZE || op == CUTOVER_THAW)
		rc = supervisor_freeze(ll->sup, op == CUTOVER_FREEZE, &ll->author, &done.revision,
				       &done.targets, &err);
	else
		rc = supervisor_cutover_by(ll->sup, op, tool, ids, ids ? n : 0, &ll->author,
					   &done, &err);
	res->revision = done.revision;
	res->targets = done.targets;
	if (rc >= 0 && !(grant && grant->flow))	/* what it acted on, as the engine's answer says */
		snprintf(res->acted, sizeof res->acted, "%s", done.tool);
	return answer(res, rc, err.msg);
}

static int
local_forget(struct link *l, const char *id, struct link_result *res)
{
	return by_id(res, LINK_REQ_FORGET, id, supervisor_forget(local(l)->sup, id),
		     "the session has not ended");
}

/* The log's end, and what a crashed engine left without an outcome, shown first. */
static int
audit_start(struct link_local *ll, int64_t *after, struct audit_row *out, size_t cap, size_t *n)
{
	int64_t max = audit_tail_max_seq(ll->tail);

	if (max < 0)
		return -1;
	*after = max;
	return max > 0 ? audit_tail_unknown(ll->tail, max, out, cap, n) : 0;
}

static int
local_audit(struct link *l, int64_t *after, struct audit_row *out, size_t cap, size_t *n,
	    char *why, size_t why_cap)
{
	struct link_local *ll = local(l);
	struct al_err err;
	int rc;

	*n = 0;
	if (!ll->tail && !ll->tail_error[0] && audit_tail_open(ll->audit_path, &ll->tail, &err) < 0)
		snprintf(ll->tail_error, sizeof ll->tail_error, "%s", err.msg);
	if (!ll->tail) {
		snprintf(why, why_cap, "%s", ll->tail_error[0] ? ll->tail_error : "no audit log");
		return -1;
	}
	rc = *after < 0 ? audit_start(ll, after, out, cap, n)
			: audit_tail_read(ll->tail, *after, NULL, out, cap, n);
	if (rc < 0) {
		*n = 0;
		snprintf(why, why_cap, "%s", audit_tail_error(ll->tail));
		return -1;
	}
	if (*n > 0 && out[*n - 1].seq > *after)
		*after = out[*n - 1].seq;
	return 0;
}

/*
 * The supervisor reads its own log from the cursor on; asked again after
 * LINK_TIMELINE_MS, or at once for a new cursor (more to take, a view
 * opened): each read costs the entries written since the last.
 */
static int
local_timeline(struct link *l, int64_t *after, struct timeline_row *out, size_t cap, size_t *n,
	       bool *more, char *why, size_t why_cap)
{
	struct link_local *ll = local(l);
	int64_t now = clock_mono_ms();
	struct al_err err;

	*n = 0;
	*more = false;
	if (*after == ll->timeline_after && ll->timeline_at &&
	    now - ll->timeline_at < LINK_TIMELINE_MS)
		return 0;
	ll->timeline_at = now;
	if (supervisor_timeline(ll->sup, after, out, cap, n, more, &err) < 0) {
		snprintf(why, why_cap, "%s", err.msg);
		return -1;
	}
	ll->timeline_after = *more ? -1 : *after;
	return 0;
}

static int
local_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n, char *why,
	      size_t why_cap)
{
	(void)why, (void)why_cap;
	*n = supervisor_holds(local(l)->sup, out, cap);
	return 0;
}

static int
local_decide(struct link *l, int64_t id, bool approve, bool rest, struct link_result *res)
{
	struct link_local *ll = local(l);
	struct al_err err;

	res->req = approve ? LINK_REQ_APPROVE : LINK_REQ_DENY;
	res->hold = id;
	res->rest = approve && rest;
	return answer(res, supervisor_hold_decide(ll->sup, id, approve, res->rest, &ll->author, &err),
		      err.msg);
}

static void
local_close(struct link *l)
{
	struct link_local *ll = local(l);

	audit_tail_close(ll->tail);
	if (ll->owned) {
		if (!ll->shut)
			supervisor_shutdown(ll->sup);
		supervisor_close(ll->sup);
		audit_close(ll->audit);
	}
	free(l);
}

static const struct link_ops local_ops = {
	.snapshot = local_snapshot,
	.detail = local_detail,
	.host = local_host,
	.host_refresh = local_host_refresh,
	.events = local_events,
	.results = local_results,
	.wake_fd = local_wake_fd,
	.status = local_status,
	.start = local_start,
	.stop = local_stop,
	.stop_all = local_stop_all,
	.quarantine = local_quarantine,
	.cutover = local_cutover,
	.forget = local_forget,
	.audit = local_audit,
	.timeline = local_timeline,
	.pending = local_pending,
	.decide = local_decide,
	.close = local_close,
};

struct link *
link_local_new(struct supervisor *sup, const struct snap_author *author, const char *audit_path)
{
	struct link_local *l = calloc(1, sizeof *l);

	if (!l)
		return NULL;
	if (audit_path)
		snprintf(l->audit_path, sizeof l->audit_path, "%s", audit_path);
	else
		snprintf(l->tail_error, sizeof l->tail_error, "no audit log");
	l->base.ops = &local_ops;
	l->sup = sup;
	l->author = *author;
	return &l->base;
}

int
link_local_open(const struct link_local_options *o, struct link **out, struct al_err *err)
{
	struct supervisor_options so = { .docker_host = getenv("DOCKER_HOST"),
					 .reap_at_start = true, .sessions_max = o->sessions_max };
	struct snap_author author;
	struct supervisor *sup;
	struct link_local *l;

	*out = NULL;
	if (audit_open(o->audit_path, &so.audit, err) < 0)
		return LINK_LOCAL_NO_AUDIT;
	supervisor_author_self(&author, o->via);
	if (supervisor_open(&so, &sup, NULL, err) < 0) {
		audit_close(so.audit);
		return -1;
	}
	if (!(*out = link_local_new(sup, &author, o->audit_path))) {
		supervisor_shutdown(sup);
		supervisor_close(sup);
		audit_close(so.audit);
		return al_fail(err, "out of memory");
	}
	l = local(*out);
	l->audit = so.audit;
	l->owned = true;
	return 0;
}

int
link_local_check(const char *const *paths, size_t n, char *runtime, size_t cap,
		 struct al_err *err)
{
	struct airlock_config c;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) {
		config_init(&c);
		if (config_load_file(&c, paths[i], 1, err) < 0 ||
		    config_check_image_at(getenv("DOCKER_HOST"), &c.profile, err) == -1)
			rc = -1;
		else if (i == 0)
			snprintf(runtime, cap, "%s", c.profile.runtime);
		config_free(&c);
	}
	return rc;
}

size_t
link_local_live(struct link *l)
{
	return supervisor_live(local(l)->sup);
}

int
link_local_shutdown(struct link *l, uint64_t *refused)
{
	struct link_local *ll = local(l);
	int left = supervisor_shutdown(ll->sup);

	ll->shut = true;
	if (refused)
		*refused = supervisor_audit_failures(ll->sup);
	return left;
}

int
link_local_audit_head(struct link *l, int64_t *seq, char hash[HASH_HEX_LEN + 1])
{
	struct link_local *ll = local(l);

	return ll->audit ? audit_head(ll->audit, seq, hash) : -1;
}

const char *
link_state_name(enum link_state s)
{
	switch (s) {
	case LINK_UP:
		return "connected";
	case LINK_CONNECTING:
		return "connecting";
	case LINK_LOST:
		break;
	}
	return "lost";
}
