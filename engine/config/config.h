#ifndef AIRLOCK_CONFIG_H
#define AIRLOCK_CONFIG_H

/*
 * The operator's session configuration (one JSON file). Unknown keys, wrong
 * types and dangling references are refused with the JSON path of the
 * fault; nothing in it may loosen the hardened profile or a bound past its
 * clamp. Relative paths are resolved against the file's directory.
 *
 *   profile    the container (profile.h)
 *   bounds     frame_bytes, stdout_bytes, stderr_bytes, calls, session_ms,
 *              hold_timeout (seconds)
 *   classes    ordered list of class names, lowest first
 *   upstreams  name → {argv, cwd, env, timeout_ms, user, privileged,
 *                      unconfined_ok, paths: {rw, ro}, network,
 *                      isolation: "process" | "container", image}
 *              (confinement: engine/mcp/mcp_confine.h, docs/operations.md),
 *              or name → {installed: KEY}: root's definition of it
 *              (upstream_catalog.h)
 *   tools      name → {upstream, remote, data_class, sink_ceiling,
 *                      response_ceiling, pin}
 *   aliases    operation → tool name, or {tool, description, hidden}
 *   initial    {file, class, withhold: [field or dotted.path, …]}; over the
 *              control socket payload in file's place (config_inline.h)
 *   agent      {mcp}: an MCP session (docs/mcp-agents.md)
 *   pool       {size, max_age_ms}: containers kept warm for this profile
 *              (engine/sandbox/pool.h, docs/guarantees.md)
 *   policy     {declassify_by_hold}: an approved call held by a class flow
 *              hold may pass the sink ceiling (off by default)
 *
 * Every limit below, with its unit and meaning, is in one table
 * (config_limits.h) that the parser reads and docs/configuration.md shows.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config_json.h"
#include "config_limits.h"
#include "config_upstream.h"
#include "err.h"
#include "mcp.h"
#include "policy.h"
#include "profile.h"

struct config_bounds {
	size_t frame_bytes;	/* one line including its newline */
	size_t stdout_bytes;	/* all agent stdout */
	size_t stderr_bytes;	/* all agent stderr (drained, never stored) */
	int calls;
	long session_ms;
	long hold_timeout_s;	/* a held call waits so long for an operator (ctl hold) */
};

struct config_alias {
	char operation[65];
	int tool;		/* index into tools */
	char *description;	/* MCP sessions: the operator's, or NULL: the upstream's */
	bool hidden;		/* MCP sessions: never in the agent's tools/list */
};

/* What the agent is offered besides the bridge. */
struct agent_config {
	bool mcp;		/* the initial frame carries the tool list; cutovers
				   are announced (docs/protocol.md, MCP sessions) */
};

struct initial_config {
	char *file;		/* NULL: an empty object (or the payload) */
	/*
	 * What ctl read of initial.file with its caller's rights and sent in
	 * the file's place (engine/config/config_inline.h): only in a config
	 * sent over the control socket; never with file.
	 */
	json_t *payload;
	int class;
	struct strv withhold;
};

/* What an initial payload is called in a message: its file, never its contents. */
#define CONFIG_INITIAL_LABEL(c) \
	((c)->initial.file ? (c)->initial.file : (c)->initial.payload ? "(sent by ctl)" : "(none)")

/*
 * The warm pool (engine/sandbox/pool.h): size 0 (the default) is off. Past a
 * bound is refused, like every other bound here.
 */

struct pool_config {
	unsigned size;		/* 0 .. POOL_SIZE_MAX containers kept ready */
	long max_age_ms;	/* a ready container older than this is replaced */
};

/* Opt-ins of the class rules; every one off by default. */
struct policy_config {
	bool declassify_by_hold;	/* an approved flow hold of a denied flow
					   lets the call past its sink ceiling */
};

struct airlock_config {
	struct profile profile;
	struct config_bounds bounds;
	struct class_list classes;
	/*
	 * Each sized to its section when loaded (an engine holds one config
	 * per session: the bounds' worth would be 33 kB of each), at most
	 * CONFIG_UPSTREAMS_MAX, CONFIG_TOOLS_MAX, CONFIG_ALIASES_MAX.
	 */
	struct upstream_config *upstreams;
	size_t n_upstreams;
	struct catalog_tool *tools;
	size_t n_tools;
	struct config_alias *aliases;
	size_t n_aliases;
	struct initial_config initial;
	struct agent_config agent;
	struct pool_config pool;
	struct policy_config policy;
	char *base_dir;		/* for relative paths; NULL: the working directory */
	int host_cores;		/* clamps profile.cpus */
	/* Set before loading; config_init gives the defaults (the engine's own configs). */
	const char *upstreams_dir;	/* installed upstreams; NULL: UPSTREAM_CATALOG_DIR */
	bool installed_only;	/* a non-root peer's: upstream_catalog_peer_fault holds */
	bool absolute_only;	/* a relative path is refused (no file to be relative to) */
};

void config_init(struct airlock_config *c);
void config_free(struct airlock_config *c);
int config_load_json(struct airlock_config *c, const json_t *root, int host_cores,
		     struct al_err *err);
/*
 * A session file: a regular file (a directory or device is refused, not
 * read as empty), the JSON above, and profile.image is required.
 */
int config_load_file(struct airlock_config *c, const char *path, int host_cores,
		     struct al_err *err);

/* This host's online cores (at least 1): the host_cores the commands pass. */
int config_host_cores(void);

/* Lookups over the frozen tables; -1 when absent. */
int config_tool_index(const struct airlock_config *c, const char *name);
int config_alias_tool(const struct airlock_config *c, const char *operation);
int config_upstream_index(const struct airlock_config *c, const char *name);
/* The MCP client's view of an upstream (borrows from c). */
void config_upstream_mcp(const struct airlock_config *c, size_t i,
			 struct mcp_server_config *out);

#endif
