/*
 * The ':' commands. Each handler checks its words and either acts (through
 * actions.c, which asks first where a slip would cost) or says on the
 * status line why not.
 */
#include "verbs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "app.h"
#include "complete.h"
#include "grant.h"
#include "verb_grant.h"
#include "view.h"

/* Say why not on the status line, and redraw. A macro so the format stays status_flash's, checked. */
#define REFUSE(a, ...) (status_flash(&(a)->status, true, __VA_ARGS__), APP_REDRAW)

static int
verb_quit(struct app *a, const char *name, const char *arg, const char *arg2)
{
	(void)name, (void)arg, (void)arg2;
	return action_quit(a);
}

/* run FILE [ENGINE]: the file is read by the engine, on its host. */
static int
verb_run(struct app *a, const char *name, const char *path, const char *engine)
{
	size_t k;

	(void)name;
	for (k = 0; engine && k < a->n_links; k++)
		if (strcmp(a->model.engine_names[k], engine) == 0)
			break;
	if (engine && k == a->n_links)
		return REFUSE(a, "run: no engine named '%.40s'", engine);
	return action_start(a, path, engine ? (unsigned)k : 0);
}

/* The file is read now and posted on a yes: what is asked is what is applied. */
static int
verb_apply(struct app *a, const char *name, const char *path, const char *arg2)
{
	struct al_err err = { "" };
	struct incident p;
	size_t i, rev = 0, held = 0, unlisted = 0;
	char note[64] = "";

	(void)name, (void)arg2;
	if (incident_load(path, &p, &err) < 0)	/* what is wrong, not the shape's words first */
		return REFUSE(a, "apply: %.80s: %.100s", path,
			      strncmp(err.msg, INCIDENT_SHAPE_ERROR ": ", strlen(INCIDENT_SHAPE_ERROR) + 2)
			      ? err.msg : err.msg + strlen(INCIDENT_SHAPE_ERROR) + 2);
	for (i = 0; i < p.n; i++) {
		rev += p.op[i] == CUTOVER_REVOKE;
		held += p.op[i] == CUTOVER_HOLD;
		unlisted += !model_tool_listed(&a->model, p.tool[i]);
	}
	if (unlisted)
		snprintf(note, sizeof note, " (%zu of them no live session has)", unlisted);
	if (held)	/* the question names holds only in a file that has some */
		return action_ask_apply(a, &p, "apply %.60s: revoke %zu, hold %zu, restore %zu tools "
					"on all %zu sessions%s?", path, rev, held, p.n - rev - held,
					a->model.snap.live, note);
	return action_ask_apply(a, &p, "apply %.60s: revoke %zu, restore %zu tools on all %zu sessions%s?",
				path, rev, p.n - rev, a->model.snap.live, note);
}

/*
 * The session a command names, its whole id in id; else why not on the
 * status line, in the engine's words (ctl's refusal reads the same).
 */
static bool
named_session(struct app *a, const char *verb, const char *typed, bool live,
	      char id[SNAP_ID_MAX])
{
	char why[STATUS_TEXT_MAX];
	const struct session_row *r = model_session_pick(&a->model, typed, why, sizeof why);

	if (r && live && r->state == SESSION_STATE_ENDED)
		snprintf(why, sizeof why, "session %s has ended", r->id);
	else if (r) {
		snprintf(id, SNAP_ID_MAX, "%s", r->id);
		return true;
	}
	status_flash(&a->status, true, "%s: no such session: %s", verb, why);
	return false;
}

/*
 * revoke|restore|hold TOOL [all|marked|SESSION] (a hold: each call of
 * the tool waits for an operator, the pending view), a restore with grant terms
 * (NULL: none) a time-boxed grant. Whether the tool and the session exist
 * is the engine's to say (supervisor.h: the same refusal for ctl and
 * every console). On every session it is asked first, whatever the name:
 * one no session here lists may be an alias, which the engine maps to
 * its catalog tool on every session (the snapshot names no alias), or a
 * typo the engine then refuses. One that only ended sessions have would
 * change nothing now: a revoke on every session asks whether it is meant
 * for the sessions started later.
 */
