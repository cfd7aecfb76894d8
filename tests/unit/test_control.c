#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "control_cases.h"
#include "supervisor.h"

/* The error text control_parse gives for line, or NULL when it accepts it. */
static const char *
parse_error(const char *line, int64_t *id)
{
	struct control_request r;
	const char *error;
	int rc = control_parse(line, strlen(line), &r, &error);

	if (id)
		*id = r.id;
	control_request_free(&r);
	assert_true(rc == 0 ? error == NULL : error != NULL);
	return error;
}

static void
assert_refused(const char *line, const char *error)
{
	const char *got = parse_error(line, NULL);

	if (!got || strcmp(got, error) != 0)
		fail_msg("%s: got %s, want %s", line, got ? got : "(accepted)", error);
}

static void
test_accepted(void **state)
{
	struct control_request r;
	const char *error;
	const char *line = "{\"id\":7,\"op\":\"revoke\",\"tool\":\"store\","
			   "\"sessions\":[\"s-1\",\"s-2\"],\"wait_ms\":5000}";


	(void)state;
	assert_int_equal(control_parse(line, strlen(line), &r, &error), 0);
	assert_int_equal(r.id, 7);
	assert_int_equal(r.op, CONTROL_OP_REVOKE);
	assert_string_equal(r.tool, "store");
	assert_int_equal(r.n_ids, 2);
	assert_string_equal(r.ids[1], "s-2");
	assert_int_equal(r.wait_ms, 5000);
	assert_false(r.all);
	control_request_free(&r);

	assert_null(parse_error("{\"id\":0,\"op\":\"hello\"}", NULL));
	assert_null(parse_error("{\"id\":0,\"op\":\"hello\",\"client\":\"console\"}", NULL));
	assert_null(parse_error("{\"id\":0,\"op\":\"hello\",\"client\":\"ctl\"}", NULL));
	assert_null(parse_error("{\"op\":\"snapshot\",\"id\":9007199254740992}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true}", NULL));
	line = "{\"id\":8,\"op\":\"restore\",\"tool\":\"t\",\"all\":true,\"for_s\":1,\"calls\":2}";
	assert_int_equal(control_parse(line, strlen(line), &r, &error), 0);
	assert_int_equal(r.for_s, 1);
	assert_int_equal(r.calls, 2);
	assert_true(r.has & CONTROL_KEY(FOR) && r.has & CONTROL_KEY(CALLS));
	control_request_free(&r);
	assert_null(parse_error("{\"id\":1,\"op\":\"stop-all\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"freeze\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"thaw\",\"wait_ms\":2000}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"forget\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"events\",\"follow\":true,\"snapshots\":false}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"host\",\"refresh\":true,\"runtime\":\"runsc\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"start\",\"path\":\"/etc/airlock/a.json\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"detail\",\"session\":\"s-1\"}", NULL));
}

static void
test_inline_config(void **state)
{
	struct control_request r;
	const char *error;
	const char *line = "{\"id\":3,\"op\":\"start\",\"config\":{\"profile\":{\"image\":\"x\"}}}";

	(void)state;
	assert_int_equal(control_parse(line, strlen(line), &r, &error), 0);
	assert_true(json_is_object(r.config));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r.config, "profile"),
							      "image")), "x");
	control_request_free(&r);
	assert_null(r.config);
}

static void
test_refused(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < CONTROL_REFUSED; i++)
		assert_refused(control_refused[i].line, control_refused[i].error);
}

static void
test_bytes(void **state)
{
	char *big = malloc(CONTROL_LINE_MAX + 2);
	const char *bad_utf8 = "{\"id\":1,\"op\":\"stop\",\"session\":\"\xc3\x28\"}";
	const char nul[] = "{\"id\":1,\"op\":\"hello\"}\0";
	struct control_request r;
	const char *error;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', CONTROL_LINE_MAX + 1);
	memcpy(big, "{\"id\":1,\"op\":\"hello\"}", 21);
	assert_int_equal(control_parse(big, CONTROL_LINE_MAX + 1, &r, &error), -1);
	assert_string_equal(error, CONTROL_E_TOO_LONG);
	assert_int_equal(control_parse(big, CONTROL_LINE_MAX, &r, &error), 0);
	free(big);
	assert_refused(bad_utf8, CONTROL_E_UTF8);
	assert_refused("{\"id\":1,\"op\":\"stop\",\"session\":\"\xed\xa0\x80\"}", CONTROL_E_UTF8);
	assert_int_equal(control_parse(nul, sizeof nul - 1, &r, &error), -1);
	assert_string_equal(error, CONTROL_E_JSON);
}

/* A refusal names the id when it could be read; never the input. */
static void
test_refusal_names_id(void **state)
{
	int64_t id;
	json_t *e;
	char *line;
	size_t n;

	(void)state;
	assert_string_equal(parse_error("{\"id\":42,\"op\":\"CANARY\"}", &id), CONTROL_E_OP);
	assert_int_equal(id, 42);
	assert_string_equal(parse_error("{\"op\":\"CANARY\"}", &id), CONTROL_E_ID);
	assert_int_equal(id, -1);
	e = control_error(-1, CONTROL_E_OP, NULL);
	line = control_line(e, CONTROL_FRAME_MAX, &n);
	assert_string_equal(line, "{\"id\":null,\"ok\":false,\"error\":\"unknown op\"}\n");
	free(line);
	json_decref(e);
}

