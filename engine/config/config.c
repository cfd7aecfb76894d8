#include "config.h"
#include "hold.h"
#include "config_limits.h"
#include "members.h"
#include "upstream_catalog.h"

#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const top_keys[] = {
	"profile", "bounds", "classes", "upstreams", "tools", "aliases", "initial", "agent",
	"pool", "policy", NULL,
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
	c->bounds.hold_timeout_s = HOLD_TIMEOUT_DEFAULT_S;
	c->pool.max_age_ms = POOL_MAX_AGE_MS_DEFAULT;
	class_list_default(&c->classes);
}

void
config_free(struct airlock_config *c)
{
	size_t i;

	profile_free(&c->profile);
	for (i = 0; i < c->n_upstreams; i++)
		config_upstream_free(&c->upstreams[i]);
	for (i = 0; i < c->n_aliases; i++)
		free(c->aliases[i].description);
	free(c->upstreams);
	free(c->tools);
	free(c->aliases);
	free(c->initial.file);
	json_decref(c->initial.payload);
	strv_free(&c->initial.withhold);
	free(c->base_dir);
	memset(c, 0, sizeof *c);
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
parse_bounds(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = {
		"frame_bytes", "stdout_bytes", "stderr_bytes", "calls", "session_ms", "hold_timeout",
		NULL,
	};
	struct config_bounds *b = &c->bounds;
	long long frame = (long long)b->frame_bytes, out = (long long)b->stdout_bytes,
		  errb = (long long)b->stderr_bytes, calls = b->calls, ms = b->session_ms,
		  hold = b->hold_timeout_s;
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
		{ "hold_timeout", LIMIT_HOLD_TIMEOUT, &hold },
	};
	char path[48];
	size_t i;
	json_t *x;

	if (config_only_keys(obj, keys, "bounds", err) < 0)
		return -1;
	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		snprintf(path, sizeof path, "bounds.%s", t[i].key);
		x = json_object_get(obj, t[i].key);
		if (x && config_get_limited(x, t[i].limit, t[i].v, path, err) < 0)
			return -1;
	}
	b->frame_bytes = (size_t)frame;
	b->stdout_bytes = (size_t)out;
	b->stderr_bytes = (size_t)errb;
	b->calls = (int)calls;
	b->session_ms = (long)ms;
	b->hold_timeout_s = (long)hold;
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
		if (config_get_name(v, c->classes.names[i], CLASS_NAME_MAX, path, err) < 0)
			return -1;
		if (class_rank(&c->classes, c->classes.names[i]) != -1)
			return al_fail(err, "%s: duplicate class", path);
		c->classes.n = (int)i + 1;
	}
	return 0;
}

/* One member of "upstreams" (a members_fn: ctx is the config). */
static int
upstream_member(void *ctx, const char *name, const json_t *obj, struct al_err *err)
{
	struct airlock_config *c = ctx;
	struct upstream_parse p = {
		c->upstreams, c->n_upstreams, c->base_dir, c->upstreams_dir,
		c->installed_only, c->absolute_only,
	};
	int rc = config_upstream_parse(&p, name, obj, err);

	c->n_upstreams = p.n;
	return rc;
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
	if (config_only_keys(obj, keys, path, err) < 0)
		return -1;
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(sub, sizeof sub, "%s.upstream", path);
	if (config_get_name(json_object_get(obj, "upstream"), t->upstream, sizeof t->upstream, sub, err) < 0)
		return -1;
	if (config_upstream_index(c, t->upstream) < 0)
		return al_fail(err, "%s: no upstream named %.64s", sub, t->upstream);
	snprintf(sub, sizeof sub, "%s.remote", path);
	if (config_get_name(json_object_get(obj, "remote"), t->remote, sizeof t->remote, sub, err) < 0 ||
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
	if (config_only_keys(v, keys, path, err) < 0)
		return -1;
	if ((a->tool = config_tool_index(c, json_string_value(json_object_get(v, "tool")))) < 0)
		return al_fail(err, "aliases.%s.tool: not a tool in the catalog", op);
	if (d && (!config_plain_string(d) || json_string_length(d) > CONFIG_DESCRIPTION_MAX))
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
	static const char *const keys[] = { "file", "payload", "class", "withhold", NULL };
	json_t *x, *payload = json_object_get(obj, "payload");

	if (config_only_keys(obj, keys, "initial", err) < 0 ||
	    get_class(c, json_object_get(obj, "class"), &c->initial.class, "initial.class", err) < 0)
		return -1;
	if ((x = json_object_get(obj, "withhold")) &&
	    config_strings(&c->initial.withhold, x, CONFIG_WITHHOLD_MAX, "initial.withhold", err) < 0)
		return -1;
	x = json_object_get(obj, "file");
	if (payload && (x || !c->absolute_only))	/* words only: never the payload */
		return al_fail(err, x ? "initial: a file or a payload, not both"
				      : "initial.payload: only ctl sends one (write initial.file)");
	if (payload)	/* the session's own copy: the request's tree goes */
		return (c->initial.payload = json_deep_copy(payload)) ? 0 :
		       al_fail(err, "initial.payload: out of memory");
	if (!x)
		return 0;
	if (!config_plain_string(x))
		return al_fail(err, "initial.file: expected a string");
	if (!(c->initial.file = config_resolve_path(c->base_dir, c->absolute_only, json_string_value(x),
						      "initial.file", err)))
		return -1;
	return 0;
}

static int
parse_agent(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "mcp", NULL };

	if (config_only_keys(obj, keys, "agent", err) < 0 ||
	    config_get_bool(json_object_get(obj, "mcp"), &c->agent.mcp, "agent", "mcp", err) < 0)
		return -1;
	c->profile.shim_required = c->agent.mcp;
	return 0;
}

/*
 * {"declassify_by_hold": bool}: may an operator's approval of a call held
 * by a class flow hold let it past the sink ceiling (docs/operations.md,
 * "Class flow holds")? Off unless the file says so: it is declassification.
 */
static int
parse_policy(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "declassify_by_hold", NULL };

	if (config_only_keys(obj, keys, "policy", err) < 0)
		return -1;
	return config_get_bool(json_object_get(obj, "declassify_by_hold"),
			       &c->policy.declassify_by_hold, "policy", "declassify_by_hold", err);
}

/* {"size": 0..16, "max_age_ms": 100..86400000}: both optional. */
static int
parse_pool(struct airlock_config *c, const json_t *obj, struct al_err *err)
{
	static const char *const keys[] = { "size", "max_age_ms", NULL };
	const json_t *size = json_object_get(obj, "size");
	const json_t *age = json_object_get(obj, "max_age_ms");
	long long v = 0;

	if (config_only_keys(obj, keys, "pool", err) < 0)
		return -1;
	if (size) {
		if (config_get_limited(size, LIMIT_POOL_SIZE, &v, "pool.size", err) < 0)
			return -1;
		c->pool.size = (unsigned)v;
	}
	if (age) {
		if (config_get_limited(age, LIMIT_POOL_MAX_AGE_MS, &v, "pool.max_age_ms", err) < 0)
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
		{ "policy", parse_policy, NULL, NULL, 0, 0 },
	};
	size_t i;
	json_t *v;

	if (config_only_keys(root, top_keys, "", err) < 0)
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
