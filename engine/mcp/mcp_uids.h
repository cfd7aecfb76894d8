#ifndef AIRLOCK_MCP_UIDS_H
#define AIRLOCK_MCP_UIDS_H

/*
 * A uid of its own for each session's upstreams (docs/guarantees.md,
 * "Upstream confinement"). With one uid shared by every session, the uid
 * alone let one session's upstream reach another's: chmod, utime and
 * xattrs on its files, its pathname sockets, per-uid quotas, and its
 * process count: a fork bomb held by RLIMIT_NPROC starved every session,
 * and one not held used up the service's tasks.
 *
 * The uids are the range /etc/subuid delegates to airlock-upstream
 * (scripts/setup writes one; libsubid reads it) but its first, which the
 * sweeps below keep as their real uid (so no session's process may
 * signal them, nor their kill reach anything else); the group stays
 * airlock-upstream's (paths.rw is granted to it). A uid is held by a lock
 * on its file in MCP_UIDS_DIR, so no two sessions of one host, in one
 * engine or two, hold the same; an engine that dies lets its locks go.
 * The session that gives a uid back kills every process still running
 * under it (a child that left its upstream's process group, were the
 * filter's setsid refusal ever passed, ends with its session) and marks
 * its lock file swept; a uid not so marked (its engine died holding it)
 * is swept by the next taker before use. Each upstream
 * started under it gets RLIMIT_NPROC MCP_UPSTREAM_TASKS: the session's
 * upstreams together hold at most that many tasks, threads included.
 */

#include <sys/types.h>

#include "err.h"
#include "mcp_confine.h"	/* MCP_CONFINE_USER, MCP_UPSTREAM_TASKS */

#define MCP_UIDS_OWNER		MCP_CONFINE_USER
#define MCP_UIDS_DIR		"/run/airlock/upstream-uids"

struct mcp_uid {
	uid_t uid;		/* 0: none held */
	int lock_fd;
};

/* The range delegated: 0 with its first uid and count, or -1 when none is. */
int mcp_uids_delegated(unsigned long *first, unsigned long *count);

/*
 * Take a free one into u (which must hold none): 0, or -1 with err: none
 * delegated ("no uids are delegated to airlock-upstream in /etc/subuid:
 * run scripts/setup"), all held, or the lock directory.
 */
int mcp_uid_take(struct mcp_uid *u, struct al_err *err);

/* Every process under it killed, then the lock let go; u holds none after. */
void mcp_uid_give_back(struct mcp_uid *u);

/*
 * Kill every process running as uid, a session's uid of the range (from
 * a child that signals all it may as that uid, until none answers): 0, or
 * -1 when uid is not a session's (root, any other, the sweeps' own), that
 * child could not be made or some still ran after it.
 */
int mcp_uid_kill_all(uid_t uid);

#endif
