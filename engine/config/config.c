#include "config.h"
#include "config_limits.h"
#include "members.h"
#include "upstream_catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const top_keys[] = {
	"profile", "bounds", "classes", "upstreams", "tools", "aliases", "initial", "agent",
	"pool", NULL,
};

void
config_init(struct airlock_config *c)
{
	memset(c, 0, sizeof *c);
	profile_defaults(&c->profile);
	c->bounds.frame_bytes = BOUND_FRAME_MAX;
	c->bounds.stdout_bytes = BOUND_STDOUT_DEFAULT;
	c->bounds.stderr_bytes = BOUND_STDERR_DEFAULT;
	c->bounds.calls = BOUND_CALLS_DEFAULT;
	c->bounds.session_ms = BOUND_SESSION_MS_DEFAULT;
	c->pool.max_age_ms = POOL_MAX_AGE_MS_DEFAULT;
	class_list_default(&c->classes);
}

void
config_free(struct airlock_config *c)
{
	size_t i;

	profile_free(&c->profile);
	for (i = 0; i < c->n_upstreams; i++) {
		free(c->upstreams[i].name);
		free(c->upstreams[i].cwd);
		strv_free(&c->upstreams[i].argv);
		strv_free(&c->upstreams[i].env);
		free(c->upstreams[i].user);
		strv_free(&c->upstreams[i].confine.rw);
		strv_free(&c->upstreams[i].confine.ro);
	}
	for (i = 0; i < c->n_aliases; i++)
		free(c->aliases[i].description);
	free(c->upstreams);
	free(c->tools);
	free(c->aliases);
	free(c->initial.file);
	strv_free(&c->initial.withhold);
	free(c->base_dir);
	memset(c, 0, sizeof *c);
}

static bool
known_key(const char *key, const char *const *keys)
{
	for (; *keys; keys++)
		if (strcmp(key, *keys) == 0)
			return true;
	return false;
}

/* Refuse keys outside the list: a typo must not silently drop a setting. */
static int
only_keys(const json_t *obj, const char *const *keys, const char *path, struct al_err *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return al_fail(err, "%s: expected an object", path[0] ? path : "the top level");
	json_object_foreach((json_t *)obj, key, v)
		if (!known_key(key, keys))
			return al_fail(err, "%s%s%.64s: unknown key", path, path[0] ? "." : "", key);
	return 0;
}

