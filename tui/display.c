/*
 * The terminal: set-up on the process's own stdin/stdout (never /dev/tty:
 * tests and CI have none), the layout (header, view, key bar, status line),
 * and what the console draws around the views: the header, the key bar,
 * the status line with its sticky alerts, the prompt, and the help overlay
 * generated from the live keymap. Only the UI thread calls this.
 */
#include "display.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "clock.h"
#include "color.h"
#include "util.h"
#include "verbs.h"

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
	{ { REQ_APPROVE, REQ_NONE }, "approve", 8 },	/* bound in the pending view alone */
	{ { REQ_DENY, REQ_NONE }, "deny", 8 },
	{ { REQ_APPROVE_REST, REQ_NONE }, "approve-rest", 4 },
	{ { REQ_HOST_REFRESH, REQ_NONE }, "refresh", 6 },	/* bound in the host view alone */
	{ { REQ_JUMP_PREV, REQ_NONE }, "jump", 4 },	/* bound in the timeline view alone */
	{ { REQ_REVOKE, REQ_REVOKE_ALL }, "revoke", 8 },
	{ { REQ_RESTORE, REQ_RESTORE_ALL }, "restore", 6 },
	{ { REQ_FORCE_STOP, REQ_NONE }, "force-stop", 7 },
	{ { REQ_FILTER, REQ_NONE }, "filter", 2 },
	{ { REQ_PROMPT, REQ_NONE }, "cmd", 5 },
	{ { REQ_HELP, REQ_NONE }, "help", KEEP_ALWAYS },
	{ { REQ_QUIT, REQ_NONE }, "quit", KEEP_ALWAYS },
};

int
display_open(struct screen *s)
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
	s->color = !(nc && nc[0]);
	color_init(s->color);
	s->ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;	/* no block glyphs then */
	display_mouse(s, false);	/* off until the operator turns it on */
	display_layout(s);
	return 0;
}

static void
drop_windows(struct screen *s)
{
	WINDOW **w[] = { &s->header, &s->body, &s->keybar, &s->status };
	size_t i;

	for (i = 0; i < sizeof w / sizeof w[0]; i++) {
		if (*w[i])
			delwin(*w[i]);
		*w[i] = NULL;
	}
}

void
display_close(struct screen *s)
{
	drop_windows(s);
	endwin();
}

/* Header, view and status take one line each from the top down; small screens keep the view. */
void
display_layout(struct screen *s)
{
	int lines = LINES, cols = COLS, y = 0, body;

	drop_windows(s);
	s->lines = lines;
	s->cols = cols;
	s->page = 1;
	if (lines < 1 || cols < 1)
		return;
	body = lines - (lines >= 3) - (lines >= 4) - (lines >= 2);
	if (lines >= 3)
		s->header = newwin(1, cols, y++, 0);
	if (body > 0) {
		s->body = newwin(body, cols, y, 0);
		y += body;
	}
	if (lines >= 4)
		s->keybar = newwin(1, cols, y++, 0);
	if (lines >= 2)
		s->status = newwin(1, cols, y, 0);
	/* A page key moves a body's height less the title and some context. */
	if (s->body && getmaxy(s->body) > 3)
		s->page = getmaxy(s->body) - 3;
	clearok(curscr, TRUE);
}

void
display_mouse(struct screen *s, bool on)
{
	s->mouse = on;
	mousemask(on ? BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED : 0, NULL);
}

long
display_wheel(void)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return 0;
	if (ev.bstate & BUTTON4_PRESSED)
		return -3;
	if (ev.bstate & BUTTON5_PRESSED)
		return 3;
	return 0;
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

