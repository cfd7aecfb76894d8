/*
 * airlock console: its own engine (link_local.h: the supervisor on worker
 * threads) or engines elsewhere, reached only through link.h; the UI on
 * this thread (docs/console.md). The loop waits on the terminal and the
 * links' wake descriptors, drains events, and draws at most four frames a second
 * from one model of snapshots. Keys go to dispatch.c, whose handlers
 * return flags here; nothing calls back into this file. Quitting stops
 * every session and reports how many containers are left, which must be
 * none.
 */
#include "app.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actions.h"
#include "alert.h"
#include "clock.h"
#include "console.h"
#include "demo.h"
#include "dispatch.h"
#include "display.h"
#include "notify.h"
#include "path_reason.h"
#include "link_local.h"
#include "thread.h"

_Static_assert(CONSOLE_CONNECT_MAX == MODEL_LINKS_MAX, "one link per --connect");

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/*
 * SIGWINCH is taken only inside the loop's wait. ncurses' handler merely
 * flags the resize, and only wgetch acts on it (new LINES and COLS, then
 * KEY_RESIZE); taken while a frame was drawn, it left the layout at the
 * old size until the operator pressed a key. Taken in the wait, it always
 * interrupts it, and the loop then reads the KEY_RESIZE.
 */
static sigset_t wait_mask;

static void
hold_resizes(void)
{
	sigset_t winch;

	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &winch, &wait_mask);
	sigdelset(&wait_mask, SIGWINCH);
}

/* ---- events and alerts ---- */

/* An alert sticks on the status line and goes to the desktop, if there is one. */
static void
alert(struct app *a, const char *text)
{
	status_alert(&a->status, text);
	if (a->notifier)
		notifier_send(a->notifier, text);
}

/*
 * Calls that began waiting, from one engine's batch of events: an alert
 * each (its id, session and tool), at most HOLD_ALERTS_MAX a batch, then
 * how many more, so a burst of held calls does not bury the status line.
 */
#define HOLD_ALERTS_MAX	4

static bool
alert_is_hold(const struct supervisor_event *e, size_t *holds)
{
	if (e->kind != SUPERVISOR_EVENT_HOLD_WAITING)
		return false;
	return ++*holds > HOLD_ALERTS_MAX;
}

/* One engine's batch of events: alerts to the status line and the desktop. */
static void
event_alerts(struct app *a, const char *engine, const struct supervisor_event *ev, size_t n)
{
	char text[STATUS_TEXT_MAX + SNAP_ENGINE_MAX + 2], line[STATUS_TEXT_MAX];
	size_t i, holds = 0;

	for (i = 0; i < n; i++) {
		if (ev[i].replayed || !alert_wanted(&ev[i]) || alert_is_hold(&ev[i], &holds))
			continue;
		alert_format(&ev[i], line, sizeof line);
		snprintf(text, sizeof text, "%s%s%s", engine, engine[0] ? ": " : "", line);
		alert(a, text);
	}
	if (holds > HOLD_ALERTS_MAX) {
		alert_holds_more(holds - HOLD_ALERTS_MAX, line, sizeof line);
		snprintf(text, sizeof text, "%s%s%s", engine, engine[0] ? ": " : "", line);
		alert(a, text);
	}
}

/* Everything the engines queued: into the history, alerts to the status line. */
static int
drain_events(struct app *a)
{
	struct supervisor_event ev[128];
	struct link_result res[16];
	struct link_status st;
	size_t n, i, k;
	int flags = 0;

	for (k = 0; k < a->n_links; k++) {
		link_status(a->links[k], &st);
		while ((n = link_events(a->links[k], ev, 128)) > 0) {
			model_add_engine_events(&a->model, (unsigned)k, ev, n);
			event_alerts(a, a->n_links > 1 ? st.name : "", ev, n);
			flags |= APP_REDRAW;
		}
		while ((n = link_results(a->links[k], res, 16)) > 0)
			for (i = 0; i < n; i++) {
				res[i].engine = (unsigned)k;
				flags |= action_result(a, &res[i]);
			}
	}
	return flags;
}

