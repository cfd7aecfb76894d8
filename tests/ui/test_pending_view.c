#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <curses.h>

#include "color.h"
#include "pending.h"
#include "util.h"
#include "view.h"
#include "view_screen.h"

/*
 * The pending view (views/pending.c) drawn from fixed held calls into an
 * off-screen ncurses screen at 80x24 and 50x12, read back as text: each
 * call's id, session, tool and alias, class and sink, size, hash prefix,
 * age and earlier calls; oldest first; the cursor kept on its call by id
 * while others come and go; the filter; the engine column with several;
 * 1,000 calls (the console's own bound is past the engine's 64); and its
 * pure formatters. Colour is off, as under NO_COLOR.
 */

#define N_OF(a) (sizeof (a) / sizeof (a)[0])
#define NOW_MS	1796540400000LL		/* 2026-12-06 07:00:00 UTC */
#define MANY	1000

static struct hold_view calls[MANY];
static const char engine_names[2][SNAP_ENGINE_MAX] = { "prod", "lab" };

static struct hold_view *
add(struct ui_model *m, int64_t id, const char *session, const char *tool, const char *alias,
    int64_t waited_s, int64_t earlier)
{
	struct hold_view *h = &calls[m->n_pending++];

	memset(h, 0, sizeof *h);
	h->id = id;
	snprintf(h->session, sizeof h->session, "%s", session);
	snprintf(h->tool, sizeof h->tool, "%s", tool);
	snprintf(h->alias, sizeof h->alias, "%s", alias);
	snprintf(h->session_class, sizeof h->session_class, "confidential");
	snprintf(h->sink_ceiling, sizeof h->sink_ceiling, "public");
	h->request_bytes = 1536;
	snprintf(h->request_hash, sizeof h->request_hash, "9e41b7c2d8a4f6e1%048llx",
		 (unsigned long long)id);
	h->since_ms = NOW_MS - waited_s * 1000;
	h->waited_ms = waited_s * 1000 - 100;
	h->earlier_calls = earlier;
	return h;
}

/* Three calls held on one engine, the oldest first (as the model orders them). */
static void
three(struct ui_model *m)
{
	memset(m, 0, sizeof *m);
	m->pending = calls;
	m->now_ms = NOW_MS;
	m->n_engines = 1;
	m->engine_names = engine_names;
	add(m, 7, "s-3f9a1c02d8e4b6a1", "fs.write", "save", 42, 3);
	add(m, 8, "s-77e0b5a91c2d4e6f", "mail.send", "notify", 9, 0);
	add(m, 11, "s-3f9a1c02d8e4b6a1", "fs.write", "save", 2, 4);
}

static void
redraw(WINDOW *w, const struct ui_model *m, struct view_state *vs)
{
	werase(w);
	views[VIEW_PENDING]->draw(w, m, vs);
}

