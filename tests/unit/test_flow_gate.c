#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "gate.h"
#include "policy.h"

/*
 * Class flow holds in the gate (issue 43, item 1) with plain data: a
 * posted (class, sink) pair holds the calls of that flow without making
 * the gate busy, in revision order with the tool deltas; an approved call
 * re-enters waived and learns its flow is still held; a restore lifts it;
 * a stale revision closes admission; a denied flow is held only with the
 * declassification opt-in; one flow past GATE_FLOWS_MAX fails closed.
 */

enum { READ, STORE, N_TOOLS };
enum { PUBLIC, PII, CONFIDENTIAL, RESTRICTED };

struct acks {
	struct gate_delta d[8];
	struct gate_ack a[8];
	size_t n;
};

static void
on_ack(void *ctx, const struct gate_delta *d, const struct gate_ack *a)
{
	struct acks *k = ctx;

	if (k->n < 8) {
		k->d[k->n] = *d;
		k->a[k->n++] = *a;
	}
}

static struct acks acks;

static int
setup(void **state)
{
	const bool approved[N_TOOLS] = { true, true };
	struct gate *g = gate_new(approved, N_TOOLS);

	memset(&acks, 0, sizeof acks);
	if (g)
		gate_set_ack(g, on_ack, &acks);
	*state = g;
	return g ? 0 : -1;
}

static int
teardown(void **state)
{
	gate_free(*state);
	return 0;
}

/* One call of tool with flow cls > sink: the gate's answer; *held what held it. */
static enum policy_rule
call(struct gate *g, int tool, int cls, int sink, bool waive, unsigned *held)
{
	struct gate_flow f = { cls, sink };
	int64_t rev;
	enum policy_rule r = gate_begin_flow(g, tool, &f, waive, &rev, held);

	if (r == RULE_ALLOWED)
		gate_end(g);
	return r;
}

/* A held allowed flow: its calls are answered hold_denied, the gate not busy; others pass. */
static void
test_hold_allowed_flow(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	unsigned held = 0;

	gate_post_flow(g, 1, PII, CONFIDENTIAL, true);
	assert_int_equal(acks.n, 1);
	assert_int_equal(acks.a[0].verdict, GATE_APPLIED);
	assert_int_equal(acks.d[0].kind, GATE_DELTA_FLOW);
	assert_int_equal(call(g, STORE, PII, CONFIDENTIAL, false, &held), RULE_HOLD_DENIED);
	assert_int_equal(held, GATE_HELD_FLOW);
	gate_state(g, &st);
	assert_false(st.busy);
	assert_int_equal(st.n_flows, 1);
	assert_int_equal(st.flows[0].cls, PII);
	assert_int_equal(st.flows[0].sink, CONFIDENTIAL);
	/* another flow, and no flow at all, pass */
	assert_int_equal(call(g, STORE, PUBLIC, CONFIDENTIAL, false, &held), RULE_ALLOWED);
	assert_int_equal(held, 0);
	assert_int_equal(gate_begin(g, STORE, NULL), RULE_ALLOWED);
	gate_end(g);
	/* peek says the same, without entering */
	assert_int_equal(gate_peek_flow(g, READ, &(struct gate_flow){ PII, CONFIDENTIAL }, &held),
			 RULE_HOLD_DENIED);
	gate_state(g, &st);
	assert_false(st.busy);
}

/* An approved call re-enters waived: allowed, busy until gate_end, told its flow is held. */
static void
test_waived_reentry(void **state)
{
	struct gate *g = *state;
	struct gate_flow f = { PII, PII };
	struct gate_state st;
	unsigned held = 0;
	int64_t rev = 0;

	gate_post_flow(g, 3, PII, PII, true);
	assert_int_equal(call(g, READ, PII, PII, false, &held), RULE_HOLD_DENIED);
	assert_int_equal(gate_begin_flow(g, READ, &f, true, &rev, &held), RULE_ALLOWED);
	assert_int_equal(held, GATE_HELD_FLOW);
	assert_int_equal(rev, 3);
	gate_state(g, &st);
	assert_true(st.busy);
	gate_end(g);
	/* a tool hold and a flow hold: both named */
	gate_post_hold(g, 4, READ);
	assert_int_equal(call(g, READ, PII, PII, false, &held), RULE_HOLD_DENIED);
	assert_int_equal(held, GATE_HELD_TOOL | GATE_HELD_FLOW);
	/* a revoke still denies a waived call */
	gate_post(g, 5, READ, false);
	assert_int_equal(call(g, READ, PII, PII, true, &held), RULE_REVOKED);
}

