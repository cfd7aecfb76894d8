#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "alert.h"

/*
 * Alert lines: fixed text per event kind, names in their safe form, and
 * the `reason` field never copied. `reason` is a fixed word from the
 * engine, but the console does not take that on trust: a canary planted
 * there (or past the hex of a session id) must never show. Every line
 * is bounded by cap; the guard bytes around the buffer catch a write
 * past it even without the sanitizer.
 */

#define ID	"s-3f9a1c02deadbeef"
#define CANARY	"CANARY-payload-4242"
#define GUARD	0x5a

static const bool kind_always_alert[SUPERVISOR_EVENT_KIND_COUNT] = {
#define KIND_ALERT(e, id, alert) alert,
	SUPERVISOR_EVENT_KINDS(KIND_ALERT)
#undef KIND_ALERT
};

static struct supervisor_event
ev(enum event_kind kind)
{
	struct supervisor_event e;

	memset(&e, 0, sizeof e);
	e.kind = kind;
	snprintf(e.session, sizeof e.session, "%s", ID);
	return e;
}

static void
set(char *field, size_t cap, const char *s)
{
	snprintf(field, cap, "%s", s);
}

#define SET(field, s) set(field, sizeof field, s)

static const char *
fmt(const struct supervisor_event *e)
{
	static char buf[ALERT_TEXT_MAX];

	alert_format(e, buf, sizeof buf);
	return buf;
}

/* One of each kind, every field that kind uses filled in. */
static struct supervisor_event
sample(enum event_kind kind)
{
	struct supervisor_event e = ev(kind);

	e.state = SESSION_STATE_RUNNING;
	e.end = SESSION_END_WATCHDOG_FAILED;
	e.alert = kind_always_alert[kind];
	SET(e.check, "network_mode");
	SET(e.tool, "mail.send");
	e.op = CUTOVER_REVOKE;
	e.revision = 7;
	e.result = CUTOVER_APPLIED;
	e.waited_us = 8812345;
	e.count = 4;
	SET(e.reason, kind == SUPERVISOR_EVENT_ADMISSION_REFUSED ? "second"
		      : kind == SUPERVISOR_EVENT_REAPER || kind == SUPERVISOR_EVENT_SWEEP
		      ? "4 removed, 0 failed" : "no ack");
	return e;
}

static void
test_state(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_STATE);
	char want[64];
	int s;

	(void)state;
	for (s = 0; s < SESSION_STATE_COUNT; s++) {
		e.state = s;
		snprintf(want, sizeof want, "3f9a1c02 %s", session_state_id(s));
		assert_string_equal(fmt(&e), want);
	}
	e.state = SESSION_STATE_RUNNING;
	assert_string_equal(fmt(&e), "3f9a1c02 running");
	assert_false(alert_wanted(&e));
}

static void
test_end(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_END);

	(void)state;
	e.end = SESSION_END_WATCHDOG_FAILED;
	e.alert = true;
	assert_string_equal(fmt(&e), "session 3f9a1c02 ended: watchdog_failed");
	e.end = SESSION_END_ADMISSION_REFUSED;
	SET(e.check, "network_mode");
	assert_string_equal(fmt(&e),
			    "session 3f9a1c02 ended: admission_refused (check network_mode)");
	e = ev(SUPERVISOR_EVENT_END);
	e.end = SESSION_END_AGENT_EXIT;
	assert_string_equal(fmt(&e), "session 3f9a1c02 ended: agent_exit");
	e.end = (enum session_end)999;
	assert_string_equal(fmt(&e), "session 3f9a1c02 ended: unknown");
}

static void
test_lease_failed(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_LEASE_FAILED);
	static const char *const words[] = { "no ack", "watchdog gone", "wrong byte" };
	char want[128];
	size_t i;

	(void)state;
	SET(e.reason, "no ack");
	assert_string_equal(fmt(&e),
			    "watchdog: lease of 3f9a1c02 failed (no ack), container stopped");
	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		SET(e.reason, words[i]);
		snprintf(want, sizeof want,
			 "watchdog: lease of 3f9a1c02 failed (%s), container stopped", words[i]);
		assert_string_equal(fmt(&e), want);
	}
	/* A word the console does not know, or one with a tail, is not echoed. */
	SET(e.reason, "no ack and more");
	assert_string_equal(fmt(&e),
			    "watchdog: lease of 3f9a1c02 failed (other), container stopped");
}

