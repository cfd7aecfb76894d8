#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "grant.h"

/*
 * The live policy gate with real threads. Threads are sequenced by state
 * the test can observe (the gate's pending count under its lock, a
 * thread's scheduler state in /proc), polled with a bounded wait; no sleep
 * is ever what makes an assertion true. Worker threads never call cmocka
 * asserts (they longjmp): they record what happened and the main thread
 * checks it after the join.
 */

enum { READ, STORE, MAIL, SHELL, N_TOOLS };

static const char *const names[N_TOOLS] = { "read", "store", "mail", "shell" };
/* shell is in the catalog but not approved for the session */
static const bool approved[N_TOOLS] = { true, true, true, false };

/* Sets of tools as bit masks, so a test line can say which set it means. */
enum {
	M_READ = 1u << READ,
	M_STORE = 1u << STORE,
	M_MAIL = 1u << MAIL,
	M_SHELL = 1u << SHELL,
	ALL_APPROVED = M_READ | M_STORE | M_MAIL,
};

static int
setup(void **state)
{
	struct gate *g = gate_new(approved, N_TOOLS);

	if (!g)
		return -1;
	*state = g;
	return 0;
}

static int
teardown(void **state)
{
	gate_free(*state);
	return 0;
}

static struct gate_state
state_of(struct gate *g)
{
	struct gate_state st;

	gate_state(g, &st);
	return st;
}

static void
to_set(unsigned bits, bool *allowed)
{
	int t;

	for (t = 0; t < N_TOOLS; t++)
		allowed[t] = bits & (1u << t);
}

static void
update(struct gate *g, int64_t revision, unsigned bits, struct gate_ack *ack)
{
	bool allowed[N_TOOLS];

	to_set(bits, allowed);
	gate_update(g, revision, allowed, N_TOOLS, ack);
}

static void
update_json(struct gate *g, const char *text, struct gate_ack *ack)
{
	json_t *u = json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_ANY, NULL);

	if (!u)
		fail_msg("test JSON does not load: %s", text);
	gate_update_json(g, u, names, N_TOOLS, ack);
	json_decref(u);
}

static void
assert_ack(const struct gate_ack *ack, enum gate_verdict v, const char *reason,
	   int64_t revision, bool open)
{
	assert_int_equal(ack->verdict, v);
	assert_string_equal(ack->reason, reason);
	assert_int_equal(ack->revision, revision);
	assert_int_equal(ack->open, open);
}

/* One call to tool; an admitted call is ended at once. */
static enum policy_rule
call(struct gate *g, int tool, int64_t *revision)
{
	enum policy_rule r = gate_begin(g, tool, revision);

	if (r == RULE_ALLOWED)
		gate_end(g);
	return r;
}

/* Exactly the tools in bits are admitted, at revision; out-of-range ones never. */
static void
assert_admits(struct gate *g, unsigned bits, int64_t revision)
{
	int64_t rev;
	int t;

	for (t = -1; t <= N_TOOLS; t++) {
		bool in = t >= 0 && t < N_TOOLS && (bits & (1u << t));

		rev = -1;
		assert_int_equal(call(g, t, &rev), in ? RULE_ALLOWED : RULE_REVOKED);
		assert_int_equal(rev, revision);
	}
}

/* Admission is closed: every tool, approved or not, is denied as such. */
static void
assert_closed(struct gate *g, int64_t revision)
{
	int64_t rev;
	bool open = true;
	int t;

	for (t = -1; t <= N_TOOLS; t++) {
		rev = -1;
		assert_int_equal(call(g, t, &rev), RULE_GATE_CLOSED);
		assert_int_equal(rev, revision);
	}
	gate_read(g, &rev, &open, NULL, 0);
	assert_false(open);
	assert_int_equal(rev, revision);
}

/* ---- sequencing helpers for the threaded tests ---- */

