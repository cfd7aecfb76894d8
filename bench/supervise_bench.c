/*
 * Supervisor benchmarks against the real daemon:
 *
 *   cutover  update -> acknowledged for a live session: idle (its calls are
 *            sub-millisecond) and behind an in-flight call (the upstream
 *            holds its first call 10 s), side by side with the bare gate
 *            (no session) as the floor
 *   scale    N concurrent sessions for S seconds; counts missed leases
 *            (sessions ended by the watchdog) and the worst ack round trip;
 *            then one revoke on all and the time to each acknowledgement.
 *            Each agent calls every 200 ms, or every SCALE_PACE_MS when set
 *            (an agent that mostly waits on its model)
 *
 * usage: supervise_bench AIRLOCK AGENT_IMAGE UPSTREAM cutover
 *        supervise_bench AIRLOCK AGENT_IMAGE UPSTREAM scale [N] [SECONDS]
 */
#include <curl/curl.h>
#include <dirent.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_config.h"
#include "clock.h"
#include "supervisor.h"

static const char *airlock, *image, *upstream;
static char agent_cmd[48] = "\"loop\"";	/* the agent's argv, as JSON array items */
static char work[] = "/tmp/airlock-bench-XXXXXX";

static void
print_stats(const char *label, double *v, int n)
{
	bench_sort(v, (size_t)n);
	printf("  %-40s n=%-4d p50 %9.1f  p90 %9.1f  max %9.1f us\n", label, n,
	       v[n / 2] * 1e3, v[(int)(n * 0.9)] * 1e3, v[n - 1] * 1e3);
}

