#include "pool.h"

#include <string.h>

#include <jansson.h>

int
pool_key(const struct profile *p, char out[POOL_KEY_LEN + 1])
{
	struct owner_labels none;
	json_t *body, *sealed;
	size_t i;
	int rc = -1;

	memset(&none, 0, sizeof none);
	body = profile_create_body(p, &none);
	sealed = json_array();
	for (i = 0; sealed && i < p->sealed.n; i++)
		if (json_array_append_new(sealed, json_string(p->sealed.v[i])) < 0)
			goto out;
	if (body && sealed && json_object_set(body, "airlock.sealed", sealed) == 0)
		rc = hash_json_canonical(body, out);
out:
	json_decref(sealed);
	json_decref(body);
	return rc < 0 ? -1 : 0;
}

const char *
pool_verdict_id(enum pool_verdict v)
{
	switch (v) {
	case POOL_KEEP:
		return "keep";
	case POOL_DISCARD_AGED:
		return "aged";
	case POOL_DISCARD_LEASE:
		return "lease_failed";
	case POOL_DISCARD_EXITED:
		return "exited";
	}
	return "unknown";
}

enum pool_verdict
pool_judge(const struct pool_entry *e, int64_t now_ms, int64_t max_age_ms)
{
	if (e->state != POOL_READY)
		return POOL_KEEP;
	if (e->lease_failed)
		return POOL_DISCARD_LEASE;
	if (e->exited)
		return POOL_DISCARD_EXITED;
	if (now_ms - e->ready_ms >= max_age_ms)
		return POOL_DISCARD_AGED;
	return POOL_KEEP;
}

int
pool_pick(const struct pool_entry *e, size_t n, int64_t now_ms, int64_t max_age_ms)
{
	int best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (e[i].state != POOL_READY || pool_judge(&e[i], now_ms, max_age_ms) != POOL_KEEP)
			continue;
		if (best < 0 || e[i].ready_ms < e[best].ready_ms)
			best = (int)i;
	}
	return best;
}

size_t
pool_count(const struct pool_entry *e, size_t n, enum pool_state state)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += e[i].state == state;
	return k;
}

size_t
pool_to_warm(const struct pool_entry *e, size_t n, size_t size)
{
	size_t have = pool_count(e, n, POOL_READY) + pool_count(e, n, POOL_WARMING);
	size_t empty = pool_count(e, n, POOL_EMPTY);
	size_t want = have >= size ? 0 : size - have;

	return want < empty ? want : empty;
}