/* Poll cond for up to 10 s: a bound for a hung test, never a timing assumption. */
static bool
wait_until(bool (*cond)(void *), void *arg)
{
	const struct timespec tick = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000; i++) {
		if (cond(arg))
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

static bool
one_pending(void *arg)
{
	struct gate_state st;

	gate_state(arg, &st);
	return st.updates_waiting == 1;
}

struct caller {
	struct gate *g;
	int tool;
	atomic_int tid;		/* atomic so helgrind, blind to C11 fences, sees no race */
	atomic_bool entered, done;
	enum policy_rule rule;
	int64_t revision;
};

static void *
caller_main(void *arg)
{
	struct caller *c = arg;

	atomic_store(&c->tid, (int)syscall(SYS_gettid));
	atomic_store(&c->entered, true);
	c->rule = gate_begin(c->g, c->tool, &c->revision);
	if (c->rule == RULE_ALLOWED)
		gate_end(c->g);
	atomic_store(&c->done, true);
	return NULL;
}

/*
 * The caller went to sleep inside gate_begin: entered is set just before
 * the call, and the only thing it can sleep on after that is the gate.
 */
static bool
caller_blocked(void *arg)
{
	struct caller *c = arg;
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (!atomic_load(&c->entered))
		return false;
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", atomic_load(&c->tid));
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');		/* the name in (…) may hold spaces */
	return p && p[1] == ' ' && p[2] == 'S';
}

struct updater {
	struct gate *g;
	int64_t revision;
	unsigned bits;
	const char *json;	/* when set, through gate_update_json */
	atomic_bool done;
	struct gate_ack ack;
};

static void *
updater_main(void *arg)
{
	struct updater *u = arg;
	bool allowed[N_TOOLS];
	json_t *j;

	if (u->json) {
		j = json_loads(u->json, 0, NULL);
		gate_update_json(u->g, j, names, N_TOOLS, &u->ack);
		json_decref(j);
	} else {
		to_set(u->bits, allowed);
		gate_update(u->g, u->revision, allowed, N_TOOLS, &u->ack);
	}
	atomic_store(&u->done, true);
	return NULL;
}

/* ---- tests ---- */

static void
test_initial(void **state)
{
	struct gate *g = *state;
	bool allowed[N_TOOLS + 2];
	int64_t rev = -1;
	bool open = false;

	gate_read(g, &rev, &open, allowed, N_TOOLS + 2);
	assert_int_equal(rev, 0);
	assert_true(open);
	assert_true(allowed[READ] && allowed[STORE] && allowed[MAIL]);
	assert_false(allowed[SHELL]);
	assert_false(allowed[N_TOOLS] || allowed[N_TOOLS + 1]);	/* past n_tools */
	assert_admits(g, ALL_APPROVED, 0);
}

static void
test_revoke_idle(void **state)
{
	struct gate *g = *state;
	struct gate_ack ack;
	bool allowed[N_TOOLS];
	int64_t rev;

	update(g, 1, ALL_APPROVED & ~M_STORE, &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 1, true);
	assert_true(ack.waited_us >= 0);
	assert_int_equal(gate_begin(g, STORE, &rev), RULE_REVOKED);
	assert_int_equal(rev, 1);
	assert_admits(g, ALL_APPROVED & ~M_STORE, 1);
	gate_read(g, &rev, NULL, allowed, N_TOOLS);
	assert_false(allowed[STORE]);

	update(g, 2, ALL_APPROVED, &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 2, true);
	assert_int_equal(gate_begin(g, STORE, &rev), RULE_ALLOWED);
	assert_int_equal(rev, 2);
	gate_end(g);
	assert_int_equal(state_of(g).updates_applied, 2);
	assert_int_equal(state_of(g).updates_rejected, 0);
}

enum { QUEUED = 4 };

/* Start n callers on store, each one asleep in gate_begin before the next. */
static void
queue_callers(struct gate *g, struct caller *c, pthread_t *t, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		c[i] = (struct caller){ .g = g, .tool = STORE, .revision = -1 };
		assert_int_equal(pthread_create(&t[i], NULL, caller_main, &c[i]), 0);
		assert_true(wait_until(caller_blocked, &c[i]));
	}
}

/* Every queued caller was decided by revision 1, where store is revoked. */
static void
join_revoked(struct caller *c, pthread_t *t, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(c[i].rule, RULE_REVOKED);
		assert_int_equal(c[i].revision, 1);
	}
}

/*
 * The main thread is call A, in flight on store. B revokes store and must
 * wait for A; callers C on store arrive after B is pending and must be
 * queued behind B, so they are decided by revision 1 (revoked), never by
 * revision 0. Several of them, so that a gate letting them race B for the
 * lock would lose that race at least once.
 */
