#ifndef AIRLOCK_UPSTREAM_BOX_H
#define AIRLOCK_UPSTREAM_BOX_H

/*
 * An upstream in a container of its own ("isolation": "container",
 * docs/operations.md): the agent container's life (engine/sandbox/container.h)
 * for an MCP server. The session's hardened profile with the upstream's
 * image (an immutable local ID), argv as its Entrypoint and env as its
 * environment allowlist; created, admitted (the same checker, the same
 * profile it was created from), its lease armed (a watchdog of its own that
 * stops it when the engine dies), attached and started, admitted again;
 * only then does its stdio reach the MCP client, over three descriptors a
 * relay thread carries to and from the attach stream (upstream_relay.h).
 * No network: the profile has none, and admission refuses one.
 *
 * upstream_box_stop stops and removes it and proves it gone, on every
 * path; a refused or failed start has already done so.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "admission.h"
#include "checks.h"
#include "config.h"
#include "err.h"
#include "profile.h"

/* What a container upstream takes from its session (all borrowed). */
struct upstream_host {
	const char *socket;		/* the daemon's unix socket */
	const struct profile *profile;	/* the session's hardened profile */
	const struct host_facts *facts;	/* the preflight's */
	const char *watchdog_exe;	/* lease_spawn's exe (NULL: /proc/self/exe) */
	const char *session_id;		/* its label io.airlock.session */
	/*
	 * Called with each upstream process started here (it leads its own
	 * group): the session's lease has the watchdog guard the group
	 * (watchdog.h, lease_guard). NULL: nothing.
	 */
	void (*spawned)(void *ctx, pid_t pid);
	void *spawned_ctx;
};

/* An admission report of the upstream's container: phase "first" or "second". */
typedef void (*upstream_report_fn)(void *ctx, const char *upstream, const char *container_id,
				   const char *phase, const struct check_list *report);

struct upstream_box;

/*
 * Create, admit, lease, attach, start, readmit, relay. fds get the MCP
 * client's ends (its stdin, stdout, stderr) for mcp_start_fds. Fails with
 * "upstream NAME: …" (fixed text, the daemon's message, a check id); the
 * container is gone then.
 */
int upstream_box_start(const struct upstream_host *h, const struct upstream_config *u,
		       upstream_report_fn report, void *ctx, struct upstream_box **out,
		       int fds[3], struct al_err *err);

/* Its container's full ID, its image and the profile it runs under. */
const char *upstream_box_id(const struct upstream_box *b);
const struct profile *upstream_box_profile(const struct upstream_box *b);

/*
 * Stop the relay, stop and remove the container, look it up gone, end the
 * lease. -1 (err set) when the container may be left; the lease's watchdog
 * has stopped it then. Safe with NULL.
 */
int upstream_box_stop(struct upstream_box *b, struct al_err *err);

#endif
