#include "admission_int.h"

#include <stdio.h>
#include <string.h>

#include "jpath.h"
#include "weaken.h"

/*
 * The container's process (admission.h, enum admission_phase): the state
 * the daemon reports, not its configuration. Everything else admission
 * judges is fixed at create; this is what a `docker kill` and `docker
 * start`, a `docker restart` or a `docker exec` change while a container
 * waits in a pool.
 */

static enum admission_phase
phase_of(const struct ctx *x)
{
	return x->state ? x->state->phase : ADMISSION_PHASE_ANY;
}

/* Test build only: the second admission as it was before these checks. */
static bool
unchecked(struct verdict *v)
{
	if (!weaken_process_unchecked())
		return false;
	verdict_observe(v, true, "not judged (mutant process_unchecked)");
	return true;
}

static const char *const running_expected[] = {
	[ADMISSION_PHASE_ANY]     = "created, or running (not paused or restarting)",
	[ADMISSION_PHASE_CREATED] = "created, never started",
	[ADMISSION_PHASE_STARTED] = "running, not paused or restarting",
};

/* Status, and the three flags it is made of, all agree with the phase. */
void
admission_judge_running(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	enum admission_phase ph = phase_of(x);
	bool running, paused, restarting, created, live;
	const char *status;

	(void)k;
	verdict_expect(v, "%s", running_expected[ph]);
	if (unchecked(v) || !(status = jpath_need_str(x->c, "State.Status", v)) ||
	    !jpath_need_bool(x->c, "State.Running", v, &running) ||
	    !jpath_need_bool(x->c, "State.Paused", v, &paused) ||
	    !jpath_need_bool(x->c, "State.Restarting", v, &restarting))
		return;
	created = !running && !paused && !restarting && strcmp(status, "created") == 0;
	live = running && !paused && !restarting && strcmp(status, "running") == 0;
	verdict_observe(v, ph == ADMISSION_PHASE_CREATED ? created :
			   ph == ADMISSION_PHASE_STARTED ? live : created || live,
			"%s (Running %s, Paused %s, Restarting %s)", verdict_shown(status),
			running ? "true" : "false", paused ? "true" : "false",
			restarting ? "true" : "false");
}

/* Restart policy "no" (restart_policy): a count above 0 means it was changed and used. */
void
admission_judge_restart_count(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	json_int_t n;

	verdict_expect(v, "0");
	if (!unchecked(v) && jpath_need_int(x->c, k->path, v, &n))
		verdict_observe(v, n == 0, "%lld", (long long)n);
}

/*
 * An exec shares the agent's namespaces and uid: it could read the
 * agent's stdin, which carries the initial frame. The daemon lists an
 * exec only while it runs; null before the first.
 */
void
admission_judge_exec_ids(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	const json_t *j;

	verdict_expect(v, "none (null or [])");
	if (unchecked(v) || !(j = jpath_need(x->c, k->path, v)))
		return;
	if (json_is_null(j))
		verdict_observe(v, true, "null");
	else if (!json_is_array(j))
		verdict_observe(v, false, "wrong type");
	else
		verdict_observe(v, json_array_size(j) == 0, "%zu exec%s running",
				json_array_size(j), json_array_size(j) == 1 ? "" : "s");
}

int
admission_process_read(const json_t *container, struct admission_process *out)
{
	const json_t *state = json_object_get(container, "State");
	const json_t *pid = json_object_get(state, "Pid");
	const json_t *at = json_object_get(state, "StartedAt");
	const char *s = json_string_value(at);
	size_t i;

	memset(out, 0, sizeof *out);
	if (!json_is_true(json_object_get(state, "Running")) || !json_is_integer(pid) ||
	    json_integer_value(pid) <= 0 || !jpath_clean_string(at) ||
	    json_string_length(at) == 0 || json_string_length(at) >= sizeof out->started_at)
		return -1;
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return -1;
	out->pid = (long long)json_integer_value(pid);
	memcpy(out->started_at, s, strlen(s) + 1);
	return 0;
}

/* The first admission: no process yet. */
static void
judge_not_started(const struct ctx *x, struct verdict *v)
{
	json_int_t pid;

	verdict_expect(v, "none yet (Pid 0)");
	if (jpath_need_int(x->c, "State.Pid", v, &pid))
		verdict_observe(v, pid == 0, "Pid %lld", (long long)pid);
}

/* A pooled container's claim: the very process its launch started. */
static void
judge_recorded(const struct ctx *x, struct verdict *v)
{
	const struct admission_process *want = &x->state->start;
	struct admission_process seen;

	verdict_expect(v, "Pid %lld, started %s (recorded at its start)", want->pid,
		       want->started_at);
	if (admission_process_read(x->c, &seen) < 0)
		verdict_observe(v, false, "no running process");
	else
		verdict_observe(v, seen.pid == want->pid &&
				   strcmp(seen.started_at, want->started_at) == 0,
				"Pid %lld, started %s", seen.pid, seen.started_at);
}

/*
 * Pooled, the second admission compares the process with the one recorded
 * at the start. A cold session's second admission follows its start at
 * once: nothing was recorded in between, and running, restart_count and
 * exec_ids judge what could have happened.
 */
void
admission_judge_process(const struct ctx *x, const struct checker *k, struct verdict *v)
{
	enum admission_phase ph = phase_of(x);
	struct admission_process seen;

	(void)k;
	if (unchecked(v))
		return;
	if (ph == ADMISSION_PHASE_CREATED) {
		judge_not_started(x, v);
		return;
	}
	if (ph == ADMISSION_PHASE_STARTED && x->state->start.pid > 0) {
		judge_recorded(x, v);
		return;
	}
	verdict_expect(v, "not compared: no start recorded");
	if (!json_is_object(x->c))
		verdict_observe(v, false, "missing");
	else if (admission_process_read(x->c, &seen) < 0)
		verdict_observe(v, true, "no running process");
	else
		verdict_observe(v, true, "Pid %lld, started %s", seen.pid, seen.started_at);
}
