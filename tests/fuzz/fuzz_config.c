#include "fuzz.h"

#include <string.h>

#include "config.h"

/*
 * The config loader (engine/config/config.h) from a JSON buffer, as
 * config_load_file parses one (duplicates refused), without a file. A
 * config it accepts must hold only what the loader promises: bounds within
 * their clamps, every reference resolved, every class a configured one,
 * and a profile that passes validation whenever one was given.
 */

static bool
class_ok(const struct airlock_config *c, int rank)
{
	return rank >= 0 && rank < c->classes.n;
}

static void
check_tables(const struct airlock_config *c)
{
	size_t i;

	FUZZ_CHECK(c->n_upstreams <= CONFIG_UPSTREAMS_MAX && c->n_tools <= CONFIG_TOOLS_MAX &&
		   c->n_aliases <= CONFIG_ALIASES_MAX);
	for (i = 0; i < c->n_upstreams; i++)
		FUZZ_CHECK(c->upstreams[i].argv.n > 0 && c->upstreams[i].argv.v[0][0] == '/');
	for (i = 0; i < c->n_tools; i++) {
		FUZZ_CHECK(config_upstream_index(c, c->tools[i].upstream) >= 0);
		FUZZ_CHECK(class_ok(c, c->tools[i].data_class) &&
			   class_ok(c, c->tools[i].sink_ceiling) &&
			   class_ok(c, c->tools[i].response_ceiling));
	}
	for (i = 0; i < c->n_aliases; i++)
		FUZZ_CHECK(c->aliases[i].tool >= 0 && (size_t)c->aliases[i].tool < c->n_tools);
}

static void
check_accepted(const struct airlock_config *c, const json_t *root)
{
	const struct config_bounds *b = &c->bounds;
	struct al_err err;

	FUZZ_CHECK(b->frame_bytes >= 256 && b->frame_bytes <= BOUND_FRAME_MAX);
	FUZZ_CHECK(b->stdout_bytes >= 256 && b->stdout_bytes <= BOUND_STDOUT_MAX);
	FUZZ_CHECK(b->stderr_bytes <= BOUND_STDERR_MAX);
	FUZZ_CHECK(b->calls >= 0 && b->calls <= BOUND_CALLS_MAX);
	FUZZ_CHECK(b->session_ms >= 100 && b->session_ms <= BOUND_SESSION_MS_MAX);
	FUZZ_CHECK(c->classes.n >= 1 && c->classes.n <= CLASS_MAX);
	FUZZ_CHECK(class_ok(c, c->initial.class));
	check_tables(c);
	/* A config without "profile" keeps the defaults; issue #9 §5 covers that case. */
	if (json_object_get(root, "profile"))
		FUZZ_CHECK(profile_validate(&c->profile, c->host_cores, &err) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct airlock_config c;
	struct al_err err = { "" };
	json_t *root;

	if (size > CONFIG_MAX_BYTES)
		return 0;
	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!root)
		return 0;
	config_init(&c);
	c.base_dir = strdup("/etc/airlock");
	FUZZ_CHECK(c.base_dir != NULL);
	if (config_load_json(&c, root, 2, &err) == 0)
		check_accepted(&c, root);
	else
		FUZZ_CHECK(err.msg[0] != '\0');
	config_free(&c);
	json_decref(root);
	return 0;
}
