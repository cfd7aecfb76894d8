#include "mcp_confine_int.h"

#include "landlock_abi.h"
#include "mutant.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The Landlock ruleset of an upstream, through the three system calls (landlock_abi.h). */

#define FS_READ		(LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_EXEC		(FS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
#define FS_WRITE	(FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
			 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
			 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | \
			 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)
/* What a rule on a file (not a directory) may carry. */
#define FS_FILE		(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
			 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * What every upstream may read: the system's programs and libraries, its
 * configuration read-only, a few devices. /proc is read-only as a whole
 * (Landlock cannot grant /proc/self alone and node needs it): other
 * processes' environ and mem stay closed by the uid change (a different
 * uid fails ptrace_may_access) and by Landlock's own ptrace scoping.
 */
static const struct {
	const char *path;
	uint64_t access;
} system_paths[] = {
	{ "/usr", FS_EXEC }, { "/bin", FS_EXEC }, { "/sbin", FS_EXEC },
	{ "/lib", FS_EXEC }, { "/lib64", FS_EXEC }, { "/lib32", FS_EXEC },
	{ "/etc", FS_READ }, { "/proc", FS_READ },
	{ "/dev/null", FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE },
	{ "/dev/zero", FS_READ }, { "/dev/urandom", FS_READ }, { "/dev/random", FS_READ },
};

int
mcp_landlock_restrict(int ruleset_fd)
{
	return (int)syscall(SYS_landlock_restrict_self, ruleset_fd, 0U);
}

int
mcp_confine_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

static int
ll_abi(const struct mcp_confine *cf)
{
	if (confine_mutant(cf, "landlock_absent"))
		return 0;	/* a kernel without Landlock, for the refusal's test */
	if (confine_mutant(cf, "landlock_abi2"))
		return 2;	/* Debian 12's kernel (6.1), for the opt-in's test */
	return mcp_confine_landlock_abi();
}

/* The file accesses an ABI's rulesets know: a newer bit is refused by an older kernel. */
static uint64_t
ll_fs_handled(int abi)
{
	uint64_t fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1 */

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return fs;
}

/* 0 added; 1 absent and optional; -1 with errno. */
static int
ll_add_path(struct mcp_confine *cf, const char *path, uint64_t access, bool optional)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access & cf->fs_handled };
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), rc;

	if (fd < 0)
		return optional && errno == ENOENT ? 1 : -1;
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		pb.allowed_access &= FS_FILE;
	pb.parent_fd = fd;
	rc = (int)syscall(SYS_landlock_add_rule, cf->ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0U);
	close(fd);
	if (rc == 0)
		cf->receipt.landlock_rules++;
	return rc < 0 ? -1 : 0;
}

static int
ll_add_port(struct mcp_confine *cf, uint64_t access, uint16_t port)
{
	struct ll_net_port_attr np = { .allowed_access = access, .port = port };

	if (syscall(SYS_landlock_add_rule, cf->ruleset_fd, LL_RULE_NET_PORT, &np, 0U) < 0)
		return -1;
	cf->receipt.landlock_rules++;
	return 0;
}