static void
test_inflight_holds_update(void **state)
{
	struct gate *g = *state;
	struct updater b = { .g = g, .revision = 1, .bits = ALL_APPROVED & ~M_STORE };
	struct caller c[QUEUED];
	pthread_t tb, tc[QUEUED];
	bool allowed[N_TOOLS], open;
	int64_t rev;
	int i;

	assert_int_equal(gate_begin(g, STORE, &rev), RULE_ALLOWED);
	assert_int_equal(pthread_create(&tb, NULL, updater_main, &b), 0);
	assert_true(wait_until(one_pending, g));

	/* The update has not applied while A holds the gate. */
	gate_read(g, &rev, &open, allowed, N_TOOLS);
	assert_int_equal(rev, 0);
	assert_true(open && allowed[STORE]);
	assert_false(atomic_load(&b.done));

	queue_callers(g, c, tc, QUEUED);
	for (i = 0; i < QUEUED; i++)
		assert_false(atomic_load(&c[i].done));
	assert_true(one_pending(g));
	assert_false(atomic_load(&b.done));

	gate_end(g);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_ack(&b.ack, GATE_APPLIED, "applied", 1, true);
	assert_true(b.ack.waited_us > 0);
	join_revoked(c, tc, QUEUED);
	assert_int_equal(state_of(g).updates_waiting, 0);
	assert_false(state_of(g).busy);
}

/*
 * Callers D were already queued behind call A when update B arrived. B
 * still goes next: a revocation takes effect at the next call boundary,
 * never after the backlog of calls that happened to be waiting.
 */
static void
test_update_overtakes_queue(void **state)
{
	struct gate *g = *state;
	struct updater b = { .g = g, .revision = 1, .bits = ALL_APPROVED & ~M_STORE };
	struct caller d[QUEUED];
	pthread_t tb, td[QUEUED];
	int64_t rev;

	assert_int_equal(gate_begin(g, READ, &rev), RULE_ALLOWED);
	queue_callers(g, d, td, QUEUED);
	assert_int_equal(pthread_create(&tb, NULL, updater_main, &b), 0);
	assert_true(wait_until(one_pending, g));

	gate_end(g);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_ack(&b.ack, GATE_APPLIED, "applied", 1, true);
	join_revoked(d, td, QUEUED);
}

/* A rejected update waits for the in-flight call too: the call finishes under the old rules. */
static void
test_inflight_holds_rejection(void **state)
{
	struct gate *g = *state;
	struct updater b = { .g = g, .json = "{\"revision\":\"1\",\"allowed\":[]}" };
	pthread_t tb;
	int64_t rev;
	bool open;

	assert_int_equal(gate_begin(g, READ, &rev), RULE_ALLOWED);
	assert_int_equal(pthread_create(&tb, NULL, updater_main, &b), 0);
	assert_true(wait_until(one_pending, g));
	gate_read(g, &rev, &open, NULL, 0);
	assert_true(open);
	gate_end(g);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_ack(&b.ack, GATE_REJECTED, "malformed update", 0, false);
	assert_true(b.ack.waited_us > 0);
	assert_closed(g, 0);
}

