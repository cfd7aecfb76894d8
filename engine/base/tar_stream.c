#include "tar_stream.h"

#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "tar.h"

#define TS_BLOCK	TAR_BLOCK

#define XATTR_KEY	"SCHILY.xattr."
#define SPARSE_KEY	"GNU.sparse."

/* Attribute names (after XATTR_KEY): exact name or prefix, kind; first match wins. */
#define TAR_XATTR_KINDS(_) \
	_("system.posix_acl_access",	true,	TAR_XATTR_ACL) \
	_("system.posix_acl_default",	true,	TAR_XATTR_ACL) \
	_("security.capability",	true,	TAR_XATTR_CAPABILITY) \
	_("trusted.overlay.",		false,	TAR_XATTR_OVERLAY) \
	_("user.overlay.",		false,	TAR_XATTR_OVERLAY) \
	_("system.",			false,	TAR_XATTR_SYSTEM) \
	_("security.",			false,	TAR_XATTR_SECURITY) \
	_("",				false,	TAR_XATTR_OTHER)

static const struct xattr_kind {
	const char *name;
	bool exact;
	unsigned kind;
} xattr_kinds[] = {
#define TAR_XATTR_ROW(name, exact, kind) { name, exact, kind },
	TAR_XATTR_KINDS(TAR_XATTR_ROW)
#undef TAR_XATTR_ROW
};

int
tar_stream_init(struct tar_stream *t, const struct tar_stream_ops *ops, void *ctx,
		struct al_err *err)
{
	memset(t, 0, sizeof *t);
	t->ops = ops;
	t->ctx = ctx;
	t->err = err;
	t->state = TS_HEADER;
	if (!(t->ext = malloc(TAR_EXT_MAX + 1)))
		return al_fail(err, "tar: out of memory");
	return 0;
}

void
tar_stream_free(struct tar_stream *t)
{
	free(t->ext);
	t->ext = NULL;
}

bool
tar_stream_done(const struct tar_stream *t)
{
	return t->state == TS_DONE;
}

static uint64_t
ts_padding(uint64_t size)
{
	return (TS_BLOCK - size % TS_BLOCK) % TS_BLOCK;
}




/* A fixed-width, possibly unterminated name field, appended to out. */
static void
ts_field(char *out, size_t cap, const unsigned char *f, size_t n)
{
	size_t len = strnlen((const char *)f, n), off = strlen(out);

	if (len > cap - 1 - off)
		len = cap - 1 - off;
	memcpy(out + off, f, len);
	out[off + len] = '\0';
}

static bool
ts_is_star(const unsigned char *h)
{
	return memcmp(h + 257, "ustar\0", 6) == 0 && memcmp(h + 508, "tar\0", 4) == 0;
}

/* The header's own name: POSIX ustar joins prefix and name (STAR's prefix is shorter); GNU has none. */
static void
ts_header_name(const unsigned char *h, char *out, size_t cap)
{
	bool posix = memcmp(h + 257, "ustar\0", 6) == 0;

	out[0] = '\0';
	if (posix && h[345]) {
		ts_field(out, cap, h + 345, ts_is_star(h) ? 131 : 155);
		ts_field(out, cap, (const unsigned char *)"/", 1);
	}
	ts_field(out, cap, h, 100);
}

/* GNU's atime and ctime: Go takes the bytes as a ustar prefix when either does not parse. */
static bool
ts_gnu_times_ok(const unsigned char *h)
{
	uint64_t v;

	if (memcmp(h + 257, "ustar  \0", 8) != 0)
		return true;
	return (!h[345] || tar_number(h + 345, 12, &v) == 0) &&
	       (!h[357] || tar_number(h + 357, 12, &v) == 0);
}

/* Types Go reads no data for: hard and symbolic links, devices, directories, fifos. */
static bool
ts_header_only(char type)
{
	return type >= '1' && type <= '6';
}

/* Drop what PAX headers gathered; with gnu, the GNU long names too. */
static void
ts_pending_clear(struct tar_stream *t, bool gnu)
{
	t->has_path = t->has_link = t->has_uid = t->has_gid = t->has_size = false;
	t->xattrs = 0;
	if (gnu)
		t->has_gnu_path = t->has_gnu_link = false;
}

static int
ts_fail(struct tar_stream *t, const char *what)
{
	return al_fail(t->err, "tar: entry %llu: %s", (unsigned long long)t->entries + 1, what);
}

