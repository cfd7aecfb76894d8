#ifndef AIRLOCK_QUARANTINE_H
#define AIRLOCK_QUARANTINE_H

/*
 * Quarantine (issue 43, item 3), the pure part: which sessions
 * `ctl quarantine --called TOOL --within D` picks, and the words a
 * quarantined session's pause is shown with. The state itself lives in
 * each session's gate (gate_set_quarantined) and in the supervisor
 * (supervisor_quarantine.c).
 *
 * The window: each session's gateway keeps, per catalog tool, the
 * monotonic time of the latest call of it the gateway decided (allowed
 * or denied, by the gate or after it: every request that named an alias
 * of the tool). A session called TOOL within D when that time is at most
 * D before now. A session that never called it (0) never matches. A
 * session whose call of it waits on a hold now called it now (the
 * supervisor asks its board of held calls: the row's counters are
 * published after the call's decision).
 */

#include <stdbool.h>
#include <stdint.h>

#define QUARANTINE_WITHIN_DEFAULT_S	600	/* --within, when not given: 10m */

/* What became of the pause of a quarantined session's container. */
enum quarantine_pause {
	QUARANTINE_PAUSE_NONE,		/* not quarantined */
	QUARANTINE_PAUSE_WAITING,	/* no running container yet: paused once it runs */
	QUARANTINE_PAUSE_PAUSING,	/* asked of the daemon */
	QUARANTINE_PAUSE_PAUSED,	/* the daemon paused it */
	QUARANTINE_PAUSE_FAILED,	/* the daemon refused or did not answer: the
					   gate still denies every call (fail closed) */
	QUARANTINE_PAUSE_COUNT
};

/* "", "waiting", "pausing", "paused", "pause failed". */
const char *quarantine_pause_word(enum quarantine_pause p);

/* last_ms: the latest call's monotonic ms (0: never); within_ms > 0. */
bool quarantine_called_within(int64_t last_ms, int64_t now_ms, int64_t within_ms);

#endif
