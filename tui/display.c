/*
 * The terminal: set-up on the process's own stdin/stdout (never /dev/tty:
 * tests and CI have none), the layout (header, view, key bar, status line),
 * and what the console draws around the views: the header, the key bar,
 * the status line with its sticky alerts, the prompt, and the help overlay
 * generated from the live keymap. Only the UI thread calls this.
 */
#include "app.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "color.h"
#include "util.h"

/*
 * What the key bar advertises, in order, each under the first of its
 * requests bound here. keep: when the bar is too narrow, the lowest goes
 * first (help and quit never: help lists the rest).
 */
#define KEEP_ALWAYS	9
static const struct {
	enum request req[2];
	const char *word;
	int keep;
} keybar[] = {
	{ { REQ_MOVE_DOWN, REQ_NONE }, "move", 1 },
	{ { REQ_ENTER, REQ_NONE }, "open", 3 },
	{ { REQ_HOST_REFRESH, REQ_NONE }, "refresh", 6 },	/* bound in the host view alone */
	{ { REQ_REVOKE, REQ_REVOKE_ALL }, "revoke", 8 },
	{ { REQ_RESTORE, REQ_RESTORE_ALL }, "restore", 6 },
	{ { REQ_FORCE_STOP, REQ_NONE }, "force-stop", 7 },
	{ { REQ_FILTER, REQ_NONE }, "filter", 2 },
	{ { REQ_PROMPT, REQ_NONE }, "cmd", 5 },
	{ { REQ_HELP, REQ_NONE }, "help", KEEP_ALWAYS },
	{ { REQ_QUIT, REQ_NONE }, "quit", KEEP_ALWAYS },
};

int
display_open(struct app *a)
{
	const char *nc = getenv("NO_COLOR");

	setlocale(LC_ALL, "");
	if (!newterm(NULL, stdout, stdin))
		return -1;
	cbreak();
	noecho();
	nonl();
	curs_set(0);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	a->color = !(nc && nc[0]);
	color_init(a->color);
	a->ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;	/* no block glyphs then */
	mousemask(0, NULL);	/* off until the operator turns it on */
	display_layout(a);
	return 0;
}

static void
drop_windows(struct app *a)
{
	WINDOW **w[] = { &a->header, &a->body, &a->keybar, &a->status };
	size_t i;

	for (i = 0; i < sizeof w / sizeof w[0]; i++) {
		if (*w[i])
			delwin(*w[i]);
		*w[i] = NULL;
	}
}

void
display_close(struct app *a)
{
	drop_windows(a);
	endwin();
}

/* Header, view and status take one line each from the top down; small screens keep the view. */
void
display_layout(struct app *a)
{
	int lines = LINES, cols = COLS, y = 0, body;

	drop_windows(a);
	a->lines = lines;
	a->cols = cols;
	if (lines < 1 || cols < 1)
		return;
	body = lines - (lines >= 3) - (lines >= 4) - (lines >= 2);
	if (lines >= 3)
		a->header = newwin(1, cols, y++, 0);
	if (body > 0) {
		a->body = newwin(body, cols, y, 0);
		y += body;
	}
	if (lines >= 4)
		a->keybar = newwin(1, cols, y++, 0);
	if (lines >= 2)
		a->status = newwin(1, cols, y, 0);
	clearok(curscr, TRUE);
}

/*
 * The daemon as the latest host checks saw it: its version, "unreachable"
 * when they ran and it did not answer, "?" before they have run.
 */
static const char *
header_daemon(const struct host_snapshot *h, char *buf, size_t cap)
{
	if (h->daemon_version[0])
		snprintf(buf, cap, "dockerd %s", h->daemon_version);
	else
		snprintf(buf, cap, "daemon %s", h->at_ms && !h->passed ? "unreachable" : "?");
	return buf;
}

static void
header_text(struct app *a, const struct ui_model *m, char *buf, size_t cap)
{
	const struct supervisor_snapshot *s = m->snap;
	char clock[DRAW_FMT_MAX], daemon[SNAP_WORD_MAX + 16];
	size_t i, running = 0;
	int n;

	for (i = 0; i < s->n; i++)
		running += s->rows[i].state == SESSION_STATE_RUNNING;
	n = snprintf(buf, cap, " airlock │ %s %s │ %zu session%s (%zu running) │ rev %lld │ %s",
		     header_daemon(&a->host, daemon, sizeof daemon), a->runtime,
		     s->n, s->n == 1 ? "" : "s", running, (long long)s->revision,
		     s->audit_failures ? "audit FAIL" : "audit ok");
	if (n > 0 && (size_t)n < cap && s->containers_left)
		n += snprintf(buf + n, cap - (size_t)n, " │ %zu container%s left",
			      s->containers_left, s->containers_left == 1 ? "" : "s");
	if (n > 0 && (size_t)n < cap && s->events_dropped)
		n += snprintf(buf + n, cap - (size_t)n, " │ %llu events dropped",
			      (unsigned long long)s->events_dropped);
	if (n > 0 && (size_t)n < cap && a->read_only)
		n += snprintf(buf + n, cap - (size_t)n, " │ READ-ONLY");
	if (n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "  %s", draw_fmt_clock(clock, m->now_ms));
}

