/*
 * Keys become named requests through the keymap (the view's section, then
 * generic), and requests become actions here — the one place read-only
 * mode is enforced. ':' commands land here too. Every action that changes
 * a session only asks the supervisor, which returns at once.
 */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complete.h"
#include "incident.h"
#include "supervisor.h"

static int
refuse_read_only(struct app *a, const char *what)
{
	app_flash(a, true, "read-only: %s refused", what);
	return APP_REDRAW;
}

void
dispatch_target(struct app *a, char session[SNAP_ID_MAX], char tool[SNAP_NAME_MAX])
{
	struct ui_model m;
	const struct view_ops *v = views[a->view];
	struct view_state *vs = &a->vs[a->view];

	session[0] = tool[0] = '\0';
	app_model(a, &m);
	if (v->target && v->rows(&m, vs) > 0)
		v->target(&m, vs, vs->selected, session, tool);
	if (!session[0] && vs->session[0])
		snprintf(session, SNAP_ID_MAX, "%s", vs->session);
}

static const struct session_row *
row_by_id(const struct app *a, const char *id)
{
	size_t i;

	for (i = 0; i < a->snap.n; i++)
		if (strcmp(a->snap.rows[i].id, id) == 0)
			return &a->snap.rows[i];
	return NULL;
}

static int
open_view(struct app *a, enum view_id v, const char *session)
{
	if (session)
		snprintf(a->vs[v].session, sizeof a->vs[v].session, "%s", session);
	if (v != a->view)
		a->vs[v].selected = a->vs[v].top = 0;
	a->view = v;
	return APP_REDRAW;
}

static int
move_by(struct app *a, long delta)
{
	struct ui_model m;
	struct view_state *vs = &a->vs[a->view];
	size_t n;
	long to;

	app_model(a, &m);
	n = views[a->view]->rows(&m, vs);
	if (n == 0)
		return APP_REDRAW;
	to = (long)vs->selected + delta;
	vs->selected = to < 0 ? 0 : (size_t)to >= n ? n - 1 : (size_t)to;
	return APP_REDRAW;
}

static long
page(struct app *a)
{
	return a->body ? (getmaxy(a->body) > 3 ? getmaxy(a->body) - 3 : 1) : 1;
}

static int
toggle_mark(struct app *a)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];
	size_t i;

	dispatch_target(a, session, tool);
	if (!session[0])
		return APP_REDRAW;
	for (i = 0; i < a->n_marks; i++)
		if (strcmp(a->marks[i], session) == 0) {
			memmove(a->marks[i], a->marks[i + 1], (a->n_marks - i - 1) * sizeof a->marks[0]);
			a->n_marks--;
			return move_by(a, 1);
		}
	if (a->n_marks < UI_MARKS_MAX)
		snprintf(a->marks[a->n_marks++], SNAP_ID_MAX, "%s", session);
	return move_by(a, 1);
}

/* Post one delta: all sessions, the marked ones, or one. */
static int
cutover(struct app *a, enum cutover_op op, const char *tool, bool all, const char *session)
{
	const char *ids[UI_MARKS_MAX];
	size_t n = 0, i, targets = 0;
	struct al_err err;
	int64_t rev;

	if (!all && a->n_marks > 0)
		for (i = 0; i < a->n_marks; i++)
			ids[n++] = a->marks[i];
	else if (!all)
		ids[n++] = session;
	if (supervisor_cutover(a->sup, op, tool, all ? NULL : ids, n, &rev, &targets, &err) < 0) {
		app_flash(a, true, "%s", err.msg);
		return APP_REDRAW;
	}
	app_flash(a, false, "r%lld: %s %s posted to %zu session%s; acknowledgements follow",
		  (long long)rev, cutover_op_id(op), tool, targets, targets == 1 ? "" : "s");
	return APP_REDRAW;
}

static int
ask(struct app *a, enum confirm_action act, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
ask(struct app *a, enum confirm_action act, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->question, sizeof a->question, fmt, ap);
	va_end(ap);
	a->action = act;
	a->overlay = OVERLAY_CONFIRM;
	return APP_REDRAW;
}

