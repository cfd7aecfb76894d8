#ifndef AIRLOCK_CONTAINER_H
#define AIRLOCK_CONTAINER_H

/*
 * One confined container's life, in the order docs/architecture.md §2 gives it:
 *
 *   container_create_admit   create with the hardened profile, then the
 *                            first admission (nothing started yet)
 *   container_attach_start   attach the stdio stream, then start
 *   (the caller arms the watchdog here)
 *   container_readmit        the second admission; only after it may data
 *                            enter (a pooled container's launch records
 *                            its process first: container_record_start)
 *   container_cleanup        stop (t=0) even when the stream died first
 *                            (unless the daemon already reported its exit),
 *                            remove with its volumes, then one look-up of
 *                            the ID to prove it is gone
 *
 * A refusal or failure at any step leaves the struct ready for cleanup,
 * which is always safe to call (and idempotent). These are the container
 * operations a session uses; Docker is the only backend today.
 */

#include <stdbool.h>

#include "admission.h"
#include "checks.h"
#include "docker.h"
#include "err.h"
#include "profile.h"

struct container;

/*
 * A container not yet created; d and socket_path are borrowed (d used by
 * one thread; attach opens its own connection to socket_path). NULL when
 * out of memory.
 */
struct container *container_new(struct docker *d, const char *socket_path);

int container_create_admit(struct container *c, const struct profile *p,
			   const struct owner_labels *who, const struct host_facts *host,
			   struct al_err *err);
/* container_create_admit in two steps, for a caller that needs host facts late. */
int container_create(struct container *c, const struct profile *p,
		     const struct owner_labels *who, struct al_err *err);
int container_admit_first(struct container *c, const struct profile *p,
			  const struct host_facts *host, struct al_err *err);
int container_attach_start(struct container *c, struct al_err *err);
int container_readmit(struct container *c, const struct profile *p,
		      const struct host_facts *host, struct al_err *err);
/*
 * Once started: read its process (State.Pid and StartedAt) for the second
 * admission to compare with (admission.h, ADMISSION_PROCESS). A pooled
 * container's launch does it, so its claim tells the process started then
 * from one started since. -1 when it runs none.
 */
int container_record_start(struct container *c, struct al_err *err);

/*
 * The daemon's wait endpoint (condition not-running), bounded by
 * timeout_ms: 0 with *code set when it exited (and, for a non-zero
 * status, its OOMKilled flag read from its state), 1 when it still runs at the
 * deadline, -1 on error.
 */
int container_wait_exit(struct container *c, int timeout_ms, long *code, struct al_err *err);

/* Stop, read the exit evidence, remove, look up. Returns -1 if anything is left. */
int container_cleanup(struct container *c, struct al_err *err);
/* Closes the stream (never stops or removes: that is cleanup). NULL is fine. */
void container_free(struct container *c);

/* Its ID once created, else "". */
const char *container_id(const struct container *c);
/* The attached stdio stream once container_attach_start opened it, else NULL. */
struct docker_attach *container_stream(const struct container *c);
/* The admission report of phase 1 (first) or 2 (second); empty until run. */
const struct check_list *container_report(const struct container *c, int phase);
/* Frees both reports once recorded elsewhere; they read as empty after. */
void container_reports_drop(struct container *c);

/* What became of it. A NULL container reads as one never created. */
enum container_fact {
	CONTAINER_CREATED,
	CONTAINER_STARTED,
	CONTAINER_EXITED,	/* the daemon's wait saw it exit */
	CONTAINER_REMOVED,	/* and proven gone */
	CONTAINER_OOM_KILLED,	/* evidence read at its exit (wait) or cleanup */
};

bool container_is(const struct container *c, enum container_fact f);
/* Evidence read at its exit (wait) or cleanup: -1 when unknown. */
long container_exit_code(const struct container *c);

/*
 * Inspect id and its image, and run the admission checker into report.
 * With profile.sealed set, the image's files are read and judged too
 * (engine/sandbox/sealed_image.h). Not an admission: its process is judged
 * at ADMISSION_PHASE_ANY (created, or running).
 */
int container_admit(struct docker *d, const char *id, const struct profile *p,
		    const struct host_facts *host, struct check_list *report,
		    struct al_err *err);

#endif
