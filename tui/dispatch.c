/*
 * Keys become named requests through the keymap (the view's section, then
 * generic), and requests become handlers here, each returning the loop's
 * flags. The one place read-only mode is enforced, for keys and ':'
 * commands alike, and where the model's verdict on what is offered turns
 * into a refusal on the status line. The current view has the first word on each request (its request
 * hook); the rest is generic.
 */
#include "dispatch.h"

#include <stdio.h>
#include <string.h>

#include <curses.h>	/* the KEY_* codes keypad() delivers */

#include "actions.h"
#include "app.h"
#include "display.h"
#include "verbs.h"

static int
refuse_read_only(struct app *a, const char *what)
{
	status_flash(&a->status, true, "read-only: %s refused", what);
	return APP_REDRAW;
}

static int
move_by(struct app *a, long delta)
{
	model_move(&a->model, delta);
	return APP_REDRAW;
}

/* The view a view-NAME request opens, or -1: one case per line of view_info.h. */
static int
view_of(enum request r)
{
	switch (r) {
#define VIEW_OF_REQUEST(e, name, title) case REQ_VIEW_##e: return VIEW_##e;
	VIEW_INFO(VIEW_OF_REQUEST)
#undef VIEW_OF_REQUEST
	default:
		return -1;
	}
}

/* view-NAME: the view itself says what opening it shows (its open hook). */
static int
open_view(struct app *a, enum view_id v, const struct target *t)
{
	if (views[v]->open && !views[v]->open(&a->model.vs[v], t->session)) {
		status_flash(&a->status, true, "no session selected");
		return APP_REDRAW;
	}
	model_open(&a->model, v, NULL);
	return APP_REDRAW;
}

static int
back(struct app *a)
{
	struct view_state *vs = &a->model.vs[a->model.view];

	if (vs->filter[0])
		vs->filter[0] = '\0';
	else if (a->model.view != VIEW_SESSIONS)
		model_open(&a->model, VIEW_SESSIONS, NULL);
	return APP_REDRAW;
}

static int
toggle_mark(struct app *a, const struct target *t)
{
	if (!t->session[0])
		return APP_REDRAW;
	model_toggle_mark(&a->model, t->session);
	return move_by(a, 1);
}

/* r / R: the selected tool, on marked sessions or the selected one; all: on every session. */
static int
tool_request(struct app *a, enum cutover_op op, bool all, const struct target *t)
{
	if (!t->tool[0]) {
		model_open(&a->model, VIEW_TOOLS, t->session);
		status_flash(&a->status, false, "select a tool, then %s it", cutover_op_id(op));
		return APP_REDRAW;
	}
	if (!all && !t->session[0] && a->model.n_marks == 0)
		all = true;	/* the tools list across sessions acts on all of them */
	if (!all)
		return action_cutover(a, op, t->tool, false, t->session, NULL);
	return action_ask_all(a, op, t->tool, NULL, "%s %s on all %zu live sessions?", cutover_op_id(op),
			      t->tool, a->model.snap.live);
}

/* The selected session when it is live, else NULL with why not on the status line. */
static const struct session_row *
live_selected(struct app *a, const struct target *t)
{
	const struct session_row *r = model_session(&a->model, t->session);

	if (r && r->state != SESSION_STATE_ENDED)
		return r;
	status_flash(&a->status, true, "no live session selected");
	return NULL;
}

static int
force_stop(struct app *a, const struct target *t)
{
	return live_selected(a, t) ? action_ask_stop(a, t->session) : APP_REDRAW;
}

/* Q: quarantine the selected live session, or release it when it is held. */
static int
quarantine_request(struct app *a, const struct target *t)
{
	const struct session_row *r = live_selected(a, t);

	return r ? action_ask_quarantine(a, t->session, !r->quarantine.on) : APP_REDRAW;
}

static int
incident_request(struct app *a, enum request r, const struct target *t)
{
	switch (r) {
	case REQ_REVOKE:	return tool_request(a, CUTOVER_REVOKE, false, t);
	case REQ_RESTORE:	return tool_request(a, CUTOVER_RESTORE, false, t);
	case REQ_REVOKE_ALL:	return tool_request(a, CUTOVER_REVOKE, true, t);
	case REQ_RESTORE_ALL:	return tool_request(a, CUTOVER_RESTORE, true, t);
	case REQ_FREEZE:	return action_freeze(a);
	case REQ_THAW:		return action_ask_thaw(a);
	case REQ_STOP_ALL:	return action_ask_stop_all(a);
	case REQ_QUARANTINE:	return quarantine_request(a, t);
	default:		return force_stop(a, t);
	}
}

