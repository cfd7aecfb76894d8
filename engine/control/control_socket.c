/* The socket file of `airlock serve`: its path, directory, bind and connect. */
#include "control_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int
control_socket_default(char *out, size_t cap, struct al_err *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(out, cap, "/run/airlock/engine.sock");
	else if (xdg && xdg[0] == '/')
		snprintf(out, cap, "%s/airlock/engine.sock", xdg);
	else
		return al_fail(err, "no --socket given and XDG_RUNTIME_DIR is not set");
	if (strlen(out) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return al_fail(err, "socket path too long: %s", out);
	return 0;
}

static int
own_dir(const char *dir, struct al_err *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
		return al_fail(err, "socket directory %s: not a directory (or a symlink)", dir);
	if (st.st_uid != geteuid())
		return al_fail(err, "socket directory %s: not owned by uid %u", dir,
			       (unsigned)geteuid());
	return 0;
}

int
control_socket_dir(const char *dir, struct control_group group, struct al_err *err)
{
	if (mkdir(dir, 0750) < 0) {
		if (errno != EEXIST)
			return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
		return own_dir(dir, err);
	}
	if (own_dir(dir, err) < 0)
		return -1;
	if (group.present && chown(dir, (uid_t)-1, group.gid) < 0)
		return al_fail(err, "socket directory %s: chown: %s", dir, strerror(errno));
	if (chmod(dir, 0750) < 0)
		return al_fail(err, "socket directory %s: chmod: %s", dir, strerror(errno));
	return 0;
}

static int
fill_addr(struct sockaddr_un *a, const char *path, struct al_err *err)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path)
		return al_fail(err, "socket path too long: %s", path);
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

/* 1: something answers on path; 0: stale (refused); -1: cannot tell. */
static int
probe(const struct sockaddr_un *a, struct al_err *err)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), rc;

	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS)
		rc = 1;		/* connected, or a full backlog: alive either way */
	else if (errno == ECONNREFUSED)
		rc = 0;
	else
		rc = al_fail(err, "socket %s: connect: %s", a->sun_path, strerror(errno));
	close(fd);
	return rc;
}

/* The path before bind: absent, or a stale socket of ours (removed). */
static int
clear_path(const struct sockaddr_un *a, struct al_err *err)
{
	const char *path = a->sun_path;
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : al_fail(err, "socket %s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return al_fail(err, "socket %s: is a symlink", path);
	if (st.st_uid != geteuid())
		return al_fail(err, "socket %s: not owned by uid %u", path, (unsigned)geteuid());
	if (!S_ISSOCK(st.st_mode))
		return al_fail(err, "socket %s: not a socket", path);
	rc = probe(a, err);
	if (rc == 1) {
		al_fail(err, "another engine answers on %s", path);
		return CONTROL_LISTEN_LIVE;
	}
	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		return al_fail(err, "socket %s: cannot remove the stale socket: %s", path,
			       strerror(errno));
	return rc;
}

static int
bind_path(int fd, const struct sockaddr_un *a, struct control_group group, struct al_err *err)
{
	mode_t old = umask(0117);	/* the file is made 0660 */
	int rc = bind(fd, (const struct sockaddr *)a, sizeof *a);

	umask(old);
	if (rc < 0)
		return al_fail(err, "socket %s: bind: %s", a->sun_path, strerror(errno));
	if (group.present && chown(a->sun_path, (uid_t)-1, group.gid) < 0)
		return al_fail(err, "socket %s: chown: %s", a->sun_path, strerror(errno));
	if (chmod(a->sun_path, 0660) < 0)
		return al_fail(err, "socket %s: chmod: %s", a->sun_path, strerror(errno));
	if (listen(fd, 64) < 0)
		return al_fail(err, "socket %s: listen: %s", a->sun_path, strerror(errno));
	return 0;
}

int
control_listen(const char *path, struct control_group group, int *out, struct al_err *err)
{
	struct sockaddr_un a;
	int fd, rc;

	*out = -1;
	if (fill_addr(&a, path, err) < 0)
		return -1;
	rc = clear_path(&a, err);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	if (bind_path(fd, &a, group, err) < 0) {
		close(fd);
		return -1;
	}
	*out = fd;
	return 0;
}

int
control_connect(const char *path, struct al_err *err)
{
	struct timeval timeout = { .tv_sec = CONTROL_CONNECT_TIMEOUT_S };
	struct sockaddr_un a;
	int fd;

	if (fill_addr(&a, path, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	/* Bounds the connect (a full backlog) and every send after it. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
	if (connect(fd, (const struct sockaddr *)&a, sizeof a) < 0) {
		al_fail(err, "cannot reach the engine at %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