static void
tail_alert(struct app *a)
{
	char text[STATUS_TEXT_MAX];

	snprintf(text, sizeof text, "audit view: the log cannot be read (%.100s): not following it",
		 a->model.tail_error);
	alert(a, text);
}

/* ---- set-up ---- */

/* A bad keys file is the operator's to fix: it sticks like an alert. */
static void
load_keys(struct app *a)
{
	struct keymap_errors errs = { 0 };
	char path[PATH_MAX], text[STATUS_TEXT_MAX];
	size_t i;

	keymap_init(&a->keys);
	keymap_load_string(&a->keys, keymap_builtin, "builtin", &errs);
	if (keymap_user_path(path, sizeof path) &&
	    keymap_load_file(&a->keys, path, &errs) == KEYMAP_UNREADABLE && errs.count == 0) {
		snprintf(text, sizeof text, "keys: %.150s cannot be read", path);
		alert(a, text);
	}
	for (i = 0; i < errs.count && i < KEYMAP_ERRORS_MAX; i++)
		alert(a, errs.msg[i]);
}

/* The log the engine writes: --audit, else the demo's own (removed with it), else the default. */
static const char *
audit_path(const struct app *a, const struct console_args *o)
{
	if (o->audit)
		return o->audit;
	return a->demo ? demo_audit_path(a->demo) : o->default_audit;
}

/* The console's own engine, and its audit log; said on stderr when it cannot be. */
static int
open_local(struct app *a, const struct console_args *o, const char *p)
{
	struct link_local_options lo = { .audit_path = p, .sessions_max = o->sessions_max,
					 .via = "console" };
	char text[512];
	struct al_err err;
	int rc = link_local_open(&lo, &a->local, &err);

	if (rc == LINK_LOCAL_NO_AUDIT) {
		path_failure(text, sizeof text, "audit", p, true, err.msg);
		fprintf(stderr, "airlock console: %s\n", text);
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr, "airlock console: %s\n", err.msg);
		return -1;
	}
	a->links[a->n_links++] = a->local;
	return 0;
}

/* The configured sessions, through the link, once every file checks out. */
static int
start_sessions(struct app *a, const struct console_args *o)
{
	struct link_result r = { 0 };
	struct al_err err;
	size_t i;

	snprintf(a->runtime, sizeof a->runtime, "runc");
	if (link_local_check(o->configs, o->n_configs, a->runtime, sizeof a->runtime, &err) < 0) {
		fprintf(stderr, "airlock console: %s\n", err.msg);
		return -1;
	}
	for (i = 0; i < o->n_configs; i++)
		if (a->local->ops->start(a->local, o->configs[i], &r) != LINK_DONE || !r.ok) {
			fprintf(stderr, "airlock console: %s\n", r.error);
			return -1;
		}
	return 0;
}

static int
open_engine(struct app *a, const struct console_args *o, const char *exe)
{
	const char *p;
	struct al_err err;

	if (o->demo && demo_prepare(exe, &a->demo, &err) < 0) {
		fprintf(stderr, "airlock console: %s\n", err.msg);
		return -1;
	}
	if (!(p = audit_path(a, o))) {
		fprintf(stderr, "airlock console: no --audit given and no state directory usable\n");
		return -1;
	}
	/* The demo's private log goes with it: only a log that stays has a head to record. */
	if (o->audit || !a->demo)
		snprintf(a->audit_path, sizeof a->audit_path, "%s", p);
	if (open_local(a, o, p) < 0 || start_sessions(a, o) < 0)
		return -1;
	if (a->demo && demo_start(a->demo, a->local, &err) < 0) {
		fprintf(stderr, "airlock console: %s\n", err.msg);
		return -1;
	}
	/* Without node or the MCP SDK the demo runs without its MCP agent, and says so. */
	if (a->demo && demo_mcp_note(a->demo)[0])
		status_flash(&a->status, false, "%s", demo_mcp_note(a->demo));
	link_host_refresh(a->local, a->runtime);
	return 0;
}

/*
 * Attached: one link per --connect, each connecting on its own thread (an
 * engine down now is shown as lost and tried again). The audit view
 * follows --audit read-only when given (the engine's log, on this host);
 * else it says the log is the engine's.
 */