/* r / R on a view: the selected tool, on marked sessions or the selected one. */
static int
tool_request(struct app *a, enum cutover_op op, bool all)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];

	dispatch_target(a, session, tool);
	/* The tools view's r/R act on the sessions it lists: all, or the one it shows. */
	if (all && a->view == VIEW_TOOLS && a->vs[VIEW_TOOLS].session[0])
		all = false;
	if (!tool[0]) {
		if (!session[0]) {
			app_flash(a, true, "no session or tool selected");
			return APP_REDRAW;
		}
		open_view(a, VIEW_TOOLS, session);
		app_flash(a, false, "select a tool, then %s it", cutover_op_id(op));
		return APP_REDRAW;
	}
	if (!all && !session[0] && a->n_marks == 0)
		all = true;	/* the tools list across sessions acts on all of them */
	if (!all)
		return cutover(a, op, tool, false, session);
	snprintf(a->arg_tool, sizeof a->arg_tool, "%s", tool);
	a->arg_op = op;
	a->arg_all = true;
	return ask(a, CONFIRM_CUTOVER, "%s %s on all %zu live sessions?", cutover_op_id(op), tool,
		   a->snap.live);
}

static int
force_stop(struct app *a)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];
	const struct session_row *r;

	dispatch_target(a, session, tool);
	r = session[0] ? row_by_id(a, session) : NULL;
	if (!r || r->state == SESSION_STATE_ENDED) {
		app_flash(a, true, "no live session selected");
		return APP_REDRAW;
	}
	snprintf(a->arg_session, sizeof a->arg_session, "%s", session);
	return ask(a, CONFIRM_STOP, "force-stop session %.10s now?", session);
}

static int
quit_request(struct app *a)
{
	if (a->snap.live == 0 && supervisor_live(a->sup) == 0)
		return APP_QUIT;
	return ask(a, CONFIRM_QUIT, "%zu sessions live: stop them all and quit?",
		   supervisor_live(a->sup));
}

static int
view_request(struct app *a, enum request r)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];

	switch (r) {
	case REQ_VIEW_SESSIONS:
		return open_view(a, VIEW_SESSIONS, NULL);
	case REQ_VIEW_TOOLS:
		a->vs[VIEW_TOOLS].session[0] = '\0';	/* across sessions */
		return open_view(a, VIEW_TOOLS, NULL);
	case REQ_VIEW_AUDIT:
		return open_view(a, VIEW_AUDIT, NULL);
	case REQ_VIEW_HOST:
		return open_view(a, VIEW_HOST, NULL);
	case REQ_VIEW_NEXT:
		return open_view(a, (enum view_id)((a->view + 1) % VIEW_COUNT), NULL);
	default:	/* detail, enter */
		dispatch_target(a, session, tool);
		if (session[0])
			return open_view(a, VIEW_DETAIL, session);
		/* Nothing selected here: the detail shown last, as Tab would. */
		if (r == REQ_VIEW_DETAIL && a->vs[VIEW_DETAIL].session[0])
			return open_view(a, VIEW_DETAIL, NULL);
		app_flash(a, true, "no session selected");
		return APP_REDRAW;
	}
}

static int
back(struct app *a)
{
	struct view_state *vs = &a->vs[a->view];

	if (vs->filter[0]) {
		vs->filter[0] = '\0';
		return APP_REDRAW;
	}
	if (a->view != VIEW_SESSIONS)
		return open_view(a, VIEW_SESSIONS, NULL);
	return APP_REDRAW;
}

