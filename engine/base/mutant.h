#ifndef AIRLOCK_MUTANT_H
#define AIRLOCK_MUTANT_H

/*
 * Mutants exist only in the test build (-DAIRLOCK_MUTANTS, linked into the
 * airlock-mutants binary and the suites that need one): each changes one
 * thing so a test can show what a protection or a report is for. The
 * production build has no such switch: mutant() is constant false there.
 * AIRLOCK_MUTANT holds one name, or several separated by commas (a
 * weakening plus admission_bypass, say).
 */

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool
mutant(const char *name)
{
#ifdef AIRLOCK_MUTANTS
	const char *m = getenv("AIRLOCK_MUTANT");
	size_t n = strlen(name);

	while (m && *m) {
		size_t len = strcspn(m, ",");

		if (len == n && strncmp(m, name, n) == 0)
			return true;
		m += len;
		m += *m == ',';
	}
	return false;
#else
	(void)name;
	return false;
#endif
}

#endif
