/*
 * The control protocol's one table of ops and keys (engine/protocol/control.h):
 * every op a client builds (control_request_json) the engine parses back the
 * same; a missing or mistyped key is refused with its fixed text; the audit
 * answer, the newest message, decoded within its bounds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"

/* The error text control_parse gives for line, or NULL when it accepts it. */
static const char *
parse_error(const char *line)
{
	struct control_request r;
	const char *error;
	int rc = control_parse(line, strlen(line), &r, &error);

	control_request_free(&r);
	assert_true(rc == 0 ? error == NULL : error != NULL);
	return error;
}

static void
assert_refused(const char *line, const char *error)
{
	const char *got = parse_error(line);

	if (!got || strcmp(got, error) != 0)
		fail_msg("%s: got %s, want %s", line, got ? got : "(accepted)", error);
}

static const char *const key_names[CONTROL_K_COUNT] = {
#define KEY_NAME(e, name, type, field) [CONTROL_K_##e] = name,
	CONTROL_KEYS(KEY_NAME)
#undef KEY_NAME
};

static const unsigned op_allowed[CONTROL_OP_COUNT] = {
#define OP_ALLOWED(e, name, role, allowed, required, any_of) [CONTROL_OP_##e] = allowed,
	CONTROL_OPS(OP_ALLOWED)
#undef OP_ALLOWED
};

static const unsigned op_needs[CONTROL_OP_COUNT] = {
#define OP_NEEDS(e, name, role, allowed, required, any_of) [CONTROL_OP_##e] = required | any_of,
	CONTROL_OPS(OP_NEEDS)
#undef OP_NEEDS
};

/* Every key the op allows, with a valid value (one target only: a path, named sessions). */
static void
fill_request(struct control_request *r, enum control_op op)
{
	unsigned allowed = op_allowed[op];

	control_request_init(r, op);
	r->id = 41;
	if (allowed & CONTROL_KEY(SESSION))
		assert_int_equal(control_request_str(r, CONTROL_K_SESSION, "s-1"), 0);
	if (allowed & CONTROL_KEY(PATH))
		assert_int_equal(control_request_str(r, CONTROL_K_PATH, "/etc/airlock/a.json"), 0);
	if (allowed & CONTROL_KEY(TOOL))
		assert_int_equal(control_request_str(r, CONTROL_K_TOOL, "store"), 0);
	/* quarantine picks by sessions or by a tool called, never both: the tool here */
	if ((allowed & CONTROL_KEY(SESSIONS)) && op != CONTROL_OP_QUARANTINE) {
		assert_int_equal(control_request_add_id(r, "s-1"), 0);
		assert_int_equal(control_request_add_id(r, "s-2"), 0);
	}
	if (allowed & CONTROL_KEY(WAIT))
		control_request_int(r, CONTROL_K_WAIT, 1234);
	if (allowed & CONTROL_KEY(AFTER))
		control_request_int(r, CONTROL_K_AFTER, 77);
	if (allowed & CONTROL_KEY(FOR))
		control_request_int(r, CONTROL_K_FOR, 900);
	if (allowed & CONTROL_KEY(CALLS))
		control_request_int(r, CONTROL_K_CALLS, 2);
	if (allowed & CONTROL_KEY(HOLD_ID))
		control_request_int(r, CONTROL_K_HOLD_ID, 7);
	control_request_bool(r, CONTROL_K_REST, allowed & CONTROL_KEY(REST));
	if (allowed & CONTROL_KEY(WITHIN))
		control_request_int(r, CONTROL_K_WITHIN, 60);
	control_request_bool(r, CONTROL_K_FOLLOW, allowed & CONTROL_KEY(FOLLOW));
	control_request_bool(r, CONTROL_K_SNAPSHOTS, allowed & CONTROL_KEY(SNAPSHOTS));
	control_request_bool(r, CONTROL_K_DELTAS, allowed & CONTROL_KEY(DELTAS));
	control_request_bool(r, CONTROL_K_REFRESH, allowed & CONTROL_KEY(REFRESH));
	if (allowed & CONTROL_KEY(RUNTIME))
		assert_int_equal(control_request_str(r, CONTROL_K_RUNTIME, "runsc"), 0);
	if (allowed & CONTROL_KEY(CLIENT))
		assert_int_equal(control_request_str(r, CONTROL_K_CLIENT, "console"), 0);
	r->has &= allowed;	/* the booleans set (false) for every op, kept where the op has them */
}

