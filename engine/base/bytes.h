#ifndef AIRLOCK_BYTES_H
#define AIRLOCK_BYTES_H

/*
 * Runs of bytes from outside (a tar header, a digest, a config), held to
 * their bounds before they are believed: as a string, as a decimal, and a
 * file read whole up to a bound.
 */

#include <stddef.h>
#include <stdint.h>

/* p[0..n) as a string in out (cap bytes): 0, or -1 when it does not fit or holds a NUL. */
int bytes_str(char *out, size_t cap, const char *p, size_t n);

/* s[0..n), 1 to digits decimal digits and nothing else, into *out: 0, or -1 (out untouched). */
int bytes_decimal(const char *s, size_t n, size_t digits, uint64_t *out);

/* Why bytes_read_fd stopped. */
enum bytes_read {
	BYTES_READ_OK,
	BYTES_READ_NOMEM,
	BYTES_READ_ERROR,	/* a read failed; errno says why */
	BYTES_READ_TOO_LARGE,	/* more than cap bytes */
};

/*
 * fd read to its end, EINTR retried, into *buf (malloc'd, cap + 1 bytes;
 * the caller frees it, clearing it first where it held payload) with *n
 * the bytes read. On anything but BYTES_READ_OK *buf is still set (NULL
 * when out of memory) and *n is what was read.
 */
enum bytes_read bytes_read_fd(int fd, size_t cap, char **buf, size_t *n);

#endif