static int
list_request(struct app *a, enum request r)
{
	struct view_state *vs = &a->vs[a->view];

	switch (r) {
	case REQ_SORT_NEXT:
		if (views[a->view]->n_sorts > 0)
			vs->sort = (vs->sort + 1) % views[a->view]->n_sorts;
		return APP_REDRAW;
	case REQ_SORT_REVERSE:
		vs->sort_reverse = !vs->sort_reverse;
		return APP_REDRAW;
	case REQ_FILTER:
		if (!views[a->view]->filters) {
			app_flash(a, true, "the %s view has no filter", views[a->view]->name);
			return APP_REDRAW;
		}
		a->overlay = OVERLAY_FILTER;
		snprintf(a->input, sizeof a->input, "%s", vs->filter);
		a->input_len = strlen(a->input);
		return APP_REDRAW;
	case REQ_MARK:
		return toggle_mark(a);
	case REQ_MARK_CLEAR:
		a->n_marks = 0;
		return APP_REDRAW;
	default:	/* host refresh */
		supervisor_host_refresh(a->sup, a->runtime);
		app_flash(a, false, "host checks running");
		return APP_REDRAW;
	}
}

static int
incident_request(struct app *a, enum request r)
{
	if (a->read_only)
		return refuse_read_only(a, request_name(r));
	switch (r) {
	case REQ_REVOKE:
		return tool_request(a, CUTOVER_REVOKE, false);
	case REQ_RESTORE:
		return tool_request(a, CUTOVER_RESTORE, false);
	case REQ_REVOKE_ALL:
		return tool_request(a, CUTOVER_REVOKE, true);
	case REQ_RESTORE_ALL:
		return tool_request(a, CUTOVER_RESTORE, true);
	default:
		return force_stop(a);
	}
}

/* The dispatcher: every request goes through here, read-only checked once. */
static int
dispatch_request(struct app *a, enum request r)
{
	if (r == REQ_NONE)
		return 0;
	if (a->read_only && request_destructive(r))
		return refuse_read_only(a, request_name(r));
	switch (r) {
	case REQ_MOVE_UP:	return move_by(a, -1);
	case REQ_MOVE_DOWN:	return move_by(a, 1);
	case REQ_PAGE_UP:	return move_by(a, -page(a));
	case REQ_PAGE_DOWN:	return move_by(a, page(a));
	case REQ_MOVE_FIRST:	return move_by(a, -(long)1e9);
	case REQ_MOVE_LAST:	return move_by(a, (long)1e9);
	case REQ_BACK:		return back(a);
	case REQ_HELP:
		a->overlay = OVERLAY_HELP;
		a->help_top = 0;
		return APP_REDRAW;
	case REQ_PROMPT:
		a->overlay = OVERLAY_PROMPT;
		a->input[0] = '\0';
		a->input_len = 0;
		a->command_at = a->n_commands;
		return APP_REDRAW;
	case REQ_DISMISS:
		app_dismiss(a);
		return APP_REDRAW;
	case REQ_MOUSE:
		a->mouse = !a->mouse;
		mousemask(a->mouse ? BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED : 0, NULL);
		app_flash(a, false, "mouse %s", a->mouse ? "on" : "off");
		return APP_REDRAW;
	case REQ_REDRAW:
		return APP_RELAYOUT;
	case REQ_QUIT:
		return quit_request(a);
	case REQ_REVOKE: case REQ_RESTORE: case REQ_REVOKE_ALL: case REQ_RESTORE_ALL:
	case REQ_FORCE_STOP:
		return incident_request(a, r);
	case REQ_SORT_NEXT: case REQ_SORT_REVERSE: case REQ_FILTER: case REQ_MARK:
	case REQ_MARK_CLEAR: case REQ_HOST_REFRESH:
		return list_request(a, r);
	default:
		return view_request(a, r);
	}
}

/* ---- overlays ---- */

static int
confirmed(struct app *a)
{
	enum confirm_action act = a->action;
	size_t i;

	a->overlay = OVERLAY_NONE;
	a->action = CONFIRM_NONE;
	switch (act) {
	case CONFIRM_STOP:
		if (supervisor_stop_session(a->sup, a->arg_session) < 0)
			app_flash(a, true, "session %.10s is not live", a->arg_session);
		else
			app_flash(a, false, "force-stop %.10s: container stopping", a->arg_session);
		return APP_REDRAW;
	case CONFIRM_CUTOVER:
		return cutover(a, a->arg_op, a->arg_tool, a->arg_all, NULL);
	case CONFIRM_APPLY:
		for (i = 0; i < a->arg_policy.n; i++)
			cutover(a, a->arg_policy.op[i], a->arg_policy.tool[i], true, NULL);
		app_flash(a, false, "incident policy applied: %zu cutovers posted; see the tools view",
			  a->arg_policy.n);
		return APP_REDRAW;
	case CONFIRM_QUIT:
		return APP_QUIT;
	default:
		return APP_REDRAW;
	}
}

