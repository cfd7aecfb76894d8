#ifndef AIRLOCK_PROFILE_H
#define AIRLOCK_PROFILE_H

/*
 * The hardened container profile (docs/guarantees.md, "What admission guarantees") as plain data: defaults,
 * operator overrides that stay inside fixed clamps, and the Docker create
 * body rendered from it. Pure code: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "ids.h"
#include "strv.h"

#define PROFILE_USER_DEFAULT		"10001:10001"
#define PROFILE_ID_MAX			4294967294ULL	/* uid_t is 32 bits; (uid_t)-1 is "no id" */
#define PROFILE_PIDS_RUNC		32
#define PROFILE_PIDS_RUNSC		512
#define PROFILE_PIDS_RUNSC_MIN		64	/* gVisor's own threads count */
/*
 * Under runsc the container's pids cgroup holds gVisor's host threads, not
 * the agent's processes: a fork bomb that reaches it kills the whole
 * sandbox (gVisor issue 2490). The agent's own processes are bounded inside
 * the sandbox instead, by RLIMIT_NPROC, which gVisor's kernel counts per
 * sandbox (a fork past it fails with EAGAIN, as under runc's pids limit).
 * Under runc RLIMIT_NPROC would count the uid's processes host-wide, so it
 * is runsc only.
 */
#define PROFILE_NPROC_RUNSC		32
#define PROFILE_NPROC_MAX		128
/*
 * gVisor's host threads per agent process the pids limit must leave room
 * for: with 32 processes (a fork bomb at the nproc bound) the sandbox died
 * at a pids limit of 128 every time and lived at 256 every time (2 cores).
 */
#define PROFILE_RUNSC_THREADS_PER_PROC	8
#define PROFILE_RUNSC_FATAL_STATUS	2	/* gVisor's sandbox, a Go program, on a fatal error */
#define PROFILE_PIDS_MAX		1024
#define PROFILE_MEMORY_DEFAULT		(128LL << 20)
#define PROFILE_MEMORY_MIN		(8LL << 20)
#define PROFILE_MEMORY_MAX		(4LL << 30)
#define PROFILE_NANO_CPUS_DEFAULT	1000000000LL
#define PROFILE_NOFILE_MAX		65536
#define PROFILE_TMPFS_MAX		4
#define PROFILE_TMPFS_SIZE_MIN		4096LL
#define PROFILE_TMPFS_SIZE_MAX		(64LL << 20)
/*
 * Under runsc, gVisor mounts its own writable tmpfs over an image's empty
 * /tmp when the spec has no mount there (gVisor issue 14474), and the daemon
 * reports nothing of it. So a runsc profile without a configured /tmp gets
 * this read-only tmpfs there: Docker reports it, admission checks it, and
 * gVisor leaves /tmp alone.
 */
#define PROFILE_TMP_GUARD_TARGET	"/tmp"
#define PROFILE_TMP_GUARD_OPTS		"ro,noexec,nosuid,nodev,size=4096"

/* Labels every airlock container carries. */
#define LABEL_MANAGED		"io.airlock.managed"
#define LABEL_OWNER_PID		"io.airlock.owner-pid"
#define LABEL_OWNER_START	"io.airlock.owner-start"
#define LABEL_OWNER_BOOT	"io.airlock.owner-boot"
#define LABEL_SESSION		"io.airlock.session"
#define LABEL_UPSTREAM		"io.airlock.upstream"	/* an upstream's container: its name */

enum ipc_mode {
	IPC_NONE,
	IPC_PRIVATE,
};

struct tmpfs_mount {
	char *target;
	int64_t size;	/* bytes; mounted rw,noexec,nosuid,nodev */
};

struct profile {
	char image[72];		/* "sha256:<64 hex>"; empty: not configured */
	char user[32];		/* numeric "uid:gid", never root */
	struct strv entrypoint;
	struct strv cmd;
	struct strv env;	/* "NAME=value", exactly the operator's allowlist */
	char runtime[16];	/* "runc" or "runsc" */
	enum ipc_mode ipc;
	int64_t pids_limit;
	int64_t memory;		/* bytes; MemorySwap is always the same */
	int64_t nano_cpus;
	int64_t nofile;		/* 0: no nofile ulimit */
	int64_t nproc;		/* runsc: the agent's processes (RLIMIT_NPROC); runc: 0 */
	struct tmpfs_mount tmpfs[PROFILE_TMPFS_MAX];
	size_t n_tmpfs;
	struct strv sealed;	/* image paths the agent must not read (engine/admission/sealed.h) */
	/*
	 * Not config keys. An MCP session (agent.mcp) requires /airlock/shim
	 * to be the engine's own airlock-shim (admission's shim_digest): the
	 * config sets shim_required, the session sets shim_sha256 to its
	 * shim's SHA-256 hex ("" when the engine could not read it: refused).
	 */
	bool shim_required;
	char shim_sha256[65];
};

/* Identity written into labels; the reaper reads it back. */
struct owner_labels {
	long pid;
	unsigned long long start_ticks;	/* /proc/<pid>/stat field 22 */
	char boot_id[ID_MAX];	/* the kernel's boot id: a UUID, NUL */
	char session[ID_MAX];
	char upstream[64];	/* an upstream's container: its name; else "" (no label) */
};

void profile_defaults(struct profile *p);
void profile_free(struct profile *p);
/* A deep copy (dst is overwritten); -1 when out of memory, dst then empty. */
int profile_copy(struct profile *dst, const struct profile *src);

/*
 * Apply the "profile" object of a config file. Keys: image, user,
 * entrypoint, cmd, env (object NAME→string), runtime, ipc ("none" or
 * "private"), pids_limit, memory (bytes), cpus (number), nofile, nproc
 * (runsc only), tmpfs
 * (object target→size in bytes), sealed (array of absolute paths, see
 * sealed_paths_parse). Unknown keys, wrong types and values past
 * a clamp are refused with the JSON path of the fault ("profile.memory: …").
 * host_cores clamps cpus (0: unknown, clamp at 1).
 */
int profile_apply_json(struct profile *p, const json_t *obj, int host_cores,
		       struct al_err *err);

/* Re-check the invariants (clamps, non-root user, image form). */
int profile_validate(const struct profile *p, int host_cores, struct al_err *err);

/* True when the profile gets the read-only /tmp guard (runsc, no /tmp configured). */
bool profile_tmp_guard(const struct profile *p);

/* Text checks shared with admission. */
bool profile_image_id_valid(const char *s);	/* "sha256:" + 64 lowercase hex */
bool profile_user_is_root(const char *user);	/* "", "0", "root", "0:x", "x:0", "x:root" */
bool profile_user_numeric(const char *user);	/* "uid:gid", both decimal, each <= PROFILE_ID_MAX */

/* The POST /containers/create body. Caller owns the result. */
json_t *profile_create_body(const struct profile *p, const struct owner_labels *who);

/* "airlock-" + 32 lowercase hex from the kernel's CSPRNG. */
#define PROFILE_NAME_MAX	48	/* "airlock-" + 32 hex, NUL, rounded up */
int profile_container_name(char out[PROFILE_NAME_MAX], struct al_err *err);

/*
 * Does a container's Config.Labels object carry airlock's labels (managed
 * "1", a session id, an owner pid, start time and boot id)? The
 * watchdog refuses to guard, and so to stop, anything else.
 */
bool profile_labels_managed(const json_t *labels);

/* Fill pid, start ticks and boot id of this process; session as given. */
int owner_labels_self(struct owner_labels *who, const char *session, struct al_err *err);

#endif
