#ifndef AIRLOCK_TEST_AUDIT_FIXTURE_H
#define AIRLOCK_TEST_AUDIT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "scratch.h"

/*
 * The fixture of the tests that write audit logs (test_audit.c,
 * test_audit_tail.c): a scratch directory and the path of a log in it.
 * The teardown removes every file a test made there: logs, their -wal
 * and -shm, the wrong files.
 */
struct fixture {
	char dir[64];
	char db[96];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	scratch_make(f->dir, sizeof f->dir, "audit");
	snprintf(f->db, sizeof f->db, "%s/audit.db", f->dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	scratch_remove(f->dir);
	free(f);
	return 0;
}

#endif