static int
confirm_key(struct app *a, int key)
{
	if (key == 'y' || key == 'Y')
		return confirmed(a);
	a->overlay = OVERLAY_NONE;
	a->action = CONFIRM_NONE;
	app_flash(a, false, "cancelled");
	return APP_REDRAW;
}

static int
help_key(struct app *a, int key)
{
	enum request r = keymap_lookup(&a->keys, "help", key);

	if (r == REQ_MOVE_DOWN || r == REQ_PAGE_DOWN)
		a->help_top += r == REQ_MOVE_DOWN ? 1 : (int)page(a);
	else if (r == REQ_MOVE_UP || r == REQ_PAGE_UP)
		a->help_top -= r == REQ_MOVE_UP ? 1 : (int)page(a);
	else if (r == REQ_MOVE_FIRST)
		a->help_top = 0;
	else
		a->overlay = OVERLAY_NONE;	/* any other key closes help */
	if (a->help_top < 0)
		a->help_top = 0;
	return APP_REDRAW;
}

/* The ':' and '/' line: printable text, Backspace, Enter, Esc. */
static void
set_input(struct app *a, const char *text)
{
	snprintf(a->input, sizeof a->input, "%s", text);
	a->input_len = strlen(a->input);
}

/* An entered command is remembered, unless it repeats the last one. */
static void
remember(struct app *a, const char *line)
{
	if (!line[0] || (a->n_commands && strcmp(a->commands[a->n_commands - 1], line) == 0))
		return;
	if (a->n_commands == APP_COMMANDS_MAX) {
		memmove(a->commands[0], a->commands[1], sizeof a->commands[0] * (APP_COMMANDS_MAX - 1));
		a->n_commands--;
	}
	snprintf(a->commands[a->n_commands++], sizeof a->commands[0], "%s", line);
}

/* Up (-1) and Down (+1) through the commands entered; past the last, the draft again. */
static void
recall(struct app *a, int step)
{
	if ((step < 0 && a->command_at == 0) || (step > 0 && a->command_at >= a->n_commands))
		return;
	if (a->command_at == a->n_commands)
		snprintf(a->draft, sizeof a->draft, "%s", a->input);
	a->command_at += step;
	set_input(a, a->command_at == a->n_commands ? a->draft : a->commands[a->command_at]);
}

/* Ctrl-W: the word before the cursor (the line's end), and the blanks after it. */
static void
delete_word(struct app *a)
{
	while (a->input_len > 0 && a->input[a->input_len - 1] == ' ')
		a->input_len--;
	while (a->input_len > 0 && a->input[a->input_len - 1] != ' ')
		a->input_len--;
	a->input[a->input_len] = '\0';
}

#define CTRL_KEY(c)	((c) & 0x1f)

static const char *const command_words[] = {
	"run", "apply", "revoke", "restore", "stop", "forget", "filter", "view", "help", "quit",
};

/* Live sessions' ids as typed (without "s-"), into c from n; returns the new n. */
static size_t
live_ids(const struct app *a, const char **c, size_t n)
{
	size_t i;

	for (i = 0; i < a->snap.n; i++)
		if (a->snap.rows[i].state != SESSION_STATE_ENDED)
			c[n++] = a->snap.rows[i].id + (strncmp(a->snap.rows[i].id, "s-", 2) == 0 ? 2 : 0);
	return n;
}

/*
 * Tab: the word at the line's end, from what its place takes: a command;
 * after revoke or restore a tool (a live session's, or one that stands
 * revoked), then all, marked or a session; after stop a session; after
 * view a view; after run or apply a file's path.
 */