/* Built from the table, parsed by it: the same request, for every op. */
static void
test_table_round_trip(void **state)
{
	struct control_request in, out;
	const char *error;
	char *line;
	json_t *j;
	size_t n;
	int op;

	(void)state;
	for (op = 0; op < CONTROL_OP_COUNT; op++) {
		fill_request(&in, (enum control_op)op);
		j = control_request_json(&in);
		assert_non_null(j);
		line = control_line(j, CONTROL_LINE_MAX, &n);
		assert_non_null(line);
		if (control_parse(line, n - 1, &out, &error) < 0)
			fail_msg("%s: %s", line, error);
		assert_int_equal(out.op, op);
		assert_int_equal(out.has, in.has);
		assert_memory_equal(&out, &in, sizeof in);
		control_request_free(&out);
		free(line);
		json_decref(j);
	}
	/* A key the op does not have is not written. */
	control_request_init(&in, CONTROL_OP_SNAPSHOT);
	control_request_bool(&in, CONTROL_K_FOLLOW, true);
	assert_null(control_request_json(&in));
	/* A value that does not fit is refused, never cut. */
	control_request_init(&in, CONTROL_OP_STOP);
	assert_int_equal(control_request_str(&in, CONTROL_K_SESSION,
					     "s-0123456789012345678901234567890123456789"), -1);
	assert_int_equal(in.has, 0);
}

/* Each op without its required keys, and each key of the wrong type: refused, fixed text. */
static void
test_table_refusals(void **state)
{
	char line[256];
	int op, k;

	(void)state;
	for (op = 0; op < CONTROL_OP_COUNT; op++) {
		snprintf(line, sizeof line, "{\"id\":1,\"op\":\"%s\"}", control_op_name(op));
		if (op_needs[op])
			assert_refused(line, CONTROL_E_MISSING);
		else
			assert_null(parse_error(line));
		for (k = 0; k < CONTROL_K_COUNT; k++) {
			snprintf(line, sizeof line, "{\"id\":1,\"op\":\"%s\",\"%s\":[true]}",
				 control_op_name(op), key_names[k]);
			assert_refused(line, op_allowed[op] & (1u << k) ? CONTROL_E_ARG : CONTROL_E_KEY);
		}
	}
	assert_int_equal(control_op_role(CONTROL_OP_AUDIT), CONTROL_ROLE_VIEW);
	assert_int_equal(control_op_role(CONTROL_OP_SNAPSHOT), CONTROL_ROLE_VIEW);
	assert_int_equal(control_op_role(CONTROL_OP_REVOKE), CONTROL_ROLE_OPERATE);
	assert_refused("{\"id\":1,\"op\":\"audit\",\"after\":-1}", CONTROL_E_ARG);
	/* quarantine: names, all, or a tool called; a window only with the tool */
	assert_int_equal(control_op_role(CONTROL_OP_QUARANTINE), CONTROL_ROLE_OPERATE);
	assert_int_equal(control_op_role(CONTROL_OP_RELEASE), CONTROL_ROLE_OPERATE);
	assert_refused("{\"id\":1,\"op\":\"quarantine\",\"tool\":\"store\",\"all\":true}",
		       CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"quarantine\",\"tool\":\"store\",\"sessions\":[\"s-1\"]}",
		       CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"quarantine\",\"all\":true,\"within_s\":60}",
		       CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"quarantine\",\"sessions\":[]}", CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"release\",\"tool\":\"store\"}", CONTROL_E_KEY);
	assert_refused("{\"id\":1,\"op\":\"quarantine\",\"tool\":\"store\",\"within_s\":0}",
		       CONTROL_E_ARG);
	assert_null(parse_error("{\"id\":1,\"op\":\"quarantine\",\"tool\":\"store\",\"within_s\":600}"));
	assert_refused("{\"id\":1,\"op\":\"audit\",\"after\":\"7\"}", CONTROL_E_ARG);
}

/* A policy entry's rule names the op, a view client's refusal included. */
static void
test_audit_rule(void **state)
{
	char rule[SNAP_WORD_MAX];

	(void)state;
	control_audit_rule(CONTROL_OP_STOP, true, "stopping", rule, sizeof rule);
	assert_string_equal(rule, "stop by request");
	control_audit_rule(CONTROL_OP_START, false, CONTROL_E_CONFIG, rule, sizeof rule);
	assert_string_equal(rule, "start refused");
	control_audit_rule(CONTROL_OP_REVOKE, false, CONTROL_E_VIEW, rule, sizeof rule);
	assert_string_equal(rule, "revoke refused: view only");
	control_audit_rule(CONTROL_OP_FREEZE, false, CONTROL_E_VIEW, rule, sizeof rule);
	assert_string_equal(rule, "freeze refused: view only");
	control_audit_rule(CONTROL_OP_COUNT, false, NULL, rule, sizeof rule);
	assert_string_equal(rule, "unknown refused");
}

