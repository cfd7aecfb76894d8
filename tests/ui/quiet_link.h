#ifndef AIRLOCK_TEST_QUIET_LINK_H
#define AIRLOCK_TEST_QUIET_LINK_H

/*
 * The link ops a model test's stand-in for an engine has nothing to say
 * in (test_model_pending.c, test_model_timeline.c): no session, no detail,
 * no host checks, no audit rows, no held call (quiet_pending); the link
 * up. A test adds the ops it is about to QUIET_LINK_OPS.
 */

#include <stdio.h>
#include <string.h>

#include "link.h"

static int
quiet_snapshot(struct link *l, struct supervisor_snapshot *snap)
{
	(void)l;
	snap->n = 0;
	return 0;
}

static int
quiet_detail(struct link *l, const char *id, struct session_detail *out)
{
	(void)l, (void)id, (void)out;
	return -1;
}

static void
quiet_host(struct link *l, struct host_snapshot *out)
{
	(void)l;
	memset(out, 0, sizeof *out);
}

static void
quiet_status(struct link *l, struct link_status *out)
{
	(void)l;
	memset(out, 0, sizeof *out);
	out->state = LINK_UP;
	snprintf(out->name, sizeof out->name, "quiet");
}

static int
quiet_audit(struct link *l, int64_t *after, struct audit_row *out, size_t cap, size_t *n,
	    char *why, size_t why_cap)
{
	(void)l, (void)after, (void)out, (void)cap, (void)why, (void)why_cap;
	*n = 0;
	return 0;
}

static int __attribute__((unused))
quiet_pending(struct link *l, struct hold_view *out, size_t cap, size_t *n, char *why,
	      size_t why_cap)
{
	(void)l, (void)out, (void)cap, (void)why, (void)why_cap;
	*n = 0;
	return 0;
}

#define QUIET_LINK_OPS \
	.snapshot = quiet_snapshot, \
	.detail = quiet_detail, \
	.host = quiet_host, \
	.status = quiet_status, \
	.audit = quiet_audit

#endif
