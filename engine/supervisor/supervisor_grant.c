/*
 * Time-boxed grants (supervisor.h, supervisor_grant): the table
 * (grant.h) under grant_lock, the gates' meter that spends a call
 * budget, the sessions each grant covers (slot->grant), and the lapse:
 * a revoke authored by the expiry, posted by the keeper thread.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "gate.h"
#include "grant.h"

/* Under grant_lock: the budgets' count for the meters' lock-free look. */
static void
budgets_publish(struct supervisor *s)
{
	atomic_store(&s->grant_budgets, s->grants.budgets);
}

/* ---- the meter (under a gate's lock) ---- */

static enum gate_meter_answer
meter_spend(void *ctx, int tool)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	enum grant_spend r;

	/* No budget anywhere: a call costs one atomic load, no lock. */
	if (atomic_load(&s->grant_budgets) == 0 || tool < 0 || tool >= GATE_TOOLS_MAX)
		return GATE_METER_FREE;
	pthread_mutex_lock(&s->grant_lock);
	r = grant_spend(&s->grants, sl->grant[tool]);
	budgets_publish(s);
	pthread_mutex_unlock(&s->grant_lock);
	return grant_meter_answer(r);
}

/* The last call of a budget was admitted: the keeper lapses the grant now. */
static void
meter_spent(void *ctx, int tool)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;

	(void)tool;
	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->keeper_cond);
	pthread_mutex_unlock(&s->lock);
}

struct gate_meter
sup_grant_meter(struct slot *sl)
{
	return (struct gate_meter){ .spend = meter_spend, .spent = meter_spent, .ctx = sl };
}

/* ---- starting and ending grants (under s->policy) ---- */

bool
sup_grant_room(struct supervisor *s, const char *tool)
{
	size_t i, used = 0;
	bool room;

	pthread_mutex_lock(&s->grant_lock);
	for (i = 0; i < GRANT_MAX; i++)
		used += s->grants.g[i].serial != 0;
	room = used < GRANT_MAX || grant_of(&s->grants, tool) != NULL;
	pthread_mutex_unlock(&s->grant_lock);
	return room;
}

int
sup_grant_cutover(struct supervisor *s, enum cutover_op op, const char *tool, bool all,
		  const struct grant_terms *terms, struct slot *const *to, size_t n,
		  const struct snap_author *by)
{
	char rule[SNAP_WORD_MAX], what[32];
	uint64_t serial = 0;
	size_t i;
	int t;

	pthread_mutex_lock(&s->grant_lock);
	grant_drop(&s->grants, tool);
	if (op == CUTOVER_RESTORE && terms)
		serial = grant_set(&s->grants, tool, all, clock_mono_ms(), terms->for_s,
				   terms->calls, s->revision);
	for (i = 0; serial && i < n; i++)
		if ((t = config_tool_index(to[i]->cfg, tool)) >= 0)
			to[i]->grant[t] = serial;
	budgets_publish(s);
	pthread_mutex_unlock(&s->grant_lock);
	if (!terms)
		return 0;
	if (!serial)
		return -1;	/* sup_grant_room said there was room: not reached */
	/* The keeper may sleep past the new end: it reckons again now. */
	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->keeper_cond);
	pthread_mutex_unlock(&s->lock);
	grant_terms_text(terms->for_s, terms->calls, what, sizeof what);
	snprintf(rule, sizeof rule, "grant: %s", what);
	sup_policy_note(s, by, tool, rule, s->revision);
	return 0;
}

void
sup_grant_start(struct supervisor *s, struct slot *sl)
{
	size_t i;
	int t;

	pthread_mutex_lock(&s->grant_lock);
	for (i = 0; i < GRANT_MAX; i++) {
		const struct grant *g = &s->grants.g[i];

		if (g->serial && g->all && (t = config_tool_index(sl->cfg, g->tool)) >= 0)
			sl->grant[t] = g->serial;
	}
	pthread_mutex_unlock(&s->grant_lock);
}

/* ---- the lapse ---- */