static void
complete_input(struct app *a)
{
	char words[2][64];
	size_t at, n = 0, i, j, nw = complete_words(a->input, words, 2, &at);
	bool cutover = nw >= 1 && (strcmp(words[0], "revoke") == 0 ||
				   strcmp(words[0], "restore") == 0);
	const char **c = calloc(a->snap.n * SNAP_TOOLS_MAX + SNAP_STANDING_MAX +
				sizeof command_words / sizeof command_words[0], sizeof *c);

	if (!c)
		return;
	if (nw == 0) {
		for (i = 0; i < sizeof command_words / sizeof command_words[0]; i++)
			c[n++] = command_words[i];
	} else if (cutover && nw == 1) {
		for (i = 0; i < a->snap.n_standing; i++)
			c[n++] = a->snap.standing[i];
		for (i = 0; i < a->snap.n; i++)
			for (j = 0; a->snap.rows[i].state != SESSION_STATE_ENDED &&
			     j < a->snap.rows[i].n_tools && j < SNAP_TOOLS_MAX; j++)
				c[n++] = a->snap.rows[i].tools[j].name;
	} else if (cutover && nw == 2) {
		c[n++] = "all";
		c[n++] = "marked";
		n = live_ids(a, c, n);
	} else if (nw == 1 && strcmp(words[0], "stop") == 0) {
		n = live_ids(a, c, n);
	} else if (nw == 1 && strcmp(words[0], "view") == 0) {
		for (i = 0; i < VIEW_COUNT; i++)
			c[n++] = views[i]->name;
	} else if (nw == 1 && (strcmp(words[0], "run") == 0 || strcmp(words[0], "apply") == 0)) {
		complete_path(a->input, sizeof a->input);
	}
	complete_last(a->input, sizeof a->input, c, n);
	a->input_len = strlen(a->input);
	free(c);
}


static int
input_key(struct app *a, int key)
{
	bool filter = a->overlay == OVERLAY_FILTER;
	struct view_state *vs = &a->vs[a->view];

	if (key == 27) {
		a->overlay = OVERLAY_NONE;
		if (filter)
			vs->filter[0] = '\0';
		return APP_REDRAW;
	}
	if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		a->overlay = OVERLAY_NONE;
		if (filter)
			return APP_REDRAW;
		remember(a, a->input);
		return dispatch_command(a, a->input);
	}
	if ((key == KEY_UP || key == KEY_DOWN) && !filter)
		recall(a, key == KEY_UP ? -1 : 1);
	else if (key == '\t' && !filter)
		complete_input(a);
	else if (key == CTRL_KEY('u'))
		set_input(a, "");
	else if (key == CTRL_KEY('w'))
		delete_word(a);
	else if ((key == KEY_BACKSPACE || key == 127 || key == 8) && a->input_len > 0)
		a->input[--a->input_len] = '\0';
	else if (key >= 32 && key < 127 && a->input_len + 1 < sizeof a->input) {
		a->input[a->input_len++] = (char)key;
		a->input[a->input_len] = '\0';
	}
	if (filter) {
		snprintf(vs->filter, sizeof vs->filter, "%.*s", UI_FILTER_MAX - 1, a->input);
		vs->selected = vs->top = 0;
	}
	return APP_REDRAW;
}

static int
mouse_key(struct app *a)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return 0;
	if (ev.bstate & BUTTON4_PRESSED)
		return move_by(a, -3);
	if (ev.bstate & BUTTON5_PRESSED)
		return move_by(a, 3);
	return 0;
}

int
dispatch_key(struct app *a, int key)
{
	if (key == KEY_RESIZE)
		return APP_RELAYOUT;
	switch (a->overlay) {
	case OVERLAY_CONFIRM:
		return confirm_key(a, key);
	case OVERLAY_HELP:
		return help_key(a, key);
	case OVERLAY_PROMPT:
	case OVERLAY_FILTER:
		return input_key(a, key);
	default:
		break;
	}
	if (key == KEY_MOUSE)
		return a->mouse ? mouse_key(a) : 0;
	return dispatch_request(a, keymap_lookup(&a->keys, views[a->view]->name, key));
}

