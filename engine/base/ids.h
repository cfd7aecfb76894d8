#ifndef AIRLOCK_IDS_H
#define AIRLOCK_IDS_H

/* Identifiers the engine generates: a fixed prefix and random hex. */

#include <stdbool.h>
#include <stddef.h>

#define ID_MAX		40	/* a session or call id: prefix + hex digits, NUL */

/*
 * prefix followed by 2 * bytes lowercase hex digits from the kernel's
 * CSPRNG. Returns 0, or -1 (out untouched past a NUL) when randomness is
 * unavailable or out (cap bytes) is too small.
 */
int id_random(char *out, size_t cap, const char *prefix, size_t bytes);

/*
 * The two halves of id_random, for a caller that makes several ids from
 * one draw: n random bytes from the kernel (0, or -1 when there are none),
 * then prefix and 2 * bytes hex digits of raw (0, or -1 when out is too
 * small; out is then "").
 */
int id_draw(void *raw, size_t n);
int id_hex(char *out, size_t cap, const char *prefix, const void *raw, size_t bytes);

/*
 * A session id as an operator types it (docs/operations.md): the whole id,
 * or any prefix of it that names one session, with or without the "s-"
 * every session id starts with (the console shows "3f9a1c02" for
 * "s-3f9a1c02…"). Pure: offer each candidate, then ask for the pick.
 */
#define ID_SESSION_PREFIX	"s-"

struct id_pick {
	const char *typed;	/* what the operator typed; "" matches nothing */
	size_t matches;		/* candidates it is a prefix of */
	size_t at;		/* the (last) one's index */
	bool exact;		/* a candidate is the whole id typed: it wins */
};

void id_pick_init(struct id_pick *k, const char *typed);
/* Candidate i, a session id. */
void id_pick_offer(struct id_pick *k, const char *id, size_t i);
/*
 * 0 with k->at the one session meant; -1 with why (fixed words and the
 * text typed): "no session id starts with 'x'" or "ambiguous session id
 * prefix 'x': N sessions match".
 */
int id_pick_done(const struct id_pick *k, char *why, size_t cap);

#endif
