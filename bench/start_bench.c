/*
 * Session start and exit, side by side with `docker run --rm -i` of the
 * same image with the same hardening flags, interleaved (A B A B …):
 *
 *   baseline  docker run --rm -i …: the initial frame on stdin, each
 *             request line answered at once by this program (a gateway
 *             that does nothing), until the CLI returns (the container is
 *             removed)
 *   airlock   session_run of a config whose agent does the same: preflight,
 *             create, two admissions, watchdog, attach, start, the frame,
 *             two gateway calls with durable audit entries, cleanup with
 *             the removal proven. Its container also has NetworkDisabled,
 *             which the CLI cannot set: no libnetwork sandbox to build.
 *
 *   pooled    the same session claiming a container launched beforehand
 *             (engine/sandbox/warm.h, as the warm pool does; not timed): the
 *             claim's second admission, the frame, the two calls, cleanup
 *
 * first_reply: from the start to the first reply written to the agent;
 * pooled_first_reply: from the session's start (its claim) to the first
 * reply, against docker run --rm -i's first reply;
 * exit: from the start to the container removed and the session ended;
 * phase_STATE: how long airlock's session was in each launch state.
 * Prints "sample:" lines (one per round) that bench/run aggregates.
 *
 * usage: start_bench AIRLOCK CONFIG ROUNDS NAME
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "clock.h"
#include "config.h"
#include "ids.h"
#include "session.h"
#include "warm.h"

#define ARGV_MAX 64
#define REPLY "{\"allowed\":true,\"response\":\"ok\"}\n"

struct timing {
	int64_t t0_us, first_reply_us, end_us;
	int64_t state_us[SESSION_STATE_COUNT];	/* airlock: when each state began */
};

/* --- airlock ----------------------------------------------------------- */

static void
on_publish(void *ctx, const struct session_status *st)
{
	struct timing *t = ctx;

	if ((unsigned)st->state < SESSION_STATE_COUNT && !t->state_us[st->state])
		t->state_us[st->state] = clock_mono_us();
	if (!t->first_reply_us && st->counters.calls >= 1)
		t->first_reply_us = clock_mono_us();
}

/* The pool of one: the container launched for this round, claimed once. */
static struct warm *
claim_one(void *ctx)
{
	struct warm **w = ctx, *got = *w;

	*w = NULL;
	return got;
}

static void
discard_one(void *ctx, struct warm *w)
{
	(void)ctx;
	fprintf(stderr, "start_bench: the claim refused its pooled container\n");
	warm_discard(w);
}

static int
run_airlock(const char *airlock, const struct airlock_config *c, struct audit *a,
	    struct timing *t, struct warm **pooled)
{
	struct session_options o = {
		.config = c, .audit = a, .watchdog_exe = airlock,
		.hooks = { .ctx = t, .publish = on_publish },
		.pool = { .ctx = pooled, .claim = pooled ? claim_one : NULL,
			  .discard = discard_one },
	};
	struct session_summary sum;
	int rc;

	memset(t, 0, sizeof *t);
	t->t0_us = clock_mono_us();
	rc = session_run(&o, &sum);
	t->end_us = clock_mono_us();
	if (rc < 0 || !t->first_reply_us)
		fprintf(stderr, "start_bench: session ended %s: %s\n", session_end_id(sum.end),
			sum.reason);
	if (pooled && !sum.pooled)
		fprintf(stderr, "start_bench: the session did not run pooled\n");
	return rc < 0 || !t->first_reply_us || (pooled && !sum.pooled) ? -1 : 0;
}

/* --- baseline: the same container through the CLI ---------------------- */

static void
push(char **argv, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
push(char **argv, int *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= ARGV_MAX - 1)
		exit(2);
	va_start(ap, fmt);
	if (vasprintf(&argv[(*n)++], fmt, ap) < 0)
		exit(2);
	va_end(ap);
	argv[*n] = NULL;
}

/* The flags that give the CLI's container the profile's hardening. */
static void
cli_argv(const struct profile *p, char **argv)
{
	int n = 0;
	size_t i;

	push(argv, &n, "docker");
	push(argv, &n, "run");
	push(argv, &n, "--rm");
	push(argv, &n, "-i");
	push(argv, &n, "--network=none");
	push(argv, &n, "--read-only");
	push(argv, &n, "--cap-drop=ALL");
	push(argv, &n, "--security-opt=no-new-privileges=true");
	push(argv, &n, "--log-driver=none");
	push(argv, &n, "--restart=no");
	push(argv, &n, "--init");
	push(argv, &n, "--ulimit=core=0:0");
	push(argv, &n, "--user=%s", p->user);
	push(argv, &n, "--runtime=%s", p->runtime);
	push(argv, &n, "--ipc=%s", p->ipc == IPC_NONE ? "none" : "private");
	push(argv, &n, "--pids-limit=%lld", (long long)p->pids_limit);
	push(argv, &n, "--memory=%lld", (long long)p->memory);
	push(argv, &n, "--memory-swap=%lld", (long long)p->memory);
	push(argv, &n, "--cpus=%.3f", p->nano_cpus / 1e9);
	if (p->nofile > 0)
		push(argv, &n, "--ulimit=nofile=%lld:%lld", (long long)p->nofile,
		     (long long)p->nofile);
	if (p->nproc > 0)
		push(argv, &n, "--ulimit=nproc=%lld:%lld", (long long)p->nproc,
		     (long long)p->nproc);
	for (i = 0; i < p->n_tmpfs; i++)
		push(argv, &n, "--tmpfs=%s:rw,noexec,nosuid,nodev,size=%lld", p->tmpfs[i].target,
		     (long long)p->tmpfs[i].size);
	push(argv, &n, "--label=io.airlock.bench=1");
	if (p->entrypoint.set && p->entrypoint.n > 0)
		push(argv, &n, "--entrypoint=%s", p->entrypoint.v[0]);
	push(argv, &n, "%s", p->image);
	for (i = 0; i < p->cmd.n; i++)
		push(argv, &n, "%s", p->cmd.v[i]);
}

