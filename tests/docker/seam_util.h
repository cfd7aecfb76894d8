#ifndef AIRLOCK_TESTS_SEAM_UTIL_H
#define AIRLOCK_TESTS_SEAM_UTIL_H

/*
 * What the C suites that drive the engine against the real daemon
 * (test_supervisor.c, test_pool.c) share: their environment, and the two
 * observers they read (a sink file's lines, the audit log's rows).
 */

#include <stddef.h>

#include "audit.h"

/* $name, set by the suite's script; exits 1 with a fixed message when unset. */
const char *seam_env(const char *name);

/* Lines in the file at path (a sink); 0 when there is none yet. */
size_t seam_lines(const char *path);

/* Rows of the audit log db matching a WHERE clause (printf format); -1 on error. */
int seam_audit_rows(const char *db, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The suites' cmocka setup: curl's globals, the scratch directory work
 * (a mkdtemp template), the audit log db inside it (dbcap bytes), a
 * payload.json there whose note is canary, and the log opened. 0, or -1.
 */
int seam_setup(char *work, char *db, size_t dbcap, const char *canary, struct audit **audit);

/* Close the log and remove work: 0, or -1. */
int seam_teardown(const char *work, struct audit *audit);

#endif
