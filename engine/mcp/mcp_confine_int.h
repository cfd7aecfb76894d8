#ifndef AIRLOCK_MCP_CONFINE_INT_H
#define AIRLOCK_MCP_CONFINE_INT_H

/*
 * What mcp_confine.c (user, child), mcp_landlock.c (the ruleset) and
 * mcp_seccomp.c (the filter) share. Not for other callers.
 */

#include <linux/filter.h>
#include <stdbool.h>

#include "mcp_confine.h"
#include "mutant.h"

#include <stdio.h>

struct mcp_confine {
	char name[64];			/* the upstream's, for errors */
	char kind[24];			/* its mutants' prefix: "upstream", or the caller's */
	bool change_ids;		/* CAP_SETUID and CAP_SETGID: setresuid to the user */
	uid_t uid;
	gid_t gid;
	int program_fd;			/* opened by the parent; -1: exec by path */
	int ruleset_fd;			/* -1: no Landlock (unconfined_ok, or mutant) */
	bool landlock;			/* a ruleset is due (the ABI is there): proven */
	bool net_due;			/* the ABI has TCP rules (4): proven */
	bool inet_closed;		/* no TCP rules and no network: socket(AF_INET*) refused; proven */
	bool landlock_fs, landlock_net;	/* what it handles (both, but under a mutant) */
	uint64_t fs_handled;		/* the file accesses this ABI's rulesets know */
	uint64_t scoped;		/* abstract sockets and signals, from ABI 6 */
	int probe_port;			/* a TCP port the ruleset refuses to connect to */
	bool seccomp;			/* load the filter (always, but under a mutant); proven */
	bool unix_closed;		/* keeps the engine's uid: socket(AF_UNIX) refused; proven */
	bool prove;			/* check before exec (false only under a mutant) */
	bool tied;			/* SIGKILL at the starting thread's end; proven */
	bool tie;			/* set it (always when tied, but under a mutant) */
	bool privileged;
	unsigned long tasks;		/* RLIMIT_NPROC under a session's uid; 0: none set */
	struct sock_fprog prog;		/* the exported filter; filter malloc'd */
	struct mcp_confine_receipt receipt;
};

/*
 * The test build's switch KIND_WHAT ("upstream_no_seccomp"; the parser's
 * spawn has its own, "parser_spawn_no_seccomp"); false in the shipped build.
 */
static inline bool
confine_mutant(const struct mcp_confine *cf, const char *what)
{
#ifdef AIRLOCK_MUTANTS
	char name[64];

	snprintf(name, sizeof name, "%s_%s", cf->kind, what);
	return mutant(name);
#else
	(void)cf;
	(void)what;
	return false;
#endif
}

/* mcp_landlock.c: the ruleset, created and filled in the parent. */
int mcp_landlock_prepare(struct mcp_confine *cf, const struct mcp_confine_config *cfg,
			 const struct strv *argv, struct al_err *err);
/* In the child. 0, or -1 with errno. */
int mcp_landlock_restrict(int ruleset_fd);

/*
 * mcp_confine.c, in a child between fork and exec (system calls only):
 * every capability set to zero, ambient ones too (root keeps them across
 * a change of uid otherwise, and so does an engine that is not root:
 * 0, or -1); whether any is left, effective or permitted.
 */
int mcp_caps_drop(void);
bool mcp_caps_left(void);

/* mcp_seccomp.c: the filter, built with libseccomp and exported as BPF. */
int mcp_seccomp_prepare(struct mcp_confine *cf, const struct mcp_confine_config *cfg,
			struct al_err *err);

#endif
