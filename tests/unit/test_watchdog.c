/*
 * The lease against the real airlock-watchdog program and a fake daemon: a
 * unix socket this test listens on, so every request the watchdog makes is
 * seen (and none is sent to a real daemon). Docker-free.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "airlock-config.h"
#include "clock.h"
#include "docker.h"
#include "watchdog.h"

#include "scratch.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct fake_daemon {
	char dir[64];
	char path[128];
	int listen_fd;
};

static struct fake_daemon D;
static char exe[512];
static int fails;

static void
on_fail(void *ctx, const char *reason)
{
	(void)ctx;
	(void)reason;
	fails++;
}

/* The fake daemon starts answering at D.path. */
static void
daemon_listen(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	memcpy(a.sun_path, D.path, strlen(D.path) + 1);
	D.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(D.listen_fd >= 0);
	assert_int_equal(bind(D.listen_fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(D.listen_fd, 8), 0);
}

/* The daemon dies: its socket is gone, a connect fails at once. */
static void
daemon_gone(void)
{
	close(D.listen_fd);
	D.listen_fd = -1;
	assert_int_equal(unlink(D.path), 0);
}

static int
setup(void **state)
{
	const char *dir = getenv("AIRLOCK_BUILD_ROOT");

	(void)state;
	assert_non_null(dir);
	snprintf(exe, sizeof exe, "%s/airlock", dir);
	scratch_make(D.dir, sizeof D.dir, "wd");
	snprintf(D.path, sizeof D.path, "%s/docker.sock", D.dir);
	daemon_listen();
	fails = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (D.listen_fd >= 0)
		close(D.listen_fd);
	scratch_remove(D.dir);
	return 0;
}

/* A connection to the fake daemon within ms, or -1 when none came. */
static int
accept_within(int ms)
{
	struct pollfd p = { .fd = D.listen_fd, .events = POLLIN };

	if (poll(&p, 1, ms) <= 0)
		return -1;
	return accept4(D.listen_fd, NULL, NULL, SOCK_CLOEXEC);
}

/* Read the request line and headers (up to the blank line). */
static void
read_request(int fd, char *buf, size_t cap)
{
	size_t have = 0;

	while (have + 1 < cap && !strstr(buf, "\r\n\r\n")) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		assert_true(poll(&p, 1, 5000) > 0);
		n = read(fd, buf + have, cap - 1 - have);
		assert_true(n > 0);
		have += (size_t)n;
		buf[have] = '\0';
	}
}

