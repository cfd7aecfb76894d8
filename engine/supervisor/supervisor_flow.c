/*
 * Class flow holds (supervisor.h, supervisor_flow_cutover_by; issue 43,
 * item 1): "CLASS>SINK" held on named sessions or on every one, a cutover
 * like a tool's hold. Each session's gate holds the pair by its own
 * config's ranks (gate.h); the standing set carries a hold on every
 * session to the sessions started later.
 */

#include "supervisor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "gate.h"

/* "a>b" into its two class names; -1 unless each is a non-empty name. */
static int
flow_split(const char *flow, char *cls, char *sink)
{
	const char *gt = flow ? strchr(flow, '>') : NULL;
	size_t n;

	if (!gt || strchr(gt + 1, '>'))
		return -1;
	n = (size_t)(gt - flow);
	if (n == 0 || n >= CLASS_NAME_MAX || !gt[1] || strlen(gt + 1) >= CLASS_NAME_MAX)
		return -1;
	memcpy(cls, flow, n);
	cls[n] = '\0';
	snprintf(sink, CLASS_NAME_MAX, "%s", gt + 1);
	return 0;
}

/* The flow's ranks in cfg's classes (-1 for a class it has not). */
static struct gate_flow
flow_ranks(const struct airlock_config *cfg, const char *flow)
{
	char cls[CLASS_NAME_MAX], sink[CLASS_NAME_MAX];

	if (flow_split(flow, cls, sink) < 0)
		return (struct gate_flow){ -1, -1 };
	return (struct gate_flow){ class_rank(&cfg->classes, cls), class_rank(&cfg->classes, sink) };
}

/* Under s->lock: does a held config, or the default list, have both classes? */
static bool
flow_known(const struct supervisor *s, const char *cls, const char *sink)
{
	struct class_list def;
	size_t i;

	class_list_default(&def);
	if (class_rank(&def, cls) >= 0 && class_rank(&def, sink) >= 0)
		return true;
	for (i = 0; i < s->n_slots; i++)
		if (class_rank(&s->slots[i]->cfg->classes, cls) >= 0 &&
		    class_rank(&s->slots[i]->cfg->classes, sink) >= 0)
			return true;
	return false;
}

/* Under s->policy: a flow hold on every session stands; a lift on every one ends it. */
static int
flow_standing(struct supervisor *s, enum cutover_op op, const char *flow)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_standing_flow && strcmp(s->standing_flow[i], flow) != 0; i++)
		;
	if (op == CUTOVER_RESTORE && i < s->n_standing_flow) {
		s->n_standing_flow--;
		memmove(s->standing_flow[i], s->standing_flow[i + 1],
			(s->n_standing_flow - i) * sizeof s->standing_flow[0]);
	} else if (op == CUTOVER_HOLD && i == s->n_standing_flow) {
		if (s->n_standing_flow == SNAP_FLOWS_MAX)
			rc = -1;
		else
			sup_copy_word(s->standing_flow[s->n_standing_flow++], SNAP_NAME_MAX, flow);
	}
	s->generation += rc == 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Under nothing: the flow valid and known, the sessions named as whole ids. */
static int
flow_names(struct supervisor *s, const char *flow, const char *const *ids, size_t n_ids,
	   char (*to)[SNAP_ID_MAX], struct al_err *err)
{
	char cls[CLASS_NAME_MAX], sink[CLASS_NAME_MAX];
	int rc;

	if (!flow || strlen(flow) >= SNAP_NAME_MAX || flow_split(flow, cls, sink) < 0)
		return al_fail(err, "cutover: %s", SUPERVISOR_E_FLOW);
	pthread_mutex_lock(&s->lock);
	if (!flow_known(s, cls, sink))
		rc = al_fail(err, "cutover: %s", SUPERVISOR_E_FLOW);
	else
		rc = ids ? sup_pick_ids(s, ids, n_ids, to, err) : 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Under s->policy: the revision, the standing set, a delta to each session. */
static int
flow_post(struct supervisor *s, enum cutover_op op, const char *flow, const char *const *ids,
	  size_t n_ids, const struct snap_author *by, int64_t *revision, size_t *targets,
	  struct al_err *err)
{
	struct slot *to[SUPERVISOR_SESSIONS_MAX];
	struct gate_flow f;
	size_t i, n = 0;

	if (!ids && flow_standing(s, op, flow) < 0)
		return al_fail(err, "cutover: %d class flows already stand held on every session",
			       SNAP_FLOWS_MAX);
	if (sup_cutover_open(s, op, flow, ids, n_ids, by, to, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		f = flow_ranks(to[i]->cfg, flow);
		gate_post_flow(to[i]->gate, s->revision, f.cls, f.sink, op == CUTOVER_HOLD);
	}
	sup_cutover_posted(s, n, revision, targets);
	return 0;
}

int
supervisor_flow_cutover_by(struct supervisor *s, enum cutover_op op, const char *flow,
			   const char *const *ids, size_t n_ids, const struct snap_author *by,
			   struct cutover_done *done, struct al_err *err)
{
	char (*named)[SNAP_ID_MAX] = NULL;
	struct cutover_done own;
	const char **p = NULL;
	size_t i;
	int rc;

	if (op != CUTOVER_HOLD && op != CUTOVER_RESTORE)
		return al_fail(err, "cutover: only hold or restore names a class flow");
	if (ids && n_ids > SUPERVISOR_SESSIONS_MAX)
		return al_fail(err, "cutover: more than %d sessions named", SUPERVISOR_SESSIONS_MAX);
	if (ids && (!(named = calloc(n_ids ? n_ids : 1, sizeof *named)) ||
		    !(p = calloc(n_ids ? n_ids : 1, sizeof *p)))) {
		free(named);
		return al_fail(err, "out of memory");
	}
	if (!done)
		done = &own;
	sup_copy_word(done->tool, sizeof done->tool, flow);
	rc = flow_names(s, flow, ids, n_ids, named, err);
	for (i = 0; p && i < n_ids; i++)
		p[i] = named[i];
	if (rc == 0) {
		pthread_mutex_lock(&s->policy);
		rc = flow_post(s, op, flow, ids ? p : NULL, n_ids, by ? by : &s->self,
			       &done->revision, &done->targets, err);
		pthread_mutex_unlock(&s->policy);
	}
	free(p);
	free(named);
	return rc;
}

void
sup_flow_start(struct supervisor *s, struct slot *sl)
{
	struct policy_entry p = { .revision = s->revision, .by = s->self };
	struct gate_flow f;
	size_t i;

	sup_copy_word(p.session, sizeof p.session, sl->id);
	for (i = 0; i < s->n_standing_flow; i++) {
		f = flow_ranks(sl->cfg, s->standing_flow[i]);
		p.result = gate_set_flow_held(sl->gate, f.cls, f.sink, s->revision)
			   ? CUTOVER_APPLIED : CUTOVER_NOT_APPLICABLE;
		sup_copy_word(p.tool, sizeof p.tool, s->standing_flow[i]);
		snprintf(p.rule, sizeof p.rule, "%s at start%s", cutover_op_id(CUTOVER_HOLD),
			 p.result == CUTOVER_APPLIED ? "" : ": not applicable");
		sup_policy_record(s, &p);
	}
}
