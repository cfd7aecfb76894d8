#ifndef AIRLOCK_TEST_UPSTREAM_DIR_H
#define AIRLOCK_TEST_UPSTREAM_DIR_H

/*
 * Tests run as root in CI, and then an upstream runs as airlock-upstream,
 * or as a session's own uid in its group (engine/mcp/mcp_uids.h), which
 * cannot enter a scratch directory (mkdtemp: 0700, root's). These give it
 * one it may write, as an operator would: the user's and its group's
 * (2770), and listed in the upstream's "paths.rw".
 */

#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_confine.h"

/* dir itself belongs to the upstream's user and group (no-op unless root). */
static inline void
upstream_dir_own(const char *dir)
{
	struct passwd *pw = geteuid() == 0 ? getpwnam(MCP_CONFINE_USER) : NULL;

	if (pw && (chown(dir, pw->pw_uid, pw->pw_gid) != 0 || chmod(dir, 02770) != 0))
		fail_msg("chown %s: %s", dir, strerror(errno));
}

/* dir/up, the upstream's; dir stays root's but may be passed through. */
static inline void
upstream_dir_make(const char *dir, char *out, size_t cap)
{
	snprintf(out, cap, "%s/up", dir);
	if (mkdir(out, 0700) != 0 || (geteuid() == 0 && chmod(dir, 0711) != 0))
		fail_msg("mkdir %s: %s", out, strerror(errno));
	upstream_dir_own(out);
}

/* What the upstream left in dir/up, then dir/up itself. */
static inline void
upstream_dir_remove(const char *sub)
{
	char path[4096];
	struct dirent *d;
	DIR *dp = opendir(sub);

	while (dp && (d = readdir(dp)))
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0) {
			snprintf(path, sizeof path, "%s/%s", sub, d->d_name);
			unlink(path);
		}
	if (dp)
		closedir(dp);
	if (rmdir(sub) != 0)
		fail_msg("rmdir %s: %s", sub, strerror(errno));
}

#endif
