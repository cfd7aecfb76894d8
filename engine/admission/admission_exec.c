#include "admission_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jpath.h"
#include "strv.h"

#define ENV_MAX		1024	/* more variables than this refuses (quadratic compare) */
#define ARGV_MAX	4096	/* likewise for an Entrypoint or Cmd */

/* --- Entrypoint and Cmd ---------------------------------------------- */

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
	verdict_expect(v, "the configured or the image's Entrypoint");
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

	verdict_expect(v, "the configured or the image's Cmd");
	if (p->entrypoint.n > 0 || p->cmd.n > 0) {
		out->sv = &p->cmd;
		return true;
	}
	return json_argv(x->img, "Config.Cmd", out, v);
}

/* The argv at path in the container against the one expected() works out. */
static void
judge_argv(const struct ctx *x, const char *path,
	   bool (*expected)(const struct ctx *x, struct argv *out, struct verdict *v),
	   struct verdict *v)
{
	struct argv want, got;
	char buf[CHECK_VALUE_MAX];

	if (!expected(x, &want, v))
		return;
	argv_render(buf, sizeof buf, &want);
	verdict_expect(v, "%s", buf);
	if (!json_argv(x->c, path, &got, v))
		return;
	argv_render(buf, sizeof buf, &got);
	verdict_observe(v, argv_equal(&want, &got), "%s", buf);
}

void
admission_judge_entrypoint(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	judge_argv(x, k->path, expected_entrypoint, v);
}

void
admission_judge_cmd(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	judge_argv(x, k->path, expected_cmd, v);
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
void
admission_judge_env(const struct ctx *x, const struct checker *k, struct verdict *v)
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