/* Every column at 80 wide, oldest first, the first call selected; no line past the edge. */
static void
test_80x24(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	char line[2048];
	WINDOW *w;

	(void)state;
	three(&m);
	w = view_screen_draw(VIEW_PENDING, 24, 80, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(view_screen_find(w, "Pending", "3 waiting", "oldest 42.0s"), 0);
	assert_int_equal(view_screen_find(w, "ID", "SESSION", "TOOL"), 1);
	assert_int_equal(view_screen_find(w, "ALIAS", "CLASS>SINK", "AGE"), 1);
	assert_int_equal(view_screen_find(w, "REQUEST", "EARLIER", "SIZE"), 1);
	assert_int_equal(view_screen_find(w, "7 3f9a1c02 fs.write", "save", "confidential→public"), 2);
	assert_int_equal(view_screen_find(w, "1.5K", "9e41b7c2", "42.0s"), 2);
	assert_int_equal(view_screen_find(w, "8 77e0b5a9 mail.send", "notify", "9.00s"), 3);
	assert_int_equal(view_screen_find(w, "11 3f9a1c02 fs.write", "2.00s", NULL), 4);
	assert_int_equal(view_screen_find(w, "▶", "7 3f9a1c02", NULL), 2);
	/* A prefix of the hash: 8 digits, never the whole. */
	assert_int_equal(view_screen_find(w, "9e41b7c2d", NULL, NULL), -1);
	assert_int_equal(vs.selected, 0);
	for (int y = 0; y < 24; y++) {
		view_screen_line(w, y, line, sizeof line);
		assert_true(mbstowcs(NULL, line, 0) <= 80);
	}
	delwin(w);
}

/* Narrow: id, session, tool and the wait kept; the hash and alias dropped first. */
static void
test_50x12(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	char line[2048];
	WINDOW *w;

	(void)state;
	three(&m);
	w = view_screen_draw(VIEW_PENDING, 12, 50, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(view_screen_find(w, "Pending", "3 waiting", NULL), 0);
	assert_int_equal(view_screen_find(w, "ID", "SESSION", "AGE"), 1);
	assert_int_equal(view_screen_find(w, "REQUEST", NULL, NULL), -1);
	assert_int_equal(view_screen_find(w, "7 3f9a1c02 fs.write", "42.0s", NULL), 2);
	assert_int_equal(view_screen_find(w, "8 77e0b5a9 mail.send", "9.00s", NULL), 3);
	assert_int_equal(view_screen_find(w, "11 3f9a1c02 fs.write", "2.00s", NULL), 4);
	for (int y = 0; y < 12; y++) {
		view_screen_line(w, y, line, sizeof line);
		assert_true(mbstowcs(NULL, line, 0) <= 50);
	}
	delwin(w);
}

/*
 * The cursor stays on its call: an older one decided and gone, a newer
 * one come, it is still on hold 8; moved by the operator, it keeps the
 * call it was moved to; its call gone, the one that took its place.
 */
static void
test_selection_kept_by_id(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	unsigned e = 9;
	WINDOW *w;

	(void)state;
	three(&m);
	w = view_screen_draw(VIEW_PENDING, 24, 80, &m, &vs);
	vs.selected = 1;	/* the operator moves to hold 8 */
	redraw(w, &m, &vs);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, vs.selected, &e), 8);
	assert_int_equal(e, 0);
	/* Hold 7 approved: gone. Hold 12 begins to wait. */
	memmove(calls, calls + 1, 2 * sizeof calls[0]);
	m.n_pending = 2;
	add(&m, 12, "s-77e0b5a91c2d4e6f", "mail.send", "notify", 1, 1);
	redraw(w, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(vs.selected, 0);
	assert_int_equal(view_screen_find(w, "▶", "8 77e0b5a9 mail.send", NULL), 2);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, vs.selected, &e), 8);
	/* Hold 8 denied: the cursor on what took its place, hold 11. */
	memmove(calls, calls + 1, 2 * sizeof calls[0]);
	m.n_pending = 2;
	redraw(w, &m, &vs);
	assert_int_equal(view_screen_find(w, "▶", "11 3f9a1c02", NULL), 2);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, vs.selected, &e), 11);
	delwin(w);
}

/* The session and tool of a held call: what r, R and X act on from here. */
static void
test_target(void **state)
{
	struct view_state vs = { 0 };
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];
	struct ui_model m;
	unsigned e;

	(void)state;
	three(&m);
	views[VIEW_PENDING]->target(&m, &vs, 1, session, tool);
	assert_string_equal(session, "s-77e0b5a91c2d4e6f");
	assert_string_equal(tool, "mail.send");
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, 3, &e), 0);
	m.n_pending = 0;
	views[VIEW_PENDING]->target(&m, &vs, 0, session, tool);
	assert_string_equal(session, "");
	assert_int_equal(views[VIEW_PENDING]->rows(&m, &vs), 0);
}

/* / finds a session, a tool or an alias; what matches nothing says so. */
static void
test_filter(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	unsigned e;
	WINDOW *w;

	(void)state;
	three(&m);
	snprintf(vs.filter, sizeof vs.filter, "NOTIFY");
	assert_int_equal(views[VIEW_PENDING]->rows(&m, &vs), 1);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, 0, &e), 8);
	w = view_screen_draw(VIEW_PENDING, 24, 80, &m, &vs);
	assert_int_equal(view_screen_find(w, "1 of 3 waiting", "filter: NOTIFY", NULL), 0);
	snprintf(vs.filter, sizeof vs.filter, "3f9a1c02");
	assert_int_equal(views[VIEW_PENDING]->rows(&m, &vs), 2);
	snprintf(vs.filter, sizeof vs.filter, "nothing");
	redraw(w, &m, &vs);
	assert_true(view_screen_find(w, "no held call matches \"nothing\"", NULL, NULL) > 0);
	delwin(w);
}

/* None waiting, and an engine whose list cannot be read: each said, in words. */
static void
test_empty_and_unreadable(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	WINDOW *w;

	(void)state;
	three(&m);
	m.n_pending = 0;
	w = view_screen_draw(VIEW_PENDING, 24, 80, &m, &vs);
	assert_int_equal(view_screen_find(w, "Pending", "0 waiting", NULL), 0);
	assert_int_equal(view_screen_find(w, "no call is waiting for an operator", NULL, NULL), 2);
	m.pending_error = "engine lab: not connected";
	redraw(w, &m, &vs);
	assert_int_equal(view_screen_find(w, "an engine's list cannot be read", NULL, NULL), 0);
	assert_int_equal(view_screen_find(w, "the held calls cannot be listed: engine lab: not connected",
			      NULL, NULL), 2);
	delwin(w);
}