static void
draw_header(struct app *a, const struct ui_model *m)
{
	char text[512];

	if (!a->header)
		return;
	werase(a->header);
	header_text(a, m, text, sizeof text);
	draw_fill(a->header, 0, 0, a->cols, color_attr(UI_COLOR_TITLE));
	draw_text(a->header, 0, 0, a->cols, color_attr(UI_COLOR_TITLE), text);
	if (m->stale)
		draw_right(a->header, 0, 0, a->cols, color_attr(UI_COLOR_STALE), " STALE ");
	wnoutrefresh(a->header);
}

/*
 * What the key bar offers, from what the selection holds: no filter where
 * rows do not filter; open and force-stop only with a session selected
 * (not in the tools list across sessions, nor to reopen the detail shown);
 * revoke and restore with a session or a tool selected. Nothing of that
 * where rows are no session's (the host checks), or there are none.
 */
static bool
offered(const struct app *a, enum request r, const char *session, const char *tool)
{
	if (r == REQ_FILTER)
		return views[a->view]->filters;
	if (r == REQ_ENTER)
		return session[0] && !(a->view == VIEW_DETAIL &&
				       strcmp(a->vs[VIEW_DETAIL].session, session) == 0);
	if (r == REQ_FORCE_STOP)
		return session[0];
	if (request_destructive(r))
		return session[0] || tool[0];
	return true;
}

/* The first key bound to req in the current view, or NULL. */
static const char *
first_key(struct app *a, enum request req, char buf[KEYMAP_KEY_NAME_MAX])
{
	char keys[4][KEYMAP_KEY_NAME_MAX];

	if (keymap_keys_for(&a->keys, views[a->view]->name, req, keys, 4) == 0)
		return NULL;
	snprintf(buf, KEYMAP_KEY_NAME_MAX, "%s", keys[0]);
	return buf;
}

#define KEYBAR_N	(sizeof keybar / sizeof keybar[0])

/*
 * The key bar: what is offered here, each under its first key. What does
 * not fit is left out whole, the least needed first (read-only, what it
 * refuses), but help and quit stay (help lists the rest); cut only when
 * even they do not fit.
 */
static void
draw_keybar(struct app *a)
{
	char keys[KEYBAR_N][KEYMAP_KEY_NAME_MAX], item[64], session[SNAP_ID_MAX],
	     tool[SNAP_NAME_MAX];
	bool show[KEYBAR_N] = { false };
	enum request shown[KEYBAR_N];
	size_t i, j, width = 0;	/* the lead space, less the last item's trailing one */
	int keep, x = 1;

	if (!a->keybar)
		return;
	dispatch_target(a, session, tool);
	werase(a->keybar);
	for (i = 0; i < KEYBAR_N; i++) {
		const char *k = NULL;
		enum request r = REQ_NONE;

		for (j = 0; j < 2 && !k && keybar[i].req[j] != REQ_NONE; j++)
			k = first_key(a, r = keybar[i].req[j], keys[i]);
		show[i] = k && offered(a, r, session, tool);
		shown[i] = r;
		if (show[i])
			width += strlen(keys[i]) + strlen(keybar[i].word) + 4;	/* "[k] word " */
	}
	/* Read-only, what would change something is shown but does nothing: it goes first. */
	for (keep = 0; keep < KEEP_ALWAYS && width > (size_t)a->cols; keep++)
		for (i = KEYBAR_N; i-- > 0 && width > (size_t)a->cols;)
			if (show[i] && (a->read_only && request_destructive(shown[i]) ? 0
					: keybar[i].keep) == keep) {
				show[i] = false;
				width -= strlen(keys[i]) + strlen(keybar[i].word) + 4;
			}
	for (i = 0; i < KEYBAR_N && x < a->cols; i++) {
		if (!show[i])
			continue;
		snprintf(item, sizeof item, "[%s]", keys[i]);
		x += draw_text(a->keybar, 0, x, a->cols - x, color_attr(UI_COLOR_KEY), item);
		snprintf(item, sizeof item, " %s ", keybar[i].word);
		x += draw_text(a->keybar, 0, x, a->cols - x, a->read_only &&
			       request_destructive(shown[i]) ? color_attr(UI_COLOR_DIM)
			       : color_attr(UI_COLOR_STATUS), item);
	}
	wnoutrefresh(a->keybar);
}