/* Decode an entry header into t->cur, with the pending extension values. */
static int
ts_entry_header(struct tar_stream *t, const unsigned char *h)
{
	struct tar_entry *e = &t->cur;
	uint64_t mode;

	if (tar_number(h + 100, 8, &mode) < 0 || tar_number(h + 108, 8, &e->uid) < 0 ||
	    tar_number(h + 116, 8, &e->gid) < 0 || tar_number(h + 124, 12, &e->size) < 0)
		return ts_fail(t, "bad numeric field");
	e->mode = (unsigned)(mode & 07777);
	e->type = h[156] ? (char)h[156] : '0';
	ts_header_name(h, e->path, sizeof e->path);
	e->link[0] = '\0';
	ts_field(e->link, sizeof e->link, h + 157, 100);
	if (t->has_path)
		memcpy(e->path, t->next.path, sizeof e->path);
	if (t->has_link)
		memcpy(e->link, t->next.link, sizeof e->link);
	if (t->has_uid)
		e->uid = t->next.uid;
	if (t->has_gid)
		e->gid = t->next.gid;
	if (t->has_size)
		e->size = t->next.size;
	if (t->has_gnu_path)
		memcpy(e->path, t->gnu_path, sizeof e->path);
	if (t->has_gnu_link)
		memcpy(e->link, t->gnu_link, sizeof e->link);
	if (h[156] == '\0' && e->path[0] && e->path[strlen(e->path) - 1] == '/')
		e->type = '5';
	if (ts_header_only(e->type))
		e->size = 0;
	e->xattrs = t->xattrs;
	e->acl = (t->xattrs & TAR_XATTR_ACL) != 0;
	ts_pending_clear(t, true);
	return 0;
}

static int
ts_end_entry(struct tar_stream *t)
{
	t->entries++;
	t->state = t->pad ? TS_PAD : TS_HEADER;
	return t->ops->end ? t->ops->end(t->ctx) : 0;
}

static int
ts_header(struct tar_stream *t)
{
	const unsigned char *h = t->block;
	uint64_t size;
	char type = (char)h[156];
	int rc;

	if (tar_block_zero(h)) {
		t->state = TS_DONE;
		return 0;
	}
	if (memcmp(h + 257, "ustar", 5) != 0)
		return ts_fail(t, "not a ustar header");
	if (!tar_checksum_ok(h))
		return ts_fail(t, "bad header checksum");
	if (!ts_gnu_times_ok(h))
		return ts_fail(t, "GNU header with time fields that do not parse");
	if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
		if (tar_number(h + 124, 12, &size) < 0 || size > TAR_EXT_MAX)
			return ts_fail(t, "extension record too large");
		t->ext_type = type;
		t->ext_len = 0;
		t->left = size;
		t->pad = ts_padding(size);
		t->state = TS_EXT;
		return size ? 0 : ts_fail(t, "empty extension record");
	}
	if (ts_entry_header(t, h) < 0)
		return -1;
	t->left = t->cur.size;
	t->pad = ts_padding(t->cur.size);
	if ((rc = t->ops->entry(t->ctx, &t->cur)) != 0)
		return rc;
	if (t->left == 0)
		return ts_end_entry(t);
	t->state = TS_DATA;
	return 0;
}

/* A decimal PAX value that must fit 64 bits. */
static int
ts_decimal(const char *s, size_t n, uint64_t *out)
{
	return bytes_decimal(s, n, 19, out);
}

static int
ts_copy_name(char *dst, const char *s, size_t n)
{
	return n ? bytes_str(dst, TAR_PATH_MAX, s, n) : -1;
}

static bool
ts_key_is(const char *key, size_t klen, const char *want)
{
	return klen == strlen(want) && memcmp(key, want, klen) == 0;
}

/* The kind of the attribute named n[0..len) (XATTR_KEY stripped). */
static unsigned
ts_xattr_kind(const char *n, size_t len)
{
	const struct xattr_kind *k;
	size_t i, kl;

	for (i = 0; i < sizeof xattr_kinds / sizeof xattr_kinds[0]; i++) {
		k = &xattr_kinds[i];
		kl = strlen(k->name);
		if ((k->exact ? len == kl : len >= kl) && memcmp(n, k->name, kl) == 0)
			return k->kind;
	}
	return TAR_XATTR_OTHER;
}

/* One "key=value" of a PAX record. */
static int
ts_pax_pair(struct tar_stream *t, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (ts_key_is(key, klen, "path")) {
		t->has_path = true;
		return ts_copy_name(t->next.path, val, vlen);
	}
	if (ts_key_is(key, klen, "linkpath")) {
		t->has_link = true;
		return ts_copy_name(t->next.link, val, vlen);
	}
	if (ts_key_is(key, klen, "uid")) {
		t->has_uid = true;
		return ts_decimal(val, vlen, &t->next.uid);
	}
	if (ts_key_is(key, klen, "gid")) {
		t->has_gid = true;
		return ts_decimal(val, vlen, &t->next.gid);
	}
	if (ts_key_is(key, klen, "size")) {
		t->has_size = true;
		return ts_decimal(val, vlen, &t->next.size);
	}
	if (klen >= sizeof SPARSE_KEY - 1 && memcmp(key, SPARSE_KEY, sizeof SPARSE_KEY - 1) == 0)
		return 1;
	if (klen >= sizeof XATTR_KEY - 1 && memcmp(key, XATTR_KEY, sizeof XATTR_KEY - 1) == 0)
		t->xattrs |= ts_xattr_kind(key + sizeof XATTR_KEY - 1, klen - (sizeof XATTR_KEY - 1));
	return 0;
}

