/*
 * The supervisor against the real daemon and real upstreams, driven the
 * way the console drives it: snapshots, detail, events, non-blocking
 * cutover deltas, force-stop, forgetting ended sessions, host checks —
 * and the gate's invalid-update rules through the blocking update call.
 *
 * Environment (set by supervisor.sh): AIRLOCK_AGENT_IMAGE, AIRLOCK_UPSTREAM,
 * AIRLOCK_BIN, and a loopback OTLP collector's AIRLOCK_OTLP_URL and the
 * file it writes the spans to, AIRLOCK_OTLP_SPANS. Linked with the mutant build of the engine: one test turns a
 * mutant on (AIRLOCK_MUTANT) for its own session; the others run with none.
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

#include "admission.h"
#include "clock.h"
#include "docker.h"
#include "otlp.h"
#include "supervisor.h"

#include "seam_util.h"

#define SESSIONS 20
#define LOG_MAX 16384
#define CANARY "SNAPSHOT-CANARY-7f3a"

static char work[] = "/tmp/airlock-supervisor-XXXXXX";
static char db[128];
static struct audit *audit;

/* The operator the freeze and standing tests name as the author. */
static const struct snap_author oncall = { .uid = 4242, .user = "oncall", .via = "ctl" };

/* Every event the tests drained, oldest first. */
static struct supervisor_event event_log[LOG_MAX];
static size_t n_log;


struct cfg_spec {
	const char *mode;	/* the agent's mode */
	const char *vault_mode;	/* the upstream's mode */
	long timeout_ms;
	bool no_publish;	/* no alias reaches "post": it is not approved */
	const char *image;	/* NULL: the agent image */
	const char *payload;	/* NULL: the canary payload */
	const char *upstream;	/* NULL: the fixture upstream */
	const char *save_to;	/* the tool the alias "save" names (NULL: "store") */
};

static void
make_config(struct airlock_config *c, const char *sink, const struct cfg_spec *sp)
{
	char text[4096], payload[256];
	struct al_err err;
	json_t *root;

	snprintf(payload, sizeof payload, "%s/payload.json", work);
	snprintf(text, sizeof text,
		 "{\"profile\": {\"image\": \"%s\", \"cmd\": [\"%s\"]},"
		 " \"bounds\": {\"session_ms\": 120000, \"calls\": 4096, \"stdout_bytes\": 4194304},"
		 " \"upstreams\": {\"vault\": {\"argv\": [\"%s\", \"--sink\", \"%s\", \"--mode\", \"%s\"],"
		 "                            \"timeout_ms\": %ld, \"paths\": {\"rw\": [\"%s\"]}},"
		 "               \"board\": {\"argv\": [\"%s\", \"--sink\", \"%s.board\"],"
		 "                          \"paths\": {\"rw\": [\"%s\"]}}},"
		 " \"tools\": {\"store\": {\"upstream\": \"vault\", \"remote\": \"store\","
		 "   \"data_class\": \"confidential\", \"sink_ceiling\": \"confidential\","
		 "   \"response_ceiling\": \"confidential\"},"
		 "  \"post\": {\"upstream\": \"board\", \"remote\": \"publish\", \"data_class\": \"public\","
		 "   \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}},"
		 " \"aliases\": {\"save\": \"%s\"%s},"
		 " \"initial\": {\"class\": \"confidential\", \"file\": \"%s\"}}",
		 sp->image ? sp->image : seam_env("AIRLOCK_AGENT_IMAGE"), sp->mode,
		 sp->upstream ? sp->upstream : seam_env("AIRLOCK_UPSTREAM"), sink,
		 sp->vault_mode ? sp->vault_mode : "echo", sp->timeout_ms ? sp->timeout_ms : 10000,
		 work, seam_env("AIRLOCK_UPSTREAM"), sink, work, sp->save_to ? sp->save_to : "store",
		 sp->no_publish ? "" : ", \"publish\": \"post\"",
		 sp->payload ? sp->payload : payload);
	root = json_loads(text, 0, NULL);
	config_init(c);
	assert_non_null(root);
	if (config_load_json(c, root, 2, &err) < 0)
		fail_msg("config: %s", err.msg);
	json_decref(root);
}



/*
 * A log of its own for each test's engine: what one leaves standing on
 * every session would stand for the next engine on its log
 * (supervisor_standing.c), and only test_standing_outlives wants that.
 */
static void
new_log(void)
{
	static unsigned logs;
	struct al_err err;

	audit_close(audit);
	snprintf(db, sizeof db, "%s/audit-%u.db", work, ++logs);
	if (audit_open(db, &audit, &err) < 0)
		fail_msg("audit: %s", err.msg);
}

