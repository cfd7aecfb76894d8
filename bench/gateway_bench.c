/*
 * Gateway overhead, side by side with a direct MCP client to the same
 * upstream (our fixture server in echo mode):
 *
 *   gateway  agent line in -> parse, alias, policy, durable dispatch audit
 *            entry (synchronous=FULL; it also commits the previous call's
 *            terminal entry), tools/call, response check, terminal entry
 *            queued for the next commit -> reply line out
 *   direct   tools/call over the same stdio transport
 *
 * Then the same with 20 concurrent sessions (one thread, one gateway and
 * one upstream process each, one shared audit database), as aggregate
 * calls per second and CPU time per call (this process and its
 * upstreams), and the floor a durable gateway cannot beat there: direct
 * clients that each make one durable write of their own before every call
 * (a gateway with no CPU cost and perfectly parallel syncs). Prints
 * figures and ratios; asserts nothing.
 *
 * usage: gateway_bench UPSTREAM_BIN [CALLS] [SESSIONS] [direct|gateway]
 *
 * With a last argument only that side runs: with one session for
 * callgrind (bench/run counts the instructions of gateway_handle or
 * mcp_call), with more its aggregate alone (for perf). The log and the
 * sinks go to GATEWAY_BENCH_DIR (default /tmp): on a tmpfs, syncs cost
 * nearly nothing and what is left is CPU. Each
 * figure is also printed as a "sample:" line that bench/run aggregates
 * over interleaved rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "bench.h"
#include "bench_config.h"
#include "config.h"
#include "gate.h"
#include "gateway.h"
#include "mcp.h"

static const char *upstream;
static const char *airlock;	/* airlock_bin(), found once: the sessions' threads share it */
static const char *dir = "/tmp";	/* GATEWAY_BENCH_DIR: where the log and sinks go */
/*
 * The sinks' directory in dir: the upstream runs as airlock-upstream (the
 * engine changes its ids when it can), which may write only there, listed
 * read-write in its config.
 */
static char sinks[200];
static struct audit *audit;
static int calls = 1000;

/* The build's airlock, beside which its parser is: bench/.. (or $AIRLOCK_BIN). */
static const char *
airlock_bin(void)
{
	static char path[4096];
	ssize_t n;

	if (getenv("AIRLOCK_BIN"))
		return getenv("AIRLOCK_BIN");
	n = readlink("/proc/self/exe", path, sizeof path - 16);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	*strrchr(path, '/') = '\0';
	strcat(path, "/../airlock");
	return path;
}

static int
sinks_dir(void)
{
	const struct passwd *pw = geteuid() == 0 ? getpwnam("airlock-upstream") : NULL;

	if (mkdir(sinks, 0700) < 0 && errno != EEXIST)
		return -1;
	return pw && chown(sinks, pw->pw_uid, pw->pw_gid) < 0 ? -1 : 0;
}

static double
pct(double *v, int n, double p)
{
	bench_sort(v, (size_t)n);
	return v[(int)(p * (n - 1))];
}

/*
 * unconfined_ok: under valgrind (bench/run's instruction counts) the
 * spawn's child has no Landlock system calls; on this kernel it changes
 * nothing (the upstream gets its ruleset), as its receipt shows.
 */
static void
make_config(struct airlock_config *c, const char *sink)
{
	char text[1024];

	snprintf(text, sizeof text,
		 "{\"upstreams\": {\"u\": {\"argv\": [\"%s\", \"--sink\", \"%s\"],"
		 " \"unconfined_ok\": true, \"paths\": {\"rw\": [\"%s\"]}}},"
		 " \"tools\": {\"echo\": {\"upstream\": \"u\", \"remote\": \"echo\","
		 " \"data_class\": \"confidential\", \"sink_ceiling\": \"confidential\","
		 " \"response_ceiling\": \"confidential\"}},"
		 " \"aliases\": {\"say\": \"echo\"}, \"initial\": {\"class\": \"confidential\"},"
		 " \"bounds\": {\"calls\": 4096}}", upstream, sink, sinks);
	bench_config(c, text);
}

