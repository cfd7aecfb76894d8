#ifndef AIRLOCK_TAR_STREAM_H
#define AIRLOCK_TAR_STREAM_H

/*
 * A push parser for tar streams (ustar, with the PAX and GNU long-name
 * extensions Go's archive/tar writes, which is what Docker sends): bytes go
 * in as they arrive, in chunks of any size; each entry's metadata comes out
 * through one callback and its data through another. Nothing is buffered
 * but one header and the extension records, so an archive of any size costs
 * the same memory. Pure code: no I/O.
 *
 * Every field is checked: a bad checksum, a number that does not parse, an
 * extension record that does not add up, a name past TAR_PATH_MAX or a
 * stream that ends inside an entry is an error with a fixed message.
 *
 * An archive means what Docker's unpacker (Go's archive/tar) makes of it,
 * or it is refused: links, devices, directories and fifos carry no data
 * whatever their size field says; a '\0' type whose name ends in '/' is a
 * directory; a GNU long name or link wins over a PAX path or linkpath; a
 * PAX header replaces all the records of one before it; a global header
 * ('g') drops every pending record; a STAR header's prefix is 131 bytes.
 * Refused: GNU sparse records (they rename and remap), a GNU header whose
 * time fields do not parse (Go reads them as a name prefix then).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TAR_PATH_MAX	4096		/* a name or link target, NUL included */
#define TAR_EXT_MAX	(64u << 10)	/* one PAX or GNU long-name record */

/*
 * An entry's extended attributes (PAX SCHILY.xattr.NAME records, the only
 * spelling Docker applies), by what they can mean for who may read it.
 * Only names are looked at, never values; the first matching row of
 * TAR_XATTR_KINDS (engine/base/tar_stream.c) decides.
 */
enum tar_xattr {
	TAR_XATTR_ACL		= 1u << 0,	/* system.posix_acl_access, _default */
	TAR_XATTR_CAPABILITY	= 1u << 1,	/* security.capability: acts on exec only */
	TAR_XATTR_OVERLAY	= 1u << 2,	/* trusted.overlay.*, user.overlay.*: overlayfs's own */
	TAR_XATTR_SYSTEM	= 1u << 3,	/* any other system.* */
	TAR_XATTR_SECURITY	= 1u << 4,	/* any other security.* (an LSM label, IMA, EVM) */
	TAR_XATTR_OTHER		= 1u << 5,	/* user.*, other trusted.*: grant no access */
};

/* What the stream says about one entry. Names are as written (not normalised). */
struct tar_entry {
	char path[TAR_PATH_MAX];
	char link[TAR_PATH_MAX];	/* symlink or hard link target */
	char type;			/* '0' file, '1' hard link, '2' symlink, '5' dir, … */
	unsigned mode;			/* the low 12 bits: permissions, setuid, setgid, sticky */
	uint64_t uid, gid, size;
	bool acl;			/* a POSIX ACL rides along (PAX SCHILY.xattr.system.posix_acl_*) */
	unsigned xattrs;		/* enum tar_xattr bits: every kind seen (acl: TAR_XATTR_ACL) */
};

/* Non-zero from a callback stops the parse; tar_stream_feed returns it. */
struct tar_stream_ops {
	int (*entry)(void *ctx, const struct tar_entry *e);
	int (*data)(void *ctx, const unsigned char *p, size_t n);	/* may be NULL */
	int (*end)(void *ctx);						/* may be NULL */
};

enum tar_stream_state {
	TS_HEADER,	/* collecting a 512-byte header */
	TS_DATA,	/* an entry's data */
	TS_EXT,		/* a PAX or GNU long-name record */
	TS_PAD,		/* padding up to the next block */
	TS_DONE,	/* the end-of-archive block was seen */
};

struct tar_stream {
	const struct tar_stream_ops *ops;
	void *ctx;
	enum tar_stream_state state;
	unsigned char block[512];
	size_t have;
	uint64_t left, pad;
	char ext_type;			/* 'x', 'g', 'L' or 'K' while in TS_EXT */
	char *ext;			/* TAR_EXT_MAX + 1 bytes */
	size_t ext_len;
	struct tar_entry next;		/* overrides gathered from the last PAX header */
	bool has_path, has_link, has_uid, has_gid, has_size;
	unsigned xattrs;		/* pending for the next entry */
	char gnu_path[TAR_PATH_MAX], gnu_link[TAR_PATH_MAX];	/* from 'L' and 'K' */
	bool has_gnu_path, has_gnu_link;
	struct tar_entry cur;
	uint64_t entries;
	struct al_err *err;
};

/* ops and ctx are borrowed. -1 (err set) when out of memory. */
int tar_stream_init(struct tar_stream *t, const struct tar_stream_ops *ops, void *ctx,
		    struct al_err *err);
void tar_stream_free(struct tar_stream *t);

/*
 * Feed n bytes. Returns 0, -1 on a malformed stream (err set) or a
 * callback's non-zero value. Bytes after the end-of-archive block are
 * ignored (they are padding).
 */
int tar_stream_feed(struct tar_stream *t, const unsigned char *p, size_t n);
/* True once the end-of-archive block has been seen. */
bool tar_stream_done(const struct tar_stream *t);

/*
 * Normalise an entry name into out: no leading "/" or "./", no "." parts,
 * no empty parts, no trailing "/"; the root is "". -1 when a ".." part is
 * present or the result does not fit.
 */
int tar_path_normalise(const char *in, char *out, size_t cap);

#endif