/* Records of "<len> <key>=<value>\n", len counting the whole record; they replace the last set. */
static int
ts_pax(struct tar_stream *t)
{
	const char *p = t->ext, *end = t->ext + t->ext_len, *sp, *eq;
	uint64_t len;
	int rc;

	ts_pending_clear(t, false);
	while (p < end) {
		sp = memchr(p, ' ', (size_t)(end - p));
		if (!sp || ts_decimal(p, (size_t)(sp - p), &len) < 0 ||
		    len > (uint64_t)(end - p) || len < (uint64_t)(sp - p) + 3 || p[len - 1] != '\n')
			return ts_fail(t, "malformed PAX record");
		eq = memchr(sp + 1, '=', (size_t)(p + len - 1 - (sp + 1)));
		if (!eq || eq == sp + 1)
			return ts_fail(t, "malformed PAX record");
		rc = ts_pax_pair(t, sp + 1, (size_t)(eq - sp - 1), eq + 1,
				 (size_t)(p + len - 1 - (eq + 1)));
		if (rc > 0)
			return ts_fail(t, "GNU sparse records (they rename and remap an entry)");
		if (rc < 0)
			return ts_fail(t, "malformed PAX record");
		p += len;
	}
	return 0;
}

/* A GNU long name: the data, NUL-terminated or not. */
static int
ts_longname(struct tar_stream *t, char *dst, bool *flag)
{
	size_t n = strnlen(t->ext, t->ext_len);

	*flag = true;
	return ts_copy_name(dst, t->ext, n) < 0 ? ts_fail(t, "bad GNU long name") : 0;
}

static int
ts_ext_done(struct tar_stream *t)
{
	t->state = t->pad ? TS_PAD : TS_HEADER;
	switch (t->ext_type) {
	case 'x':
		return ts_pax(t);
	case 'L':
		return ts_longname(t, t->gnu_path, &t->has_gnu_path);
	case 'K':
		return ts_longname(t, t->gnu_link, &t->has_gnu_link);
	default:
		/* 'g': Go hands it out as an entry of its own, dropping what was pending. */
		ts_pending_clear(t, true);
		return 0;
	}
}

static size_t
ts_take(uint64_t left, size_t n)
{
	return left < n ? (size_t)left : n;
}

/* One step of the state machine over p[0..n); returns bytes used, or -1/rc. */
static int
ts_step(struct tar_stream *t, const unsigned char *p, size_t n, size_t *used)
{
	size_t k;
	int rc = 0;

	switch (t->state) {
	case TS_HEADER:
		k = ts_take(TS_BLOCK - t->have, n);
		memcpy(t->block + t->have, p, k);
		t->have += k;
		if (t->have == TS_BLOCK) {
			t->have = 0;
			rc = ts_header(t);
		}
		break;
	case TS_DATA:
		k = ts_take(t->left, n);
		t->left -= k;
		if (t->ops->data && (rc = t->ops->data(t->ctx, p, k)) != 0)
			break;
		if (t->left == 0)
			rc = ts_end_entry(t);
		break;
	case TS_EXT:
		k = ts_take(t->left, n);
		memcpy(t->ext + t->ext_len, p, k);
		t->ext_len += k;
		t->left -= k;
		if (t->left == 0)
			rc = ts_ext_done(t);
		break;
	case TS_PAD:
		k = ts_take(t->pad, n);
		t->pad -= k;
		if (t->pad == 0)
			t->state = TS_HEADER;
		break;
	default:
		k = n;	/* TS_DONE: trailing zero blocks */
		break;
	}
	*used = k;
	return rc;
}

int
tar_stream_feed(struct tar_stream *t, const unsigned char *p, size_t n)
{
	size_t used;
	int rc;

	while (n > 0) {
		if ((rc = ts_step(t, p, n, &used)) != 0)
			return rc;
		p += used;
		n -= used;
	}
	return 0;
}

int
tar_path_normalise(const char *in, char *out, size_t cap)
{
	size_t len = 0, n;
	const char *p = in, *slash;

	if (cap == 0)
		return -1;
	out[0] = '\0';
	while (*p) {
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (len + (len > 0) + n >= cap)
				return -1;
			if (len > 0)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
			out[len] = '\0';
		}
		p += n + (slash != NULL);
	}
	return 0;
}
