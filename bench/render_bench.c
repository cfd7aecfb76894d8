/*
 * The console's frame cost: every view drawn from a 200-session model into
 * an off-screen ncurses screen (as the UI thread does four times a second),
 * beside the floor of a frame that draws nothing. Prints CPU per frame and
 * what that is at 4 Hz as a share of one core.
 *
 * The pending view is drawn with PENDING_CALLS held calls across the
 * sessions (issue 43, item 8): the console's own bound, past any one
 * engine's board.
 *
 * usage: render_bench [SESSIONS] [FRAMES]
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "color.h"
#include "view.h"

static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
fill_row(struct session_row *r, size_t i, int64_t now)
{
	size_t t, k;

	memset(r, 0, sizeof *r);
	snprintf(r->id, sizeof r->id, "s-%016zx", i * 2654435761u);
	snprintf(r->container, sizeof r->container, "%064zx", i * 40503u);
	snprintf(r->image, sizeof r->image, "sha256:%064x", 0x9e41b7c2u);
	snprintf(r->runtime, sizeof r->runtime, "runc");
	r->state = i % 10 == 0 ? SESSION_STATE_ENDED : SESSION_STATE_RUNNING;
	r->end = i % 10 == 0 ? SESSION_END_WATCHDOG_FAILED : SESSION_END_NONE;
	r->started_ms = now - (int64_t)i * 1000;
	r->uptime_ms = (int64_t)i * 1000;
	r->lease.armed = r->state == SESSION_STATE_RUNNING;
	r->lease.age_ms = (int64_t)(i % 7) * 100;
	r->lease.n_acks = SNAP_ACKS_MAX;
	for (k = 0; k < SNAP_ACKS_MAX; k++)
		r->lease.ack_us[k] = (int32_t)(40 + (k * 37 + i) % 400);
	r->counters.calls = i * 3;
	r->counters.allowed = i * 2;
	r->counters.denied = i;
	r->stdout_bytes = i * 1000;
	r->revision = 7;
	r->gate_open = true;
	snprintf(r->class_name, sizeof r->class_name, "confidential");
	r->n_tools = 3;
	for (t = 0; t < r->n_tools; t++) {
		snprintf(r->tools[t].name, sizeof r->tools[t].name, "tool.%zu", t);
		snprintf(r->tools[t].data_class, sizeof r->tools[t].data_class, "public");
		r->tools[t].approved = r->tools[t].allowed = true;
	}
}

static void
fill_events(struct supervisor_event *ev, size_t n, const struct supervisor_snapshot *s)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&ev[i], 0, sizeof ev[i]);
		ev[i].seq = i + 1;
		ev[i].wall_ms = s->taken_ms - (int64_t)(n - i) * 100;
		ev[i].kind = i % 3 ? SUPERVISOR_EVENT_STATE : SUPERVISOR_EVENT_CUTOVER_ACK;
		ev[i].state = SESSION_STATE_RUNNING;
		snprintf(ev[i].session, sizeof ev[i].session, "%s", s->rows[i % s->n].id);
		snprintf(ev[i].tool, sizeof ev[i].tool, "tool.1");
	}
}

#define PENDING_CALLS	1000

/* n held calls across the snapshot's sessions, oldest first, as the model lists them. */
static struct hold_view *
fill_pending(size_t n, const struct supervisor_snapshot *s)
{
	struct hold_view *h = calloc(n, sizeof *h);
	size_t i;

	for (i = 0; h && i < n; i++) {
		h[i].id = (int64_t)i + 1;
		snprintf(h[i].session, sizeof h[i].session, "%s", s->rows[i % s->n].id);
		snprintf(h[i].tool, sizeof h[i].tool, "tool.%zu", i % 3);
		snprintf(h[i].alias, sizeof h[i].alias, "alias.%zu", i % 3);
		snprintf(h[i].session_class, sizeof h[i].session_class, "confidential");
		snprintf(h[i].sink_ceiling, sizeof h[i].sink_ceiling, "public");
		h[i].request_bytes = (int64_t)(100 + i * 7);
		snprintf(h[i].request_hash, sizeof h[i].request_hash, "%016zx%048x", i * 2654435761u, 0);
		h[i].since_ms = s->taken_ms - (int64_t)(n - i) * 50;
		h[i].earlier_calls = (int64_t)(i / s->n);
	}
	return h;
}

static void
report(const char *label, double *v, int n)
{
	bench_sort(v, (size_t)n);
	printf("  %-30s p50 %8.1f us  p90 %8.1f us  p95 %8.1f us  max %8.1f us"
	       "  (at 4 Hz: %.2f%% of a core)\n", label, v[n / 2], v[n * 9 / 10], v[n * 95 / 100],
	       v[n - 1], v[n / 2] * 4 / 1e4);
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 200, i;
	int frames = argc > 2 ? atoi(argv[2]) : 400, f, v;
	struct supervisor_snapshot snap = { 0 };
	struct supervisor_event ev[512];
	struct view_state vs[VIEW_COUNT];
	double *empty = calloc((size_t)frames, sizeof *empty);
	double *each[VIEW_COUNT];
	struct ui_model m;
	struct timespec ts;
	SCREEN *scr;
	WINDOW *w;

	setlocale(LC_ALL, "C.UTF-8");
	scr = newterm("xterm-256color", fopen("/dev/null", "w"), fopen("/dev/null", "r"));
	if (!scr || n == 0 || frames < 10)
		return 2;
	resizeterm(30, 100);
	color_init(true);
	w = newwin(27, 100, 1, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	snap.n = snap.cap = n;
	snap.rows = calloc(n, sizeof *snap.rows);
	snap.taken_ms = (int64_t)ts.tv_sec * 1000;
	snap.live = n - n / 10;
	for (i = 0; i < n; i++)
		fill_row(&snap.rows[i], i, snap.taken_ms);
	fill_events(ev, 512, &snap);
	m = (struct ui_model){ .snap = &snap, .events = ev, .n_events = 512, .now_ms = snap.taken_ms,
			       .pending = fill_pending(PENDING_CALLS, &snap),
			       .n_pending = PENDING_CALLS };
	if (!m.pending)
		return 2;
	memset(vs, 0, sizeof vs);
	for (f = 0; f < frames; f++) {
		double t = cpu_us();

		werase(w);
		wnoutrefresh(w);
		doupdate();
		empty[f] = cpu_us() - t;
	}
	printf("render: %zu sessions, 100x30, %d frames per view; the pending view with %d held"
	       " calls\n", n, frames, PENDING_CALLS);
	report("floor: an empty frame", empty, frames);
	for (v = 0; v < VIEW_COUNT; v++) {
		each[v] = calloc((size_t)frames, sizeof *each[v]);
		for (f = 0; f < frames; f++) {
			double t = cpu_us();

			/* The cursor moves: the screen changes (the pending view over its calls). */
			vs[v].selected = (size_t)f % (v == VIEW_PENDING ? PENDING_CALLS : n);
			werase(w);
			views[v]->draw(w, &m, &vs[v]);
			wnoutrefresh(w);
			doupdate();
			each[v][f] = cpu_us() - t;
		}
		report(views[v]->name, each[v], frames);
		/* bench/run: the empty frame is the baseline of every view. */
		printf("sample: render_%s_%zu baseline=%.1f airlock=%.1f unit=us\n", views[v]->name,
		       n, empty[frames / 2], each[v][frames / 2]);
		free(each[v]);
	}
	delwin(w);
	endwin();
	delscreen(scr);
	free(snap.rows);
	free((void *)m.pending);
	free(empty);
	return 0;
}