static void
test_admission_refused(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_ADMISSION_REFUSED);

	(void)state;
	SET(e.check, "network_mode");
	SET(e.reason, "second");
	assert_string_equal(fmt(&e),
			    "admission refused 3f9a1c02: network_mode (second inspection)");
	SET(e.reason, "first");
	SET(e.check, "cap_drop");
	assert_string_equal(fmt(&e), "admission refused 3f9a1c02: cap_drop (first inspection)");
	e.check[0] = '\0';
	assert_string_equal(fmt(&e), "admission refused 3f9a1c02: no check named (first inspection)");
}

static void
test_cutover(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_CUTOVER);

	(void)state;
	e.session[0] = '\0';
	SET(e.tool, "mail.send");
	e.revision = 7;
	e.count = 4;
	assert_string_equal(fmt(&e), "cutover r7: revoke mail.send on 4 sessions");
	e.op = CUTOVER_RESTORE;
	e.count = 1;
	assert_string_equal(fmt(&e), "cutover r7: restore mail.send on 1 session");
	e.count = 0;
	assert_string_equal(fmt(&e), "cutover r7: restore mail.send on 0 sessions");
	/* The kill switch names no tool: it is about every call, said so. */
	e.tool[0] = '\0';
	e.op = CUTOVER_FREEZE;
	e.revision = 9;
	e.count = 3;
	assert_string_equal(fmt(&e), "cutover r9: freeze all calls on 3 sessions");
	e.op = CUTOVER_THAW;
	assert_string_equal(fmt(&e), "cutover r9: thaw all calls on 3 sessions");
	e.op = CUTOVER_REVOKE;
	assert_string_equal(fmt(&e), "cutover r9: revoke no tool named on 3 sessions");
}

static void
test_cutover_ack(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_CUTOVER_ACK);

	(void)state;
	SET(e.tool, "mail.send");
	e.revision = 7;
	e.result = CUTOVER_APPLIED;
	e.waited_us = 8812345;
	SET(e.reason, "applied");
	assert_string_equal(fmt(&e), "r7 revoke mail.send: 3f9a1c02 applied after 8.8 s");
	e.waited_us = 12999;
	assert_string_equal(fmt(&e), "r7 revoke mail.send: 3f9a1c02 applied after 12 ms");
	e.waited_us = -5;
	assert_string_equal(fmt(&e), "r7 revoke mail.send: 3f9a1c02 applied after 0 ms");
	e.result = CUTOVER_REJECTED;
	SET(e.reason, "stale revision");
	assert_string_equal(fmt(&e), "r7 revoke mail.send: 3f9a1c02 rejected: stale revision");
	e.result = CUTOVER_NOT_APPLICABLE;
	SET(e.reason, "tool not in this session");
	assert_string_equal(fmt(&e), "r7 revoke mail.send: 3f9a1c02 not applicable");
	/* A whole policy update carries no tool. */
	e.tool[0] = '\0';
	e.result = CUTOVER_REJECTED;
	SET(e.reason, "malformed update");
	assert_string_equal(fmt(&e), "r7 update: 3f9a1c02 rejected: malformed update");
	/* A freeze's acknowledgement: what it is about, not an update. */
	e.op = CUTOVER_FREEZE;
	e.result = CUTOVER_APPLIED;
	e.waited_us = 12999;
	assert_string_equal(fmt(&e), "r7 freeze all calls: 3f9a1c02 applied after 12 ms");
}

