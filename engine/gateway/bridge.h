#ifndef AIRLOCK_BRIDGE_H
#define AIRLOCK_BRIDGE_H

/*
 * The agent's one channel (docs/protocol.md): newline-delimited JSON over
 * the container's attached stdio, step 6 of a session (docs/architecture.md
 * §2). The bridge reads stdout into bounded lines, hands each line to the
 * gateway and writes the reply back; stderr is drained and only counted.
 *
 * It never ends the session itself: how it stopped, and what it counted,
 * come back as a bridge_report, which the session turns into its end and
 * its summary. The session keeps its own reasons to stop (deadline,
 * operator, lease) and calls bridge_step between its checks.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "container.h"
#include "gateway.h"
#include "snapshot.h"

struct bridge;

struct bridge_options {
	struct container *box;		/* attached, started, admitted; borrowed */
	struct gateway *gw;		/* borrowed */
	const struct config_bounds *bounds;
	const char *runtime;		/* the profile's: runsc names a sandbox death */
	int64_t deadline_ms;		/* the session's end, on the monotonic clock */
	/* After each reply is written, or failed to be: a moment to publish. */
	void (*replied)(void *ctx);	/* may be NULL */
	void *ctx;
};

/* What the bridge has done so far; once ended, why (the first cause wins). */
struct bridge_report {
	bool ended;
	enum session_end end;
	char reason[SNAP_REASON_MAX];	/* "" or fixed text and numbers: never agent bytes */
	uint64_t stdout_bytes, stderr_bytes;
};

/* NULL when out of memory. */
struct bridge *bridge_open(const struct bridge_options *o);

/* Write one whole line to the agent before the deadline; -1 ends the bridge. */
int bridge_write(struct bridge *b, const char *line, size_t len);
/* The session's end moved (a quarantine's time given back): writes are bounded by it. */
void bridge_set_deadline(struct bridge *b, int64_t deadline_ms);

/*
 * Wait up to wait_ms for the agent's output, read what came and answer
 * each complete line. Returns false once the bridge has ended.
 */
bool bridge_step(struct bridge *b, int wait_ms);

const struct bridge_report *bridge_report(const struct bridge *b);
/* The session's end moved ms later: a held call's wait does not count against it. */
void bridge_extend(struct bridge *b, int64_t ms);

/* Frees the bridge; the container and its stream stay the caller's. */
void bridge_close(struct bridge *b);

#endif