/* After a rejection at revision cur: closed, then a valid cur + 1 reopens with its set. */
static void
assert_reopens(struct gate *g, int64_t *cur, unsigned bits)
{
	struct gate_ack ack;

	assert_closed(g, *cur);
	update(g, ++*cur, bits, &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", *cur, true);
	assert_admits(g, bits, *cur);
}

static void
test_invalid_binary(void **state)
{
	struct gate *g = *state;
	struct gate_ack ack;
	int64_t cur = 0;

	update(g, 0, ALL_APPROVED, &ack);		/* equal to the current one */
	assert_ack(&ack, GATE_REJECTED, "stale revision", 0, false);
	assert_reopens(g, &cur, M_READ);

	update(g, 5, M_MAIL, &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 5, true);
	cur = 5;
	update(g, 3, ALL_APPROVED, &ack);		/* lower */
	assert_ack(&ack, GATE_REJECTED, "stale revision", 5, false);
	assert_reopens(g, &cur, M_STORE | M_MAIL);

	update(g, -1, ALL_APPROVED, &ack);
	assert_ack(&ack, GATE_REJECTED, "stale revision", cur, false);
	assert_reopens(g, &cur, ALL_APPROVED);

	update(g, cur + 1, M_READ | M_SHELL, &ack);	/* outside the approved set */
	assert_ack(&ack, GATE_REJECTED, "tool not approved", cur, false);
	assert_reopens(g, &cur, 0);				/* everything revoked */

	/* Still closed after a second rejection in a row; stale while closed too. */
	update(g, cur, ALL_APPROVED, &ack);
	update(g, cur - 1, ALL_APPROVED, &ack);
	assert_ack(&ack, GATE_REJECTED, "stale revision", cur, false);
	assert_reopens(g, &cur, M_READ);
	assert_int_equal(state_of(g).updates_rejected, 6);
}

static void
test_invalid_json(void **state)
{
	static const struct {
		const char *json;
		const char *reason;
	} bad[] = {
		/* 100 would be a valid revision: only the defect may reject these */
		{ "{\"revision\":\"100\",\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":2.5,\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":100.0,\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":null,\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":true,\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":100}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":\"read\"}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":{\"read\":true}}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":null}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":[1]}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":[[\"read\"]]}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":[\"read\"],\"extra\":1}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":[\"read\"],\"tool\":\"store\"}", "malformed update" },
		{ "{\"Revision\":100,\"allowed\":[\"read\"]}", "malformed update" },
		{ "{\"revision\":100,\"Allowed\":[\"read\"]}", "malformed update" },
		{ "[100,[\"read\"]]", "malformed update" },
		{ "\"revision\"", "malformed update" },
		{ "{}", "malformed update" },
		{ "{\"revision\":100,\"allowed\":[\"read\",\"nope\"]}", "unknown tool" },
		{ "{\"revision\":100,\"allowed\":[\"Read\"]}", "unknown tool" },
		{ "{\"revision\":100,\"allowed\":[\"\"]}", "unknown tool" },
		{ "{\"revision\":100,\"allowed\":[\"read\\u0000x\"]}", "unknown tool" },
		{ "{\"revision\":100,\"allowed\":[\"rea\"]}", "unknown tool" },
		{ "{\"revision\":100,\"allowed\":[\"read\",\"shell\"]}", "tool not approved" },
		{ "{\"revision\":1,\"allowed\":[\"read\"]}", "stale revision" },
	};
	static const unsigned sets[] = {
		M_READ, M_READ | M_STORE, M_STORE | M_MAIL, ALL_APPROVED, 0,
	};
	struct gate *g = *state;
	struct gate_ack ack;
	int64_t cur = 1;
	size_t i;

	update(g, cur, ALL_APPROVED, &ack);
	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		update_json(g, bad[i].json, &ack);
		if (ack.verdict != GATE_REJECTED || strcmp(ack.reason, bad[i].reason) != 0)
			fail_msg("%s: %s", bad[i].json, ack.reason);
		assert_ack(&ack, GATE_REJECTED, bad[i].reason, cur, false);
		assert_reopens(g, &cur, sets[i % 5]);
	}
	gate_update_json(g, NULL, names, N_TOOLS, &ack);
	assert_ack(&ack, GATE_REJECTED, "malformed update", cur, false);
	assert_closed(g, cur);
}

static void
test_valid_json(void **state)
{
	struct gate *g = *state;
	struct gate_ack ack;

	/* Duplicates are fine; an empty list revokes everything. */
	update_json(g, "{\"allowed\":[\"mail\",\"read\",\"mail\"],\"revision\":3}", &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 3, true);
	assert_admits(g, M_READ | M_MAIL, 3);
	update_json(g, "{\"revision\":4,\"allowed\":[]}", &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 4, true);
	assert_admits(g, 0, 4);
	update_json(g, "{\"revision\":9007199254740993,\"allowed\":[\"store\"]}", &ack);
	assert_ack(&ack, GATE_APPLIED, "applied", 9007199254740993LL, true);
	assert_admits(g, M_STORE, 9007199254740993LL);
}

/* Restoring never widens the approved set, and the set's size is frozen. */
static void
test_approved_frozen(void **state)
{
	struct gate *g = *state;
	bool allowed[N_TOOLS + 1] = { true, true, true, false, true };
	struct gate_ack ack;
	int64_t cur = 1;
	json_t *u;

	update(g, 1, M_READ, &ack);
	update(g, 2, ALL_APPROVED | M_SHELL, &ack);
	assert_ack(&ack, GATE_REJECTED, "tool not approved", 1, false);
	assert_reopens(g, &cur, ALL_APPROVED);			/* shell still revoked */

	gate_update(g, cur + 1, allowed, N_TOOLS + 1, &ack);
	assert_ack(&ack, GATE_REJECTED, "malformed update", cur, false);
	assert_reopens(g, &cur, ALL_APPROVED);
	gate_update(g, cur + 1, allowed, N_TOOLS - 1, &ack);
	assert_ack(&ack, GATE_REJECTED, "malformed update", cur, false);
	assert_reopens(g, &cur, M_MAIL);
	gate_update(g, cur + 1, NULL, N_TOOLS, &ack);
	assert_ack(&ack, GATE_REJECTED, "malformed update", cur, false);
	assert_reopens(g, &cur, M_READ);
	u = json_pack("{s:I, s:[]}", "revision", (json_int_t)cur + 1, "allowed");
	gate_update_json(g, u, names, N_TOOLS - 1, &ack);
	json_decref(u);
	assert_ack(&ack, GATE_REJECTED, "malformed update", cur, false);
	assert_reopens(g, &cur, M_STORE);

	assert_null(gate_new(allowed, GATE_TOOLS_MAX + 1));
	assert_null(gate_new(NULL, 1));
}

enum { WORKERS = 4, CALLS = 1000, UPDATES = 200, PACE = 10 };

/*
 * Workers and the updater pace each other, so that they really interleave
 * however the scheduler runs them (a fast updater could otherwise finish
 * before the workers start). Worker call i waits for update i / PACE; after
 * update r the updater waits until some worker decided a store call at r,
 * or all workers are done. That wait always ends: calls PACE * r onwards
 * (store calls among them) are free to run once r is applied. And no
 * worker can finish before update CALLS / PACE, so every odd revision up
 * to there decides at least one store call, and decides it revoked.
 */
struct stress {
	struct gate *g;
	pthread_barrier_t start;
	atomic_int applied;	/* the last revision the updater got an ack for */
	atomic_int store_seen;	/* the highest revision a store call was decided at */
	atomic_int finished;	/* workers done */
	atomic_int in_flight;
	atomic_int errors;	/* decisions or acks that broke an invariant */
	atomic_int revoked, allowed;
};

static void
stress_saw_store(struct stress *s, int64_t rev)
{
	int seen = atomic_load(&s->store_seen);

	while (seen < rev && !atomic_compare_exchange_weak(&s->store_seen, &seen, (int)rev))
		;
}

static void
stress_decide(struct stress *s, int tool, int64_t *last)
{
	int64_t rev = -1;
	enum policy_rule r = gate_begin(s->g, tool, &rev);
	/* odd revisions revoke store, even ones restore it; read is never touched */
	enum policy_rule want = tool == STORE && rev % 2 ? RULE_REVOKED : RULE_ALLOWED;

	if (r != want || rev < *last || rev > UPDATES)
		atomic_fetch_add(&s->errors, 1);
	*last = rev;
	if (tool == STORE)
		stress_saw_store(s, rev);
	atomic_fetch_add(r == RULE_ALLOWED ? &s->allowed : &s->revoked, 1);
	if (r != RULE_ALLOWED)
		return;
	/* one admitted call at a time: that is what an update waits for */
	if (atomic_fetch_add(&s->in_flight, 1) != 0)
		atomic_fetch_add(&s->errors, 1);
	atomic_fetch_sub(&s->in_flight, 1);
	gate_end(s->g);
}

static void *
stress_worker(void *arg)
{
	struct stress *s = arg;
	int64_t last = 0;
	int i;

	pthread_barrier_wait(&s->start);
	for (i = 0; i < CALLS; i++) {
		while (atomic_load(&s->applied) < i / PACE)
			sched_yield();
		stress_decide(s, i % 2 ? STORE : READ, &last);
	}
	atomic_fetch_add(&s->finished, 1);
	return NULL;
}

static void *
stress_updater(void *arg)
{
	struct stress *s = arg;
	struct gate_ack ack;
	int r;

	pthread_barrier_wait(&s->start);
	for (r = 1; r <= UPDATES; r++) {
		update(s->g, r, r % 2 ? ALL_APPROVED & ~M_STORE : ALL_APPROVED, &ack);
		if (ack.verdict != GATE_APPLIED || ack.revision != r || !ack.open)
			atomic_fetch_add(&s->errors, 1);
		atomic_store(&s->applied, r);
		while (atomic_load(&s->store_seen) < r && atomic_load(&s->finished) < WORKERS)
			sched_yield();
	}
	return NULL;
}

static void
test_stress(void **state)
{
	struct stress s = { .g = *state };
	pthread_t t[WORKERS + 1];
	bool allowed[N_TOOLS], open;
	int64_t rev;
	int i;

	assert_int_equal(pthread_barrier_init(&s.start, NULL, WORKERS + 1), 0);
	for (i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, stress_worker, &s), 0);
	assert_int_equal(pthread_create(&t[WORKERS], NULL, stress_updater, &s), 0);
	for (i = 0; i <= WORKERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&s.start);

	assert_int_equal(atomic_load(&s.errors), 0);
	assert_int_equal(atomic_load(&s.allowed) + atomic_load(&s.revoked), WORKERS * CALLS);
	assert_true(atomic_load(&s.revoked) >= CALLS / PACE / 2);
	gate_read(s.g, &rev, &open, allowed, N_TOOLS);
	assert_int_equal(rev, UPDATES);
	assert_true(open && allowed[STORE]);
	assert_int_equal(state_of(s.g).updates_applied, UPDATES);
	assert_int_equal(state_of(s.g).updates_rejected, 0);
	assert_int_equal(state_of(s.g).updates_waiting, 0);
	assert_false(state_of(s.g).busy);
}

/* Acks the delta path delivered, and on which thread. */
struct acks {
	size_t n;
	struct gate_delta d[GATE_DELTAS_MAX + 2];
	struct gate_ack a[GATE_DELTAS_MAX + 2];
	pthread_t thread[GATE_DELTAS_MAX + 2];
};

static void
on_ack(void *ctx, const struct gate_delta *d, const struct gate_ack *a)
{
	struct acks *k = ctx;

	if (k->n < sizeof k->a / sizeof k->a[0]) {
		k->d[k->n] = *d;
		k->a[k->n] = *a;
		k->thread[k->n] = pthread_self();
		k->n++;
	}
}

/* Idle: a delta applies at once, acknowledged on the poster's thread. */
static void
test_delta_idle(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };
	struct gate_state gs;

	gate_set_ack(g, on_ack, &k);
	gate_post(g, 1, STORE, false);
	assert_int_equal(k.n, 1);
	assert_true(pthread_equal(k.thread[0], pthread_self()));
	assert_ack(&k.a[0], GATE_APPLIED, "applied", 1, true);
	assert_admits(g, ALL_APPROVED & ~M_STORE, 1);
	gate_post(g, 2, STORE, true);
	assert_int_equal(k.n, 2);
	assert_admits(g, ALL_APPROVED, 2);
	gate_state(g, &gs);
	assert_int_equal(gs.pending, 0);
	assert_false(gs.busy);
}

/*
 * Busy: deltas queue behind the in-flight call (the poster returns at
 * once), show as pending, and apply in order when the call ends — from
 * the thread that ends it — before the next call is decided.
 */
static void
test_delta_behind_call(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };
	struct gate_state gs;
	int64_t rev;

	gate_set_ack(g, on_ack, &k);
	assert_int_equal(gate_begin(g, MAIL, &rev), RULE_ALLOWED);
	gate_state(g, &gs);
	assert_true(gs.busy);
	assert_int_equal(gs.busy_tool, MAIL);
	assert_int_equal(gs.busy_revision, 0);
	gate_post(g, 1, MAIL, false);
	gate_post(g, 2, READ, false);
	assert_int_equal(k.n, 0);	/* nothing applied while the call is in flight */
	gate_state(g, &gs);
	assert_int_equal(gs.pending, 2);
	assert_int_equal(gs.pending_revision, 2);
	assert_true(gs.pending_since_us > 0);
	assert_int_equal(gs.revision, 0);
	gate_end(g);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.d[0].revision, 1);
	assert_int_equal(k.d[1].revision, 2);
	assert_ack(&k.a[1], GATE_APPLIED, "applied", 2, true);
	assert_admits(g, M_STORE, 2);
	gate_state(g, &gs);
	assert_int_equal(gs.pending, 0);
}