/* An engine on the log as it is: the last engine's standing sets are its own. */
static struct supervisor *
open_on_log(void)
{
	struct supervisor_options o = { .audit = audit, .watchdog_exe = seam_env("AIRLOCK_BIN") };
	struct supervisor *s;
	struct al_err err;

	n_log = 0;	/* each supervisor numbers its events afresh */
	if (supervisor_open(&o, &s, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	return s;
}

static struct supervisor *
open_supervisor(void)
{
	new_log();
	return open_on_log();
}

static void
start(struct supervisor *s, const struct airlock_config *c, char id[SNAP_ID_MAX])
{
	struct al_err err;

	if (supervisor_start(s, c, id, &err) < 0)
		fail_msg("start: %s", err.msg);
}

/* A fresh copy of one session's row (the snapshot is refreshed each time). */
static struct session_row
row_of(struct supervisor *s, const char *id)
{
	struct supervisor_snapshot snap = { 0 };
	struct session_row r = { .state = SESSION_STATE_COUNT };
	size_t i;

	assert_true(supervisor_snapshot(s, &snap) >= 0);
	for (i = 0; i < snap.n; i++)
		if (strcmp(snap.rows[i].id, id) == 0)
			r = snap.rows[i];
	supervisor_snapshot_free(&snap);
	return r;
}

static bool
wait_state(struct supervisor *s, const char *id, enum session_state want, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (row_of(s, id).state == want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static bool
wait_lines(const char *path, size_t want, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (seam_lines(path) >= want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static void
drain(struct supervisor *s)
{
	struct supervisor_event ev[256];
	size_t n, i;

	while ((n = supervisor_events(s, ev, 256)) > 0)
		for (i = 0; i < n && n_log < LOG_MAX; i++)
			event_log[n_log++] = ev[i];
}

/* The first logged event of kind for session (NULL: any) at revision (-1: any). */
static const struct supervisor_event *
logged(enum event_kind kind, const char *session, int64_t revision)
{
	size_t i;

	for (i = 0; i < n_log; i++) {
		const struct supervisor_event *e = &event_log[i];

		if (e->kind == kind && (!session || strcmp(e->session, session) == 0) &&
		    (revision < 0 || e->revision == revision))
			return e;
	}
	return NULL;
}

static const struct supervisor_event *
wait_event(struct supervisor *s, enum event_kind kind, const char *session, int64_t revision,
	   int ms)
{
	const struct supervisor_event *e;

	for (; ms > 0; ms -= 20) {
		drain(s);
		if ((e = logged(kind, session, revision)))
			return e;
		usleep(20 * 1000);
	}
	return NULL;
}

/* The sink stays as it is for a while: nothing was delivered. */
static bool
untouched(const char *sink, int ms)
{
	size_t n = seam_lines(sink);

	usleep((useconds_t)ms * 1000);
	return seam_lines(sink) == n;
}

static int
calls_with(const char *id, const char *tool, const char *decision, const char *rule,
	   int64_t revision)
{
	return seam_audit_rows(db, "session_id='%s' and type='call' and tool='%s' and decision='%s' and"
		    " rule='%s' and revision=%lld", id, tool, decision, rule, (long long)revision);
}

static bool
container_running(const char *id)
{
	struct docker *d;
	struct al_err err;
	json_t *inspect = NULL;
	bool running;

	assert_true(id[0] != '\0');	/* no container id is no evidence */
	d = docker_open("/var/run/docker.sock", DOCKER_TIMEOUT_MS, &err);
	assert_non_null(d);
	if (docker_inspect(d, id, &inspect, &err) < 0) {
		docker_close(d);
		return false;	/* gone */
	}
	running = json_is_true(json_object_get(json_object_get(inspect, "State"), "Running"));
	json_decref(inspect);
	docker_close(d);
	return running;
}

static size_t
containers_of(const char *session)
{
	char label[96];
	struct docker *d;
	struct al_err err;
	json_t *list = NULL;
	size_t n;

	snprintf(label, sizeof label, "io.airlock.session=%s", session);
	d = docker_open("/var/run/docker.sock", DOCKER_TIMEOUT_MS, &err);
	assert_non_null(d);
	assert_int_equal(docker_list_by_label(d, label, &list, &err), 0);
	n = json_array_size(list);
	json_decref(list);
	docker_close(d);
	return n;
}

/*
 * Everything the console could ever receive — every snapshot byte, every
 * detail and every event — holds no payload, while the permitted sink does
 * (the positive control: the canary really passed through these sessions).
 */
static void
assert_no_canary(struct supervisor *s, const char *sink)
{
	struct supervisor_snapshot snap = { 0 };
	struct session_detail *d = malloc(sizeof *d);
	char buf[65536];
	size_t n, i;
	FILE *f = fopen(sink, "r");

	assert_non_null(f);
	assert_non_null(d);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_non_null(strstr(buf, CANARY));
	assert_true(supervisor_snapshot(s, &snap) >= 0);
	assert_true(snap.n > 0);
	assert_null(memmem(snap.rows, snap.n * sizeof *snap.rows, CANARY, strlen(CANARY)));
	for (i = 0; i < snap.n; i++) {
		assert_int_equal(supervisor_detail(s, snap.rows[i].id, d), 0);
		assert_null(memmem(d, sizeof *d, CANARY, strlen(CANARY)));
	}
	supervisor_snapshot_free(&snap);
	free(d);
	drain(s);
	assert_null(memmem(event_log, n_log * sizeof *event_log, CANARY, strlen(CANARY)));
}

/*
 * 20 live sessions; one revoke across all of them returns at once, every
 * session acknowledges with an event, nothing reaches a sink after its
 * acknowledgement, and the writer thread records one policy entry each.
 */
static void
test_cutover_many(void **state)
{
	static struct airlock_config cfg[SESSIONS];
	char ids[SESSIONS][SNAP_ID_MAX], sink[SESSIONS][160];
	size_t before[SESSIONS], i, targets = 0;
	struct supervisor *s = open_supervisor();
	struct session_detail *d = malloc(sizeof *d);
	const struct supervisor_event *e;
	struct al_err err;
	int64_t rev = 0, t0;

	(void)state;
	assert_non_null(d);
	for (i = 0; i < SESSIONS; i++) {
		snprintf(sink[i], sizeof sink[i], "%s/many-%zu.sink", work, i);
		make_config(&cfg[i], sink[i], &(struct cfg_spec){ .mode = "loop" });
		start(s, &cfg[i], ids[i]);
	}
	for (i = 0; i < SESSIONS; i++) {
		assert_true(wait_state(s, ids[i], SESSION_STATE_RUNNING, 90000));
		assert_true(wait_lines(sink[i], 1, 20000));	/* each call observed first */
	}
	t0 = clock_mono_us();
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, &targets,
					    &err), 0);
	print_message("  revoke across %zu sessions returned in %lld us (revision %lld)\n",
		      targets, (long long)(clock_mono_us() - t0), (long long)rev);
	assert_int_equal(targets, SESSIONS);
	assert_true(rev >= 1);
	for (i = 0; i < SESSIONS; i++) {
		e = wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[i], rev, 15000);
		assert_non_null(e);
		assert_int_equal(e->result, CUTOVER_APPLIED);
		assert_string_equal(e->tool, "store");
		assert_int_equal(e->op, CUTOVER_REVOKE);
		before[i] = seam_lines(sink[i]);
	}
	e = logged(SUPERVISOR_EVENT_CUTOVER, NULL, rev);
	assert_non_null(e);
	assert_true(e->alert);
	assert_int_equal(e->count, SESSIONS);
	usleep(1500 * 1000);	/* several more loop iterations per agent */
	for (i = 0; i < SESSIONS; i++) {
		struct session_row r = row_of(s, ids[i]);

		assert_int_equal(seam_lines(sink[i]), before[i]);	/* nothing after the ack */
		assert_true(calls_with(ids[i], "store", "denied", "revoked", rev) > 0);
		assert_int_equal(r.revision, rev);
		assert_true(r.gate_open);
		assert_int_equal(r.pending, 0);
		assert_false(r.tools[0].allowed);	/* store is tool 0 (sorted catalog) */
		assert_true(r.counters.denied > 0);
	}
	/* One policy entry each, written by the supervisor's own thread. */
	for (i = 0; i < SESSIONS; i++) {
		int tries;

		for (tries = 0; tries < 100 && seam_audit_rows(db, "session_id='%s' and type='policy'", ids[i]) < 1;
		     tries++)
			usleep(50 * 1000);
		assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and decision='applied'"
				      " and revision=%lld and tool='store'", ids[i], (long long)rev), 1);
	}
	/* Both admission reports, itemised, and a timeline that saw the run. */
	assert_int_equal(supervisor_detail(s, ids[0], d), 0);
	assert_int_equal(d->first.verdict, ADMISSION_ADMITTED);
	assert_int_equal(d->second.verdict, ADMISSION_ADMITTED);
	assert_int_equal(d->first.n, ADMISSION_CHECK_COUNT);
	assert_int_equal(d->second.n, ADMISSION_CHECK_COUNT);
	assert_string_equal(d->second.items[0].id, "image_id");
	assert_true(d->second.items[0].pass);
	assert_true(d->n_timeline >= 3);
	assert_int_equal(d->timeline[d->n_timeline - 1].kind, SUPERVISOR_EVENT_CUTOVER_ACK);
	assert_no_canary(s, sink[0]);
	free(d);
	assert_int_equal(supervisor_shutdown(s), 0);	/* zero containers left */
	assert_int_equal(supervisor_live(s), 0);
	supervisor_close(s);
	for (i = 0; i < SESSIONS; i++)
		config_free(&cfg[i]);
}

/* n configs whose agents call store in a loop, each with its own sink NAME-i. */
static void
loop_configs(struct airlock_config *cfg, char (*sink)[160], size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(sink[i], sizeof sink[i], "%s/%s-%zu.sink", work, name, i);
		make_config(&cfg[i], sink[i], &(struct cfg_spec){ .mode = "loop" });
	}
}

/* Start one, and wait until it runs and its calls reach its sink. */
static void
start_looping(struct supervisor *s, const struct airlock_config *cfg, char id[SNAP_ID_MAX],
	      const char *sink)
{
	start(s, cfg, id);
	assert_true(wait_state(s, id, SESSION_STATE_RUNNING, 30000));
	assert_true(wait_lines(sink, 1, 20000));
}

/*
 * A revoke on every session stands for the sessions started after it:
 * the next one starts with the tool revoked at that revision, its calls
 * are denied and its upstream sees none, and a policy entry says so. A
 * restore on every session lifts it; a revoke on one session stays that
 * session's, and the next one starts with everything its config allows.
 */
static void
test_revoke_stands(void **state)
{
	static struct airlock_config cfg[3];
	char ids[3][SNAP_ID_MAX], sink[3][160];
	const char *only_first[1];
	struct supervisor *s = open_supervisor();
	struct session_row r;
	struct al_err err;
	int64_t rev, rev_restore, rev_one;
	size_t i;
	int tries;

	(void)state;
	loop_configs(cfg, sink, 3, "stand");
	start_looping(s, &cfg[0], ids[0], sink[0]);
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[0], rev, 5000));

	/* Started after the revoke: revoked from the start, at its revision. */
	start(s, &cfg[1], ids[1]);
	r = row_of(s, ids[1]);
	assert_int_equal(r.revision, rev);
	assert_true(r.gate_open);
	assert_true(r.tools[0].approved);	/* store, tool 0 */
	assert_false(r.tools[0].allowed);
	assert_true(wait_state(s, ids[1], SESSION_STATE_RUNNING, 30000));
	for (tries = 0; tries < 200 && calls_with(ids[1], "store", "denied", "revoked", rev) < 2;
	     tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[1], "store", "denied", "revoked", rev) >= 2);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='call' and decision='allowed'", ids[1]), 0);
	assert_int_equal(seam_lines(sink[1]), 0);	/* its upstream saw nothing */
	for (tries = 0; tries < 100 && seam_audit_rows(db, "session_id='%s' and type='policy'", ids[1]) < 1; tries++)
		usleep(50 * 1000);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and tool='store' and"
			      " decision='applied' and rule='revoke at start' and revision=%lld",
			      ids[1], (long long)rev), 1);

	/* Restored on every session, then revoked on the first alone. */
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "store", NULL, 0, &rev_restore, NULL,
					    &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[1], rev_restore, 5000));
	assert_true(wait_lines(sink[1], 1, 20000));	/* the restore reached it too */
	only_first[0] = ids[0];
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", only_first, 1, &rev_one,
					    NULL, &err), 0);
	assert_true(rev_one > rev_restore && rev_restore > rev);
	start(s, &cfg[2], ids[2]);
	r = row_of(s, ids[2]);
	assert_int_equal(r.revision, 0);
	assert_true(r.tools[0].allowed);
	assert_true(wait_lines(sink[2], 1, 30000));	/* its calls reach the upstream */
	/* The call's entry follows its reply, which follows the sink's line. */
	for (tries = 0; tries < 100 && calls_with(ids[2], "store", "allowed", "allowed", 0) < 1;
	     tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[2], "store", "allowed", "allowed", 0) >= 1);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy'", ids[2]), 0);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	for (i = 0; i < 3; i++)
		config_free(&cfg[i]);
}