/* True once the process is gone or a zombie (it is not our child). */
static bool
exited_within(long pid, int ms)
{
	int64_t end = clock_mono_ms() + ms;
	char path[64], stat[256];

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	while (clock_mono_ms() < end) {
		FILE *f = fopen(path, "r");
		char *paren;

		if (!f)
			return true;
		stat[0] = '\0';
		if (!fgets(stat, sizeof stat, f))
			stat[0] = '\0';
		fclose(f);
		paren = strrchr(stat, ')');
		if (paren && paren[1] == ' ' && paren[2] == 'Z')
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* What the fake daemon answers the watchdog's inspect, before it says ready. */
#define LABELS_OURS \
	"{\"Id\":\"" ID "\",\"Config\":{\"Labels\":{\"io.airlock.managed\":\"1\"," \
	"\"io.airlock.owner-boot\":\"b\",\"io.airlock.owner-pid\":\"1\"," \
	"\"io.airlock.owner-start\":\"2\",\"io.airlock.session\":\"s-1\"}}}"
#define LABELS_PARTIAL \
	"{\"Id\":\"" ID "\",\"Config\":{\"Labels\":{\"io.airlock.managed\":\"1\"}}}"
#define LABELS_FOREIGN \
	"{\"Id\":\"" ID "\",\"Config\":{\"Labels\":{\"x\":\"\\\"io.airlock.managed\\\":\\\"1\\\"\"}}}"

struct inspect_answer {
	const char *body;
	char request[1024];
	pthread_t thread;
};

/* Serve one inspect: the watchdog asks for it before it says ready. */
static void *
inspect_server(void *arg)
{
	struct inspect_answer *a = arg;
	char head[128];
	int fd = accept_within(5000);

	if (fd < 0)
		return NULL;
	read_request(fd, a->request, sizeof a->request);
	snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
		 strlen(a->body));
	if (write(fd, head, strlen(head)) < 0 || write(fd, a->body, strlen(a->body)) < 0)
		a->request[0] = '\0';
	close(fd);
	return NULL;
}

/* lease_arm while the fake daemon answers the inspect with body. */
static int
arm_with(const char *body, struct lease **l, struct al_err *err)
{
	struct inspect_answer a = { .body = body };
	int rc;

	assert_int_equal(pthread_create(&a.thread, NULL, inspect_server, &a), 0);
	rc = lease_arm(exe, D.path, ID, on_fail, NULL, l, err);
	pthread_join(a.thread, NULL);
	assert_non_null(strstr(a.request, "GET /" DOCKER_API_VERSION "/containers/" ID "/json "));
	return rc;
}

static struct lease *
armed(long *pid)
{
	struct lease_status st;
	struct lease *l = NULL;
	struct al_err err;

	assert_int_equal(arm_with(LABELS_OURS, &l, &err), 0);
	lease_get_status(l, &st);
	assert_true(st.armed);
	assert_true(st.watchdog_pid > 1);
	*pid = st.watchdog_pid;
	return l;
}

/* Answer one request for the container, to the path ending in what, with this status line. */
static void
answer(const char *what, const char *status_line)
{
	char req[1024] = "", want[160];
	int fd = accept_within(WATCHDOG_RETRY_MAX_MS + 2000);

	assert_true(fd >= 0);
	read_request(fd, req, sizeof req);
	snprintf(want, sizeof want, "POST /%s/containers/%s/%s HTTP/1.1\r\n", DOCKER_API_VERSION,
		 ID, what);
	if (!strstr(req, want))
		fail_msg("wanted %s, got %.200s", want, req);
	assert_int_equal(write(fd, status_line, strlen(status_line)), (ssize_t)strlen(status_line));
	close(fd);
}

/*
 * One attempt: the unpause first (a quarantined container is paused; this
 * one is not: 409), then the stop, answered with status_line.
 */
static void
answer_stop(const char *status_line)
{
	answer("unpause", "HTTP/1.1 409 Conflict\r\n\r\n");
	answer("stop?t=0", status_line);
}

/* Heartbeats are acknowledged, and a closed lease makes exactly the unpause and stop requests. */
static void
test_close_stops_the_container(void **state)
{
	struct lease_status st;
	long pid;
	struct lease *l = armed(&pid);

	(void)state;
	usleep(700 * 1000);
	lease_get_status(l, &st);
	assert_true(st.acks >= 1);
	assert_int_equal(accept_within(0), -1);	/* nothing while the lease holds */
	lease_close(l);
	answer_stop("HTTP/1.1 204 No Content\r\n\r\n");
	assert_true(exited_within(pid, 3000));
	assert_int_equal(accept_within(300), -1);	/* one request, no retry */
	assert_int_equal(fails, 0);
}

/*
 * The watchdog is its own small program: /proc says its image is
 * airlock-watchdog and that none of the engine's libraries is mapped in it.
 */
static void
test_watchdog_is_the_small_program(void **state)
{
	static const char *const absent[] = { "libcurl", "libjansson", "libsqlite3",
					      "libncurses", "libnotify", "libcrypto", "libglib" };
	char path[64], exe_path[512], line[1024];
	long pid;
	struct lease *l = armed(&pid);
	size_t i, mapped = 0;
	ssize_t n;
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "/proc/%ld/exe", pid);
	n = readlink(path, exe_path, sizeof exe_path - 1);
	assert_true(n > 0);
	exe_path[n] = '\0';
	assert_non_null(strstr(exe_path, "/airlock-watchdog"));
	snprintf(path, sizeof path, "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		mapped++;
		for (i = 0; i < sizeof absent / sizeof absent[0]; i++)
			if (strstr(line, absent[i]))
				fail_msg("the watchdog maps %s", absent[i]);
	}
	fclose(f);
	assert_true(mapped > 0);	/* a process with no maps would prove nothing */
	lease_done(l);
	assert_true(exited_within(pid, 3000));
}