/* One session's worth of calls through the gateway; latencies in us. */
static void
run_gateway(const char *sink, double *lat, int n)
{
	static const char line[] = "{\"operation\":\"say\",\"arguments\":{\"message\":\"hello\"}}";
	struct airlock_config c;
	struct gateway *g;
	struct al_err err;
	enum policy_rule rule;
	size_t len;
	char *reply;
	int i;

	make_config(&c, sink);
	if (gateway_open(&(struct gateway_options){ .config = &c, .session_id = "bench",
						    .audit = audit, .exe = airlock }, &g, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	for (i = -20; i < n; i++) {	/* 20 warm-ups, and the lazy spawn */
		double t = bench_now_us();

		if (gateway_handle(g, line, sizeof line - 1, &reply, &len, &rule) != GW_REPLY) {
			fprintf(stderr, "bench: gateway call failed (%s)\n", policy_rule_id(rule));
			exit(1);
		}
		free(reply);
		if (i >= 0)
			lat[i] = bench_now_us() - t;
	}
	gateway_close(g);
	config_free(&c);
}

/*
 * A held call's operator (issue 43, item 8): a thread that waits until a
 * call waits, notes the time and approves it, as the supervisor's board
 * wakes a waiter on ctl approve. What is timed is the approval to the
 * reply: the waiter's wake-up, the gate again (waived), the durable
 * dispatch, the upstream and the answer.
 */
struct approver {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool waiting, approved, quit;
	double at;		/* when it approved, us */
};

static enum gateway_hold_answer
approver_wait(void *ctx, struct hold_view *call)
{
	struct approver *a = ctx;

	(void)call;
	pthread_mutex_lock(&a->mu);
	a->waiting = true;
	pthread_cond_broadcast(&a->cv);
	while (!a->approved)
		pthread_cond_wait(&a->cv, &a->mu);
	a->approved = false;
	pthread_mutex_unlock(&a->mu);
	return GW_HOLD_APPROVED;
}

static void *
approver_main(void *arg)
{
	struct approver *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->waiting && !a->quit)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->quit)
			break;
		a->waiting = false;
		a->at = bench_now_us();
		a->approved = true;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Each call held, then approved by the operator's thread: approve -> reply, in us. */
static void
run_held(const char *sink, double *lat, int n)
{
	static const char line[] = "{\"operation\":\"say\",\"arguments\":{\"message\":\"hello\"}}";
	struct approver a = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	const struct gateway_hold hook = { approver_wait, &a };
	const bool approved[1] = { true };
	struct gate *gate = gate_new(approved, 1);
	struct airlock_config c;
	struct gateway *g;
	struct al_err err;
	enum policy_rule rule;
	pthread_t th;
	size_t len;
	char *reply;
	int i;

	make_config(&c, sink);
	if (!gate || pthread_create(&th, NULL, approver_main, &a) != 0)
		exit(1);
	gate_set_held(gate, 0, 1);
	if (gateway_open(&(struct gateway_options){ .config = &c, .session_id = "bench-held",
						    .audit = audit, .exe = airlock, .gate = gate,
						    .hold = &hook }, &g, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	for (i = -20; i < n; i++) {
		if (gateway_handle(g, line, sizeof line - 1, &reply, &len, &rule) != GW_REPLY ||
		    rule != RULE_ALLOWED) {
			fprintf(stderr, "bench: held call failed (%s)\n", policy_rule_id(rule));
			exit(1);
		}
		free(reply);
		pthread_mutex_lock(&a.mu);
		if (i >= 0)
			lat[i] = bench_now_us() - a.at;
		pthread_mutex_unlock(&a.mu);
	}
	pthread_mutex_lock(&a.mu);
	a.quit = true;
	pthread_cond_broadcast(&a.cv);
	pthread_mutex_unlock(&a.mu);
	pthread_join(th, NULL);
	gateway_close(g);
	gate_free(gate);
	config_free(&c);
}

/*
 * The durable direct client's file of its own: 32 pages of 2 KiB, written
 * and synced once, so that each later write overwrites one (a WAL
 * commit's shape, with no size change to sync).
 */
static int
durable_open(const char *sink, char *path, size_t size, const char page[2048])
{
	int fd, i;

	snprintf(path, size, "%s.durable", sink);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < 32; i++)
		if (pwrite(fd, page, 2048, (off_t)i * 2048) != 2048)
			break;
	if (i < 32 || fsync(fd) < 0) {
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* Direct calls; with durable, one 2 KiB pwrite + fdatasync before each. */
static void
run_direct(const char *sink, double *lat, int n, bool durable)
{
	char path[300], page[2048];
	int fd = -1;
	struct mcp_server_config sc = { .name = "u", .init_timeout_ms = 10000,
					.call_timeout_ms = 10000 };
	json_t *args = json_pack("{s:s}", "message", "hello");
	struct mcp_call_result res;
	struct mcp_client *m;
	struct al_err err;
	int i;

	memset(page, 'x', sizeof page);
	if (durable && (fd = durable_open(sink, path, sizeof path, page)) < 0) {
		fprintf(stderr, "bench: cannot make the durable client's file in %s\n", dir);
		exit(1);
	}
	strv_push(&sc.argv, upstream);
	strv_push(&sc.argv, "--sink");
	strv_push(&sc.argv, sink);
	sc.confine.unconfined_ok = true;	/* as make_config's, for valgrind */
	strv_push(&sc.confine.rw, sinks);
	if (mcp_start(&sc, &m, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	for (i = -20; i < n; i++) {
		double t = bench_now_us();

		if (fd >= 0 && (pwrite(fd, page, sizeof page, (off_t)(i & 31) * 2048) != 2048 ||
				fdatasync(fd) < 0)) {
			fprintf(stderr, "bench: the durable client's write failed\n");
			exit(1);
		}
		if (mcp_call(m, "echo", args, 0, &res, &err) < 0 || res.outcome != MCP_OK)
			exit(1);
		mcp_call_result_free(&res);
		if (i >= 0)
			lat[i] = bench_now_us() - t;
	}
	mcp_stop(m);
	json_decref(args);
	strv_free(&sc.argv);
	strv_free(&sc.confine.rw);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/*
 * The floor of one parser round trip: a message to a child process over
 * one pipe and its answer over another, the gateway's way (a write, a
 * poll, a read), n times; latencies in us.
 */
static void
run_trips(double *lat, int n)
{
	int to[2], from[2], i;
	char msg[64] = { 0 };
	pid_t pid;

	if (pipe(to) < 0 || pipe(from) < 0 || (pid = fork()) < 0) {
		fprintf(stderr, "bench: cannot start the round-trip child\n");
		exit(1);
	}
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		while (read(to[0], msg, sizeof msg) > 0)
			if (write(from[1], msg, 32) != 32)
				_exit(1);
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	for (i = -20; i < n; i++) {
		struct pollfd p = { .fd = from[0], .events = POLLIN };
		double t = bench_now_us();

		if (write(to[1], msg, 40) != 40 || poll(&p, 1, 5000) != 1 ||
		    read(from[0], msg, sizeof msg) != 32) {
			fprintf(stderr, "bench: the round-trip child stopped answering\n");
			exit(1);
		}
		if (i >= 0)
			lat[i] = bench_now_us() - t;
	}
	close(to[1]);
	close(from[0]);
	waitpid(pid, NULL, 0);
}

enum side { DIRECT, DURABLE, GATEWAY };

struct worker {
	pthread_t t;
	int id;
	enum side side;
	double *lat;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	char sink[256];

	snprintf(sink, sizeof sink, "%s/%d.sink", sinks, w->id);
	if (w->side == GATEWAY)
		run_gateway(sink, w->lat, calls);
	else
		run_direct(sink, w->lat, calls, w->side == DURABLE);
	unlink(sink);
	return NULL;
}

/* CPU time so far of this process and of its reaped children (the upstreams). */
static double
cpu_us(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
			kids.ru_stime.tv_sec) * 1e6 +
	       (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
			kids.ru_stime.tv_usec);
}

/*
 * Aggregate calls per second over n concurrent sessions; with cpu, the CPU
 * time per call of this process and its upstreams (each stopped and
 * reaped before its worker ends; warm-ups and spawns included).
 */
static double
concurrent(int n, enum side side, double *cpu)
{
	struct worker *w = calloc((size_t)n, sizeof *w);
	double t0 = bench_now_us(), c0 = cpu_us(), secs;
	int i;

	for (i = 0; i < n; i++) {
		w[i] = (struct worker){ .id = i, .side = side,
					.lat = calloc((size_t)calls, sizeof(double)) };
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		free(w[i].lat);
	}
	secs = (bench_now_us() - t0) / 1e6;
	if (cpu)
		*cpu = (cpu_us() - c0) / (n * (double)(calls + 20));
	free(w);
	return n * (double)calls / secs;
}

/*
 * One side alone: one session is what callgrind measures per call; more
 * sessions run that side's aggregate only (for perf, or per-thread CPU).
 */
static int
one_side(const char *side, const char *sink, int sessions)
{
	double *lat;
	bool gw = strcmp(side, "gateway") == 0;

	if (!gw && strcmp(side, "direct") != 0)
		return 2;
	if (sessions > 1) {
		printf("sample: %s_aggregate_alone baseline=- airlock=%.0f unit=calls/s\n", side,
		       concurrent(sessions, gw ? GATEWAY : DIRECT, NULL));
		return 0;
	}
	lat = calloc((size_t)calls, sizeof *lat);
	if (gw)
		run_gateway(sink, lat, calls);
	else
		run_direct(sink, lat, calls, false);
	free(lat);
	return 0;
}

struct aggregate {
	double direct, durable, gateway;	/* calls/s */
	double direct_cpu, durable_cpu, gateway_cpu;	/* us of CPU a call */
};

/* What the gateway adds cannot go below one durable write and two round trips. */
static void
floors(double *dur, double *d, double *trip)
{
	printf("  %-34s %9.1f %9.1f  (one durable 2 KiB write a call, no gateway)\n",
	       "floor: direct + durable write", pct(dur, calls, .5), pct(dur, calls, .99));
	printf("  %-34s %9.1f %9.1f  (a gateway call makes two, to its parser)\n",
	       "floor: process round trip", pct(trip, calls, .5), pct(trip, calls, .99));
	printf("sample: gateway_floor_durable_p50 baseline=%.1f airlock=%.1f unit=us\n",
	       pct(d, calls, .5), pct(dur, calls, .5));
	printf("sample: gateway_floor_trip_p50 baseline=- airlock=%.1f unit=us\n",
	       pct(trip, calls, .5));
}

static void
samples(double *g, double *d, const struct aggregate *a)
{
	printf("sample: gateway_call_p50 baseline=%.1f airlock=%.1f unit=us\n",
	       pct(d, calls, .5), pct(g, calls, .5));
	printf("sample: gateway_call_p99 baseline=%.1f airlock=%.1f unit=us\n",
	       pct(d, calls, .99), pct(g, calls, .99));
	printf("sample: gateway_added_p50 baseline=- airlock=%.1f unit=us\n",
	       pct(g, calls, .5) - pct(d, calls, .5));
	printf("sample: gateway_added_p99 baseline=- airlock=%.1f unit=us\n",
	       pct(g, calls, .99) - pct(d, calls, .99));
	printf("sample: gateway_aggregate baseline=%.0f airlock=%.0f unit=calls/s\n",
	       a->direct, a->gateway);
	printf("sample: gateway_aggregate_floor baseline=%.0f airlock=%.0f unit=calls/s\n",
	       a->direct, a->durable);
	printf("sample: gateway_aggregate_vs_floor baseline=%.0f airlock=%.0f unit=calls/s\n",
	       a->durable, a->gateway);
	printf("sample: gateway_aggregate_cpu baseline=%.1f airlock=%.1f unit=us/call\n",
	       a->direct_cpu, a->gateway_cpu);
	printf("sample: gateway_aggregate_cpu_vs_floor baseline=%.1f airlock=%.1f unit=us/call\n",
	       a->durable_cpu, a->gateway_cpu);
}

int
main(int argc, char **argv)
{
	char db[256], sink[256];
	struct al_err err;
	struct aggregate a;
	double *g, *d, *dur, *trip, *held;
	int sessions;

	if (argc < 2) {
		fprintf(stderr, "usage: gateway_bench UPSTREAM_BIN [CALLS] [SESSIONS]\n");
		return 2;
	}
	upstream = argv[1];
	airlock = airlock_bin();
	calls = argc > 2 ? atoi(argv[2]) : 1000;
	sessions = argc > 3 ? atoi(argv[3]) : 20;
	if (getenv("GATEWAY_BENCH_DIR"))
		dir = getenv("GATEWAY_BENCH_DIR");
	snprintf(db, sizeof db, "%s/airlock-bench-%d.db", dir, (int)getpid());
	snprintf(sinks, sizeof sinks, "%s/airlock-bench-%d.sinks", dir, (int)getpid());
	snprintf(sink, sizeof sink, "%s/bench.sink", sinks);
	if (sinks_dir() < 0) {
		fprintf(stderr, "bench: cannot make %s for the upstream's sinks\n", sinks);
		return 1;
	}
	if (audit_open(db, &audit, &err) < 0)
		return 1;
	if (argc > 4) {
		int rc = one_side(argv[4], sink, sessions);

		audit_close(audit);
		unlink(db);
		unlink(sink);
		rmdir(sinks);
		return rc;
	}
	g = calloc((size_t)calls, sizeof *g);
	d = calloc((size_t)calls, sizeof *d);
	dur = calloc((size_t)calls, sizeof *dur);
	trip = calloc((size_t)calls, sizeof *trip);
	held = calloc((size_t)calls, sizeof *held);
	run_direct(sink, d, calls, false);
	run_gateway(sink, g, calls);
	run_held(sink, held, calls);
	run_direct(sink, dur, calls, true);
	run_trips(trip, calls);
	printf("per call, %d calls after 20 warm-ups (microseconds)\n", calls);
	printf("  %-34s %9s %9s\n", "", "p50", "p99");
	printf("  %-34s %9.1f %9.1f\n", "direct MCP client", pct(d, calls, .5), pct(d, calls, .99));
	printf("  %-34s %9.1f %9.1f\n", "gateway (1 durable commit a call)", pct(g, calls, .5), pct(g, calls, .99));
	printf("  %-34s %8.2fx %8.2fx\n", "ratio gateway / direct", pct(g, calls, .5) / pct(d, calls, .5),
	       pct(g, calls, .99) / pct(d, calls, .99));
	printf("  %-34s %9.1f %9.1f\n", "held call: approve -> reply", pct(held, calls, .5),
	       pct(held, calls, .99));
	floors(dur, d, trip);
	a.direct = concurrent(sessions, DIRECT, &a.direct_cpu);
	a.durable = concurrent(sessions, DURABLE, &a.durable_cpu);
	a.gateway = concurrent(sessions, GATEWAY, &a.gateway_cpu);
	printf("%d concurrent sessions, %d calls each (aggregate calls/s, CPU us a call)\n",
	       sessions, calls);
	printf("  %-34s %9.0f %9.1f\n", "direct MCP clients", a.direct, a.direct_cpu);
	printf("  %-34s %9.0f %9.1f\n", "gateways, one shared audit DB", a.gateway, a.gateway_cpu);
	printf("  %-34s %8.2fx\n", "ratio gateway / direct", a.gateway / a.direct);
	printf("  %-34s %9.0f %9.1f  (one durable 2 KiB write before each call)\n",
	       "floor: durable direct clients", a.durable, a.durable_cpu);
	samples(g, d, &a);
	printf("sample: gateway_held_approve_p50 baseline=%.1f airlock=%.1f unit=us\n",
	       pct(g, calls, .5), pct(held, calls, .5));
	audit_close(audit);
	unlink(db);
	unlink(sink);
	rmdir(sinks);
	free(g);
	free(d);
	free(dur);
	free(trip);
	free(held);
	return 0;
}