static void
test_stop_and_reaper(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_STOP_REQUESTED);

	(void)state;
	assert_string_equal(fmt(&e), "force-stop 3f9a1c02 requested");
	e = ev(SUPERVISOR_EVENT_REAPER);
	e.session[0] = '\0';
	e.count = 3;
	SET(e.reason, "3 removed, 0 failed");
	assert_string_equal(fmt(&e), "reaper removed 3 orphaned containers");
	e.count = 1;
	SET(e.reason, "1 removed, 2 failed");
	assert_string_equal(fmt(&e), "reaper removed 1 orphaned container, 2 failed");
	/* Only that exact shape gives the failed count. */
	SET(e.reason, "1 removed, 2 failed " CANARY);
	assert_string_equal(fmt(&e), "reaper removed 1 orphaned container");
	/* The sweep after a daemon outage: the containers ended sessions left. */
	e = ev(SUPERVISOR_EVENT_SWEEP);
	e.session[0] = '\0';
	e.count = 4;
	SET(e.reason, "4 removed, 0 failed");
	assert_string_equal(fmt(&e), "removed 4 containers left by ended sessions");
	e.count = 1;
	SET(e.reason, "1 removed, 1 failed");
	assert_string_equal(fmt(&e), "removed 1 container left by ended sessions, 1 still left");
	assert_true(alert_wanted(&e));
}

/* The audit log's first refusal: a session's writes, or a policy entry's. */
static void
test_audit_refused(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_AUDIT_REFUSED);

	(void)state;
	e.count = 2;
	assert_string_equal(fmt(&e), "audit log refused 2 writes of session 3f9a1c02: the log is"
			    " incomplete");
	e.count = 1;
	SET(e.reason, CANARY);	/* never copied */
	assert_string_equal(fmt(&e), "audit log refused 1 write of session 3f9a1c02: the log is"
			    " incomplete");
	e.session[0] = '\0';
	assert_string_equal(fmt(&e), "audit log refused a policy entry: the log is incomplete");
	assert_true(alert_wanted(&e));
}

static void
test_odd_input(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_STOP_REQUESTED);
	char buf[32];

	(void)state;
	SET(e.session, "c-3f9a1c02");
	assert_string_equal(fmt(&e), "force-stop (odd session id) requested");
	SET(e.session, "s-F9A1");		/* engine ids are lowercase */
	assert_string_equal(fmt(&e), "force-stop (odd session id) requested");
	SET(e.session, "s-3f9");
	assert_string_equal(fmt(&e), "force-stop 3f9 requested");
	e.session[0] = '\0';
	assert_string_equal(fmt(&e), "force-stop (no session) requested");
	e.kind = (enum event_kind)99;
	assert_string_equal(fmt(&e), "event unknown");
	alert_format(NULL, buf, sizeof buf);
	assert_string_equal(buf, "no event");
	assert_false(alert_wanted(NULL));
	alert_format(&e, NULL, 10);	/* nothing to write to: nothing happens */
}

/* Names keep their safe characters; anything else is written \xHH, no placeholder. */
static void
test_names_sanitized(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_CUTOVER);

	(void)state;
	e.revision = 3;
	e.count = 2;
	SET(e.tool, "mail\x1b[2J<b>&send now\n\xc3\xa9");
	assert_string_equal(fmt(&e), "cutover r3: revoke mail\\x1b\\x5b2J\\x3cb\\x3e\\x26send"
			    "\\x20now\\x0a\\xc3\\xa9 on 2 sessions");
	e = ev(SUPERVISOR_EVENT_END);
	e.end = SESSION_END_ADMISSION_REFUSED;
	SET(e.check, "net\twork");
	assert_string_equal(fmt(&e),
			    "session 3f9a1c02 ended: admission_refused (check net\\x09work)");
}

static bool
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/* reason and the tail of the session id: planted, never shown. */
static void
test_canary(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++) {
		struct supervisor_event e = sample(k);
		const char *out;

		SET(e.reason, CANARY);
		SET(e.session, "s-3f9a1c02" CANARY);
		out = fmt(&e);
		assert_null(strstr(out, "CANARY"));
		assert_null(strstr(out, "payload"));
		assert_true(printable(out));
		/* The whole field, no NUL in it. */
		memset(e.reason, 'C', sizeof e.reason);
		memset(e.session + 10, 'Z', sizeof e.session - 10);
		out = fmt(&e);
		assert_null(strstr(out, "CCC"));
		assert_null(strstr(out, "ZZZ"));
	}
}

/* Every string field full and unterminated: reads stay inside the event. */
static void
test_unterminated(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++) {
		struct supervisor_event e = sample(k);
		const char *out;

		memset(e.session, 'a', sizeof e.session);
		memcpy(e.session, "s-", 2);
		memset(e.check, 'k', sizeof e.check);
		memset(e.tool, 't', sizeof e.tool);
		memset(e.reason, 'r', sizeof e.reason);
		out = fmt(&e);
		assert_true(strlen(out) < ALERT_TEXT_MAX);
		assert_true(printable(out));
	}
}

