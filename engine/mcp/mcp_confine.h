#ifndef AIRLOCK_MCP_CONFINE_H
#define AIRLOCK_MCP_CONFINE_H

/*
 * What an MCP upstream process may do, and the receipt of what it got
 * (issue #41, section 1; docs/guarantees.md "Upstream confinement").
 *
 * Everything is prepared in the parent before fork: the user looked up,
 * the Landlock ruleset created and filled, the seccomp filter built with
 * libseccomp and exported as BPF. Between fork and exec the child only
 * makes system calls: drop the bounding set, setgroups/setresgid/setresuid,
 * no_new_privs, landlock_restrict_self, PR_SET_SECCOMP; then it proves the
 * result (a forbidden open, a forbidden TCP connect and a filtered system
 * call must fail, the uid must not be 0, no capability may be left) and
 * reports a failure through the status pipe instead of running the server.
 *
 * A zeroed struct mcp_confine_config is the default: the airlock-upstream
 * user (when the engine can change uid), no network, nothing writable.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "hash.h"
#include "snapshot.h"	/* struct upstream_view */
#include "strv.h"

#define MCP_CONFINE_USER	"airlock-upstream"
/* A session's upstreams' tasks together, under a uid of its own (mcp_uids.h). */
#define MCP_UPSTREAM_TASKS	512
#define MCP_CONFINE_PATHS_MAX	16	/* per list: rw, ro */
#define MCP_CONFINE_PORTS_MAX	16	/* per list: connect, bind */
#define MCP_LANDLOCK_ABI_MIN	UPSTREAM_LANDLOCK_FULL	/* TCP rules (4), scopes (6) */

struct mcp_confine_config {
	const char *user;		/* NULL: MCP_CONFINE_USER */
	bool privileged;		/* opt-in: user may be root or in the docker group */
	bool unconfined_ok;		/* opt-in: start without Landlock where the kernel lacks it */
	struct strv rw;			/* absolute directories or files: read-write beneath */
	struct strv ro;			/* absolute: read-only beneath */
	bool network;			/* false: "none"; true: the ports below */
	bool udp;			/* with network: UDP sockets too (any port) */
	uint16_t connect[MCP_CONFINE_PORTS_MAX];
	size_t n_connect;
	uint16_t bind[MCP_CONFINE_PORTS_MAX];
	size_t n_bind;
	const char *kind;		/* NULL: "upstream"; the test build's mutants are
					   named after it ("upstream_keep_root", …) */
	/*
	 * false: the process gets SIGKILL when the thread that started it
	 * ends (a session's upstream, started and stopped by the session's
	 * thread), so it dies with the engine however the engine dies.
	 * true: it outlives that thread (the parser: a short-lived thread
	 * starts it).
	 */
	bool outlives_starter;
	/*
	 * The session's own uid (mcp_uids.h; 0: none): with the default user
	 * (named or not), the upstream runs as this uid in that user's group,
	 * under RLIMIT_NPROC MCP_UPSTREAM_TASKS. Another user keeps its uid.
	 */
	uid_t session_uid;
};

/*
 * What one upstream got: filled at spawn, for the session's audit and its
 * detail (struct upstream_view); `airlock doctor` prepares one without a
 * spawn to show what it would get on this host.
 */
struct mcp_confine_receipt {
	char user[33];			/* the user switched to; "" when the uid is the engine's */
	uid_t uid;			/* the server's uid */
	gid_t gid;
	bool uid_changed;		/* false: the engine cannot change uid, the uid is its own */
	bool privileged;		/* started under the privileged opt-in */
	bool unconfined_ok;		/* the opt-in to start without Landlock */
	int landlock_abi;		/* 0: no Landlock (only with unconfined_ok) */
	unsigned landlock_rules;	/* path and port rules in the ruleset */
	unsigned paths_ro, paths_rw;	/* the operator's lists (paths.ro, paths.rw) */
	char seccomp_sha256[HASH_HEX_LEN + 1];	/* of the exported BPF program */
	char network[SNAP_NETWORK_MAX];	/* "none", or "connect 443,80 bind - udp no" */
	char isolation[16];		/* "process" (a container's receipt is the gateway's) */
	bool session_uid;		/* uid is its session's own (mcp_uids.h), not the user's */
	unsigned long tasks;		/* its RLIMIT_NPROC then (MCP_UPSTREAM_TASKS); 0: none set */
};

/*
 * The part of a receipt its config alone decides (pure: no lookup, no
 * system call): the opt-ins, the path counts, the network text and the
 * isolation; the rest zero. mcp_confine_prepare starts its receipt from it;
 * a session shows it for an upstream not started yet.
 */
