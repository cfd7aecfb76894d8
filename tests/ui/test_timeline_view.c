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
#include "util.h"
#include "view.h"
#include "view_screen.h"

/*
 * The timeline view (views/timeline.c) drawn from fixed rows into an
 * off-screen ncurses screen at 80x24 and 50x12, read back as text: each
 * kind reads as its table line says (an unknown one by its word), the
 * author and what a change touched, newest last and followed, the filter,
 * the jumps between operators' changes. Colour is off, as under NO_COLOR.
 */

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

static struct timeline_row rows[12];
static size_t n_rows;

static void
add(const char *time, const char *kind, const char *session, const char *op, const char *tool,
    const char *rule, int64_t rev, const char *user, const char *via, int64_t ap, int64_t na,
    int64_t rj)
{
	struct timeline_row *r = &rows[n_rows++];

	memset(r, 0, sizeof *r);
	r->seq = (int64_t)n_rows;
	snprintf(r->time, sizeof r->time, "2026-12-06T%sZ", time);
	snprintf(r->kind, sizeof r->kind, "%s", kind);
	snprintf(r->session, sizeof r->session, "%s", session);
	snprintf(r->op, sizeof r->op, "%s", op);
	snprintf(r->tool, sizeof r->tool, "%s", tool);
	snprintf(r->rule, sizeof r->rule, "%s", rule);
	r->revision = rev;
	r->normal = strcmp(rule, "agent_eof") == 0;
	r->has_author = user != NULL;
	if (user) {
		snprintf(r->by.user, sizeof r->by.user, "%s", user);
		snprintf(r->by.via, sizeof r->by.via, "%s", via);
	}
	r->applied = ap;
	r->not_applicable = na;
	r->rejected = rj;
}

/* An incident, as audit_timeline reads one (test_audit_story.c's story). */
static void
story(struct ui_model *m)
{
	n_rows = 0;
	add("07:00:01.000001", "session_start", "s-1a2b3c4d5e6f", "", "", "", 0, NULL, NULL, 0, 0, 0);
	add("07:00:02.000001", "admission_refused", "s-9f8e7d6c5b4a", "", "", "read_only_rootfs",
	    0, NULL, NULL, 0, 0, 0);
	add("07:01:10.500000", "policy", "", "revoke", "store", "", 1, "alice", "ctl", 1, 1, 0);
	add("07:01:11.000000", "policy_at_start", "s-77e0b5a91c2d", "revoke", "store", "", 1,
	    "alice", "ctl", 1, 0, 0);
	add("07:02:00.000000", "policy", "", "freeze", "", "", 2, "bob", "console", 2, 0, 1);
	add("07:02:30.000000", "request", "engine", "revoke", "", "revoke refused: view only", 2,
	    "bob", "console", 0, 0, 1);
	add("07:03:00.000000", "request", "engine", "grant", "mail.send", "grant: 2 calls", 3,
	    "alice", "console", 1, 0, 0);
	add("07:03:40.000000", "request", "engine", "grant", "mail.send",
	    "grant lapsed: calls spent", 4, "expiry", "grant", 1, 0, 0);
	add("07:04:00.000000", "session_end", "s-1a2b3c4d5e6f", "", "", "agent_eof", 4, NULL, NULL,
	    0, 0, 0);
	add("07:04:05.000000", "held_call", "s-77e0b5a91c2d", "", "fetch", "held", 4, NULL, NULL,
	    0, 0, 0);
	memset(m, 0, sizeof *m);
	m->timeline = rows;
	m->n_timeline = n_rows;
}

