#include "admission_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jpath.h"

/* --- ulimits --------------------------------------------------------- */

/* One Ulimits entry; false when it is malformed. */
static bool
ulimit_entry(const json_t *e, const char **name, json_int_t *soft, json_int_t *hard)
{
	const json_t *n = json_object_get(e, "Name");
	const json_t *s = json_object_get(e, "Soft");
	const json_t *h = json_object_get(e, "Hard");

	if (!jpath_clean_string(n) || !json_is_integer(s) || !json_is_integer(h))
		return false;
	*name = json_string_value(n);
	*soft = json_integer_value(s);
	*hard = json_integer_value(h);
	return true;
}

/*
 * Entry i of a Ulimits array; false past its end, or at a malformed entry
 * with v refused (the first verdict stands: what the caller observes after
 * that changes nothing).
 */
static bool
ulimit_read(const json_t *arr, size_t i, const char **name, json_int_t *soft,
	    json_int_t *hard, struct verdict *v)
{
	if (i >= json_array_size(arr))
		return false;
	if (ulimit_entry(json_array_get(arr, i), name, soft, hard))
		return true;
	verdict_observe(v, false, "wrong type");
	return false;
}

static const json_t *
need_ulimits(const struct ctx *x, const char *path, struct verdict *v)
{
	const json_t *j = jpath_need(x->c, path, v);

	if (j && !json_is_array(j) && !json_is_null(j)) {
		verdict_observe(v, false, "wrong type");
		return NULL;
	}
	return j;
}

/* Core dumps could carry the agent's memory out to the host. */
void
admission_judge_ulimit_core(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *arr = need_ulimits(x, k->path, v);
	json_int_t soft, hard, csoft = -1, chard = -1;
	const char *name;
	size_t i, cores = 0;

	verdict_expect(v, "core 0/0");
	if (!arr)
		return;
	for (i = 0; ulimit_read(arr, i, &name, &soft, &hard, v); i++)
		if (strcmp(name, "core") == 0) {
			cores++;
			csoft = soft;
			chard = hard;
		}
	if (cores != 1)
		verdict_observe(v, false, "%zu core entries", cores);
	verdict_observe(v, csoft == 0 && chard == 0, "core %lld/%lld",
			(long long)csoft, (long long)chard);
}

/*
 * The ulimits the profile sets besides core: name, soft = hard value, and
 * whether its absence is this check's to refuse (nproc's is ulimit_nproc's).
 */
struct configured_ulimit {
	const char *name;
	json_int_t value;
	bool required;
};

static size_t
configured_ulimits(const struct profile *p, struct configured_ulimit out[2])
{
	size_t n = 0;

	if (p->nofile > 0)
		out[n++] = (struct configured_ulimit){ "nofile", p->nofile, true };
	if (p->nproc > 0)
		out[n++] = (struct configured_ulimit){ "nproc", p->nproc, false };
	return n;
}

/* Index of the configured entry NAME, or -1 (and v refused) when it is not one or differs. */
static int
ulimit_allowed(const struct configured_ulimit *want, size_t n, const char *name,
	       json_int_t soft, json_int_t hard, struct verdict *v)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(name, want[i].name) != 0)
			continue;
		if (soft != want[i].value || hard != want[i].value) {
			verdict_observe(v, false, "%s %lld/%lld", want[i].name,
					(long long)soft, (long long)hard);
			return -1;
		}
		return (int)i;
	}
	verdict_observe(v, false, "unexpected %.48s", name);
	return -1;
}