static void
test_roles(void **state)
{
	gid_t groups[] = { 5, 1001 };
	struct control_group op = { true, 1001 }, view = { true, 1002 }, none = { false, 0 };
	struct control_peer p = { .uid = 1000, .gid = 1000 };

	(void)state;
	assert_int_equal(control_role_of(&p, 999, op, view), CONTROL_ROLE_NONE);
	assert_int_equal(control_role_of(&p, 1000, op, view), CONTROL_ROLE_OPERATE);
	p.uid = 0;
	assert_int_equal(control_role_of(&p, 999, none, none), CONTROL_ROLE_OPERATE);
	p.uid = 1000;
	p.groups = groups;
	p.n_groups = 2;
	assert_int_equal(control_role_of(&p, 999, op, view), CONTROL_ROLE_OPERATE);
	assert_int_equal(control_role_of(&p, 999, none, view), CONTROL_ROLE_NONE);
	p.n_groups = 1;
	p.gid = 1002;
	assert_int_equal(control_role_of(&p, 999, op, view), CONTROL_ROLE_VIEW);
	assert_int_equal(control_role_of(&p, 999, op, none), CONTROL_ROLE_NONE);
	assert_string_equal(control_role_name(CONTROL_ROLE_VIEW), "view");
}

/* A peer with no role is told which groups would let it in: fixed text and names. */
static void
test_not_allowed(void **state)
{
	char buf[256], longname[200];

	(void)state;
	control_not_allowed(buf, sizeof buf, 1001, "airlock-operate", "airlock-view");
	assert_string_equal(buf, "not allowed: uid 1001 is in neither 'airlock-operate' (operate) "
			    "nor 'airlock-view' (view)");
	memset(longname, 'g', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	control_not_allowed(buf, sizeof buf, 7, longname, NULL);
	assert_int_equal(strlen(buf), strlen("not allowed: uid 7 is in neither '' (operate) nor 'none' (view)")
			 + CONTROL_GROUP_NAME_MAX);
	assert_non_null(strstr(buf, "' (operate) nor 'none' (view)"));
	assert_true(control_op_changes(CONTROL_OP_STOP_ALL));
	assert_false(control_op_changes(CONTROL_OP_EVENTS));
}

static void
test_hello_and_push(void **state)
{
	json_t *h = control_hello("engine-1", CONTROL_ROLE_OPERATE, 0, "root");
	json_t *p = control_push(5, 2, "event", json_pack("{s:s}", "kind", "state"));
	char *line;
	size_t n;

	(void)state;
	line = control_line(h, CONTROL_FRAME_MAX, &n);
	assert_string_equal(line, "{\"airlock\":1,\"engine\":\"engine-1\",\"role\":\"operate\","
				  "\"uid\":0,\"user\":\"root\",\"deltas\":true}\n");
	assert_int_equal(n, strlen(line));
	free(line);
	line = control_line(p, CONTROL_FRAME_MAX, &n);
	assert_string_equal(line, "{\"seq\":5,\"gap\":2,\"event\":{\"kind\":\"state\"}}\n");
	free(line);
	assert_null(control_line(h, 10, &n));
	json_decref(h);
	json_decref(p);
}

/* A tool under a grant: what remains crosses the socket and reads back the same. */
static void
assert_grant_round_trip(struct session_row *r)
{
	struct session_row *back = calloc(1, sizeof *back);
	json_t *j, *t;

	assert_non_null(back);
	r->tools[0].granted = true;
	r->tools[0].grant_calls = 2;
	r->tools[0].grant_ms = -1;	/* no deadline: null on the wire */
	j = control_row_json(r);
	t = json_array_get(json_object_get(j, "tools"), 0);
	assert_true(json_is_true(json_object_get(t, "granted")));
	assert_int_equal(json_integer_value(json_object_get(t, "grant_calls")), 2);
	assert_true(json_is_null(json_object_get(t, "grant_ms")));
	assert_int_equal(control_row_from_json(j, back), 0);
	assert_true(back->tools[0].granted);
	assert_int_equal(back->tools[0].grant_calls, 2);
	assert_int_equal(back->tools[0].grant_ms, -1);
	json_decref(j);
	r->tools[0].grant_calls = -1;
	r->tools[0].grant_ms = 899000;
	j = control_row_json(r);
	assert_int_equal(control_row_from_json(j, back), 0);
	assert_int_equal(back->tools[0].grant_calls, -1);
	assert_int_equal(back->tools[0].grant_ms, 899000);
	json_decref(j);
	free(back);
}

static void
test_row_and_event(void **state)
{
	struct session_row *r = calloc(1, sizeof *r);
	struct supervisor_event e = { .seq = 3, .kind = SUPERVISOR_EVENT_CUTOVER_ACK,
				      .session = "s-1", .tool = "store", .op = CUTOVER_REVOKE,
				      .revision = 4, .result = CUTOVER_APPLIED };
	json_t *j;

	(void)state;
	assert_non_null(r);
	snprintf(r->id, sizeof r->id, "s-1");
	r->state = SESSION_STATE_ENDED;
	r->end = SESSION_END_AGENT_EXIT;
	memcpy(r->reason, "daemon said \xff\xfe", 15);	/* not UTF-8: '?' */
	r->n_tools = 1;
	snprintf(r->tools[0].name, sizeof r->tools[0].name, "store");
	r->tools[0].allowed = true;
	j = control_row_json(r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "ended");
	assert_string_equal(json_string_value(json_object_get(j, "end")), "agent_exit");
	assert_string_equal(json_string_value(json_object_get(j, "reason")), "daemon said ??");
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "tools"), 0),
						 "allowed")));
	/* Not under a grant: nothing of one is written. */
	assert_null(json_object_get(json_array_get(json_object_get(j, "tools"), 0), "granted"));
	assert_null(json_object_get(json_array_get(json_object_get(j, "tools"), 0), "grant_ms"));
	json_decref(j);
	assert_grant_round_trip(r);
	free(r);
	j = control_event_json(&e);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "cutover_ack");
	assert_string_equal(json_string_value(json_object_get(j, "result")), "applied");
	assert_string_equal(json_string_value(json_object_get(j, "op")), "revoke");
	assert_int_equal(json_integer_value(json_object_get(j, "revision")), 4);
	json_decref(j);
}