/* A restore of the flow lifts it; a restore of a flow never held applies and changes nothing. */
static void
test_restore_lifts(void **state)
{
	struct gate *g = *state;
	struct gate_state st;

	gate_post_flow(g, 1, PUBLIC, PUBLIC, true);
	gate_post_flow(g, 2, PII, PII, true);
	gate_post_flow(g, 3, PUBLIC, PUBLIC, false);
	assert_int_equal(call(g, STORE, PUBLIC, PUBLIC, false, NULL), RULE_ALLOWED);
	assert_int_equal(call(g, STORE, PII, PII, false, NULL), RULE_HOLD_DENIED);
	gate_post_flow(g, 4, RESTRICTED, RESTRICTED, false);
	assert_int_equal(acks.a[3].verdict, GATE_APPLIED);
	gate_state(g, &st);
	assert_int_equal(st.n_flows, 1);
	assert_int_equal(st.revision, 4);
}

/* Deltas posted while a call is in flight apply after it, in order; a stale one closes. */
static void
test_order_and_stale(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	int64_t rev;

	assert_int_equal(gate_begin(g, STORE, &rev), RULE_ALLOWED);
	gate_post_flow(g, 2, PII, PII, true);
	gate_post(g, 3, READ, false);
	assert_int_equal(acks.n, 0);	/* queued behind the call */
	gate_end(g);
	assert_int_equal(acks.n, 2);
	assert_int_equal(acks.a[0].revision, 2);
	assert_int_equal(acks.a[1].revision, 3);
	assert_int_equal(call(g, STORE, PII, PII, false, NULL), RULE_HOLD_DENIED);
	gate_post_flow(g, 3, PUBLIC, PUBLIC, true);	/* stale */
	assert_int_equal(acks.a[2].verdict, GATE_REJECTED);
	gate_state(g, &st);
	assert_false(st.open);
	assert_int_equal(st.n_flows, 1);
	assert_int_equal(call(g, STORE, PUBLIC, PUBLIC, false, NULL), RULE_GATE_CLOSED);
	gate_post_flow(g, 4, PII, PII, false);	/* a newer valid one reopens */
	assert_int_equal(call(g, STORE, PII, PII, false, NULL), RULE_ALLOWED);
}

/* A flow the ceiling denies: not applicable without the opt-in, held with it. */
static void
test_declassify_opt_in(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	unsigned held = 0;

	gate_post_flow(g, 1, CONFIDENTIAL, PUBLIC, true);
	assert_int_equal(acks.a[0].verdict, GATE_NOT_APPLICABLE);
	assert_string_equal(acks.a[0].reason, "no declassification");
	assert_int_equal(call(g, STORE, CONFIDENTIAL, PUBLIC, false, &held), RULE_ALLOWED);
	assert_int_equal(held, 0);	/* the gateway's sink ceiling denies it */
	assert_false(gate_set_flow_held(g, CONFIDENTIAL, PUBLIC, 1));
	gate_post_flow(g, 2, -1, PUBLIC, true);	/* a class this session has not */
	assert_string_equal(acks.a[1].reason, "class not in this session");
	gate_set_declassify(g, true);
	gate_post_flow(g, 3, CONFIDENTIAL, PUBLIC, true);
	assert_int_equal(acks.a[2].verdict, GATE_APPLIED);
	assert_int_equal(call(g, STORE, CONFIDENTIAL, PUBLIC, false, &held), RULE_HOLD_DENIED);
	assert_int_equal(held, GATE_HELD_FLOW);
	gate_state(g, &st);
	assert_true(st.declassify);
	assert_true(st.open);
}

/* One flow past GATE_FLOWS_MAX is rejected and closes admission: fail closed. */
static void
test_overflow_fails_closed(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	int i;

	for (i = 0; i < GATE_FLOWS_MAX; i++)
		gate_post_flow(g, i + 1, i % 4, 4 + i / 4, true);	/* sinks past the classes: ranks only */
	gate_state(g, &st);
	assert_int_equal(st.n_flows, GATE_FLOWS_MAX);
	assert_true(st.open);
	gate_post_flow(g, 100, PUBLIC, PUBLIC, true);
	gate_state(g, &st);
	assert_false(st.open);
	assert_int_equal(st.n_flows, GATE_FLOWS_MAX);
	assert_int_equal(call(g, READ, PUBLIC, PUBLIC, false, NULL), RULE_GATE_CLOSED);
	/* a standing flow that does not fit closes a fresh gate too */
	assert_false(gate_set_flow_held(g, PII, PII, 100));
	gate_post_flow(g, 101, 0, 4, false);	/* room again, and a newer revision reopens */
	assert_int_equal(call(g, READ, PUBLIC, PUBLIC, false, NULL), RULE_ALLOWED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hold_allowed_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waived_reentry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_lifts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_and_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_declassify_opt_in, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow_fails_closed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