/* Answer every request line at once until EOF; note the first. */
static int
converse(int in, int out, struct timing *t)
{
	char buf[65536];
	size_t have = 0;

	for (;;) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		ssize_t n;
		char *nl;

		if (poll(&p, 1, 20000) <= 0)
			return -1;
		n = read(in, buf + have, sizeof buf - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		have += (size_t)n;
		while ((nl = memchr(buf, '\n', have))) {
			if (write(out, REPLY, sizeof REPLY - 1) < 0)
				return -1;
			if (!t->first_reply_us)
				t->first_reply_us = clock_mono_us();
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof buf - 1)
			return -1;
	}
}

static int
run_cli(char **argv, const char *frame, struct timing *t)
{
	int to[2], from[2], status;
	pid_t pid;

	memset(t, 0, sizeof *t);
	if (pipe(to) < 0 || pipe(from) < 0)
		return -1;
	t->t0_us = clock_mono_us();
	pid = fork();
	if (pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	if (write(to[1], frame, strlen(frame)) < 0)
		pid = -1;
	converse(from[0], to[1], t);
	close(to[1]);
	close(from[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	t->end_us = clock_mono_us();
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && t->first_reply_us ? 0 : -1;
}

/* --- the rounds --------------------------------------------------------- */

static double
ms(int64_t from, int64_t to)
{
	return (to - from) / 1000.0;
}

/*
 * Where airlock's start goes: each launch state's length, up to the first
 * reply (running: from the frame written to the reply).
 */
static void
phases(const char *name, const struct timing *t)
{
	int i;

	for (i = SESSION_STATE_PREFLIGHT; i <= SESSION_STATE_RUNNING; i++) {
		int64_t to = i < SESSION_STATE_RUNNING ? t->state_us[i + 1] : t->first_reply_us;

		if (t->state_us[i] && to)
			printf("sample: %s_phase_%s baseline=- airlock=%.2f unit=ms\n", name,
			       session_state_id((enum session_state)i), ms(t->state_us[i], to));
	}
}

/* A pooled round: its container launched untimed, a moment to settle, then the session. */
static int
run_pooled(const char *airlock, const struct airlock_config *c, struct audit *a,
	   struct timing *t)
{
	struct warm_options o = { .profile = &c->profile, .watchdog_exe = airlock };
	char label[ID_MAX];
	struct warm *w = NULL;
	struct al_err err;
	int rc;

	if (id_random(label, sizeof label, "p-", 8) < 0)
		return -1;
	o.label = label;
	if (warm_launch(&o, &w, &err) < 0) {
		fprintf(stderr, "start_bench: pool: %s\n", err.msg);
		return -1;
	}
	usleep(300 * 1000);	/* as in a pool: the lease pulsing, the agent waiting */
	rc = run_airlock(airlock, c, a, t, &w);
	warm_discard(w);	/* NULL once claimed */
	return rc;
}

int
main(int argc, char **argv)
{
	struct airlock_config c;
	struct audit *audit;
	struct timing a, b, p;
	struct al_err err;
	char *cli[ARGV_MAX], db[64];
	int rounds, i, bad = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: start_bench AIRLOCK CONFIG ROUNDS NAME\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	rounds = atoi(argv[3]);
	config_init(&c);
	if (config_load_file(&c, argv[2], 2, &err) < 0) {
		fprintf(stderr, "start_bench: %s\n", err.msg);
		return 1;
	}
	snprintf(db, sizeof db, "/tmp/airlock-start-bench-%d.db", (int)getpid());
	if (audit_open(db, &audit, &err) < 0)
		return 1;
	cli_argv(&c.profile, cli);
	for (i = -1; i < rounds; i++) {	/* one warm-up round of each */
		if (run_cli(cli, "{\"x\":1}\n", &b) < 0 ||
		    run_airlock(argv[1], &c, audit, &a, NULL) < 0 ||
		    run_pooled(argv[1], &c, audit, &p) < 0) {
			bad++;
			continue;
		}
		if (i < 0)
			continue;
		printf("sample: %s_first_reply baseline=%.1f airlock=%.1f unit=ms\n", argv[4],
		       ms(b.t0_us, b.first_reply_us), ms(a.t0_us, a.first_reply_us));
		printf("sample: %s_exit baseline=%.1f airlock=%.1f unit=ms\n", argv[4],
		       ms(b.t0_us, b.end_us), ms(a.t0_us, a.end_us));
		printf("sample: %s_exit_after_reply baseline=%.1f airlock=%.1f unit=ms\n", argv[4],
		       ms(b.first_reply_us, b.end_us), ms(a.first_reply_us, a.end_us));
		printf("sample: %s_pooled_first_reply baseline=%.1f airlock=%.2f unit=ms\n", argv[4],
		       ms(b.t0_us, b.first_reply_us), ms(p.t0_us, p.first_reply_us));
		phases(argv[4], &a);
		fflush(stdout);
	}
	audit_close(audit);
	unlink(db);
	config_free(&c);
	if (bad)
		fprintf(stderr, "start_bench: %d failed rounds\n", bad);
	return bad ? 1 : 0;
}