static void
test_metrics(void **state)
{
	struct session_row rows[2] = { { .state = SESSION_STATE_RUNNING },
				       { .state = SESSION_STATE_ENDED,
					 .end = SESSION_END_WATCHDOG_FAILED } };
	struct supervisor_snapshot s = { .n = 2, .rows = rows, .started_total = 2,
					 .audit_failures = 1 };
	struct control_counts c = { .cutovers = 3, .rss_bytes = 4096, .pushed_whole = 6,
				    .pushed_delta = 40 };
	char *text;

	(void)state;
	rows[0].counters.allowed = 5;
	rows[1].counters.denied = 2;
	text = control_metrics_text(&s, &c);
	assert_non_null(text);
	assert_non_null(strstr(text, "airlock_sessions{state=\"running\"} 1\n"));
	assert_non_null(strstr(text, "airlock_calls_total{decision=\"allowed\"} 5\n"));
	assert_non_null(strstr(text, "airlock_calls_total{decision=\"denied\"} 2\n"));
	assert_non_null(strstr(text, "airlock_watchdog_stops 1\n"));
	assert_non_null(strstr(text, "airlock_cutovers_total 3\n"));
	assert_non_null(strstr(text, "airlock_audit_failures_total 1\n"));
	assert_non_null(strstr(text, "airlock_engine_rss_bytes 4096\n"));
	assert_non_null(strstr(text, "airlock_frozen 0\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_count 0\n"));
	assert_non_null(strstr(text, "airlock_snapshots_pushed_total{form=\"whole\"} 6\n"));
	assert_non_null(strstr(text, "airlock_snapshots_pushed_total{form=\"delta\"} 40\n"));
	free(text);
	control_count_ack(&c, 50);		/* 0.05 ms: in every bucket */
	control_count_ack(&c, 2500000);		/* 2.5 s: behind a slow call */
	text = control_metrics_text(&s, &c);
	assert_non_null(text);
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_bucket{le=\"0.0001\"} 1\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_bucket{le=\"1\"} 1\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_bucket{le=\"10\"} 2\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_bucket{le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_sum 2.500050\n"));
	assert_non_null(strstr(text, "airlock_cutover_ack_seconds_count 2\n"));
	assert_int_equal(strcmp(text + strlen(text) - 6, "# EOF\n"), 0);
	free(text);
	s.frozen = true;
	text = control_metrics_text(&s, &c);
	assert_non_null(text);
	assert_non_null(strstr(text, "airlock_frozen 1\n"));
	free(text);
}

static void
test_frozen(void **state)
{
	struct session_row row = { .state = SESSION_STATE_RUNNING, .frozen = true };
	struct supervisor_snapshot s = { .n = 1, .rows = &row, .frozen = true,
					 .frozen_revision = 9 };
	json_t *j, *by;

	(void)state;
	assert_true(control_op_changes(CONTROL_OP_FREEZE));
	assert_true(control_op_changes(CONTROL_OP_THAW));
	assert_string_equal(control_op_name(CONTROL_OP_THAW), "thaw");
	s.frozen_by = (struct snap_author){ .uid = 1000, .user = "ops", .via = "ctl" };
	j = control_snapshot_json(&s);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "frozen")));
	assert_int_equal(json_integer_value(json_object_get(j, "frozen_revision")), 9);
	by = json_object_get(j, "frozen_by");
	assert_string_equal(json_string_value(json_object_get(by, "by")), "ops");
	assert_int_equal(json_integer_value(json_object_get(by, "uid")), 1000);
	assert_string_equal(json_string_value(json_object_get(by, "via")), "ctl");
	assert_true(json_is_true(json_object_get(
		json_array_get(json_object_get(j, "sessions"), 0), "frozen")));
	json_decref(j);
	s.frozen = false;
	j = control_snapshot_json(&s);
	assert_true(json_is_false(json_object_get(j, "frozen")));
	assert_null(json_object_get(j, "frozen_by"));
	json_decref(j);
}


/* An author set field by field (a compound literal may leave its padding undefined). */
static void
set_author(struct snap_author *a, uint32_t uid, const char *user, const char *via)
{
	memset(a, 0, sizeof *a);
	a->uid = uid;
	snprintf(a->user, sizeof a->user, "%s", user);
	snprintf(a->via, sizeof a->via, "%s", via);
}

/* Field by field: the row is zeroed, padding too, and compared byte for byte. */
static void
fill_lease_counters(struct session_row *r)
{
	r->lease.armed = r->lease.late = true;
	r->lease.pulses = 11;
	r->lease.acks = 10;
	r->lease.age_ms = 77;
	r->lease.last_ack_us = 310;
	r->lease.max_ack_us = 990;
	r->lease.n_acks = 3;
	r->lease.ack_us[0] = 300;
	r->lease.ack_us[1] = 310;
	r->lease.ack_us[2] = 990;
	r->lease.watchdog_pid = 4242;
	snprintf(r->lease.reason, sizeof r->lease.reason, "no ack");
	r->counters.calls = 9;
	r->counters.allowed = 5;
	r->counters.denied = 4;
	r->counters.egress_denied = 1;
	r->counters.upstream_errors = 2;
	r->counters.upstream_spawns = 3;
	r->counters.non_text_items = 6;
	r->counters.audit_failures = 7;
	r->counters.denied_by[2] = 3;
	r->counters.denied_by[SNAP_RULES_MAX - 1] = 1;
}

/* An ended row's end. */
static void
fill_end(struct session_row *r)
{
	r->end = SESSION_END_ADMISSION_REFUSED;
	snprintf(r->refused_check, sizeof r->refused_check, "readonly_rootfs");
	snprintf(r->failed_step, sizeof r->failed_step, "start");
	snprintf(r->reason, sizeof r->reason, "the daemon said no");
	r->exit_code = 137;
	r->started = true;
	r->container_left = true;
	r->oom_killed = true;
	r->duration_ms = 999;
}

