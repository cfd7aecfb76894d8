/* The socket file of `airlock serve`: its path, directory, bind and connect. */
#include "control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
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
		snprintf(out, cap, "%s", CONTROL_SOCKET_SYSTEM);
	else if (xdg && xdg[0] == '/')
		snprintf(out, cap, "%s/airlock/engine.sock", xdg);
	else
		return al_fail(err, "no --socket given and XDG_RUNTIME_DIR is not set");
	if (strlen(out) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return al_fail(err, "socket path too long: %s", out);
	return 0;
}

void
control_socket_dial(char *out, size_t cap)
{
	struct al_err err;
	struct stat st;

	if (geteuid() == 0 || control_socket_default(out, cap, &err) < 0 ||
	    lstat(out, &st) < 0 || !S_ISSOCK(st.st_mode))
		snprintf(out, cap, "%s", CONTROL_SOCKET_SYSTEM);
}

/* dir, opened without following a symlink: ours and a directory, or -1. */
static int
open_own_dir(const char *dir, struct al_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return al_fail(err, "socket directory %s: %s", dir,
			       errno == ENOTDIR || errno == ELOOP ?
			       "not a directory (or a symlink)" : strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return al_fail(err, "socket directory %s: not owned by uid %u", dir,
			       (unsigned)geteuid());
	}
	return fd;
}

int
control_socket_dir(const char *dir, struct al_err *err)
{
	int fd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
	fd = open_own_dir(dir, err);
	if (fd < 0)
		return -1;
	/* Every start: a directory an older engine made 0750 lets the view role in too. */
	if (fchmod(fd, 0755) < 0) {
		al_fail(err, "socket directory %s: chmod: %s", dir, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

const char *
control_dir_unsafe(const struct stat *st, uid_t self)
{
	return control_dir_unsafe_to(st, self, self);
}

const char *
control_dir_unsafe_to(const struct stat *st, uid_t a, uid_t b)
{
	if (S_ISLNK(st->st_mode) || !S_ISDIR(st->st_mode))
		return "not a directory (or a symlink)";
	if (st->st_uid != 0 && st->st_uid != a && st->st_uid != b)
		return "owned by another user: they could replace the socket";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return "writable by others and not sticky: they could replace the socket";
	return NULL;
}

/*
 * The directory path is in, and each above it (resolved: /var/run is a
 * link to /run; the socket itself never is, clear_path), must pass
 * control_dir_unsafe_to(a, b): whoever may rename any of them could put a
 * directory of their own, and a socket in it, in the engine's place.
 * 0, or -1 with the directory at fault in err.
 */
int
control_path_safe(const char *path, uid_t a, uid_t b, struct al_err *err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], real[PATH_MAX], *p;
	const char *slash = strrchr(path, '/'), *why;
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else
		snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (!realpath(dir, real))
		return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
	for (p = real;;) {
		char keep = *p;

		*p = '\0';
		if (stat(p == real ? "/" : real, &st) < 0)
			return al_fail(err, "socket directory %s: %s", p == real ? "/" : real,
				       strerror(errno));
		if ((why = control_dir_unsafe_to(&st, a, b)))
			return al_fail(err, "socket directory %s: %s", p == real ? "/" : real, why);
		*p = keep;
		if (!keep)
			return 0;
		p = strchr(p + 1, '/');
		if (!p)
			p = real + strlen(real);
	}
}

static int
safe_parent(const char *path, struct al_err *err)
{
	return control_path_safe(path, geteuid(), geteuid(), err);
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

/* Bound 0666 by the umask (single-threaded here: serve binds before its threads). */
static int
bind_path(int fd, const struct sockaddr_un *a, struct al_err *err)
{
	mode_t old = umask(0111);
	int rc = bind(fd, (const struct sockaddr *)a, sizeof *a);

	umask(old);
	if (rc < 0)
		return al_fail(err, "socket %s: bind: %s", a->sun_path, strerror(errno));
	if (listen(fd, 64) < 0)
		return al_fail(err, "socket %s: listen: %s", a->sun_path, strerror(errno));
	return 0;
}

int
control_listen(const char *path, int *out, struct al_err *err)
{
	struct sockaddr_un a;
	int fd, rc;

	*out = -1;
	if (fill_addr(&a, path, err) < 0 || safe_parent(path, err) < 0)
		return -1;
	rc = clear_path(&a, err);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	if (bind_path(fd, &a, err) < 0) {
		close(fd);
		return -1;
	}
	*out = fd;
	return 0;
}

/* Said before a connect, which would only say "Connection refused" of a plain file. */
static int
socket_there(const char *path, struct al_err *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? al_fail(err, "%s: does not exist", path)
				       : al_fail(err, "cannot reach the engine at %s: %s", path,
						 strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return al_fail(err, "%s: not a socket", path);
	return 0;
}

/*
 * Whoever answers at path must be an engine the caller would have asked
 * for: root, the caller itself, or the owner of the socket's directory
 * when no one else but root may write there (the unit's airlock in
 * /run/airlock). A socket another user bound first where anyone may
 * write (/tmp) is refused before a word is sent to it.
 */
static int
peer_trusted(int fd, const char *path, struct al_err *err)
{
	struct ucred c;
	socklen_t len = sizeof c;
	char dir[sizeof ((struct sockaddr_un *)0)->sun_path];
	struct stat st;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) < 0)
		return al_fail(err, "%s: cannot tell who answers: %s", path, strerror(errno));
	if (c.uid == 0 || c.uid == geteuid())
		return 0;
	snprintf(dir, sizeof dir, "%s", path);	/* fill_addr made sure it fits */
	/* and no one else may replace that directory: each above it root's, its, or yours */
	if (stat(dirname(dir), &st) == 0 && st.st_uid == c.uid &&
	    !(st.st_mode & (S_IWGRP | S_IWOTH)) && control_path_safe(path, c.uid, geteuid(), NULL) == 0)
		return 0;
	return al_fail(err, "%s: answered by uid %u, neither root, you, nor the owner of its "
		       "directory: not asked (a socket another user made?)", path, (unsigned)c.uid);
}

int
control_connect(const char *path, struct al_err *err)
{
	struct timeval timeout = { .tv_sec = CONTROL_CONNECT_TIMEOUT_S };
	struct sockaddr_un a;
	int fd;

	if (fill_addr(&a, path, err) < 0 || socket_there(path, err) < 0)
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
	if (peer_trusted(fd, path, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}
