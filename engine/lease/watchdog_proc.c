/*
 * The watchdog process side of the lease (watchdog.h): read heartbeats,
 * then stop the container through the Engine API. This file and
 * watchdog_exe.c are the whole airlock-watchdog program: libc only (no
 * libcurl, jansson, SQLite or curses), so each session's watchdog costs a
 * few pages of private memory. Its one request is written by hand: the
 * daemon is a local unix socket and the answer we need is a status line.
 */
#include "watchdog.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "docker.h"	/* DOCKER_API_VERSION only: docker.c is not linked */
#include "mutant.h"
#include "profile.h"	/* the LABEL_* names only: profile.c is not linked */

#define CONTAINER_ID_LEN	64

enum watch_end {
	WATCH_STOP,	/* silence, EOF or a wrong byte: stop the container */
	WATCH_DONE,	/* the engine removed the container itself: nothing to do */
};

/* The upstreams' process groups (watchdog.h, lease_guard): leader pid and its start. */
struct guarded {
	pid_t pid;
	unsigned long long start;	/* /proc/PID/stat's starttime; 0: not seen */
};

static struct guarded groups[LEASE_GROUPS_MAX];
static size_t n_groups;

/* A process's start time in clock ticks since boot, or 0 (gone, or unreadable). */
static unsigned long long
start_ticks(pid_t pid)
{
	char path[32], buf[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* after the name's last ')': state is field 3, starttime field 22 */
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &t);
	return t;
}

/*
 * SIGKILL each guarded group, unless its leader's pid now names another
 * process (a new group could lead there: only once all of the old one
 * has gone, which a pid in use as a group id prevents).
 */
static void
kill_groups(void)
{
	unsigned long long now;
	size_t i;

	if (mutant("watchdog_spare_groups"))
		return;
	for (i = 0; i < n_groups; i++) {
		now = start_ticks(groups[i].pid);
		if (now && now != groups[i].start)
			continue;
		kill(-groups[i].pid, SIGKILL);
	}
}

/*
 * One byte of a "g<pid>;" message (*in: digits so far, -1 outside one).
 * false: malformed, or one group too many.
 */
static bool
guard_byte(char c, long *in)
{
	if (*in < 0) {
		*in = 0;	/* c is LEASE_GUARD */
		return true;
	}
	if (c >= '0' && c <= '9' && *in < 100000000L) {
		*in = *in * 10 + (c - '0');
		return *in > 0;
	}
	if (c != LEASE_GUARD_END || *in < 2 || n_groups == LEASE_GROUPS_MAX)
		return false;
	groups[n_groups].pid = (pid_t)*in;
	groups[n_groups].start = start_ticks((pid_t)*in);
	n_groups++;
	*in = -1;
	return true;
}

/* The engine passes the full container ID: 64 lowercase hex digits. */
static bool
container_id_valid(const char *id)
{
	size_t n = id ? strspn(id, "0123456789abcdef") : 0;

	return n == CONTAINER_ID_LEN && id[n] == '\0';
}

