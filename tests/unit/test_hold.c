#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "grant.h"
#include "hold.h"

/*
 * The board of held calls (hold.h) with plain numbers: ids never reused,
 * a bounded table, one decision a call, timeouts, the engine's stop, and
 * approvals for the rest of a session. Then the gate's third state
 * (gate.h): held, on one thread.
 */

static const struct snap_author alice = { .uid = 1001, .user = "alice", .via = "ctl" };

static struct hold_view
call_of(const char *session, const char *tool)
{
	struct hold_view v = { .id = 99, .request_bytes = 17, .earlier_calls = 2 };

	snprintf(v.session, sizeof v.session, "%s", session);
	snprintf(v.tool, sizeof v.tool, "%s", tool);
	snprintf(v.alias, sizeof v.alias, "save");
	snprintf(v.request_hash, sizeof v.request_hash, "%064d", 0);
	return v;
}

static void
test_ids_and_list(void **state)
{
	static struct hold_board b;
	struct hold_view v = call_of("s-1", "store"), out[4];
	int64_t a, c;

	(void)state;
	memset(&b, 0, sizeof b);
	a = hold_add(&b, &v, 1000);
	c = hold_add(&b, &v, 1500);
	assert_int_equal(a, 1);	/* the caller's id is not kept: the board names it */
	assert_int_equal(c, 2);
	assert_int_equal(hold_list(&b, 2000, out, 4), 2);
	assert_int_equal(out[0].id, 1);
	assert_int_equal(out[0].waited_ms, 1000);
	assert_int_equal(out[1].waited_ms, 500);
	assert_int_equal(out[1].request_bytes, 17);
	assert_string_equal(out[1].alias, "save");
	/* Taken and re-added: a new id, never the old one, and the list oldest id first. */
	assert_int_equal(hold_take(&b, a, NULL), 0);
	assert_int_equal(hold_take(&b, a, NULL), -1);
	assert_null(hold_find(&b, a));
	assert_int_equal(hold_add(&b, &v, 2000), 3);	/* lands in the freed entry */
	assert_int_equal(hold_list(&b, 2000, out, 4), 2);
	assert_int_equal(out[0].id, 2);
	assert_int_equal(out[1].id, 3);
	assert_int_equal(hold_list(&b, 2000, out, 1), 1);
	assert_null(hold_find(&b, 0));
	assert_null(hold_find(&b, -3));
}

static void
test_bounded(void **state)
{
	static struct hold_board b;
	struct hold_view v = call_of("s-1", "store");
	int i;

	(void)state;
	memset(&b, 0, sizeof b);
	for (i = 0; i < HOLD_MAX; i++)
		assert_int_equal(hold_add(&b, &v, 0), i + 1);
	assert_int_equal(hold_add(&b, &v, 0), 0);	/* full: the caller denies the call */
	assert_int_equal(hold_take(&b, 10, NULL), 0);
	assert_int_equal(hold_add(&b, &v, 0), HOLD_MAX + 1);
}

static void
test_decide_once(void **state)
{
	static struct hold_board b;
	struct hold_view v = call_of("s-1", "store"), out[2];
	struct hold_entry e;
	int64_t a;

	(void)state;
	memset(&b, 0, sizeof b);
	a = hold_add(&b, &v, 100);
	assert_int_equal(hold_decide(&b, a + 1, HOLD_APPROVED, false, &alice, 200), -1);
	assert_int_equal(hold_decide(&b, a, HOLD_WAITING, false, &alice, 200), -1);
	assert_int_equal(hold_decide(&b, a, HOLD_DENIED, true, &alice, 200), -1);	/* rest: approve only */
	assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, false, &alice, 300), 0);
	/* Settled: a second decision, or the timeout, changes nothing. */
	assert_int_equal(hold_decide(&b, a, HOLD_DENIED, false, &alice, 400), -1);
	assert_int_equal(hold_expire(&b, 1000000, 1000, NULL), 0);
	assert_int_equal(hold_settle_all(&b, NULL, HOLD_STOPPED, NULL, 500), 0);
	assert_int_equal(hold_list(&b, 500, out, 2), 0);	/* no longer pending */
	assert_int_equal(hold_take(&b, a, &e), 0);
	assert_int_equal(e.outcome, HOLD_APPROVED);
	assert_int_equal(e.decided_ms - e.start_ms, 200);
	assert_string_equal(e.by.user, "alice");
	assert_false(e.rest);
	assert_false(hold_waived(&b, "s-1", "store"));
}

