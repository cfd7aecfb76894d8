#include "admission.h"
#include "admission_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jpath.h"
#include "seccomp_profile.h"

/*
 * Every lookup goes through jpath.h, so a missing key, a parent of the
 * wrong type or a NULL document all end in a refusal with observed
 * "missing" or "wrong type", never in a crash. The checks of resources
 * and ulimits are in admission_limits.c, those of Entrypoint, Cmd and Env
 * in admission_exec.c, those of the container's process in
 * admission_state.c; the table below runs them all.
 */

#define WALK_DEPTH_MAX	64	/* docker.sock search: deeper nesting refuses */

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
 * A SecurityOpt array as a report shows it: a long seccomp entry (a
 * profile's JSON text) becomes a short name, never its text.
 */
static void
observe_security_opt(struct verdict *v, bool pass, const json_t *opts)
{
	json_t *shown = json_deep_copy(opts), *e;
	char name[96];
	size_t i;

	json_array_foreach(shown, i, e) {
		const char *s = json_string_value(e);

		if (!seccomp_is_entry(s) || strlen(s) <= 32)
			continue;
		if (seccomp_is_runsc_entry(s))
			snprintf(name, sizeof name, "seccomp=<airlock's runsc profile>");
		else
			snprintf(name, sizeof name, "seccomp=<a profile of %zu bytes>", strlen(s));
		json_array_set_new(shown, i, json_string(name));
	}
	verdict_observe_json(v, pass, shown ? shown : opts);
	json_decref(shown);
}

/*
 * no-new-privileges once, and besides it at most the one seccomp entry
 * airlock sends (which runtime may have it is the seccomp check's): any
 * other entry (seccomp=unconfined, another profile, apparmor=…, label=…,
 * systempaths=…) loosens a default confinement.
 */
static bool
security_opts_known(const json_t *opts)
{
	size_t i, nnp = 0, profiles = 0;
	const json_t *e;

	if (!json_is_array(opts))
		return false;
	json_array_foreach(opts, i, e) {
		const char *s = json_string_value(e);

		if (!s || !jpath_clean_string(e))
			return false;
		if (nnp_spelling(s))
			nnp++;
		else if (seccomp_is_runsc_entry(s))
			profiles++;
		else
			return false;
	}
	return nnp == 1 && profiles <= 1;
}

static void
check_security_opt(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;
	const char *aa;

	verdict_expect(v, "[\"no-new-privileges=true\"] (runsc: and airlock's seccomp profile), "
		       "AppArmor not unconfined");
	j = jpath_need(x->c, k->path, v);
	aa = jpath_need_str(x->c, "AppArmorProfile", v);
	if (!j || !aa)
		return;
	if (!security_opts_known(j))
		observe_security_opt(v, false, j);
	if (strcmp(aa, "unconfined") == 0)
		verdict_observe(v, false, "AppArmorProfile unconfined");
	observe_security_opt(v, true, j);
}

/*
 * The seccomp profile by runtime (engine/admission/seccomp.h): runc keeps the
 * daemon's default (no seccomp entry); runsc has exactly airlock's runsc
 * profile. The runsc profile under runc would let clone3 create a user
 * namespace; the default under runsc answers clone3 with EPERM and no
 * thread starts.
 */
static void
check_seccomp(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	bool want = seccomp_runtime_has_profile(x->p->runtime);
	size_t i, entries = 0, ours = 0;
	const json_t *j, *e;

	if (want)
		verdict_expect(v, "%s: airlock's runsc profile (sha256 %.12s)",
			       x->p->runtime, seccomp_runsc_digest());
	else
		verdict_expect(v, "%s: the daemon's default profile", verdict_shown(x->p->runtime));
	j = jpath_need(x->c, k->path, v);
	if (j && !json_is_array(j))
		verdict_observe(v, false, "wrong type");
	if (!j || !json_is_array(j))
		return;
	json_array_foreach(j, i, e) {
		const char *s = json_string_value(e);

		entries += seccomp_is_entry(s);
		ours += seccomp_is_runsc_entry(s) && jpath_clean_string(e);
	}
	if (entries == 0)
		verdict_observe(v, !want, "the daemon's default profile");
	else if (entries == 1 && ours == 1)
		verdict_observe(v, want, "airlock's runsc profile");
	else
		observe_security_opt(v, false, j);
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

/* Judged from the image's files (engine/admission/sealed.h), for this container's image and user. */
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

/* --- the MCP shim ----------------------------------------------------- */

/*
 * MCP sessions: the image's /airlock/shim is the engine's own build, so a
 * stale shim is caught before data enters. Not a defence against the agent
 * (docs/guarantees.md): the agent may ignore the shim altogether.
 */
static void
check_shim_digest(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const struct sealed_file *f;
	const char *image;

	(void)k;
	if (!x->p->shim_required)
		verdict_expect(v, "MCP sessions only");
	else
		verdict_expect(v, "/airlock/shim sha256:%s", verdict_shown(x->p->shim_sha256));
	if (!json_is_object(x->c))
		verdict_observe(v, false, "missing");
	else if (!x->p->shim_required)
		verdict_observe(v, true, "not applicable: not an MCP session");
	else if (strlen(x->p->shim_sha256) != 64)
		verdict_observe(v, false, "the engine's own airlock-shim could not be read");
	if (v->decided || !(image = jpath_need_str(x->c, "Image", v)))
		return;
	if (!x->sealed)
		verdict_observe(v, false, "image files not read");
	else if (strcmp(x->sealed->image, image) != 0)
		verdict_observe(v, false, "judged for another image");
	if (v->decided)
		return;
	f = &x->sealed->shim;
	if (!f->read)
		verdict_observe(v, false, "image files not read: %s", f->text);
	else if (!f->present)
		verdict_observe(v, false, "absent from the image");
	else if (f->type != '0' && f->type != '7')
		verdict_observe(v, false, "not a regular file (tar type %c)", f->type);
	else if (strcmp(f->digest, x->p->shim_sha256) != 0)
		verdict_observe(v, false, "sha256:%s (another build)", verdict_shown(f->digest));
	else
		verdict_observe(v, true, "sha256:%s, mode %04o, owner %llu:%llu", f->digest,
				f->mode, (unsigned long long)f->uid, (unsigned long long)f->gid);
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
	[ADMISSION_SECCOMP]		= { check_seccomp, "HostConfig.SecurityOpt", NULL },
	[ADMISSION_LOG_CONFIG]		= { check_string, "HostConfig.LogConfig.Type", "none" },
	[ADMISSION_RESTART_POLICY]	= { check_restart_policy, NULL, NULL },
	[ADMISSION_ULIMIT_CORE]		= { admission_judge_ulimit_core, "HostConfig.Ulimits", NULL },
	[ADMISSION_ULIMITS_OTHER]	= { admission_judge_ulimits_other, "HostConfig.Ulimits", NULL },
	[ADMISSION_ULIMIT_NPROC]	= { admission_judge_ulimit_nproc, "HostConfig.Ulimits", NULL },
	[ADMISSION_PIDS_LIMIT]		= { admission_judge_pids_limit, "HostConfig.PidsLimit", NULL },
	[ADMISSION_MEMORY]		= { admission_judge_memory, "HostConfig.Memory", NULL },
	[ADMISSION_MEMORY_SWAP]		= { admission_judge_memory_swap, "HostConfig.MemorySwap", NULL },
	[ADMISSION_NANO_CPUS]		= { admission_judge_nano_cpus, "HostConfig.NanoCpus", NULL },
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
	[ADMISSION_ENTRYPOINT]		= { admission_judge_entrypoint, "Config.Entrypoint", NULL },
	[ADMISSION_CMD]			= { admission_judge_cmd, "Config.Cmd", NULL },
	[ADMISSION_ENV]			= { admission_judge_env, "Config.Env", NULL },
	[ADMISSION_RUNTIME]		= { check_runtime, "HostConfig.Runtime", NULL },
	[ADMISSION_TMP_COVERED]		= { check_tmp_covered, "HostConfig.Tmpfs", NULL },
	[ADMISSION_TTY]			= { check_bool, "Config.Tty", "false" },
	[ADMISSION_STDIN]		= { check_stdin, NULL, NULL },
	[ADMISSION_DOCKER_SOCK]		= { check_docker_sock, NULL, NULL },
	[ADMISSION_SEALED]		= { check_sealed, NULL, NULL },
	[ADMISSION_SHIM_DIGEST]		= { check_shim_digest, NULL, NULL },
	[ADMISSION_RUNNING]		= { admission_judge_running, NULL, NULL },
	[ADMISSION_RESTART_COUNT]	= { admission_judge_restart_count, "RestartCount", NULL },
	[ADMISSION_EXEC_IDS]		= { admission_judge_exec_ids, "ExecIDs", NULL },
	[ADMISSION_PROCESS]		= { admission_judge_process, NULL, NULL },
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
admission_check_state(const json_t *container, const json_t *image,
		      const struct profile *p, const struct host_facts *host,
		      const struct sealed_verdict *sealed, const struct admission_state *state,
		      struct check_list *report)
{
	const struct ctx x = { container, image, p, host, sealed, state };
	int c;

	for (c = 0; c < ADMISSION_CHECK_COUNT; c++)
		run_one(&x, (enum admission_check)c, report);
	return check_list_passed(report);
}

bool
admission_check_files(const json_t *container, const json_t *image,
		      const struct profile *p, const struct host_facts *host,
		      const struct sealed_verdict *sealed, struct check_list *report)
{
	return admission_check_state(container, image, p, host, sealed, NULL, report);
}

bool
admission_check(const json_t *container, const json_t *image,
		const struct profile *p, const struct host_facts *host,
		struct check_list *report)
{
	return admission_check_files(container, image, p, host, NULL, report);
}