static int
cutover(struct app *a, const char *name, const char *tool, const char *scope,
	const struct link_grant *g)
{
	enum cutover_op op = strcmp(name, "revoke") == 0 ? CUTOVER_REVOKE :
			     strcmp(name, "hold") == 0 ? CUTOVER_HOLD : CUTOVER_RESTORE;
	bool all = !scope || strcmp(scope, "all") == 0, marked = scope && !strcmp(scope, "marked");
	char id[SNAP_ID_MAX], t[48], terms[64] = "";

	if (!tool)
		return REFUSE(a, "usage: %s TOOL [all|marked|SESSION]%s", cutover_op_id(op),
			      op == CUTOVER_RESTORE ? " [--for DURATION] [--calls N]" : "");
	if (marked && a->model.n_marks == 0)
		return REFUSE(a, "no sessions marked");
	if (!all && !marked && !named_session(a, cutover_op_id(op), scope, false, id))
		return APP_REDRAW;
	if (g && g->flow)	/* a class flow: no tool to look up; on all, asked first */
		return !all ? action_cutover(a, op, tool, false, marked ? NULL : id, g)
			    : action_ask_all(a, op, tool, g, "%s class flow %.60s on all %zu live "
					     "sessions?", cutover_op_id(op), tool, a->model.snap.live);
	if (!all)
		return action_cutover(a, op, tool, all, marked ? NULL : id, g);
	if (model_tool_held(&a->model, tool) && !model_tool_listed(&a->model, tool) &&
	    op == CUTOVER_REVOKE)
		return action_ask_all(a, op, tool, NULL, "no live session has a tool %.60s: revoke "
				      "it for sessions started later?", tool);
	if (g) {
		grant_terms_text(g->for_s, g->calls, t, sizeof t);
		snprintf(terms, sizeof terms, " (grant: %s)", t);
	}
	return action_ask_all(a, op, tool, g, "%s %.60s%s on all %zu live sessions?",
			      cutover_op_id(op), tool, terms, a->model.snap.live);
}

static int
verb_cutover(struct app *a, const char *name, const char *tool, const char *scope)
{
	return cutover(a, name, tool, scope, NULL);
}

static int
verb_stop(struct app *a, const char *name, const char *arg, const char *arg2)
{
	char id[SNAP_ID_MAX];

	(void)name, (void)arg2;
	if (!arg)
		return REFUSE(a, "usage: stop ID");
	if (!named_session(a, "stop", arg, true, id))
		return APP_REDRAW;
	return action_ask_stop(a, id);
}

static int
verb_forget(struct app *a, const char *name, const char *arg, const char *arg2)
{
	(void)name, (void)arg, (void)arg2;
	return action_forget_ended(a);
}

static int
verb_filter(struct app *a, const char *name, const char *text, const char *arg2)
{
	struct view_state *vs = &a->model.vs[a->model.view];

	(void)name, (void)arg2;
	snprintf(vs->filter, sizeof vs->filter, "%.*s", UI_FILTER_MAX - 1, text ? text : "");
	return APP_REDRAW;
}

/* "view: one of sessions, detail, …": every view's name, from the registry. */
static int
verb_view(struct app *a, const char *name, const char *view, const char *arg2)
{
	char text[STATUS_TEXT_MAX] = "view: one of ";
	size_t i;

	(void)name, (void)arg2;
	for (i = 0; view && i < VIEW_COUNT; i++)
		if (strcmp(views[i]->name, view) == 0) {
			model_open(&a->model, (enum view_id)i, NULL);
			return APP_REDRAW;
		}
	for (i = 0; i < VIEW_COUNT; i++)
		snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? ", " : "",
			 views[i]->name);
	return REFUSE(a, "%s", text);
}

static int
verb_help(struct app *a, const char *name, const char *arg, const char *arg2)
{
	(void)name, (void)arg, (void)arg2;
	a->screen.overlay = OVERLAY_HELP;
	a->screen.help_top = 0;
	return APP_REDRAW;
}

static int
verb_freeze(struct app *a, const char *name, const char *arg, const char *arg2)
{
	(void)arg, (void)arg2;
	if (strcmp(name, "freeze") == 0)
		return action_freeze(a);
	if (strcmp(name, "thaw") == 0)
		return action_ask_thaw(a);
	if (a->model.snap.live == 0)
		return REFUSE(a, "stop-all: no live session");
	return action_ask_stop_all(a);
}

