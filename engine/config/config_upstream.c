#include "config_upstream.h"
#include "config_json.h"
#include "profile.h"
#include "upstream_catalog.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "members.h"

void
config_upstream_free(struct upstream_config *u)
{
	free(u->name);
	free(u->cwd);
	strv_free(&u->argv);
	strv_free(&u->env);
	free(u->user);
	strv_free(&u->confine.rw);
	strv_free(&u->confine.ro);
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

	if (!name[0] || strchr(name, '=') || !config_plain_string(v))
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

/* Absolute or relative to the file; never "/" (then nothing would be refused). */
static int
parse_confine_list(struct upstream_parse *c, struct strv *dst, const json_t *arr,
		   const char *path, struct al_err *err)
{
	struct strv raw = { 0 };
	char *p;
	size_t i;
	int rc = config_strings(&raw, arr, MCP_CONFINE_PATHS_MAX, path, err);

	for (i = 0; rc == 0 && i < raw.n; i++) {
		if (!raw.v[i][0] || strspn(raw.v[i], "/") == strlen(raw.v[i])) {
			rc = al_fail(err, "%s[%zu]: / is not allowed", path, i);
			break;
		}
		if (!(p = config_resolve_path(c->base_dir, c->absolute_only, raw.v[i], path, err)))
			rc = -1;
		else if (strv_push(dst, p) < 0)
			rc = al_fail(err, "%s: out of memory", path);
		free(p);
	}
	strv_free(&raw);
	return rc;
}

static int
parse_paths(struct upstream_parse *c, struct upstream_config *u, const json_t *obj,
	    const char *path, struct al_err *err)
{
	static const char *const keys[] = { "rw", "ro", NULL };
	char sub[128];
	json_t *x;

	if (config_only_keys(obj, keys, path, err) < 0)
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
		if (config_get_int(v, 1, 65535, &port, sub, err) < 0)
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
	if (config_only_keys(v, keys, path, err) < 0)
		return -1;
	cf->network = true;
	snprintf(sub, sizeof sub, "%.100s.connect", path);
	if (parse_ports(json_object_get(v, "connect"), cf->connect, &cf->n_connect, sub, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%.100s.bind", path);
	if (parse_ports(json_object_get(v, "bind"), cf->bind, &cf->n_bind, sub, err) < 0)
		return -1;
	return config_get_bool(json_object_get(v, "udp"), &cf->udp, path, "udp", err);
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
		if (!config_plain_string(v) || json_string_length(v) == 0 || json_string_length(v) > 32)
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
parse_confinement(struct upstream_parse *c, struct upstream_config *u, const json_t *obj,
		  const char *path, struct al_err *err)
{
	char sub[128];
	json_t *x;

	if (config_get_bool(json_object_get(obj, "privileged"), &u->confine.privileged, path,
		     "privileged", err) < 0 ||
	    config_get_bool(json_object_get(obj, "unconfined_ok"), &u->confine.unconfined_ok, path,
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
	if (!config_plain_string(v) || !profile_image_id_valid(s))
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
parse_isolated(struct upstream_parse *c, struct upstream_config *u, const json_t *obj,
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
upstream_define(struct upstream_parse *c, const char *name, const json_t *obj,
		struct al_err *err)
{
	static const char *const keys[] = {
		"argv", "cwd", "env", "timeout_ms", "user", "privileged", "unconfined_ok",
		"paths", "network", "isolation", "image", NULL,
	};
	struct upstream_config *u = &c->slots[c->n];
	char path[96];
	long long t = UPSTREAM_TIMEOUT_MS_DEFAULT;
	json_t *x;

	snprintf(path, sizeof path, "upstreams.%.64s", name);
	if (config_only_keys(obj, keys, path, err) < 0)
		return -1;
	u->name = strdup(name);
	c->n++;	/* owned from here: config_free releases it */
	snprintf(path, sizeof path, "upstreams.%.64s.argv", name);
	if (!u->name || config_strings(&u->argv, json_object_get(obj, "argv"), CONFIG_ARGV_MAX, path, err) < 0)
		return u->name ? -1 : al_fail(err, "upstreams: out of memory");
	if (u->argv.n == 0 || u->argv.v[0][0] != '/')
		return al_fail(err, "%s[0]: expected an absolute path", path);
	snprintf(path, sizeof path, "upstreams.%.64s.env", name);
	if ((x = json_object_get(obj, "env")) && parse_env(&u->env, x, path, err) < 0)
		return -1;
	snprintf(path, sizeof path, "upstreams.%.64s.timeout_ms", name);
	if ((x = json_object_get(obj, "timeout_ms")) &&
	    config_get_limited(x, LIMIT_UPSTREAM_TIMEOUT_MS, &t, path, err) < 0)
		return -1;
	u->timeout_ms = (long)t;
	if ((x = json_object_get(obj, "cwd"))) {
		if (!config_plain_string(x))
			return al_fail(err, "upstreams.%.64s.cwd: expected a string", name);
		snprintf(path, sizeof path, "upstreams.%.64s.cwd", name);
		u->cwd = config_resolve_path(c->base_dir, c->absolute_only, json_string_value(x),
					     path, err);
		if (!u->cwd)
			return -1;
	}
	snprintf(path, sizeof path, "upstreams.%.64s", name);
	return parse_isolated(c, u, obj, path, err);
}

/* What an installed upstream runs must be root's, as its definition is. */
static int
installed_code(const struct upstream_config *u, const char *key, struct al_err *err)
{
	char at[PATH_MAX];
	const char *why;

	if (u->isolation != UPSTREAM_PROCESS)
		return 0;	/* it runs what its image holds: content identity */
	why = upstream_catalog_code_fault(&u->argv, &u->confine.rw, &u->confine.ro, at, sizeof at);
	if (!why)
		return 0;
	return al_fail(err, "installed upstream %.64s: %.400s: %s (what it runs must be "
		       "root's: its program, the directory it is in and all beneath it, each "
		       "directory above, and a script it is given; root installs them so)",
		       key, at, why);
}

/* {"installed": KEY}: root's definition (upstream_catalog.h), its paths absolute. */
static int
upstream_installed(struct upstream_parse *c, const char *name, const json_t *obj,
		   struct al_err *err)
{
	static const char *const keys[] = { "installed", NULL };
	const json_t *k = json_object_get(obj, "installed");
	bool absolute_only = c->absolute_only;
	char path[96];
	json_t *def;
	int rc;

	snprintf(path, sizeof path, "upstreams.%.64s", name);
	if (config_only_keys(obj, keys, path, err) < 0)
		return -1;
	if (!config_plain_string(k))
		return al_fail(err, "%s.installed: expected the key of an installed upstream", path);
	if (!(def = upstream_catalog_read(c->upstreams_dir, json_string_value(k), err)))
		return al_wrap(err, "%s", path);
	c->absolute_only = true;
	rc = upstream_define(c, name, def, err);
	c->absolute_only = absolute_only;
	json_decref(def);
	if (rc < 0)
		return al_wrap(err, "installed upstream %.64s", json_string_value(k));
	return installed_code(&c->slots[c->n - 1], json_string_value(k), err);
}

int
config_upstream_parse(struct upstream_parse *c, const char *name, const json_t *obj,
		      struct al_err *err)
{

	if (json_is_object(obj) && json_object_get(obj, "installed"))
		return upstream_installed(c, name, obj, err);
	if (c->installed_only)	/* config_load_json refused it already: fail closed */
		return al_fail(err, "upstreams.%.64s: %s", name, UPSTREAM_CATALOG_NOT_INSTALLED);
	return upstream_define(c, name, obj, err);
}