/* Every field a row carries: set to a value of its own, so a field lost on the way shows. */
static void
fill_row(struct session_row *r, const char *id, bool ended)
{
	size_t i;

	snprintf(r->id, sizeof r->id, "%s", id);
	snprintf(r->container, sizeof r->container, "c0ffee");
	snprintf(r->image, sizeof r->image, "sha256:abc");
	snprintf(r->runtime, sizeof r->runtime, "runsc");
	snprintf(r->class_name, sizeof r->class_name, "confidential");
	r->state = ended ? SESSION_STATE_ENDED : SESSION_STATE_RUNNING;
	r->started_ms = 1700000000123;
	r->uptime_ms = 4567;
	fill_lease_counters(r);
	r->stdout_bytes = 1000;
	r->stderr_bytes = 20;
	r->revision = 5;
	r->gate_open = true;
	r->frozen = true;
	r->pending = 2;
	r->pending_revision = 6;
	r->pending_age_ms = 15;
	r->call.active = true;
	r->call.revision = 5;
	r->call.age_ms = 8;
	snprintf(r->call.tool, sizeof r->call.tool, "search");
	r->n_tools = 2;
	for (i = 0; i < 2; i++) {
		snprintf(r->tools[i].name, sizeof r->tools[i].name, "tool%zu", i);
		snprintf(r->tools[i].data_class, sizeof r->tools[i].data_class, "internal");
		r->tools[i].approved = true;
		r->tools[i].allowed = i == 0;
	}
	r->admission_first = ADMISSION_ADMITTED;
	r->admission_second = ended ? ADMISSION_REFUSED : ADMISSION_ADMITTED;
	r->audit_failures = 1;
	if (ended)
		fill_end(r);
}

/* Every snapshot field but its rows (s zeroed: padding included, never an initialiser). */
static void
fill_snapshot(struct supervisor_snapshot *s)
{
	s->generation = 12;
	s->taken_ms = 1700000001000;
	s->revision = 6;
	s->live = 1;
	s->started_total = 2;
	s->forgotten_total = 3;
	s->events_dropped = 4;
	s->alerts_dropped = 5;
	s->audit_backlog = 6;
	s->audit_failures = 7;
	s->containers_left = 1;
	s->n_standing = 1;
	snprintf(s->standing[0], sizeof s->standing[0], "send_mail");
	set_author(&s->standing_by[0], 1001, "alice", "console");
	s->standing_revision[0] = 4;
	s->frozen = true;
	set_author(&s->frozen_by, 0, "root", "ctl");
	s->frozen_revision = 6;
	s->n_pools = 2;
	snprintf(s->pools[0].key, sizeof s->pools[0].key, "0123456789abcdef");
	snprintf(s->pools[0].image, sizeof s->pools[0].image, "sha256:feed");
	snprintf(s->pools[0].runtime, sizeof s->pools[0].runtime, "runsc");
	s->pools[0].size = 4;
	s->pools[0].ready = 3;
	s->pools[0].warming = 1;
	s->pools[0].claimed = 9;
	s->pools[0].discarded = 2;
	s->pools[0].failed = 1;
	snprintf(s->pools[1].key, sizeof s->pools[1].key, "fedcba9876543210");
	s->pools[1].size = 1;
}

/* A cutover's acknowledgement, every field set. */
static void
fill_event(struct supervisor_event *e)
{
	memset(e, 0, sizeof *e);
	e->seq = 41;
	e->wall_ms = 1700000002000;
	e->kind = SUPERVISOR_EVENT_CUTOVER_ACK;
	e->alert = true;
	snprintf(e->session, sizeof e->session, "s-0001");
	snprintf(e->tool, sizeof e->tool, "send_mail");
	e->op = CUTOVER_RESTORE;
	e->revision = 6;
	e->result = CUTOVER_NOT_APPLICABLE;
	e->waited_us = 1234;
	snprintf(e->reason, sizeof e->reason, "stale");
	set_author(&e->by, 1001, "alice", "console");
}

/* What the engine writes, a console reads back the same, field for field. */
static void
test_round_trip(void **state)
{
	struct session_row *rows = calloc(2, sizeof *rows);
	struct supervisor_snapshot s, back = { 0 }, same;
	json_t *j;

	(void)state;
	/* Compared byte for byte: padding included, so memset, never an initialiser. */
	memset(&s, 0, sizeof s);
	s.n = 2;
	s.rows = rows;
	assert_non_null(rows);
	fill_row(&rows[0], "s-0001", false);
	fill_row(&rows[1], "s-0002", true);
	fill_snapshot(&s);
	j = control_snapshot_json(&s);
	assert_int_equal(control_snapshot_from_json(j, &back), 0);
	json_decref(j);
	assert_int_equal(back.n, 2);
	assert_memory_equal(&back.rows[0], &rows[0], sizeof rows[0]);
	assert_memory_equal(&back.rows[1], &rows[1], sizeof rows[1]);
	memcpy(&same, &back, sizeof same);
	same.rows = s.rows;
	same.cap = s.cap;
	assert_memory_equal(&same, &s, sizeof s);
	free(rows);
	supervisor_snapshot_free(&back);
}