/* The lapse of a grant on session: a revoke acknowledged there, authored by the expiry. */
static const struct supervisor_event *
wait_lapse(struct supervisor *s, const char *session, int64_t after, int ms)
{
	size_t i;

	for (; ms > 0; ms -= 20) {
		drain(s);
		for (i = 0; i < n_log; i++) {
			const struct supervisor_event *e = &event_log[i];

			if (e->kind == SUPERVISOR_EVENT_CUTOVER_ACK && e->op == CUTOVER_REVOKE &&
			    e->revision > after && strcmp(e->session, session) == 0 &&
			    strcmp(e->by.user, "expiry") == 0)
				return e;
		}
		usleep(20 * 1000);
	}
	return NULL;
}

/* The tool's view in a fresh snapshot of session id. */
static struct tool_view
tool_of(struct supervisor *s, const char *id, const char *tool)
{
	struct session_row r = row_of(s, id);
	struct tool_view none = { .granted = false };
	size_t i;

	for (i = 0; i < r.n_tools; i++)
		if (strcmp(r.tools[i].name, tool) == 0)
			return r.tools[i];
	fail_msg("session %s has no tool %s", id, tool);
	return none;
}

/* Policy entries of session about store at revision whose rule and author are these. */
static int
policy_by(const char *session, const char *rule, int64_t revision, const char *by)
{
	return seam_audit_rows(db, "session_id='%s' and type='policy' and tool='store' and rule='%s'"
			       " and revision=%lld and decision='applied' and detail like '%%\"by\":\"%s\"%%'",
			       session, rule, (long long)revision, by);
}

/*
 * A cutover may name an alias, as an operator sees it in the pending list:
 * a revoke of "save" revokes the catalog tool store (its calls denied at
 * that revision, the policy entry naming store), a restore of "save"
 * gives it back, and quarantine's --called finds the session that called
 * it. Once a second config maps "save" to another tool, a cutover by the
 * alias is refused with both tools named, before any revision.
 */
static void
test_cutover_alias(void **state)
{
	static struct airlock_config cfg[2];
	char ids[2][SNAP_ID_MAX], sink[2][160], called[2][SNAP_ID_MAX];
	struct supervisor *s = open_supervisor();
	struct cutover_done done;
	struct al_err err;
	int64_t rev, after;
	size_t lines;
	int tries;

	(void)state;
	loop_configs(cfg, sink, 1, "alias");
	snprintf(sink[1], sizeof sink[1], "%s/alias-post.sink", work);
	make_config(&cfg[1], sink[1], &(struct cfg_spec){ .mode = "loop", .save_to = "post" });
	start_looping(s, &cfg[0], ids[0], sink[0]);

	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "save", NULL, 0, &rev, NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[0], rev, 5000));
	assert_false(tool_of(s, ids[0], "store").allowed);
	for (tries = 0; tries < 200 && calls_with(ids[0], "store", "denied", "revoked", rev) < 2;
	     tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[0], "store", "denied", "revoked", rev) >= 2);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and tool='store' and"
					 " revision=%lld and decision='applied'", ids[0], (long long)rev), 1);
	assert_int_equal(supervisor_called_within(s, "save", 60000, called, 2), 1);
	assert_string_equal(called[0], ids[0]);
	assert_int_equal(supervisor_called_within(s, "nosuch", 60000, called, 2), 0);

	lines = seam_lines(sink[0]);
	assert_int_equal(supervisor_cutover_by(s, CUTOVER_RESTORE, "save", NULL, 0, NULL, &done,
					       &err), 0);
	assert_string_equal(done.tool, "store");	/* what it acted on, resolved once */
	assert_int_equal(done.targets, 1);
	assert_true(done.revision > rev);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[0], done.revision, 5000));
	assert_true(tool_of(s, ids[0], "store").allowed);
	assert_true(wait_lines(sink[0], lines + 1, 20000));	/* its calls reach store again */

	start(s, &cfg[1], ids[1]);
	after = row_of(s, ids[0]).revision;
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "save", NULL, 0, &rev, NULL, &err), -1);
	assert_string_equal(err.msg, "'save' is an alias of store in one config this engine holds "
			    "and of post in another: name the catalog tool");
	assert_int_equal(row_of(s, ids[0]).revision, after);	/* no revision was posted */
	assert_true(tool_of(s, ids[0], "store").allowed);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg[0]);
	config_free(&cfg[1]);
}

/*
 * restore --calls 2 on a revoked tool: exactly two calls reach the
 * upstream, the third is denied revoked, and the grant lapses by itself as
 * a revoke authored by the expiry, acknowledged by the session and
 * audited (the grant, its lapse and the ack). While the engine is frozen
 * no call spends the budget, and the snapshot shows the two calls left.
 */
static void
test_grant_calls(void **state)
{
	static struct airlock_config cfg[1];
	char id[SNAP_ID_MAX], sink[1][160];
	struct supervisor *s = open_supervisor();
	struct supervisor_snapshot snap = { 0 };
	const struct supervisor_event *lapse;
	struct snap_author me;
	struct tool_view t;
	struct al_err err;
	int64_t rev, rev_freeze, rev_thaw;
	struct cutover_done grant;
	size_t before;
	int tries;

	(void)state;
	loop_configs(cfg, sink, 1, "grant-calls");
	start_looping(s, &cfg[0], id, sink[0]);
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev, 5000));
	assert_int_equal(supervisor_freeze(s, true, NULL, &rev_freeze, NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev_freeze, 5000));
	before = seam_lines(sink[0]);
	assert_int_equal(supervisor_grant(s, "store", NULL, 0, NULL, 0, 2, &grant, &err), 0);
	assert_int_equal(grant.targets, 1);
	assert_string_equal(grant.tool, "store");
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, grant.revision, 5000));
	t = tool_of(s, id, "store");
	assert_true(t.allowed);
	assert_true(t.granted);
	assert_int_equal(t.grant_calls, 2);
	assert_int_equal(t.grant_ms, -1);
	assert_true(untouched(sink[0], 600));	/* frozen: nothing spent, nothing sent */
	assert_int_equal(tool_of(s, id, "store").grant_calls, 2);
	assert_int_equal(supervisor_freeze(s, false, NULL, &rev_thaw, NULL, &err), 0);

	lapse = wait_lapse(s, id, rev_thaw, 20000);
	assert_non_null(lapse);
	assert_int_equal(lapse->result, CUTOVER_APPLIED);
	assert_string_equal(lapse->by.via, "grant");
	assert_string_equal(lapse->tool, "store");
	/* Denied from here: the next calls are the agent's, each denied revoked. */
	for (tries = 0; tries < 200 && seam_audit_rows(db, "session_id='%s' and type='call' and "
			"tool='store' and decision='denied' and rule='revoked' and revision>%lld", id,
			(long long)rev_thaw) < 1; tries++)
		usleep(50 * 1000);
	assert_true(untouched(sink[0], 1000));
	assert_int_equal(seam_lines(sink[0]), before + 2);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='call' and tool='store' and"
			 " decision='allowed' and revision>=%lld", id, (long long)grant.revision), 2);
	assert_true(seam_audit_rows(db, "session_id='%s' and type='call' and tool='store' and"
			" decision='denied' and rule='revoked' and revision>%lld", id,
			(long long)rev_thaw) >= 1);
	t = tool_of(s, id, "store");
	assert_false(t.allowed);
	assert_false(t.granted);
	/* The lapse stands for later sessions again, by the expiry. */
	assert_true(supervisor_snapshot(s, &snap) >= 0);
	assert_int_equal(snap.n_standing, 1);
	assert_string_equal(snap.standing[0], "store");
	assert_string_equal(snap.standing_by[0].user, "expiry");
	assert_int_equal(snap.standing_revision[0], lapse->revision);
	supervisor_snapshot_free(&snap);
	/* The audit: the grant by its operator, its lapse and the session's ack by the expiry. */
	for (tries = 0; tries < 100 && policy_by(id, "revoke applied", lapse->revision, "expiry") < 1;
	     tries++)
		usleep(50 * 1000);
	supervisor_author_self(&me, "engine");
	assert_int_equal(policy_by("engine", "grant: 2 calls", grant.revision, me.user), 1);
	assert_int_equal(policy_by("engine", "grant lapsed: calls spent", lapse->revision, "expiry"), 1);
	assert_int_equal(policy_by(id, "restore applied", grant.revision, me.user), 1);
	assert_int_equal(policy_by(id, "revoke applied", lapse->revision, "expiry"), 1);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg[0]);
}

