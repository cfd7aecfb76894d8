#ifndef AIRLOCK_ADMISSION_H
#define AIRLOCK_ADMISSION_H

/*
 * The admission checker (docs/guarantees.md, "What admission guarantees"): the container's effective
 * configuration, as the daemon reports it, compared field by field with the
 * profile. Pure code: JSON in, an itemised report out. A missing key or a
 * key of the wrong type refuses; nothing here may crash on hostile input.
 */

#include <stdbool.h>

#include <jansson.h>

#include "checks.h"
#include "profile.h"
#include "sealed.h"

/* Facts about the host the checker needs; filled by preflight. */
struct host_facts {
	int cores;
	bool runtime_runc;	/* "runc" in /info Runtimes */
	bool runtime_runsc;	/* "runsc" in /info Runtimes */
};

/*
 * Every check id, each with what it guards. The report holds exactly one
 * item per id, in this order, so reports diff cleanly.
 */
#define ADMISSION_CHECKS(_) \
	_(IMAGE_ID,         "image_id",         "container runs the requested immutable image ID") \
	_(IMAGE_VOLUMES,    "image_volumes",    "image declares no VOLUME (it would become an anonymous mount)") \
	_(CONTAINER_VOLUMES,"container_volumes","container Config.Volumes is empty") \
	_(ANON_MOUNTS,      "anon_mounts",      "no mounts at all (top-level Mounts is empty)") \
	_(NETWORK_MODE,     "network_mode",     "NetworkMode is none") \
	_(NETWORK_DISABLED, "network_disabled", "networking disabled: a network namespace of its own, no interface but loopback") \
	_(READONLY_ROOTFS,  "readonly_rootfs",  "root filesystem is read-only") \
	_(PRIVILEGED,       "privileged",       "not privileged") \
	_(CAP_ADD,          "cap_add",          "no capability added") \
	_(CAP_DROP,         "cap_drop",         "CapDrop is exactly [\"ALL\"]") \
	_(SECURITY_OPT,     "security_opt",     "exactly no-new-privileges (runsc: and airlock's seccomp profile); AppArmor stays on") \
	_(SECCOMP,          "seccomp",          "seccomp profile by runtime: runc the daemon's default, runsc exactly airlock's runsc profile") \
	_(LOG_CONFIG,       "log_config",       "log driver none") \
	_(RESTART_POLICY,   "restart_policy",   "restart policy no") \
	_(ULIMIT_CORE,      "ulimit_core",      "core ulimit 0/0") \
	_(ULIMITS_OTHER,    "ulimits_other",    "no ulimit besides core and the configured nofile and nproc") \
	_(ULIMIT_NPROC,     "ulimit_nproc",     "under runsc an nproc ulimit bounds the agent's processes (the pids limit counts gVisor's threads)") \
	_(PIDS_LIMIT,       "pids_limit",       "pids limit set and within the clamp") \
	_(MEMORY,           "memory",           "memory limit set and within the clamp") \
	_(MEMORY_SWAP,      "memory_swap",      "MemorySwap equals Memory (no swap)") \
	_(NANO_CPUS,        "nano_cpus",        "CPU limit as configured") \
	_(OOM_KILL_DISABLE, "oom_kill_disable", "OOM killer not disabled") \
	_(INIT,             "init",             "an init process reaps zombies") \
	_(BINDS,            "binds",            "no bind mounts") \
	_(MOUNTS,           "mounts",           "no HostConfig.Mounts") \
	_(VOLUMES_FROM,     "volumes_from",     "no VolumesFrom") \
	_(DEVICES,          "devices",          "no devices") \
	_(DEVICE_REQUESTS,  "device_requests",  "no device requests") \
	_(PORT_BINDINGS,    "port_bindings",    "no port bindings") \
	_(LINKS,            "links",            "no links") \
	_(SYSCTLS,          "sysctls",          "no sysctls") \
	_(EXTRA_HOSTS,      "extra_hosts",      "no extra hosts") \
	_(TMPFS,            "tmpfs",            "tmpfs mounts exactly the profile's") \
	_(TMP_COVERED,      "tmp_covered",      "under runsc a reported tmpfs covers /tmp (else gVisor mounts a writable one)") \
	_(PID_MODE,         "pid_mode",         "private PID namespace") \
	_(UTS_MODE,         "uts_mode",         "private UTS namespace") \
	_(USERNS_MODE,      "userns_mode",      "user namespace mode not host") \
	_(CGROUPNS_MODE,    "cgroupns_mode",    "private cgroup namespace") \
	_(IPC_MODE,         "ipc_mode",         "IPC mode as configured (none by default)") \
	_(CGROUP_PARENT,    "cgroup_parent",    "no custom cgroup parent") \
	_(USER,             "user",             "non-root numeric uid:gid as configured") \
	_(ENTRYPOINT,       "entrypoint",       "entrypoint exactly as configured") \
	_(CMD,              "cmd",              "cmd exactly as configured") \
	_(ENV,              "env",              "environment exactly the image's plus the allowlist") \
	_(RUNTIME,          "runtime",          "the configured runtime, present on the daemon") \
	_(TTY,              "tty",              "no TTY (stdout stays a framed protocol stream)") \
	_(STDIN,            "stdin",            "OpenStdin and StdinOnce true") \
	_(DOCKER_SOCK,      "docker_sock",      "no docker.sock path anywhere in the configuration") \
	_(SEALED,           "sealed",           "no sealed path readable by the agent's uid and groups") \
	_(SHIM_DIGEST,      "shim_digest",      "MCP sessions: /airlock/shim in the image is the engine's own airlock-shim (SHA-256)") \
	_(RUNNING,          "running",          "first admission: created, never started; second: running, not paused or restarting") \
	_(RESTART_COUNT,    "restart_count",    "RestartCount 0: the daemon never restarted it") \
	_(EXEC_IDS,         "exec_ids",         "no exec running in the container (ExecIDs empty)") \
	_(PROCESS,          "process",          "pooled: the second admission sees the Pid and StartedAt its start recorded")

