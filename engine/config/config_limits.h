#ifndef AIRLOCK_CONFIG_LIMITS_H
#define AIRLOCK_CONFIG_LIMITS_H

/*
 * Every limit of a session's config in one table: the parser takes each
 * number's range and default from here (config.c), and the reference in
 * docs/configuration.md is this table rendered (config_limits_markdown),
 * which a unit test compares with the document, so the two cannot drift.
 */

#include <stddef.h>

/* The limits as constants, for the code that sizes by them. */
#define CONFIG_MAX_BYTES	(1 << 20)
#define CONFIG_UPSTREAMS_MAX	16
#define CONFIG_TOOLS_MAX	64
#define CONFIG_ALIASES_MAX	64
#define CONFIG_WITHHOLD_MAX	64
#define CONFIG_ARGV_MAX		64	/* words in an upstream's argv */
#define BOUND_FRAME_MAX		65536
#define BOUND_STDOUT_DEFAULT	(1 << 20)
#define BOUND_STDOUT_MAX	(4 << 20)
#define BOUND_STDERR_DEFAULT	(1 << 20)
#define BOUND_STDERR_MAX	(4 << 20)
#define BOUND_CALLS_DEFAULT	16
#define BOUND_CALLS_MAX		4096
#define BOUND_SESSION_MS_DEFAULT 15000
#define BOUND_SESSION_MS_MAX	600000
#define UPSTREAM_TIMEOUT_MS_DEFAULT 10000
#define UPSTREAM_TIMEOUT_MS_MAX	60000
#define CONFIG_DESCRIPTION_MAX	1024
#define POOL_SIZE_MAX			16
#define POOL_MAX_AGE_MS_DEFAULT		600000	/* 10 minutes */
#define POOL_MAX_AGE_MS_MIN		100
#define POOL_MAX_AGE_MS_MAX		86400000	/* a day */

#define CONFIG_LIMIT_NONE	(-1LL)	/* no minimum or default to state */

enum config_limit_id {
	LIMIT_FILE_BYTES,
	LIMIT_PIDS,
	LIMIT_MEMORY,
	LIMIT_CPUS,
	LIMIT_NOFILE,
	LIMIT_NPROC,
	LIMIT_TMPFS,
	LIMIT_TMPFS_SIZE,
	LIMIT_FRAME_BYTES,
	LIMIT_STDOUT_BYTES,
	LIMIT_STDERR_BYTES,
	LIMIT_CALLS,
	LIMIT_SESSION_MS,
	LIMIT_HOLD_TIMEOUT,
	LIMIT_CLASSES,
	LIMIT_UPSTREAMS,
	LIMIT_UPSTREAM_ARGV,
	LIMIT_UPSTREAM_TIMEOUT_MS,
	LIMIT_TOOLS,
	LIMIT_ALIASES,
	LIMIT_DESCRIPTION,
	LIMIT_WITHHOLD,
	LIMIT_POOL_SIZE,
	LIMIT_POOL_MAX_AGE_MS,
	LIMIT_COUNT
};

struct config_limit {
	const char *key;	/* where in the file */
	long long min, def, max;	/* min and def may be CONFIG_LIMIT_NONE */
	const char *unit;
	const char *what;
};

const struct config_limit *config_limit(enum config_limit_id id);

/*
 * The table as Markdown (a header row and one row per limit) into buf;
 * the length it needs (as snprintf: write nothing with cap 0).
 */
size_t config_limits_markdown(char *buf, size_t cap);

#endif