/*
 * restore --for 1s: calls reach the upstream while it runs, and it lapses
 * by itself about a second later ("time up"), a revoke by the expiry;
 * nothing reaches the upstream after its acknowledgement. A new revoke of
 * the tool before a lapse replaces the grant: no lapse follows it.
 */
static void
test_grant_time(void **state)
{
	static struct airlock_config cfg[1];
	char id[SNAP_ID_MAX], sink[1][160];
	struct supervisor *s = open_supervisor();
	const struct supervisor_event *lapse;
	struct tool_view t;
	struct al_err err;
	struct cutover_done grant;
	int64_t rev, rev_replace, t0, took;

	(void)state;
	loop_configs(cfg, sink, 1, "grant-time");
	start_looping(s, &cfg[0], id, sink[0]);
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev, 5000));
	t0 = clock_mono_ms();
	assert_int_equal(supervisor_grant(s, "store", NULL, 0, NULL, 1, 0, &grant, &err), 0);
	t = tool_of(s, id, "store");
	assert_true(t.granted);
	assert_int_equal(t.grant_calls, -1);
	assert_true(t.grant_ms > 0 && t.grant_ms <= 1000);
	lapse = wait_lapse(s, id, grant.revision, 15000);
	assert_non_null(lapse);
	took = clock_mono_ms() - t0;
	assert_true(took >= 1000);	/* never before its time; generous after it */
	assert_true(took < 12000);
	assert_true(seam_audit_rows(db, "session_id='%s' and type='call' and tool='store' and"
			" decision='allowed' and revision=%lld", id, (long long)grant.revision) >= 1);
	assert_true(untouched(sink[0], 1000));
	assert_false(tool_of(s, id, "store").allowed);
	for (int tries = 0; tries < 100 && policy_by("engine", "grant lapsed: time up",
						     lapse->revision, "expiry") < 1; tries++)
		usleep(50 * 1000);
	assert_int_equal(policy_by("engine", "grant lapsed: time up", lapse->revision, "expiry"), 1);

	/* Replaced before its time: the operator's revoke ends it, no lapse comes. */
	assert_int_equal(supervisor_grant(s, "store", NULL, 0, NULL, 1, 0, &grant, &err), 0);
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev_replace, NULL,
					    &err), 0);
	assert_false(tool_of(s, id, "store").granted);
	assert_null(wait_lapse(s, id, rev_replace, 2500));
	assert_int_equal(seam_audit_rows(db, "session_id='engine' and type='policy' and"
			 " rule like 'grant lapsed:%%' and revision>%lld", (long long)rev_replace), 0);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg[0]);
}

/* The value of one attribute of an OTLP span, or NULL. */
static const char *
span_attr(json_t *span, const char *key)
{
	json_t *a, *v;
	size_t i;

	json_array_foreach(json_object_get(span, "attributes"), i, a) {
		if (strcmp(json_string_value(json_object_get(a, "key")) ?: "", key) != 0)
			continue;
		v = json_object_get(a, "value");
		return json_string_value(json_object_get(v, "stringValue")) ?:
		       json_string_value(json_object_get(v, "intValue"));
	}
	return NULL;
}

/* Does the collector hold a span of entry_id saying type, tool and decision? */
static bool
span_says(const char *entry_id, const char *type, const char *tool, const char *decision)
{
	FILE *f = fopen(seam_env("AIRLOCK_OTLP_SPANS"), "r");
	char line[16384];
	json_t *body, *span;
	bool found = false;

	while (f && !found && fgets(line, sizeof line, f)) {
		body = json_loads(line, 0, NULL);
		span = json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(
			json_object_get(body, "resourceSpans"), 0), "scopeSpans"), 0), "spans"), 0);
		found = span && strcmp(span_attr(span, "airlock.entry_id") ?: "", entry_id) == 0 &&
			strcmp(span_attr(span, "airlock.type") ?: "", type) == 0 &&
			strcmp(span_attr(span, "airlock.tool") ?: "", tool) == 0 &&
			strcmp(span_attr(span, "airlock.decision") ?: "", decision) == 0;
		json_decref(body);
	}
	if (f)
		fclose(f);
	return found;
}

/* The entry ids of a session's policy entries, oldest first; how many. */
static size_t
policy_entries(const char *session, char ids[][AUDIT_ENTRY_ID_MAX], size_t max)
{
	char sql[256];
	sqlite3 *h;
	sqlite3_stmt *st;
	size_t n = 0;

	snprintf(sql, sizeof sql, "select entry_id from audit_entries where session_id='%s'"
		 " and type='policy' and tool='store' order by seq", session);
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_busy_timeout(h, 2000);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	while (n < max && sqlite3_step(st) == SQLITE_ROW)
		snprintf(ids[n++], AUDIT_ENTRY_ID_MAX, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

/*
 * Every audit entry becomes a span, the supervisor's own included: a
 * revoke's and a restore's policy entries reach the collector with the
 * entry ids the log gave them (a collector of supervision.sh's, on
 * loopback).
 */
static void
test_policy_spans(void **state)
{
	struct supervisor_options o = { .audit = audit, .watchdog_exe = seam_env("AIRLOCK_BIN") };
	char id[SNAP_ID_MAX], sink[160], ids[4][AUDIT_ENTRY_ID_MAX];
	static struct airlock_config cfg;
	const char *decision[2] = { "applied", "applied" };
	struct supervisor *s;
	struct al_err err;
	int64_t rev[2];
	size_t i, n = 0;
	int tries;

	(void)state;
	new_log();
	o.audit = audit;
	if (otlp_open(seam_env("AIRLOCK_OTLP_URL"), &o.otlp, &err) < 0)
		fail_msg("otlp: %s", err.msg);
	n_log = 0;
	if (supervisor_open(&o, &s, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	snprintf(sink, sizeof sink, "%s/spans.sink", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop" });
	start(s, &cfg, id);
	assert_true(wait_state(s, id, SESSION_STATE_RUNNING, 30000));
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev[0], NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev[0], 5000));
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "store", NULL, 0, &rev[1], NULL, &err), 0);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev[1], 5000));
	for (tries = 0; tries < 100 && (n = policy_entries(id, ids, 4)) < 2; tries++)
		usleep(50 * 1000);
	assert_int_equal(n, 2);		/* the revoke's entry and the restore's */
	for (i = 0; i < n; i++) {
		for (tries = 0; tries < 100 && !span_says(ids[i], "policy", "store", decision[i]); tries++)
			usleep(50 * 1000);
		assert_true(span_says(ids[i], "policy", "store", decision[i]));
	}
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	assert_int_equal(otlp_failures(o.otlp), 0);
	otlp_close(o.otlp);
	config_free(&cfg);
}

