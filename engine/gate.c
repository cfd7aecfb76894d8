#include "gate.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/*
 * Fixed ack texts. An update comes from the operator, never from an agent,
 * but the texts stay fixed anyway so nothing of the update is echoed back.
 */
#define WHY_APPLIED		"applied"
#define WHY_STALE		"stale revision"
#define WHY_NOT_APPROVED	"tool not approved"
#define WHY_UNKNOWN		"unknown tool"
#define WHY_MALFORMED		"malformed update"

int
gate_init(struct gate *g, const bool *approved, size_t n)
{
	size_t i;

	if (n > GATE_TOOLS_MAX || (n > 0 && !approved))
		return -1;
	memset(g, 0, sizeof *g);
	for (i = 0; i < n; i++)
		g->approved[i] = g->allowed[i] = approved[i];
	g->n_tools = n;
	g->open = true;
	if (pthread_mutex_init(&g->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&g->changed, NULL) != 0) {
		pthread_mutex_destroy(&g->lock);
		return -1;
	}
	return 0;
}

void
gate_destroy(struct gate *g)
{
	pthread_cond_destroy(&g->changed);
	pthread_mutex_destroy(&g->lock);
}

/*
 * Under the lock. approved is checked as well as allowed so that a bad
 * allowed[] could never admit a tool outside the frozen set.
 */
static bool
gate_tool_allowed(const struct gate *g, int tool)
{
	return tool >= 0 && (size_t)tool < g->n_tools &&
	       g->approved[tool] && g->allowed[tool];
}

enum policy_rule
gate_begin(struct gate *g, int tool, int64_t *revision)
{
	enum policy_rule rule = RULE_ALLOWED;

	pthread_mutex_lock(&g->lock);
	/*
	 * Waiting for pending updates too is what queues a call behind an
	 * update that arrived first: it decides on the new set, never the old.
	 */
	while (g->busy || g->pending > 0)
		pthread_cond_wait(&g->changed, &g->lock);
	if (!g->open)
		rule = RULE_GATE_CLOSED;
	else if (!gate_tool_allowed(g, tool))
		rule = RULE_REVOKED;
	else
		g->busy = true;
	if (revision)
		*revision = g->revision;
	pthread_mutex_unlock(&g->lock);
	return rule;
}

void
gate_end(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->busy = false;
	/* Both updates and queued calls wait on the one condition. */
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
}

static int64_t
gate_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Why the update cannot apply, or NULL when it can. Under the lock and
 * after the wait: the revision to beat is the one current at apply time.
 */
static const char *
gate_check(const struct gate *g, int64_t revision, const bool *allowed, size_t n)
{
	size_t i;

	/* The approved set is frozen: an update of another size is no update. */
	if (n != g->n_tools || (n > 0 && !allowed))
		return WHY_MALFORMED;
	if (revision <= g->revision)
		return WHY_STALE;
	for (i = 0; i < n; i++)
		if (allowed[i] && !g->approved[i])
			return WHY_NOT_APPROVED;
	return NULL;
}

/* Under the lock: apply the update, or close admission when why is set. */
static void
gate_settle(struct gate *g, int64_t revision, const bool *allowed, const char *why)
{
	size_t i;

	if (why) {
		/* The revision stays: only a valid newer one may reopen. */
		g->open = false;
		g->updates_rejected++;
		return;
	}
	for (i = 0; i < g->n_tools; i++)
		g->allowed[i] = allowed[i];
	g->revision = revision;
	g->open = true;
	g->updates_applied++;
}

/*
 * Every update, valid or not, goes through here: it waits for the
 * in-flight call, so even a rejection takes effect between two calls.
 * why, when set, is a rejection already decided by the caller.
 */
static void
gate_apply(struct gate *g, int64_t revision, const bool *allowed, size_t n,
	   const char *why, struct gate_ack *ack)
{
	struct gate_ack a = { 0 };
	int64_t t0;

	pthread_mutex_lock(&g->lock);
	g->pending++;
	t0 = gate_now_us();
	while (g->busy)
		pthread_cond_wait(&g->changed, &g->lock);
	a.waited_us = gate_now_us() - t0;
	if (!why)
		why = gate_check(g, revision, allowed, n);
	gate_settle(g, revision, allowed, why);
	g->pending--;
	a.verdict = why ? GATE_REJECTED : GATE_APPLIED;
	a.revision = g->revision;
	a.open = g->open;
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
	snprintf(a.reason, sizeof a.reason, "%s", why ? why : WHY_APPLIED);
	if (ack)
		*ack = a;
}

void
gate_update(struct gate *g, int64_t revision, const bool *allowed, size_t n,
	    struct gate_ack *ack)
{
	gate_apply(g, revision, allowed, n, NULL, ack);
}

/* Mark the tool called name as allowed. Duplicates are harmless. */
static const char *
gate_mark(const json_t *name, const char *const *names, size_t n, bool *allowed)
{
	const char *s = json_string_value(name);
	size_t i, len = json_string_length(name);

	if (!s)
		return WHY_MALFORMED;
	/* Compare lengths too: "store\u0000x" must not pass as "store". */
	for (i = 0; i < n; i++)
		if (names[i] && strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
			allowed[i] = true;
			return NULL;
		}
	return WHY_UNKNOWN;
}

/* {"revision": <integer>, "allowed": [names]} into revision and allowed[]. */
static const char *
gate_parse(const json_t *update, const char *const *names, size_t n,
	   int64_t *revision, bool *allowed)
{
	json_t *rev, *list, *name;
	const char *why;
	size_t i;

	if (!json_is_object(update) || json_object_size(update) != 2)
		return WHY_MALFORMED;
	rev = json_object_get(update, "revision");
	list = json_object_get(update, "allowed");
	/* json_is_integer is false for 2.0: a revision is never a real. */
	if (!json_is_integer(rev) || !json_is_array(list))
		return WHY_MALFORMED;
	*revision = json_integer_value(rev);
	json_array_foreach(list, i, name)
		if ((why = gate_mark(name, names, n, allowed)))
			return why;
	return NULL;
}

void
gate_update_json(struct gate *g, const json_t *update, const char *const *names,
		 size_t n, struct gate_ack *ack)
{
	bool allowed[GATE_TOOLS_MAX] = { false };
	const char *why = WHY_MALFORMED;
	int64_t revision = 0;

	if (names && n <= GATE_TOOLS_MAX)
		why = gate_parse(update, names, n, &revision, allowed);
	/* A malformed update still closes admission, in turn like any other. */
	gate_apply(g, revision, allowed, n, why, ack);
}

void
gate_read(struct gate *g, int64_t *revision, bool *open, bool *allowed, size_t n)
{
	size_t i;

	pthread_mutex_lock(&g->lock);
	if (revision)
		*revision = g->revision;
	if (open)
		*open = g->open;
	for (i = 0; allowed && i < n; i++)
		allowed[i] = i < g->n_tools && g->allowed[i];
	pthread_mutex_unlock(&g->lock);
}
