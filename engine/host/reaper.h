#ifndef AIRLOCK_REAPER_H
#define AIRLOCK_REAPER_H

/*
 * The orphan reaper: containers labelled as airlock's whose owner is gone
 * (another boot, a dead pid, or a pid reused by another process — the
 * owner's start time no longer matches) are stopped and removed. A
 * container whose owner is alive is left alone. Run at supervisor start-up
 * and by `airlock reap`.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "docker.h"
#include "err.h"

struct reap_report {
	size_t found;		/* airlock containers listed */
	size_t reaped;		/* stopped and removed */
	size_t kept;		/* owner alive */
	size_t failed;		/* could not be removed */
};

/*
 * Is the owner named by these labels (io.airlock.owner-pid, -start, -boot)
 * gone? Pure apart from reading /proc for the pid's start time; a container
 * with missing or malformed owner labels is treated as orphaned.
 */
bool reaper_owner_gone(const json_t *labels, const char *this_boot_id);

int reaper_run(struct docker *d, struct reap_report *out, struct al_err *err);

/* What became of one container of ours. */
enum reap_fate {
	REAP_REAPED,		/* stopped and removed */
	REAP_KEPT,		/* its owner (or its session) is alive */
	REAP_FAILED,		/* could not be removed */
};

/* "reaped", "kept", "failed". */
const char *reap_fate_name(enum reap_fate f);

/*
 * Told of each container of ours as it is settled: its id and the session
 * on its io.airlock.session label ("" when it has none).
 */
typedef void (*reap_seen_fn)(void *ctx, const char *container, const char *session,
			     enum reap_fate fate);

/* reaper_run, telling seen (with ctx) of each container. */
int reaper_run_seen(struct docker *d, struct reap_report *out, reap_seen_fn seen, void *ctx,
		    struct al_err *err);

/*
 * A session still running, by the id on its container's io.airlock.session
 * label: its container is left alone.
 */
typedef bool (*reaper_live_fn)(const char *session_id, void *ctx);

/*
 * This process's own leftovers: containers whose owner labels name this
 * very process (pid, start time, boot) and whose session is not live are
 * stopped and removed. A supervisor runs it when a session's cleanup could
 * not remove its container (the daemon was gone), until the daemon answers
 * again. Same returns as reaper_run; kept counts the live sessions' ones.
 */
int reaper_sweep_own(struct docker *d, reaper_live_fn live, void *ctx,
		     struct reap_report *out, struct al_err *err);

#endif