/* A delta for a tool the session never had changes nothing, and closes nothing. */
static void
test_delta_not_held(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };

	gate_set_ack(g, on_ack, &k);
	gate_post(g, 1, SHELL, true);		/* in the catalog, not approved */
	gate_post(g, 2, -1, false);		/* not in this session's catalog at all */
	gate_post(g, 3, N_TOOLS + 5, false);
	assert_int_equal(k.n, 3);
	assert_ack(&k.a[0], GATE_NOT_APPLICABLE, "tool not in this session", 1, true);
	assert_ack(&k.a[2], GATE_NOT_APPLICABLE, "tool not in this session", 3, true);
	assert_admits(g, ALL_APPROVED, 3);	/* open, nothing changed, revision moved */
}

/* A stale delta closes admission; a newer valid one opens it again. */
static void
test_delta_stale(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };

	gate_set_ack(g, on_ack, &k);
	gate_post(g, 5, STORE, false);
	gate_post(g, 5, STORE, true);
	assert_ack(&k.a[1], GATE_REJECTED, "stale revision", 5, false);
	assert_closed(g, 5);
	gate_post(g, 6, STORE, true);
	assert_ack(&k.a[2], GATE_APPLIED, "applied", 6, true);
	assert_admits(g, ALL_APPROVED, 6);
}

