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

/*
 * The two halves of id_random, for a caller that makes several ids from
 * one draw: n random bytes from the kernel (0, or -1 when there are none),
 * then prefix and 2 * bytes hex digits of raw (0, or -1 when out is too
 * small; out is then "").
 */
int id_draw(void *raw, size_t n);
int id_hex(char *out, size_t cap, const char *prefix, const void *raw, size_t bytes);

#endif