static void
test_expire(void **state)
{
	static struct hold_board b;
	struct hold_view v = call_of("s-1", "store");
	int64_t a, c, next = INT64_MAX;

	(void)state;
	memset(&b, 0, sizeof b);
	a = hold_add(&b, &v, 1000);
	c = hold_add(&b, &v, 4000);
	assert_int_equal(hold_expire(&b, 5999, 5000, &next), 0);
	assert_int_equal(next, 6000);
	next = INT64_MAX;
	assert_int_equal(hold_expire(&b, 6000, 5000, &next), 1);
	assert_int_equal(next, 9000);
	assert_int_equal(hold_find(&b, a)->outcome, HOLD_TIMED_OUT);
	assert_string_equal(hold_find(&b, a)->by.user, "expiry");
	assert_int_equal(hold_find(&b, c)->outcome, HOLD_WAITING);
	next = INT64_MAX;
	assert_int_equal(hold_expire(&b, 9000, 5000, &next), 1);
	assert_int_equal(next, INT64_MAX);
}

static void
test_settle_all(void **state)
{
	static struct hold_board b;
	struct hold_view v1 = call_of("s-1", "store"), v2 = call_of("s-2", "store");
	static const struct snap_author engine = { .user = "engine", .via = "stop" };
	int64_t a, c, d;

	(void)state;
	memset(&b, 0, sizeof b);
	a = hold_add(&b, &v1, 0);
	c = hold_add(&b, &v2, 0);
	d = hold_add(&b, &v2, 0);
	assert_int_equal(hold_decide(&b, d, HOLD_DENIED, false, &alice, 1), 0);
	assert_int_equal(hold_settle_all(&b, "s-1", HOLD_STOPPED, &engine, 2), 1);
	assert_int_equal(hold_find(&b, a)->outcome, HOLD_STOPPED);
	assert_int_equal(hold_find(&b, c)->outcome, HOLD_WAITING);
	assert_int_equal(hold_settle_all(&b, NULL, HOLD_STOPPED, &engine, 3), 1);
	assert_int_equal(hold_find(&b, c)->outcome, HOLD_STOPPED);
	assert_string_equal(hold_find(&b, c)->by.user, "engine");
	assert_int_equal(hold_find(&b, d)->outcome, HOLD_DENIED);	/* decided before */
}

static void
test_rest_of_session(void **state)
{
	static struct hold_board b;
	struct hold_view v = call_of("s-1", "store");
	char session[16];
	int64_t a;
	int i;

	(void)state;
	memset(&b, 0, sizeof b);
	a = hold_add(&b, &v, 0);
	assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, true, &alice, 5), 0);
	assert_true(hold_find(&b, a)->rest);
	assert_true(hold_waived(&b, "s-1", "store"));
	assert_false(hold_waived(&b, "s-1", "mail"));
	assert_false(hold_waived(&b, "s-2", "store"));
	/* Held again: approved call by call again; only that tool's waiver goes. */
	snprintf(v.tool, sizeof v.tool, "mail");
	a = hold_add(&b, &v, 0);
	assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, true, &alice, 5), 0);
	hold_unwaive(&b, "s-1", "store");
	assert_false(hold_waived(&b, "s-1", "store"));
	assert_true(hold_waived(&b, "s-1", "mail"));
	hold_forget(&b, "s-1");
	assert_false(hold_waived(&b, "s-1", "mail"));
	/* The waivers are bounded: past them, an approve for the session is refused whole. */
	for (i = 0; i < HOLD_WAIVERS_MAX; i++) {
		snprintf(session, sizeof session, "s-%d", i);
		snprintf(v.session, sizeof v.session, "%s", session);
		a = hold_add(&b, &v, 0);
		assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, true, &alice, 5), 0);
		hold_take(&b, a, NULL);
	}
	snprintf(v.session, sizeof v.session, "s-last");
	a = hold_add(&b, &v, 0);
	assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, true, &alice, 5), -1);
	assert_int_equal(hold_find(&b, a)->outcome, HOLD_WAITING);
	assert_int_equal(hold_decide(&b, a, HOLD_APPROVED, false, &alice, 5), 0);
}

static void
test_texts(void **state)
{
	(void)state;
	assert_string_equal(hold_outcome_text(HOLD_APPROVED), "approved");
	assert_string_equal(hold_outcome_text(HOLD_DENIED), "denied");
	assert_string_equal(hold_outcome_text(HOLD_TIMED_OUT), "timed out");
	assert_string_equal(hold_outcome_text(HOLD_STOPPED), "engine stop");
	assert_string_equal(hold_outcome_text(HOLD_LIFTED), "lifted");
}

/* ---- the gate's third state ---- */

enum { READ, STORE, MAIL, SHELL, N_TOOLS };
/* shell is in the catalog but not approved for the session */
static const bool approved[N_TOOLS] = { true, true, true, false };

static int
setup(void **state)
{
	struct gate *g = gate_new(approved, N_TOOLS);

	*state = g;
	return g ? 0 : -1;
}

static int
teardown(void **state)
{
	gate_free(*state);
	return 0;
}

static struct gate_state
state_of(struct gate *g)
{
	struct gate_state st;

	gate_state(g, &st);
	return st;
}

