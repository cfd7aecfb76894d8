#ifndef AIRLOCK_WEAKEN_H
#define AIRLOCK_WEAKEN_H

/*
 * Docker-level mutants for the leak proofs (tests/docker/matrix.sh): each
 * removes exactly one protection from the create body, names the admission
 * check that must refuse it, and is on only in the mutant build with
 * AIRLOCK_MUTANT naming it (engine/mutant.h). In the production build
 * weaken_create_body never changes anything.
 *
 * Two more test-only switches live with them: admission_bypass (a refused
 * admission is reported, then ignored, so the leak can be observed) and
 * keep_stopped (cleanup stops the container but leaves it for the
 * archive, log and state observers; the test removes it).
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

/* name, HostConfig key, its weakened value (JSON), the check that refuses it */
#define WEAKENINGS(_) \
	_(weak_network, "NetworkMode",    "\"host\"",                                "network_mode") \
	_(weak_rootfs,  "ReadonlyRootfs", "false",                                   "readonly_rootfs") \
	_(weak_logs,    "LogConfig",      "{\"Type\":\"json-file\",\"Config\":{}}",  "log_config") \
	_(weak_ipc,     "IpcMode",        "\"shareable\"",                           "ipc_mode") \
	_(weak_seccomp, "SecurityOpt",    "[\"no-new-privileges=true\",\"seccomp=unconfined\"]", "security_opt") \
	_(weak_runsc_net, "Runtime",      "\"" WEAK_RUNSC_RUNTIME "\"",             "runtime") \
	_(weak_nproc,   "Ulimits",        "[{\"Name\":\"core\",\"Soft\":0,\"Hard\":0}]", "ulimit_nproc")

/* Apply the weakening AIRLOCK_MUTANT names, if any (mutant build only). */
void weaken_create_body(json_t *body);

/* A refused admission goes ahead anyway (mutant admission_bypass). */
bool weaken_admission_bypassed(void);

/* Cleanup leaves the stopped container in place (mutant keep_stopped). */
bool weaken_keep_stopped(void);

#endif
