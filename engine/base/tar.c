#include "tar.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static size_t
tar_padded(size_t n)
{
	return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

static bool
tar_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' || c == '/';
}

/* Relative, plain characters, no ".." part: it unpacks where it is meant to. */
static bool
tar_name_valid(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n > TAR_NAME_MAX || name[0] == '/' || name[n - 1] == '/')
		return false;
	for (i = 0; i < n; i++)
		if (!tar_name_char(name[i]))
			return false;
	if (strcmp(name, "..") == 0 || strncmp(name, "../", 3) == 0 || strstr(name, "/../") ||
	    (n >= 3 && strcmp(name + n - 3, "/..") == 0))
		return false;
	return true;
}

/* An octal field of width w: w - 1 zero-padded digits and a NUL. */
static void
tar_octal_put(unsigned char *f, size_t w, uint64_t v)
{
	char tmp[24];

	snprintf(tmp, sizeof tmp, "%0*llo", (int)(w - 1), (unsigned long long)v);
	memcpy(f, tmp, w - 1);
	f[w - 1] = '\0';
}

/* The checksum counts its own field as eight spaces. */
static void
tar_checksum_put(unsigned char *h)
{
	unsigned sum = 0;
	size_t i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	tar_octal_put(h + 148, 7, sum);		/* six digits, NUL, then the space stays */
}

static void
tar_header_put(unsigned char *h, const struct tar_file *f)
{
	memset(h, 0, TAR_BLOCK);
	memcpy(h, f->name, strlen(f->name));
	tar_octal_put(h + 100, 8, f->mode & 07777);
	tar_octal_put(h + 108, 8, 0);
	tar_octal_put(h + 116, 8, 0);
	tar_octal_put(h + 124, 12, f->len);
	tar_octal_put(h + 136, 12, 0);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);		/* with its NUL */
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	tar_checksum_put(h);
}

/* The archive's size into *total, or -1 when an entry is refused. */
static int
tar_measure(const struct tar_file *files, size_t n, size_t *total, struct al_err *err)
{
	size_t i, sum = 2 * TAR_BLOCK;

	if (n > TAR_FILES_MAX)
		return al_fail(err, "tar: more than %d files", TAR_FILES_MAX);
	for (i = 0; i < n; i++) {
		if (!tar_name_valid(files[i].name))
			return al_fail(err, "tar: file %zu: invalid name", i);
		if (!files[i].data && files[i].len)
			return al_fail(err, "tar: file %zu: no data", i);
		/* sum never exceeds the limit, so neither side can wrap. */
		if (files[i].len > TAR_BYTES_MAX ||
		    TAR_BLOCK + tar_padded(files[i].len) > TAR_BYTES_MAX - sum)
			return al_fail(err, "tar: archive larger than %u bytes", TAR_BYTES_MAX);
		sum += TAR_BLOCK + tar_padded(files[i].len);
	}
	*total = sum;
	return 0;
}

int
tar_write(const struct tar_file *files, size_t n, unsigned char **out, size_t *len,
	  struct al_err *err)
{
	size_t total = 0, off = 0, i;
	unsigned char *buf;

	*out = NULL;
	*len = 0;
	if (tar_measure(files, n, &total, err) < 0)
		return -1;
	/* calloc: the padding and the two end blocks are already zero. */
	if (!(buf = calloc(1, total)))
		return al_fail(err, "tar: out of memory");
	for (i = 0; i < n; i++) {
		tar_header_put(buf + off, &files[i]);
		off += TAR_BLOCK;
		if (files[i].len)
			memcpy(buf + off, files[i].data, files[i].len);
		off += tar_padded(files[i].len);
	}
	*out = buf;
	*len = total;
	return 0;
}

/* --- header fields, shared with tar_stream.c ------------------------------- */

/* Octal (spaces, digits, NUL/space padding) or base-256 (high bit set). */
int
tar_number(const unsigned char *f, size_t n, uint64_t *out)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;

	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return -1;	/* negative, or more than 64 bits */
		for (i = 1; i < n; i++) {
			if (v >> 56)
				return -1;
			v = v << 8 | f[i];
		}
		*out = v;
		return 0;
	}
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
		if (v > (UINT64_MAX >> 3))
			return -1;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -1;
	*out = v;
	return digits ? 0 : -1;
}

bool
tar_block_zero(const unsigned char *h)
{
	size_t i;

	for (i = 0; i < TAR_BLOCK; i++)
		if (h[i])
			return false;
	return true;
}

/* Unsigned, as POSIX says; some old writers summed signed chars. */
bool
tar_checksum_ok(const unsigned char *h)
{
	uint64_t stored;
	long sum = 0, ssum = 0;
	size_t i;

	if (tar_number(h + 148, 8, &stored) < 0)
		return false;
	for (i = 0; i < TAR_BLOCK; i++) {
		sum += i >= 148 && i < 156 ? ' ' : h[i];
		ssum += i >= 148 && i < 156 ? ' ' : (signed char)h[i];
	}
	return (uint64_t)sum == stored || (ssum >= 0 && (uint64_t)ssum == stored);
}

/* --- the reader ------------------------------------------------------------ */

/* An octal field: optional leading spaces, digits, then NUL/space padding. */



static int
tar_header(const unsigned char *h, size_t avail, uint64_t *size, struct al_err *err)
{
	if (memcmp(h + 257, "ustar", 5) != 0)
		return al_fail(err, "tar: not a ustar archive");
	if (!tar_checksum_ok(h))
		return al_fail(err, "tar: bad header checksum");
	if (tar_number(h + 124, 12, size) < 0)
		return al_fail(err, "tar: bad size field");
	if (*size > avail)
		return al_fail(err, "tar: entry runs past the end of the archive");
	return 0;
}

int
tar_first_file(const unsigned char *tar, size_t len,
	       const unsigned char **data, size_t *data_len, struct al_err *err)
{
	size_t off = 0, avail, pad;
	uint64_t size = 0;	/* set by tar_header; the compiler cannot see it at -O3 */

	*data = NULL;
	*data_len = 0;
	while (tar && len - off >= TAR_BLOCK) {
		const unsigned char *h = tar + off;

		if (tar_block_zero(h))
			return al_fail(err, "tar: no regular file");
		avail = len - off - TAR_BLOCK;
		if (tar_header(h, avail, &size, err) < 0)
			return -1;
		/* '0' and NUL are regular files, '7' is contiguous (also regular). */
		if (h[156] == '0' || h[156] == '\0' || h[156] == '7') {
			*data = h + TAR_BLOCK;
			*data_len = (size_t)size;
			return 0;
		}
		pad = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
		if (pad > avail - size)
			return al_fail(err, "tar: truncated archive");
		off += TAR_BLOCK + (size_t)size + pad;
	}
	if (tar && off < len)
		return al_fail(err, "tar: truncated header");
	return al_fail(err, "tar: no regular file");
}