/* An event and a detail, likewise. */
static void
test_round_trip_detail(void **state)
{
	/* Static: their padding is zero, as the decoder leaves it. */
	static const struct upstream_view views[2] = {
		{ .name = "vault", .started = true,
		  .user = "airlock-upstream", .uid = 999, .gid = 995, .uid_changed = true,
		  .landlock_abi = 7, .landlock_rules = 23, .paths_rw = 1, .seccomp = "3f2a9c1e4b5d6f70",
		  .network = "none", .isolation = "process" },
		{ .name = "outbox", .user = "mailer",
		  .paths_ro = 2, .network = "connect 443 bind - udp no", .isolation = "process",
		  .privileged = true, .unconfined_ok = true },
	};
	struct session_detail *d = calloc(2, sizeof *d);
	struct supervisor_event e, eb;
	json_t *j;

	(void)state;
	assert_non_null(d);
	fill_event(&e);
	j = control_event_json(&e);
	assert_int_equal(control_event_from_json(j, &eb), 0);
	json_decref(j);
	assert_memory_equal(&eb, &e, sizeof e);

	fill_row(&d[0].row, "s-0002", true);
	d[0].first.verdict = ADMISSION_ADMITTED;
	d[0].second.verdict = ADMISSION_REFUSED;
	d[0].second.n = 1;
	snprintf(d[0].second.items[0].id, sizeof d[0].second.items[0].id, "readonly_rootfs");
	snprintf(d[0].second.items[0].expected, sizeof d[0].second.items[0].expected, "true");
	snprintf(d[0].second.items[0].observed, sizeof d[0].second.items[0].observed, "false");
	d[0].second.items[0].run = true;
	d[0].n_timeline = 1;
	memcpy(&d[0].timeline[0], &e, sizeof e);
	d[0].n_upstreams = 2;
	memcpy(d[0].upstreams, views, sizeof views);
	j = control_detail_json(&d[0]);
	assert_int_equal(control_detail_from_json(j, &d[1]), 0);
	json_decref(j);
	assert_memory_equal(&d[1], &d[0], sizeof d[0]);
	free(d);
}

/* A hold or quarantine event with what its kind gives meaning to (snapshot.h). */
static void
fill_hold_event(struct supervisor_event *e, enum event_kind kind)
{
	memset(e, 0, sizeof *e);
	e->seq = 52;
	e->wall_ms = 1700000003000;
	e->kind = kind;
	e->alert = kind != SUPERVISOR_EVENT_HOLD_DECIDED;
	snprintf(e->session, sizeof e->session, "s-0003");
	if (kind == SUPERVISOR_EVENT_HOLD_WAITING || kind == SUPERVISOR_EVENT_HOLD_DECIDED) {
		e->hold = 17;
		snprintf(e->tool, sizeof e->tool, "store");
	}
	if (kind == SUPERVISOR_EVENT_HOLD_DECIDED) {
		e->waited_us = 2500000;
		snprintf(e->reason, sizeof e->reason, "approved_rest");
	}
	if (kind == SUPERVISOR_EVENT_PAUSE_FAILED)
		snprintf(e->reason, sizeof e->reason, "pause");
	if (kind == SUPERVISOR_EVENT_HOLD_DECIDED || kind == SUPERVISOR_EVENT_QUARANTINE ||
	    kind == SUPERVISOR_EVENT_RELEASE)
		set_author(&e->by, 1001, "alice", "ctl");
}

/*
 * The hold and quarantine events through the one table: their kind's id,
 * their fields and nothing else on the wire, and back field for field.
 */
static void
test_round_trip_hold_events(void **state)
{
	static const struct {
		enum event_kind kind;
		const char *id, *keys;	/* besides seq, wall_ms, kind, alert, session; in table order */
	} cases[] = {
		{ SUPERVISOR_EVENT_HOLD_WAITING, "hold_waiting", "tool hold" },
		{ SUPERVISOR_EVENT_HOLD_DECIDED, "hold_decided", "tool by waited_us reason hold" },
		{ SUPERVISOR_EVENT_QUARANTINE, "quarantine", "by" },
		{ SUPERVISOR_EVENT_RELEASE, "release", "by" },
		{ SUPERVISOR_EVENT_PAUSE_FAILED, "pause_failed", "reason" },
		{ SUPERVISOR_EVENT_UNPAUSED, "unpaused", "" },
	};
	struct supervisor_event e, back;
	char keys[128];
	const char *k;
	json_t *j, *v;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fill_hold_event(&e, cases[i].kind);
		j = control_event_json(&e);
		assert_non_null(j);
		assert_string_equal(json_string_value(json_object_get(j, "kind")), cases[i].id);
		keys[0] = '\0';
		json_object_foreach(j, k, v) {
			if (strcmp(k, "seq") && strcmp(k, "wall_ms") && strcmp(k, "kind") &&
			    strcmp(k, "alert") && strcmp(k, "session")) {
				len = strlen(keys);
				snprintf(keys + len, sizeof keys - len, "%s%s", len ? " " : "", k);
			}
		}
		assert_string_equal(keys, cases[i].keys);
		assert_int_equal(control_event_from_json(j, &back), 0);
		json_decref(j);
		assert_memory_equal(&back, &e, sizeof e);
	}
}

/*
 * What ctl is told an event's kind says (a state, an end, an ack's result)
 * is what the event's table writes for that kind, for every kind.
 */
static void
test_event_says(void **state)
{
	struct supervisor_event e;
	unsigned said[3] = { 0 };
	json_t *j;

	(void)state;
	for (int k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++) {
		memset(&e, 0, sizeof e);
		e.kind = (enum event_kind)k;
		snprintf(e.session, sizeof e.session, "s-1");
		snprintf(e.tool, sizeof e.tool, "store");
		e.state = SESSION_STATE_RUNNING;
		e.end = SESSION_END_OPERATOR_STOP;
		e.result = CUTOVER_APPLIED;
		assert_non_null(j = control_event_json(&e));
		assert_int_equal(control_event_says_state(&e), json_object_get(j, "state") != NULL);
		assert_int_equal(control_event_says_end(&e), json_object_get(j, "end") != NULL);
		assert_int_equal(control_event_says_result(&e), json_object_get(j, "result") != NULL);
		said[0] += control_event_says_state(&e);
		said[1] += control_event_says_end(&e);
		said[2] += control_event_says_result(&e);
		json_decref(j);
	}
	/* Each is said by exactly its one kind: state, end, cutover_ack. */
	assert_int_equal(said[0], 1);
	assert_int_equal(said[1], 1);
	assert_int_equal(said[2], 1);
}

/* A snapshot body of rows[0..n), taken at taken_ms. */
static json_t *
snapshot_of(struct session_row *rows, size_t n, int64_t taken_ms, bool frozen)
{
	struct supervisor_snapshot s;

	memset(&s, 0, sizeof s);
	s.rows = rows;
	s.n = n;
	s.taken_ms = taken_ms;
	s.generation = (uint64_t)(taken_ms % 1000);
	s.live = n;
	s.frozen = frozen;
	if (frozen)
		set_author(&s.frozen_by, 0, "root", "ctl");
	return control_snapshot_json(&s);
}