/* The snapshot's engine-wide freeze, and one row's. */
static bool
frozen_now(struct supervisor *s, const char *id, struct snap_author *by)
{
	struct supervisor_snapshot snap = { 0 };
	bool engine, row = false;
	size_t i;

	assert_true(supervisor_snapshot(s, &snap) >= 0);
	engine = snap.frozen;
	*by = snap.frozen_by;
	for (i = 0; i < snap.n; i++)
		if (strcmp(snap.rows[i].id, id) == 0)
			row = snap.rows[i].frozen;
	supervisor_snapshot_free(&snap);
	assert_int_equal(engine, row);
	return engine;
}

/*
 * The kill switch: a freeze denies every call of a looping agent with the
 * rule frozen from its acknowledgement on (the upstream's observer sees
 * nothing after it), names its author in the events and policy entries,
 * stands for a session started while frozen, and a thaw lets calls
 * through again.
 */
static void
test_freeze(void **state)
{
	static struct airlock_config cfg[2];
	char ids[2][SNAP_ID_MAX], sink[2][160];
	struct supervisor *s = open_supervisor();
	const struct supervisor_event *e;
	struct snap_author by;
	struct al_err err;
	int64_t rev, rev_thaw;
	size_t i, n, targets;
	int tries;

	(void)state;
	loop_configs(cfg, sink, 2, "freeze");
	start_looping(s, &cfg[0], ids[0], sink[0]);
	assert_int_equal(supervisor_freeze(s, true, &oncall, &rev, &targets, &err), 0);
	assert_int_equal(targets, 1);
	e = wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[0], rev, 5000);
	assert_non_null(e);
	assert_int_equal(e->op, CUTOVER_FREEZE);
	assert_int_equal(e->result, CUTOVER_APPLIED);
	assert_string_equal(e->by.user, "oncall");
	n = seam_lines(sink[0]);
	for (tries = 0; tries < 200 && calls_with(ids[0], "store", "denied", "frozen", rev) < 2; tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[0], "store", "denied", "frozen", rev) >= 2);
	assert_int_equal(seam_lines(sink[0]), n);	/* nothing reached the upstream after the ack */
	assert_true(frozen_now(s, ids[0], &by));
	assert_string_equal(by.user, "oncall");
	assert_int_equal(supervisor_freeze(s, true, NULL, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "freeze: the engine is frozen already");

	/* Started while frozen: frozen from the start, its upstream never reached. */
	start(s, &cfg[1], ids[1]);
	assert_true(wait_state(s, ids[1], SESSION_STATE_RUNNING, 30000));
	for (tries = 0; tries < 200 && calls_with(ids[1], "store", "denied", "frozen", rev) < 1; tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[1], "store", "denied", "frozen", rev) >= 1);
	assert_int_equal(seam_lines(sink[1]), 0);
	for (tries = 0; tries < 100 && seam_audit_rows(db, "type='policy' and rule like 'freeze %%'") < 2; tries++)
		usleep(50 * 1000);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and rule='freeze applied' and"
			      " decision='applied' and detail='{\"by\":\"oncall\",\"uid\":4242,"
			      "\"via\":\"ctl\"}'", ids[0]), 1);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and rule='freeze at start' and"
			      " detail like '%%\"by\":\"oncall\"%%'", ids[1]), 1);

	/* Thawed: both sessions' calls reach their upstreams again. */
	assert_int_equal(supervisor_freeze(s, false, NULL, &rev_thaw, &targets, &err), 0);
	assert_int_equal(targets, 2);
	for (i = 0; i < 2; i++)
		assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, ids[i], rev_thaw, 5000));
	assert_true(wait_lines(sink[0], n + 1, 20000));
	assert_true(wait_lines(sink[1], 1, 20000));
	assert_false(frozen_now(s, ids[0], &by));
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	for (i = 0; i < 2; i++)
		config_free(&cfg[i]);
}

/* Does the snapshot say store stands revoked by oncall, the flow and post held, the engine frozen? */
static bool
stands(struct supervisor *s, int64_t rev_revoke, int64_t rev_freeze)
{
	struct supervisor_snapshot snap = { 0 };
	bool yes;

	assert_true(supervisor_snapshot(s, &snap) >= 0);
	yes = snap.n_standing == 1 && strcmp(snap.standing[0], "store") == 0 &&
	      strcmp(snap.standing_by[0].user, "oncall") == 0 &&
	      snap.standing_revision[0] == rev_revoke && snap.n_standing_flow == 1 &&
	      strcmp(snap.standing_flow[0], "confidential>public") == 0 &&
	      snap.n_standing_hold == 1 && strcmp(snap.standing_hold[0], "post") == 0 && snap.frozen &&
	      strcmp(snap.frozen_by.user, "oncall") == 0 && snap.frozen_revision == rev_freeze &&
	      snap.revision == rev_freeze;
	supervisor_snapshot_free(&snap);
	return yes;
}

/* Does nothing stand: no revoke, no hold, no flow, no freeze? */
static bool
nothing_stands(struct supervisor *s)
{
	struct supervisor_snapshot snap = { 0 };
	bool none;

	assert_true(supervisor_snapshot(s, &snap) >= 0);
	none = snap.n_standing == 0 && snap.n_standing_flow == 0 && snap.n_standing_hold == 0 &&
	       !snap.frozen;
	supervisor_snapshot_free(&snap);
	return none;
}

/*
 * What stands on every session outlives its engine: the next engine on
 * the same log starts with the revoke, the tool hold, the flow hold and
 * the freeze, their authors and revisions, and its first session starts
 * frozen and revoked, its upstream never reached; what that engine lifts
 * is lifted for the engine after it, but for a grant. The revision goes
 * on past the last change, one on a single session too.
 */
static void
test_standing_outlives(void **state)
{
	static struct airlock_config cfg[2];
	char ids[2][SNAP_ID_MAX], sink[2][160];
	struct supervisor *s = open_supervisor();
	struct supervisor_snapshot snap = { 0 };
	struct cutover_done done;
	struct snap_author by;
	struct al_err err;
	int64_t rev, rev_freeze, rev_thaw, rev_one, rev_next;
	const char *one[1];
	size_t i, n;
	int tries;

	(void)state;
	loop_configs(cfg, sink, 2, "standing");
	start_looping(s, &cfg[0], ids[0], sink[0]);
	assert_int_equal(supervisor_cutover_by(s, CUTOVER_REVOKE, "store", NULL, 0, &oncall, &done,
					       &err), 0);
	rev = done.revision;
	assert_int_equal(supervisor_flow_cutover_by(s, CUTOVER_HOLD, "confidential>public", NULL, 0,
						    &oncall, &done, &err), 0);
	assert_string_equal(done.tool, "confidential>public");
	assert_int_equal(supervisor_cutover_by(s, CUTOVER_HOLD, "post", NULL, 0, &oncall, NULL,
					       &err), 0);
	assert_int_equal(supervisor_freeze(s, true, &oncall, &rev_freeze, NULL, &err), 0);
	assert_true(stands(s, rev, rev_freeze));
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);

	s = open_on_log();
	assert_true(stands(s, rev, rev_freeze));
	assert_int_equal(seam_audit_rows(db, "session_id='engine' and type='policy' and"
			 " rule='standing restored' and revision=%lld", (long long)rev_freeze), 1);
	start(s, &cfg[1], ids[1]);
	assert_true(wait_state(s, ids[1], SESSION_STATE_RUNNING, 30000));
	for (tries = 0; tries < 200 && calls_with(ids[1], "store", "denied", "frozen", rev_freeze) < 1;
	     tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[1], "store", "denied", "frozen", rev_freeze) >= 1);
	assert_true(frozen_now(s, ids[1], &by));
	assert_string_equal(by.user, "oncall");
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='policy' and rule='revoke at start'"
			 " and tool='store' and detail like '%%\"by\":\"oncall\"%%'", ids[1]), 1);

	/* Thawed, store is still revoked; restored, the calls reach the upstream. */
	assert_int_equal(supervisor_freeze(s, false, NULL, &rev_thaw, NULL, &err), 0);
	for (tries = 0; tries < 200 && calls_with(ids[1], "store", "denied", "revoked", rev_thaw) < 1;
	     tries++)
		usleep(50 * 1000);
	assert_true(calls_with(ids[1], "store", "denied", "revoked", rev_thaw) >= 1);
	assert_int_equal(seam_lines(sink[1]), 0);
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "store", NULL, 0, NULL, NULL, &err), 0);
	assert_int_equal(supervisor_flow_cutover_by(s, CUTOVER_RESTORE, "confidential>public", NULL, 0,
						    NULL, NULL, &err), 0);
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "post", NULL, 0, NULL, NULL, &err), 0);
	assert_true(wait_lines(sink[1], 1, 20000));
	assert_true(nothing_stands(s));

	/*
	 * A grant lifts a revoke for this engine only: store, allowed when
	 * granted (nothing stood), stands revoked for the next engine as its
	 * lapse would leave it, by the expiry. The hold on one session after
	 * it moves no set, and its revision is not given again.
	 */
	n = seam_lines(sink[1]);
	assert_int_equal(supervisor_grant(s, "store", NULL, 0, NULL, 600, 0, NULL, &err), 0);
	assert_true(wait_lines(sink[1], n + 1, 20000));
	one[0] = ids[1];
	assert_int_equal(supervisor_cutover(s, CUTOVER_HOLD, "post", one, 1, &rev_one, NULL, &err), 0);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);

	s = open_on_log();
	assert_true(supervisor_snapshot(s, &snap) >= 0);
	assert_int_equal(snap.n_standing, 1);
	assert_string_equal(snap.standing[0], "store");
	assert_string_equal(snap.standing_by[0].user, "expiry");
	assert_int_equal(snap.n_standing_hold, 0);
	assert_true(snap.revision >= rev_one);
	supervisor_snapshot_free(&snap);
	/* No session yet: a name no config maps is refused, saying how to name one. */
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "nosuchtool", NULL, 0, NULL, NULL,
					    &err), -1);
	assert_string_equal(err.msg, "no config this engine holds has a tool 'nosuchtool' (it holds "
			    "none yet: name a standing tool by its catalog name)");
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "store", NULL, 0, &rev_next, NULL,
					    &err), 0);
	assert_true(rev_next > rev_one);
	assert_true(nothing_stands(s));
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);

	s = open_on_log();
	assert_true(nothing_stands(s));
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	for (i = 0; i < 2; i++)
		config_free(&cfg[i]);
}

