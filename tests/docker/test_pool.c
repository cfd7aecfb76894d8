/*
 * The warm pool against the real daemon (docs/guarantees.md, "Pooled
 * sessions"): a claim yields a working session with a normal audit; a
 * pooled container whose lease failed, that aged, that was changed on the
 * daemon, killed and started again, or that has an exec running is never
 * claimed; the claim's second admission is what refuses the last three
 * (and, with the mutant process_unchecked, claims the last two); shutdown
 * leaves no container.
 *
 * The suite links the mutant build of the engine (engine/base/mutant.h):
 * AIRLOCK_MUTANT is set only around the tests that name a mutant.
 *
 * Environment (set by pool.sh): AIRLOCK_AGENT_IMAGE, AIRLOCK_UPSTREAM,
 * AIRLOCK_BIN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker.h"
#include "profile.h"
#include "supervisor.h"

#include "seam_util.h"

#define CANARY "POOL-CANARY-51c2"
#define SOCK "/var/run/docker.sock"

static char work[] = "/tmp/airlock-pool-XXXXXX";
static char db[128];
static struct audit *audit;


/* An agent that makes one call with its initial frame and exits. */
static void
make_config(struct airlock_config *c, const char *sink, unsigned size, long max_age_ms)
{
	char text[4096];
	struct al_err err;
	json_t *root;

	snprintf(text, sizeof text,
		 "{\"profile\": {\"image\": \"%s\", \"cmd\": [\"echo_initial\"]},"
		 " \"bounds\": {\"session_ms\": 60000},"
		 " \"upstreams\": {\"vault\": {\"argv\": [\"%s\", \"--sink\", \"%s\"],"
		 "                          \"paths\": {\"rw\": [\"%s\"]}}},"
		 " \"tools\": {\"store\": {\"upstream\": \"vault\", \"remote\": \"store\","
		 "   \"data_class\": \"confidential\", \"sink_ceiling\": \"confidential\","
		 "   \"response_ceiling\": \"confidential\"}},"
		 " \"aliases\": {\"save\": \"store\"},"
		 " \"initial\": {\"class\": \"confidential\", \"file\": \"%s/payload.json\"},"
		 " \"pool\": {\"size\": %u, \"max_age_ms\": %ld}}",
		 seam_env("AIRLOCK_AGENT_IMAGE"), seam_env("AIRLOCK_UPSTREAM"), sink, work, work, size, max_age_ms);
	root = json_loads(text, 0, NULL);
	config_init(c);
	assert_non_null(root);
	if (config_load_json(c, root, 2, &err) < 0)
		fail_msg("config: %s", err.msg);
	json_decref(root);
}



