#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "grant.h"
#include "util.h"

#define ASK_ID_MAX	16	/* a session id as a question shows it */

/* ---- answers ---- */

/* "name: " before an engine's answer when the console has several. */
static const char *
engine_prefix(const struct app *a, unsigned k, char *buf, size_t cap)
{
	if (a->n_links > 1 && k < a->n_links)
		snprintf(buf, cap, "%s: ", a->model.engine_names[k]);
	else
		buf[0] = '\0';
	return buf;
}

static const char *
plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* One engine's answer to a cutover, a freeze or a thaw. */
static void
cutover_text(const struct link_result *r, char *buf, size_t cap)
{
	const char *what = r->op == CUTOVER_FREEZE ? "freeze" : r->op == CUTOVER_THAW ? "thaw" : NULL;
	bool alias = !what && r->acted[0] && strcmp(r->acted, r->tool) != 0;	/* "remember (store)" */
	char name[2 * SNAP_NAME_MAX + 72], terms[48] = "";
	size_t len;
	int n;

	snprintf(name, sizeof name, "%s%s%s%s%s%s", what ? what : cutover_op_id(r->op),
		 what ? "" : " ", what ? "" : r->tool, alias ? " (" : "", alias ? r->acted : "",
		 alias ? ")" : "");
	if (r->grant.for_s || r->grant.calls) {
		grant_terms_text(r->grant.for_s, r->grant.calls, terms, sizeof terms);
		len = strlen(name);
		snprintf(name + len, sizeof name - len, " (grant: %s)", terms);
	}
	if (!r->acks && !r->pending) {
		snprintf(buf, cap, "r%lld: %s posted to %zu session%s; acknowledgements follow",
			 (long long)r->revision, name, r->targets, plural(r->targets));
		return;
	}
	/* An engine that waited for its sessions before it answered. */
	n = snprintf(buf, cap, "r%lld: %s on %zu session%s: %zu acknowledged",
		     (long long)r->revision, name, r->targets, plural(r->targets), r->acks);
	if (r->pending && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, ", %zu pending", r->pending);
}

static void
result_text(const struct link_result *r, char *buf, size_t cap)
{
	switch (r->req) {
	case LINK_REQ_START:
		snprintf(buf, cap, "session %.10s started from %.100s", r->session, r->path);
		break;
	case LINK_REQ_STOP:
		snprintf(buf, cap, "force-stop %.10s: container stopping", r->session);
		break;
	case LINK_REQ_STOP_ALL:
		snprintf(buf, cap, "stop-all: %zu session%s stopping", r->targets, plural(r->targets));
		break;
	case LINK_REQ_CUTOVER:
		cutover_text(r, buf, cap);
		break;
	case LINK_REQ_FORGET:
		snprintf(buf, cap, "forgot %.10s", r->session);
		break;
	case LINK_REQ_QUARANTINE:
		snprintf(buf, cap, "%s %.10s%s", r->op == CUTOVER_FREEZE ? "quarantined" : "released",
			 r->session, r->targets ? "" : r->op == CUTOVER_FREEZE
				? ": already quarantined" : ": not quarantined");
		break;
	case LINK_REQ_APPROVE:
		snprintf(buf, cap, "hold %lld approved%s: the call goes on", (long long)r->hold,
			 r->rest ? " with its tool's later calls in the session" : "");
		break;
	case LINK_REQ_DENY:
		snprintf(buf, cap, "hold %lld denied: the agent is told hold_denied", (long long)r->hold);
		break;
	}
}

/* The gathered answers, in the engines' order. */
static void
fanout_flash(struct app *a)
{
	const struct fanout *f = &a->fanout;
	char text[STATUS_TEXT_MAX] = "", pre[SNAP_ENGINE_MAX + 4], sep[8];
	size_t k, n = 0;

	snprintf(sep, sizeof sep, " %s ",
		 draw_glyph(&(struct ui_model){ .ascii = a->screen.ascii }, GLYPH_DOT));
	for (k = 0; k < a->n_links && k < FANOUT_MAX && n < sizeof text; k++)
		if (f->sent[k])
			n += (size_t)snprintf(text + n, sizeof text - n, "%s%s%s", n ? sep : "",
					      engine_prefix(a, (unsigned)k, pre, sizeof pre),
					      f->done[k] ? f->part[k] : "waiting");
	status_flash(&a->status, f->failed, "%s", text);
}