/* The longest names and numbers still fit in ALERT_TEXT_MAX uncut. */
static void
test_fits(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++) {
		struct supervisor_event e = sample(k);
		char big[ALERT_TEXT_MAX * 2];

		memset(e.tool, 'T', sizeof e.tool - 1);
		memset(e.check, 'K', sizeof e.check - 1);
		e.op = CUTOVER_RESTORE;
		e.revision = INT64_MIN;
		e.waited_us = INT64_MAX;
		e.count = LONG_MIN;
		e.result = k == SUPERVISOR_EVENT_CUTOVER_ACK ? CUTOVER_REJECTED : e.result;
		SET(e.reason, k == SUPERVISOR_EVENT_REAPER || k == SUPERVISOR_EVENT_SWEEP
			      ? "18446744073709551615 removed, 1 failed"
			      : k == SUPERVISOR_EVENT_CUTOVER_ACK ? "tool not in this session" : "second");
		alert_format(&e, big, sizeof big);
		assert_true(strlen(big) < ALERT_TEXT_MAX - 1);
		assert_string_equal(fmt(&e), big);
	}
}

/* Any cap: NUL-terminated, a prefix of the full line, nothing past cap. */
static void
test_bounded_by_cap(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++) {
		struct supervisor_event e = sample(k);
		char full[ALERT_TEXT_MAX];
		size_t cap, i;

		alert_format(&e, full, sizeof full);
		for (cap = 0; cap <= strlen(full) + 4; cap++) {
			char area[ALERT_TEXT_MAX + 16];

			memset(area, GUARD, sizeof area);
			alert_format(&e, area + 8, cap);
			for (i = 0; i < 8; i++)
				assert_int_equal((unsigned char)area[i], GUARD);
			for (i = 8 + cap; i < sizeof area; i++)
				assert_int_equal((unsigned char)area[i], GUARD);
			if (cap == 0)
				continue;
			assert_true(strlen(area + 8) < cap);
			assert_memory_equal(area + 8, full, strlen(area + 8));
		}
	}
}

/* The engine's rule: the kind's column in SUPERVISOR_EVENT_KINDS, abnormal ends, rejected acks. */
static void
test_wanted(void **state)
{
	int k, end, r, flag;

	(void)state;
	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++)
		for (flag = 0; flag < 2; flag++) {
			struct supervisor_event e = ev(k);

			e.alert = flag;
			e.end = SESSION_END_AGENT_EXIT;
			e.result = CUTOVER_APPLIED;
			assert_int_equal(alert_wanted(&e), flag || kind_always_alert[k]);
		}
	for (end = 0; end < SESSION_END_COUNT; end++) {
		struct supervisor_event e = ev(SUPERVISOR_EVENT_END);

		e.end = end;
		assert_int_equal(alert_wanted(&e), !session_end_normal(end));
	}
	for (r = CUTOVER_APPLIED; r <= CUTOVER_REJECTED; r++) {
		struct supervisor_event e = ev(SUPERVISOR_EVENT_CUTOVER_ACK);

		e.result = r;
		assert_int_equal(alert_wanted(&e), r == CUTOVER_REJECTED);
	}
}

/*
 * A call began waiting: its id, session and catalog tool only. The alias,
 * classes, hash and size it carries never reach the line; a hostile tool
 * name is escaped, an odd session id said in words.
 */
