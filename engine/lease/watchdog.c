#include "watchdog.h"
#include "clock.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mutant.h"
#include "self_exe.h"
#include "thread.h"

#ifdef AIRLOCK_MUTANTS
#define WATCHDOG_PROGRAM	"airlock-watchdog-mutants"
#else
#define WATCHDOG_PROGRAM	"airlock-watchdog"
#endif

struct lease {
	int fd;			/* our end of the socketpair */
	int wake[2];		/* lease_close wakes the pulse thread */
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_mutex_t wire;	/* one message at a time on fd: a pulse, a guard */
	pthread_cond_t answered;	/* the ready wait ended: ready or not */
	enum { LEASE_WAITING, LEASE_READY, LEASE_NOT_READY } phase;
	struct lease_status st;
	int32_t ring[LEASE_HISTORY];	/* ack round trips; ring_n of them end at ring_head */
	size_t ring_head, ring_n;
	lease_fail_fn on_fail;
	void *ctx;
};

/* Between fork and exec: async-signal-safe calls only (the engine has threads). */
static void
exec_watchdog(const char *exe, const char *sock, const char *id, int fd, int report,
	      char *const envp[])
{
	char *const argv[] = { (char *)exe, "watchdog", (char *)sock, (char *)id, NULL };
	struct rlimit zero = { 0, 0 };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int devnull = open("/dev/null", O_WRONLY);
	int e, sig;

	if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || devnull < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	if (report != 3 && dup2(report, 3) < 0)
		_exit(127);
	close_range(4, ~0U, 0);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	setrlimit(RLIMIT_CORE, &zero);
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/*
	 * It needs the Docker socket, and CAP_KILL where the engine holds it
	 * (the upstreams' groups, of another uid: watchdog.h), none of the
	 * unit's other capabilities. Raising fails harmlessly without it.
	 */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0);
	execve(exe, argv, envp);
	e = errno;
	if (write(3, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/*
 * Double fork: the watchdog is re-parented away from the engine (no zombie
 * to reap, no shared fate) and leads its own session. The middle process
 * reports the watchdog's pid on one pipe; a failed exec reports its errno
 * on another (closed by a successful exec). Returns the pid or -1.
 */
static pid_t
spawn_watchdog(const char *exe, const char *sock, const char *id, int fd, int *why)
{
	static char mutant_env[64];
	char *envp[2] = { NULL, NULL };	/* the watchdog inherits no environment */
	int pids[2], errs[2], e = 0, status;
	pid_t mid, pid = -1;

#ifdef AIRLOCK_MUTANTS
	if (getenv("AIRLOCK_MUTANT")) {
		snprintf(mutant_env, sizeof mutant_env, "AIRLOCK_MUTANT=%s", getenv("AIRLOCK_MUTANT"));
		envp[0] = mutant_env;
	}
#else
	(void)mutant_env;
#endif

	*why = 0;
	if (pipe2(pids, O_CLOEXEC) < 0) {
		*why = errno;
		return -1;
	}
	if (pipe2(errs, O_CLOEXEC) < 0) {
		*why = errno;
		close(pids[0]);
		close(pids[1]);
		return -1;
	}
	mid = fork();
	if (mid < 0)
		*why = errno;
	if (mid == 0) {
		pid_t gc = fork();

		if (gc == 0) {
			setsid();
			exec_watchdog(exe, sock, id, fd, errs[1], envp);
		}
		_exit(write(pids[1], &gc, sizeof gc) == sizeof gc && gc > 0 ? 0 : 1);
	}
	close(pids[1]);
	close(errs[1]);
	if (mid < 0 || waitpid(mid, &status, 0) != mid ||
	    read(pids[0], &pid, sizeof pid) != sizeof pid)
		pid = -1;
	else if (read(errs[0], &e, sizeof e) == sizeof e) {
		*why = e;	/* the exec's own failure */
		pid = -1;
	}
	close(pids[0]);
	close(errs[0]);
	return pid;
}

/* Wait for "ready\n" within LEASE_READY_MS, unless lease_close wakes us. */
static int
await_ready(int fd, int wake)
{
	char buf[8];
	size_t have = 0;
	int64_t deadline = clock_mono_us() + LEASE_READY_MS * 1000LL;

	while (have < 6) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = wake, .events = POLLIN } };
		int64_t left = (deadline - clock_mono_us()) / 1000;
		ssize_t n;

		if (left <= 0 || poll(p, 2, (int)left) <= 0 || (p[1].revents & POLLIN))
			return -1;
		n = read(fd, buf + have, 6 - have);
		if (n <= 0)
			return -1;
		have += (size_t)n;
	}
	return memcmp(buf, "ready\n", 6) == 0 ? 0 : -1;
}