/* More deltas than the queue holds behind one call: the overflow fails closed. */
static void
test_delta_queue_full(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };
	int64_t rev;
	int i;

	gate_set_ack(g, on_ack, &k);
	assert_int_equal(gate_begin(g, READ, &rev), RULE_ALLOWED);
	for (i = 1; i <= GATE_DELTAS_MAX + 1; i++)
		gate_post(g, i, STORE, i % 2 == 0);
	assert_int_equal(k.n, 1);	/* the one that did not fit, at once */
	assert_ack(&k.a[0], GATE_REJECTED, "too many pending deltas", 0, false);
	gate_end(g);
	assert_int_equal(k.n, GATE_DELTAS_MAX + 1);
	/* The queued ones still apply in order, but none of them reopens. */
	assert_int_equal(k.a[GATE_DELTAS_MAX].revision, GATE_DELTAS_MAX);
	assert_false(k.a[GATE_DELTAS_MAX].open);
	assert_closed(g, GATE_DELTAS_MAX);
	gate_post(g, GATE_DELTAS_MAX + 2, STORE, true);	/* newer than the overflow */
	assert_admits(g, ALL_APPROVED, GATE_DELTAS_MAX + 2);
}

/* Frozen: every tool, approved or not, is denied as such, at revision. */
static void
assert_frozen(struct gate *g, int64_t revision)
{
	int64_t rev;
	int t;

	for (t = -1; t <= N_TOOLS; t++) {
		rev = -1;
		assert_int_equal(call(g, t, &rev), RULE_FROZEN);
		assert_int_equal(rev, revision);
	}
	assert_true(state_of(g).frozen);
}