static int
connect_unix(const char *path, int timeout_ms)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	size_t n = strlen(path);
	int fd;

	if (n >= sizeof a.sun_path)
		return -1;
	memcpy(a.sun_path, path, n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A unix-socket connect honours the send timeout. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read until EOF or cap bytes, all within the deadline. Returns the length or -1. */
static ssize_t
recv_until(int fd, char *buf, size_t cap, int64_t deadline_us)
{
	size_t have = 0;

	while (have < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (deadline_us - clock_mono_us()) / 1000;
		ssize_t n;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = recv(fd, buf + have, cap - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

int
watchdog_http(const char *socket_path, const char *method, const char *path,
	      int timeout_ms, char *resp, size_t cap, size_t *len)
{
	int64_t deadline = clock_mono_us() + timeout_ms * 1000LL;
	char req[512];
	int fd, n, status = -1;
	ssize_t got;

	*len = 0;
	n = snprintf(req, sizeof req, "%s /" DOCKER_API_VERSION "%s HTTP/1.1\r\n"
		     "Host: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		     method, path);
	if (n < 0 || (size_t)n >= sizeof req || cap < 16)
		return -1;
	fd = connect_unix(socket_path, timeout_ms);
	if (fd < 0)
		return -1;
	if (send_all(fd, req, (size_t)n) == 0 &&
	    (got = recv_until(fd, resp, cap - 1, deadline)) > 0) {
		resp[got] = '\0';
		*len = (size_t)got;
		if (sscanf(resp, "HTTP/1.%*d %3d", &status) != 1)
			status = -1;
	}
	close(fd);
	return status;
}

/*
 * A quarantined container is paused: unpause it first, as the engine's
 * own stop does, since runsc takes the daemon some 12 s to stop a
 * paused sandbox (runc none). Its engine is gone, so nothing it sends
 * leaves. Any answer will do: 204 unpaused, 409 not paused, 404 gone; a
 * daemon that does not answer fails the stop that follows as well.
 */
static void
watchdog_unpause(const char *socket_path, const char *id)
{
	char path[128], resp[1024];
	size_t len;

	snprintf(path, sizeof path, "/containers/%s/unpause", id);
	(void)watchdog_http(socket_path, "POST", path, WATCHDOG_STOP_TIMEOUT_MS,
			    resp, sizeof resp, &len);
}

/*
 * The watchdog's one job: stop the container (t=0), retrying through a
 * daemon outage (see WATCHDOG_STOP_WINDOW_MS), then exit. Stopped (204),
 * already stopped (304) and gone (404: the engine's cleanup removed it)
 * are all done.
 */
static int
watchdog_stop(const char *socket_path, const char *id)
{
	int64_t give_up = clock_mono_us() + WATCHDOG_STOP_WINDOW_MS * 1000LL;
	int wait_ms = WATCHDOG_RETRY_FIRST_MS;
	char path[128], resp[1024];
	size_t len;
	int status;

	if (mutant("watchdog_noop"))
		return 0;
	snprintf(path, sizeof path, "/containers/%s/stop?t=0", id);
	for (;;) {
		watchdog_unpause(socket_path, id);
		status = watchdog_http(socket_path, "POST", path, WATCHDOG_STOP_TIMEOUT_MS,
				       resp, sizeof resp, &len);
		if (status == 204 || status == 304 || status == 404)
			return 0;
		if (clock_mono_us() + wait_ms * 1000LL >= give_up)
			return 1;
		usleep((useconds_t)wait_ms * 1000);
		wait_ms = wait_ms * 2 < WATCHDOG_RETRY_MAX_MS ? wait_ms * 2 : WATCHDOG_RETRY_MAX_MS;
	}
}

/*
 * Read heartbeats until silence, EOF, a wrong byte or the engine's "done".
 * Each "." is acknowledged at once.
 */
static enum watch_end
watch(void)
{
	int64_t deadline = clock_mono_us() + WATCHDOG_SILENCE_MS * 1000LL;
	long guard = -1;	/* inside a "g<pid>;": its digits so far */
	char buf[64];

	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		int64_t left = (deadline - clock_mono_us()) / 1000;
		ssize_t n, i;
		int rc;

		if (left <= 0)
			return WATCH_STOP;	/* silence: the engine is stalled or gone */
		rc = poll(&p, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return WATCH_STOP;
		n = read(0, buf, sizeof buf);
		if (n <= 0)
			return WATCH_STOP;	/* EOF: the engine closed the lease or died */
		for (i = 0; i < n; i++) {
			if (guard >= 0 || buf[i] == LEASE_GUARD) {
				if (!guard_byte(buf[i], &guard))
					return WATCH_STOP;
				continue;
			}
			if (buf[i] == LEASE_DONE)
				return WATCH_DONE;
			if (buf[i] != LEASE_PULSE || send(1, ".", 1, MSG_NOSIGNAL) != 1)
				return WATCH_STOP;
		}
		deadline = clock_mono_us() + WATCHDOG_SILENCE_MS * 1000LL;
	}
}

/*
 * In the daemon's compact JSON, a label is "key":"value"; a quote inside
 * a key or value is escaped, so these bytes can only be that label.
 */
static bool
label_set(const char *json, const char *key)
{
	char want[96];
	const char *p;

	snprintf(want, sizeof want, "\"%s\":\"", key);
	p = strstr(json, want);
	return p && p[strlen(want)] != '"';
}

/*
 * Run by hand with any other container's ID, the watchdog would stop a
 * container that is not airlock's: only one whose inspect names every
 * label airlock puts on its containers is guarded. 0, or 1 with the reason
 * on stderr (before ready: the engine's handshake fails too).
 */
static int
container_is_airlocks(const char *socket_path, const char *id)
{
	static char resp[64 * 1024];	/* a whole inspect answer; cut short: refused */
	char path[128];
	size_t len;
	int status;

	snprintf(path, sizeof path, "/containers/%s/json", id);
	status = watchdog_http(socket_path, "GET", path, WATCHDOG_STOP_TIMEOUT_MS, resp,
			       sizeof resp, &len);
	if (status != 200) {
		fprintf(stderr, "airlock watchdog: container %.64s: inspect answered %s%d; refused\n",
			id, status < 0 ? "no HTTP status " : "HTTP ", status < 0 ? 0 : status);
		return 1;
	}
	if (!strstr(resp, "\"" LABEL_MANAGED "\":\"1\"") || !label_set(resp, LABEL_SESSION) ||
	    !label_set(resp, LABEL_OWNER_PID) || !label_set(resp, LABEL_OWNER_START) ||
	    !label_set(resp, LABEL_OWNER_BOOT)) {
		fprintf(stderr, "airlock watchdog: container %.64s does not carry airlock's labels"
			" (" LABEL_MANAGED "=1, session and owner); refused\n", id);
		return 1;
	}
	return 0;
}

/*
 * What the watchdog accepts as its target, before it says ready: 0, 2 for
 * arguments that cannot name one, 1 for a container that is not airlock's.
 */
static int
watchdog_target_check(const char *socket_path, const char *container_id)
{
	if (!socket_path || socket_path[0] != '/' || !container_id_valid(container_id)) {
		fprintf(stderr, "airlock watchdog: needs an absolute socket path and a full"
			" container ID (64 hex digits)\n");
		return 2;
	}
	return container_is_airlocks(socket_path, container_id);
}

int
watchdog_main(const char *socket_path, const char *container_id)
{
	struct rlimit zero = { 0, 0 };
	int rc;

	signal(SIGPIPE, SIG_IGN);
	setrlimit(RLIMIT_CORE, &zero);
	if ((rc = watchdog_target_check(socket_path, container_id)) != 0)
		return rc;
	if (send(1, "ready\n", 6, MSG_NOSIGNAL) != 6)
		return watchdog_stop(socket_path, container_id);
	if (watch() == WATCH_DONE)
		return 0;
	kill_groups();	/* a signal, at once: before the daemon is asked anything */
	return watchdog_stop(socket_path, container_id);
}