/* Two engines: an ENGINE column names each call's, and the held hook says which. */
static void
test_two_engines(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	unsigned e = 0;
	WINDOW *w;

	(void)state;
	three(&m);
	m.n_engines = 2;
	calls[1].engine = 1;
	w = view_screen_draw(VIEW_PENDING, 24, 100, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(view_screen_find(w, "ID", "ENGINE", "SESSION"), 1);
	assert_int_equal(view_screen_find(w, "7 prod", "3f9a1c02", NULL), 2);
	assert_int_equal(view_screen_find(w, "8 lab", "77e0b5a9", NULL), 3);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, 1, &e), 8);
	assert_int_equal(e, 1);
	delwin(w);
}

/* 1,000 held calls: every one a row, the last reachable and drawn, scrolled to. */
static void
test_thousand(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	char sid[SNAP_ID_MAX];
	unsigned e;
	WINDOW *w;

	(void)state;
	memset(&m, 0, sizeof m);
	m.pending = calls;
	m.now_ms = NOW_MS;
	for (int i = 0; i < MANY; i++) {
		snprintf(sid, sizeof sid, "s-%08xabcdef01", 0x10000000u + (unsigned)i % 500);
		add(&m, i + 1, sid, "fs.write", "save", MANY - i, i / 500);
	}
	assert_int_equal(views[VIEW_PENDING]->rows(&m, &vs), MANY);
	vs.selected = MANY - 1;
	w = view_screen_draw(VIEW_PENDING, 24, 80, &m, &vs);
	assert_int_equal(view_screen_find(w, "1000 waiting", NULL, NULL), 0);
	assert_int_equal(view_screen_find(w, "▶", "1000 100001f3", NULL), 23);
	assert_int_equal(views[VIEW_PENDING]->held(&m, &vs, vs.selected, &e), MANY);
	delwin(w);
}

static void
test_formats(void **state)
{
	struct hold_view h = { 0 };
	char buf[DRAW_FMT_MAX];

	(void)state;
	snprintf(h.session_class, sizeof h.session_class, "internal");
	snprintf(h.sink_ceiling, sizeof h.sink_ceiling, "public");
	assert_string_equal(pending_fmt_flow(buf, &h, false), "internal→public");
	assert_string_equal(pending_fmt_flow(buf, &h, true), "internal>public");
	h.sink_ceiling[0] = '\0';
	assert_string_equal(pending_fmt_flow(buf, &h, true), "internal>?");
	/* held by a class flow: marked; one whose approval declassifies: said */
	snprintf(h.held_by, sizeof h.held_by, "flow");
	assert_string_equal(pending_fmt_flow(buf, &h, true), "internal>? flow");
	snprintf(h.sink_ceiling, sizeof h.sink_ceiling, "public");
	h.declassify = true;
	assert_string_equal(pending_fmt_flow(buf, &h, false), "internal→public declassify");
	snprintf(h.held_by, sizeof h.held_by, "tool");
	h.declassify = false;
	assert_string_equal(pending_fmt_flow(buf, &h, true), "internal>public");
	h.sink_ceiling[0] = '\0';
	assert_string_equal(pending_fmt_hash(buf, &h), "-");
	memset(h.request_hash, 'a', SNAP_HASH_MAX - 1);
	assert_string_equal(pending_fmt_hash(buf, &h), "aaaaaaaa");
	/* Our clock: since it began. Behind the engine's: what the engine counted. */
	h.since_ms = NOW_MS - 5000;
	h.waited_ms = 4900;
	assert_int_equal(pending_age_ms(&h, NOW_MS), 5000);
	assert_int_equal(pending_age_ms(&h, NOW_MS - 60000), 4900);
	h.since_ms = 0;
	h.waited_ms = 0;
	assert_int_equal(pending_age_ms(&h, NOW_MS), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_80x24),
		cmocka_unit_test(test_50x12),
		cmocka_unit_test(test_selection_kept_by_id),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_empty_and_unreadable),
		cmocka_unit_test(test_two_engines),
		cmocka_unit_test(test_thousand),
		cmocka_unit_test(test_formats),
	};

	return cmocka_run_group_tests_name("pending-view", tests, view_screen_open, view_screen_close);
}