static size_t
text_size(const json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT);
	size_t n = strlen(t);

	free(t);
	return n;
}

/* The delta from -> to, checked: applied to a copy of from, it gives to. */
static json_t *
delta_applies(const json_t *from, const json_t *to)
{
	json_t *d = control_snapshot_delta(from, to), *base = json_deep_copy(from);

	assert_non_null(d);
	assert_int_equal(control_snapshot_apply(base, d), 0);
	if (!json_equal(base, to)) {
		char *got = json_dumps(base, JSON_COMPACT), *want = json_dumps(to, JSON_COMPACT);

		fail_msg("applied: %s\nwant: %s", got, want);
	}
	json_decref(base);
	return d;
}

/* Pushed snapshots as deltas: only what moved, and the same snapshot once applied. */
static void
test_delta(void **state)
{
	struct session_row *rows = calloc(4, sizeof *rows);
	json_t *a, *b, *c, *d, *changed;

	(void)state;
	assert_non_null(rows);
	fill_row(&rows[0], "s-0001", false);
	fill_row(&rows[1], "s-0002", true);
	a = snapshot_of(rows, 2, 1700000001000, true);
	/* A looping session's counters and lease move; the ended one stays. */
	rows[0].counters.calls++;
	rows[0].counters.allowed++;
	rows[0].uptime_ms += 250;
	rows[0].lease.pulses++;
	rows[0].lease.ack_us[rows[0].lease.n_acks++] = 280;
	rows[0].call.active = false;
	b = snapshot_of(rows, 2, 1700000001250, true);
	d = delta_applies(a, b);
	changed = json_object_get(d, "rows");
	assert_int_equal(json_object_size(changed), 1);
	assert_non_null(json_object_get(changed, "s-0001"));
	assert_null(json_object_get(json_object_get(changed, "s-0001"), "image"));
	assert_null(json_object_get(d, "order"));
	assert_int_equal(json_integer_value(json_object_get(d, "base")), 1700000001000);
	assert_true(text_size(d) * 4 < text_size(b));
	json_decref(d);

	/* A new session first, the ended one forgotten, the engine thawed. */
	fill_row(&rows[2], "s-0003", false);
	rows[3] = rows[0];
	c = snapshot_of(&rows[2], 2, 1700000001500, false);
	d = delta_applies(b, c);
	assert_int_equal(json_array_size(json_object_get(d, "order")), 2);
	assert_non_null(json_object_get(json_object_get(d, "rows"), "s-0003"));
	assert_null(json_object_get(json_object_get(d, "rows"), "s-0001"));
	assert_true(json_is_null(json_object_get(json_object_get(d, "patch"), "frozen_by")));
	json_decref(d);
	/* Nothing moved but the time it was taken. */
	json_decref(b);
	b = snapshot_of(&rows[2], 2, 1700000001750, false);
	d = delta_applies(c, b);
	assert_null(json_object_get(d, "rows"));
	json_decref(d);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	free(rows);
}

/* A delta that does not fit its base is refused whole, never half applied as if fine. */
static void
test_delta_refused(void **state)
{
	struct session_row *rows = calloc(2, sizeof *rows);
	const char *bad[] = {
		"{\"base\": 1700000001000, \"order\": [\"s-0001\", \"s-0001\"]}",
		"{\"base\": 1700000001000, \"order\": [\"s-0001\", \"s-9999\"]}",
		"{\"base\": 1700000001000, \"order\": \"s-0001\"}",
		"{\"base\": 1700000001000, \"order\": [7]}",
		"{\"base\": 1700000001000, \"rows\": {\"s-9999\": {\"state\": \"running\"}}}",
		"{\"base\": 1700000001000, \"rows\": {\"s-0001\": 7}}",
		"{\"base\": 1700000001000, \"rows\": {\"s-0001\": {\"id\": \"s-0002\"}}}",
		/* a new row whose body does not name it */
		"{\"base\": 1700000001000, \"order\": [\"s-0003\"], \"rows\": {\"s-0003\": {}}}",
		"{\"base\": 1700000001000, \"rows\": []}",
		"{\"base\": 1700000001000, \"patch\": {\"sessions\": []}}",
		"{\"base\": 1700000001000, \"patch\": 3}",
		"{\"base\": 1700000000999}",
		"{\"base\": \"1700000001000\"}",
		"{}",
	};
	json_t *a, *base, *d, *nulls;
	size_t i;

	(void)state;
	assert_non_null(rows);
	fill_row(&rows[0], "s-0001", false);
	fill_row(&rows[1], "s-0002", true);
	a = snapshot_of(rows, 2, 1700000001000, false);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		d = json_loads(bad[i], 0, NULL);
		base = json_deep_copy(a);
		assert_non_null(d);
		if (control_snapshot_apply(base, d) != -1)
			fail_msg("applied: %s", bad[i]);
		json_decref(base);
		json_decref(d);
	}
	/* The well-formed one applies to its own base only. */
	d = json_loads("{\"base\": 1700000001000, \"order\": [\"s-0002\"]}", 0, NULL);
	base = json_deep_copy(a);
	assert_int_equal(control_snapshot_apply(base, d), 0);
	assert_int_equal(json_array_size(json_object_get(base, "sessions")), 1);
	assert_int_equal(control_snapshot_apply(base, d), 0);	/* taken_ms unchanged */
	json_decref(d);
	json_decref(base);
	/* A body holding a null cannot be said as a patch: sent whole. */
	nulls = json_deep_copy(a);
	json_object_set_new(nulls, "taken_ms", json_integer(1700000001250));
	json_object_set_new(json_array_get(json_object_get(nulls, "sessions"), 0), "reason",
			    json_null());
	assert_null(control_snapshot_delta(a, nulls));
	json_decref(nulls);
	json_decref(a);
	free(rows);
}

