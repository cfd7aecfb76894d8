#ifndef AIRLOCK_WEAKEN_H
#define AIRLOCK_WEAKEN_H

/*
 * Docker-level mutants for the leak proofs (tests/docker/matrix.sh): each
 * removes exactly one protection from the create body, names the admission
 * check that must refuse it, and is on only in the mutant build with
 * AIRLOCK_MUTANT naming it (engine/base/mutant.h). In the production build
 * weaken_create_body never changes anything.
 *
 * Four more test-only switches live with them: admission_bypass (a refused
 * admission is reported, then ignored, so the leak can be observed),
 * keep_stopped (cleanup stops the container but leaves it for the
 * archive, log and state observers; the test removes it), pooled_run and
 * process_unchecked.
 */

#include <stdbool.h>

#include <jansson.h>

/*
 * gVisor's own network layer: runsc runs with --network=none, so under
 * runsc NetworkMode host alone reaches nothing. weak_runsc_net swaps in a
 * runtime registered with --network=host instead (scripts/daemon.json; it
 * is refused by the runtime check like any runtime but the profile's), so
 * each layer can be removed alone and both together.
 */
#define WEAK_RUNSC_RUNTIME "runsc-mutant-hostnet"

/*
 * Docker's NetworkDisabled (Config) and NetworkMode none (HostConfig) are
 * two layers too: with networking disabled the daemon ignores NetworkMode
 * (host included), so each is removed alone and both together.
 */

/*
 * airlock's runsc seccomp profile (engine/admission/seccomp.h) given to any runtime:
 * under runc it lets clone3 create a user namespace. Its value is built
 * from the embedded profile, not written here. runsc_default_seccomp is
 * no weakening but the state before issue #33: a runsc session on the
 * daemon's default profile, where clone3 answers EPERM and no thread
 * starts (tests/docker/threads.sh shows it, and that admission refuses it).
 */
#define WEAK_RUNSC_SECCOMP NULL

/* name, create-body key (HostConfig.X or top level), its weakened value (JSON), the check */
#define WEAKENINGS(_) \
	_(weak_network, "HostConfig.NetworkMode",    "\"host\"",                     "network_mode") \
	_(weak_netns,   "NetworkDisabled",           "false",                        "network_disabled") \
	_(weak_rootfs,  "HostConfig.ReadonlyRootfs", "false",                        "readonly_rootfs") \
	_(weak_logs,    "HostConfig.LogConfig",      "{\"Type\":\"json-file\",\"Config\":{}}", "log_config") \
	_(weak_ipc,     "HostConfig.IpcMode",        "\"shareable\"",                "ipc_mode") \
	_(weak_seccomp, "HostConfig.SecurityOpt",    "[\"no-new-privileges=true\",\"seccomp=unconfined\"]", "security_opt") \
	_(weak_runsc_net, "HostConfig.Runtime",      "\"" WEAK_RUNSC_RUNTIME "\"",  "runtime") \
	_(weak_nproc,   "HostConfig.Ulimits",        "[{\"Name\":\"core\",\"Soft\":0,\"Hard\":0}]", "ulimit_nproc") \
	_(weak_clone3,  "HostConfig.SecurityOpt",    WEAK_RUNSC_SECCOMP,              "seccomp") \
	_(runsc_default_seccomp, "HostConfig.SecurityOpt", "[\"no-new-privileges=true\"]", "seccomp")

/*
 * With upstream_only among the names too, only an upstream's container
 * (label io.airlock.upstream, engine/gateway/upstream_box.h) is weakened:
 * the agent's is admitted, so a test sees the upstream's admission refuse
 * (tests/docker/isolate.sh).
 */
/* Apply the weakening AIRLOCK_MUTANT names, if any (mutant build only). */
void weaken_create_body(json_t *body);

/* A refused admission goes ahead anyway (mutant admission_bypass). */
bool weaken_admission_bypassed(void);

/* Cleanup leaves the stopped container in place (mutant keep_stopped). */
bool weaken_keep_stopped(void);

/*
 * airlock run warms one container as a pool does and then claims it
 * (mutant pooled_run), so the matrix runs cases from a pooled container:
 * the same launch (engine/sandbox/warm.h) and the same claim with its second
 * admission (engine/session/session.c) as a pool of airlock serve. It changes no
 * protection.
 */
bool weaken_pooled_run(void);

/*
 * The checks of the container's process (running, restart_count,
 * exec_ids, process) pass unjudged, as admission was before them (mutant
 * process_unchecked): a pooled container killed and started again, or
 * one with an exec running, is claimed (tests/docker/test_pool.c).
 */
bool weaken_process_unchecked(void);

#endif
