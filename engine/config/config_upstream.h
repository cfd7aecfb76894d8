#ifndef AIRLOCK_CONFIG_UPSTREAM_H
#define AIRLOCK_CONFIG_UPSTREAM_H

/*
 * The "upstreams" section of a session's config (config.h): each tool
 * server's program, environment and timeout, and how it is held — its
 * confinement as a host process (user, paths, network: mcp_confine.h,
 * docs/operations.md) or a container of its own — or {"installed": KEY},
 * root's definition of it (upstream_catalog.h). Every key is checked and
 * a fault named at its JSON path; a user that does not exist, or root
 * without the opt-in, starts nothing.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "err.h"
#include "mcp.h"
#include "strv.h"

/*
 * Where an upstream runs (docs/operations.md, "An upstream in a container"):
 * a confined host process (the default), or a container of its own with the
 * session's hardened profile, admitted as the agent's is, its stdio over
 * the Docker attach stream (engine/gateway/upstream_box.h).
 */
enum upstream_isolation {
	UPSTREAM_PROCESS,
	UPSTREAM_CONTAINER,
};

struct upstream_config {
	char *name;
	enum upstream_isolation isolation;
	char image[72];			/* container: "sha256:<64 hex>" */
	struct strv argv;
	char *cwd;
	struct strv env;
	long timeout_ms;
	char *user;			/* NULL: the default upstream user */
	struct mcp_confine_config confine;	/* .user points at user */
};

/* Where the section's walk writes, and what a path is relative to. */
struct upstream_parse {
	struct upstream_config *slots;	/* the config's, sized to the section */
	size_t n;			/* filled so far; each one started is owned */
	const char *base_dir;		/* relative paths; NULL: the working directory */
	const char *upstreams_dir;	/* installed upstreams; NULL: UPSTREAM_CATALOG_DIR */
	bool installed_only;		/* a non-root peer's config */
	bool absolute_only;		/* no file to be relative to */
};

/* One member of "upstreams" into slots[n]; -1 with err at its JSON path. */
int config_upstream_parse(struct upstream_parse *p, const char *name, const json_t *obj,
			  struct al_err *err);
/* What one parsed (or partly parsed) upstream holds. */
void config_upstream_free(struct upstream_config *u);

#endif