static int
list_request(struct app *a, enum request r, const struct target *t)
{
	const struct view_ops *v = views[a->model.view];
	struct view_state *vs = &a->model.vs[a->model.view];

	switch (r) {
	case REQ_SORT_NEXT:
		if (v->n_sorts > 0)
			vs->sort = (vs->sort + 1) % v->n_sorts;
		return APP_REDRAW;
	case REQ_SORT_REVERSE:
		vs->sort_reverse = !vs->sort_reverse;
		return APP_REDRAW;
	case REQ_FILTER:
		a->screen.overlay = OVERLAY_FILTER;
		prompt_start(&a->prompt, vs->filter);
		return APP_REDRAW;
	case REQ_MARK:
		return toggle_mark(a, t);
	case REQ_MARK_CLEAR:
		a->model.n_marks = 0;
		return APP_REDRAW;
	default:	/* host refresh */
		for (size_t k = 0; k < a->n_links; k++)
			link_host_refresh(a->links[k], a->runtime);
		status_flash(&a->status, false, "host checks running");
		return APP_REDRAW;
	}
}

/* [ and ]: the view's jump from the selection; said so when there is none that way. */
static int
jump_request(struct app *a, bool forward)
{
	struct view_state *vs = &a->model.vs[a->model.view];
	struct ui_model u;
	size_t to;

	model_ui(&a->model, &u);
	to = views[a->model.view]->jump(&u, vs, forward);
	if (to == vs->selected)
		status_flash(&a->status, false, forward ? "no later operator's change"
							: "no earlier operator's change");
	vs->selected = to;
	return APP_REDRAW;
}

static int
console_request(struct app *a, enum request r)
{
	switch (r) {
	case REQ_HELP:
		a->screen.overlay = OVERLAY_HELP;
		a->screen.help_top = 0;
		return APP_REDRAW;
	case REQ_PROMPT:
		a->screen.overlay = OVERLAY_PROMPT;
		prompt_start(&a->prompt, "");
		return APP_REDRAW;
	case REQ_DISMISS:
		status_dismiss(&a->status);
		return APP_REDRAW;
	case REQ_DISMISS_ALL:
		status_dismiss_all(&a->status);
		return APP_REDRAW;
	case REQ_MOUSE:
		display_mouse(&a->screen, !a->screen.mouse);
		status_flash(&a->status, false, "mouse %s", a->screen.mouse ? "on" : "off");
		return APP_REDRAW;
	case REQ_REDRAW:
		return APP_RELAYOUT;
	default:	/* quit */
		return action_quit(a);
	}
}

static int
move_request(struct app *a, enum request r)
{
	long page = a->screen.page;

	switch (r) {
	case REQ_MOVE_UP:	return move_by(a, -1);
	case REQ_MOVE_DOWN:	return move_by(a, 1);
	case REQ_PAGE_UP:	return move_by(a, -page);
	case REQ_PAGE_DOWN:	return move_by(a, page);
	case REQ_MOVE_FIRST:	return move_by(a, -(long)1e9);
	default:		return move_by(a, (long)1e9);
	}
}

/*
 * Every request goes through here: read-only checked once, then what the
 * model says is not offered here is refused with its reason, then the
 * request the current view makes of it is carried out.
 */
static int
dispatch_request(struct app *a, enum request r)
{
	char why[STATUS_TEXT_MAX];
	struct target t;
	int v;

	if (r == REQ_NONE)
		return 0;
	if (a->model.read_only && request_destructive(r))
		return refuse_read_only(a, request_name(r));
	model_target(&a->model, &t);
	if (!model_offered(&a->model, r, &t, why, sizeof why)) {
		if (why[0])
			status_flash(&a->status, true, "%s", why);
		return APP_REDRAW;
	}
	r = model_request(&a->model, r);
	if ((v = view_of(r)) >= 0)
		return open_view(a, (enum view_id)v, &t);
	switch (r) {
	case REQ_MOVE_UP: case REQ_MOVE_DOWN: case REQ_PAGE_UP: case REQ_PAGE_DOWN:
	case REQ_MOVE_FIRST: case REQ_MOVE_LAST:
		return move_request(a, r);
	case REQ_ENTER:
		model_open(&a->model, VIEW_DETAIL, t.session);
		return APP_REDRAW;
	case REQ_BACK:
		return back(a);
	case REQ_VIEW_NEXT:
		model_open(&a->model, (enum view_id)((a->model.view + 1) % VIEW_COUNT), NULL);
		return APP_REDRAW;
	case REQ_REVOKE: case REQ_RESTORE: case REQ_REVOKE_ALL: case REQ_RESTORE_ALL:
	case REQ_FORCE_STOP: case REQ_FREEZE: case REQ_THAW: case REQ_STOP_ALL:
	case REQ_QUARANTINE:
		return incident_request(a, r, &t);
	case REQ_APPROVE: case REQ_APPROVE_REST: case REQ_DENY:
		return action_ask_decide(a, r != REQ_DENY, r == REQ_APPROVE_REST, &t);
	case REQ_SORT_NEXT: case REQ_SORT_REVERSE: case REQ_FILTER: case REQ_MARK:
	case REQ_MARK_CLEAR: case REQ_HOST_REFRESH:
		return list_request(a, r, &t);
	case REQ_JUMP_PREV: case REQ_JUMP_NEXT:
		return jump_request(a, r == REQ_JUMP_NEXT);
	default:
		return console_request(a, r);
	}
}