static void
draw_status(struct app *a)
{
	char text[APP_INPUT_MAX + APP_TEXT_MAX];

	if (!a->status)
		return;
	werase(a->status);
	if (a->overlay == OVERLAY_PROMPT || a->overlay == OVERLAY_FILTER) {
		snprintf(text, sizeof text, "%c%s", a->overlay == OVERLAY_PROMPT ? ':' : '/', a->input);
		draw_text(a->status, 0, 0, a->cols, color_attr(UI_COLOR_PROMPT), text);
	} else if (a->overlay == OVERLAY_CONFIRM) {
		snprintf(text, sizeof text, "%s [y/N]", a->question);
		draw_text(a->status, 0, 0, a->cols, color_attr(UI_COLOR_ALERT), text);
	} else if (a->flash[0] && clock_mono_ms() < a->flash_until) {
		/* The answer to the operator's last key, over the alerts for a moment. */
		snprintf(text, sizeof text, "%s%s", a->flash, a->n_alerts ? "  [alerts: d]" : "");
		draw_text(a->status, 0, 0, a->cols, color_attr(a->flash_error ? UI_COLOR_FAIL
					     : UI_COLOR_STATUS), text);
	} else if (a->n_alerts > 0) {
		/* Alerts stick until dismissed, oldest first. */
		snprintf(text, sizeof text, "! %s  (%s%zu, d: dismiss)", a->alerts[0],
			 a->n_alerts > 1 ? "1 of " : "", a->n_alerts);
		draw_text(a->status, 0, 0, a->cols, color_attr(UI_COLOR_ALERT), text);
	}
	wnoutrefresh(a->status);
}

/*
 * One help line: the keys of req in this view, the name, the help text. A
 * request with no key here but keys in another view's section (the host
 * view's refresh, the tools view's revoke-all) says where they work.
 */
static void
help_line(struct app *a, WINDOW *w, int y, enum request req)
{
	char keys[6][KEYMAP_KEY_NAME_MAX], list[6 * KEYMAP_KEY_NAME_MAX + 40] = "";
	size_t i, n = keymap_keys_for(&a->keys, views[a->view]->name, req, keys, 6);
	bool grey = a->read_only && request_destructive(req);
	attr_t at = grey ? color_attr(UI_COLOR_DIM) : color_attr(UI_COLOR_DEFAULT);
	enum view_id v;
	char text[320];

	for (v = 0; n == 0 && v < VIEW_COUNT; v++)
		if (v != a->view && (n = keymap_keys_for(&a->keys, views[v]->name, req, keys, 6)))
			snprintf(list, sizeof list, "%s:", views[v]->name);
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
			 i || list[0] ? " " : "", keys[i]);
	draw_text(w, y, 2, 16, grey ? at : color_attr(UI_COLOR_KEY), n ? list : "(unbound)");
	snprintf(text, sizeof text, "%-14s %.200s%s", request_name(req), request_help(req),
		 grey ? "  (read-only)" : "");
	draw_text(w, y, 19, getmaxx(w) - 19, at, text);
}

/* Help, generated from the keymap in force for the current view. */
static void
draw_help(struct app *a)
{
	WINDOW *w = a->body;
	const char *group = NULL;
	int y = 1 - a->help_top, h;
	enum request r;

	if (!w)
		return;
	werase(w);
	h = getmaxy(w);
	draw_view_title(w, &(struct ui_model){ .ascii = a->ascii }, "Help");
	for (r = REQ_NONE + 1; r < REQ_COUNT; r++) {
		if (request_group(r) != group) {
			group = request_group(r);
			if (y > 0 && y < h)
				draw_text(w, y, 1, getmaxx(w) - 1, color_attr(UI_COLOR_HEADER), group);
			y++;
		}
		if (y > 0 && y < h)
			help_line(a, w, y, r);
		y++;
	}
	if (y + 1 > 0 && y + 1 < h)
		draw_text(w, y + 1, 1, getmaxx(w) - 1, color_attr(UI_COLOR_DIM),
			  "Commands: run FILE, apply FILE, revoke|restore TOOL [all|marked|ID], "
			  "stop ID, forget, filter TEXT, view NAME, quit");
	wnoutrefresh(w);
}

void
display_draw(struct app *a, const struct ui_model *m)
{
	draw_header(a, m);
	if (a->body && a->overlay == OVERLAY_HELP) {
		draw_help(a);
	} else if (a->body) {
		werase(a->body);
		views[a->view]->draw(a->body, m, &a->vs[a->view]);
		wnoutrefresh(a->body);
	}
	draw_keybar(a);
	draw_status(a);
	doupdate();
}

void
display_quitting(struct app *a, size_t live)
{
	char text[96];

	if (!a->status)
		return;
	werase(a->status);
	snprintf(text, sizeof text, "stopping %zu session%s and removing their containers…", live,
		 live == 1 ? "" : "s");
	draw_text(a->status, 0, 0, a->cols, color_attr(UI_COLOR_ALERT), text);
	wnoutrefresh(a->status);
	doupdate();
}

void
display_stopped(struct app *a, size_t live, int left)
{
	char text[96];

	if (!a->status)
		return;
	werase(a->status);
	if (left < 0)
		snprintf(text, sizeof text, "stopped %zu session%s; the daemon did not answer:"
			 " containers left unknown", live, live == 1 ? "" : "s");
	else
		snprintf(text, sizeof text, "stopped %zu session%s; %d container%s left", live,
			 live == 1 ? "" : "s", left, left == 1 ? "" : "s");
	draw_text(a->status, 0, 0, a->cols, color_attr(left == 0 ? UI_COLOR_STATUS : UI_COLOR_FAIL),
		  text);
	wnoutrefresh(a->status);
	doupdate();
	napms(700);
}
