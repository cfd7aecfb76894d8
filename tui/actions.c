#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "supervisor.h"

int
action_cutover(struct app *a, enum cutover_op op, const char *tool, bool all, const char *session)
{
	const char *ids[UI_MARKS_MAX];
	size_t n = 0, i, targets = 0;
	struct al_err err;
	int64_t rev;

	if (!all && a->model.n_marks > 0)
		for (i = 0; i < a->model.n_marks; i++)
			ids[n++] = a->model.marks[i];
	else if (!all)
		ids[n++] = session;
	if (supervisor_cutover_by(a->sup, op, tool, all ? NULL : ids, n, &a->author, &rev, &targets,
				  &err) < 0) {
		status_flash(&a->status, true, "%s", err.msg);
		return APP_REDRAW;
	}
	status_flash(&a->status, false, "r%lld: %s %s posted to %zu session%s; acknowledgements follow",
		     (long long)rev, cutover_op_id(op), tool, targets, targets == 1 ? "" : "s");
	return APP_REDRAW;
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
action_ask_all(struct app *a, enum cutover_op op, const char *tool, const char *fmt, ...)
{
	va_list ap;
	int flags;

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

/* A freeze or a thaw, posted: the acknowledgements follow as events. */
static int
freeze(struct app *a, bool frozen)
{
	struct al_err err;
	size_t targets = 0;
	int64_t rev;

	if (supervisor_freeze(a->sup, frozen, &a->author, &rev, &targets, &err) < 0) {
		status_flash(&a->status, true, "%s", err.msg);
		return APP_REDRAW;
	}
	status_flash(&a->status, false, "r%lld: %s posted to %zu session%s; acknowledgements follow",
		     (long long)rev, frozen ? "freeze" : "thaw", targets, targets == 1 ? "" : "s");
	return APP_REDRAW;
}

int
action_freeze(struct app *a)
{
	return freeze(a, true);
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

static int
stop_all_confirmed(struct app *a)
{
	size_t n = supervisor_stop_all(a->sup);

	status_flash(&a->status, false, "stop-all: %zu session%s stopping", n, n == 1 ? "" : "s");
	return APP_REDRAW;
}

int
action_quit(struct app *a)
{
	if (a->model.snap.live == 0 && supervisor_live(a->sup) == 0)
		return APP_QUIT;
	return ask_fixed(a, CONFIRM_QUIT, "%zu sessions live: stop them all and quit?",
			 supervisor_live(a->sup));
}

static int
stop_confirmed(struct app *a)
{
	if (supervisor_stop_session(a->sup, a->confirm.session) < 0)
		status_flash(&a->status, true, "session %.10s is not live", a->confirm.session);
	else
		status_flash(&a->status, false, "force-stop %.10s: container stopping",
			     a->confirm.session);
	return APP_REDRAW;
}

static int
apply_confirmed(struct app *a)
{
	const struct incident *p = &a->confirm.policy;
	size_t i;

	for (i = 0; i < p->n; i++)
		action_cutover(a, p->op[i], p->tool[i], true, NULL);
	status_flash(&a->status, false,
		     "incident policy applied: %zu cutovers posted; see the tools view", p->n);
	return APP_REDRAW;
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
	case CONFIRM_CUTOVER:
		return action_cutover(a, a->confirm.op, a->confirm.tool, true, NULL);
	case CONFIRM_APPLY:
		return apply_confirmed(a);
	case CONFIRM_THAW:
		return freeze(a, false);
	case CONFIRM_STOP_ALL:
		return stop_all_confirmed(a);
	case CONFIRM_QUIT:
		return APP_QUIT;
	default:
		return APP_REDRAW;
	}
}
