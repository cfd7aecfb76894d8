#ifndef AIRLOCK_TAR_H
#define AIRLOCK_TAR_H

/*
 * A tiny in-memory tar writer: a few regular files in one ustar archive,
 * as the Engine API's /build wants its context; and a reader for the one
 * file an archive call (docker_archive_get) returns. Pure code: no I/O.
 * (Streams too large to hold, such as an image export, go through
 * tar_stream.h.)
 *
 * Every entry is owned by 0:0 with mtime 0, so the same files give the
 * same bytes. Each header is followed by the data, padded to 512 bytes;
 * two zero blocks end the archive.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TAR_BLOCK	512		/* a header, and the unit of padding */
#define TAR_NAME_MAX	99		/* the ustar name field, NUL included */
#define TAR_FILES_MAX	64
#define TAR_BYTES_MAX	(256u << 20)	/* a whole archive */

struct tar_file {
	const char *name;	/* relative, [A-Za-z0-9._/-], no ".." part */
	const void *data;	/* may be NULL when len is 0 */
	size_t len;
	unsigned mode;		/* permission bits only, e.g. 0644 */
};

/* Write files[0..n) into a malloc'd buffer (*out, *len); -1 with a fixed message. */
int tar_write(const struct tar_file *files, size_t n, unsigned char **out, size_t *len,
	      struct al_err *err);

/*
 * Header fields: a number field (octal with space or NUL padding, or
 * base-256 with the high bit set), an all-zero block (the end), and the
 * header checksum (unsigned as POSIX says, or signed as old writers did).
 */
int tar_number(const unsigned char *f, size_t n, uint64_t *out);
bool tar_block_zero(const unsigned char *h);
bool tar_checksum_ok(const unsigned char *h);

/*
 * The first regular file of a tar buffer (ustar): *data points into tar.
 * -1 with a fixed message on a bad header, a truncated archive, or none.
 */
int tar_first_file(const unsigned char *tar, size_t len,
		   const unsigned char **data, size_t *data_len, struct al_err *err);

#endif