/* A "standing: …" entry of the engine's with this detail, as if an engine had written it. */
static void
standing_planted(const char *detail)
{
	struct audit_entry e = { .session_id = "engine", .type = "policy", .decision = "applied",
				 .rule = "standing: 1 revoked", .revision = 3, .detail = detail };
	struct al_err err;

	if (audit_append(audit, &e, NULL, NULL, &err) < 0)
		fail_msg("audit: %s", err.msg);
}

/*
 * A standing entry the next engine cannot read (not the sets as written:
 * a list that is no list, a name too long for any tool) starts it frozen
 * by the engine itself, nothing else standing, and says so in its log;
 * a thaw is saved, and the engine after it starts unfrozen.
 */
static void
test_standing_unreadable(void **state)
{
	static const char *const planted[] = {
		"{\"by\":\"x\",\"uid\":0,\"via\":\"ctl\",\"revision\":3,\"revoked\":\"store\","
		"\"held\":[],\"flows\":[]}",
		"{\"by\":\"x\",\"uid\":0,\"via\":\"ctl\",\"revision\":3,\"revoked\":[],\"held\":"
		"[\"a-tool-name-longer-than-any-catalog-tool-name-may-be-0123456789abcdef\"],\"flows\":[]}",
		"not json",
	};
	struct supervisor_snapshot snap = { 0 };
	struct supervisor *s;
	struct al_err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof planted / sizeof planted[0]; i++) {
		new_log();
		standing_planted(planted[i]);
		s = open_on_log();
		assert_true(supervisor_snapshot(s, &snap) >= 0);
		assert_true(snap.frozen);
		assert_string_equal(snap.frozen_by.via, "engine");
		assert_int_equal(snap.n_standing + snap.n_standing_flow, 0);
		supervisor_snapshot_free(&snap);
		assert_int_equal(seam_audit_rows(db, "session_id='engine' and type='policy' and"
				 " rule='standing unreadable: frozen'"), 1);
		assert_int_equal(supervisor_freeze(s, false, NULL, NULL, NULL, &err), 0);
		assert_int_equal(supervisor_shutdown(s), 0);
		supervisor_close(s);
		s = open_on_log();
		assert_true(nothing_stands(s));
		assert_int_equal(supervisor_shutdown(s), 0);
		supervisor_close(s);
	}
}

/*
 * Revoking a tool a session never had changes nothing there: the ack says
 * not_applicable, the gate stays open and its permitted calls go on.
 */
static void
test_not_applicable(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	const struct supervisor_event *e;
	char id[SNAP_ID_MAX], sink[160];
	struct session_row r;
	struct al_err err;
	int64_t rev;
	size_t n;

	(void)state;
	snprintf(sink, sizeof sink, "%s/na.sink", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop", .no_publish = true });
	start(s, &cfg, id);
	assert_true(wait_state(s, id, SESSION_STATE_RUNNING, 30000));
	assert_true(wait_lines(sink, 1, 20000));
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "post", NULL, 0, &rev, NULL, &err), 0);
	e = wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev, 5000);
	assert_non_null(e);
	assert_int_equal(e->result, CUTOVER_NOT_APPLICABLE);
	assert_false(e->alert);
	n = seam_lines(sink);
	assert_true(wait_lines(sink, n + 2, 5000));	/* still allowed */
	r = row_of(s, id);
	assert_true(r.gate_open);
	assert_int_equal(r.revision, rev);
	assert_true(r.tools[0].allowed);	/* store */
	assert_false(r.tools[1].approved);	/* post: no alias reaches it */
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/*
 * One session end to end through the gate while its upstream holds the
 * first call 10 s: the worker is blocked, yet its lease reads live; a
 * revoke returns at once, shows as pending, and is acknowledged only after
 * the call; invalid whole updates close admission with the sink untouched;
 * a valid newer revision restores the tool while the public tool stays
 * denied because the session class never went down.
 */
