#ifndef AIRLOCK_POOL_H
#define AIRLOCK_POOL_H

/*
 * The warm pool's pure part (docs/guarantees.md, "Pooled sessions"): the
 * key that says which sessions a pooled container may serve, and the
 * bookkeeping that says which entry a claim takes, which are discarded,
 * and how many to warm. Plain data in and out: no thread, no socket. The
 * orchestration (warming, the lease, discarding) is in
 * engine/supervisor/supervisor_pool.c and engine/warm.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "profile.h"

#define POOL_KEY_LEN	HASH_HEX_LEN

/*
 * Everything that shapes the container and its admission: the create body
 * the profile renders (image, user, argv, env, limits, runtime, tmpfs)
 * with empty owner labels, and the sealed paths admission reads. Two
 * configs with the same key get the same container, so a container warmed
 * for one may serve the other. Hex SHA-256; -1 when out of memory.
 */
int pool_key(const struct profile *p, char out[POOL_KEY_LEN + 1]);

enum pool_state {
	POOL_EMPTY,	/* no container */
	POOL_WARMING,	/* being created, admitted, started, leased */
	POOL_READY,	/* waiting for a claim */
};

/* What the bookkeeping knows of one entry. */
struct pool_entry {
	enum pool_state state;
	int64_t ready_ms;	/* monotonic: when it became ready */
	bool lease_failed;	/* its lease reported a failure */
	bool exited;		/* the daemon reports it not running */
};

enum pool_verdict {
	POOL_KEEP,
	POOL_DISCARD_AGED,	/* ready past max_age_ms */
	POOL_DISCARD_LEASE,	/* its lease failed */
	POOL_DISCARD_EXITED,	/* the agent exited before any claim */
};

/* A word for a verdict: "keep", "aged", "lease_failed", "exited". */
const char *pool_verdict_id(enum pool_verdict v);

/* Keep a ready entry, or why not. Entries that are not ready are kept. */
enum pool_verdict pool_judge(const struct pool_entry *e, int64_t now_ms, int64_t max_age_ms);

/*
 * The entry a claim takes: the oldest ready one that pool_judge keeps
 * (the oldest ages out first), or -1 when there is none.
 */
int pool_pick(const struct pool_entry *e, size_t n, int64_t now_ms, int64_t max_age_ms);

/* Entries to start warming now: size less those ready or warming, never below 0. */
size_t pool_to_warm(const struct pool_entry *e, size_t n, size_t size);

/* Entries in a state. */
size_t pool_count(const struct pool_entry *e, size_t n, enum pool_state state);

#endif
