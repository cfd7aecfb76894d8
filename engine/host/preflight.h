#ifndef AIRLOCK_PREFLIGHT_H
#define AIRLOCK_PREFLIGHT_H

/*
 * Host preflight (docs/architecture.md §2, step 1): the host and the daemon must be
 * ones airlock can make promises on. The parsing is pure and unit-tested;
 * preflight_local reads /proc and sets this process's RLIMIT_CORE.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "admission.h"
#include "checks.h"
#include "docker.h"
#include "err.h"

#define CORE_PATTERN_PATH "/proc/sys/kernel/core_pattern"

/*
 * A core pattern airlock accepts: not blank, and not a pipe to a handler
 * (leading blanks then '|'); a piped handler ignores RLIMIT_CORE and runs
 * in the host's namespaces.
 */
bool preflight_core_pattern_ok(const char *pattern);

/*
 * Resolve DOCKER_HOST (NULL or "" means the default socket) to a local unix
 * socket path. tcp://, ssh://, npipe://, fd:// and anything else are refused
 * with a message that says why.
 */
int preflight_endpoint(const char *docker_host, char *path, size_t cap,
		       struct al_err *err);

/* The endpoint above, opened with DOCKER_TIMEOUT_MS; NULL and err on failure. */
struct docker *preflight_connect(const char *docker_host, struct al_err *err);

/* Linux, core pattern, RLIMIT_CORE 0/0 on this process (set, then verified). */
void preflight_local(struct check_list *out);
/* The same checks on a given kernel name and core pattern (pure). */
void preflight_local_facts(const char *sysname, const char *core_pattern,
			   struct check_list *out);

/*
 * Daemon checks from GET /version and GET /info (pure): API version at
 * least 1.41, OSType linux, not Docker Desktop, seccomp in SecurityOptions
 * and not unconfined, the configured runtime present (runsc configured but
 * absent is a refusal, never a fallback), and for runsc its registered
 * runtimeArgs hold --network=none and --oci-seccomp as their final values
 * (check runsc_args; not reported is a refusal). Informational items (daemon and
 * kernel version, cgroup version, runtimes) pass with their observed value.
 * facts (may be NULL) receives cores and runtimes.
 */
void preflight_daemon(const json_t *version, const json_t *info, const char *runtime,
		      struct check_list *out, struct host_facts *facts);

/*
 * List every host check of HOST_CHECKS at stage from or later (up to the
 * daemon's; a config's checks are its caller's) that is not in out yet,
 * as not run: an unreachable stage leaves its checks visible.
 */
void preflight_not_run(struct check_list *out, enum host_check_stage from);

#endif