/*
 * An answer on the status line. A request that went to several engines
 * gathers their answers on one line, each after its engine's name.
 */
int
action_result(struct app *a, const struct link_result *r)
{
	struct fanout *f = &a->fanout;
	char text[STATUS_TEXT_MAX], pre[SNAP_ENGINE_MAX + 4];
	unsigned k = r->engine;

	if (r->ok)
		result_text(r, text, sizeof text);
	else
		snprintf(text, sizeof text, "%.180s", r->error);
	if (f->n_sent > 1 && k < FANOUT_MAX && f->sent[k] && !f->done[k] && (int)r->req == f->req) {
		snprintf(f->part[k], sizeof f->part[k], "%.95s", text);
		f->done[k] = true;
		f->failed |= !r->ok;
		fanout_flash(a);
		return APP_REDRAW;
	}
	status_flash(&a->status, !r->ok, "%s%s", engine_prefix(a, k, pre, sizeof pre), text);
	return APP_REDRAW;
}

/* A request is going out, to one engine or several. */
static void
fanout_open(struct app *a, enum link_request req, size_t n)
{
	a->fanout = (struct fanout){ .req = req, .n_sent = n };
}

/* What engine k's call returned: its answer now, or later. */
static int
answered(struct app *a, unsigned k, int rc, struct link_result *r)
{
	struct fanout *f = &a->fanout;

	r->engine = k;
	if (k < FANOUT_MAX)
		f->sent[k] = true;
	if (rc == LINK_DONE)
		return action_result(a, r);
	if (f->n_sent > 1)
		fanout_flash(a);
	else
		status_flash(&a->status, false, "sent to engine %s; its answer follows",
			     a->model.engine_names[k]);
	return APP_REDRAW;
}

/* ---- requests ---- */

/*
 * One request to every engine, the answers gathered on one line: a
 * cutover for every session (op, tool), or with stop_all every session
 * stopped.
 */
static int
every_engine(struct app *a, bool stop_all, enum cutover_op op, const char *tool,
	     const struct link_grant *grant)
{
	struct link_result r;
	struct link *l;
	size_t k;
	int flags = APP_REDRAW;

	fanout_open(a, stop_all ? LINK_REQ_STOP_ALL : LINK_REQ_CUTOVER, a->n_links);
	for (k = 0; k < a->n_links; k++) {
		l = a->links[k];
		memset(&r, 0, sizeof r);
		flags |= answered(a, (unsigned)k, stop_all ? l->ops->stop_all(l, &r) :
				  l->ops->cutover(l, op, tool, NULL, 0, grant, &r), &r);
	}
	return flags;
}

static int
cutover_all(struct app *a, enum cutover_op op, const char *tool, const struct link_grant *grant)
{
	return every_engine(a, false, op, tool, grant);
}

int
action_cutover(struct app *a, enum cutover_op op, const char *tool, bool all, const char *session,
	       const struct link_grant *grant)
{
	const char *ids[MODEL_LINKS_MAX][UI_MARKS_MAX];
	size_t n[MODEL_LINKS_MAX] = { 0 }, i, k, engines = 0;
	struct link_result r;
	unsigned e;
	int flags = APP_REDRAW;

	if (all)
		return cutover_all(a, op, tool, grant);
	if (a->model.n_marks > 0)
		for (i = 0; i < a->model.n_marks; i++) {
			e = model_engine_of(&a->model, a->model.marks[i]);
			ids[e][n[e]++] = a->model.marks[i];
		}
	else {
		e = model_engine_of(&a->model, session);
		ids[e][n[e]++] = session;
	}
	for (k = 0; k < a->n_links; k++)
		engines += n[k] > 0;
	fanout_open(a, LINK_REQ_CUTOVER, engines);
	for (k = 0; k < a->n_links; k++) {
		if (!n[k])
			continue;
		memset(&r, 0, sizeof r);
		flags |= answered(a, (unsigned)k,
				  a->links[k]->ops->cutover(a->links[k], op, tool, ids[k], n[k], grant, &r),
				  &r);
	}
	return flags;
}

int
action_start(struct app *a, const char *path, unsigned engine)
{
	struct link_result r = { 0 };

	if (engine >= a->n_links)
		engine = 0;
	fanout_open(a, LINK_REQ_START, 1);
	return answered(a, engine, a->links[engine]->ops->start(a->links[engine], path, &r), &r);
}