/* In the order Tab offers them. */
const struct verb verbs[] = {
	{ "run",     NULL, VERB_ARG_FILE,       true,  "FILE [ENGINE]",        verb_run },
	{ "apply",   NULL, VERB_ARG_FILE,       true,  "FILE",                 verb_apply },
	{ "revoke",  NULL, VERB_ARG_TOOL_SCOPE, true,  "TOOL [all|marked|ID]", verb_cutover },
	{ "restore", NULL, VERB_ARG_TOOL_SCOPE, true,  "TOOL [all|marked|ID] [--for D] [--calls N]",
	  verb_cutover },
	{ "hold",    NULL, VERB_ARG_TOOL_SCOPE, true,  "TOOL|--flow C>S [all|marked|ID]",
	  verb_cutover },
	{ "stop",    NULL, VERB_ARG_SESSION,    true,  "ID",                   verb_stop },
	{ "freeze",  NULL, VERB_ARG_NONE,       true,  "",                     verb_freeze },
	{ "thaw",    NULL, VERB_ARG_NONE,       true,  "",                     verb_freeze },
	{ "stop-all", NULL, VERB_ARG_NONE,      true,  "",                     verb_freeze },
	{ "forget",  NULL, VERB_ARG_NONE,       false, "",                     verb_forget },
	{ "filter",  NULL, VERB_ARG_TEXT,       false, "TEXT",                 verb_filter },
	{ "view",    NULL, VERB_ARG_VIEW,       false, "NAME",                 verb_view },
	{ "help",    NULL, VERB_ARG_NONE,       false, NULL,                   verb_help },
	{ "quit",    "q",  VERB_ARG_NONE,       false, "",                     verb_quit },
};

const size_t n_verbs = sizeof verbs / sizeof verbs[0];

const struct verb *
verb_of_line(const char *line, char *word, size_t cap)
{
	size_t at = strspn(line, " \t"), len = strcspn(line + at, " \t");

	snprintf(word, cap, "%.*s", (int)len, line + at);
	return word[0] ? verb_find(word) : NULL;
}

const struct verb *
verb_find(const char *name)
{
	size_t i;

	for (i = 0; i < n_verbs; i++)
		if (strcmp(verbs[i].name, name) == 0 || (verbs[i].alias && strcmp(verbs[i].alias, name) == 0))
			return &verbs[i];
	return NULL;
}

/* revoke and restore: one handler, one usage, shown as one. */
static bool
shares_usage(const struct verb *v, const struct verb *next)
{
	return next && v->run == next->run && v->usage && next->usage &&
	       strcmp(v->usage, next->usage) == 0;
}

void
verbs_summary(char *buf, size_t cap)
{
	const char *sep = " ";
	size_t i, len;

	snprintf(buf, cap, "Commands:");
	for (i = 0; i < n_verbs; i++) {
		const struct verb *v = &verbs[i];
		bool shared = i + 1 < n_verbs && shares_usage(v, &verbs[i + 1]);

		if (!v->usage)
			continue;
		len = strlen(buf);
		snprintf(buf + len, cap - len, "%s%s%s%s", sep, v->name,
			 shared ? "|" : v->usage[0] ? " " : "", shared ? "" : v->usage);
		sep = shared ? "" : ", ";
	}
}

/* Words a ':' line is read as, at most; more are not read. */
#define VERB_WORDS_MAX	8

/*
 * The name, up to two words after it, and for restore --for and --calls
 * anywhere after the name (verb_grant.c): a grant, refused on the status
 * line in ctl's words when a value is bad or the command is not restore.
 */
int
verbs_run(struct app *a, const char *line)
{
	char buf[PROMPT_INPUT_MAX], *save = NULL, *w[VERB_WORDS_MAX], why[STATUS_TEXT_MAX];
	const struct verb *v;
	struct link_grant g = { 0 };
	size_t n = 0, m;

	snprintf(buf, sizeof buf, "%s", line);
	while (n < VERB_WORDS_MAX && (w[n] = strtok_r(n ? NULL : buf, " \t", &save)))
		n++;
	if (n == 0)
		return APP_REDRAW;
	v = verb_find(w[0]);
	if (!v || (v->arg == VERB_ARG_FILE && n < 2))
		return REFUSE(a, "unknown command '%.40s' (? lists them)", w[0]);
	m = n - 1;
	if (v->arg == VERB_ARG_TOOL_SCOPE && verb_grant_words(w + 1, &m, &g, why, sizeof why) < 0)
		return REFUSE(a, "%s: %s", v->name, why);
	n = m + 1;
	while (n < 3)
		w[n++] = NULL;
	if (g.flow && (strcmp(v->name, "revoke") == 0 || g.for_s || g.calls))
		return REFUSE(a, "%s: --flow is hold's and restore's only, never a grant", v->name);
	if (v->arg != VERB_ARG_TOOL_SCOPE || (!g.for_s && !g.calls && !g.flow))
		return v->run(a, v->name, w[1], w[2]);
	if (strcmp(v->name, "restore") != 0)
		return REFUSE(a, "%s: --for and --calls are restore's only (a grant)", v->name);
	return cutover(a, v->name, w[1], w[2], &g);
}

