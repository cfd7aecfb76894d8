#include "config_limits.h"
#include "hold.h"
#include "policy.h"
#include "profile.h"

#include <stdio.h>

static const struct config_limit limits[LIMIT_COUNT] = {
	[LIMIT_FILE_BYTES] = { "(the file)", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE,
			       CONFIG_MAX_BYTES, "bytes", "a config file, read whole" },
	[LIMIT_PIDS] = { "profile.pids_limit", 1, PROFILE_PIDS_RUNC, PROFILE_PIDS_MAX, "tasks",
			 "the container's tasks (runsc: default 512, at least 64 and 8 per nproc)" },
	[LIMIT_MEMORY] = { "profile.memory", PROFILE_MEMORY_MIN, PROFILE_MEMORY_DEFAULT,
			   PROFILE_MEMORY_MAX, "bytes", "the container's memory (and no swap)" },
	[LIMIT_CPUS] = { "profile.cpus", CONFIG_LIMIT_NONE, PROFILE_NANO_CPUS_DEFAULT / 1000000000,
			 CONFIG_LIMIT_NONE, "cores",
			 "the container's CPU share: from 0.01 up to the host's cores, a fraction allowed" },
	[LIMIT_NOFILE] = { "profile.nofile", 16, CONFIG_LIMIT_NONE, PROFILE_NOFILE_MAX, "files",
			   "open files in the container (none: the daemon's default)" },
	[LIMIT_NPROC] = { "profile.nproc", 1, PROFILE_NPROC_RUNSC, PROFILE_NPROC_MAX, "processes",
			  "runsc only: the agent's processes inside gVisor" },
	[LIMIT_TMPFS] = { "profile.tmpfs", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE, PROFILE_TMPFS_MAX,
			  "mounts", "writable tmpfs mounts (noexec, nosuid, nodev)" },
	[LIMIT_TMPFS_SIZE] = { "profile.tmpfs.PATH", PROFILE_TMPFS_SIZE_MIN, CONFIG_LIMIT_NONE,
			       PROFILE_TMPFS_SIZE_MAX, "bytes", "one tmpfs mount's size" },
	[LIMIT_FRAME_BYTES] = { "bounds.frame_bytes", 256, BOUND_FRAME_MAX, BOUND_FRAME_MAX,
				"bytes", "one line of the bridge, either way, newline included" },
	[LIMIT_STDOUT_BYTES] = { "bounds.stdout_bytes", 256, BOUND_STDOUT_DEFAULT,
				 BOUND_STDOUT_MAX, "bytes", "all of the agent's stdout" },
	[LIMIT_STDERR_BYTES] = { "bounds.stderr_bytes", 0, BOUND_STDERR_DEFAULT,
				 BOUND_STDERR_MAX, "bytes",
				 "all of the agent's stderr (drained and counted, never kept)" },
	[LIMIT_CALLS] = { "bounds.calls", 0, BOUND_CALLS_DEFAULT, BOUND_CALLS_MAX, "calls",
			  "tool calls in one session" },
	[LIMIT_SESSION_MS] = { "bounds.session_ms", 100, BOUND_SESSION_MS_DEFAULT,
			       BOUND_SESSION_MS_MAX, "ms", "a session's whole life" },
	[LIMIT_HOLD_TIMEOUT] = { "bounds.hold_timeout", HOLD_TIMEOUT_MIN_S, HOLD_TIMEOUT_DEFAULT_S,
				 HOLD_TIMEOUT_MAX_S, "s",
				 "a held call's wait for an operator, then denied hold_timeout" },
	[LIMIT_CLASSES] = { "classes", 1, CONFIG_LIMIT_NONE, CLASS_MAX, "names",
			    "data classes, lowest first (none given: four)" },
	[LIMIT_UPSTREAMS] = { "upstreams", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE,
			      CONFIG_UPSTREAMS_MAX, "servers", "MCP servers in one config" },
	[LIMIT_UPSTREAM_ARGV] = { "upstreams.NAME.argv", 1, CONFIG_LIMIT_NONE,
				  CONFIG_ARGV_MAX, "words", "a server's command line" },
	[LIMIT_UPSTREAM_TIMEOUT_MS] = { "upstreams.NAME.timeout_ms", 10,
					UPSTREAM_TIMEOUT_MS_DEFAULT, UPSTREAM_TIMEOUT_MS_MAX, "ms",
					"one tools/call, and the server's start" },
	[LIMIT_TOOLS] = { "tools", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE, CONFIG_TOOLS_MAX,
			  "tools", "catalog tools in one config" },
	[LIMIT_ALIASES] = { "aliases", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE, CONFIG_ALIASES_MAX,
			    "operations", "operations the agent may name" },
	[LIMIT_DESCRIPTION] = { "aliases.OP.description", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE,
				CONFIG_DESCRIPTION_MAX, "bytes",
				"what an MCP agent is told of an operation" },
	[LIMIT_WITHHOLD] = { "initial.withhold", CONFIG_LIMIT_NONE, CONFIG_LIMIT_NONE,
			     CONFIG_WITHHOLD_MAX, "fields", "fields kept out of the initial frame" },
	[LIMIT_POOL_SIZE] = { "pool.size", 0, 0, POOL_SIZE_MAX, "containers",
			      "containers kept warm for this config" },
	[LIMIT_POOL_MAX_AGE_MS] = { "pool.max_age_ms", POOL_MAX_AGE_MS_MIN,
				    POOL_MAX_AGE_MS_DEFAULT, POOL_MAX_AGE_MS_MAX, "ms",
				    "a warm container's age before it is replaced" },
};

const struct config_limit *
config_limit(enum config_limit_id id)
{
	return (unsigned)id < LIMIT_COUNT ? &limits[id] : NULL;
}

/* A number as the reference writes it: "—" for none. */
static void
number(char *out, size_t cap, long long v)
{
	if (v == CONFIG_LIMIT_NONE)
		snprintf(out, cap, "—");
	else
		snprintf(out, cap, "%lld", v);
}

size_t
config_limits_markdown(char *buf, size_t cap)
{
	char lo[24], def[24], hi[24];
	size_t used = 0, i;
	int n;

	n = snprintf(buf, cap, "| key | min | default | max | unit | what |\n"
			       "|---|---|---|---|---|---|\n");
	used += n > 0 ? (size_t)n : 0;
	for (i = 0; i < LIMIT_COUNT; i++) {
		number(lo, sizeof lo, limits[i].min);
		number(def, sizeof def, limits[i].def);
		number(hi, sizeof hi, limits[i].max);
		n = snprintf(used < cap ? buf + used : NULL, used < cap ? cap - used : 0,
			     "| `%s` | %s | %s | %s | %s | %s |\n", limits[i].key, lo, def, hi,
			     limits[i].unit, limits[i].what);
		used += n > 0 ? (size_t)n : 0;
	}
	return used;
}
