/* The installed upstreams: root's catalog, and what a non-root peer's config may name. */
#include "upstream_catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"

const char *
upstream_catalog_fault(const struct stat *st, bool dir)
{
	if (dir && !S_ISDIR(st->st_mode))
		return "not a directory";
	if (!dir && !S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "group- or world-writable";
	return NULL;
}

bool
upstream_catalog_key_ok(const char *key)
{
	size_t n = key ? strlen(key) : 0;

	return n > 0 && n <= UPSTREAM_CATALOG_KEY_MAX && key[0] != '-' &&
	       strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

const char *
upstream_catalog_parent_fault(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != 0)
		return "not owned by root";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return "group- or world-writable without the sticky bit";
	return NULL;
}

/*
 * Walk dir from / one component at a time, never following a symlink:
 * each parent must pass upstream_catalog_parent_fault, dir itself
 * upstream_catalog_fault. The directory's descriptor (O_PATH), or -1 with
 * *why and the path walked so far in at (the component at fault).
 */
static int
walk_dir(const char *dir, char *at, size_t cap, const char **why)
{
	const char *p = dir, *end;
	char name[NAME_MAX + 1];
	int fd = -1, next;
	struct stat st;
	size_t len = 1;

	*why = dir[0] != '/' ? "not an absolute path" : NULL;
	snprintf(at, cap, "/");
	if (!*why && (fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		*why = strerror(errno);
	while (!*why) {
		if (fstat(fd, &st) < 0)
			*why = "cannot stat";
		while (*p == '/')
			p++;
		if (*why || !*p)
			break;
		if ((*why = upstream_catalog_parent_fault(&st)))
			break;
		end = p + strcspn(p, "/");
		if (len < cap)
			len += (size_t)snprintf(at + len, cap - len, "%s%.*s",
						len > 1 ? "/" : "", (int)(end - p), p);
		if (end - p > NAME_MAX || (end - p == 2 && p[0] == '.' && p[1] == '.')) {
			*why = end - p > NAME_MAX ? "a name too long" : "a .. in the path";
			break;
		}
		snprintf(name, sizeof name, "%.*s", (int)(end - p), p);
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			*why = errno == ENOTDIR || errno == ELOOP ?
			       "a symlink or not a directory" : strerror(errno);
		close(fd);
		fd = next;
		p = end;
	}
	if (!*why)
		*why = upstream_catalog_fault(&st, true);
	if (*why && fd >= 0)
		fd = (close(fd), -1);
	return fd;
}

/* The directory, walked and checked: a descriptor, or -1 with err. */
static int
open_dir(const char *dir, const char *key, struct al_err *err)
{
	char at[PATH_MAX];
	const char *why;
	int fd = walk_dir(dir, at, sizeof at, &why);

	if (fd < 0)
		al_fail(err, "installed upstream %s: directory %.80s: %.80s: %s (it and each "
			"directory above it must be root's, not group- or world-writable; "
			"root installs %s.json there)", key, dir, at, why, key);
	return fd;
}

/* Read fd whole, at most UPSTREAM_CATALOG_FILE_MAX: a JSON object, or NULL with *why. */
static json_t *
read_object(int fd, const char **why)
{
	enum bytes_read r;
	json_t *v = NULL;
	char *buf;
	size_t n;

	r = bytes_read_fd(fd, UPSTREAM_CATALOG_FILE_MAX, &buf, &n);
	*why = r == BYTES_READ_NOMEM ? "out of memory" : r == BYTES_READ_ERROR ? "cannot read"
	     : r == BYTES_READ_TOO_LARGE ? "larger than 64 KiB" : "not a JSON object";
	if (r == BYTES_READ_OK)
		v = json_loadb(buf, n, JSON_REJECT_DUPLICATES, NULL);
	free(buf);
	if (v && !json_is_object(v))
		v = (json_decref(v), NULL);
	return v;
}

json_t *
upstream_catalog_read(const char *dir, const char *key, struct al_err *err)
{
	char file[UPSTREAM_CATALOG_KEY_MAX + 8];
	const char *why = NULL;
	json_t *def = NULL;
	struct stat st;
	int dfd, fd;

	dir = dir ? dir : UPSTREAM_CATALOG_DIR;
	if (!upstream_catalog_key_ok(key)) {
		al_fail(err, "installed: expected a key of at most %d letters, digits, _ or -",
			UPSTREAM_CATALOG_KEY_MAX);
		return NULL;
	}
	if ((dfd = open_dir(dir, key, err)) < 0)
		return NULL;
	snprintf(file, sizeof file, "%s.json", key);
	fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		why = errno == ELOOP ? "a symlink" : strerror(errno);
	else if (fstat(fd, &st) < 0)
		why = "cannot stat";
	else
		why = upstream_catalog_fault(&st, false);
	if (!why)
		def = read_object(fd, &why);
	if (fd >= 0)
		close(fd);
	if (!def)
		al_fail(err, "installed upstream %s: %.80s/%s: %s (root installs the definition "
			"there: owned by root, not group- or world-writable)", key, dir, file, why);
	return def;
}

/* One upstream of a peer's config: exactly {"installed": KEY}. */
static bool
names_installed(const json_t *u)
{
	return json_is_object(u) && json_object_size(u) == 1 &&
	       json_is_string(json_object_get(u, "installed"));
}

const char *
upstream_catalog_peer_fault(const json_t *root, const char *dir, struct al_err *err)
{
	const json_t *ups = json_object_get(root, "upstreams"), *u;
	const char *name;

	dir = dir ? dir : UPSTREAM_CATALOG_DIR;
	if (ups && !json_is_object(ups)) {
		al_fail(err, "upstreams: expected an object of installed upstreams");
		return UPSTREAM_CATALOG_NOT_INSTALLED;
	}
	json_object_foreach((json_t *)ups, name, u) {
		if (names_installed(u))
			continue;
		al_fail(err, "upstreams.%.40s: only root gives argv, env or cwd: root installs "
			"%.80s/%.40s.json (root's, not group- or world-writable) and you write "
			"{\"installed\": \"%.40s\"}", name, dir, name, name);
		return UPSTREAM_CATALOG_NOT_INSTALLED;
	}
	if (json_object_get(json_object_get(root, "initial"), "file")) {
		al_fail(err, "initial.file: the engine opens no file for a peer that is not root");
		return UPSTREAM_CATALOG_NAMES_FILE;
	}
	return NULL;
}