/* Attached: each engine, its state and revision ("prod r7 · lab lost, retry 4s"). */
static const char *
header_engines(const struct app *a, const char *dot, char *buf, size_t cap)
{
	const struct model *m = &a->model;
	int64_t now = clock_mono_ms();
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < m->n_links && n < cap; i++) {
		const struct link_status *st = &m->link_st[i];
		char sep[8] = "";

		if (i)
			snprintf(sep, sizeof sep, " %s ", dot);

		if (st->state == LINK_UP)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s r%lld%s", sep, st->name,
					      (long long)(m->n_links > 1 ? m->per[i].revision
									 : m->snap.revision),
					      strcmp(st->role, "view") == 0 ? " (view only)" : "");
		else if (st->state == LINK_LOST && st->retry_ms > now)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s LOST, retry in %llds", sep,
					      st->name,
					      (long long)((st->retry_ms - now + 999) / 1000));
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s%s %s", sep, st->name,
					      st->state == LINK_LOST ? "LOST, retrying"
								     : "connecting");
	}
	return buf;
}

/* " │ pool: 3 ready, 1 warming, 2 discarded", all pools summed; "" with none. */
static int
header_pools(const struct supervisor_snapshot *s, const char *bar, char *buf, size_t cap)
{
	unsigned long long ready = 0, warming = 0, discarded = 0;
	size_t i;

	if (s->n_pools == 0)
		return 0;
	for (i = 0; i < s->n_pools && i < SNAP_POOLS_MAX; i++) {
		ready += s->pools[i].ready;
		warming += s->pools[i].warming;
		discarded += s->pools[i].discarded;
	}
	return snprintf(buf, cap, " %s pool%s: %llu ready, %llu warming, %llu discarded", bar,
			s->n_pools == 1 ? "" : "s", ready, warming, discarded);
}

/*
 * FROZEN, first: with several engines each frozen one by name, its own
 * revision and author ("FROZEN a since r9 by oncall"), as revisions are
 * each engine's own.
 */
static int
header_frozen(const struct app *a, const struct supervisor_snapshot *s, const char *bar,
	      char *buf, size_t cap)
{
	const struct model *m = &a->model;
	size_t i;
	int n = 0, w;

	if (m->n_links <= 1)
		return s->frozen ? snprintf(buf, cap, "FROZEN since r%lld by %s %s ",
					    (long long)s->frozen_revision, s->frozen_by.user, bar) : 0;
	for (i = 0; i < m->n_links && (size_t)n < cap; i++) {
		if (!m->per[i].frozen)
			continue;
		w = snprintf(buf + n, cap - (size_t)n, "FROZEN %s since r%lld by %s %s ",
			     m->engine_names[i], (long long)m->per[i].frozen_revision,
			     m->per[i].frozen_by.user, bar);
		n += w > 0 ? w : 0;
	}
	return n;
}

static void
header_text(const struct app *a, const struct ui_model *m, char *buf, size_t cap)
{
	const struct supervisor_snapshot *s = m->snap;
	const char *bar = draw_glyph(m, GLYPH_VLINE);
	char clock[DRAW_FMT_MAX], daemon[SNAP_WORD_MAX + 16], engines[256];
	size_t i, running = 0;
	int n;

	for (i = 0; i < s->n; i++)	/* a lost engine's are its last known: not counted */
		running += s->rows[i].state == SESSION_STATE_RUNNING && !view_row_lost(m, &s->rows[i]);
	n = snprintf(buf, cap, " airlock %s ", bar);
	/* First, where no width cuts it: every call is being denied, or some wait. */
	n += header_frozen(a, s, bar, buf + n, cap - (size_t)n);
	if (a->model.n_pending > 0)
		n += snprintf(buf + n, cap - (size_t)n, "%zu HELD %s ", a->model.n_pending, bar);
	if (a->attached)
		n += snprintf(buf + n, cap - (size_t)n, "%s %s %zu session%s (%zu running) %s %s",
			      header_engines(a, draw_glyph(m, GLYPH_DOT), engines, sizeof engines),
			      bar, s->n, s->n == 1 ? "" : "s", running, bar,
			      s->audit_failures ? "audit FAIL" : "audit ok");
	else
		n += snprintf(buf + n, cap - (size_t)n,
			      "%s %s %s %zu session%s (%zu running) %s rev %lld %s %s",
			      header_daemon(&a->model.host, daemon, sizeof daemon), a->runtime, bar,
			      s->n, s->n == 1 ? "" : "s", running, bar, (long long)s->revision, bar,
			      s->audit_failures ? "audit FAIL" : "audit ok");
	if (n > 0 && (size_t)n < cap)
		n += header_pools(s, bar, buf + n, cap - (size_t)n);
	if (n > 0 && (size_t)n < cap && s->containers_left)
		n += snprintf(buf + n, cap - (size_t)n, " %s %zu container%s left", bar,
			      s->containers_left, s->containers_left == 1 ? "" : "s");
	if (n > 0 && (size_t)n < cap && s->events_dropped)
		n += snprintf(buf + n, cap - (size_t)n, " %s %llu events dropped", bar,
			      (unsigned long long)s->events_dropped);
	if (n > 0 && (size_t)n < cap && a->model.read_only)
		n += snprintf(buf + n, cap - (size_t)n, " %s READ-ONLY", bar);
	if (n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "  %s", draw_fmt_clock(clock, m->now_ms));
}