static void
test_80x24(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	WINDOW *w;

	(void)state;
	story(&m);
	w = view_screen_draw(VIEW_TIMELINE, 24, 80, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(view_screen_find(w, "Timeline", "10 events", "following"), 0);
	assert_int_equal(view_screen_find(w, "TIME", "KIND", "WHAT"), 1);
	assert_int_equal(view_screen_find(w, "07:00:01", "start", "1a2b3c4d"), 2);
	assert_int_equal(view_screen_find(w, "refused", "read_only_rootfs", NULL), 3);
	assert_int_equal(view_screen_find(w, "revoke", "alice via ctl", "store r1: 1 applied, 1 n/a"), 4);
	assert_int_equal(view_screen_find(w, "revoke at start", "store r1", "applied"), 5);
	assert_int_equal(view_screen_find(w, "freeze", "bob via console", "r2: 2 applied, 1 rejected"), 6);
	assert_int_equal(view_screen_find(w, "revoke", "bob via console", "revoke refused: view only"), 7);
	assert_int_equal(view_screen_find(w, "grant", "alice via console", "grant: 2 calls"), 8);
	assert_int_equal(view_screen_find(w, "expiry via grant", "grant lapsed: calls spent", NULL), 9);
	assert_int_equal(view_screen_find(w, "end", "normal: agent_eof", NULL), 10);
	/* A kind this console's table lacks: listed by its word, the newest, selected. */
	assert_int_equal(view_screen_find(w, "held_call", "fetch held", NULL), 11);
	assert_int_equal(vs.selected, 9);
	delwin(w);
}

/*
 * Narrow: every event still one line, TIME, KIND and WHAT kept, the BY
 * column dropped first (the filter still finds an author); the newest
 * followed; nothing past the edge.
 */
static void
test_50x12(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	char line[2048];
	WINDOW *w;

	(void)state;
	story(&m);
	w = view_screen_draw(VIEW_TIMELINE, 12, 50, &m, &vs);
	view_screen_dump(w);
	assert_int_equal(view_screen_find(w, "Timeline", "10 events", "following"), 0);
	assert_int_equal(view_screen_find(w, "TIME", "KIND", "WHAT"), 1);
	assert_int_equal(view_screen_find(w, "BY", NULL, NULL), -1);
	assert_int_equal(view_screen_find(w, "alice", NULL, NULL), -1);
	assert_int_equal(view_screen_find(w, "07:01:10", "revoke", "store r1: 1 applied"), 4);
	assert_int_equal(view_screen_find(w, "07:03:40", "grant", "grant lapsed"), 9);
	assert_int_equal(view_screen_find(w, "held_call", NULL, NULL), 11);
	assert_int_equal(vs.selected, 9);
	for (int y = 0; y < 12; y++) {
		view_screen_line(w, y, line, sizeof line);
		assert_true(mbstowcs(NULL, line, 0) <= 50);
	}
	delwin(w);
	/* Fewer lines than events: the newest shown, the oldest scrolled off. */
	w = view_screen_draw(VIEW_TIMELINE, 8, 50, &m, &vs);
	assert_int_equal(view_screen_find(w, "held_call", NULL, NULL), 7);
	assert_int_equal(view_screen_find(w, "07:00:01", NULL, NULL), -1);
	delwin(w);
}

/* The filter: an author's changes only; the title counts them. */
static void
test_filter(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	WINDOW *w;

	(void)state;
	story(&m);
	snprintf(vs.filter, sizeof vs.filter, "alice");
	w = view_screen_draw(VIEW_TIMELINE, 24, 80, &m, &vs);
	assert_int_equal(view_screen_find(w, "3 of 10", "filter: alice", NULL), 0);
	assert_int_equal(views[VIEW_TIMELINE]->rows(&m, &vs), 3);
	assert_int_equal(view_screen_find(w, "bob", NULL, NULL), -1);
	delwin(w);
	snprintf(vs.filter, sizeof vs.filter, "nobody");
	w = view_screen_draw(VIEW_TIMELINE, 24, 80, &m, &vs);
	assert_true(view_screen_find(w, "no event matches \"nobody\"", NULL, NULL) > 0);
	delwin(w);
}

/* [ and ]: the operators' changes only (not the engine's lapse), and no further than the ends. */
static void
test_jumps(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m;
	bool seen_first = false;

	(void)state;
	story(&m);
	vs.selected = 9;
	vs.selected = views[VIEW_TIMELINE]->jump(&m, &vs, false);
	assert_int_equal(vs.selected, 6);	/* alice's grant; the expiry's lapse skipped */
	vs.selected = views[VIEW_TIMELINE]->jump(&m, &vs, false);
	assert_int_equal(vs.selected, 5);
	while (vs.selected > 2) {
		vs.selected = views[VIEW_TIMELINE]->jump(&m, &vs, false);
		seen_first |= vs.selected == 2;
	}
	assert_true(seen_first);
	assert_int_equal(views[VIEW_TIMELINE]->jump(&m, &vs, false), 2);	/* none before */
	assert_int_equal(views[VIEW_TIMELINE]->jump(&m, &vs, true), 3);
	vs.selected = 6;
	assert_int_equal(views[VIEW_TIMELINE]->jump(&m, &vs, true), 6);	/* none after */
}

static void
test_empty_and_unreadable(void **state)
{
	struct view_state vs = { 0 };
	struct ui_model m = { 0 };
	WINDOW *w;

	(void)state;
	w = view_screen_draw(VIEW_TIMELINE, 6, 80, &m, &vs);
	assert_true(view_screen_find(w, "no policy events yet", NULL, NULL) > 0);
	delwin(w);
	m.timeline_error = "audit timeline: cannot read entries";
	w = view_screen_draw(VIEW_TIMELINE, 6, 80, &m, &vs);
	assert_int_equal(view_screen_find(w, "not following: the log cannot be read", NULL, NULL), 0);
	assert_true(view_screen_find(w, "the audit log cannot be read: audit timeline: cannot read entries",
			 NULL, NULL) > 0);
	delwin(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_80x24),
		cmocka_unit_test(test_50x12),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_jumps),
		cmocka_unit_test(test_empty_and_unreadable),
	};

	return cmocka_run_group_tests_name("timeline-view", tests, view_screen_open, view_screen_close);
}
