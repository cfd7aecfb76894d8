#ifndef AIRLOCK_ADMISSION_INT_H
#define AIRLOCK_ADMISSION_INT_H

/*
 * What the admission files share (admission.c holds the table and runs
 * it; admission_limits.c, admission_exec.c and admission_state.c hold
 * families of checks).
 * Not for other callers: admission.h is the checker's interface.
 */

#include <jansson.h>

#include "admission.h"
#include "verdict.h"

/* What every check sees. */
struct ctx {
	const json_t *c;	/* the container */
	const json_t *img;	/* its image; may be NULL */
	const struct profile *p;
	const struct host_facts *host;	/* may be NULL */
	const struct sealed_verdict *sealed;	/* may be NULL */
	const struct admission_state *state;	/* NULL: ADMISSION_PHASE_ANY */
};

struct checker;

/* A check: what it expects and what it observed go into v. */
typedef void admission_judge_fn(const struct ctx *x, const struct checker *k,
				struct verdict *v);

/* One row of the table: a check, with what the generic checks need. */
struct checker {
	admission_judge_fn *fn;
	const char *path;	/* dotted JSON path, for the generic checks */
	const char *want;	/* the value the generic checks expect */
};

/* admission_limits.c: ulimits and resources. */
admission_judge_fn admission_judge_ulimit_core, admission_judge_ulimits_other,
	admission_judge_ulimit_nproc, admission_judge_pids_limit, admission_judge_memory,
	admission_judge_memory_swap, admission_judge_nano_cpus;

/* admission_exec.c: what the container runs, and with which environment. */
admission_judge_fn admission_judge_entrypoint, admission_judge_cmd, admission_judge_env;

/* admission_state.c: the container's process, by the admission's phase. */
admission_judge_fn admission_judge_running, admission_judge_restart_count,
	admission_judge_exec_ids, admission_judge_process;

#endif
