#include "admission.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jpath.h"
#include "verdict.h"

/*
 * Every lookup goes through jpath.h, so a missing key, a parent of the
 * wrong type or a NULL document all end in a refusal with observed
 * "missing" or "wrong type", never in a crash.
 */

#define WALK_DEPTH_MAX	64	/* docker.sock search: deeper nesting refuses */
#define ENV_MAX		1024	/* more variables than this refuses (quadratic compare) */
#define ARGV_MAX	4096	/* likewise for an Entrypoint or Cmd */

static const char *const check_ids[] = {
#define ADMISSION_ID(e, id, help) id,
	ADMISSION_CHECKS(ADMISSION_ID)
#undef ADMISSION_ID
};

static const char *const check_helps[] = {
#define ADMISSION_HELP(e, id, help) help,
	ADMISSION_CHECKS(ADMISSION_HELP)
#undef ADMISSION_HELP
};

_Static_assert(sizeof check_ids / sizeof check_ids[0] == ADMISSION_CHECK_COUNT,
	       "one id per check");

const char *
admission_check_id(enum admission_check c)
{
	return (unsigned)c < ADMISSION_CHECK_COUNT ? check_ids[c] : "";
}

const char *
admission_check_help(enum admission_check c)
{
	return (unsigned)c < ADMISSION_CHECK_COUNT ? check_helps[c] : "";
}

struct ctx {
	const json_t *c;	/* the container */
	const json_t *img;	/* its image; may be NULL */
	const struct profile *p;
	const struct host_facts *host;	/* may be NULL */
	const struct sealed_verdict *sealed;	/* may be NULL */
};

struct checker {
	void (*fn)(const struct ctx *x, const struct checker *k, struct verdict *v);
	const char *path;	/* dotted JSON path, for the generic checks */
	const char *want;	/* the value the generic checks expect */
};

/*
 * Values from a hostile image (entrypoint, env names, volume paths) reach
 * the operator's terminal: keep report text to printable ASCII.
 */
static void
make_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

/* null, [] and {} mean "none"; anything else refuses and is shown. */
static void
judge_empty(struct verdict *v, const json_t *j)
{
	if (json_is_null(j))
		verdict_observe(v, true, "null");
	else if (json_is_array(j))
		verdict_observe_json(v, json_array_size(j) == 0, j);
	else if (json_is_object(j))
		verdict_observe_json(v, json_object_size(j) == 0, j);
	else
		verdict_observe(v, false, "wrong type");
}

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

/* --- generic checks, driven by the table's path and want ------------- */

static void
check_string(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *s;

	verdict_expect(v, "%s", verdict_shown(k->want));
	s = jpath_need_str(x->c, k->path, v);
	if (s)
		verdict_observe(v, strcmp(s, k->want) == 0, "%s", verdict_shown(s));
}

static void
check_bool(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	bool b;

	verdict_expect(v, "%s", k->want);
	if (jpath_need_bool(x->c, k->path, v, &b))
		verdict_observe(v, b == (strcmp(k->want, "true") == 0), "%s", b ? "true" : "false");
}

/* A flag Docker omits when false (omitempty): absent reads as false. */
static void
check_flag_set(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;

	verdict_expect(v, "true");
	j = jpath_optional(x->c, k->path, v);
	if (!j)
		return;
	if (json_is_null(j))
		verdict_observe(v, false, "false (absent)");
	else if (!json_is_boolean(j))
		verdict_observe(v, false, "wrong type");
	else
		verdict_observe(v, json_is_true(j), "%s", json_is_true(j) ? "true" : "false");
}

/* The value at k->path in root: absent (omitempty), null or empty. */
static void
expect_empty(const json_t *root, const struct checker *k, struct verdict *v)
{
	const json_t *j;

	verdict_expect(v, "empty");
	j = jpath_optional(root, k->path, v);
	if (j)
		judge_empty(v, j);
}

static void
check_empty(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	expect_empty(x->c, k, v);
}

/* Present, and null or an empty array. */
static void
check_empty_array(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;

	verdict_expect(v, "%s", k->want);
	j = jpath_need(x->c, k->path, v);
	if (j && !json_is_array(j) && !json_is_null(j))
		verdict_observe(v, false, "wrong type");
	else if (j)
		judge_empty(v, j);
}

/* --- image and mounts ------------------------------------------------ */

