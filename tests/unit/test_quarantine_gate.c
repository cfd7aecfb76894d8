#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "gate.h"
#include "policy.h"
#include "quarantine.h"

/*
 * Quarantine (issue 43, item 3) with plain data: the gate's flag denies
 * every call `quarantined` at once, even while a call is in flight (that
 * call finishes), outranks a freeze, and a release leaves the gate as the
 * revisions made it; the window `--called` counts; the pause's words.
 */

enum { READ, STORE, MAIL, N_TOOLS };

static int
setup(void **state)
{
	const bool approved[N_TOOLS] = { true, true, true };

	*state = gate_new(approved, N_TOOLS);
	return *state ? 0 : -1;
}

static int
teardown(void **state)
{
	gate_free(*state);
	return 0;
}

static enum policy_rule
call(struct gate *g, int tool)
{
	int64_t rev;
	enum policy_rule r = gate_begin(g, tool, &rev);

	if (r == RULE_ALLOWED)
		gate_end(g);
	return r;
}

/* Every tool, known or not, is denied quarantined; release brings back the allowed set. */
static void
test_denies_and_releases(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	int t;

	gate_post(g, 1, STORE, false);		/* a revoke before the quarantine */
	assert_false(gate_quarantined(g));
	gate_set_quarantined(g, true);
	assert_true(gate_quarantined(g));
	gate_state(g, &st);
	assert_true(st.quarantined);
	assert_int_equal(st.revision, 1);	/* not a revision */
	for (t = -1; t <= N_TOOLS; t++)
		assert_int_equal(call(g, t), RULE_QUARANTINED);
	gate_set_quarantined(g, false);
	assert_int_equal(call(g, READ), RULE_ALLOWED);
	assert_int_equal(call(g, STORE), RULE_REVOKED);	/* the revoke still stands */
	assert_int_equal(call(g, MAIL), RULE_ALLOWED);
}

/* Set while a call is in flight: no wait; that call ends normally, the next is denied. */
static void
test_inflight_finishes_next_denied(void **state)
{
	struct gate *g = *state;
	struct gate_state st;
	int64_t rev;

	assert_int_equal(gate_begin(g, READ, &rev), RULE_ALLOWED);
	gate_set_quarantined(g, true);		/* returns although the call holds the gate */
	gate_state(g, &st);
	assert_true(st.busy);
	assert_true(st.quarantined);
	gate_end(g);
	assert_int_equal(call(g, READ), RULE_QUARANTINED);
}

/* Quarantine outranks the kill switch; a thaw does not lift it, nor a restore. */
static void
test_outranks_freeze(void **state)
{
	struct gate *g = *state;

	gate_post_freeze(g, 1, true);
	gate_set_quarantined(g, true);
	assert_int_equal(call(g, READ), RULE_QUARANTINED);
	gate_post_freeze(g, 2, false);
	gate_post(g, 3, READ, true);
	assert_int_equal(call(g, READ), RULE_QUARANTINED);
	gate_set_quarantined(g, false);
	assert_int_equal(call(g, READ), RULE_ALLOWED);
	gate_post_freeze(g, 4, true);
	assert_int_equal(call(g, READ), RULE_FROZEN);
}

static void
test_window(void **state)
{
	(void)state;
	assert_true(quarantine_called_within(1000, 1000, 1));
	assert_true(quarantine_called_within(1000, 61000, 60000));
	assert_false(quarantine_called_within(1000, 61001, 60000));
	assert_false(quarantine_called_within(0, 5, 60000));		/* never called */
	assert_false(quarantine_called_within(-3, 5, 60000));
	assert_false(quarantine_called_within(1000, 1000, 0));		/* no window */
	assert_true(quarantine_called_within(2000, 1000, 10));		/* ahead of now: now */
	assert_int_equal(QUARANTINE_WITHIN_DEFAULT_S, 600);
}

static void
test_pause_words(void **state)
{
	(void)state;
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_NONE), "");
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_WAITING), "waiting");
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_PAUSING), "pausing");
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_PAUSED), "paused");
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_FAILED), "pause failed");
	assert_string_equal(quarantine_pause_word(QUARANTINE_PAUSE_COUNT), "");
	assert_string_equal(quarantine_pause_word((enum quarantine_pause)-1), "");
	assert_string_equal(policy_rule_id(RULE_QUARANTINED), "quarantined");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_denies_and_releases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_finishes_next_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outranks_freeze, setup, teardown),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_pause_words),
	};

	return cmocka_run_group_tests_name("quarantine", tests, NULL, NULL);
}