/* ---- ':' commands ---- */

/* A live session has the tool in its catalog, or it stands revoked. */
static bool
tool_listed(const struct app *a, const char *tool)
{
	const struct session_row *r;
	size_t i, j;

	for (i = 0; i < a->snap.n_standing; i++)
		if (strcmp(a->snap.standing[i], tool) == 0)
			return true;
	for (i = 0; i < a->snap.n; i++) {
		r = &a->snap.rows[i];
		for (j = 0; r->state != SESSION_STATE_ENDED && j < r->n_tools && j < SNAP_TOOLS_MAX; j++)
			if (strcmp(r->tools[j].name, tool) == 0)
				return true;
	}
	return false;
}

static int
cmd_apply(struct app *a, const char *path)
{
	size_t i, rev = 0, unlisted = 0;
	char note[64] = "";
	struct al_err err = { "" };

	if (incident_load(path, &a->arg_policy, &err) < 0) {
		app_flash(a, true, "apply: %.100s: %.120s", path, err.msg);
		return APP_REDRAW;
	}
	for (i = 0; i < a->arg_policy.n; i++) {
		rev += a->arg_policy.op[i] == CUTOVER_REVOKE;
		unlisted += !tool_listed(a, a->arg_policy.tool[i]);
	}
	if (unlisted)
		snprintf(note, sizeof note, " (%zu of them no live session has)", unlisted);
	return ask(a, CONFIRM_APPLY, "apply %.60s: revoke %zu, restore %zu tools on all %zu sessions%s?",
		   path, rev, a->arg_policy.n - rev, a->snap.live, note);
}

static int
cmd_run(struct app *a, const char *path)
{
	char id[SNAP_ID_MAX];
	struct al_err err;

	if (supervisor_start_file(a->sup, path, id, &err) < 0)
		app_flash(a, true, "run: %s", err.msg);
	else
		app_flash(a, false, "session %.10s started from %.100s", id, path);
	return APP_REDRAW;
}

/*
 * revoke|restore TOOL [all|marked|SESSION]. A tool typed that no live
 * session has would change nothing now, so the console does not take it
 * silently: a revoke on every session asks whether it is meant for the
 * sessions started later alone; anything else is refused.
 */
static int
cmd_cutover(struct app *a, enum cutover_op op, char *tool, char *scope)
{
	bool all = !scope || strcmp(scope, "all") == 0;

	if (!tool) {
		app_flash(a, true, "usage: %s TOOL [all|marked|SESSION]", cutover_op_id(op));
		return APP_REDRAW;
	}
	if (!tool_listed(a, tool) && !(all && op == CUTOVER_REVOKE)) {
		app_flash(a, true, "%s: no live session has a tool '%.60s'%s", cutover_op_id(op), tool,
			  op == CUTOVER_RESTORE ? ", and it does not stand revoked" : "");
		return APP_REDRAW;
	}
	if (all) {
		snprintf(a->arg_tool, sizeof a->arg_tool, "%s", tool);
		a->arg_op = op;
		a->arg_all = true;
		if (!tool_listed(a, tool))
			return ask(a, CONFIRM_CUTOVER, "no live session has a tool %.60s: revoke it "
				   "for sessions started later?", tool);
		return ask(a, CONFIRM_CUTOVER, "%s %.60s on all %zu live sessions?", cutover_op_id(op),
			   tool, a->snap.live);
	}
	if (strcmp(scope, "marked") == 0) {
		if (a->n_marks == 0) {
			app_flash(a, true, "no sessions marked");
			return APP_REDRAW;
		}
		return cutover(a, op, tool, false, NULL);
	}
	return cutover(a, op, tool, false, scope);
}