/* A directory a path names: itself, or the one it is in; never "/". */
static int
ll_add_dir_of(struct mcp_confine *cf, const char *path, uint64_t access)
{
	char buf[PATH_MAX];
	struct stat st;

	if (stat(path, &st) < 0 || snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return 0;	/* not a path the server can use: nothing to grant */
	if (!S_ISDIR(st.st_mode))
		dirname(buf);
	if (strcmp(buf, "/") == 0)
		return 0;
	return ll_add_path(cf, buf, access, true) < 0 ? -1 : 0;
}

/*
 * A program inside a node_modules tree needs its dependencies beside it:
 * the outermost node_modules directory above its real path is readable.
 */
static int
ll_add_node_modules(struct mcp_confine *cf, const char *real)
{
	const char *hit = strstr(real, "/node_modules/");
	char buf[PATH_MAX];

	if (!hit || (size_t)(hit - real) + sizeof "/node_modules" > sizeof buf)
		return 0;
	snprintf(buf, sizeof buf, "%.*s/node_modules", (int)(hit - real), real);
	return ll_add_path(cf, buf, FS_EXEC, true) < 0 ? -1 : 0;
}

/*
 * The program's directory (as named and as resolved), and the directory of
 * every absolute argument that exists (a script, a data directory): read
 * and execute for the program, read for the arguments.
 */
static int
ll_add_program(struct mcp_confine *cf, const struct strv *argv)
{
	char real[PATH_MAX];
	size_t i;

	if (ll_add_dir_of(cf, argv->v[0], FS_EXEC) < 0)
		return -1;
	if (realpath(argv->v[0], real) &&
	    (ll_add_dir_of(cf, real, FS_EXEC) < 0 || ll_add_node_modules(cf, real) < 0))
		return -1;
	for (i = 1; i < argv->n; i++)
		if (argv->v[i][0] == '/' && ll_add_dir_of(cf, argv->v[i], FS_READ) < 0)
			return -1;
	return 0;
}

static int
ll_add_system(struct mcp_confine *cf, struct al_err *err)
{
	size_t i;

	for (i = 0; i < sizeof system_paths / sizeof system_paths[0]; i++)
		if (ll_add_path(cf, system_paths[i].path, system_paths[i].access, true) < 0)
			return al_fail(err, "upstream %s: cannot build its Landlock ruleset: %s",
				       cf->name, strerror(errno));
	return 0;
}

/* The operator's lists: each must exist (a typo must not silently grant nothing). */
static int
ll_add_paths(struct mcp_confine *cf, const struct mcp_confine_config *cfg, struct al_err *err)
{
	const struct strv *lists[2] = { &cfg->rw, &cfg->ro };
	const uint64_t access[2] = { FS_WRITE, FS_READ };
	size_t l, i;

	for (l = 0; l < 2; l++)
		for (i = 0; i < lists[l]->n; i++)
			if (ll_add_path(cf, lists[l]->v[i], access[l], false) < 0)
				return al_fail(err, "upstream %s: confinement path %.200s: %s",
					       cf->name, lists[l]->v[i], strerror(errno));
	return 0;
}

static int
ll_add_ports(struct mcp_confine *cf, const struct mcp_confine_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n_connect; i++)
		if (ll_add_port(cf, LL_NET_CONNECT_TCP, cfg->connect[i]) < 0)
			return -1;
	for (i = 0; i < cfg->n_bind; i++)
		if (ll_add_port(cf, LL_NET_BIND_TCP, cfg->bind[i]) < 0)
			return -1;
	return 0;
}

/* A port no rule allows: the spawn check connects to it and must be refused. */
static int
ll_probe_port(const struct mcp_confine_config *cfg)
{
	int p;
	size_t i;

	for (p = 9;; p++) {
		for (i = 0; i < cfg->n_connect && cfg->connect[i] != p; i++)
			;
		if (i == cfg->n_connect)
			return p;
	}
}

static int
ll_create(struct mcp_confine *cf)
{
	struct ll_ruleset_attr attr = {
		.handled_access_fs = cf->landlock_fs ? cf->fs_handled : 0,
		.handled_access_net = cf->landlock_net ? LL_NET_BIND_TCP | LL_NET_CONNECT_TCP : 0,
		.scoped = cf->scoped,
	};

	cf->ruleset_fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0U);
	return cf->ruleset_fd < 0 ? -1 : 0;
}

int
mcp_landlock_prepare(struct mcp_confine *cf, const struct mcp_confine_config *cfg,
		     const struct strv *argv, struct al_err *err)
{
	int abi = ll_abi(cf);

	if (abi < MCP_LANDLOCK_ABI_MIN && !cfg->unconfined_ok)
		return al_fail(err, "upstream %s: the kernel offers Landlock ABI %d, confinement "
			       "needs %d (or the upstream's \"unconfined_ok\": true)",
			       cf->name, abi, MCP_LANDLOCK_ABI_MIN);
	/*
	 * Opted in below ABI 6: what the kernel has still applies (files from
	 * 1, with each upstream's /proc and ptrace its own domain's; TCP from
	 * 4), and the filter closes TCP when the config gives no network.
	 */
	if (abi == 0)
		return 0;	/* receipt: landlock_abi 0 */
	cf->landlock = true;
	cf->net_due = abi >= 4;
	cf->fs_handled = ll_fs_handled(abi);
	cf->scoped = abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0;
	cf->landlock_fs = !confine_mutant(cf, "no_landlock_fs");
	cf->landlock_net = cf->net_due && !confine_mutant(cf, "no_landlock_net");
	cf->probe_port = ll_probe_port(cfg);
	if (ll_create(cf) < 0)
		return al_fail(err, "upstream %s: cannot build its Landlock ruleset: %s",
			       cf->name, strerror(errno));
	cf->receipt.landlock_abi = abi;
	if (cf->landlock_net && ll_add_ports(cf, cfg) < 0)
		return al_fail(err, "upstream %s: cannot build its Landlock ruleset: %s",
			       cf->name, strerror(errno));
	if (!cf->landlock_fs)
		return 0;
	if (ll_add_system(cf, err) < 0 || ll_add_paths(cf, cfg, err) < 0)
		return -1;
	if (ll_add_program(cf, argv) < 0)
		return al_fail(err, "upstream %s: cannot build its Landlock ruleset: %s",
			       cf->name, strerror(errno));
	return 0;
}