/* The image reference must be immutable: a tag can be re-pointed. */
static void
check_image_id(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *top, *cfg, *id;

	(void)k;
	if (x->p->image[0])
		verdict_expect(v, "%s", x->p->image);
	else
		verdict_expect(v, "sha256:<64 hex>, the image's Id");
	top = jpath_need_str(x->c, "Image", v);
	cfg = jpath_need_str(x->c, "Config.Image", v);
	id = jpath_need_str(x->img, "Id", v);
	if (!top || !cfg || !id)
		return;
	if (!profile_image_id_valid(top))
		verdict_observe(v, false, "Image %s", verdict_shown(top));
	if (!profile_image_id_valid(cfg))
		verdict_observe(v, false, "Config.Image %s", verdict_shown(cfg));
	if (strcmp(cfg, top) != 0)
		verdict_observe(v, false, "Config.Image %s differs", cfg);
	if (strcmp(id, top) != 0)
		verdict_observe(v, false, "%s, not the image's Id", top);
	verdict_observe(v, !x->p->image[0] || strcmp(top, x->p->image) == 0, "%s", top);
}

/* An image VOLUME becomes a writable anonymous volume, even on a read-only root. */
static void
check_image_volumes(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	expect_empty(x->img, k, v);
}

/* --- privileges ------------------------------------------------------ */

/* Docker stores CapDrop verbatim: "all" is not normalised to "ALL". */
static void
check_cap_drop(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;
	const char *s;

	verdict_expect(v, "[\"ALL\"]");
	j = jpath_need(x->c, k->path, v);
	if (!j)
		return;
	s = jpath_single_string(j);
	verdict_observe_json(v, s && strcmp(s, "ALL") == 0, j);
}

static bool
nnp_spelling(const char *s)
{
	return strcmp(s, "no-new-privileges=true") == 0 ||
	       strcmp(s, "no-new-privileges:true") == 0 ||
	       strcmp(s, "no-new-privileges") == 0;
}

/*
 * Exactly one option, no-new-privileges: any other entry (seccomp=…,
 * apparmor=…, label=…, systempaths=…) loosens a default confinement.
 */
static void
check_security_opt(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;
	const char *s, *aa;

	verdict_expect(v, "[\"no-new-privileges=true\"], AppArmor not unconfined");
	j = jpath_need(x->c, k->path, v);
	aa = jpath_need_str(x->c, "AppArmorProfile", v);
	if (!j || !aa)
		return;
	s = jpath_single_string(j);
	if (!s || !nnp_spelling(s))
		verdict_observe_json(v, false, j);
	if (strcmp(aa, "unconfined") == 0)
		verdict_observe(v, false, "AppArmorProfile unconfined");
	verdict_observe_json(v, true, j);
}

static void
check_restart_policy(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *name;
	json_int_t retries;

	(void)k;
	verdict_expect(v, "no, 0 retries");
	name = jpath_need_str(x->c, "HostConfig.RestartPolicy.Name", v);
	if (!jpath_need_int(x->c, "HostConfig.RestartPolicy.MaximumRetryCount", v, &retries) ||
	    !name)
		return;
	/* Docker treats an empty name as "no". */
	verdict_observe(v, (strcmp(name, "no") == 0 || !name[0]) && retries == 0,
		"%s, %lld retries", verdict_shown(name), (long long)retries);
}

