/*
 * Why a path the operator named cannot be used: the text an open's own
 * error leaves out (a missing directory, permissions, a directory where a
 * file was meant); and whether one path lies within another.
 */
#include "path_reason.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *
create_reason(const char *path, char *buf, size_t cap)
{
	char *copy = strdup(path), *slash;
	const char *dir;
	int bad;

	if (!copy)
		return "";
	slash = strrchr(copy, '/');
	dir = slash == copy ? "/" : slash ? (*slash = '\0', copy) : ".";
	bad = access(dir, W_OK | X_OK) < 0 ? errno : 0;
	if (bad)
		snprintf(buf, cap, "%s: %s", dir, strerror(bad));
	free(copy);
	return bad ? buf : "";
}

const char *
path_reason(const char *path, bool create, char *buf, size_t cap)
{
	struct stat st;

	buf[0] = '\0';
	if (stat(path, &st) < 0) {
		if (errno == ENOENT && create)
			return create_reason(path, buf, cap);
		snprintf(buf, cap, "%s", strerror(errno));
		return buf;
	}
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (access(path, create ? R_OK | W_OK : R_OK) < 0)
		snprintf(buf, cap, "%s", strerror(errno));
	return buf;
}

void
path_failure(char *out, size_t cap, const char *what, const char *path, bool create,
	     const char *msg)
{
	size_t n = strlen(what);
	char why[256];
	const char *reason = path_reason(path, create, why, sizeof why);

	if (strncmp(msg, what, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
		msg += n + 2;
	snprintf(out, cap, "%s %s: %s%s%s", what, path, msg, reason[0] ? ": " : "", reason);
}

bool
path_within(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (strncmp(path, top, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n > 0 && top[n - 1] == '/');
}