/* A broken or foreign engine: bounded copies, unknown words refused, never guessed. */
static void
test_decode_hostile(void **state)
{
	struct supervisor_snapshot back = { 0 };
	struct supervisor_event e;
	struct session_row r;
	char big[1000], *text;
	json_t *j, *tools;
	size_t i;

	(void)state;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	tools = json_array();
	for (i = 0; i < SNAP_TOOLS_MAX + 10; i++)
		json_array_append_new(tools, json_pack("{s:s}", "name", big));
	j = json_pack("{s:s, s:s, s:o, s:s}", "id", big, "state", "running", "tools", tools,
		      "reason", big);
	assert_int_equal(control_row_from_json(j, &r), 0);
	assert_int_equal(strlen(r.id), SNAP_ID_MAX - 1);
	assert_int_equal(r.n_tools, SNAP_TOOLS_MAX);
	assert_int_equal(strlen(r.tools[SNAP_TOOLS_MAX - 1].name), SNAP_NAME_MAX - 1);
	json_decref(j);

	j = json_pack("{s:s, s:s}", "id", "s-1", "state", "exploded");
	assert_int_equal(control_row_from_json(j, &r), -1);
	json_decref(j);
	j = json_pack("{s:s}", "state", "running");
	assert_int_equal(control_row_from_json(j, &r), -1);
	json_decref(j);
	j = json_pack("{s:s}", "kind", "nope");
	assert_int_equal(control_event_from_json(j, &e), -1);
	json_decref(j);
	j = json_pack("{s:i}", "live", 3);
	assert_int_equal(control_snapshot_from_json(j, &back), -1);
	json_decref(j);
	text = "{\"sessions\": [{\"id\": \"s-1\", \"state\": \"running\"}, 7, "
	       "{\"id\": \"s-2\", \"state\": \"bogus\"}], \"live\": -5}";
	j = json_loads(text, 0, NULL);
	assert_int_equal(control_snapshot_from_json(j, &back), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(back.rows[0].id, "s-1");
	assert_int_equal(back.live, 0);
	json_decref(j);
	supervisor_snapshot_free(&back);
}

/*
 * Held calls: hold is operate and names sessions or all like a revoke;
 * pending is view; approve and deny need a held call's id, rest is
 * approve's only. The pending list through its table and back, whole.
 */
static void
test_holds(void **state)
{
	struct control_request r;
	struct control_pending in = { .n = 2 }, out;
	const char *error;
	const char *line = "{\"id\":3,\"op\":\"approve\",\"hold\":17,\"rest\":true}";
	json_t *reply;

	(void)state;
	assert_int_equal(control_op_role(CONTROL_OP_PENDING), CONTROL_ROLE_VIEW);
	assert_int_equal(control_op_role(CONTROL_OP_HOLD), CONTROL_ROLE_OPERATE);
	assert_int_equal(control_op_role(CONTROL_OP_APPROVE), CONTROL_ROLE_OPERATE);
	assert_int_equal(control_op_role(CONTROL_OP_DENY), CONTROL_ROLE_OPERATE);
	assert_int_equal(control_parse(line, strlen(line), &r, &error), 0);
	assert_int_equal(r.op, CONTROL_OP_APPROVE);
	assert_int_equal(r.hold_id, 17);
	assert_true(r.rest);
	control_request_free(&r);
	assert_null(parse_error("{\"id\":1,\"op\":\"deny\",\"hold\":17}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"pending\"}", NULL));
	assert_null(parse_error("{\"id\":1,\"op\":\"hold\",\"tool\":\"save\",\"all\":true}", NULL));
	assert_refused("{\"id\":1,\"op\":\"deny\",\"hold\":17,\"rest\":true}", CONTROL_E_KEY);
	assert_refused("{\"id\":1,\"op\":\"approve\"}", CONTROL_E_MISSING);
	assert_refused("{\"id\":1,\"op\":\"approve\",\"hold\":-1}", CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"approve\",\"hold\":\"7\"}", CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"hold\",\"tool\":\"store\"}", CONTROL_E_MISSING);
	assert_refused("{\"id\":1,\"op\":\"hold\",\"tool\":\"store\",\"sessions\":[]}",
		       CONTROL_E_ARG);
	assert_refused("{\"id\":1,\"op\":\"pending\",\"tool\":\"store\"}", CONTROL_E_KEY);
	/* a class flow instead of a tool: parsed, written back the same */
	line = "{\"id\":5,\"op\":\"hold\",\"flow\":\"confidential>public\",\"all\":true}";
	assert_int_equal(control_parse(line, strlen(line), &r, &error), 0);
	assert_string_equal(r.flow, "confidential>public");
	assert_true(r.has & CONTROL_KEY(FLOW));
	assert_false(r.has & CONTROL_KEY(TOOL));
	reply = control_request_json(&r);
	assert_non_null(reply);
	assert_string_equal(json_string_value(json_object_get(reply, "flow")), "confidential>public");
	json_decref(reply);
	control_request_free(&r);
	assert_null(parse_error("{\"id\":1,\"op\":\"restore\",\"flow\":\"pii>pii\",\"sessions\":[\"s-1\"]}",
				NULL));

	memset(in.calls, 0, sizeof in.calls);
	in.calls[0] = (struct hold_view){ .id = 4, .request_bytes = 31, .since_ms = 1700000000000,
					  .waited_ms = 1500, .earlier_calls = 3 };
	snprintf(in.calls[0].session, sizeof in.calls[0].session, "s-1");
	snprintf(in.calls[0].tool, sizeof in.calls[0].tool, "store");
	snprintf(in.calls[0].alias, sizeof in.calls[0].alias, "save");
	snprintf(in.calls[0].session_class, sizeof in.calls[0].session_class, "confidential");
	snprintf(in.calls[0].sink_ceiling, sizeof in.calls[0].sink_ceiling, "confidential");
	memset(in.calls[0].request_hash, 'a', SNAP_HASH_MAX - 1);
	snprintf(in.calls[0].held_by, sizeof in.calls[0].held_by, "tool");
	in.calls[1] = in.calls[0];
	in.calls[1].id = 9;
	snprintf(in.calls[1].held_by, sizeof in.calls[1].held_by, "flow");	/* a declassification */
	in.calls[1].declassify = true;
	reply = control_ok(3);
	assert_int_equal(control_pending_into(&in, reply), 0);
	assert_int_equal(json_array_size(json_object_get(reply, "pending")), 2);
	assert_int_equal(control_pending_from_json(reply, &out), 0);
	assert_int_equal(out.n, 2);
	assert_memory_equal(out.calls, in.calls, 2 * sizeof in.calls[0]);
	json_decref(reply);
}

/* A reply's JSON as one line, for comparing what goes on the wire. */
static void
assert_line(const json_t *v, const char *want)
{
	size_t n;
	char *line = control_line(v, CONTROL_FRAME_MAX, &n);

	assert_non_null(line);
	assert_string_equal(line, want);
	free(line);
}

/*
 * The answers of changes, each declared once: a cutover's (what it acted
 * on, acks, sessions still waited on or ended) and the others' by op, on
 * the wire as before and read back whole; an error's reason only when
 * there is one; an answer read as another op's refused, an ack in words
 * not its table's left out.
 */
static void
test_answers(void **state)
{
	static struct control_cutover in, out;
	static struct control_done d, back;
	json_t *reply;

	(void)state;
	in.revision = 7;
	in.targets = 3;
	snprintf(in.tool, sizeof in.tool, "create_entities");
	in.n_acks = 1;
	snprintf(in.acks[0].session, sizeof in.acks[0].session, "s-1");
	in.acks[0].result = CUTOVER_NOT_APPLICABLE;
	in.acks[0].waited_us = 42;
	in.n_pending = 1;
	snprintf(in.pending[0], SNAP_ID_MAX, "s-2");
	in.n_ended = 1;
	snprintf(in.ended[0], SNAP_ID_MAX, "s-3");
	in.unsaved = true;	/* the log refused what stands now */
	reply = control_ok(5);
	assert_int_equal(control_cutover_into(&in, reply), 0);
	assert_line(reply, "{\"id\":5,\"ok\":true,\"revision\":7,\"targets\":3,"
		    "\"tool\":\"create_entities\",\"acks\":[{\"session\":\"s-1\","
		    "\"result\":\"not_applicable\",\"waited_us\":42}],\"pending\":[\"s-2\"],"
		    "\"ended\":[\"s-3\"],\"unsaved\":true}\n");
	assert_int_equal(control_cutover_from_json(reply, &out), 0);
	assert_memory_equal(&out, &in, sizeof in);
	json_object_set_new(json_array_get(json_object_get(reply, "acks"), 0), "result",
			    json_string("CANARY"));
	assert_int_equal(control_cutover_from_json(reply, &out), 0);
	assert_int_equal(out.n_acks, 0);	/* an ack in words not its table's: left out */
	assert_int_equal(out.n_pending, 1);
	json_decref(reply);

	snprintf(d.session, sizeof d.session, "s-9");
	reply = control_ok(6);
	assert_int_equal(control_done_into(CONTROL_OP_START, &d, reply), 0);
	assert_line(reply, "{\"id\":6,\"ok\":true,\"session\":\"s-9\"}\n");
	assert_int_equal(control_done_from_json(CONTROL_OP_STOP, reply, &back), 0);
	assert_string_equal(back.session, "s-9");
	assert_int_equal(control_done_from_json(CONTROL_OP_REVOKE, reply, &back), -1);
	assert_int_equal(control_done_into(CONTROL_OP_SNAPSHOT, &d, reply), -1);
	json_decref(reply);

	memset(&d, 0, sizeof d);
	d.n_ids = 2;
	snprintf(d.ids[0], SNAP_ID_MAX, "s-1");
	snprintf(d.ids[1], SNAP_ID_MAX, "s-2");
	d.n_kept = 1;
	snprintf(d.kept[0], SNAP_ID_MAX, "s-3");
	d.stopped = 4;
	reply = control_ok(8);
	assert_int_equal(control_done_into(CONTROL_OP_FORGET, &d, reply), 0);
	assert_line(reply, "{\"id\":8,\"ok\":true,\"forgotten\":[\"s-1\",\"s-2\"],"
		    "\"not_ended\":[\"s-3\"]}\n");
	json_decref(reply);
	reply = control_ok(9);
	assert_int_equal(control_done_into(CONTROL_OP_RELEASE, &d, reply), 0);
	assert_int_equal(control_done_into(CONTROL_OP_STOP_ALL, &d, reply), 0);
	assert_line(reply, "{\"id\":9,\"ok\":true,\"sessions\":[\"s-1\",\"s-2\"],"
		    "\"stopped\":4}\n");
	assert_int_equal(control_done_from_json(CONTROL_OP_QUARANTINE, reply, &back), 0);
	assert_int_equal(back.n_ids, 2);
	assert_string_equal(back.ids[1], "s-2");
	assert_int_equal(back.stopped, 0);	/* not quarantine's: not read */
	json_decref(reply);

	reply = control_error(4, CONTROL_E_CONFIG, "upstreams.n: CANARY-free words");
	assert_line(reply, "{\"id\":4,\"ok\":false,\"error\":\"" CONTROL_E_CONFIG "\","
		    "\"reason\":\"upstreams.n: CANARY-free words\"}\n");
	json_decref(reply);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_event_says),
		cmocka_unit_test(test_inline_config),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_refusal_names_id),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_not_allowed),
		cmocka_unit_test(test_hello_and_push),
		cmocka_unit_test(test_row_and_event),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_frozen),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_detail),
		cmocka_unit_test(test_round_trip_hold_events),
		cmocka_unit_test(test_decode_hostile),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_delta_refused),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