int
action_forget_ended(struct app *a)
{
	struct link_result r;
	size_t i, n = 0;
	int flags = APP_REDRAW;

	fanout_open(a, LINK_REQ_FORGET, 0);
	for (i = 0; i < a->model.snap.n; i++) {
		const struct session_row *row = &a->model.snap.rows[i];
		struct link *l = a->links[row->engine < a->n_links ? row->engine : 0];

		if (row->state != SESSION_STATE_ENDED)
			continue;
		memset(&r, 0, sizeof r);
		if (l->ops->forget(l, row->id, &r) == LINK_DONE && !r.ok)
			continue;
		n++;
	}
	status_flash(&a->status, false, "forgot %zu ended session%s", n, plural(n));
	return flags;
}

static int
ask(struct app *a, enum confirm_action act, const char *fmt, va_list ap)
{
	vsnprintf(a->confirm.question, sizeof a->confirm.question, fmt, ap);
	a->confirm.action = act;
	a->screen.overlay = OVERLAY_CONFIRM;
	return APP_REDRAW;
}

int
action_ask_all(struct app *a, enum cutover_op op, const char *tool,
	       const struct link_grant *grant, const char *fmt, ...)
{
	va_list ap;
	int flags;

	a->confirm.grant = grant ? *grant : (struct link_grant){ 0 };
	snprintf(a->confirm.tool, sizeof a->confirm.tool, "%s", tool);
	a->confirm.op = op;
	va_start(ap, fmt);
	flags = ask(a, CONFIRM_CUTOVER, fmt, ap);
	va_end(ap);
	return flags;
}

int
action_ask_apply(struct app *a, const struct incident *policy, const char *fmt, ...)
{
	va_list ap;
	int flags;

	a->confirm.policy = *policy;
	va_start(ap, fmt);
	flags = ask(a, CONFIRM_APPLY, fmt, ap);
	va_end(ap);
	return flags;
}

