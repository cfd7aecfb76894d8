#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"

void
scratch_make(char *dir, size_t cap, const char *tag)
{
	int n = snprintf(dir, cap, "/tmp/airlock-%s-XXXXXX", tag);

	if (n < 0 || (size_t)n >= cap)
		fail_msg("scratch: /tmp/airlock-%s-XXXXXX does not fit in %zu bytes", tag, cap);
	if (!mkdtemp(dir))
		fail_msg("scratch: mkdtemp %s: %s", dir, strerror(errno));
}

void
scratch_put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(f = fopen(path, "w")))
		fail_msg("scratch: %s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0 || chmod(path, mode) != 0)
		fail_msg("scratch: %s: %s", path, strerror(errno));
}

/* Unlinks each entry; the first one left behind fails the test. */
static void
unlink_entries(const char *dir)
{
	char path[4096], left[4096] = "";
	struct dirent *d;
	DIR *dp = opendir(dir);
	int err = 0;

	if (!dp)
		fail_msg("scratch: opendir %s: %s", dir, strerror(errno));
	while ((d = readdir(dp))) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, d->d_name);
		if (unlink(path) != 0 && !left[0]) {
			err = errno;
			snprintf(left, sizeof left, "%s", path);
		}
	}
	closedir(dp);
	if (left[0])
		fail_msg("scratch: %s left behind: %s", left, strerror(err));
}

void
scratch_remove(const char *dir)
{
	unlink_entries(dir);
	if (rmdir(dir) != 0)
		fail_msg("scratch: rmdir %s: %s", dir, strerror(errno));
}