/* After lease_done the watchdog exits and never calls the daemon. */
static void
test_done_makes_no_request(void **state)
{
	long pid;
	struct lease *l = armed(&pid);

	(void)state;
	usleep(300 * 1000);
	lease_done(l);
	assert_true(exited_within(pid, 3000));
	assert_int_equal(accept_within(500), -1);
	assert_int_equal(fails, 0);
}

/* A paused container is unpaused before its stop: runsc would take 12 s to stop it paused. */
static void
test_paused_is_unpaused_first(void **state)
{
	long pid;
	struct lease *l = armed(&pid);

	(void)state;
	lease_close(l);
	answer("unpause", "HTTP/1.1 204 No Content\r\n\r\n");
	answer("stop?t=0", "HTTP/1.1 204 No Content\r\n\r\n");
	assert_true(exited_within(pid, 3000));
	assert_int_equal(accept_within(300), -1);
	assert_int_equal(fails, 0);
}

/*
 * A daemon that answers 500 is asked again, and again, until it stops the
 * container; then the watchdog exits and asks nothing more.
 */
static void
test_failed_stop_is_retried(void **state)
{
	long pid;
	struct lease *l = armed(&pid);
	int i;

	(void)state;
	lease_close(l);
	for (i = 0; i < 5; i++)
		answer_stop("HTTP/1.1 500 Internal\r\n\r\n");
	assert_false(exited_within(pid, 50));	/* still at it */
	answer_stop("HTTP/1.1 204 No Content\r\n\r\n");
	assert_true(exited_within(pid, 3000));
	assert_int_equal(accept_within(300), -1);
}

/*
 * The daemon is gone when the lease breaks (its socket removed): the
 * watchdog keeps trying, and stops the container once the daemon is back
 * at the same socket.
 */
static void
test_stop_outlasts_a_daemon_outage(void **state)
{
	long pid;
	struct lease *l = armed(&pid);

	(void)state;
	daemon_gone();
	lease_close(l);
	usleep(1500 * 1000);
	assert_false(exited_within(pid, 50));	/* it did not give up */
	daemon_listen();
	answer_stop("HTTP/1.1 204 No Content\r\n\r\n");
	assert_true(exited_within(pid, 3000));
	assert_int_equal(accept_within(300), -1);
}

/* An argument that is not a full container ID: no ready, no request. */
static void
test_bad_id_is_refused(void **state)
{
	struct lease *l = NULL;
	struct al_err err;

	(void)state;
	assert_int_equal(lease_arm(exe, D.path, "airlock-0123", on_fail, NULL, &l, &err), -1);
	assert_null(l);
	assert_non_null(strstr(err.msg, "not ready"));
	assert_int_equal(accept_within(300), -1);
}

/*
 * A container without airlock's labels (none, only managed=1, or the
 * label's text inside another label's value): the watchdog refuses it
 * before ready and never asks to stop it.
 */
static void
test_foreign_container_refused(void **state)
{
	static const char *const bodies[] = { LABELS_FOREIGN, LABELS_PARTIAL,
					      "{\"Id\":\"" ID "\",\"Config\":{}}" };
	struct lease *l = NULL;
	struct al_err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		assert_int_equal(arm_with(bodies[i], &l, &err), -1);
		assert_null(l);
		assert_non_null(strstr(err.msg, "not ready"));
		assert_int_equal(accept_within(300), -1);	/* no stop request */
	}
}

/* No watchdog program beside the binary or installed: a clear refusal. */
static void
test_missing_program_is_refused(void **state)
{
	struct lease *l = NULL;
	struct al_err err;

	(void)state;
	if (access(AIRLOCK_LIBEXECDIR "/airlock-watchdog", X_OK) == 0)
		skip();	/* an installed copy is the documented fallback */
	assert_int_equal(lease_arm("/nonexistent/airlock", D.path, ID, on_fail, NULL, &l, &err), -1);
	assert_null(l);
	assert_true(err.msg[0] != '\0');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_close_stops_the_container, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paused_is_unpaused_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_done_makes_no_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watchdog_is_the_small_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_stop_is_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_outlasts_a_daemon_outage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_id_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_container_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_program_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