/*
 * The kill switch: a freeze posted while a call is in flight waits for it,
 * then applies before the call queued behind it, which is denied frozen;
 * a thaw lifts it with the revocations it had kept.
 */
static void
test_freeze_behind_call(void **state)
{
	struct gate *g = *state;
	struct caller queued = { .g = g, .tool = READ };
	struct acks k = { 0 };
	pthread_t th;
	int64_t rev;

	gate_set_ack(g, on_ack, &k);
	gate_post(g, 1, STORE, false);
	assert_int_equal(gate_begin(g, MAIL, &rev), RULE_ALLOWED);
	gate_post_freeze(g, 2, true);
	assert_int_equal(pthread_create(&th, NULL, caller_main, &queued), 0);
	assert_true(wait_until(caller_blocked, &queued));
	assert_int_equal(k.n, 1);		/* the freeze waits for the call */
	assert_false(state_of(g).frozen);
	gate_end(g);
	pthread_join(th, NULL);
	assert_int_equal(queued.rule, RULE_FROZEN);
	assert_int_equal(queued.revision, 2);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.d[1].kind, GATE_DELTA_FREEZE);
	assert_ack(&k.a[1], GATE_APPLIED, "applied", 2, true);
	assert_frozen(g, 2);
	gate_post_freeze(g, 3, false);
	assert_int_equal(k.d[2].kind, GATE_DELTA_THAW);
	assert_ack(&k.a[2], GATE_APPLIED, "applied", 3, true);
	assert_false(state_of(g).frozen);
	assert_admits(g, ALL_APPROVED & ~M_STORE, 3);	/* the revoke still stands */
}