/* Private memory (clean + dirty) of a process, in kB; -1 when unreadable. */
static long
private_kb(long pid)
{
	char path[64], line[128];
	long kb, sum = -1;
	FILE *f;

	snprintf(path, sizeof path, pid ? "/proc/%ld/smaps_rollup" : "/proc/self/smaps_rollup", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if ((sscanf(line, "Private_Clean: %ld kB", &kb) == 1 ||
		     sscanf(line, "Private_Dirty: %ld kB", &kb) == 1))
			sum = (sum < 0 ? 0 : sum) + kb;
	fclose(f);
	return sum;
}

/*
 * The sessions' parsers (engine/privsep: one a session, children of this
 * process named airlock-parser): their private memory summed, their count
 * in *n.
 */
static long
parsers_private_kb(long *n)
{
	char path[300], stat[256], *comm_end;
	DIR *d = opendir("/proc");
	struct dirent *e;
	long sum = 0, ppid, kb;
	FILE *f;

	*n = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		comm_end = fgets(stat, sizeof stat, f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		if (!comm_end || !strstr(stat, "(airlock-parser") ||
		    sscanf(comm_end + 2, "%*c %ld", &ppid) != 1 || ppid != (long)getpid() ||
		    (kb = private_kb(strtol(e->d_name, NULL, 10))) < 0)
			continue;
		sum += kb;
		(*n)++;
	}
	if (d)
		closedir(d);
	return sum;
}

/*
 * The upstreams' sinks: a directory their user (airlock-upstream, as the
 * engine runs them when it can change ids) may write, listed read-write in
 * their config; the rest of the scratch directory stays root's.
 */
static int
sinks_dir(void)
{
	const struct passwd *pw = geteuid() == 0 ? getpwnam("airlock-upstream") : NULL;
	char dir[64];

	snprintf(dir, sizeof dir, "%s/sinks", work);
	if (chmod(work, 0711) < 0 || mkdir(dir, 0700) < 0 ||
	    (pw && chown(dir, pw->pw_uid, pw->pw_gid) < 0))
		return -1;
	return 0;
}

static void
make_config(struct airlock_config *c, int i, const char *vault_mode, int session_s)
{
	char text[2048];

	snprintf(text, sizeof text,
		 "{\"profile\": {\"image\": \"%s\", \"cmd\": [%s]},"
		 " \"bounds\": {\"session_ms\": %d, \"calls\": 4096, \"stdout_bytes\": 4194304},"
		 " \"upstreams\": {\"u\": {\"argv\": [\"%s\", \"--sink\", \"%s/sinks/%d.sink\","
		 "  \"--mode\", \"%s\"], \"timeout_ms\": 20000, \"paths\": {\"rw\": [\"%s/sinks\"]}}},"
		 " \"tools\": {\"store\": {\"upstream\": \"u\", \"remote\": \"store\","
		 "  \"data_class\": \"public\", \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}},"
		 " \"aliases\": {\"save\": \"store\"}, \"initial\": {\"class\": \"public\"}}",
		 image, agent_cmd, session_s * 1000, upstream, work, i, vault_mode, work);
	bench_config(c, text);
}

static struct supervisor *
open_supervisor(struct audit **audit)
{
	static int n;
	struct supervisor *s;
	struct al_err err;
	char db[128];

	snprintf(db, sizeof db, "%s/audit-%d.db", work, n++);
	if (audit_open(db, audit, &err) < 0 ||
	    supervisor_open(&(struct supervisor_options){ .audit = *audit, .watchdog_exe = airlock },
			    &s, NULL, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	return s;
}

static size_t
count_state(struct supervisor *s, enum session_state state)
{
	struct supervisor_snapshot snap = { 0 };
	size_t i, n = 0;

	if (supervisor_snapshot(s, &snap) < 0)
		return 0;
	for (i = 0; i < snap.n; i++)
		n += snap.rows[i].state == state;
	supervisor_snapshot_free(&snap);
	return n;
}

/* Sessions running once all n are, or after 1200 polls; how many. */
static size_t
wait_running(struct supervisor *s, size_t n)
{
	/* A busy daemon starts about two a second: 2 minutes and a second a session. */
	double end = bench_now_ms() + (120.0 + (double)n) * 1000;
	size_t running = 0;

	while ((running = count_state(s, SESSION_STATE_RUNNING)) < n && bench_now_ms() < end)
		usleep(100 * 1000);
	return running;
}

static double
cutover_ms(struct supervisor *s, long revision, bool allow, int64_t *waited_us)
{
	struct cutover_ack ack;
	json_t *u = allow ? json_pack("{s:I, s:[s]}", "revision", (json_int_t)revision, "allowed", "store")
			  : json_pack("{s:I, s:[]}", "revision", (json_int_t)revision, "allowed");
	double t = bench_now_ms();

	supervisor_update_json(s, u, NULL, 0, &ack, 1);
	t = bench_now_ms() - t;
	json_decref(u);
	if (waited_us)
		*waited_us = ack.ack.waited_us;
	return t;
}

static void
bench_cutover(void)
{
	enum { N = 50 };
	double idle[N], bare[N], behind;
	struct airlock_config c1, c2;
	struct audit *audit, *audit2;
	struct supervisor *s = open_supervisor(&audit);
	bool approved[1] = { true }, allowed[1];
	char sink[160];
	struct gate_ack ack;
	struct gate *g;
	char id[40];
	struct al_err err;
	int64_t waited;
	int i;

	g = gate_new(approved, 1);
	for (i = 0; i < N; i++) {
		double t = bench_now_ms();

		allowed[0] = i % 2;
		gate_update(g, i + 1, allowed, 1, &ack);
		bare[i] = bench_now_ms() - t;
	}
	gate_free(g);
	make_config(&c1, 0, "echo", 600);
	supervisor_start(s, &c1, id, &err);
	wait_running(s, 1);
	for (i = 0; i < N; i++)
		idle[i] = cutover_ms(s, i + 1, i % 2, NULL);
	supervisor_shutdown(s);
	supervisor_close(s);
	s = open_supervisor(&audit2);
	make_config(&c2, 1, "slow", 600);	/* its first call takes 10 s */
	supervisor_start(s, &c2, id, &err);
	wait_running(s, 1);
	snprintf(sink, sizeof sink, "%s/sinks/1.sink", work);
	while (access(sink, F_OK) != 0)		/* the upstream got the call: in flight */
		usleep(10 * 1000);
	behind = cutover_ms(s, 1, false, &waited);
	printf("cutover: update -> acknowledged\n");
	print_stats("bare gate, no session (floor)", bare, N);
	print_stats("live session, idle", idle, N);
	printf("  %-40s n=1    %9.1f ms (of which waiting for the call %.1f ms)\n",
	       "behind an in-flight 10 s call", behind, waited / 1e3);
	bench_sort(bare, N);
	bench_sort(idle, N);
	printf("  %-40s %.1fx\n", "ratio p50 idle / floor", idle[N / 2] / bare[N / 2]);
	printf("sample: cutover_idle baseline=%.4f airlock=%.4f unit=ms\n", bare[N / 2], idle[N / 2]);
	printf("sample: cutover_in_flight baseline=- airlock=%.1f unit=ms\n", behind);
	printf("sample: cutover_in_flight_beyond_call baseline=- airlock=%.1f unit=ms\n",
	       behind - waited / 1e3);
	supervisor_shutdown(s);
	supervisor_close(s);
	audit_close(audit);
	audit_close(audit2);
	config_free(&c1);
	config_free(&c2);
}

/*
 * One revoke on all n live sessions: each acknowledgement's time, in ms, and
 * when the cutover call returned (every gate posted); how many came.
 */
static size_t
revoke_all(struct supervisor *s, size_t n, double *ms, double *posted)
{
	struct supervisor_event ev[256];
	size_t acks = 0, k, i;
	int64_t rev, t0 = clock_mono_us();
	struct al_err err;

	if (supervisor_cutover(s, CUTOVER_REVOKE, "store", NULL, 0, &rev, NULL, &err) < 0) {
		fprintf(stderr, "bench: revoke: %s\n", err.msg);
		return 0;
	}
	*posted = (double)(clock_mono_us() - t0) / 1e3;
	while (acks < n && clock_mono_us() - t0 < 30 * 1000000LL) {
		k = supervisor_events(s, ev, 256);
		for (i = 0; i < k; i++)
			if (ev[i].kind == SUPERVISOR_EVENT_CUTOVER_ACK && ev[i].revision == rev)
				ms[acks++] = (double)(clock_mono_us() - t0) / 1e3;
		if (k == 0)
			usleep(500);
	}
	return acks;
}

static void
bench_scale(int n, int seconds)
{
	struct airlock_config *cfg = calloc((size_t)n, sizeof *cfg);
	struct audit *audit;
	struct supervisor *s = open_supervisor(&audit);
	struct supervisor_snapshot snap = { 0 };
	uint64_t calls = 0, acks = 0, pulses = 0;
	int64_t worst = 0;
	size_t i, missed = 0, unarmed = 0, ended_early = 0, ends[SESSION_END_COUNT] = { 0 };
	struct al_err err;
	char id[40];
	double t0;
	long engine0 = private_kb(0), engine1, wd = 0, wd_seen = 0, kb, parsers = 0, parsers_seen;
	size_t left, running;
	/*
	 * Each session's bound covers the whole start of all n, not only the
	 * run: a busy daemon starts about one a second, and a session the
	 * bound ends before the run is over counts as ended early. At most
	 * the config's ceiling.
	 */
	int bound_s = seconds + 200 + n > BOUND_SESSION_MS_MAX / 1000
		      ? BOUND_SESSION_MS_MAX / 1000 : seconds + 200 + n;

	for (i = 0; i < (size_t)n; i++) {
		make_config(&cfg[i], (int)i, "echo", bound_s);
		if (supervisor_start(s, &cfg[i], id, &err) < 0)
			fprintf(stderr, "bench: %s\n", err.msg);
	}
	t0 = bench_now_ms();
	running = wait_running(s, (size_t)n);
	printf("scale: %zu of %d sessions running after %.1f s\n", running, n,
	       (bench_now_ms() - t0) / 1e3);
	sleep((unsigned)seconds);
	supervisor_snapshot(s, &snap);
	for (i = 0; i < snap.n; i++) {
		const struct session_row *r = &snap.rows[i];

		calls += r->counters.calls;
		acks += r->lease.acks;
		pulses += r->lease.pulses;
		if (r->lease.armed && (kb = private_kb(r->lease.watchdog_pid)) >= 0) {
			wd += kb;
			wd_seen++;
		}
		if (r->lease.max_ack_us > worst)
			worst = r->lease.max_ack_us;
		missed += r->lease.failed;
		unarmed += !r->lease.armed;
		if (r->state == SESSION_STATE_ENDED) {
			ended_early++;
			ends[r->end]++;
		}
	}
	supervisor_snapshot_free(&snap);
	engine1 = private_kb(0);
	parsers = parsers_private_kb(&parsers_seen);
	{
		struct supervisor_event old[256];
		double *ack = calloc((size_t)n, sizeof *ack), posted = -1.0;
		size_t got, live;

		while (supervisor_events(s, old, 256) > 0)	/* the run's: not the revoke's */
			;
		live = count_state(s, SESSION_STATE_RUNNING);
		got = ack ? revoke_all(s, live, ack, &posted) : 0;

		bench_sort(ack, got);
		printf("  revoke on all %zu running: %zu acknowledged; p50 %.1f ms, max %.1f ms "
		       "(posted to every gate after %.1f ms)\n", live, got, got ? ack[got / 2] : -1.0,
		       got ? ack[got - 1] : -1.0, posted);
		printf("sample: scale_revoke_ack_p50 baseline=- airlock=%.1f unit=ms\n",
		       got ? ack[got / 2] : -1.0);
		printf("sample: scale_revoke_ack_max baseline=- airlock=%.1f unit=ms\n",
		       got ? ack[got - 1] : -1.0);
		printf("sample: scale_revoke_acked baseline=%zu airlock=%zu unit=count\n", live, got);
		free(ack);
	}
	printf("  %d s: %llu calls, %llu pulses, %llu acks, worst ack %.1f ms\n", seconds,
	       (unsigned long long)calls, (unsigned long long)pulses,
	       (unsigned long long)acks, worst / 1e3);
	printf("  missed leases: %zu; leases never armed: %zu; sessions ended early: %zu\n",
	       missed, unarmed, ended_early);
	for (i = 0; i < SESSION_END_COUNT; i++)
		if (ends[i])
			printf("    ended %-22s %zu\n", session_end_id((enum session_end)i), ends[i]);
	printf("  memory: engine private %ld kB before, %ld kB with %d sessions; "
	       "%ld watchdogs, %ld kB private in all; %ld parsers, %ld kB private in all\n",
	       engine0, engine1, n, wd_seen, wd, parsers_seen, parsers);
	left = (size_t)supervisor_shutdown(s);
	printf("  shutdown: %zu containers left\n", left);
	printf("sample: scale_running baseline=%d airlock=%zu unit=count\n", n, running);
	printf("sample: scale_missed_leases baseline=- airlock=%zu unit=count\n", missed);
	printf("sample: scale_ended_early baseline=- airlock=%zu unit=count\n", ended_early);
	printf("sample: scale_containers_left baseline=- airlock=%zu unit=count\n", left);
	printf("sample: scale_engine_private_per_session baseline=- airlock=%.0f unit=kB\n",
	       (double)(engine1 - engine0) / n);
	printf("sample: scale_watchdog_private_per_session baseline=- airlock=%.0f unit=kB\n",
	       wd_seen ? (double)wd / wd_seen : -1.0);
	printf("sample: scale_parser_private_per_session baseline=- airlock=%.0f unit=kB\n",
	       parsers_seen ? (double)parsers / parsers_seen : -1.0);
	printf("sample: scale_private_per_session baseline=- airlock=%.0f unit=kB\n",
	       (double)(engine1 - engine0) / n + (wd_seen ? (double)wd / wd_seen : 0) +
	       (parsers_seen ? (double)parsers / parsers_seen : 0));
	supervisor_close(s);
	audit_close(audit);
	for (i = 0; i < (size_t)n; i++)
		config_free(&cfg[i]);
	free(cfg);
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 5) {
		fprintf(stderr, "usage: supervise_bench AIRLOCK AGENT_IMAGE UPSTREAM cutover|scale [N] [SECONDS]\n");
		return 2;
	}
	airlock = argv[1];
	image = argv[2];
	upstream = argv[3];
	if (getenv("SCALE_PACE_MS") && atoi(getenv("SCALE_PACE_MS")) > 0)
		snprintf(agent_cmd, sizeof agent_cmd, "\"pace\", \"%d\"", atoi(getenv("SCALE_PACE_MS")));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!mkdtemp(work) || sinks_dir() < 0)
		return 1;
	if (strcmp(argv[4], "cutover") == 0)
		bench_cutover();
	else
		bench_scale(argc > 5 ? atoi(argv[5]) : 100, argc > 6 ? atoi(argv[6]) : 300);
	return bench_remove_dir(work);
}
