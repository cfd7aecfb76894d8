#ifndef AIRLOCK_MUTANT_H
#define AIRLOCK_MUTANT_H

/*
 * Mutants exist only in the test build (-DAIRLOCK_MUTANTS, linked into the
 * airlock-mutants binary and the suites that need one): each changes one
 * thing so a test can show what a protection or a report is for. The
 * production build has no such switch: mutant() is constant false there.
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool
mutant(const char *name)
{
#ifdef AIRLOCK_MUTANTS
	const char *m = getenv("AIRLOCK_MUTANT");

	return m && strcmp(m, name) == 0;
#else
	(void)name;
	return false;
#endif
}

#endif