static bool
is_plain_string(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

static int
get_name(const json_t *v, char *dst, size_t cap, const char *path, struct al_err *err)
{
	if (!is_plain_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap)
		return al_fail(err, "%s: expected a non-empty string of at most %zu bytes",
			       path, cap - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int
get_class(const struct airlock_config *c, const json_t *v, int *rank,
	  const char *path, struct al_err *err)
{
	*rank = class_rank(&c->classes, json_string_value(v));
	if (!json_is_string(v) || *rank < 0)
		return al_fail(err, "%s: not one of the configured classes", path);
	return 0;
}

static int
get_int(const json_t *v, long long lo, long long hi, long long *out,
	const char *path, struct al_err *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return al_fail(err, "%s: expected an integer in %lld..%lld", path, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

/*
 * An absolute path, or one relative to the config file's directory; NULL
 * with err when out of memory or relative where it may not be (what: the
 * member's JSON path).
 */
static char *
resolve_path(const struct airlock_config *c, const char *p, const char *what,
	     struct al_err *err)
{
	char *out = NULL;

	if (p[0] != '/' && c->absolute_only) {
		al_fail(err, "%s: expected an absolute path (ctl resolves a relative one against "
			"the config file's directory; an installed definition has none)", what);
		return NULL;
	}
	if (p[0] == '/' || !c->base_dir)
		out = strdup(p);
	else if (asprintf(&out, "%s/%s", c->base_dir, p) < 0)
		out = NULL;
	if (!out)
		al_fail(err, "%s: out of memory", what);
	return out;
}

/* A number within its limit's range (config_limits.h). */
static int
get_limited(const json_t *x, enum config_limit_id id, long long *v, const char *path,
	    struct al_err *err)
{
	const struct config_limit *l = config_limit(id);

	return get_int(x, l->min == CONFIG_LIMIT_NONE ? 0 : l->min, l->max, v, path, err);
}

static int
parse_bounds(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = {
		"frame_bytes", "stdout_bytes", "stderr_bytes", "calls", "session_ms", NULL,
	};
	struct config_bounds *b = &c->bounds;
	long long frame = (long long)b->frame_bytes, out = (long long)b->stdout_bytes,
		  errb = (long long)b->stderr_bytes, calls = b->calls, ms = b->session_ms;
	const struct {
		const char *key;
		enum config_limit_id limit;
		long long *v;
	} t[] = {
		{ "frame_bytes", LIMIT_FRAME_BYTES, &frame },
		{ "stdout_bytes", LIMIT_STDOUT_BYTES, &out },
		{ "stderr_bytes", LIMIT_STDERR_BYTES, &errb },
		{ "calls", LIMIT_CALLS, &calls },
		{ "session_ms", LIMIT_SESSION_MS, &ms },
	};
	char path[48];
	size_t i;
	json_t *x;

	if (only_keys(obj, keys, "bounds", err) < 0)
		return -1;
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		snprintf(path, sizeof path, "bounds.%s", t[i].key);
		x = json_object_get(obj, t[i].key);
		if (x && get_limited(x, t[i].limit, t[i].v, path, err) < 0)
			return -1;
	}
	b->frame_bytes = (size_t)frame;
	b->stdout_bytes = (size_t)out;
	b->stderr_bytes = (size_t)errb;
	b->calls = (int)calls;
	b->session_ms = (long)ms;
	return 0;
}

static int
parse_classes(struct airlock_config *c, const json_t *arr, struct al_err *err)
{
	char path[32];
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > CLASS_MAX)
		return al_fail(err, "classes: expected 1..%d names, lowest first", CLASS_MAX);
	memset(&c->classes, 0, sizeof c->classes);
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof path, "classes[%zu]", i);
		if (get_name(v, c->classes.names[i], CLASS_NAME_MAX, path, err) < 0)
			return -1;
		if (class_rank(&c->classes, c->classes.names[i]) != -1)
			return al_fail(err, "%s: duplicate class", path);
		c->classes.n = (int)i + 1;
	}
	return 0;
}

static int
parse_strings(struct strv *dst, const json_t *arr, size_t max, const char *path,
	      struct al_err *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) > max)
		return al_fail(err, "%s: expected an array of at most %zu strings", path, max);
	dst->set = true;
	json_array_foreach(arr, i, v) {
		if (!is_plain_string(v))
			return al_fail(err, "%s[%zu]: expected a string", path, i);
		if (strv_push(dst, json_string_value(v)) < 0)
			return al_fail(err, "%s: out of memory", path);
	}
	return 0;
}

struct env_ctx {
	struct strv *dst;
	const char *path;
};

static int
env_member(void *ctx, const char *name, const json_t *v, struct al_err *err)
{
	const struct env_ctx *e = ctx;
	char *entry;
	int rc;

	if (!name[0] || strchr(name, '=') || !is_plain_string(v))
		return al_fail(err, "%s.%.64s: expected NAME: \"value\"", e->path, name);
	if (asprintf(&entry, "%s=%s", name, json_string_value(v)) < 0)
		return al_fail(err, "%s: out of memory", e->path);
	rc = strv_push(e->dst, entry);
	free(entry);
	if (rc < 0)
		return al_fail(err, "%s: out of memory", e->path);
	return 0;
}

static int
parse_env(struct strv *dst, const json_t *obj, const char *path, struct al_err *err)
{
	const struct members_spec spec = { path, 64, "names", 0, NULL };
	struct env_ctx e = { dst, path };

	dst->set = true;
	return members_each(obj, &spec, env_member, &e, err);
}

/* --- an upstream's confinement (engine/mcp/mcp_confine.h) --------------- */

static int
get_bool(const json_t *v, bool *out, const char *path, const char *key, struct al_err *err)
{
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return al_fail(err, "%s.%s: expected true or false", path, key);
	*out = json_is_true(v);
	return 0;
}