/* A stale freeze closes admission like any stale delta; set_frozen needs no revision. */
static void
test_freeze_stale_and_at_start(void **state)
{
	struct gate *g = *state;
	struct acks k = { 0 };

	gate_set_ack(g, on_ack, &k);
	gate_set_frozen(g, true, 2);
	assert_int_equal(k.n, 0);		/* no acknowledgement */
	assert_frozen(g, 2);
	gate_set_frozen(g, true, 1);		/* an older revision is not taken */
	assert_frozen(g, 2);
	gate_post(g, 4, STORE, false);		/* a revoke applies to a frozen gate */
	assert_frozen(g, 4);
	gate_post_freeze(g, 4, false);		/* stale: the gate stays frozen and closes */
	assert_ack(&k.a[1], GATE_REJECTED, "stale revision", 4, false);
	assert_frozen(g, 4);
	gate_post_freeze(g, 5, false);
	assert_admits(g, ALL_APPROVED & ~M_STORE, 5);
}

/* A meter over a grant table (grant.h) as the supervisor keeps one: store's calls metered. */
struct meter_fixture {
	struct grant_table t;
	uint64_t serial;	/* the grant store's calls spend */
	int spent_tool;		/* the tool the last _LAST named, from spent */
	int spent_calls;
	bool spent_unlocked;	/* spent ran with the gate's lock free */
	struct gate *g;
};

static enum gate_meter_answer
fixture_spend(void *ctx, int tool)
{
	struct meter_fixture *f = ctx;

	if (tool != STORE)
		return GATE_METER_FREE;
	return grant_meter_answer(grant_spend(&f->t, f->serial));
}

static void
fixture_spent(void *ctx, int tool)
{
	struct meter_fixture *f = ctx;
	struct gate_state st;

	f->spent_tool = tool;
	f->spent_calls++;
	gate_state(f->g, &st);	/* would deadlock were the gate's lock still held */
	f->spent_unlocked = true;
}

/*
 * A budget of two: two calls of the metered tool admitted, the second
 * says it was the last (once, after the lock), the third is denied
 * revoked although the tool is still allowed; other tools are not metered.
 */
static void
test_meter_budget(void **state)
{
	struct gate *g = *state;
	struct meter_fixture f = { .g = g, .spent_tool = -1 };
	struct gate_meter m = { fixture_spend, fixture_spent, &f };
	int64_t rev = -1;
	int i;

	f.serial = grant_set(&f.t, "store", true, 0, 0, 2, 1);
	assert_true(f.serial > 0);
	gate_set_meter(g, &m);
	assert_int_equal(call(g, STORE, &rev), RULE_ALLOWED);
	assert_int_equal(f.spent_calls, 0);
	assert_int_equal(call(g, STORE, &rev), RULE_ALLOWED);
	assert_int_equal(f.spent_calls, 1);
	assert_int_equal(f.spent_tool, STORE);
	assert_true(f.spent_unlocked);
	assert_int_equal(call(g, STORE, &rev), RULE_REVOKED);
	assert_int_equal(call(g, STORE, &rev), RULE_REVOKED);
	assert_int_equal(f.spent_calls, 1);
	assert_true(state_of(g).allowed[STORE]);	/* only the lapse's revoke changes the set */
	for (i = 0; i < 5; i++)
		assert_int_equal(call(g, READ, &rev), RULE_ALLOWED);
	/* A revoked tool spends nothing: the meter is asked only about allowed calls. */
	gate_post(g, 2, STORE, false);
	grant_drop(&f.t, "store");
	f.serial = grant_set(&f.t, "store", true, 0, 0, 1, 2);
	assert_int_equal(call(g, STORE, &rev), RULE_REVOKED);
	assert_int_equal(grant_find(&f.t, f.serial)->calls_left, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_initial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freeze_behind_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_freeze_stale_and_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revoke_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_holds_update, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_overtakes_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_holds_rejection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_binary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_valid_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approved_frozen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delta_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delta_behind_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delta_not_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delta_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delta_queue_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meter_budget, setup, teardown),
	};

	return cmocka_run_group_tests_name("gate", tests, NULL, NULL);
}