static void
draw_header(const struct app *a, const struct ui_model *m)
{
	WINDOW *w = a->screen.header;
	int cols = a->screen.cols;
	char text[768];

	if (!w)
		return;
	werase(w);
	header_text(a, m, text, sizeof text);
	draw_fill(w, 0, 0, cols, color_attr(UI_COLOR_TITLE));
	draw_text(w, 0, 0, cols, color_attr(UI_COLOR_TITLE), text);
	if (m->stale)
		draw_right(w, 0, 0, cols, color_attr(UI_COLOR_STALE), " STALE ");
	wnoutrefresh(w);
}

/* The first key bound to req in the current view, or NULL. */
static const char *
first_key(const struct app *a, enum request req, char buf[KEYMAP_KEY_NAME_MAX])
{
	char keys[4][KEYMAP_KEY_NAME_MAX];

	if (keymap_keys_for(&a->keys, views[a->model.view]->name, req, keys, 4) == 0)
		return NULL;
	snprintf(buf, KEYMAP_KEY_NAME_MAX, "%s", keys[0]);
	return buf;
}

#define KEYBAR_N	(sizeof keybar / sizeof keybar[0])

/* Each item's width on the bar: "[k] word ". */
static size_t
item_width(const char *key, size_t i)
{
	return strlen(key) + strlen(keybar[i].word) + 4;
}

/* Read-only, what would change something is shown but does nothing. */
static bool
inert(const struct app *a, enum request r)
{
	return a->model.read_only && request_destructive(r);
}

/*
 * The key bar: what the model says is offered here, each under its first
 * key. What does not fit is left out whole, the least needed first
 * (read-only, what it refuses), but help and quit stay (help lists the
 * rest); cut only when even they do not fit.
 */
static void
draw_keybar(const struct app *a)
{
	char keys[KEYBAR_N][KEYMAP_KEY_NAME_MAX], item[64], why[STATUS_TEXT_MAX];
	bool show[KEYBAR_N] = { false };
	enum request shown[KEYBAR_N];
	size_t i, j, width = 0;	/* the lead space, less the last item's trailing one */
	int keep, x = 1, cols = a->screen.cols;
	WINDOW *w = a->screen.keybar;
	struct target t;

	if (!w)
		return;
	model_target(&a->model, &t);
	werase(w);
	for (i = 0; i < KEYBAR_N; i++) {
		const char *k = NULL;
		enum request r = REQ_NONE;

		for (j = 0; j < 2 && !k && keybar[i].req[j] != REQ_NONE; j++)
			k = first_key(a, r = keybar[i].req[j], keys[i]);
		show[i] = k && model_offered(&a->model, r, &t, why, sizeof why);
		shown[i] = r;
		if (show[i])
			width += item_width(keys[i], i);
	}
	for (keep = 0; keep < KEEP_ALWAYS && width > (size_t)cols; keep++)
		for (i = KEYBAR_N; i-- > 0 && width > (size_t)cols;)
			if (show[i] && (inert(a, shown[i]) ? 0 : keybar[i].keep) == keep) {
				show[i] = false;
				width -= item_width(keys[i], i);
			}
	for (i = 0; i < KEYBAR_N && x < cols; i++) {
		if (!show[i])
			continue;
		snprintf(item, sizeof item, "[%s]", keys[i]);
		x += draw_text(w, 0, x, cols - x, color_attr(UI_COLOR_KEY), item);
		snprintf(item, sizeof item, " %s ", keybar[i].word);
		x += draw_text(w, 0, x, cols - x, inert(a, shown[i]) ? color_attr(UI_COLOR_DIM)
			       : color_attr(UI_COLOR_STATUS), item);
	}
	wnoutrefresh(w);
}

