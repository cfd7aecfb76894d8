#ifndef AIRLOCK_UPSTREAM_RELAY_H
#define AIRLOCK_UPSTREAM_RELAY_H

/*
 * An upstream container's stdio as three plain descriptors, so the MCP
 * client (mcp_start_fds) talks to it as it talks to a spawned process.
 * A thread of its own carries the bytes: what is written to fds[0] goes to
 * the container's stdin over the Docker attach stream (EOF there
 * half-closes the stream's stdin), the stream's stdout frames come out of
 * fds[1] in order, its stderr out of fds[2] (dropped when the reader is
 * behind: the client only counts it). The thread never looks at the
 * bytes, logs nothing and ends when the stream ends (fds[1] then reads
 * EOF), when the client closes fds[1], or at upstream_relay_stop.
 *
 * Bounded: at most UPSTREAM_RELAY_OUT_MAX stdout bytes wait for the
 * client; the stream is not read past that. A write to the container
 * that does not finish within UPSTREAM_RELAY_WRITE_MS loses the stream.
 */

#include "docker.h"
#include "err.h"

#define UPSTREAM_RELAY_OUT_MAX		(8 << 20)
#define UPSTREAM_RELAY_WRITE_MS		10000

struct upstream_relay;

/*
 * Start carrying stream a (borrowed: it must outlive the relay; nothing
 * else may read or write it meanwhile). fds get the client's ends, which
 * the caller owns from then on.
 */
int upstream_relay_start(struct docker_attach *a, struct upstream_relay **out, int fds[3],
			 struct al_err *err);

/* Stop the thread, join it, close the relay's ends. Safe with NULL. */
void upstream_relay_stop(struct upstream_relay *r);

#endif