static void
lease_fail(struct lease *l, const char *reason)
{
	pthread_mutex_lock(&l->lock);
	l->st.failed = true;
	snprintf(l->st.reason, sizeof l->st.reason, "%s", reason);
	pthread_mutex_unlock(&l->lock);
	l->on_fail(l->ctx, reason);
}

/* Sleep ms unless lease_close wakes us: true when asked to stop. */
static bool
wait_stop(struct lease *l, int ms)
{
	struct pollfd p = { .fd = l->wake[0], .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

/* One pulse: ".", then "." back within LEASE_ACK_MS. NULL when fine. */
static const char *
pulse(struct lease *l, bool *stopping)
{
	struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN },
			       { .fd = l->wake[0], .events = POLLIN } };
	int64_t t0 = clock_mono_us();
	char c;
	int rc;

	pthread_mutex_lock(&l->wire);
	rc = send(l->fd, (char[]){ LEASE_PULSE }, 1, MSG_NOSIGNAL) == 1;
	pthread_mutex_unlock(&l->wire);
	if (!rc)
		return "watchdog gone";
	if (mutant("no_ack_check"))
		return NULL;
	rc = poll(p, 2, LEASE_ACK_MS);
	if (rc > 0 && (p[1].revents & POLLIN)) {
		*stopping = true;
		return NULL;
	}
	if (rc <= 0)
		return "no ack";
	if (read(l->fd, &c, 1) != 1)
		return "watchdog gone";
	if (c != LEASE_PULSE)
		return "wrong byte";
	pthread_mutex_lock(&l->lock);
	l->st.acks++;
	l->st.last_ack_us = clock_mono_us() - t0;
	if (l->st.last_ack_us > l->st.max_ack_us)
		l->st.max_ack_us = l->st.last_ack_us;
	l->st.last_ack_mono_ms = clock_mono_us() / 1000;
	l->ring[l->ring_head] = (int32_t)(l->st.last_ack_us < INT32_MAX ? l->st.last_ack_us : INT32_MAX);
	l->ring_head = (l->ring_head + 1) % LEASE_HISTORY;
	if (l->ring_n < LEASE_HISTORY)
		l->ring_n++;
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* The ready wait's outcome, for lease_wait_ready. */
static void
set_phase(struct lease *l, int phase)
{
	pthread_mutex_lock(&l->lock);
	l->phase = phase;
	if (phase == LEASE_READY) {
		l->st.armed = true;
		l->st.last_ack_mono_ms = clock_mono_us() / 1000;
	}
	pthread_cond_broadcast(&l->answered);
	pthread_mutex_unlock(&l->lock);
}

/*
 * The pulse thread: first the ready wait (so it overlaps the container's
 * start on the worker), then a pulse every LEASE_PULSE_MS from the moment
 * the watchdog's silence clock runs.
 */
static void *
pulse_main(void *arg)
{
	struct lease *l = arg;
	bool stopping = false;
	const char *why;

	if (await_ready(l->fd, l->wake[0]) < 0) {
		set_phase(l, LEASE_NOT_READY);
		return NULL;
	}
	set_phase(l, LEASE_READY);
	while (!wait_stop(l, LEASE_PULSE_MS)) {
		pthread_mutex_lock(&l->lock);
		l->st.pulses++;
		pthread_mutex_unlock(&l->lock);
		why = pulse(l, &stopping);
		if (stopping)
			break;
		if (why) {
			lease_fail(l, why);
			break;
		}
	}
	return NULL;
}

static void
lease_free(struct lease *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->wake[0] >= 0)
		close(l->wake[0]);
	if (l->wake[1] >= 0)
		close(l->wake[1]);
	pthread_cond_destroy(&l->answered);
	pthread_mutex_destroy(&l->wire);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static struct lease *
lease_new(lease_fail_fn on_fail, void *ctx)
{
	struct lease *l = calloc(1, sizeof *l);

	if (!l)
		return NULL;
	l->fd = l->wake[0] = l->wake[1] = -1;
	pthread_mutex_init(&l->lock, NULL);
	pthread_mutex_init(&l->wire, NULL);
	pthread_cond_init(&l->answered, NULL);
	l->on_fail = on_fail;
	l->ctx = ctx;
	if (pipe2(l->wake, O_CLOEXEC) < 0) {
		int e = errno;	/* the caller reports it */

		lease_free(l);
		errno = e;
		return NULL;
	}
	return l;
}

int
lease_program(const char *exe, char *out, size_t cap)
{
	return self_exe_program(exe, WATCHDOG_PROGRAM, out, cap);
}

int
lease_spawn(const char *exe, const char *socket_path, const char *container_id,
	    lease_fail_fn on_fail, void *ctx, struct lease **out, struct al_err *err)
{
	struct lease *l = lease_new(on_fail, ctx);
	char prog[PATH_MAX];
	int sv[2], why;
	pid_t pid;

	*out = NULL;
	if (!l || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		why = errno;	/* lease_new's or socketpair's */
		if (l)
			lease_free(l);
		return al_fail(err, "watchdog: cannot create the lease socket: %s", strerror(why));
	}
	l->fd = sv[0];
	if (lease_program(exe, prog, sizeof prog) < 0) {
		close(sv[1]);
		lease_free(l);
		return al_fail(err, "watchdog: %s", prog);
	}
	pid = spawn_watchdog(prog, socket_path, container_id, sv[1], &why);
	close(sv[1]);
	if (pid < 0) {
		lease_free(l);
		return al_fail(err, "watchdog: cannot start %s%s%s", WATCHDOG_PROGRAM,
			       why ? ": " : "", why ? strerror(why) : "");
	}
	l->st.watchdog_pid = (long)pid;
	if (thread_start(&l->thread, NULL, pulse_main, l) != 0) {
		lease_free(l);	/* EOF: the watchdog stops the container */
		return al_fail(err, "watchdog: cannot start the pulse thread");
	}
	l->thread_started = true;
	*out = l;
	return 0;
}

int
lease_wait_ready(struct lease *l, struct al_err *err)
{
	int phase;

	pthread_mutex_lock(&l->lock);
	while (l->phase == LEASE_WAITING)
		pthread_cond_wait(&l->answered, &l->lock);	/* bounded: LEASE_READY_MS */
	phase = l->phase;
	pthread_mutex_unlock(&l->lock);
	if (phase != LEASE_READY)
		return al_fail(err, "watchdog: not ready within %d ms", LEASE_READY_MS);
	return 0;
}

int
lease_arm(const char *exe, const char *socket_path, const char *container_id,
	  lease_fail_fn on_fail, void *ctx, struct lease **out, struct al_err *err)
{
	if (lease_spawn(exe, socket_path, container_id, on_fail, ctx, out, err) < 0)
		return -1;
	if (lease_wait_ready(*out, err) == 0)
		return 0;
	lease_close(*out);
	*out = NULL;
	return -1;
}

void
lease_get_status(struct lease *l, struct lease_status *out)
{
	size_t i, first;

	pthread_mutex_lock(&l->lock);
	*out = l->st;
	first = (l->ring_head + LEASE_HISTORY - l->ring_n) % LEASE_HISTORY;
	for (i = 0; i < l->ring_n; i++)
		out->history_us[i] = l->ring[(first + i) % LEASE_HISTORY];
	out->n_history = l->ring_n;
	pthread_mutex_unlock(&l->lock);
}

/* Wake the pulse thread, join it, and close our end (EOF to the watchdog). */
static void
lease_end(struct lease *l, bool done)
{
	if (write(l->wake[1], "x", 1) < 0) {
		/* The pipe is ours and empty; a failure here cannot happen. */
	}
	if (l->thread_started)
		pthread_join(l->thread, NULL);
	/* After the join: no pulse is in flight, so "d" is the next byte read. */
	if (done && send(l->fd, (char[]){ LEASE_DONE }, 1, MSG_NOSIGNAL) != 1) {
		/* A watchdog already gone stops the container itself, or is dead. */
	}
	lease_free(l);
}

void
lease_close(struct lease *l)
{
	if (l)
		lease_end(l, false);
}

void
lease_done(struct lease *l)
{
	if (l)
		lease_end(l, true);
}

void
lease_guard(struct lease *l, pid_t pid)
{
	char msg[24];
	int n;

	if (!l || pid < 2)
		return;
	n = snprintf(msg, sizeof msg, "%c%d%c", LEASE_GUARD, (int)pid, LEASE_GUARD_END);
	/* A watchdog already gone: the next pulse finds it so, and fails the lease. */
	pthread_mutex_lock(&l->wire);
	if (send(l->fd, msg, (size_t)n, MSG_NOSIGNAL) != n) {
		/* nothing more to do here */
	}
	pthread_mutex_unlock(&l->wire);
}