static struct supervisor *
open_supervisor(void)
{
	struct supervisor_options o = { .audit = audit, .watchdog_exe = seam_env("AIRLOCK_BIN") };
	struct supervisor *s;
	struct al_err err;

	if (supervisor_open(&o, &s, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	return s;
}

static void
start(struct supervisor *s, const struct airlock_config *c, char id[SNAP_ID_MAX])
{
	struct al_err err;

	if (supervisor_start(s, c, id, &err) < 0)
		fail_msg("start: %s", err.msg);
}

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

static struct snap_pool
pool_of(struct supervisor *s)
{
	struct supervisor_snapshot snap = { 0 };
	struct snap_pool p = { 0 };

	assert_true(supervisor_snapshot(s, &snap) >= 0);
	assert_true(snap.n_pools <= 1);
	if (snap.n_pools == 1)
		p = snap.pools[0];
	supervisor_snapshot_free(&snap);
	return p;
}

static bool
wait_ended(struct supervisor *s, const char *id, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (row_of(s, id).state == SESSION_STATE_ENDED)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static bool
wait_ready(struct supervisor *s, uint32_t want, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (pool_of(s).ready >= want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static bool
wait_discarded(struct supervisor *s, uint64_t want, int ms)
{
	for (; ms > 0; ms -= 50) {
		if (pool_of(s).discarded >= want)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

static struct docker *
dk(void)
{
	struct al_err err;
	struct docker *d = docker_open(SOCK, DOCKER_TIMEOUT_MS, &err);

	assert_non_null(d);
	return d;
}

static bool
gone(const char *id)
{
	struct docker *d = dk();
	struct al_err err;
	bool g = false;

	assert_int_equal(docker_gone(d, id, &g, &err), 0);
	docker_close(d);
	return g;
}

static bool
wait_gone(const char *id, int ms)
{
	for (; ms > 0; ms -= 100) {
		if (gone(id))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/*
 * The one pooled container of this process that is waiting (its session
 * label is a pool label, and no session claimed it): its id into out.
 */
static bool
pooled_container(char out[DOCKER_ID_MAX], const char *not)
{
	char label[64];
	struct docker *d = dk();
	struct al_err err;
	json_t *list = NULL, *it;
	size_t i;
	bool found = false;

	snprintf(label, sizeof label, "%s=%ld", LABEL_OWNER_PID, (long)getpid());
	assert_int_equal(docker_list_by_label(d, label, &list, &err), 0);
	json_array_foreach(list, i, it) {
		const char *id = json_string_value(json_object_get(it, "Id"));
		const char *sess = json_string_value(json_object_get(json_object_get(it, "Labels"),
								     LABEL_SESSION));

		if (id && sess && strncmp(sess, "p-", 2) == 0 && (!not || strcmp(id, not) != 0) &&
		    !found) {
			snprintf(out, DOCKER_ID_MAX, "%s", id);
			found = true;
		}
	}
	json_decref(list);
	docker_close(d);
	return found;
}

/* The pid of the watchdog guarding container id (its argv names it). */
static long
watchdog_of(const char *id)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	char path[300], buf[4096];
	long pid = -1;

	assert_non_null(dir);
	while (pid < 0 && (e = readdir(dir))) {
		FILE *f;
		size_t n, i;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, " watchdog ") && strstr(buf, id))
			pid = atol(e->d_name);
	}
	closedir(dir);
	return pid;
}

/* One pooled session's whole run: it ends normally, its one call was delivered. */
static struct session_row
run_one(struct supervisor *s, const struct airlock_config *c, const char *sink, size_t before)
{
	char id[SNAP_ID_MAX];
	struct session_row r;

	start(s, c, id);
	assert_true(wait_ended(s, id, 60000));
	r = row_of(s, id);
	assert_int_equal(r.end, SESSION_END_AGENT_EXIT);
	assert_int_equal(seam_lines(sink), before + 1);	/* the agent's call reached the sink */
	return r;
}

/* A config's pool, warmed by a first (cold) session, ready with n. */
static void
warm_up(struct supervisor *s, const struct airlock_config *c, const char *sink, uint32_t n)
{
	struct session_row r = run_one(s, c, sink, seam_lines(sink));

	assert_true(wait_ready(s, n, 30000));
	(void)r;
}

/* Containers of this process left on the daemon, running or not. */
static size_t
managed_left(void)
{
	char label[64];
	struct docker *d = dk();
	struct al_err err;
	json_t *list = NULL;
	size_t n;

	snprintf(label, sizeof label, "%s=%ld", LABEL_OWNER_PID, (long)getpid());
	assert_int_equal(docker_list_by_label(d, label, &list, &err), 0);
	n = json_array_size(list);
	json_decref(list);
	docker_close(d);
	return n;
}

/* The claim's refusals in session id's audit that name check. */
static int
claim_refusals(const char *id, const char *check)
{
	return seam_audit_rows(db, "session_id='%s' and type='admission' and decision='refused' and"
			       " rule='%s' and detail like '%%\"claim\"%%'", id, check);
}

/* A docker kill and a docker start, as an operator (or anyone on the socket) would type them. */
static void
kill_and_start(const char *id)
{
	char cmd[256];

	snprintf(cmd, sizeof cmd, "docker kill %s >/dev/null && docker start %s >/dev/null", id, id);
	assert_int_equal(system(cmd), 0);
}

/*
 * A docker exec into id that stays (the agent binary, blocked on the
 * stdin this process holds): the daemon lists it in ExecIDs while it
 * runs. The caller pcloses it.
 */
static FILE *
exec_into(const char *id)
{
	char cmd[256];
	struct docker *d = dk();
	struct al_err err;
	json_t *in;
	size_t n = 0;
	FILE *f;
	int ms;

	snprintf(cmd, sizeof cmd, "docker exec -i %s /agent stall", id);
	f = popen(cmd, "w");
	assert_non_null(f);
	for (ms = 0; ms < 20000 && n == 0; ms += 50) {
		in = NULL;
		assert_int_equal(docker_inspect(d, id, &in, &err), 0);
		n = json_array_size(json_object_get(in, "ExecIDs"));
		json_decref(in);
		if (n == 0)
			usleep(50 * 1000);
	}
	docker_close(d);
	assert_int_equal(n, 1);
	return f;
}

/* (a) A claim yields a working session, its audit as a cold one's. */
static void
test_claim(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	char sink[160], pooled[DOCKER_ID_MAX];
	struct session_row r;
	struct snap_pool p;

	(void)state;
	snprintf(sink, sizeof sink, "%s/claim.sink", work);
	make_config(&cfg, sink, 1, 600000);
	warm_up(s, &cfg, sink, 1);
	assert_true(pooled_container(pooled, NULL));
	r = run_one(s, &cfg, sink, 1);
	assert_string_equal(r.container, pooled);	/* it ran in the pooled one */
	assert_int_equal(r.admission_first, ADMISSION_ADMITTED);
	assert_int_equal(r.admission_second, ADMISSION_ADMITTED);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='session_start'", r.id), 1);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='admission' and decision='pass' and"
			      " rule='preflight'", r.id), 1);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='admission' and decision='admitted'",
			      r.id), 2);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='admission' and decision='refused'",
			      r.id), 0);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='call' and decision='allowed'", r.id), 1);
	assert_int_equal(seam_audit_rows(db, "session_id='%s' and type='session_end' and decision='normal' and"
			      " detail like '%%\"pooled\":true%%'", r.id), 1);
	assert_true(wait_gone(pooled, 10000));		/* removed at the session's end */
	assert_true(wait_ready(s, 1, 30000));		/* refilled */
	p = pool_of(s);
	assert_int_equal(p.claimed, 1);
	assert_int_equal(p.size, 1);
	assert_int_equal(supervisor_shutdown(s), 0);	/* the ready one too: none left */
	assert_false(pooled_container(pooled, NULL));
	supervisor_close(s);
	config_free(&cfg);
}