static void
test_gate_end_to_end(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	const struct supervisor_event *e;
	struct cutover_ack ack;
	struct session_row r1, r2;
	struct al_err err;
	char id[SNAP_ID_MAX], sink[160], update[128];
	const char *ids[1];
	static const char *invalid[] = {
		"{\"revision\": 0, \"allowed\": [\"store\"]}",
		"{\"revision\": \"5\", \"allowed\": [\"store\"]}",
		"{\"revision\": 99, \"allowed\": [\"exfiltrate\"]}",
		"{\"revision\": 1, \"allowed\": [\"store\"]}",	/* stale: 1 is not newer */
	};
	int64_t rev, t0;
	size_t i;

	(void)state;
	snprintf(sink, sizeof sink, "%s/gate.sink", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop_both", .vault_mode = "slow",
						    .timeout_ms = 15000 });
	start(s, &cfg, id);
	ids[0] = id;
	assert_true(wait_state(s, id, SESSION_STATE_RUNNING, 30000));
	assert_true(wait_lines(sink, 1, 20000));	/* the slow call is in flight */

	/* Live while the worker is blocked in the call. */
	r1 = row_of(s, id);
	usleep(1200 * 1000);
	r2 = row_of(s, id);
	assert_true(r2.call.active);
	assert_string_equal(r2.call.tool, "store");
	assert_true(r2.call.age_ms >= 1000);
	assert_true(r2.lease.armed);
	assert_true(r2.lease.acks > r1.lease.acks);
	assert_false(r2.lease.late);
	assert_true(r2.lease.age_ms < 1000);
	assert_true(r2.lease.n_acks > 0);

	t0 = clock_mono_us();
	assert_int_equal(supervisor_cutover(s, CUTOVER_REVOKE, "store", ids, 1, &rev, NULL, &err), 0);
	print_message("  revoke behind an in-flight call returned in %lld us\n",
		      (long long)(clock_mono_us() - t0));
	drain(s);
	assert_null(logged(SUPERVISOR_EVENT_CUTOVER_ACK, id, rev));	/* not before the call ended */
	r1 = row_of(s, id);
	assert_int_equal(r1.pending, 1);
	assert_int_equal(r1.pending_revision, rev);
	assert_true(r1.revision < rev);
	e = wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev, 15000);
	assert_non_null(e);
	assert_int_equal(e->result, CUTOVER_APPLIED);
	print_message("  acknowledged after waiting %lld ms for the in-flight call\n",
		      (long long)e->waited_us / 1000);
	assert_true(e->waited_us > 3000000);	/* it waited for the 10 s call */
	/*
	 * The call's terminal entry rides on the log's next commit (within a
	 * few ms, docs/guarantees.md): it may land just after the ack.
	 */
	for (i = 0; i < 100 && calls_with(id, "store", "allowed", "allowed", 0) < 1; i++)
		usleep(50 * 1000);
	assert_int_equal(calls_with(id, "store", "allowed", "allowed", 0), 1);
	assert_true(untouched(sink, 1000));
	assert_true(calls_with(id, "store", "denied", "revoked", rev) > 0);

	for (i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		json_t *u = json_loads(invalid[i], 0, NULL);

		assert_int_equal(supervisor_update_json(s, u, ids, 1, &ack, 1), 1);
		json_decref(u);
		assert_int_equal(ack.ack.verdict, GATE_REJECTED);
		assert_false(ack.ack.open);
		assert_true(untouched(sink, 600));
	}
	assert_true(calls_with(id, "store", "denied", "gate_closed", rev) > 0);
	assert_false(row_of(s, id).gate_open);

	snprintf(update, sizeof update, "{\"revision\": %lld, \"allowed\": [\"store\", \"post\"]}",
		 (long long)rev + 10);
	{
		json_t *u = json_loads(update, 0, NULL);

		assert_int_equal(supervisor_update_json(s, u, ids, 1, &ack, 1), 1);
		json_decref(u);
	}
	assert_int_equal(ack.ack.verdict, GATE_APPLIED);
	assert_true(wait_lines(sink, 2, 5000));		/* restored */
	usleep(600 * 1000);
	assert_true(calls_with(id, "store", "allowed", "allowed", rev + 10) > 0);
	assert_true(calls_with(id, "post", "denied", "sink_ceiling", rev + 10) > 0);
	assert_int_equal(seam_audit_rows(db, "tool='post' and decision='allowed'"), 0);
	/* The engine's next revision is past the one an update brought. */
	assert_int_equal(supervisor_cutover(s, CUTOVER_RESTORE, "store", ids, 1, &rev, NULL, &err), 0);
	assert_true(rev > 10);
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_CUTOVER_ACK, id, rev, 5000));
	r1 = row_of(s, id);
	assert_int_equal(r1.revision, rev);
	assert_true(r1.gate_open);
	assert_string_equal(r1.class_name, "confidential");

	assert_int_equal(supervisor_stop_session(s, id), 0);
	assert_true(wait_state(s, id, SESSION_STATE_ENDED, 15000));
	assert_int_equal(row_of(s, id).end, SESSION_END_OPERATOR_STOP);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/*
 * Force-stop while the worker is blocked inside an upstream call (15 s
 * timeout, the upstream holds it 10 s): the container is stopped at once
 * by the supervisor's own connection, and the call gives up within the
 * upstream wait's look at the stop (0.1 s), not when it returns; the
 * session then ends operator_stop, its call's terminal entry `stopped`.
 */
static void
test_force_stop_in_flight(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	char id[SNAP_ID_MAX], sink[160];
	struct session_row r;
	int64_t t0;
	int i;

	(void)state;
	snprintf(sink, sizeof sink, "%s/stop.sink", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop", .vault_mode = "slow",
						    .timeout_ms = 15000 });
	start(s, &cfg, id);
	assert_true(wait_state(s, id, SESSION_STATE_RUNNING, 30000));
	assert_true(wait_lines(sink, 1, 20000));
	r = row_of(s, id);
	assert_true(r.call.active);
	assert_true(container_running(r.container));
	t0 = clock_mono_us();
	assert_int_equal(supervisor_stop_session(s, id), 0);
	for (i = 0; i < 100 && container_running(r.container); i++)
		usleep(10 * 1000);
	print_message("  force-stop -> container not running in %lld ms (call still in flight: %d)\n",
		      (long long)(clock_mono_us() - t0) / 1000, row_of(s, id).call.active);
	assert_false(container_running(r.container));
	assert_non_null(wait_event(s, SUPERVISOR_EVENT_STOP_REQUESTED, id, -1, 1000));
	/* Ended well before the upstream's 10 s: the call did not wait for it. */
	assert_true(wait_state(s, id, SESSION_STATE_ENDED, 5000));
	r = row_of(s, id);
	assert_int_equal(r.end, SESSION_END_OPERATOR_STOP);
	assert_non_null(strstr(r.reason, "operator"));
	assert_int_equal(containers_of(id), 0);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/*
 * Sessions stopped while they wait for a launch slot never create a
 * container. The first SUPERVISOR_LAUNCH_PARALLEL sessions are let take
 * the slots first: each is seen creating its container (it holds its slot
 * from then until its launch is done, hundreds of ms), and only then are
 * the others started, each stopped at once while it waits for a slot.
 */
static bool
holding_slots(struct supervisor *s, char ids[][SNAP_ID_MAX], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		enum session_state st = row_of(s, ids[i]).state;

		if (st < SESSION_STATE_CREATING || st >= SESSION_STATE_RUNNING)
			return false;
	}
	return true;
}

static void
test_stop_before_launch(void **state)
{
	enum { HOLD = SUPERVISOR_LAUNCH_PARALLEL, N = 2 * SUPERVISOR_LAUNCH_PARALLEL };
	static struct airlock_config cfg[N];
	char ids[N][SNAP_ID_MAX], sink[160];
	struct supervisor *s = open_supervisor();
	struct session_row r;
	size_t i;
	int ms;

	(void)state;
	snprintf(sink, sizeof sink, "%s/queued.sink", work);
	for (i = 0; i < N; i++)
		make_config(&cfg[i], sink, &(struct cfg_spec){ .mode = "loop" });
	for (i = 0; i < HOLD; i++)
		start(s, &cfg[i], ids[i]);
	for (ms = 0; ms < 30000 && !holding_slots(s, ids, HOLD); ms++)
		usleep(1000);
	assert_true(holding_slots(s, ids, HOLD));
	for (i = HOLD; i < N; i++) {
		start(s, &cfg[i], ids[i]);
		assert_int_equal(supervisor_stop_session(s, ids[i]), 0);
	}
	for (i = HOLD; i < N; i++) {
		assert_true(wait_state(s, ids[i], SESSION_STATE_ENDED, 30000));
		r = row_of(s, ids[i]);
		assert_int_equal(r.end, SESSION_END_OPERATOR_STOP);
		assert_string_equal(r.container, "");
		assert_int_equal(containers_of(ids[i]), 0);
		assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='admission' and"
				      " decision in ('admitted', 'refused')", ids[i]), 0);
	}
	for (i = 0; i < HOLD; i++)
		assert_true(wait_state(s, ids[i], SESSION_STATE_RUNNING, 30000));
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	for (i = 0; i < N; i++)
		config_free(&cfg[i]);
}

/*
 * A refusing second inspection (the test-only mutant "readmit_strict" makes
 * the second look expect one pid less than the container has) is copied
 * in full beside the first, names its check, and stops the session before
 * any data entered.
 */