static int
ask_fixed(struct app *a, enum confirm_action act, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
ask_fixed(struct app *a, enum confirm_action act, const char *fmt, ...)
{
	va_list ap;
	int flags;

	va_start(ap, fmt);
	flags = ask(a, act, fmt, ap);
	va_end(ap);
	return flags;
}

int
action_ask_stop(struct app *a, const char *session)
{
	snprintf(a->confirm.session, sizeof a->confirm.session, "%s", session);
	return ask_fixed(a, CONFIRM_STOP, "force-stop session %.10s now?", session);
}

int
action_ask_quarantine(struct app *a, const char *session, bool on)
{
	snprintf(a->confirm.session, sizeof a->confirm.session, "%s", session);
	a->confirm.op = on ? CUTOVER_FREEZE : CUTOVER_THAW;
	return on ? ask_fixed(a, CONFIRM_QUARANTINE, "quarantine session %.10s: deny its calls, "
			      "pause its container?", session)
		  : ask_fixed(a, CONFIRM_QUARANTINE, "release session %.10s: unpause it, "
			      "let its calls through as the gate says?", session);
}

/* A freeze on every engine: no question; the acknowledgements follow as events. */
int
action_freeze(struct app *a)
{
	return cutover_all(a, CUTOVER_FREEZE, NULL, NULL);
}

int
action_ask_thaw(struct app *a)
{
	return ask_fixed(a, CONFIRM_THAW, "thaw: let calls through again on all %zu live sessions?",
			 a->model.snap.live);
}

int
action_ask_stop_all(struct app *a)
{
	return ask_fixed(a, CONFIRM_STOP_ALL, "stop all %zu live sessions now?", a->model.snap.live);
}

/* Attached, quitting detaches at once: it stops nothing. */
int
action_quit(struct app *a)
{
	if (a->attached || a->model.snap.live == 0)
		return APP_QUIT;
	return ask_fixed(a, CONFIRM_QUIT, "%zu sessions live: stop them all and quit?",
			 a->model.snap.live);
}

static int
stop_confirmed(struct app *a)
{
	unsigned e = model_engine_of(&a->model, a->confirm.session);
	struct link_result r = { 0 };

	fanout_open(a, LINK_REQ_STOP, 1);
	return answered(a, e, a->links[e]->ops->stop(a->links[e], a->confirm.session, &r), &r);
}

static int
quarantine_confirmed(struct app *a)
{
	unsigned e = model_engine_of(&a->model, a->confirm.session);
	struct link_result r = { 0 };
	struct link *l = a->links[e];

	fanout_open(a, LINK_REQ_QUARANTINE, 1);
	return answered(a, e, l->ops->quarantine(l, a->confirm.session,
						 a->confirm.op == CUTOVER_FREEZE, &r), &r);
}

static int
apply_confirmed(struct app *a)
{
	const struct incident *p = &a->confirm.policy;
	size_t i;

	for (i = 0; i < p->n; i++)
		cutover_all(a, p->op[i], p->tool[i], NULL);
	status_flash(&a->status, false, "incident policy: %zu cutovers posted to %zu engine%s; "
		     "see the tools view", p->n, a->n_links, plural(a->n_links));
	return APP_REDRAW;
}

/* The held call id of engine as the model lists it, or NULL. */
static const struct hold_view *
held_call(const struct app *a, int64_t id, unsigned engine)
{
	size_t i;

	for (i = 0; a->model.pending && i < a->model.n_pending; i++)
		if (a->model.pending[i].id == id && a->model.pending[i].engine == engine)
			return &a->model.pending[i];
	return NULL;
}

/*
 * Approve (rest: and its tool's later calls in its session) or deny the
 * held call t names, after a y. The question names the call by its id,
 * tool and session: a y decides that call even when the list moved on.
 */
int
action_ask_decide(struct app *a, bool approve, bool rest, const struct target *t)
{
	const struct hold_view *h = held_call(a, t->hold, t->hold_engine);
	char id[ASK_ID_MAX];

	a->confirm.hold = t->hold;
	a->confirm.engine = t->hold_engine;
	a->confirm.approve = approve;
	a->confirm.rest = approve && rest;
	/* As the views show it: the first 8 hex digits, without "s-". */
	snprintf(id, sizeof id, "%.8s", t->session + (strncmp(t->session, "s-", 2) == 0 ? 2 : 0));
	if (!approve)
		return ask_fixed(a, CONFIRM_DECIDE, "deny hold %lld: %.60s in session %s?",
				 (long long)t->hold, t->tool, id);
	if (rest)
		return ask_fixed(a, CONFIRM_DECIDE, "approve hold %lld and every later %.60s call in"
				 " session %s without a wait?", (long long)t->hold, t->tool, id);
	if (h && h->declassify)	/* a class flow hold past the sink ceiling: said so */
		return ask_fixed(a, CONFIRM_DECIDE, "approve hold %lld: %.60s in session %s, "
				 "declassifying %.20s to a %.20s sink?", (long long)t->hold, t->tool,
				 id, h->session_class, h->sink_ceiling);
	return ask_fixed(a, CONFIRM_DECIDE, "approve hold %lld: %.60s in session %s?",
			 (long long)t->hold, t->tool, id);
}

static int
decide_confirmed(struct app *a)
{
	const struct confirm *c = &a->confirm;
	unsigned e = c->engine < a->n_links ? c->engine : 0;
	struct link_result r = { 0 };
	struct link *l = a->links[e];

	fanout_open(a, c->approve ? LINK_REQ_APPROVE : LINK_REQ_DENY, 1);
	return answered(a, e, l->ops->decide(l, c->hold, c->approve, c->rest, &r), &r);
}

int
action_answer(struct app *a, int key)
{
	enum confirm_action act = a->confirm.action;

	a->screen.overlay = OVERLAY_NONE;
	a->confirm.action = CONFIRM_NONE;
	if (key != 'y' && key != 'Y') {
		status_flash(&a->status, false, "cancelled");
		return APP_REDRAW;
	}
	switch (act) {
	case CONFIRM_STOP:
		return stop_confirmed(a);
	case CONFIRM_QUARANTINE:
		return quarantine_confirmed(a);
	case CONFIRM_CUTOVER:
		return action_cutover(a, a->confirm.op, a->confirm.tool, true, NULL, &a->confirm.grant);
	case CONFIRM_APPLY:
		return apply_confirmed(a);
	case CONFIRM_THAW:
		return cutover_all(a, CUTOVER_THAW, NULL, NULL);
	case CONFIRM_STOP_ALL:
		return every_engine(a, true, CUTOVER_REVOKE, NULL, NULL);
	case CONFIRM_DECIDE:
		return decide_confirmed(a);
	case CONFIRM_QUIT:
		return APP_QUIT;
	default:
		return APP_REDRAW;
	}
}