/* ---- overlays ---- */

static int
help_key(struct app *a, int key)
{
	enum request r = keymap_lookup(&a->keys, "help", key);
	int page = (int)a->screen.page;

	if (r == REQ_MOVE_DOWN || r == REQ_PAGE_DOWN)
		a->screen.help_top += r == REQ_MOVE_DOWN ? 1 : page;
	else if (r == REQ_MOVE_UP || r == REQ_PAGE_UP)
		a->screen.help_top -= r == REQ_MOVE_UP ? 1 : page;
	else if (r == REQ_MOVE_FIRST)
		a->screen.help_top = 0;
	else if (r == REQ_MOVE_LAST)
		a->screen.help_top = display_help_top_max(&a->screen);
	else
		a->screen.overlay = OVERLAY_NONE;	/* any other key closes help */
	if (a->screen.help_top > display_help_top_max(&a->screen))	/* its last page at most */
		a->screen.help_top = display_help_top_max(&a->screen);
	if (a->screen.help_top < 0)
		a->screen.help_top = 0;
	return APP_REDRAW;
}

/* A ':' line entered: read-only refuses what would change something, as for keys. */
static int
command_line(struct app *a, const char *line)
{
	char word[PROMPT_INPUT_MAX];
	const struct verb *v = verb_of_line(line, word, sizeof word);

	if (a->model.read_only && v && v->destructive)
		return refuse_read_only(a, word);
	if (model_view_only(&a->model) && v && v->destructive) {
		status_flash(&a->status, true, MODEL_VIEW_ONLY, word);
		return APP_REDRAW;
	}
	return verbs_run(a, line);
}

/* The ':' line runs what is entered; the '/' line filters the view as typed. */
static int
line_key(struct app *a, int key)
{
	bool filter = a->screen.overlay == OVERLAY_FILTER;
	struct view_state *vs = &a->model.vs[a->model.view];

	switch (prompt_key(&a->prompt, key, !filter)) {
	case PROMPT_CANCELLED:
		a->screen.overlay = OVERLAY_NONE;
		if (filter)
			vs->filter[0] = '\0';
		return APP_REDRAW;
	case PROMPT_ENTERED:
		a->screen.overlay = OVERLAY_NONE;
		return filter ? APP_REDRAW : command_line(a, a->prompt.input);
	case PROMPT_COMPLETE:
		verbs_complete(a->prompt.input, sizeof a->prompt.input, &a->model.snap);
		prompt_edited(&a->prompt);
		return APP_REDRAW;
	default:
		break;
	}
	if (filter) {
		snprintf(vs->filter, sizeof vs->filter, "%.*s", UI_FILTER_MAX - 1, a->prompt.input);
		/*
		 * Another list: from its top, and a log view (audit, timeline)
		 * from its newest row on, following, as when it opened (no rows
		 * seen yet): else its cursor stayed on the first match, and
		 * after Esc on the first row of the whole log.
		 */
		vs->selected = vs->top = 0;
		vs->rows_seen = 0;
	}
	return APP_REDRAW;
}

static int
wheel(struct app *a)
{
	long delta = display_wheel();

	return delta ? move_by(a, delta) : 0;
}

/*
 * A key while a question is shown: y does it, any other key cancels. One
 * that opens the ':' or '/' line opens it too, so an operator who started
 * typing a command types it there, not as keys of the view.
 */
static int
confirm_key(struct app *a, int key)
{
	enum request req = keymap_lookup(&a->keys, views[a->model.view]->name, key);
	int flags = action_answer(a, key);

	if (key == 'y' || key == 'Y' || (req != REQ_PROMPT && req != REQ_FILTER))
		return flags;
	return flags | dispatch_request(a, req);
}

int
dispatch_key(struct app *a, int key)
{
	if (key == KEY_RESIZE)
		return APP_RELAYOUT;
	switch (a->screen.overlay) {
	case OVERLAY_CONFIRM:
		return confirm_key(a, key);
	case OVERLAY_HELP:
		return help_key(a, key);
	case OVERLAY_PROMPT:
	case OVERLAY_FILTER:
		return line_key(a, key);
	default:
		break;
	}
	if (key == KEY_MOUSE)
		return a->screen.mouse ? wheel(a) : 0;
	return dispatch_request(a, keymap_lookup(&a->keys, views[a->model.view]->name, key));
}
