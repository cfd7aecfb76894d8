#ifndef AIRLOCK_BENCH_LOG_H
#define AIRLOCK_BENCH_LOG_H

/*
 * An audit log made for a benchmark: the engine's schema (audit_open, its
 * index included), then sql run on it whole (the benchmark's entries,
 * made in SQL: millions in seconds). 0, or -1 said on stderr as who.
 */

#include <stdio.h>

#include <sqlite3.h>

#include "audit.h"

static inline int
bench_log_fill(const char *path, const char *sql, const char *who)
{
	struct audit *a;
	struct al_err err;
	sqlite3 *db = NULL;
	int rc;

	if (audit_open(path, &a, &err) < 0) {
		fprintf(stderr, "%s: %s\n", who, err.msg);
		return -1;
	}
	audit_close(a);
	rc = sqlite3_open(path, &db) == SQLITE_OK &&
	     sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	if (rc < 0)
		fprintf(stderr, "%s: fill: %s\n", who, sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc;
}

#endif