enum admission_check {
#define ADMISSION_ENUM(e, id, help) ADMISSION_##e,
	ADMISSION_CHECKS(ADMISSION_ENUM)
#undef ADMISSION_ENUM
	ADMISSION_CHECK_COUNT
};

/*
 * The container's process as an admission expects it (docs/guarantees.md,
 * "What admission guarantees"): the first admission sees it created and
 * never started, the second running since the start airlock made. A
 * pooled container's start is recorded at its launch, so its claim tells
 * the process started then from one started since (a docker kill and
 * start, a docker restart), whose Pid and StartedAt differ.
 */
enum admission_phase {
	ADMISSION_PHASE_ANY,		/* not an admission (airlock inspect): created or running */
	ADMISSION_PHASE_CREATED,	/* the first admission */
	ADMISSION_PHASE_STARTED,	/* the second admission */
};

#define ADMISSION_STARTED_AT_MAX	48	/* State.StartedAt: "2026-12-08T00:32:50.691083673Z" is 30 */

/* The process a start made, from the daemon's State; pid 0: none recorded. */
struct admission_process {
	long long pid;
	char started_at[ADMISSION_STARTED_AT_MAX];
};

struct admission_state {
	enum admission_phase phase;
	struct admission_process start;	/* STARTED: the one its start recorded, or pid 0 */
};

/*
 * The running process of an inspect document (GET /containers/{id}/json)
 * into out: 0, or -1 when it runs none (not running, no Pid, a StartedAt
 * missing, too long or not printable).
 */
int admission_process_read(const json_t *container, struct admission_process *out);

const char *admission_check_id(enum admission_check c);
const char *admission_check_help(enum admission_check c);

/*
 * Fill report (initialised by the caller) with one item per check.
 * container: GET /containers/{id}/json; image: GET /images/{id}/json (may
 * be NULL: image checks then refuse). Returns true when admitted.
 */
bool admission_check(const json_t *container, const json_t *image,
		     const struct profile *p, const struct host_facts *host,
		     struct check_list *report);

/*
 * The same, with the verdict on the image's files for profile.sealed and,
 * for MCP sessions (profile.shim_required), /airlock/shim
 * (engine/sandbox/sealed_image.h: sealed_image_judge). NULL means they were not
 * read, which refuses "sealed" when sealed paths are configured and
 * "shim_digest" when the shim is required; a verdict for another image or
 * user refuses too.
 */
bool admission_check_files(const json_t *container, const json_t *image,
			   const struct profile *p, const struct host_facts *host,
			   const struct sealed_verdict *sealed, struct check_list *report);

/*
 * The same at an admission: its phase, and for the second one the process
 * recorded at the start, judge running, restart_count, exec_ids and
 * process. NULL state is ADMISSION_PHASE_ANY, which the two functions
 * above use.
 */
bool admission_check_state(const json_t *container, const json_t *image,
			   const struct profile *p, const struct host_facts *host,
			   const struct sealed_verdict *sealed, const struct admission_state *state,
			   struct check_list *report);

#endif