/* A session named by a prefix of its id (with or without "s-"). */
static const struct session_row *
row_by_prefix(const struct app *a, const char *p)
{
	const struct session_row *hit = NULL;
	size_t i, n = strlen(p);

	for (i = 0; n > 0 && i < a->snap.n; i++) {
		const char *id = a->snap.rows[i].id;

		if (strncmp(id, p, n) == 0 || (strncmp(id, "s-", 2) == 0 && strncmp(id + 2, p, n) == 0)) {
			if (hit)
				return NULL;	/* ambiguous */
			hit = &a->snap.rows[i];
		}
	}
	return hit;
}

static int
cmd_forget(struct app *a)
{
	size_t i, n = 0;
	char ids[SUPERVISOR_SESSIONS_MAX][SNAP_ID_MAX];

	for (i = 0; i < a->snap.n; i++)
		if (a->snap.rows[i].state == SESSION_STATE_ENDED)
			snprintf(ids[n++], SNAP_ID_MAX, "%s", a->snap.rows[i].id);
	for (i = 0; i < n; i++)
		supervisor_forget(a->sup, ids[i]);
	app_flash(a, false, "forgot %zu ended sessions", n);
	return APP_REDRAW;
}

static int
cmd_view(struct app *a, const char *name)
{
	size_t i;

	for (i = 0; name && i < VIEW_COUNT; i++)
		if (strcmp(views[i]->name, name) == 0)
			return open_view(a, (enum view_id)i, NULL);
	app_flash(a, true, "view: one of sessions, detail, tools, audit, host");
	return APP_REDRAW;
}

static bool
destructive_command(const char *cmd)
{
	static const char *const words[] = { "run", "apply", "revoke", "restore", "stop" };
	size_t i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(cmd, words[i]) == 0)
			return true;
	return false;
}

static int
stop_command(struct app *a, const char *arg)
{
	const struct session_row *r = arg ? row_by_prefix(a, arg) : NULL;

	if (!r || r->state == SESSION_STATE_ENDED) {
		app_flash(a, true, "stop: no single live session matches '%.40s'", arg ? arg : "");
		return APP_REDRAW;
	}
	snprintf(a->arg_session, sizeof a->arg_session, "%s", r->id);
	return ask(a, CONFIRM_STOP, "force-stop session %.10s now?", r->id);
}

int
dispatch_command(struct app *a, const char *line)
{
	char buf[APP_INPUT_MAX], *save = NULL, *cmd, *arg, *arg2;

	snprintf(buf, sizeof buf, "%s", line);
	if (!(cmd = strtok_r(buf, " \t", &save)))
		return APP_REDRAW;
	arg = strtok_r(NULL, " \t", &save);
	arg2 = strtok_r(NULL, " \t", &save);
	if (a->read_only && destructive_command(cmd))
		return refuse_read_only(a, cmd);
	if (strcmp(cmd, "q") == 0 || strcmp(cmd, "quit") == 0)
		return quit_request(a);
	if (strcmp(cmd, "run") == 0 && arg)
		return cmd_run(a, arg);
	if (strcmp(cmd, "apply") == 0 && arg)
		return cmd_apply(a, arg);
	if (strcmp(cmd, "revoke") == 0 || strcmp(cmd, "restore") == 0)
		return cmd_cutover(a, cmd[2] == 'v' ? CUTOVER_REVOKE : CUTOVER_RESTORE, arg, arg2);
	if (strcmp(cmd, "stop") == 0)
		return stop_command(a, arg);
	if (strcmp(cmd, "forget") == 0)
		return cmd_forget(a);
	if (strcmp(cmd, "view") == 0)
		return cmd_view(a, arg);
	if (strcmp(cmd, "filter") == 0) {
		snprintf(a->vs[a->view].filter, sizeof a->vs[a->view].filter, "%.*s", UI_FILTER_MAX - 1, arg ? arg : "");
		return APP_REDRAW;
	}
	if (strcmp(cmd, "help") == 0)
		return dispatch_request(a, REQ_HELP);
	app_flash(a, true, "unknown command '%.40s' (? lists them)", cmd);
	return APP_REDRAW;
}
