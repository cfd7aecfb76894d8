/* The installed upstreams: root's catalog, and what a non-root peer's config may name. */
#include "upstream_catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "path_reason.h"
#include "strv.h"

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

/* --- what an installed upstream runs ------------------------------------------- */

/* Why one entry of a tree the upstream runs from is not root's: fixed text, or NULL. */
static const char *
entry_fault(const FTSENT *e)
{
	struct stat st;

	switch (e->fts_info) {
	case FTS_D:
		return upstream_catalog_fault(e->fts_statp, true);
	case FTS_F:
		return upstream_catalog_fault(e->fts_statp, false);
	case FTS_SL:
		if (stat(e->fts_path, &st) < 0)
			return "a symlink to nothing (whoever could create its target would run)";
		return upstream_catalog_fault(&st, S_ISDIR(st.st_mode)) ?
		       "a symlink to what is not root's" : NULL;
	case FTS_DNR:
	case FTS_ERR:
	case FTS_NS:
		return "cannot be read";
	case FTS_DC:
		return "a directory cycle";
	default:
		return upstream_catalog_fault(e->fts_statp, false);
	}
}

/* Every entry beneath dir, a resolved path: fixed text with the entry in at, or NULL. */
static const char *
tree_fault(const char *dir, char *at, size_t cap)
{
	char *roots[2] = { (char *)dir, NULL };
	FTS *fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	const char *why = fts ? NULL : "cannot be walked";
	size_t n = 0;
	FTSENT *e;

	while (!why && (e = fts_read(fts))) {
		if (e->fts_info == FTS_DP)
			continue;
		why = ++n > UPSTREAM_CODE_ENTRIES_MAX ? "more entries than airlock walks (data "
		      "belongs under paths)" :
		      entry_fault(e);
		if (why)
			snprintf(at, cap, "%s", e->fts_path);
	}
	if (!why && fts && errno != 0)
		why = "cannot be walked";
	if (fts)
		fts_close(fts);
	return why;
}

/* A directory the upstream runs from: its parents (walk_dir), then all beneath it. */
static const char *
root_fault(const char *dir, char *at, size_t cap)
{
	const char *why;
	int fd = walk_dir(dir, at, cap, &why);

	if (fd < 0)
		return why;
	close(fd);
	return strcmp(dir, "/") == 0 ? NULL : tree_fault(dir, at, cap);
}

/* The directory path is in, into out (PATH_MAX). */
static void
parent_of(const char *path, char *out)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof copy, "%s", path);
	snprintf(out, PATH_MAX, "%s", dirname(copy));
}

/* A resolved file the upstream runs: itself, and the directory tree it is in. */
static const char *
file_fault(const char *real, char *at, size_t cap)
{
	char dir[PATH_MAX];
	struct stat st;
	const char *why;

	snprintf(at, cap, "%s", real);
	if (stat(real, &st) < 0)
		return "cannot stat";
	if ((why = upstream_catalog_fault(&st, false)))
		return why;
	parent_of(real, dir);
	return root_fault(dir, at, cap);
}

/* Is real beneath one of the definition's declared paths (data, not code)? */
static bool
declared(const char *real, const struct strv *rw, const struct strv *ro)
{
	const struct strv *lists[2] = { rw, ro };
	char p[PATH_MAX];
	size_t l, i;

	for (l = 0; l < 2; l++)
		for (i = 0; i < lists[l]->n; i++)
			if (realpath(lists[l]->v[i], p) && path_within(real, p))
				return true;
	return false;
}

const char *
upstream_catalog_code_fault(const struct strv *argv, const struct strv *rw,
			    const struct strv *ro, char *at, size_t cap)
{
	char real[PATH_MAX], in[PATH_MAX], named[PATH_MAX], dir[PATH_MAX];
	const char *why, *hit;
	struct stat st;
	size_t i;

	snprintf(at, cap, "%s", argv->v[0]);
	if (!realpath(argv->v[0], real))
		return errno == ENOENT ? "no such file" : "cannot be resolved";
	if ((why = file_fault(real, at, cap)))
		return why;
	parent_of(real, in);
	parent_of(argv->v[0], dir);
	if (realpath(dir, named) && !path_within(named, in) &&
	    (why = root_fault(named, at, cap)))	/* the directory as named, when elsewhere */
		return why;
	if ((hit = strstr(real, "/node_modules/"))) {	/* the tree its dependencies are in */
		snprintf(dir, sizeof dir, "%.*s/node_modules", (int)(hit - real), real);
		if ((why = root_fault(dir, at, cap)))
			return why;
	}
	for (i = 1; i < argv->n; i++) {	/* readable to it (Landlock): code, unless declared */
		if (argv->v[i][0] != '/' || !realpath(argv->v[i], real) || stat(real, &st) < 0 ||
		    declared(real, rw, ro))
			continue;
		why = S_ISDIR(st.st_mode) ? root_fault(real, at, cap) : file_fault(real, at, cap);
		if (why)
			return why;
	}
	return NULL;
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