bool
sup_grant_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms)
{
	struct grant g;
	int due;

	pthread_mutex_lock(&s->grant_lock);
	due = grant_due(&s->grants, now_ms, &g, next_ms);
	pthread_mutex_unlock(&s->grant_lock);
	return due == 1;
}

/* The sessions a named grant covers, live, as ids. */
struct covered {
	char id[SUPERVISOR_SESSIONS_MAX][SNAP_ID_MAX];
	const char *p[SUPERVISOR_SESSIONS_MAX];
	size_t n;
};

/* Under s->policy: a due grant, and the live sessions it covers (none when on all). */
static bool
lapse_find(struct supervisor *s, struct grant *g, struct covered *c)
{
	int64_t next = INT64_MAX;
	size_t i;
	int t;
	bool due;

	c->n = 0;
	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&s->grant_lock);
	due = grant_due(&s->grants, clock_mono_ms(), g, &next) == 1;
	for (i = 0; due && !g->all && i < s->n_slots; i++) {
		struct slot *sl = s->slots[i];

		t = config_tool_index(sl->cfg, g->tool);
		if (!sl->ended && t >= 0 && sl->grant[t] == g->serial) {
			memcpy(c->id[c->n], sl->id, SNAP_ID_MAX);
			c->p[c->n] = c->id[c->n];
			c->n++;
		}
	}
	pthread_mutex_unlock(&s->grant_lock);
	pthread_mutex_unlock(&s->lock);
	return due;
}

void
sup_grant_expiry_author(const struct supervisor *s, struct snap_author *a)
{
	*a = s->self;
	sup_copy_word(a->user, sizeof a->user, "expiry");
	sup_copy_word(a->via, sizeof a->via, "grant");
}

void
sup_grant_lapse(struct supervisor *s)
{
	struct covered *c = calloc(1, sizeof *c);
	struct snap_author by;
	char rule[SNAP_WORD_MAX];
	struct al_err err;
	struct grant g;
	int guard;

	if (!c)
		return;	/* the keeper looks again at its next turn */
	sup_grant_expiry_author(s, &by);
	/* Each lapse drops its grant: at most one turn a grant the table holds. */
	for (guard = 0; guard < GRANT_MAX; guard++) {
		pthread_mutex_lock(&s->policy);
		if (!lapse_find(s, &g, c)) {
			pthread_mutex_unlock(&s->policy);
			break;
		}
		snprintf(rule, sizeof rule, "grant lapsed: %s", grant_lapse_why(&g));
		sup_policy_note(s, &by, g.tool, rule, s->revision + 1);	/* the lapse's */
		sup_cutover_locked(s, CUTOVER_REVOKE, g.tool, g.all ? NULL : c->p, c->n, &by, NULL,
				   true, NULL, NULL, &err);
		pthread_mutex_unlock(&s->policy);
	}
	free(c);
}

size_t
sup_grant_all(struct supervisor *s, char (*tool)[SNAP_NAME_MAX], int64_t *revision, size_t max)
{
	size_t i, n = 0;

	pthread_mutex_lock(&s->grant_lock);
	for (i = 0; i < GRANT_MAX && n < max; i++)
		if (s->grants.g[i].serial && s->grants.g[i].all) {
			sup_copy_word(tool[n], SNAP_NAME_MAX, s->grants.g[i].tool);
			revision[n++] = s->grants.g[i].revision;
		}
	pthread_mutex_unlock(&s->grant_lock);
	return n;
}

/* ---- what the console sees ---- */

void
sup_grant_row(struct supervisor *s, struct slot *sl, struct session_row *r, int64_t now_ms)
{
	const struct grant *g;
	size_t i;

	pthread_mutex_lock(&s->grant_lock);
	for (i = 0; i < r->n_tools && i < GATE_TOOLS_MAX; i++) {
		g = r->tools[i].allowed ? grant_find(&s->grants, sl->grant[i]) : NULL;
		r->tools[i].granted = g != NULL;
		r->tools[i].grant_calls = -1;
		r->tools[i].grant_ms = -1;
		if (g)
			grant_left(g, now_ms, &r->tools[i].grant_calls, &r->tools[i].grant_ms);
	}
	pthread_mutex_unlock(&s->grant_lock);
}
