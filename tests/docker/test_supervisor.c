/*
 * The supervisor against the real daemon and real upstreams: many live
 * sessions, a policy cutover to all of them, the gate held by an in-flight
 * call, invalid updates closing admission, restore keeping the class,
 * force-stop, events, and a shutdown that leaves no container.
 *
 * Environment (set by supervisor.sh): AIRLOCK_AGENT_IMAGE, AIRLOCK_UPSTREAM,
 * AIRLOCK_BIN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

#define SESSIONS 20

static char work[] = "/tmp/airlock-supervisor-XXXXXX";
static char db[128];
static struct audit *audit;

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !v[0]) {
		fprintf(stderr, "test_supervisor: %s is not set (run through supervisor.sh)\n", name);
		exit(1);
	}
	return v;
}

static void
make_config(struct airlock_config *c, const char *mode, const char *sink,
	    const char *vault_mode, long timeout_ms)
{
	char text[2048];
	struct al_err err;
	json_t *root;

	snprintf(text, sizeof text,
		 "{\"profile\": {\"image\": \"%s\", \"cmd\": [\"%s\"]},"
		 " \"bounds\": {\"session_ms\": 120000, \"calls\": 4096, \"stdout_bytes\": 4194304},"
		 " \"upstreams\": {\"vault\": {\"argv\": [\"%s\", \"--sink\", \"%s\", \"--mode\", \"%s\"],"
		 "                            \"timeout_ms\": %ld},"
		 "               \"board\": {\"argv\": [\"%s\", \"--sink\", \"%s.board\"]}},"
		 " \"tools\": {\"store\": {\"upstream\": \"vault\", \"remote\": \"store\","
		 "   \"data_class\": \"confidential\", \"sink_ceiling\": \"confidential\","
		 "   \"response_ceiling\": \"confidential\"},"
		 "  \"post\": {\"upstream\": \"board\", \"remote\": \"publish\", \"data_class\": \"public\","
		 "   \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}},"
		 " \"aliases\": {\"save\": \"store\", \"publish\": \"post\"},"
		 " \"initial\": {\"class\": \"confidential\", \"file\": \"%s/payload.json\"}}",
		 env("AIRLOCK_AGENT_IMAGE"), mode, env("AIRLOCK_UPSTREAM"), sink, vault_mode,
		 timeout_ms, env("AIRLOCK_UPSTREAM"), sink, work);
	root = json_loads(text, 0, NULL);
	config_init(c);
	assert_non_null(root);
	if (config_load_json(c, root, 2, &err) < 0)
		fail_msg("config: %s", err.msg);
	json_decref(root);
}

static size_t
lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* Rows of the audit log matching a WHERE clause. */
static int
rows(const char *where)
{
	char sql[512];
	sqlite3 *h;
	sqlite3_stmt *st;
	int n = -1;

	snprintf(sql, sizeof sql, "select count(*) from audit_entries where %s", where);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

static struct session_snapshot *
snap_of(struct supervisor_snapshot *snap, const char *id)
{
	size_t i;

	for (i = 0; i < snap->n; i++)
		if (strcmp(snap->sessions[i].st.session_id, id) == 0)
			return &snap->sessions[i];
	return NULL;
}

/* Wait (at most ms) until every session in ids is running. */
static bool
all_running(struct supervisor *s, char ids[][40], size_t n, int ms)
{
	struct supervisor_snapshot snap;
	size_t i, ok;

	for (; ms > 0; ms -= 100) {
		assert_int_equal(supervisor_snapshot(s, &snap), 0);
		for (i = ok = 0; i < n; i++) {
			struct session_snapshot *ss = snap_of(&snap, ids[i]);

			ok += ss && ss->st.state == STATE_RUNNING;
		}
		supervisor_snapshot_free(&snap);
		if (ok == n)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

static bool
wait_lines(const char *path, size_t want, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (lines(path) >= want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static struct supervisor *
open_supervisor(void)
{
	struct supervisor_options o = { .audit = audit, .watchdog_exe = env("AIRLOCK_BIN") };
	struct supervisor *s;
	struct al_err err;

	if (supervisor_open(&o, &s, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	return s;
}

#define CANARY "SNAPSHOT-CANARY-7f3a"

/*
 * Everything the console could ever receive — every snapshot byte and
 * every event — holds no payload, while the permitted sink does (the
 * positive control: the canary really passed through these sessions).
 */
static void
assert_no_canary(struct supervisor *s, const char *sink)
{
	struct supervisor_snapshot snap;
	struct supervisor_event ev[SUPERVISOR_EVENTS_MAX];
	char buf[65536];
	size_t n;
	FILE *f = fopen(sink, "r");

	assert_non_null(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_non_null(strstr(buf, CANARY));
	assert_int_equal(supervisor_snapshot(s, &snap), 0);
	assert_null(memmem(snap.sessions, snap.n * sizeof *snap.sessions, CANARY, strlen(CANARY)));
	supervisor_snapshot_free(&snap);
	n = supervisor_events(s, ev, SUPERVISOR_EVENTS_MAX);
	assert_null(memmem(ev, n * sizeof *ev, CANARY, strlen(CANARY)));
}

/* 20 live sessions; one cutover revokes the tool in all of them at once. */
static void
test_cutover_many(void **state)
{
	static struct airlock_config cfg[SESSIONS];
	char ids[SESSIONS][40], sink[SESSIONS][160], where[1024];
	size_t before[SESSIONS], i, n;
	struct cutover_ack acks[SESSIONS];
	struct supervisor_event ev[SUPERVISOR_EVENTS_MAX];
	struct supervisor *s = open_supervisor();
	struct al_err err;
	json_t *revoke = json_pack("{s:i, s:[]}", "revision", 1, "allowed");
	bool alert = false;

	(void)state;
	for (i = 0; i < SESSIONS; i++) {
		snprintf(sink[i], sizeof sink[i], "%s/many-%zu.sink", work, i);
		make_config(&cfg[i], "loop", sink[i], "echo", 10000);
		if (supervisor_start(s, &cfg[i], ids[i], &err) < 0)
			fail_msg("%s", err.msg);
	}
	assert_true(all_running(s, ids, SESSIONS, 90000));
	for (i = 0; i < SESSIONS; i++)
		assert_true(wait_lines(sink[i], 1, 20000));	/* each call observed first */
	n = supervisor_cutover(s, revoke, NULL, 0, acks, SESSIONS);
	assert_int_equal(n, SESSIONS);
	for (i = 0; i < n; i++) {
		assert_int_equal(acks[i].ack.verdict, GATE_APPLIED);
		assert_int_equal(acks[i].ack.revision, 1);
	}
	for (i = 0; i < SESSIONS; i++)
		before[i] = lines(sink[i]);
	usleep(1500 * 1000);	/* several more loop iterations per agent */
	for (i = 0; i < SESSIONS; i++) {
		assert_int_equal(lines(sink[i]), before[i]);	/* nothing after the ack */
		snprintf(where, sizeof where, "session_id='%s' and type='call' and tool='store'"
			 " and decision='denied' and rule='revoked' and revision=1", ids[i]);
		assert_true(rows(where) > 0);
	}
	n = supervisor_events(s, ev, SUPERVISOR_EVENTS_MAX);
	for (i = 0; i < n; i++)
		alert |= ev[i].kind == EVENT_ALERT && strstr(ev[i].text, "cutover applied: revision 1");
	assert_true(alert);
	assert_no_canary(s, sink[0]);
	assert_int_equal(supervisor_shutdown(s), 0);	/* zero containers left */
	assert_int_equal(supervisor_live(s), 0);
	supervisor_close(s);
	for (i = 0; i < SESSIONS; i++)
		config_free(&cfg[i]);
	json_decref(revoke);
}

static int
calls_with(const char *id, const char *tool, const char *decision, const char *rule,
	   int revision)
{
	char where[320];

	snprintf(where, sizeof where, "session_id='%s' and type='call' and tool='%s' and"
		 " decision='%s' and rule='%s' and revision=%d", id, tool, decision, rule, revision);
	return rows(where);
}

static struct gate_ack
cutover_one(struct supervisor *s, const char *id, const char *json)
{
	struct cutover_ack ack;
	const char *ids[] = { id };
	json_t *u = json_loads(json, 0, NULL);

	assert_non_null(u);
	assert_int_equal(supervisor_cutover(s, u, ids, 1, &ack, 1), 1);
	json_decref(u);
	return ack.ack;
}

/* The sink stays as it is for a while: nothing was delivered. */
static bool
untouched(const char *sink, int ms)
{
	size_t n = lines(sink);

	usleep((useconds_t)ms * 1000);
	return lines(sink) == n;
}

/*
 * One session end to end through the gate: an in-flight call (the upstream
 * answers its first call after 10 s) holds a revoke until it finished;
 * invalid updates close admission with the sink untouched; a valid newer
 * revision restores the tool, while the public tool stays denied because
 * the session class never went down.
 */
static void
test_gate_end_to_end(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	struct supervisor_snapshot snap;
	struct gate_ack ack;
	struct al_err err;
	char ids[1][40], sink[160];
	static const char *invalid[] = {
		"{\"revision\": 0, \"allowed\": [\"store\"]}",
		"{\"revision\": \"5\", \"allowed\": [\"store\"]}",
		"{\"revision\": 5, \"allowed\": [\"exfiltrate\"]}",
		"{\"revision\": 1, \"allowed\": [\"store\"]}",	/* stale: 1 is current */
	};
	size_t i;

	(void)state;
	snprintf(sink, sizeof sink, "%s/gate.sink", work);
	make_config(&cfg, "loop_both", sink, "slow", 15000);
	if (supervisor_start(s, &cfg, ids[0], &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(all_running(s, ids, 1, 30000));
	assert_true(wait_lines(sink, 1, 20000));	/* the slow call is in flight */

	ack = cutover_one(s, ids[0], "{\"revision\": 1, \"allowed\": []}");
	assert_int_equal(ack.verdict, GATE_APPLIED);
	print_message("  update waited %lld ms for the in-flight call\n",
		      (long long)ack.waited_us / 1000);
	assert_true(ack.waited_us > 3000000);	/* it waited for the 10 s call */
	assert_int_equal(calls_with(ids[0], "store", "allowed", "allowed", 0), 1);
	assert_true(untouched(sink, 1000));
	assert_true(calls_with(ids[0], "store", "denied", "revoked", 1) > 0);

	for (i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		ack = cutover_one(s, ids[0], invalid[i]);
		assert_int_equal(ack.verdict, GATE_REJECTED);
		assert_false(ack.open);
		assert_true(untouched(sink, 600));
	}
	assert_true(calls_with(ids[0], "store", "denied", "gate_closed", 1) > 0);

	ack = cutover_one(s, ids[0], "{\"revision\": 2, \"allowed\": [\"store\", \"post\"]}");
	assert_int_equal(ack.verdict, GATE_APPLIED);
	assert_true(wait_lines(sink, 2, 5000));		/* restored */
	usleep(600 * 1000);
	assert_true(calls_with(ids[0], "store", "allowed", "allowed", 2) > 0);
	assert_true(calls_with(ids[0], "post", "denied", "sink_ceiling", 2) > 0);
	assert_int_equal(rows("tool='post' and decision='allowed'"), 0);

	assert_int_equal(supervisor_snapshot(s, &snap), 0);
	assert_int_equal(snap_of(&snap, ids[0])->revision, 2);
	assert_true(snap_of(&snap, ids[0])->gate_open);
	assert_true(snap_of(&snap, ids[0])->st.lease.acks > 0);
	assert_string_equal(snap_of(&snap, ids[0])->class_name, "confidential");
	supervisor_snapshot_free(&snap);

	assert_int_equal(supervisor_stop_session(s, ids[0]), 0);
	for (i = 0; i < 100 && supervisor_live(s) > 0; i++)
		usleep(100 * 1000);
	assert_int_equal(supervisor_snapshot(s, &snap), 0);
	assert_int_equal(snap_of(&snap, ids[0])->summary.end, END_OPERATOR_STOP);
	supervisor_snapshot_free(&snap);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

static int
setup(void **state)
{
	struct al_err err;
	char path[128];
	FILE *f;

	(void)state;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!mkdtemp(work))
		return -1;
	snprintf(db, sizeof db, "%s/audit.db", work);
	snprintf(path, sizeof path, "%s/payload.json", work);
	f = fopen(path, "w");
	if (!f || fprintf(f, "{\"note\":\"%s\"}\n", CANARY) < 0 || fclose(f) != 0)
		return -1;
	return audit_open(db, &audit, &err);
}

static int
teardown(void **state)
{
	char cmd[160];

	(void)state;
	audit_close(audit);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_end_to_end),
		cmocka_unit_test(test_cutover_many),
	};

	return cmocka_run_group_tests_name("supervisor", tests, setup, teardown);
}
