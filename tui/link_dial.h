#ifndef AIRLOCK_LINK_DIAL_H
#define AIRLOCK_LINK_DIAL_H

/*
 * Reaching an engine for link_remote.c: a socket path, or
 * ssh://[user@]host[:port][/socket], whose far side is `airlock ctl
 * --stdio` (docs/console.md, "Attaching to running engines").
 */

#include <stddef.h>
#include <sys/types.h>

#include "snapshot.h"

struct link_target {
	char path[SNAP_SOCKET_MAX];	/* the socket, here or on the ssh host; "" the default */
	char ssh_dest[128];		/* [user@]host; "" for a socket here */
	char ssh_port[8];		/* "" for ssh's own */
};

/* 0, or -1 with *why a fixed text: no host, a port that is no number, a path too long. */
int link_target_parse(const char *target, struct link_target *t, const char **why);

/*
 * A connected stream to the engine (close-on-exec), and *pid the ssh
 * process behind it (-1 for a socket), or -1 with why. $AIRLOCK_SSH
 * replaces "ssh" (words split at blanks), $AIRLOCK_REMOTE the far side's
 * "airlock".
 */
int link_dial(const struct link_target *t, pid_t *pid, char *why, size_t cap);

#endif