static void
test_second_inspection_refused(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	struct session_detail *d = malloc(sizeof *d);
	const struct supervisor_event *e;
	char id[SNAP_ID_MAX], sink[160];
	const struct check_item *it = NULL;
	struct session_row r;
	size_t i;

	(void)state;
	assert_non_null(d);
	snprintf(sink, sizeof sink, "%s/second.sink", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop" });
	setenv("AIRLOCK_MUTANT", "readmit_strict", 1);
	start(s, &cfg, id);
	assert_true(wait_state(s, id, SESSION_STATE_ENDED, 30000));
	unsetenv("AIRLOCK_MUTANT");
	r = row_of(s, id);
	assert_int_equal(r.end, SESSION_END_ADMISSION_REFUSED);
	assert_int_equal(r.admission_first, ADMISSION_ADMITTED);
	assert_int_equal(r.admission_second, ADMISSION_REFUSED);
	assert_string_equal(r.refused_check, "pids_limit");
	assert_non_null(strstr(r.reason, "second inspection"));
	assert_int_equal(supervisor_detail(s, id, d), 0);
	assert_int_equal(d->first.verdict, ADMISSION_ADMITTED);
	assert_int_equal(d->second.verdict, ADMISSION_REFUSED);
	assert_int_equal(d->second.n, ADMISSION_CHECK_COUNT);
	for (i = 0; i < d->second.n; i++)
		if (strcmp(d->second.items[i].id, "pids_limit") == 0)
			it = &d->second.items[i];
	assert_non_null(it);
	assert_false(it->pass);
	assert_string_equal(it->observed, "32");
	assert_string_equal(it->expected, "31");
	e = wait_event(s, SUPERVISOR_EVENT_ADMISSION_REFUSED, id, -1, 1000);
	assert_non_null(e);
	assert_string_equal(e->check, "pids_limit");
	assert_string_equal(e->reason, "second");
	assert_int_equal(seam_lines(sink), 0);		/* no data entered */
	assert_int_equal(containers_of(id), 0);
	free(d);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/* Each failure reaches the row and the audit log with its cause, payload-free. */
static void
test_failure_reasons(void **state)
{
	static struct airlock_config cfg[3];
	static const char missing_image[] =
		"sha256:0000000000000000000000000000000000000000000000000000000000000000";
	char ids[3][SNAP_ID_MAX], sink[160], payload[200];
	struct supervisor *s = open_supervisor();
	struct session_row r;
	size_t i;

	(void)state;
	snprintf(sink, sizeof sink, "%s/reasons.sink", work);
	snprintf(payload, sizeof payload, "%s/no-such-payload.json", work);
	make_config(&cfg[0], sink, &(struct cfg_spec){ .mode = "loop", .image = missing_image });
	make_config(&cfg[1], sink, &(struct cfg_spec){ .mode = "loop", .payload = payload });
	make_config(&cfg[2], sink, &(struct cfg_spec){ .mode = "normal",
						       .upstream = "/nonexistent/upstream" });
	for (i = 0; i < 3; i++)
		start(s, &cfg[i], ids[i]);
	for (i = 0; i < 3; i++)
		assert_true(wait_state(s, ids[i], SESSION_STATE_ENDED, 30000));

	r = row_of(s, ids[0]);
	print_message("  missing image: %s\n", r.reason);
	assert_int_equal(r.end, SESSION_END_CONTAINER_FAILED);
	assert_string_equal(r.failed_step, "create");
	assert_non_null(strstr(r.reason, "create"));
	assert_non_null(strstr(r.reason, "No such image"));
	assert_true(seam_audit_rows(db, "session_id='%s' and type='session_end' and detail like '%%No such image%%'",
			 ids[0]) == 1);

	r = row_of(s, ids[1]);
	print_message("  missing payload: %s\n", r.reason);
	assert_int_equal(r.end, SESSION_END_INITIAL_REFUSED);
	assert_non_null(strstr(r.reason, "no such file"));
	assert_non_null(strstr(r.reason, "no-such-payload.json"));

	r = row_of(s, ids[2]);
	print_message("  upstream cannot start: %s\n", r.reason);
	assert_int_equal(r.end, SESSION_END_UPSTREAM_UNAVAILABLE);
	assert_non_null(strstr(r.reason, "upstream vault"));
	assert_int_equal(seam_lines(sink), 0);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	for (i = 0; i < 3; i++)
		config_free(&cfg[i]);
}

/*
 * A console that runs for days: 300 sessions over the supervisor's life
 * (each ends at once: its payload file is missing) reuse the slots of
 * ended ones. Nobody drains events meanwhile: state events overflow and
 * are counted, while every end alert is still there; sequence numbers
 * rise; the wake descriptor stays readable while events remain.
 */
static void
test_long_running(void **state)
{
	enum { N = 300 };
	static char ids[N][SNAP_ID_MAX];
	struct supervisor_snapshot snap = { 0 };
	struct supervisor_event ev[100];
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	char sink[160], payload[200];
	struct pollfd pfd;
	size_t i, ends = 0;
	uint64_t seq = 0;

	(void)state;
	snprintf(sink, sizeof sink, "%s/long.sink", work);
	snprintf(payload, sizeof payload, "%s/absent.json", work);
	make_config(&cfg, sink, &(struct cfg_spec){ .mode = "loop", .payload = payload });
	for (i = 0; i < N; i++) {
		start(s, &cfg, ids[i]);
		assert_true(wait_state(s, ids[i], SESSION_STATE_ENDED, 10000));
	}
	assert_int_equal(supervisor_snapshot(s, &snap), 1);
	assert_true(snap.n <= SUPERVISOR_SESSIONS_MAX);
	assert_int_equal(snap.started_total, N);
	assert_int_equal(snap.forgotten_total, N - snap.n);
	assert_true(snap.events_dropped > 0);
	assert_int_equal(snap.alerts_dropped, 0);
	supervisor_snapshot_free(&snap);

	assert_int_equal(supervisor_events(s, ev, 100), 100);
	pfd = (struct pollfd){ .fd = supervisor_wake_fd(s), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 1);	/* re-armed: more remain */
	for (i = 0; i < 100; i++)
		event_log[i] = ev[i];
	n_log = 100;
	drain(s);
	for (i = 0; i < n_log; i++) {
		assert_true(event_log[i].seq > seq);
		seq = event_log[i].seq;
		assert_true(event_log[i].wall_ms > 1700000000000LL);
		ends += event_log[i].kind == SUPERVISOR_EVENT_END && event_log[i].alert &&
			event_log[i].end == SESSION_END_INITIAL_REFUSED;
	}
	assert_int_equal(ends, N);	/* not one alert lost behind the state burst */
	assert_int_equal(poll(&pfd, 1, 0), 0);

	assert_int_equal(supervisor_forget(s, ids[N - 1]), 0);
	assert_int_equal(row_of(s, ids[N - 1]).state, SESSION_STATE_COUNT);	/* gone */
	assert_int_equal(supervisor_forget(s, ids[N - 1]), -1);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/* Host checks run on their own thread and arrive as a snapshot. */
static void
test_host_checks(void **state)
{
	struct supervisor *s = open_supervisor();
	struct host_snapshot h;
	bool ping = false;
	size_t i;
	int n;

	(void)state;
	supervisor_host(s, &h);
	assert_int_equal(h.generation, 0);
	assert_int_equal(supervisor_host_refresh(s, "runc"), 0);
	for (n = 0; n < 200; n++) {
		supervisor_host(s, &h);
		if (h.generation > 0)
			break;
		usleep(50 * 1000);
	}
	assert_int_equal(h.generation, 1);
	assert_false(h.running);
	for (i = 0; i < h.n; i++)
		if (!h.items[i].pass)
			print_message("FAIL %s: %s\n", h.items[i].id, h.items[i].observed);
	assert_true(h.passed);
	assert_true(h.n > 5);
	assert_string_equal(h.runtime, "runc");
	assert_true(h.endpoint[0] != '\0');
	assert_true(h.daemon_version[0] != '\0');
	for (i = 0; i < h.n; i++)
		ping |= strcmp(h.items[i].id, "daemon_ping") == 0 && h.items[i].pass;
	assert_true(ping);
	/* doctor's confinement checks too: what every upstream and parser needs here */
	for (const char *const *id = (const char *const[]){ "landlock", "upstream_seccomp",
			"upstream_user", "parser", NULL }; *id; id++) {
		for (i = 0; i < h.n && strcmp(h.items[i].id, *id) != 0; i++)
			;
		assert_true(i < h.n);
		assert_true(h.items[i].pass);
	}
	supervisor_close(s);
}

static int
setup(void **state)
{
	(void)state;
	return seam_setup(work, db, sizeof db, CANARY, &audit);
}

static int
teardown(void **state)
{
	(void)state;
	return seam_teardown(work, audit);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_checks),
		cmocka_unit_test(test_failure_reasons),
		cmocka_unit_test(test_second_inspection_refused),
		cmocka_unit_test(test_stop_before_launch),
		cmocka_unit_test(test_force_stop_in_flight),
		cmocka_unit_test(test_not_applicable),
		cmocka_unit_test(test_revoke_stands),
		cmocka_unit_test(test_cutover_alias),
		cmocka_unit_test(test_grant_calls),
		cmocka_unit_test(test_grant_time),
		cmocka_unit_test(test_policy_spans),
		cmocka_unit_test(test_freeze),
		cmocka_unit_test(test_standing_outlives),
		cmocka_unit_test(test_standing_unreadable),
		cmocka_unit_test(test_gate_end_to_end),
		cmocka_unit_test(test_cutover_many),
		cmocka_unit_test(test_long_running),
	};

	return cmocka_run_group_tests_name("supervisor", tests, setup, teardown);
}