static void
test_hold(void **state)
{
	struct hold_view h = { .id = 7, .request_bytes = 4096 };
	char buf[ALERT_TEXT_MAX];

	(void)state;
	snprintf(h.session, sizeof h.session, "s-3f9a1c02d8e4b6a1");
	snprintf(h.tool, sizeof h.tool, "fs.write");
	snprintf(h.alias, sizeof h.alias, "ALIAS-CANARY");
	snprintf(h.session_class, sizeof h.session_class, "CLASS-CANARY");
	snprintf(h.request_hash, sizeof h.request_hash, "feedc0de");
	alert_hold(&h, buf, sizeof buf);
	assert_string_equal(buf, "hold 7: session 3f9a1c02, fs.write waits for approve or deny");
	assert_null(strstr(buf, "CANARY"));
	assert_null(strstr(buf, "feedc0de"));
	snprintf(h.tool, sizeof h.tool, "x\x1b[2J<b>");
	snprintf(h.session, sizeof h.session, "agent-chosen");
	alert_hold(&h, buf, sizeof buf);
	assert_string_equal(buf, "hold 7: session (odd session id), x\\x1b\\x5b2J\\x3cb\\x3e waits"
			    " for approve or deny");
	h.tool[0] = '\0';
	alert_hold(&h, buf, sizeof buf);
	assert_non_null(strstr(buf, "no tool named waits"));
	alert_hold(NULL, buf, sizeof buf);
	assert_string_equal(buf, "no held call");
	alert_hold(&h, buf, 8);
	assert_string_equal(buf, "hold 7:");
	alert_holds_more(3, buf, sizeof buf);
	assert_string_equal(buf, "and 3 more held calls waiting: see the pending view");
	alert_holds_more(1, buf, sizeof buf);
	assert_string_equal(buf, "and 1 more held call waiting: see the pending view");
}

/*
 * The engine's hold and quarantine events: the same line for a waiting
 * call as the pending list's (alert_hold); a decision's fixed word and
 * author; a quarantine or release and who did it; a failed pause as a
 * warning. Words the engine never writes read "other"; a hostile author
 * is escaped.
 */
static void
test_hold_and_quarantine_events(void **state)
{
	struct supervisor_event e = ev(SUPERVISOR_EVENT_HOLD_WAITING);

	(void)state;
	e.hold = 7;
	SET(e.tool, "fs.write");
	assert_string_equal(fmt(&e), "hold 7: session 3f9a1c02, fs.write waits for approve or deny");
	assert_true(alert_wanted(&e));
	e.kind = SUPERVISOR_EVENT_HOLD_DECIDED;
	SET(e.reason, "timeout");
	SET(e.by.user, "expiry");
	assert_string_equal(fmt(&e), "hold 7 timeout: session 3f9a1c02, fs.write (by expiry)");
	assert_false(alert_wanted(&e));
	SET(e.reason, "PAYLOAD-CANARY");
	assert_string_equal(fmt(&e), "hold 7 other: session 3f9a1c02, fs.write (by expiry)");
	e = ev(SUPERVISOR_EVENT_QUARANTINE);
	SET(e.by.user, "alice");
	assert_string_equal(fmt(&e), "session 3f9a1c02 quarantined by alice");
	assert_true(alert_wanted(&e));
	e.kind = SUPERVISOR_EVENT_RELEASE;
	SET(e.by.user, "a\x1b[2J");
	assert_string_equal(fmt(&e), "session 3f9a1c02 released by a\\x1b\\x5b2J");
	assert_true(alert_wanted(&e));
	e = ev(SUPERVISOR_EVENT_PAUSE_FAILED);
	SET(e.reason, "pause");
	assert_string_equal(fmt(&e), "warning: session 3f9a1c02 quarantined, but its pause failed:"
			    " its calls are denied all the same");
	SET(e.reason, "unpause");
	assert_string_equal(fmt(&e), "warning: session 3f9a1c02 released, but its unpause failed");
	assert_true(alert_wanted(&e));
	e = ev(SUPERVISOR_EVENT_UNPAUSED);
	assert_string_equal(fmt(&e), "warning: session 3f9a1c02 was unpaused outside airlock"
			    " while quarantined: paused again");
	assert_true(alert_wanted(&e));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_end),
		cmocka_unit_test(test_lease_failed),
		cmocka_unit_test(test_admission_refused),
		cmocka_unit_test(test_cutover),
		cmocka_unit_test(test_cutover_ack),
		cmocka_unit_test(test_stop_and_reaper),
		cmocka_unit_test(test_audit_refused),
		cmocka_unit_test(test_odd_input),
		cmocka_unit_test(test_names_sanitized),
		cmocka_unit_test(test_canary),
		cmocka_unit_test(test_unterminated),
		cmocka_unit_test(test_fits),
		cmocka_unit_test(test_bounded_by_cap),
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_hold_and_quarantine_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
