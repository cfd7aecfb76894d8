#ifndef AIRLOCK_BYTES_H
#define AIRLOCK_BYTES_H

/*
 * Runs of bytes from outside (a tar header, a digest, a config), held to
 * their bounds before they are believed: as a string, as a decimal.
 */

#include <stddef.h>
#include <stdint.h>

/* p[0..n) as a string in out (cap bytes): 0, or -1 when it does not fit or holds a NUL. */
int bytes_str(char *out, size_t cap, const char *p, size_t n);

/* s[0..n), 1 to digits decimal digits and nothing else, into *out: 0, or -1 (out untouched). */
int bytes_decimal(const char *s, size_t n, size_t digits, uint64_t *out);

#endif
