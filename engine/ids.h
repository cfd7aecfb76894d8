#ifndef AIRLOCK_IDS_H
#define AIRLOCK_IDS_H

/* Identifiers the engine generates: a fixed prefix and random hex. */

#include <stddef.h>

#define ID_MAX		40	/* a session or call id: prefix + hex digits, NUL */

/*
 * prefix followed by 2 * bytes lowercase hex digits from the kernel's
 * CSPRNG. Returns 0, or -1 (out untouched past a NUL) when randomness is
 * unavailable or out (cap bytes) is too small.
 */
int id_random(char *out, size_t cap, const char *prefix, size_t bytes);

#endif