/* The audit answer: rows and head back as they were; a hostile one bounded. */
static void
test_audit_decode(void **state)
{
	static struct control_audit a, back;
	json_t *ok = control_ok(3), *rows;
	char big[300];
	size_t i;

	(void)state;
	a.n = 2;
	a.head = 99;
	a.rows[0] = (struct audit_row){ .seq = 98, .time = "2025-01-01 00:00:00", .session = "s-1",
					.type = "policy", .tool = "store", .decision = "applied",
					.revision = 4, .tone = AUDIT_TONE_GOOD };
	a.rows[1] = (struct audit_row){ .seq = 99, .call = "c-1", .type = "call",
					.latency_us = 12, .entry_hash = "0123456789abcdef",
					.tone = AUDIT_TONE_ALERT, .unknown_outcome = true };
	assert_int_equal(control_audit_into(&a, ok), 0);
	assert_int_equal(json_integer_value(json_object_get(ok, "id")), 3);
	assert_int_equal(control_audit_from_json(ok, &back), 0);
	assert_memory_equal(&back, &a, sizeof a);
	json_decref(ok);

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	rows = json_array();
	for (i = 0; i < CONTROL_AUDIT_ROWS + 10; i++)
		json_array_append_new(rows, json_pack("{s:I, s:s, s:s}", "seq", (json_int_t)i,
						      "tool", big, "tone", "purple"));
	ok = json_pack("{s:b, s:o, s:i}", "ok", 1, "rows", rows, "head", 5);
	assert_int_equal(control_audit_from_json(ok, &back), 0);
	assert_int_equal(back.n, CONTROL_AUDIT_ROWS);
	assert_int_equal(back.head, 5);
	assert_int_equal(strlen(back.rows[0].tool), SNAP_NAME_MAX - 1);
	assert_int_equal(back.rows[CONTROL_AUDIT_ROWS - 1].tone, AUDIT_TONE_PLAIN);
	json_decref(ok);
	assert_int_equal(control_audit_from_json(NULL, &back), -1);
}

/*
 * The timeline answer (op "timeline"): events, cursor and more back as
 * they were, the author inside; a hostile one bounded: no more events than
 * CONTROL_TIMELINE_ROWS, every string cut within its field.
 */
static void
test_timeline_decode(void **state)
{
	static struct control_timeline t, back;
	struct control_request r;
	json_t *ok = control_ok(4), *rows, *req;
	char big[300];
	size_t i;

	(void)state;
	t.n = 2;
	t.next = 41;
	t.more = true;
	/* Field by field: a compound literal's padding is the stack's, not zero. */
	snprintf(t.rows[0].time, sizeof t.rows[0].time, "2026-12-06T07:00:01.000001Z");
	snprintf(t.rows[0].kind, sizeof t.rows[0].kind, "policy");
	snprintf(t.rows[0].op, sizeof t.rows[0].op, "revoke");
	snprintf(t.rows[0].tool, sizeof t.rows[0].tool, "store");
	snprintf(t.rows[0].by.user, sizeof t.rows[0].by.user, "alice");
	snprintf(t.rows[0].by.via, sizeof t.rows[0].by.via, "ctl");
	t.rows[0].seq = 7;
	t.rows[0].revision = 3;
	t.rows[0].has_author = true;
	t.rows[0].by.uid = 1001;
	t.rows[0].applied = 2;
	t.rows[0].not_applicable = 1;
	t.rows[0].rejected = 1;
	snprintf(t.rows[1].time, sizeof t.rows[1].time, "2026-12-06T07:00:02.5Z");
	snprintf(t.rows[1].kind, sizeof t.rows[1].kind, "session_end");
	snprintf(t.rows[1].session, sizeof t.rows[1].session, "s-1");
	snprintf(t.rows[1].rule, sizeof t.rows[1].rule, "stopped");
	t.rows[1].seq = 40;
	t.rows[1].normal = true;
	assert_int_equal(control_timeline_into(&t, ok), 0);
	assert_int_equal(json_integer_value(json_object_get(ok, "id")), 4);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(ok, "events"), 0), "by"), "by")), "alice");
	assert_int_equal(control_timeline_from_json(ok, &back), 0);
	assert_memory_equal(&back, &t, sizeof t);
	json_decref(ok);

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	rows = json_array();
	for (i = 0; i < CONTROL_TIMELINE_ROWS + 10; i++)
		json_array_append_new(rows, json_pack("{s:I, s:s, s:s, s:s}", "seq", (json_int_t)i,
						      "event", big, "tool", big, "rule", big));
	ok = json_pack("{s:b, s:o, s:i}", "ok", 1, "events", rows, "next", 5);
	assert_int_equal(control_timeline_from_json(ok, &back), 0);
	assert_int_equal(back.n, CONTROL_TIMELINE_ROWS);
	assert_int_equal(back.next, 5);
	assert_false(back.more);
	assert_int_equal(strlen(back.rows[0].kind), SNAP_TIMELINE_KIND_MAX - 1);
	assert_int_equal(strlen(back.rows[0].tool), SNAP_NAME_MAX - 1);
	assert_int_equal(strlen(back.rows[0].rule), SNAP_WORD_MAX - 1);
	json_decref(ok);
	assert_int_equal(control_timeline_from_json(NULL, &back), -1);

	/* The request: a view op, after its one key, read back as written. */
	assert_int_equal(control_op_role(CONTROL_OP_TIMELINE), CONTROL_ROLE_VIEW);
	control_request_init(&r, CONTROL_OP_TIMELINE);
	control_request_int(&r, CONTROL_K_AFTER, 41);
	req = control_request_json(&r);
	assert_non_null(req);
	assert_string_equal(json_string_value(json_object_get(req, "op")), "timeline");
	assert_int_equal(json_integer_value(json_object_get(req, "after")), 41);
	json_decref(req);
	assert_string_equal(parse_error("{\"id\":1,\"op\":\"timeline\",\"tool\":\"x\"}"),
			    CONTROL_E_KEY);
	assert_string_equal(parse_error("{\"id\":1,\"op\":\"timeline\",\"after\":-1}"),
			    CONTROL_E_ARG);
	assert_null(parse_error("{\"id\":1,\"op\":\"timeline\",\"after\":9}"));
}