/* (b) A pooled container whose lease failed is discarded, never claimed. */
static void
test_lease_failed(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	char sink[160], pooled[DOCKER_ID_MAX];
	struct session_row r;
	long pid;

	(void)state;
	snprintf(sink, sizeof sink, "%s/lease.sink", work);
	make_config(&cfg, sink, 1, 600000);
	warm_up(s, &cfg, sink, 1);
	assert_true(pooled_container(pooled, NULL));
	pid = watchdog_of(pooled);
	assert_true(pid > 0);
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
	assert_true(wait_discarded(s, 1, 10000));
	assert_true(wait_gone(pooled, 10000));
	r = run_one(s, &cfg, sink, 1);
	assert_true(r.container[0] != '\0');
	assert_string_not_equal(r.container, pooled);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/* (c) A pooled container past max_age_ms is discarded and replaced. */
static void
test_aged(void **state)
{
	struct airlock_config cfg;
	struct supervisor *s = open_supervisor();
	char sink[160], first[DOCKER_ID_MAX], next[DOCKER_ID_MAX];
	struct session_row r;
	int ms;

	(void)state;
	snprintf(sink, sizeof sink, "%s/aged.sink", work);
	make_config(&cfg, sink, 1, 3000);
	warm_up(s, &cfg, sink, 1);
	assert_true(pooled_container(first, NULL));
	assert_true(wait_discarded(s, 1, 10000));
	assert_true(wait_gone(first, 10000));
	for (ms = 0; ms < 20000 && !pooled_container(next, first); ms += 100)
		usleep(100 * 1000);
	assert_true(ms < 20000);		/* replaced */
	r = run_one(s, &cfg, sink, 1);
	assert_string_not_equal(r.container, first);
	assert_int_equal(supervisor_shutdown(s), 0);
	supervisor_close(s);
	config_free(&cfg);
}

/* One pooled scenario: a pool of one for its config, warmed, and the container waiting in it. */
struct scene {
	struct airlock_config cfg;
	struct supervisor *s;
	char sink[160];
	char pooled[DOCKER_ID_MAX];
};

static void
scene_open(struct scene *x, const char *name)
{
	x->s = open_supervisor();
	snprintf(x->sink, sizeof x->sink, "%s/%s.sink", work, name);
	make_config(&x->cfg, x->sink, 1, 600000);
	warm_up(x->s, &x->cfg, x->sink, 1);
	assert_true(pooled_container(x->pooled, NULL));
}

/* Shutdown leaves no container of this process, pooled or not. */
static void
scene_close(struct scene *x)
{
	assert_int_equal(supervisor_shutdown(x->s), 0);
	assert_int_equal(managed_left(), 0);
	supervisor_close(x->s);
	config_free(&x->cfg);
}

/* Session id's refused admissions, the claim's included. */
static int
refusals(const char *id)
{
	return seam_audit_rows(db, "session_id='%s' and type='admission' and decision='refused'", id);
}

/*
 * A session ran, in another container than the pooled one: the claim's
 * second admission refused that one under check (its only refusal, in
 * the session's audit), and it was discarded and removed.
 */
static void
expect_claim_refused(struct scene *x, const char *check)
{
	struct session_row r = run_one(x->s, &x->cfg, x->sink, 1);

	assert_true(r.container[0] != '\0');
	assert_string_not_equal(r.container, x->pooled);
	assert_int_equal(r.admission_second, ADMISSION_ADMITTED);
	assert_int_equal(claim_refusals(r.id, check), 1);
	assert_int_equal(refusals(r.id), 1);
	assert_true(pool_of(x->s).discarded >= 1);
	assert_int_equal(pool_of(x->s).claimed, 0);
	assert_true(wait_gone(x->pooled, 10000));
}

/*
 * (d, e) A pooled container changed on the daemon is refused by the
 * claim's second admission: the only check that reads its memory limit
 * after it was pooled. The session runs in another, never in it.
 */
static void
test_tampered(void **state)
{
	struct scene x;
	char cmd[256];

	(void)state;
	scene_open(&x, "tamper");
	snprintf(cmd, sizeof cmd, "docker update --memory 256m --memory-swap 256m %s >/dev/null",
		 x.pooled);
	assert_int_equal(system(cmd), 0);
	expect_claim_refused(&x, "memory");
	scene_close(&x);
}

/*
 * (f) A pooled container killed and started again is refused by the
 * claim's second admission under "process": another Pid and StartedAt
 * than its launch recorded (RestartCount stays 0 for a manual start). The
 * mutant pool_unwatched keeps the filler from seeing it stopped between
 * the kill and the start, so the claim alone meets it.
 */
static void
test_restarted(void **state)
{
	struct scene x;

	(void)state;
	setenv("AIRLOCK_MUTANT", "pool_unwatched", 1);
	scene_open(&x, "restart");
	kill_and_start(x.pooled);
	expect_claim_refused(&x, "process");
	scene_close(&x);
}

/*
 * (f, as shipped) Without the mutant the filler may see the container
 * stopped between the kill and the start and discard it first: either
 * way it is never claimed, and a claim that met it named "process".
 */
static void
test_restarted_watched(void **state)
{
	struct scene x;
	struct session_row r;

	(void)state;
	scene_open(&x, "restart-watched");
	kill_and_start(x.pooled);
	r = run_one(x.s, &x.cfg, x.sink, 1);
	assert_string_not_equal(r.container, x.pooled);
	assert_int_equal(refusals(r.id), claim_refusals(r.id, "process"));
	assert_true(wait_gone(x.pooled, 10000));
	scene_close(&x);
}

/*
 * (g) A pooled container with an exec running (it could read the agent's
 * stdin, where the initial frame goes) is refused by the claim's second
 * admission under "exec_ids", and removed with the exec.
 */
static void
test_exec(void **state)
{
	struct scene x;
	FILE *exec;

	(void)state;
	scene_open(&x, "exec");
	exec = exec_into(x.pooled);
	expect_claim_refused(&x, "exec_ids");
	pclose(exec);
	scene_close(&x);
}

/* One session started and ended: its row, claimed from the pool with no refusal. */
static struct session_row
run_claimed(struct scene *x)
{
	char id[SNAP_ID_MAX];
	struct session_row r;

	start(x->s, &x->cfg, id);
	assert_true(wait_ended(x->s, id, 60000));
	r = row_of(x->s, id);
	assert_string_equal(r.container, x->pooled);
	assert_int_equal(r.admission_second, ADMISSION_ADMITTED);
	assert_int_equal(refusals(r.id), 0);
	assert_true(wait_gone(x->pooled, 10000));
	return r;
}

/*
 * (h) The leak without the checks of the container's process (mutant
 * process_unchecked): the container killed and started again is claimed,
 * and so is the one with an exec running. The sessions run in them.
 */
static void
test_unchecked_claims(void **state)
{
	struct scene x;
	struct session_row r;
	FILE *exec;

	(void)state;
	setenv("AIRLOCK_MUTANT", "process_unchecked,pool_unwatched", 1);
	scene_open(&x, "unchecked");
	kill_and_start(x.pooled);
	r = run_claimed(&x);
	print_message("    the restarted container claimed; the session ended %s\n",
		      session_end_id(r.end));
	assert_true(wait_ready(x.s, 1, 30000));
	assert_true(pooled_container(x.pooled, NULL));
	exec = exec_into(x.pooled);
	r = run_claimed(&x);
	assert_int_equal(r.end, SESSION_END_AGENT_EXIT);	/* its frame went in, beside the exec */
	assert_int_equal(pool_of(x.s).claimed, 2);
	pclose(exec);
	scene_close(&x);
}

static int
setup(void **state)
{
	(void)state;
	return seam_setup(work, db, sizeof db, CANARY, &audit);
}

/* A test that set AIRLOCK_MUTANT leaves none behind, even when it failed. */
static int
no_mutant(void **state)
{
	(void)state;
	return unsetenv("AIRLOCK_MUTANT");
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
		cmocka_unit_test(test_claim),
		cmocka_unit_test(test_lease_failed),
		cmocka_unit_test(test_aged),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test_teardown(test_restarted, no_mutant),
		cmocka_unit_test(test_restarted_watched),
		cmocka_unit_test(test_exec),
		cmocka_unit_test_teardown(test_unchecked_claims, no_mutant),
	};

	return cmocka_run_group_tests_name("pool", tests, setup, teardown);
}
