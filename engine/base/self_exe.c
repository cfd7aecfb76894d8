#include "self_exe.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "airlock-config.h"

bool
self_exe_usable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* exe when it is a path, else the running program's, in self: NULL when unknown. */
static const char *
exe_path(const char *exe, char self[PATH_MAX])
{
	ssize_t n;

	if (exe && strchr(exe, '/'))
		return exe;
	n = readlink("/proc/self/exe", self, PATH_MAX - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	return self;
}

int
self_exe_sibling(const char *exe, const char *name, char *out, size_t cap)
{
	char self[PATH_MAX];
	const char *slash;
	int w;

	if (!(exe = exe_path(exe, self)))
		return -1;
	slash = strrchr(exe, '/');
	w = snprintf(out, cap, "%.*s/%s", (int)(slash - exe), exe, name);
	return w > 0 && (size_t)w < cap && self_exe_usable(out) ? 0 : -1;
}

int
self_exe_program(const char *exe, const char *name, char *out, size_t cap)
{
	char self[PATH_MAX];
	int w;

	if (self_exe_sibling(exe, name, out, cap) == 0)
		return 0;
	w = snprintf(out, cap, "%s/%s", AIRLOCK_LIBEXECDIR, name);
	if (w > 0 && (size_t)w < cap && self_exe_usable(out))
		return 0;
	exe = exe_path(exe, self);
	snprintf(out, cap, "%s is neither beside %s nor in %s", name, exe ? exe : "this airlock",
		 AIRLOCK_LIBEXECDIR);
	return -1;
}