/* --- Tab on the ':' line --- */

/* Live sessions' ids as typed (without "s-"), into c from n; returns the new n. */
static size_t
live_ids(const struct supervisor_snapshot *snap, const char **c, size_t n)
{
	size_t i;

	for (i = 0; i < snap->n; i++)
		if (snap->rows[i].state != SESSION_STATE_ENDED)
			c[n++] = snap->rows[i].id + (strncmp(snap->rows[i].id, "s-", 2) == 0 ? 2 : 0);
	return n;
}

/* A tool a cutover may name: a live session's, or one that stands revoked. */
static size_t
tool_names(const struct supervisor_snapshot *snap, const char **c, size_t n)
{
	size_t i, j;

	for (i = 0; i < snap->n_standing; i++)
		c[n++] = snap->standing[i];
	for (i = 0; i < snap->n; i++)
		for (j = 0; snap->rows[i].state != SESSION_STATE_ENDED &&
		     j < snap->rows[i].n_tools && j < SNAP_TOOLS_MAX; j++)
			c[n++] = snap->rows[i].tools[j].name;
	return n;
}

/* The candidates for the word after words[0 .. nw-1], by the argument its command takes. */
static size_t
candidates(char *line, size_t cap, const struct supervisor_snapshot *snap, char words[][64],
	   size_t nw, const char **c)
{
	const struct verb *v = nw ? verb_find(words[0]) : NULL;
	size_t i, n = 0;

	if (nw == 0) {
		for (i = 0; i < n_verbs; i++)
			c[n++] = verbs[i].name;
	} else if (v && v->arg == VERB_ARG_TOOL_SCOPE && nw == 1) {
		n = tool_names(snap, c, n);
		if (strcmp(v->name, "revoke") != 0)	/* hold and restore name class flows too */
			c[n++] = "--flow";
	} else if (v && v->arg == VERB_ARG_TOOL_SCOPE && nw == 2 && !strcmp(words[1], "--flow")) {
		for (i = 0; i < snap->n_standing_flow; i++)	/* the flows held: to restore */
			c[n++] = snap->standing_flow[i];
	} else if (v && v->arg == VERB_ARG_TOOL_SCOPE && nw == 2) {
		c[n++] = "all";
		c[n++] = "marked";
		n = live_ids(snap, c, n);
	} else if (v && v->arg == VERB_ARG_SESSION && nw == 1) {
		n = live_ids(snap, c, n);
	} else if (v && v->arg == VERB_ARG_VIEW && nw == 1) {
		for (i = 0; i < VIEW_COUNT; i++)
			c[n++] = views[i]->name;
	} else if (v && v->arg == VERB_ARG_FILE && nw == 1) {
		complete_path(line, cap);
	}
	return n;
}

/*
 * Tab: the word at the line's end, from what its place takes: a command;
 * after revoke or restore a tool (hold and restore: or --flow, then a
 * class flow held on every session), then all, marked or a session; after
 * stop a session; after view a view; after run or apply a file's path.
 */
void
verbs_complete(char *line, size_t cap, const struct supervisor_snapshot *snap)
{
	char words[2][64];
	size_t at, nw = complete_words(line, words, 2, &at);
	const char **c = calloc(snap->n * SNAP_TOOLS_MAX + SNAP_STANDING_MAX + SNAP_FLOWS_MAX +
				n_verbs + 1, sizeof *c);

	if (!c)
		return;
	complete_last(line, cap, c, candidates(line, cap, snap, words, nw, c));
	free(c);
}