void mcp_confine_plan(const struct mcp_confine_config *cfg, struct mcp_confine_receipt *r);

/*
 * A receipt as the console sees it (pure). started: r is a prepared
 * confinement's (spawned, or doctor's dry run), not only a plan; then
 * user is the one switched to, else the configured one (cfg_user, NULL:
 * MCP_CONFINE_USER).
 */
void mcp_confine_view(const char *name, const struct mcp_confine_receipt *r, bool started,
		      const char *cfg_user, struct upstream_view *out);

/*
 * One line for a terminal (pure): "uid 999 (airlock-upstream)  landlock ABI 7,
 * 23 rules (ro 0, rw 1)  seccomp 3f2a9c1e4b5d6f70  network none  isolation
 * process", then the loud marks (upstream_view_marks). Returns out.
 */
char *mcp_confine_text(const struct upstream_view *u, char *out, size_t cap);

/* This host: the kernel's Landlock ABI (0: none). */
int mcp_confine_landlock_abi(void);
/* This host: seccomp filters can be loaded (the kernel has SECCOMP_MODE_FILTER). */
bool mcp_confine_seccomp_available(void);

/*
 * The user check a config load makes: the user exists, and is neither uid
 * 0, gid 0 nor a member of the docker group unless privileged. Fails with
 * "root is not allowed …", "a member of the docker group is not allowed …"
 * or "no such user …" (the caller prefixes the JSON path).
 */
int mcp_confine_check_user(const char *user, bool privileged, struct al_err *err);

/*
 * Whether this engine switches its upstreams to their user: it holds
 * CAP_SETUID and CAP_SETGID (root does; so does the airlock service's
 * user through the unit's ambient capabilities). The question to ask, not
 * whether the euid is 0. Without them an upstream keeps the engine's uid.
 */
bool mcp_confine_can_change_ids(void);

/* One prepared confinement: built in the parent, applied in the child. */
struct mcp_confine;

/*
 * Everything the child needs, for the upstream named name running argv.
 * Fails with "upstream NAME: …" naming the cause and the fix.
 */
int mcp_confine_prepare(const char *name, const struct mcp_confine_config *cfg,
			const struct strv *argv, struct mcp_confine **out, struct al_err *err);
void mcp_confine_free(struct mcp_confine *cf);
const struct mcp_confine_receipt *mcp_confine_receipt(const struct mcp_confine *cf);
/* The program, opened by the parent; -1 for scripts (exec by path). */
int mcp_confine_program_fd(const struct mcp_confine *cf);
/* The Landlock ruleset descriptor, or -1. */
int mcp_confine_ruleset_fd(const struct mcp_confine *cf);
/* The child moved the descriptors: it tells the prepared state where. */
void mcp_confine_moved(struct mcp_confine *cf, int program_fd, int ruleset_fd);

/* Where, in the child, confinement failed (a spawn step of its own). */
enum mcp_confine_step {
	MCP_CONFINE_OK,
	MCP_CONFINE_IDS,	/* groups, gid, uid, capabilities */
	MCP_CONFINE_NNP,
	MCP_CONFINE_LANDLOCK,	/* landlock_restrict_self */
	MCP_CONFINE_SECCOMP,	/* PR_SET_SECCOMP */
	MCP_CONFINE_CHECK_FS,	/* the forbidden open succeeded, or failed otherwise */
	MCP_CONFINE_CHECK_NET,	/* the forbidden connect was not refused by Landlock */
	MCP_CONFINE_CHECK_SYSCALL,	/* the filtered call was not refused */
	MCP_CONFINE_CHECK_UID,	/* still uid 0 */
	MCP_CONFINE_CHECK_CAPS,	/* a capability left, effective or permitted */
	MCP_CONFINE_CHECK_UNIX,	/* the engine's uid kept, and a unix socket made */
	MCP_CONFINE_CHECK_GROUP,	/* a grandchild left the process group */
	MCP_CONFINE_TIE,	/* PR_SET_PDEATHSIG, or its starter already gone */
	MCP_CONFINE_CHECK_TASKS,	/* a session's uid, and RLIMIT_NPROC not its bound */
};

/*
 * In the child, between fork and exec: async-signal-safe system calls
 * only. MCP_CONFINE_OK, or the step that failed (errno set).
 */
enum mcp_confine_step mcp_confine_apply(const struct mcp_confine *cf);
/* Its fixed name for an error: "uid", "landlock", "seccomp", … */
const char *mcp_confine_step_name(int step);

#endif