static void
check_oom_kill_disable(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;

	verdict_expect(v, "false or null");
	j = jpath_need(x->c, k->path, v);
	if (j && !json_is_boolean(j) && !json_is_null(j))
		verdict_observe(v, false, "wrong type");
	else if (j)
		verdict_observe_json(v, !json_is_true(j), j);
}

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
static void
check_ulimit_core(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *arr = need_ulimits(x, k->path, v), *e;
	json_int_t soft, hard, csoft = -1, chard = -1;
	const char *name;
	size_t i, cores = 0;

	verdict_expect(v, "core 0/0");
	if (!arr)
		return;
	json_array_foreach(arr, i, e) {
		if (!ulimit_entry(e, &name, &soft, &hard)) {
			verdict_observe(v, false, "wrong type");
			return;
		}
		if (strcmp(name, "core") == 0) {
			cores++;
			csoft = soft;
			chard = hard;
		}
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

static void
check_ulimits_other(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *arr = need_ulimits(x, k->path, v), *e;
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
	json_array_foreach(arr, i, e) {
		if (!ulimit_entry(e, &name, &soft, &hard)) {
			verdict_observe(v, false, "wrong type");
			return;
		}
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
static void
check_ulimit_nproc(const struct ctx *x, const struct checker *k, struct verdict *v)
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

static void
check_pids_limit(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	verdict_expect(v, "%lld", (long long)x->p->pids_limit);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->pids_limit, PROFILE_PIDS_MAX);
}

static void
check_memory(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	verdict_expect(v, "%lld", (long long)x->p->memory);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->memory, PROFILE_MEMORY_MAX);
}

/* Unless MemorySwap equals Memory, Docker grants as much again as swap. */
static void
check_memory_swap(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	json_int_t swap, mem;

	verdict_expect(v, "equal to Memory");
	if (!jpath_need_int(x->c, k->path, v, &swap) ||
	    !jpath_need_int(x->c, "HostConfig.Memory", v, &mem))
		return;
	verdict_observe(v, swap == mem, "%lld (Memory %lld)", (long long)swap, (long long)mem);
}

static void
check_nano_cpus(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	int64_t max = INT64_MAX;

	if (x->host && x->host->cores > 0)
		max = (int64_t)x->host->cores * 1000000000LL;
	verdict_expect(v, "%lld", (long long)x->p->nano_cpus);
	judge_limit(v, jpath_need(x->c, k->path, v), x->p->nano_cpus, max);
}

/* --- tmpfs ----------------------------------------------------------- */

static void
tmpfs_opts(char *buf, size_t cap, const struct tmpfs_mount *m)
{
	snprintf(buf, cap, "rw,noexec,nosuid,nodev,size=%lld", (long long)m->size);
}

static void
expect_tmpfs(const struct profile *p, struct verdict *v)
{
	size_t i, off;
	bool guard = profile_tmp_guard(p);

	if (p->n_tmpfs == 0 && !guard) {
		verdict_expect(v, "empty");
		return;
	}
	v->expected[0] = '\0';
	if (guard)
		snprintf(v->expected, sizeof v->expected, "%s ro", PROFILE_TMP_GUARD_TARGET);
	for (i = 0; i < p->n_tmpfs; i++) {
		off = strlen(v->expected);
		snprintf(v->expected + off, sizeof v->expected - off, "%s%s size=%lld",
			 off ? ", " : "", p->tmpfs[i].target, (long long)p->tmpfs[i].size);
	}
}

/* The profile's options for target, or NULL when it is not configured. */
static bool
tmpfs_expected(const struct profile *p, const char *target, char *opts, size_t cap)
{
	size_t i;

	for (i = 0; i < p->n_tmpfs; i++)
		if (strcmp(p->tmpfs[i].target, target) == 0) {
			tmpfs_opts(opts, cap, &p->tmpfs[i]);
			return true;
		}
	if (profile_tmp_guard(p) && strcmp(target, PROFILE_TMP_GUARD_TARGET) == 0) {
		snprintf(opts, cap, "%s", PROFILE_TMP_GUARD_OPTS);
		return true;
	}
	return false;
}

/* Every observed mount is configured, with exactly the configured options. */
static bool
tmpfs_observed_ok(const struct profile *p, json_t *obj, struct verdict *v)
{
	const char *target;
	size_t len;
	json_t *val;
	char want[96];

	json_object_keylen_foreach(obj, target, len, val) {
		if (strlen(target) != len || !tmpfs_expected(p, target, want, sizeof want)) {
			verdict_observe(v, false, "unexpected %s", target);
			return false;
		}
		if (!jpath_clean_string(val) || strcmp(json_string_value(val), want) != 0) {
			verdict_observe(v, false, "%s options differ", target);
			return false;
		}
	}
	return true;
}

static void
check_tmpfs(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;
	size_t i;

	expect_tmpfs(x->p, v);
	j = jpath_optional(x->c, k->path, v);
	if (!j)
		return;
	if (!json_is_null(j) && !json_is_object(j)) {
		verdict_observe(v, false, "wrong type");
		return;
	}
	if (json_is_object(j) && !tmpfs_observed_ok(x->p, (json_t *)j, v))
		return;
	for (i = 0; i < x->p->n_tmpfs; i++)
		if (!json_object_get(j, x->p->tmpfs[i].target))
			verdict_observe(v, false, "%s missing", x->p->tmpfs[i].target);
	if (profile_tmp_guard(x->p) && !json_object_get(j, PROFILE_TMP_GUARD_TARGET))
		verdict_observe(v, false, "%s missing", PROFILE_TMP_GUARD_TARGET);
	verdict_observe(v, true, "%zu as configured",
			x->p->n_tmpfs + (profile_tmp_guard(x->p) ? 1 : 0));
}

/*
 * Under runsc an uncovered /tmp is a writable tmpfs that no inspect field
 * shows. The profile's runtime decides (the runtime check refuses a
 * container that runs another); the tmpfs check judges the options.
 */
static void
check_tmp_covered(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *t;

	verdict_expect(v, "runsc: a tmpfs at /tmp");
	t = jpath_optional(x->c, k->path, v);
	if (!t)
		return;
	if (strcmp(x->p->runtime, "runsc") != 0) {
		verdict_observe(v, true, "%s: not needed", verdict_shown(x->p->runtime));
		return;
	}
	if (!json_is_object(t) || !json_object_get(t, PROFILE_TMP_GUARD_TARGET))
		verdict_observe(v, false, "runsc: /tmp uncovered (gVisor mounts a writable tmpfs)");
	verdict_observe(v, true, "runsc: /tmp covered");
}

/* --- namespaces ------------------------------------------------------ */

/* Docker knows "", "private" and "host"; anything unknown refuses. */
static void
check_userns_mode(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *s;

	verdict_expect(v, "not host");
	s = jpath_need_str(x->c, k->path, v);
	if (s)
		verdict_observe(v, !s[0] || strcmp(s, "private") == 0, "%s", verdict_shown(s));
}

static void
check_ipc_mode(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	struct checker want = *k;

	want.want = x->p->ipc == IPC_PRIVATE ? "private" : "none";
	check_string(x, &want, v);
}

/* --- identity -------------------------------------------------------- */

static void
check_user(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *u;

	verdict_expect(v, "%s", x->p->user);
	u = jpath_need_str(x->c, k->path, v);
	if (!u)
		return;
	if (profile_user_is_root(u))
		verdict_observe(v, false, "%s (root)", verdict_shown(u));
	if (!profile_user_numeric(u))
		verdict_observe(v, false, "%s (not numeric uid:gid)", u);
	verdict_observe(v, strcmp(u, x->p->user) == 0, "%s", u);
}

/* An argv from the profile, or from JSON (null or an array of strings). */
struct argv {
	const struct strv *sv;
	const json_t *arr;
};

static size_t
argv_len(const struct argv *a)
{
	return a->sv ? a->sv->n : json_array_size(a->arr);
}

static const char *
argv_at(const struct argv *a, size_t i)
{
	return a->sv ? a->sv->v[i] : json_string_value(json_array_get(a->arr, i));
}

static bool
argv_json_ok(const json_t *j)
{
	const json_t *s;
	size_t i;

	if (json_is_null(j))
		return true;
	if (!json_is_array(j) || json_array_size(j) > ARGV_MAX)
		return false;
	json_array_foreach(j, i, s)
		if (!jpath_clean_string(s))
			return false;
	return true;
}

/* null and [] are both empty; otherwise order, count and bytes must match. */
static bool
argv_equal(const struct argv *a, const struct argv *b)
{
	size_t i, n = argv_len(a);

	if (n != argv_len(b))
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(argv_at(a, i), argv_at(b, i)) != 0)
			return false;
	return true;
}

static void
argv_render(char *buf, size_t cap, const struct argv *a)
{
	size_t i, off, n = argv_len(a);

	snprintf(buf, cap, "[");
	for (i = 0; i < n; i++) {
		off = strlen(buf);
		snprintf(buf + off, cap - off, "%s\"%s\"", i ? "," : "", argv_at(a, i));
	}
	off = strlen(buf);
	snprintf(buf + off, cap - off, "]");
}

/* A JSON argv at path in root, validated; false (v refused) otherwise. */
static bool
json_argv(const json_t *root, const char *path, struct argv *out, struct verdict *v)
{
	const json_t *j = jpath_need(root, path, v);

	if (!j)
		return false;
	if (!argv_json_ok(j)) {
		verdict_observe(v, false, "wrong type");
		return false;
	}
	out->sv = NULL;
	out->arr = j;
	return true;
}

/*
 * Docker's merge (daemon/commit.go, merge()): an Entrypoint that was not
 * given comes from the image; a given one, even [], stays.
 */
static bool
expected_entrypoint(const struct ctx *x, struct argv *out, struct verdict *v)
{
	if (x->p->entrypoint.set) {
		out->sv = &x->p->entrypoint;
		return true;
	}
	return json_argv(x->img, "Config.Entrypoint", out, v);
}

/*
 * The image's Cmd applies only when both the given Entrypoint and Cmd are
 * empty; a non-empty Entrypoint drops it.
 */
static bool
expected_cmd(const struct ctx *x, struct argv *out, struct verdict *v)
{
	const struct profile *p = x->p;

	if (p->entrypoint.n > 0 || p->cmd.n > 0) {
		out->sv = &p->cmd;
		return true;
	}
	return json_argv(x->img, "Config.Cmd", out, v);
}

static void
judge_argv(const struct ctx *x, const char *path, const struct argv *want, struct verdict *v)
{
	struct argv got;
	char buf[CHECK_VALUE_MAX];

	argv_render(buf, sizeof buf, want);
	verdict_expect(v, "%s", buf);
	if (!json_argv(x->c, path, &got, v))
		return;
	argv_render(buf, sizeof buf, &got);
	verdict_observe(v, argv_equal(want, &got), "%s", buf);
}

static void
check_entrypoint(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	struct argv want;

	verdict_expect(v, "the configured or the image's Entrypoint");
	if (expected_entrypoint(x, &want, v))
		judge_argv(x, k->path, &want, v);
}

static void
check_cmd(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	struct argv want;

	verdict_expect(v, "the configured or the image's Cmd");
	if (expected_cmd(x, &want, v))
		judge_argv(x, k->path, &want, v);
}

/* --- environment ----------------------------------------------------- */

/* The NAME part of "NAME=value" (the whole entry when it has no '='). */
static size_t
env_name_len(const char *s)
{
	return strcspn(s, "=");
}

static bool
same_name(const char *a, const char *b)
{
	size_t n = env_name_len(a);

	return n == env_name_len(b) && strncmp(a, b, n) == 0;
}

static bool
strv_has(const struct strv *sv, const char *s, bool by_name)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		if (by_name ? same_name(sv->v[i], s) : strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

/* Entries [0, end) of a validated string array. */
static bool
json_has(const json_t *arr, size_t end, const char *s, bool by_name)
{
	const char *e;
	size_t i;

	for (i = 0; i < end && i < json_array_size(arr); i++) {
		e = json_string_value(json_array_get(arr, i));
		if (by_name ? same_name(e, s) : strcmp(e, s) == 0)
			return true;
	}
	return false;
}

static bool
env_list_ok(const json_t *j)
{
	return argv_json_ok(j) && json_array_size(j) <= ENV_MAX;
}

/* The profile's entries, plus the image's whose name the profile does not override. */
static bool
env_expected(const struct profile *p, const json_t *img_env, const char *s, bool by_name)
{
	if (strv_has(&p->env, s, by_name))
		return true;
	if (strv_has(&p->env, s, true))
		return false;
	return json_has(img_env, SIZE_MAX, s, by_name);
}

/* Names only in the report: values can be secrets. */
static bool
env_observed_ok(const struct profile *p, const json_t *img_env, const json_t *got,
		struct verdict *v)
{
	const char *s;
	size_t i;
	int n;

	for (i = 0; i < json_array_size(got); i++) {
		s = json_string_value(json_array_get(got, i));
		n = (int)(env_name_len(s) < 48 ? env_name_len(s) : 48);
		if (json_has(got, i, s, true))
			verdict_observe(v, false, "duplicate %.*s", n, s);
		else if (env_expected(p, img_env, s, false))
			continue;
		else if (env_expected(p, img_env, s, true))
			verdict_observe(v, false, "%.*s has another value", n, s);
		else
			verdict_observe(v, false, "unexpected %.*s", n, s);
		return false;
	}
	return true;
}

static bool
env_present(const char *s, const json_t *got, struct verdict *v)
{
	int n = (int)(env_name_len(s) < 48 ? env_name_len(s) : 48);

	if (json_has(got, SIZE_MAX, s, false))
		return true;
	verdict_observe(v, false, "missing %.*s", n, s);
	return false;
}

static bool
env_expected_present(const struct profile *p, const json_t *img_env, const json_t *got,
		     struct verdict *v)
{
	const char *s;
	size_t i;

	for (i = 0; i < p->env.n; i++)
		if (!env_present(p->env.v[i], got, v))
			return false;
	for (i = 0; i < json_array_size(img_env); i++) {
		s = json_string_value(json_array_get(img_env, i));
		if (!strv_has(&p->env, s, true) && !env_present(s, got, v))
			return false;
	}
	return true;
}

/* Docker merges image Env with the given Env, the given one winning by name. */
static void
check_env(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *img_env, *got;

	verdict_expect(v, "the image's Env + %zu allowlisted", x->p->env.n);
	img_env = jpath_need(x->img, "Config.Env", v);
	got = jpath_need(x->c, k->path, v);
	if (!img_env || !got)
		return;
	if (!env_list_ok(img_env) || !env_list_ok(got)) {
		verdict_observe(v, false, "wrong type");
		return;
	}
	if (env_observed_ok(x->p, img_env, got, v) &&
	    env_expected_present(x->p, img_env, got, v))
		verdict_observe(v, true, "%zu variables as expected", json_array_size(got));
}

/* --- runtime and stdio ----------------------------------------------- */

static bool
runtime_present(const struct host_facts *h, const char *runtime)
{
	if (strcmp(runtime, "runc") == 0)
		return h->runtime_runc;
	if (strcmp(runtime, "runsc") == 0)
		return h->runtime_runsc;
	return false;
}

/* Never a silent fallback: the configured runtime, and the daemon has it. */
static void
check_runtime(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *s;

	verdict_expect(v, "%s", verdict_shown(x->p->runtime));
	if (!x->host) {
		verdict_observe(v, false, "host facts unknown");
		return;
	}
	s = jpath_need_str(x->c, k->path, v);
	if (!s)
		return;
	if (strcmp(s, x->p->runtime) != 0)
		verdict_observe(v, false, "%s", verdict_shown(s));
	if (!runtime_present(x->host, s))
		verdict_observe(v, false, "%s, not on the daemon", verdict_shown(s));
	verdict_observe(v, true, "%s", s);
}

/* StdinOnce: closing our end of the attach stream ends the agent's stdin. */
static void
check_stdin(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	bool open, once;

	(void)k;
	verdict_expect(v, "OpenStdin true, StdinOnce true");
	if (!jpath_need_bool(x->c, "Config.OpenStdin", v, &open) ||
	    !jpath_need_bool(x->c, "Config.StdinOnce", v, &once))
		return;
	verdict_observe(v, open && once, "OpenStdin %s, StdinOnce %s",
		open ? "true" : "false", once ? "true" : "false");
}

/* --- docker.sock anywhere -------------------------------------------- */

/* Case-insensitive, over the full length: a NUL must not hide the rest. */
static bool
mentions_sock(const char *s, size_t len)
{
	static const char needle[] = "docker.sock";
	size_t i, n = sizeof needle - 1;

	for (i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, needle, n) == 0)
			return true;
	return false;
}

/* Where the walk is, as a dotted path of object keys. */
struct walk {
	char path[CHECK_VALUE_MAX];
};

static void
walk_push(struct walk *w, const char *key)
{
	size_t off = strlen(w->path);

	snprintf(w->path + off, sizeof w->path - off, "%s%s", off ? "." : "", key);
}

static int walk_sock(const json_t *j, int depth, struct walk *w);

/* 1: found (w->path says where), 0: clean, -1: nested too deep. */
static int
walk_object(const json_t *j, int depth, struct walk *w)
{
	const char *key;
	size_t len, off = strlen(w->path);
	json_t *val;
	int r;

	json_object_keylen_foreach((json_t *)j, key, len, val) {
		walk_push(w, key);
		if (mentions_sock(key, len))
			return 1;
		r = walk_sock(val, depth + 1, w);
		if (r)
			return r;
		w->path[off] = '\0';
	}
	return 0;
}

static int
walk_sock(const json_t *j, int depth, struct walk *w)
{
	const json_t *e;
	size_t i;
	int r;

	if (depth > WALK_DEPTH_MAX)
		return -1;
	if (json_is_string(j))
		return mentions_sock(json_string_value(j), json_string_length(j));
	if (json_is_object(j))
		return walk_object(j, depth, w);
	json_array_foreach(j, i, e) {
		r = walk_sock(e, depth + 1, w);
		if (r)
			return r;
	}
	return 0;
}

static bool
judge_sock(const char *doc, const json_t *j, struct verdict *v)
{
	struct walk w = { "" };
	int r = walk_sock(j, 0, &w);

	if (r > 0)
		verdict_observe(v, false, "%s under %s", doc, verdict_shown(w.path));
	else if (r < 0)
		verdict_observe(v, false, "%s nested deeper than %d", doc, WALK_DEPTH_MAX);
	return r == 0;
}

/* A docker.sock path in any field is a way to the daemon: root on the host. */
static void
check_docker_sock(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	(void)k;
	verdict_expect(v, "no docker.sock anywhere");
	if (!x->c)
		verdict_observe(v, false, "missing");
	if (judge_sock("container", x->c, v) && (!x->img || judge_sock("image", x->img, v)))
		verdict_observe(v, true, "none");
}

/* --- sealed material -------------------------------------------------- */

/* Judged from the image's files (engine/sealed.h), for this container's image and user. */
static void
check_sealed(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const char *image, *user;

	(void)k;
	verdict_expect(v, "%zu sealed path%s unreadable", x->p->sealed.n,
		       x->p->sealed.n == 1 ? "" : "s");
	if (!json_is_object(x->c)) {
		verdict_observe(v, false, "missing");
		return;
	}
	if (x->p->sealed.n == 0) {
		verdict_observe(v, true, "none configured");
		return;
	}
	image = jpath_need_str(x->c, "Image", v);
	user = jpath_need_str(x->c, "Config.User", v);
	if (!image || !user)
		return;
	if (!x->sealed) {
		verdict_observe(v, false, "image files not read");
		return;
	}
	if (strcmp(x->sealed->image, image) != 0 || strcmp(x->sealed->user, user) != 0)
		verdict_observe(v, false, "judged for another image or user");
	verdict_observe(v, x->sealed->pass, "%s", x->sealed->text);
}

/* --- the table ------------------------------------------------------- */

static const struct checker checkers[ADMISSION_CHECK_COUNT] = {
	[ADMISSION_IMAGE_ID]		= { check_image_id, NULL, NULL },
	[ADMISSION_IMAGE_VOLUMES]	= { check_image_volumes, "Config.Volumes", NULL },
	[ADMISSION_CONTAINER_VOLUMES]	= { check_empty, "Config.Volumes", NULL },
	[ADMISSION_ANON_MOUNTS]		= { check_empty_array, "Mounts", "[]" },
	[ADMISSION_NETWORK_MODE]	= { check_string, "HostConfig.NetworkMode", "none" },
	[ADMISSION_NETWORK_DISABLED]	= { check_flag_set, "Config.NetworkDisabled", NULL },
	[ADMISSION_READONLY_ROOTFS]	= { check_bool, "HostConfig.ReadonlyRootfs", "true" },
	[ADMISSION_PRIVILEGED]		= { check_bool, "HostConfig.Privileged", "false" },
	[ADMISSION_CAP_ADD]		= { check_empty_array, "HostConfig.CapAdd", "empty" },
	[ADMISSION_CAP_DROP]		= { check_cap_drop, "HostConfig.CapDrop", NULL },
	[ADMISSION_SECURITY_OPT]	= { check_security_opt, "HostConfig.SecurityOpt", NULL },
	[ADMISSION_LOG_CONFIG]		= { check_string, "HostConfig.LogConfig.Type", "none" },
	[ADMISSION_RESTART_POLICY]	= { check_restart_policy, NULL, NULL },
	[ADMISSION_ULIMIT_CORE]		= { check_ulimit_core, "HostConfig.Ulimits", NULL },
	[ADMISSION_ULIMITS_OTHER]	= { check_ulimits_other, "HostConfig.Ulimits", NULL },
	[ADMISSION_ULIMIT_NPROC]	= { check_ulimit_nproc, "HostConfig.Ulimits", NULL },
	[ADMISSION_PIDS_LIMIT]		= { check_pids_limit, "HostConfig.PidsLimit", NULL },
	[ADMISSION_MEMORY]		= { check_memory, "HostConfig.Memory", NULL },
	[ADMISSION_MEMORY_SWAP]		= { check_memory_swap, "HostConfig.MemorySwap", NULL },
	[ADMISSION_NANO_CPUS]		= { check_nano_cpus, "HostConfig.NanoCpus", NULL },
	[ADMISSION_OOM_KILL_DISABLE]	= { check_oom_kill_disable, "HostConfig.OomKillDisable", NULL },
	[ADMISSION_INIT]		= { check_bool, "HostConfig.Init", "true" },
	[ADMISSION_BINDS]		= { check_empty, "HostConfig.Binds", NULL },
	[ADMISSION_MOUNTS]		= { check_empty, "HostConfig.Mounts", NULL },
	[ADMISSION_VOLUMES_FROM]	= { check_empty, "HostConfig.VolumesFrom", NULL },
	[ADMISSION_DEVICES]		= { check_empty, "HostConfig.Devices", NULL },
	[ADMISSION_DEVICE_REQUESTS]	= { check_empty, "HostConfig.DeviceRequests", NULL },
	[ADMISSION_PORT_BINDINGS]	= { check_empty, "HostConfig.PortBindings", NULL },
	[ADMISSION_LINKS]		= { check_empty, "HostConfig.Links", NULL },
	[ADMISSION_SYSCTLS]		= { check_empty, "HostConfig.Sysctls", NULL },
	[ADMISSION_EXTRA_HOSTS]		= { check_empty, "HostConfig.ExtraHosts", NULL },
	[ADMISSION_TMPFS]		= { check_tmpfs, "HostConfig.Tmpfs", NULL },
	[ADMISSION_PID_MODE]		= { check_string, "HostConfig.PidMode", "" },
	[ADMISSION_UTS_MODE]		= { check_string, "HostConfig.UTSMode", "" },
	[ADMISSION_USERNS_MODE]		= { check_userns_mode, "HostConfig.UsernsMode", NULL },
	[ADMISSION_CGROUPNS_MODE]	= { check_string, "HostConfig.CgroupnsMode", "private" },
	[ADMISSION_IPC_MODE]		= { check_ipc_mode, "HostConfig.IpcMode", NULL },
	[ADMISSION_CGROUP_PARENT]	= { check_string, "HostConfig.CgroupParent", "" },
	[ADMISSION_USER]		= { check_user, "Config.User", NULL },
	[ADMISSION_ENTRYPOINT]		= { check_entrypoint, "Config.Entrypoint", NULL },
	[ADMISSION_CMD]			= { check_cmd, "Config.Cmd", NULL },
	[ADMISSION_ENV]			= { check_env, "Config.Env", NULL },
	[ADMISSION_RUNTIME]		= { check_runtime, "HostConfig.Runtime", NULL },
	[ADMISSION_TMP_COVERED]		= { check_tmp_covered, "HostConfig.Tmpfs", NULL },
	[ADMISSION_TTY]			= { check_bool, "Config.Tty", "false" },
	[ADMISSION_STDIN]		= { check_stdin, NULL, NULL },
	[ADMISSION_DOCKER_SOCK]		= { check_docker_sock, NULL, NULL },
	[ADMISSION_SEALED]		= { check_sealed, NULL, NULL },
};

/* Exactly one item per check, even for a check that forgot to decide. */
static void
run_one(const struct ctx *x, enum admission_check c, struct check_list *report)
{
	const struct checker *k = &checkers[c];
	struct verdict v = { .pass = false };

	if (!x->p) {
		verdict_expect(&v, "a profile");
		verdict_observe(&v, false, "no profile");
	}
	else if (k->fn)
		k->fn(x, k, &v);
	verdict_observe(&v, false, "not checked");
	make_printable(v.expected);
	make_printable(v.observed);
	check_add(report, admission_check_id(c), v.pass, v.expected, v.observed);
}

bool
admission_check_files(const json_t *container, const json_t *image,
		      const struct profile *p, const struct host_facts *host,
		      const struct sealed_verdict *sealed, struct check_list *report)
{
	const struct ctx x = { container, image, p, host, sealed };
	int c;

	for (c = 0; c < ADMISSION_CHECK_COUNT; c++)
		run_one(&x, (enum admission_check)c, report);
	return check_list_passed(report);
}

bool
admission_check(const json_t *container, const json_t *image,
		const struct profile *p, const struct host_facts *host,
		struct check_list *report)
{
	return admission_check_files(container, image, p, host, NULL, report);
}