/* Absolute or relative to the file; never "/" (then nothing would be refused). */
static int
parse_confine_list(struct airlock_config *c, struct strv *dst, const json_t *arr,
		   const char *path, struct al_err *err)
{
	struct strv raw = { 0 };
	char *p;
	size_t i;
	int rc = parse_strings(&raw, arr, MCP_CONFINE_PATHS_MAX, path, err);

	for (i = 0; rc == 0 && i < raw.n; i++) {
		if (!raw.v[i][0] || strspn(raw.v[i], "/") == strlen(raw.v[i])) {
			rc = al_fail(err, "%s[%zu]: / is not allowed", path, i);
			break;
		}
		if (!(p = resolve_path(c, raw.v[i], path, err)))
			rc = -1;
		else if (strv_push(dst, p) < 0)
			rc = al_fail(err, "%s: out of memory", path);
		free(p);
	}
	strv_free(&raw);
	return rc;
}

static int
parse_paths(struct airlock_config *c, struct upstream_config *u, const json_t *obj,
	    const char *path, struct al_err *err)
{
	static const char *const keys[] = { "rw", "ro", NULL };
	char sub[128];
	json_t *x;

	if (only_keys(obj, keys, path, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%.100s.rw", path);
	if ((x = json_object_get(obj, "rw")) && parse_confine_list(c, &u->confine.rw, x, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%.100s.ro", path);
	if ((x = json_object_get(obj, "ro")) && parse_confine_list(c, &u->confine.ro, x, sub, err) < 0)
		return -1;
	return 0;
}

static int
parse_ports(const json_t *arr, uint16_t *dst, size_t *n, const char *path, struct al_err *err)
{
	char sub[160];
	long long port = 0;
	size_t i;
	json_t *v;

	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > MCP_CONFINE_PORTS_MAX)
		return al_fail(err, "%s: expected an array of at most %d ports", path,
			       MCP_CONFINE_PORTS_MAX);
	json_array_foreach(arr, i, v) {
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		if (get_int(v, 1, 65535, &port, sub, err) < 0)
			return -1;
		dst[(*n)++] = (uint16_t)port;
	}
	return 0;
}

/* "none" (the default), or {connect: [ports], bind: [ports], udp: bool}. */
static int
parse_network(struct upstream_config *u, const json_t *v, const char *path, struct al_err *err)
{
	static const char *const keys[] = { "connect", "bind", "udp", NULL };
	struct mcp_confine_config *cf = &u->confine;
	char sub[128];

	if (json_is_string(v) && strcmp(json_string_value(v), "none") == 0)
		return 0;
	if (!json_is_object(v))
		return al_fail(err, "%s: expected \"none\" or {connect, bind, udp}", path);
	if (only_keys(v, keys, path, err) < 0)
		return -1;
	cf->network = true;
	snprintf(sub, sizeof sub, "%.100s.connect", path);
	if (parse_ports(json_object_get(v, "connect"), cf->connect, &cf->n_connect, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%.100s.bind", path);
	if (parse_ports(json_object_get(v, "bind"), cf->bind, &cf->n_bind, sub, err) < 0)
		return -1;
	return get_bool(json_object_get(v, "udp"), &cf->udp, path, "udp", err);
}

/*
 * The user is checked here, so a config naming root (without the opt-in)
 * or a user that does not exist starts no session. An engine that can
 * change uid (mcp_confine_can_change_ids) also needs the default user.
 */
static int
parse_user(struct upstream_config *u, const json_t *v, const char *path, struct al_err *err)
{
	const char *name = MCP_CONFINE_USER;
	struct al_err why;

	if (v) {
		if (!is_plain_string(v) || json_string_length(v) == 0 || json_string_length(v) > 32)
			return al_fail(err, "%s.user: expected a user name of at most 32 bytes", path);
		if (!(u->user = strdup(json_string_value(v))))
			return al_fail(err, "upstreams: out of memory");
		name = u->user;
		u->confine.user = u->user;
	} else if (!mcp_confine_can_change_ids()) {
		return 0;	/* the upstream keeps the engine's uid */
	}
	if (mcp_confine_check_user(name, u->confine.privileged, &why) == 0)
		return 0;
	if (!v && strncmp(why.msg, "no such user", 12) == 0)
		return al_fail(err, "%s: user %s does not exist: run scripts/setup or: "
			       "useradd --system %s", path, name, name);
	return al_fail(err, "%s.user: %s", path, why.msg);
}

static int
parse_confinement(struct airlock_config *c, struct upstream_config *u, const json_t *obj,
		  const char *path, struct al_err *err)
{
	char sub[128];
	json_t *x;

	if (get_bool(json_object_get(obj, "privileged"), &u->confine.privileged, path,
		     "privileged", err) < 0 ||
	    get_bool(json_object_get(obj, "unconfined_ok"), &u->confine.unconfined_ok, path,
		     "unconfined_ok", err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.paths", path);
	if ((x = json_object_get(obj, "paths")) && parse_paths(c, u, x, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.network", path);
	if ((x = json_object_get(obj, "network")) && parse_network(u, x, sub, err) < 0)
		return -1;
	return parse_user(u, json_object_get(obj, "user"), path, err);
}

/* --- an upstream in a container (engine/gateway/upstream_box.h) ----------- */

/* "process" (the default) or "container"; anything else names the fix. */
static int
parse_isolation(struct upstream_config *u, const json_t *v, const char *path, struct al_err *err)
{
	const char *s = json_string_value(v);

	if (!v || (s && strcmp(s, "process") == 0))
		return 0;
	if (s && strcmp(s, "container") == 0) {
		u->isolation = UPSTREAM_CONTAINER;
		return 0;
	}
	return al_fail(err, "%s.isolation: expected \"process\" or \"container\"", path);
}

/* As profile.image: an immutable local image ID, never a name or tag. */
static int
parse_upstream_image(struct upstream_config *u, const json_t *v, const char *path,
		     struct al_err *err)
{
	const char *s = json_string_value(v);

	if (u->isolation != UPSTREAM_CONTAINER)
		return v ? al_fail(err, "%s.image: only with \"isolation\": \"container\"", path) : 0;
	if (!v)
		return al_fail(err, "%s.image: required with isolation container"
			       " (an immutable local image ID sha256:<64 hex>)", path);
	if (!is_plain_string(v) || !profile_image_id_valid(s))
		return al_fail(err, "%s.image: must be an immutable local image ID sha256:<64 hex>,"
			       " not a name or tag (docker image inspect --format '{{.Id}}' NAME)", path);
	snprintf(u->image, sizeof u->image, "%s", s);
	return 0;
}

/*
 * A container upstream has no host user, no mounts and no network: the
 * keys that configure those for a host process are refused, not ignored.
 */
static int
parse_container_keys(const json_t *obj, const char *path, struct al_err *err)
{
	static const char *const host_only[] = {
		"cwd", "user", "privileged", "unconfined_ok", "paths", NULL,
	};
	const json_t *net = json_object_get(obj, "network");
	size_t i;

	for (i = 0; host_only[i]; i++)
		if (json_object_get(obj, host_only[i]))
			return al_fail(err, "%s.%s: not with isolation container (the container"
				       " has the session's profile: no mounts, no host user)",
				       path, host_only[i]);
	if (net && !(json_is_string(net) && strcmp(json_string_value(net), "none") == 0))
		return al_fail(err, "%s.network: isolation container allows only \"none\"", path);
	return 0;
}

static int
parse_isolated(struct airlock_config *c, struct upstream_config *u, const json_t *obj,
	       const char *path, struct al_err *err)
{
	if (parse_isolation(u, json_object_get(obj, "isolation"), path, err) < 0 ||
	    parse_upstream_image(u, json_object_get(obj, "image"), path, err) < 0)
		return -1;
	if (u->isolation == UPSTREAM_CONTAINER)
		return parse_container_keys(obj, path, err);
	return parse_confinement(c, u, obj, path, err);
}

/* One upstream given whole: by root, in the engine's own configs, or installed. */
static int
upstream_define(struct airlock_config *c, const char *name, const json_t *obj,
		struct al_err *err)
{
	static const char *const keys[] = {
		"argv", "cwd", "env", "timeout_ms", "user", "privileged", "unconfined_ok",
		"paths", "network", "isolation", "image", NULL,
	};
	struct upstream_config *u = &c->upstreams[c->n_upstreams];
	char path[96];
	long long t = UPSTREAM_TIMEOUT_MS_DEFAULT;
	json_t *x;

	snprintf(path, sizeof path, "upstreams.%.64s", name);
	if (only_keys(obj, keys, path, err) < 0)
		return -1;
	u->name = strdup(name);
	c->n_upstreams++;	/* owned from here: config_free releases it */
	snprintf(path, sizeof path, "upstreams.%.64s.argv", name);
	if (!u->name || parse_strings(&u->argv, json_object_get(obj, "argv"), CONFIG_ARGV_MAX, path, err) < 0)
		return u->name ? -1 : al_fail(err, "upstreams: out of memory");
	if (u->argv.n == 0 || u->argv.v[0][0] != '/')
		return al_fail(err, "%s[0]: expected an absolute path", path);
	snprintf(path, sizeof path, "upstreams.%.64s.env", name);
	if ((x = json_object_get(obj, "env")) && parse_env(&u->env, x, path, err) < 0)
		return -1;
	snprintf(path, sizeof path, "upstreams.%.64s.timeout_ms", name);
	if ((x = json_object_get(obj, "timeout_ms")) &&
	    get_limited(x, LIMIT_UPSTREAM_TIMEOUT_MS, &t, path, err) < 0)
		return -1;
	u->timeout_ms = (long)t;
	if ((x = json_object_get(obj, "cwd"))) {
		if (!is_plain_string(x))
			return al_fail(err, "upstreams.%.64s.cwd: expected a string", name);
		snprintf(path, sizeof path, "upstreams.%.64s.cwd", name);
		if (!(u->cwd = resolve_path(c, json_string_value(x), path, err)))
			return -1;
	}
	snprintf(path, sizeof path, "upstreams.%.64s", name);
	return parse_isolated(c, u, obj, path, err);
}

/* {"installed": KEY}: root's definition (upstream_catalog.h), its paths absolute. */
static int
upstream_installed(struct airlock_config *c, const char *name, const json_t *obj,
		   struct al_err *err)
{
	static const char *const keys[] = { "installed", NULL };
	const json_t *k = json_object_get(obj, "installed");
	bool absolute_only = c->absolute_only;
	char path[96];
	json_t *def;
	int rc;

	snprintf(path, sizeof path, "upstreams.%.64s", name);
	if (only_keys(obj, keys, path, err) < 0)
		return -1;
	if (!is_plain_string(k))
		return al_fail(err, "%s.installed: expected the key of an installed upstream", path);
	if (!(def = upstream_catalog_read(c->upstreams_dir, json_string_value(k), err)))
		return al_wrap(err, "%s", path);
	c->absolute_only = true;
	rc = upstream_define(c, name, def, err);
	c->absolute_only = absolute_only;
	json_decref(def);
	if (rc < 0)
		return al_wrap(err, "installed upstream %.64s", json_string_value(k));
	return 0;
}

/* One member of "upstreams" (a members_fn: ctx is the config). */
static int
upstream_member(void *ctx, const char *name, const json_t *obj, struct al_err *err)
{
	struct airlock_config *c = ctx;

	if (json_is_object(obj) && json_object_get(obj, "installed"))
		return upstream_installed(c, name, obj, err);
	if (c->installed_only)	/* config_load_json refused it already: fail closed */
		return al_fail(err, "upstreams.%.64s: %s", name, UPSTREAM_CATALOG_NOT_INSTALLED);
	return upstream_define(c, name, obj, err);
}

static bool
hex64(const char *s)
{
	return s && strlen(s) == HASH_HEX_LEN && strspn(s, "0123456789abcdef") == HASH_HEX_LEN;
}

static int
parse_tool_classes(struct airlock_config *c, struct catalog_tool *t, const json_t *obj,
		   const char *path, struct al_err *err)
{
	char sub[160];

	snprintf(sub, sizeof sub, "%s.data_class", path);
	if (get_class(c, json_object_get(obj, "data_class"), &t->data_class, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.sink_ceiling", path);
	if (get_class(c, json_object_get(obj, "sink_ceiling"), &t->sink_ceiling, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.response_ceiling", path);
	return get_class(c, json_object_get(obj, "response_ceiling"), &t->response_ceiling,
			 sub, err);
}

/* One member of "tools" (a members_fn: ctx is the config). */
static int
tool_member(void *ctx, const char *name, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = {
		"upstream", "remote", "data_class", "sink_ceiling", "response_ceiling", "pin", NULL,
	};
	struct airlock_config *c = ctx;
	struct catalog_tool *t = &c->tools[c->n_tools];
	char path[96], sub[160];
	json_t *pin;

	snprintf(path, sizeof path, "tools.%.64s", name);
	if (only_keys(obj, keys, path, err) < 0)
		return -1;
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(sub, sizeof sub, "%s.upstream", path);
	if (get_name(json_object_get(obj, "upstream"), t->upstream, sizeof t->upstream, sub, err) < 0)
		return -1;
	if (config_upstream_index(c, t->upstream) < 0)
		return al_fail(err, "%s: no upstream named %.64s", sub, t->upstream);
	snprintf(sub, sizeof sub, "%s.remote", path);
	if (get_name(json_object_get(obj, "remote"), t->remote, sizeof t->remote, sub, err) < 0 ||
	    parse_tool_classes(c, t, obj, path, err) < 0)
		return -1;
	if ((pin = json_object_get(obj, "pin"))) {
		if (!hex64(json_string_value(pin)))
			return al_fail(err, "%s.pin: expected 64 lowercase hex digits", path);
		memcpy(t->pin, json_string_value(pin), HASH_HEX_LEN + 1);
		t->pinned = true;
	}
	c->n_tools++;
	return 0;
}

/* {"tool": name, "description": text, "hidden": bool}: what an MCP agent is shown. */
static int
alias_object(struct airlock_config *c, const char *op, const json_t *v, struct al_err *err)
{
	static const char *const keys[] = { "tool", "description", "hidden", NULL };
	struct config_alias *a = &c->aliases[c->n_aliases];
	const json_t *d = json_object_get(v, "description"), *h = json_object_get(v, "hidden");
	char path[96];

	snprintf(path, sizeof path, "aliases.%.64s", op);
	if (only_keys(v, keys, path, err) < 0)
		return -1;
	if ((a->tool = config_tool_index(c, json_string_value(json_object_get(v, "tool")))) < 0)
		return al_fail(err, "aliases.%s.tool: not a tool in the catalog", op);
	if (d && (!is_plain_string(d) || json_string_length(d) > CONFIG_DESCRIPTION_MAX))
		return al_fail(err, "aliases.%s.description: expected a string of at most %d bytes",
			       op, CONFIG_DESCRIPTION_MAX);
	if (h && !json_is_boolean(h))
		return al_fail(err, "aliases.%s.hidden: expected true or false", op);
	if (d && !(a->description = strdup(json_string_value(d))))
		return al_fail(err, "aliases: out of memory");
	a->hidden = json_is_true(h);
	snprintf(a->operation, sizeof a->operation, "%s", op);
	c->n_aliases++;
	return 0;
}

static int
alias_member(void *ctx, const char *op, const json_t *v, struct al_err *err)
{
	struct airlock_config *c = ctx;
	struct config_alias *a = &c->aliases[c->n_aliases];

	if (json_is_object(v))
		return alias_object(c, op, v, err);
	a->tool = config_tool_index(c, json_string_value(v));
	if (a->tool < 0)
		return al_fail(err, "aliases.%s: not a tool in the catalog", op);
	snprintf(a->operation, sizeof a->operation, "%s", op);
	c->n_aliases++;
	return 0;
}

static int
parse_initial(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "file", "class", "withhold", NULL };
	json_t *x;

	if (only_keys(obj, keys, "initial", err) < 0 ||
	    get_class(c, json_object_get(obj, "class"), &c->initial.class, "initial.class", err) < 0)
		return -1;
	if ((x = json_object_get(obj, "withhold")) &&
	    parse_strings(&c->initial.withhold, x, CONFIG_WITHHOLD_MAX, "initial.withhold", err) < 0)
		return -1;
	if (!(x = json_object_get(obj, "file")))
		return 0;
	if (!is_plain_string(x))
		return al_fail(err, "initial.file: expected a string");
	if (!(c->initial.file = resolve_path(c, json_string_value(x), "initial.file", err)))
		return -1;
	return 0;
}

static int
parse_agent(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "mcp", NULL };
	const json_t *m = json_object_get(obj, "mcp");

	if (only_keys(obj, keys, "agent", err) < 0)
		return -1;
	if (m && !json_is_boolean(m))
		return al_fail(err, "agent.mcp: expected true or false");
	c->agent.mcp = json_is_true(m);
	c->profile.shim_required = c->agent.mcp;
	return 0;
}

/* {"size": 0..16, "max_age_ms": 100..86400000}: both optional. */
static int
parse_pool(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "size", "max_age_ms", NULL };
	const json_t *size = json_object_get(obj, "size");
	const json_t *age = json_object_get(obj, "max_age_ms");
	long long v = 0;

	if (only_keys(obj, keys, "pool", err) < 0)
		return -1;
	if (size) {
		if (get_limited(size, LIMIT_POOL_SIZE, &v, "pool.size", err) < 0)
			return -1;
		c->pool.size = (unsigned)v;
	}
	if (age) {
		if (get_limited(age, LIMIT_POOL_MAX_AGE_MS, &v, "pool.max_age_ms", err) < 0)
			return -1;
		c->pool.max_age_ms = (long)v;
	}
	return 0;
}

typedef int (*section_fn)(struct airlock_config *c, const json_t *v, struct al_err *err);

/*
 * A section of the file: parsed whole, or (spec set) an object whose
 * members are walked one by one (members.h).
 */
struct section {
	const char *key;
	section_fn parse;
	const struct members_spec *spec;
	members_fn member;
	size_t array, size;	/* a walked section's array in the config, and its element's size */
};

#define ARRAY_OF(field) offsetof(struct airlock_config, field), \
	sizeof(*((struct airlock_config *)0)->field)

static const struct members_spec upstreams_spec = {
	"upstreams", CONFIG_UPSTREAMS_MAX, "servers", 63, "a name",
};
static const struct members_spec tools_spec = {
	"tools", CONFIG_TOOLS_MAX, "tools", 63, "a name",
};
static const struct members_spec aliases_spec = {
	"aliases", CONFIG_ALIASES_MAX, "operations", 64, "an operation",
};

static int
parse_section(struct airlock_config *c, const struct section *s, const json_t *v,
	      struct al_err *err)
{
	void **array = (void **)((char *)c + s->array);
	size_t n = json_object_size(v);

	if (!s->spec)
		return s->parse(c, v, err);
	if (*array)	/* its members would not fit: one load per config */
		return al_fail(err, "%s: the config is loaded already", s->key);
	/* room for its members: more than the bound is refused by members_each */
	if (n && n <= s->spec->max && !(*array = calloc(n, s->size)))
		return al_fail(err, "%s: out of memory", s->key);
	return members_each(v, s->spec, s->member, c, err);
}

static int
parse_profile(struct airlock_config *c, const json_t *v, struct al_err *err)
{
	return profile_apply_json(&c->profile, v, c->host_cores, err);
}

int
config_load_json(struct airlock_config *c, const json_t *root, int host_cores,
		 struct al_err *err)
{
	/* In dependency order: classes before tools, upstreams before tools… */
	static const struct section sections[] = {
		{ "profile", parse_profile, NULL, NULL, 0, 0 },
		{ "bounds", parse_bounds, NULL, NULL, 0, 0 },
		{ "classes", parse_classes, NULL, NULL, 0, 0 },
		{ "upstreams", NULL, &upstreams_spec, upstream_member, ARRAY_OF(upstreams) },
		{ "tools", NULL, &tools_spec, tool_member, ARRAY_OF(tools) },
		{ "aliases", NULL, &aliases_spec, alias_member, ARRAY_OF(aliases) },
		{ "initial", parse_initial, NULL, NULL, 0, 0 },
		{ "agent", parse_agent, NULL, NULL, 0, 0 },
		{ "pool", parse_pool, NULL, NULL, 0, 0 },
	};
	size_t i;
	json_t *v;

	if (only_keys(root, top_keys, "", err) < 0)
		return -1;
	if (c->installed_only && upstream_catalog_peer_fault(root, c->upstreams_dir, err))
		return -1;
	c->host_cores = host_cores;
	for (i = 0; i < sizeof sections / sizeof sections[0]; i++)
		if ((v = json_object_get(root, sections[i].key)) &&
		    parse_section(c, &sections[i], v, err) < 0)
			return -1;
	return 0;
}

json_t *
config_read_json(const char *path, size_t cap, struct al_err *err)
{
	/* Non-blocking: a FIFO must not hold the caller (the console's) in open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	json_error_t jerr;
	json_t *root = NULL;
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	ssize_t got = 1;
	int read_errno = 0;

	if (fd < 0) {
		al_fail(err, "cannot open: %s", strerror(errno));
		return NULL;
	}
	/* A directory opens, then reads as nothing: name it, not "empty". */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		al_fail(err, "not a regular file");
		return NULL;
	}
	buf = malloc(cap + 1);
	while (buf && n <= cap && got > 0) {
		got = read(fd, buf + n, cap + 1 - n);
		if (got < 0 && errno == EINTR)
			got = 1;
		else if (got < 0)
			read_errno = errno;
		else
			n += (size_t)got;
	}
	close(fd);
	if (!buf)
		al_fail(err, "out of memory");
	else if (got < 0)
		al_fail(err, "cannot read: %s", strerror(read_errno));
	else if (n > cap)
		al_fail(err, "larger than %zu bytes", cap);
	else if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		al_fail(err, "starts with a UTF-8 byte order mark (BOM): save it without one");
	else if (!(root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr)))
		al_fail(err, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	free(buf);
	return root;
}

/* Read at most CONFIG_MAX_BYTES; a larger file is refused, not truncated. */
static json_t *
load_bounded(const char *path, struct al_err *err)
{
	json_t *root = config_read_json(path, CONFIG_MAX_BYTES, err);

	if (!root)
		al_wrap(err, "config %s", path);
	return root;
}

static char *
dir_of(const char *path)
{
	char *copy = strdup(path), *dir;

	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

/* A session file names its image: without one it would only fail at create. */
static int
require_image(const struct airlock_config *c, const json_t *root, struct al_err *err)
{
	if (!json_object_get(root, "profile"))
		return al_fail(err, "profile: required (profile.image: an immutable local image ID sha256:<64 hex>)");
	if (!c->profile.image[0])
		return al_fail(err, "profile.image: required (an immutable local image ID sha256:<64 hex>)");
	return 0;
}

int
config_load_file(struct airlock_config *c, const char *path, int host_cores,
		 struct al_err *err)
{
	json_t *root = load_bounded(path, err);
	int rc;

	if (!root)
		return -1;
	free(c->base_dir);
	c->base_dir = dir_of(path);
	rc = c->base_dir ? config_load_json(c, root, host_cores, err)
			 : al_fail(err, "out of memory");
	if (rc == 0)
		rc = require_image(c, root, err);
	json_decref(root);
	if (rc < 0)
		return al_wrap(err, "config %s", path);
	return 0;
}

int
config_tool_index(const struct airlock_config *c, const char *name)
{
	size_t i;

	for (i = 0; name && i < c->n_tools; i++)
		if (strcmp(c->tools[i].name, name) == 0)
			return (int)i;
	return -1;
}

int
config_alias_tool(const struct airlock_config *c, const char *operation)
{
	size_t i;

	for (i = 0; operation && i < c->n_aliases; i++)
		if (strcmp(c->aliases[i].operation, operation) == 0)
			return c->aliases[i].tool;
	return -1;
}

int
config_upstream_index(const struct airlock_config *c, const char *name)
{
	size_t i;

	for (i = 0; name && i < c->n_upstreams; i++)
		if (strcmp(c->upstreams[i].name, name) == 0)
			return (int)i;
	return -1;
}

void
config_upstream_mcp(const struct airlock_config *c, size_t i, struct mcp_server_config *out)
{
	const struct upstream_config *u = &c->upstreams[i];

	memset(out, 0, sizeof *out);
	out->name = u->name;
	out->argv = u->argv;
	out->cwd = u->cwd;
	out->env = u->env;
	out->init_timeout_ms = u->timeout_ms;
	out->call_timeout_ms = u->timeout_ms;
	out->confine = u->confine;
}

int
config_host_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}
