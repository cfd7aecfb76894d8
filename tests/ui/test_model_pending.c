/*
 * The console's held-call list (tui/model.c) follows the engines' hold
 * events: a hold event from an engine makes its list asked for again at
 * the next refresh; other events and plain refreshes do not; an engine
 * whose newer answer is on its way (LINK_SENT, a remote link) is asked
 * until it gives it; the safety period lists again without an event. No
 * tool is held in any snapshot here: what makes a call wait is not the
 * model's business. A fake link stands in for the engine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model.h"
#include "quiet_link.h"

struct fake {
	struct link base;
	size_t n_holds;		/* what the engine's board holds now */
	int answer;		/* what pending returns: 0, or LINK_SENT */
	unsigned asked;		/* pending calls */
};

static struct fake *
fake(struct link *l)
{
	return (struct fake *)l;
}

static int
fake_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n, char *why,
	     size_t why_cap)
{
	struct fake *f = fake(l);
	size_t i;

	(void)why, (void)why_cap;
	f->asked++;
	for (i = 0, *n = 0; i < f->n_holds && i < cap; i++, (*n)++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].id = (int64_t)i + 1;
		snprintf(out[i].session, sizeof out[i].session, "s-00000001");
		snprintf(out[i].tool, sizeof out[i].tool, "store");
	}
	return f->answer;
}

static const struct link_ops fake_ops = {
	QUIET_LINK_OPS,
	.pending = fake_pending,
};

static struct model m;
static struct fake engine = { .base = { .ops = &fake_ops } };
static struct link *links[1] = { &engine.base };

static void
event(enum event_kind kind)
{
	struct supervisor_event e = { .kind = kind, .hold = 2 };

	model_add_engine_events(&m, 0, &e, 1);
}

static int
setup(void **state)
{
	(void)state;
	engine.n_holds = 1;
	engine.answer = 0;
	engine.asked = 0;
	return model_init(&m, false);
}

static int
teardown(void **state)
{
	(void)state;
	model_free(&m);
	return 0;
}

/* The first refresh lists what waits already; refreshes without news ask nothing. */
static void
test_first_then_quiet(void **state)
{
	int i;

	(void)state;
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 1);
	assert_int_equal(m.n_pending, 1);
	engine.n_holds = 2;	/* a call began waiting, but no event said so (yet) */
	for (i = 0; i < 20; i++)
		model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 1);
	assert_int_equal(m.n_pending, 1);
}

/* A call began to wait: its event lists again once, and the new call is there. */
static void
test_waiting_event_relists(void **state)
{
	(void)state;
	model_refresh(&m, links, 1);
	engine.n_holds = 2;
	event(SUPERVISOR_EVENT_STATE);	/* not a hold event: nothing to list */
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 1);
	event(SUPERVISOR_EVENT_HOLD_WAITING);
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 2);
	assert_int_equal(m.n_pending, 2);
	assert_int_equal(m.pending[1].id, 2);
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 2);
}

/* A decision lists again: the decided call leaves the list. */
static void
test_decided_event_relists(void **state)
{
	(void)state;
	engine.n_holds = 2;
	model_refresh(&m, links, 1);
	assert_int_equal(m.n_pending, 2);
	engine.n_holds = 0;
	event(SUPERVISOR_EVENT_HOLD_DECIDED);
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 2);
	assert_int_equal(m.n_pending, 0);
}

/* A remote engine's answer on its way (LINK_SENT): asked at each refresh until it gives it. */
static void
test_sent_stays_due(void **state)
{
	(void)state;
	model_refresh(&m, links, 1);
	engine.answer = LINK_SENT;
	event(SUPERVISOR_EVENT_HOLD_WAITING);
	model_refresh(&m, links, 1);
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 3);
	engine.answer = 0;
	engine.n_holds = 2;
	model_refresh(&m, links, 1);
	assert_int_equal(m.n_pending, 2);
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 4);
}

/* No event for MODEL_PENDING_SAFETY_MS (one was lost): listed again all the same. */
static void
test_safety_relist(void **state)
{
	(void)state;
	model_refresh(&m, links, 1);
	engine.n_holds = 3;
	model_refresh(&m, links, 1);
	assert_int_equal(m.n_pending, 1);
	m.pending_ms -= MODEL_PENDING_SAFETY_MS;
	model_refresh(&m, links, 1);
	assert_int_equal(engine.asked, 2);
	assert_int_equal(m.n_pending, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_then_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiting_event_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decided_event_relists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sent_stays_due, setup, teardown),
		cmocka_unit_test_setup_teardown(test_safety_relist, setup, teardown),
	};

	return cmocka_run_group_tests_name("model-pending", tests, NULL, NULL);
}