void
admission_judge_ulimits_other(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *arr = need_ulimits(x, k->path, v);
	struct configured_ulimit want[2];
	size_t i, j, n = configured_ulimits(x->p, want), seen[2] = { 0, 0 };
	json_int_t soft, hard;
	const char *name;
	char text[96];
	int at, len = snprintf(text, sizeof text, "core");

	for (j = 0; j < n; j++)
		len += snprintf(text + len, sizeof text - (size_t)len, ", %s %lld/%lld", want[j].name,
				(long long)want[j].value, (long long)want[j].value);
	verdict_expect(v, "%s", n ? text : "core only");
	if (!arr)
		return;
	for (i = 0; ulimit_read(arr, i, &name, &soft, &hard, v); i++) {
		if (strcmp(name, "core") == 0)
			continue;
		if ((at = ulimit_allowed(want, n, name, soft, hard, v)) < 0)
			return;
		seen[at]++;
	}
	for (j = 0; j < n; j++)
		if (seen[j] > 1 || (seen[j] == 0 && want[j].required)) {
			verdict_observe(v, false, "%zu %s entries", seen[j], want[j].name);
			return;
		}
	verdict_observe(v, true, "%s", n ? text : "core only");
}

/*
 * Under runsc the pids cgroup counts gVisor's threads, and a fork bomb that
 * reaches it ends the sandbox: the agent's processes must be bounded inside
 * it, by the nproc ulimit (profile.h, PROFILE_NPROC_RUNSC).
 */
void
admission_judge_ulimit_nproc(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *arr, *e;
	json_int_t soft, hard, n = x->p->nproc;
	const char *name;
	size_t i, found = 0;

	if (strcmp(x->p->runtime, "runsc") == 0)
		verdict_expect(v, "nproc %lld/%lld", (long long)n, (long long)n);
	else
		verdict_expect(v, "runsc only");
	if (!jpath_optional(x->c, k->path, v))
		return;
	if (strcmp(x->p->runtime, "runsc") != 0) {
		verdict_observe(v, true, "%s: not needed", verdict_shown(x->p->runtime));
		return;
	}
	if (!(arr = need_ulimits(x, k->path, v)))
		return;
	json_array_foreach(arr, i, e)
		if (ulimit_entry(e, &name, &soft, &hard) && strcmp(name, "nproc") == 0 &&
		    soft == n && hard == n && n > 0)
			found++;
	verdict_observe(v, found == 1, found == 1 ? "nproc %lld/%lld" : "no nproc %lld/%lld entry",
		(long long)n, (long long)n);
}

/* --- resources ------------------------------------------------------- */

/*
 * A limit that must be set (null, 0 and negative mean unlimited to
 * Docker), within the clamp and exactly the configured value.
 */
static void
judge_limit(struct verdict *v, const json_t *j, int64_t want, int64_t max)
{
	json_int_t n;

	if (json_is_null(j))
		verdict_observe(v, false, "null (unlimited)");
	else if (j && !json_is_integer(j))
		verdict_observe(v, false, "wrong type");
	if (!json_is_integer(j))
		return;
	n = json_integer_value(j);
	if (n <= 0)
		verdict_observe(v, false, "%lld (unlimited)", (long long)n);
	if (n > max)
		verdict_observe(v, false, "%lld (past the clamp %lld)",
				(long long)n, (long long)max);
	verdict_observe(v, n == want, "%lld", (long long)n);
}


void
admission_judge_pids_limit(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	verdict_expect(v, "%lld", (long long)x->p->pids_limit);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->pids_limit, PROFILE_PIDS_MAX);
}

void
admission_judge_memory(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	verdict_expect(v, "%lld", (long long)x->p->memory);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->memory, PROFILE_MEMORY_MAX);
}

/* Unless MemorySwap equals Memory, Docker grants as much again as swap. */
void
admission_judge_memory_swap(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	json_int_t swap, mem;

	verdict_expect(v, "equal to Memory");
	if (!jpath_need_int(x->c, k->path, v, &swap) ||
	    !jpath_need_int(x->c, "HostConfig.Memory", v, &mem))
		return;
	verdict_observe(v, swap == mem, "%lld (Memory %lld)", (long long)swap, (long long)mem);
}

void
admission_judge_nano_cpus(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	int64_t max = INT64_MAX;

	if (x->host && x->host->cores > 0)
		max = (int64_t)x->host->cores * 1000000000LL;
	verdict_expect(v, "%lld", (long long)x->p->nano_cpus);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->nano_cpus, max);
}