static int
attach_engines(struct app *a, const struct console_args *o)
{
	const char *why;
	size_t i;

	a->attached = true;
	snprintf(a->runtime, sizeof a->runtime, "runc");
	for (i = 0; i < o->n_connect; i++) {
		a->links[i] = link_remote_new(o->connect[i], &why);
		if (!a->links[i]) {
			fprintf(stderr, "airlock console: --connect %.200s: %s\n", o->connect[i], why);
			return -1;
		}
		a->n_links++;
	}
	return 0;
}

static struct app *
app_new(const struct console_args *o)
{
	struct app *a = calloc(1, sizeof *a);

	if (a && model_init(&a->model, o->read_only) < 0) {
		free(a);
		return NULL;
	}
	return a;
}

/* What the count of containers left says; -1: the daemon did not answer. */
static const char *
left_text(int left, char *buf, size_t cap)
{
	if (left < 0)
		snprintf(buf, cap, "the daemon did not answer: containers left unknown");
	else
		snprintf(buf, cap, "%d containers left", left);
	return buf;
}

/*
 * The head of a log that outlives the console, once every session has
 * ended: recorded elsewhere, it anchors a later `airlock audit verify`.
 */
static void
report_head(struct app *a, char *buf, size_t cap)
{
	char hash[HASH_HEX_LEN + 1];
	int64_t seq;

	buf[0] = '\0';
	if (!a->audit_path[0])
		return;
	if (link_local_audit_head(a->local, &seq, hash) < 0)
		snprintf(buf, cap, "audit %s: its head cannot be read", a->audit_path);
	else if (seq > 0)
		snprintf(buf, cap, "audit %s: head %lld:%s", a->audit_path, (long long)seq, hash);
}

/* Stop everything; the containers left must be none. Returns that count. */
static int
app_shutdown(struct app *a)
{
	int left = a->local ? link_local_shutdown(a->local, NULL) : 0;

	for (size_t i = 0; i < a->n_links; i++)
		link_close(a->links[i]);
	if (a->demo)
		demo_close(a->demo);
	notifier_close(a->notifier);
	model_free(&a->model);
	free(a);
	return left;
}

/* ---- the loop ---- */

static int
read_keys(struct app *a)
{
	int ch, flags = 0, n = 0;

	/* Bounded: a paste of a thousand keys still lets a frame through. */
	while (n++ < 256 && (ch = wgetch(stdscr)) != ERR) {
		flags |= dispatch_key(a, ch) | APP_KEYED;
		if (flags & APP_QUIT)
			break;
	}
	return flags;
}

