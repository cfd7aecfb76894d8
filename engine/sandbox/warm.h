#ifndef AIRLOCK_WARM_H
#define AIRLOCK_WARM_H

/*
 * One pooled container (docs/guarantees.md, "Pooled sessions"): launched
 * ahead of any session exactly as a session launches one — preflight,
 * create with the hardened profile, first admission, the watchdog, attach
 * and start, the lease armed — and then left waiting: its agent has been
 * given no byte. A session that claims it takes its parts and runs the
 * second admission before any data enters (engine/session/session.c).
 *
 * Threads: warm_launch and warm_discard on any one thread; the lease's
 * pulse thread calls back into it (its failure is recorded, and forwarded
 * to the session once one has claimed it).
 */

#include <stdbool.h>
#include <stdint.h>

#include "container.h"
#include "docker.h"
#include "err.h"
#include "profile.h"
#include "watchdog.h"

struct parser;

struct warm;

struct warm_options {
	const struct profile *profile;
	const char *docker_host;	/* DOCKER_HOST, or NULL */
	const char *watchdog_exe;	/* the airlock binary (NULL: this one) */
	const char *label;		/* its io.airlock.session label */
};

/*
 * Launch one. On any refusal or failure everything it made is stopped and
 * removed again, *out is NULL and err says which step (fixed text, names,
 * the daemon's message).
 */
int warm_launch(const struct warm_options *o, struct warm **out, struct al_err *err);

/*
 * Its lease is armed, has not failed, and the watchdog acknowledged within
 * LEASE_ACK_MS: the same bound the lease itself enforces.
 */
bool warm_lease_ok(struct warm *w);
const char *warm_container_id(const struct warm *w);
const char *warm_label(const struct warm *w);

/* What a claiming session takes over: it then stops, removes and closes them. */
struct warm_parts {
	struct docker *docker;
	struct container *box;
	struct lease *lease;
	const struct host_facts *facts;
	const char *socket;
};
void warm_parts(struct warm *w, struct warm_parts *out);

/*
 * The parser of agent lines (engine/privsep/parser.h) started while the
 * container was pooled, for frames up to BOUND_FRAME_MAX, so a claim does
 * not wait for one; NULL when it did not start (the session starts its
 * own, and says why when that fails too). The caller's from now on.
 */
struct parser *warm_take_parser(struct warm *w);

/*
 * Lease failures go to fn(ctx, reason) from now on, at once when it has
 * failed already; NULL: back to the warm's own handler, which stops the
 * container itself.
 */
void warm_forward(struct warm *w, lease_fail_fn fn, void *ctx);

/* Stop and remove the container, close the lease, free it all. NULL is fine. */
void warm_discard(struct warm *w);
/* Free what is left once a session took the parts and closed them itself. */
void warm_release(struct warm *w);

#endif