/*
 * A detail's upstreams: every field back as it was; a started one's uid,
 * ruleset and filter, and only a started one's; a hostile list bounded.
 */
static void
test_detail_upstreams(void **state)
{
	/* Static: their padding is zero, as the decoder leaves it. */
	static const struct upstream_view views[2] = {
		{ .name = "vault", .started = true,
		  .user = "airlock-upstream", .uid = 999, .gid = 995, .uid_changed = true,
		  .landlock_abi = 6, .landlock_rules = 21, .paths_ro = 3, .paths_rw = 1,
		  .seccomp = "0123456789abcdef", .network = "none", .isolation = "process" },
		{ .name = "mail", .user = "mailer",
		  .network = "connect 443,80 bind - udp no", .isolation = "process",
		  .privileged = true, .unconfined_ok = true },
	};
	struct session_detail *d = calloc(2, sizeof *d);
	json_t *j, *ups;
	char big[300];
	size_t i;

	(void)state;
	assert_non_null(d);
	snprintf(d[0].row.id, sizeof d[0].row.id, "s-1");
	d[0].n_upstreams = 2;
	memcpy(d[0].upstreams, views, sizeof views);
	j = control_detail_json(&d[0]);
	assert_non_null(j);
	ups = json_object_get(j, "upstreams");
	assert_int_equal(json_array_size(ups), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ups, 0), "uid")), 999);
	assert_null(json_object_get(json_array_get(ups, 1), "uid"));	/* not started: no uid */
	assert_int_equal(control_detail_from_json(j, &d[1]), 0);
	assert_memory_equal(&d[1], &d[0], sizeof d[0]);
	json_decref(j);

	/* Too many, too long, and a not-started one claiming a uid: bounded, ignored. */
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ups = json_array();
	for (i = 0; i < SNAP_UPSTREAMS_MAX + 5; i++)
		json_array_append_new(ups, json_pack("{s:s, s:b, s:i, s:s}", "name", big,
						      "started", 0, "uid", 7, "network", big));
	j = json_pack("{s:{s:s, s:s}, s:o}", "session", "id", "s-1", "state", "running",
		      "upstreams", ups);
	assert_int_equal(control_detail_from_json(j, &d[1]), 0);
	assert_int_equal(d[1].n_upstreams, SNAP_UPSTREAMS_MAX);
	assert_int_equal(strlen(d[1].upstreams[0].name), SNAP_NAME_MAX - 1);
	assert_int_equal(strlen(d[1].upstreams[0].network), SNAP_NETWORK_MAX - 1);
	assert_int_equal(d[1].upstreams[0].uid, 0);
	json_decref(j);
	free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detail_upstreams),
		cmocka_unit_test(test_table_round_trip),
		cmocka_unit_test(test_table_refusals),
		cmocka_unit_test(test_audit_decode),
		cmocka_unit_test(test_timeline_decode),
		cmocka_unit_test(test_audit_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