static int
wait_input(struct app *a, int timeout_ms)
{
	struct pollfd p[1 + MODEL_LINKS_MAX] = { { .fd = STDIN_FILENO, .events = POLLIN } };
	struct timespec ts = { .tv_sec = timeout_ms / 1000,
			       .tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
	size_t i;
	int flags = 0;

	for (i = 0; i < a->n_links; i++)
		p[1 + i] = (struct pollfd){ .fd = link_wake_fd(a->links[i]), .events = POLLIN };
	if (ppoll(p, 1 + a->n_links, &ts, &wait_mask) < 0)
		return errno == EINTR ? read_keys(a) : 0;	/* a resize: KEY_RESIZE */
	for (i = 0; i < a->n_links; i++)
		if (p[1 + i].revents & POLLIN) {
			flags |= drain_events(a);
			break;
		}
	if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
		flags |= read_keys(a);
	if (p[0].revents & (POLLHUP | POLLERR) && !(p[0].revents & POLLIN))
		flags |= APP_QUIT;	/* the terminal went away */
	return flags;
}

static void
frame(struct app *a)
{
	struct ui_model m;

	if (model_refresh(&a->model, a->links, a->n_links))
		tail_alert(a);
	model_ui(&a->model, &m);
	m.ascii = a->screen.ascii;
	display_draw(a, &m);
}

/*
 * Engine updates are drawn at most four times a second; the operator's
 * own keys get their answer at once (at most one frame per 50 ms even
 * while keys repeat), so a keystroke never waits for the next tick.
 */
static int
next_frame_in(int64_t last_draw, bool keyed)
{
	int64_t due = last_draw + (keyed ? APP_KEY_DRAW_MS : APP_DRAW_MS) - clock_mono_ms();

	return due > 0 ? (int)due : 0;
}

static void
run(struct app *a)
{
	int64_t last_draw = 0, last_tick = 0, now;
	int flags = APP_REDRAW;

	for (;;) {
		now = clock_mono_ms();
		if (a->demo && now - last_tick >= 1000) {
			demo_tick(a->demo, &a->model.snap);
			last_tick = now;
		}
		if (flags & APP_RELAYOUT)
			display_layout(&a->screen);
		if (next_frame_in(last_draw, flags & APP_KEYED) == 0) {
			frame(a);
			last_draw = clock_mono_ms();
			flags = 0;
		}
		if (stop_signal)
			break;
		flags |= wait_input(a, next_frame_in(last_draw, flags & APP_KEYED));
		if (flags & APP_QUIT)
			break;
	}
}

/*
 * Quitting an attached console: the engines' sessions go on. Counted from
 * the engines that answer; a lost one's last snapshot is not a count, so
 * it is named instead.
 */
static int
detach(struct app *a)
{
	const struct model *m = &a->model;
	size_t live = 0, n = a->n_links, i;
	char lost[256] = "";
	int w = 0;

	for (i = 0; i < m->n_links; i++) {
		if (m->link_fresh[i])
			live += m->n_links == 1 ? m->snap.live : m->per[i].live;
		else if ((size_t)w < sizeof lost)
			w += snprintf(lost + w, sizeof lost - (size_t)w, "%s%s", w ? ", " : "",
				      m->engine_names[i]);
	}
	display_close(&a->screen);
	app_shutdown(a);
	fprintf(stderr, "airlock console: detached from %zu engine%s; their %zu live session%s "
		"go%s on%s%s%s (airlock ctl stop-all stops them)\n", n, n == 1 ? "" : "s", live,
		live == 1 ? "" : "s", live == 1 ? "es" : "", lost[0] ? " (lost, not counted: " : "", lost,
		lost[0] ? ")" : "");
	return CONSOLE_OK;
}

/* Quitting the console's own engine: every session stops, and none may be left. */
static int
quit(struct app *a)
{
	char text[80], head[APP_PATH_MAX + 128];
	size_t live = link_local_live(a->local);
	uint64_t refused;
	int left;

	display_quitting(&a->screen, live);
	left = link_local_shutdown(a->local, &refused);
	display_stopped(&a->screen, live, left);
	display_close(&a->screen);
	report_head(a, head, sizeof head);
	left = app_shutdown(a);
	fprintf(stderr, "airlock console: stopped %zu live sessions; %s\n", live,
		left_text(left, text, sizeof text));
	if (head[0])
		fprintf(stderr, "airlock console: %s\n", head);
	if (refused)
		fprintf(stderr, "airlock console: the audit log refused %llu writes: it is incomplete"
			" (airlock audit verify)\n", (unsigned long long)refused);
	if (left < 0)
		return CONSOLE_ERROR;
	return left == 0 && !refused ? CONSOLE_OK : CONSOLE_REFUSED;
}

int
console_run(const struct console_args *o)
{
	char exe[PATH_MAX], text[80];
	struct app *a = app_new(o);
	int left;

	if (!a)
		return CONSOLE_ERROR;
	thread_catch_stop(on_signal, 0);
	hold_resizes();
	load_keys(a);	/* getenv: before any engine thread exists */
	a->notifier = notifier_open("airlock");
	if (!realpath("/proc/self/exe", exe))
		snprintf(exe, sizeof exe, "/proc/self/exe");
	if ((o->n_connect ? attach_engines(a, o) : open_engine(a, o, exe)) < 0) {
		left = app_shutdown(a);
		if (!o->n_connect)
			fprintf(stderr, "airlock console: %s\n", left_text(left, text, sizeof text));
		return CONSOLE_ERROR;
	}
	if (display_open(&a->screen) < 0) {
		app_shutdown(a);
		fprintf(stderr, "airlock console: cannot set up the terminal\n");
		return CONSOLE_ERROR;
	}
	run(a);
	return a->attached ? detach(a) : quit(a);
}