/* The first engine that is down and why ("lab: refused: not allowed: …"), when one says. */
static bool
link_trouble(const struct app *a, char *buf, size_t cap)
{
	const struct model *m = &a->model;
	size_t i;

	for (i = 0; i < m->n_links; i++)
		if (m->link_st[i].state != LINK_UP && m->link_st[i].why[0]) {
			snprintf(buf, cap, "%s: %s", m->link_st[i].name, m->link_st[i].why);
			return true;
		}
	return false;
}

static void
draw_status(const struct app *a)
{
	const struct status *st = &a->status;
	enum overlay o = a->screen.overlay;
	char text[PROMPT_INPUT_MAX + STATUS_TEXT_MAX], key[KEYMAP_KEY_NAME_MAX] = "", hint[64];
	char all[KEYMAP_KEY_NAME_MAX] = "";
	WINDOW *w = a->screen.status;
	int cols = a->screen.cols;

	/* The key that dismisses here (in the pending view d denies: none there). */
	if (first_key(a, REQ_DISMISS, key))
		snprintf(hint, sizeof hint, "%s: dismiss", key);
	else
		snprintf(hint, sizeof hint, "dismiss on another view");
	if (st->n_alerts > 1 && first_key(a, REQ_DISMISS_ALL, all))	/* many: all at once */
		snprintf(hint + strlen(hint), sizeof hint - strlen(hint), ", %s: all", all);

	if (!w)
		return;
	werase(w);
	if (o == OVERLAY_PROMPT || o == OVERLAY_FILTER) {
		snprintf(text, sizeof text, "%c%s", o == OVERLAY_PROMPT ? ':' : '/', a->prompt.input);
		draw_text(w, 0, 0, cols, color_attr(UI_COLOR_PROMPT), text);
	} else if (o == OVERLAY_CONFIRM) {
		snprintf(text, sizeof text, "%s [y/N]", a->confirm.question);
		draw_text(w, 0, 0, cols, color_attr(UI_COLOR_ALERT), text);
	} else if (status_flashing(st)) {
		/* The answer to the operator's last key, over the alerts for a moment. */
		snprintf(text, sizeof text, "%s%s%s%s", st->flash, st->n_alerts ? "  [alerts: " : "",
			 !st->n_alerts ? "" : key[0] ? key : "another view", st->n_alerts ? "]" : "");
		draw_text(w, 0, 0, cols, color_attr(st->flash_error ? UI_COLOR_FAIL : UI_COLOR_STATUS),
			  text);
	} else if (st->n_alerts > 0) {
		/* Alerts stick until dismissed, oldest first. */
		snprintf(text, sizeof text, "! %s  (%s%zu, %s)", st->alerts[0],
			 st->n_alerts > 1 ? "1 of " : "", st->n_alerts, hint);
		draw_text(w, 0, 0, cols, color_attr(UI_COLOR_ALERT), text);
	} else if (link_trouble(a, text, sizeof text)) {
		/* Nothing else to say: why an engine is down, not only the header's LOST. */
		draw_text(w, 0, 0, cols, color_attr(UI_COLOR_FAIL), text);
	}
	wnoutrefresh(w);
}

/*
 * One help line: the keys of req in this view, the name, the help text. A
 * request with no key here but keys in another view's section (the host
 * view's refresh, the tools view's revoke-all) says where they work.
 */
