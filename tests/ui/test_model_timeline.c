/*
 * The console's timeline (tui/model.c) on a long log with few events: a
 * page of the engine's reader goes through AUDIT_TIMELINE_SCAN entries at
 * most, so a page of calls only holds no event and says more. The model
 * reads on over such pages, a few a refresh, and shows the change at the
 * log's end after one refresh; it asks nothing while the view is not
 * shown. The link is a stand-in whose timeline is the engine's reader
 * itself (audit_timeline_page) over a log the real writer made.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "audit_timeline.h"
#include "model.h"
#include "quiet_link.h"
#include "scratch.h"

struct reader {
	struct link base;
	char db[96];
	unsigned pages;		/* timeline calls */
	unsigned empty_more;	/* of which: no event, and more */
};

static struct reader *
reader(struct link *l)
{
	return (struct reader *)l;
}

/* As the local link and the control server read it: one page from the cursor. */
static int
read_page(struct link *l, int64_t *after, struct timeline_row *out, size_t cap, size_t *n,
	  bool *more, char *why, size_t why_cap)
{
	struct reader *r = reader(l);
	struct audit_timeline tl;
	struct al_err err;

	r->pages++;
	if (audit_timeline_page(r->db, *after, cap, &tl, after, &err) < 0) {
		snprintf(why, why_cap, "%s", err.msg);
		return -1;
	}
	for (*n = 0; *n < tl.n; (*n)++)
		audit_timeline_row(&tl.v[*n], &out[*n]);
	*more = tl.truncated;
	r->empty_more += tl.n == 0 && tl.truncated;
	audit_timeline_free(&tl);
	return 0;
}

static const struct link_ops reader_ops = {
	QUIET_LINK_OPS,
	.pending = quiet_pending,
	.timeline = read_page,
};

static char dir[64];
static struct model m;
static struct reader engine = { .base = { .ops = &reader_ops } };
static struct link *links[1] = { &engine.base };

static void
append(struct audit *a, enum audit_decision d, const char *tool, const char *rule)
{
	struct audit_entry e = {
		.session_id = "s-1",
		.type = audit_type_id(audit_decision_type(d)),
		.decision = audit_decision_id(d),
		.tool = tool,
		.rule = rule,
		.revision = 1,
	};
	struct al_err err;

	assert_int_equal(audit_append(a, &e, NULL, NULL, &err), 0);
}

/* A session's start, then calls past two pages' scans, then a revoke at the end. */
static int
setup(void **state)
{
	struct audit_entry call = {
		.session_id = "s-1",
		.call_id = "call-1",
		.type = audit_type_id(AUDIT_T_CALL),
		.decision = audit_decision_id(AUDIT_D_ALLOWED),
		.tool = "fetch",
		.rule = "allowed",
	};
	struct audit_lane lane = { 0 };
	struct audit *a;
	struct al_err err;

	(void)state;
	scratch_make(dir, sizeof dir, "model-timeline");
	snprintf(engine.db, sizeof engine.db, "%s/audit.db", dir);
	if (audit_open(engine.db, &a, &err) < 0)
		return -1;
	append(a, AUDIT_D_START, NULL, NULL);
	for (int i = 0; i < 2 * AUDIT_TIMELINE_SCAN + 10; i++)
		if (audit_append_later(a, &lane, &call, &err) < 0)
			return -1;
	if (audit_lane_settle(a, &lane, &err) < 0)
		return -1;
	append(a, AUDIT_D_APPLIED, "store", "revoke applied");
	audit_close(a);
	engine.pages = engine.empty_more = 0;
	return model_init(&m, false);
}

static int
teardown(void **state)
{
	(void)state;
	model_free(&m);
	scratch_remove(dir);
	return 0;
}

/* One refresh with the view shown reads through to the revoke at the end. */
static void
test_reads_past_empty_pages(void **state)
{
	(void)state;
	model_refresh(&m, links, 1);
	assert_int_equal(engine.pages, 0);	/* the view is not shown: nothing asked */
	assert_int_equal(m.n_timeline, 0);

	m.view = VIEW_TIMELINE;
	model_refresh(&m, links, 1);
	assert_string_equal(m.timeline_error, "");
	assert_int_equal(m.n_timeline, 2);
	assert_string_equal(m.timeline[0].kind, "session_start");
	assert_string_equal(m.timeline[1].kind, "policy");
	assert_string_equal(m.timeline[1].op, "revoke");
	assert_string_equal(m.timeline[1].tool, "store");
	assert_int_equal(engine.pages, 3);
	assert_int_equal(engine.empty_more, 1);	/* the middle page: calls only */
	assert_int_equal(m.timeline_after[0], 2 * AUDIT_TIMELINE_SCAN + 12);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_past_empty_pages, setup, teardown),
	};

	return cmocka_run_group_tests_name("model-timeline", tests, NULL, NULL);
}
