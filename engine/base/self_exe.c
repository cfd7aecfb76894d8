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

int
self_exe_sibling(const char *exe, const char *name, char *out, size_t cap)
{
	char self[PATH_MAX];
	const char *slash;
	ssize_t n;
	int w;

	if (!exe || !strchr(exe, '/')) {
		n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n <= 0)
			return -1;
		self[n] = '\0';
		exe = self;
	}
	slash = strrchr(exe, '/');
	w = snprintf(out, cap, "%.*s/%s", (int)(slash - exe), exe, name);
	return w > 0 && (size_t)w < cap && self_exe_usable(out) ? 0 : -1;
}

int
self_exe_program(const char *exe, const char *name, char *out, size_t cap)
{
	int w;

	if (self_exe_sibling(exe, name, out, cap) == 0)
		return 0;
	w = snprintf(out, cap, "%s/%s", AIRLOCK_LIBEXECDIR, name);
	return w > 0 && (size_t)w < cap && self_exe_usable(out) ? 0 : -1;
}