static void
help_line(const struct app *a, WINDOW *w, int y, enum request req)
{
	char keys[6][KEYMAP_KEY_NAME_MAX], list[6 * KEYMAP_KEY_NAME_MAX + 40] = "";
	enum view_id here = a->model.view, v;
	size_t i, n = keymap_keys_for(&a->keys, views[here]->name, req, keys, 6);
	bool grey = inert(a, req);
	attr_t at = grey ? color_attr(UI_COLOR_DIM) : color_attr(UI_COLOR_DEFAULT);
	char text[320];

	for (v = 0; n == 0 && v < VIEW_COUNT; v++)
		if (v != here && (n = keymap_keys_for(&a->keys, views[v]->name, req, keys, 6)))
			snprintf(list, sizeof list, "%s:", views[v]->name);
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
			 i || list[0] ? " " : "", keys[i]);
	draw_text(w, y, 2, 16, grey ? at : color_attr(UI_COLOR_KEY), n ? list : "(unbound)");
	snprintf(text, sizeof text, "%-14s %.200s%s", request_name(req), request_help(req),
		 grey ? "  (read-only)" : "");
	draw_text(w, y, 19, getmaxx(w) - 19, at, text);
}

int
display_help_top_max(const struct screen *s)
{
	const char *group = NULL;
	int n = 2, shown = s->body ? getmaxy(s->body) - 1 : 1;	/* below its title */

	for (enum request r = REQ_NONE + 1; r < REQ_COUNT; r++, n++)	/* n: a blank row, then */
		if (request_group(r) != group) {			/* the ':' commands */
			group = request_group(r);
			n++;
		}
	return n > shown ? n - shown : 0;
}

/* Help, generated from the keymap in force for the current view and the ':' commands. */
static void
draw_help(const struct app *a)
{
	WINDOW *w = a->screen.body;
	const char *group = NULL;
	int y = 1 - a->screen.help_top, h;
	char commands[256];
	enum request r;

	if (!w)
		return;
	werase(w);
	h = getmaxy(w);
	draw_view_title(w, &(struct ui_model){ .ascii = a->screen.ascii }, "Help");
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
	verbs_summary(commands, sizeof commands);
	if (y + 1 > 0 && y + 1 < h)
		draw_text(w, y + 1, 1, getmaxx(w) - 1, color_attr(UI_COLOR_DIM), commands);
	wnoutrefresh(w);
}

void
display_draw(struct app *a, const struct ui_model *m)
{
	WINDOW *body = a->screen.body;

	draw_header(a, m);
	if (body && a->screen.overlay == OVERLAY_HELP) {
		draw_help(a);
	} else if (body) {
		werase(body);
		views[a->model.view]->draw(body, m, &a->model.vs[a->model.view]);
		wnoutrefresh(body);
	}
	draw_keybar(a);
	draw_status(a);
	doupdate();
}

/* One line on the status line, drawn at once: the loop is no longer running. */
static void
status_now(struct screen *s, enum ui_color color, const char *text)
{
	if (!s->status)
		return;
	werase(s->status);
	draw_text(s->status, 0, 0, s->cols, color_attr(color), text);
	wnoutrefresh(s->status);
	doupdate();
}

void
display_quitting(struct screen *s, size_t live)
{
	char text[96];

	snprintf(text, sizeof text, "stopping %zu session%s and removing their containers%s", live,
		 live == 1 ? "" : "s",
		 draw_glyph(&(struct ui_model){ .ascii = s->ascii }, GLYPH_DOTS));
	status_now(s, UI_COLOR_ALERT, text);
}

void
display_stopped(struct screen *s, size_t live, int left)
{
	char text[96];

	if (!s->status)
		return;
	if (left < 0)
		snprintf(text, sizeof text, "stopped %zu session%s; the daemon did not answer:"
			 " containers left unknown", live, live == 1 ? "" : "s");
	else
		snprintf(text, sizeof text, "stopped %zu session%s; %d container%s left", live,
			 live == 1 ? "" : "s", left, left == 1 ? "" : "s");
	status_now(s, left == 0 ? UI_COLOR_STATUS : UI_COLOR_FAIL, text);
	napms(700);
}