/* One call to tool; an admitted call is ended at once. */
static enum policy_rule
call(struct gate *g, int tool, int64_t *revision)
{
	enum policy_rule r = gate_begin(g, tool, revision);

	if (r == RULE_ALLOWED)
		gate_end(g);
	return r;
}

/* A meter over a grant table (grant.h) as the supervisor keeps one: store's calls metered. */
struct meter_fixture {
	struct grant_table t;
	uint64_t serial;
	int spent_calls;
};

static enum gate_meter_answer
fixture_spend(void *ctx, int tool)
{
	struct meter_fixture *f = ctx;

	return tool == STORE ? grant_meter_answer(grant_spend(&f->t, f->serial)) : GATE_METER_FREE;
}

static void
fixture_spent(void *ctx, int tool)
{
	struct meter_fixture *f = ctx;

	(void)tool;
	f->spent_calls++;
}

/*
 * The third state: a held tool answers hold_denied without entering the
 * in-flight state (so a revoke posted meanwhile applies at once, acked
 * from this thread), an approved call re-enters waived, revoked and
 * frozen still deny it, restore lifts the hold and revoke revokes it.
 */
static void
test_held(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	int64_t rev = -1;

	gate_post_hold(g, 1, STORE);
	st = state_of(g);
	assert_true(st.allowed[STORE]);
	assert_true(st.held[STORE]);
	assert_false(st.held[READ]);
	assert_int_equal(call(g, STORE, &rev), RULE_HOLD_DENIED);
	assert_int_equal(rev, 1);
	assert_false(state_of(g).busy);
	assert_int_equal(gate_peek(g, STORE), RULE_HOLD_DENIED);
	assert_int_equal(call(g, READ, &rev), RULE_ALLOWED);
	/* The approved call: in flight like any allowed one. */
	assert_int_equal(gate_begin_waived(g, STORE, &rev), RULE_ALLOWED);
	assert_true(state_of(g).busy);
	gate_end(g);
	/* A held call waiting keeps nothing busy: a freeze applies at once. */
	gate_post_freeze(g, 2, true);
	assert_true(state_of(g).frozen);
	assert_int_equal(state_of(g).pending, 0);
	assert_int_equal(gate_peek(g, STORE), RULE_FROZEN);
	assert_int_equal(gate_begin_waived(g, STORE, &rev), RULE_FROZEN);
	gate_post_freeze(g, 3, false);
	gate_post(g, 4, STORE, false);
	assert_false(state_of(g).held[STORE]);
	assert_int_equal(gate_peek(g, STORE), RULE_REVOKED);
	assert_int_equal(gate_begin_waived(g, STORE, &rev), RULE_REVOKED);
	gate_post_hold(g, 5, STORE);
	assert_int_equal(call(g, STORE, &rev), RULE_HOLD_DENIED);
	gate_post(g, 6, STORE, true);	/* restore lifts it */
	assert_false(state_of(g).held[STORE]);
	assert_int_equal(call(g, STORE, &rev), RULE_ALLOWED);
	/* Not approved: a hold changes nothing, and a standing hold too. */
	gate_post_hold(g, 7, SHELL);
	assert_int_equal(call(g, SHELL, &rev), RULE_REVOKED);
	gate_set_held(g, SHELL, 7);
	assert_false(state_of(g).held[SHELL]);
	gate_set_held(g, MAIL, 9);
	assert_int_equal(call(g, MAIL, &rev), RULE_HOLD_DENIED);
	assert_int_equal(rev, 9);	/* the engine's revision, as a standing revoke's */
}

/* A held call spends no grant's budget until it re-enters approved. */
static void
test_held_meter(void **state)
{
	struct gate *g = *state;
	struct meter_fixture f = { .spent_calls = 0 };
	struct gate_meter m = { fixture_spend, fixture_spent, &f };
	int64_t rev = -1;

	f.serial = grant_set(&f.t, "store", true, 0, 0, 1, 1);
	gate_set_meter(g, &m);
	gate_post_hold(g, 1, STORE);
	assert_int_equal(call(g, STORE, &rev), RULE_HOLD_DENIED);
	assert_int_equal(call(g, STORE, &rev), RULE_HOLD_DENIED);
	assert_int_equal(grant_find(&f.t, f.serial)->calls_left, 1);
	assert_int_equal(gate_begin_waived(g, STORE, &rev), RULE_ALLOWED);
	gate_end(g);
	assert_int_equal(f.spent_calls, 1);
	assert_int_equal(gate_begin_waived(g, STORE, &rev), RULE_REVOKED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_and_list),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_decide_once),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_settle_all),
		cmocka_unit_test(test_rest_of_session),
		cmocka_unit_test(test_texts),
		cmocka_unit_test_setup_teardown(test_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_meter, setup, teardown),
	};

	return cmocka_run_group_tests_name("hold", tests, NULL, NULL);
}
