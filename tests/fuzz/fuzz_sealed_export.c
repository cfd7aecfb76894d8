#include "fuzz.h"

#include <string.h>

#include "hash.h"
#include "sealed.h"
#include "sealed_image.h"
#include "tar_stream.h"

/*
 * The sealed check's reader (engine/sandbox/sealed_image.h) and through it the
 * streaming tar parser (engine/base/tar_stream.h) and the verdict
 * (engine/admission/sealed.h), over hostile bytes. Byte 0 seeds the split, byte 1
 * picks the mode (bit 0), the agent's groups (bit 1) and whether every
 * ustar header gets its checksum rewritten first (bit 2: a mutated header
 * then reaches the code past the checksum); the rest is
 *
 *   mode 0: an image export (docker save format). The image ID is the
 *           SHA-256 of the first "*.json" file that is not manifest.json,
 *           so a seed's digests hold and mutations reach the verdict;
 *   mode 1: up to LAYERS_MAX layer tars, bottom first, between SEPARATOR
 *           lines, fed straight to sealed_layer_add (no digests in the way).
 *
 * Each input is read twice, whole and in pseudo-random pieces (1 byte to
 * 64 KiB): the outcome must be the same — the same error, or the same
 * verdict. A verdict or an error is printable, bounded and never holds a
 * name found under a sealed directory or file content: every seed's file
 * content holds MARK_CONTENT and every name under a sealed directory
 * MARK_NAME, and the sealed paths hold neither.
 */

#define LAYERS_MAX	4
#define SEPARATOR	"\n%%airlock-layer%%\n"
#define MARK_CONTENT	"CANARY"
#define MARK_NAME	"hidden"

static const char *const sealed_paths[] = { "/srv/vault", "/srv/key", "/opt/app/secret" };

struct outcome {
	int rc;
	char text[AL_ERR_MAX > SEALED_TEXT_MAX ? AL_ERR_MAX : SEALED_TEXT_MAX];
	bool pass;
	size_t layers;
};

/* --- pieces -------------------------------------------------------------- */

struct split {
	uint32_t state;
	bool whole;
};

static size_t
split_next(struct split *s, size_t left)
{
	uint32_t r;
	size_t n;

	if (s->whole)
		return left;
	s->state ^= s->state << 13;
	s->state ^= s->state >> 17;
	s->state ^= s->state << 5;
	/* Mostly small, so that a boundary falls inside most records; sometimes large. */
	r = s->state >> 24;
	if (r < 128)
		n = 1 + s->state % 7;			/* a few bytes */
	else if (r < 192)
		n = 1 + s->state % 1100;		/* around a block */
	else if (r < 248)
		n = 511 + s->state % 3;			/* just short of, at or past one */
	else
		n = 1 + s->state % 65536;
	return n < left ? n : left;
}

/* --- checksums -------------------------------------------------------------- */

/* Rewrite the checksum of every block of p[0..n) that looks like a ustar header. */
static void
fix_checksums(uint8_t *p, size_t n)
{
	size_t off, i;
	unsigned sum;

	for (off = 0; off + 512 <= n; off += 512) {
		if (memcmp(p + off + 257, "ustar", 5) != 0)
			continue;
		memset(p + off + 148, ' ', 8);
		for (sum = 0, i = 0; i < 512; i++)
			sum += p[off + i];
		snprintf((char *)p + off + 148, 8, "%06o", sum & 0777777);
	}
}

/* Mode 1's layers are aligned from each one's start: fix each segment. */
static void
fix_segments(uint8_t *p, size_t n)
{
	uint8_t *end = p + n, *sep;

	for (;;) {
		sep = memmem(p, (size_t)(end - p), SEPARATOR, sizeof SEPARATOR - 1);
		fix_checksums(p, sep ? (size_t)(sep - p) : (size_t)(end - p));
		if (!sep)
			return;
		p = sep + sizeof SEPARATOR - 1;
	}
}

/* --- the promises on a text ------------------------------------------------ */

static void
check_text(const char *s, size_t cap)
{
	FUZZ_CHECK(s[0] != '\0');
	FUZZ_CHECK(strnlen(s, cap) < cap);
	FUZZ_CHECK(fuzz_printable(s));
	FUZZ_CHECK(strstr(s, MARK_CONTENT) == NULL);
	FUZZ_CHECK(strstr(s, MARK_NAME) == NULL);
}

static void
check_same(const struct outcome *a, const struct outcome *b)
{
	FUZZ_CHECK(a->rc == b->rc);
	FUZZ_CHECK(a->pass == b->pass);
	FUZZ_CHECK(a->layers == b->layers);
	FUZZ_CHECK(strcmp(a->text, b->text) == 0);
}

static void
judged(struct outcome *o, const struct sealed_layer *const *layers, size_t n,
       const struct strv *sealed, const struct sealed_who *who)
{
	struct sealed_verdict v;

	memset(&v, 0, sizeof v);
	sealed_judge(layers, n, sealed, who, &v);
	check_text(v.text, sizeof v.text);
	FUZZ_CHECK(!v.pass || strstr(v.text, "none readable"));
	o->pass = v.pass;
	o->layers = n;
	memcpy(o->text, v.text, sizeof v.text);
}

static void
failed(struct outcome *o, const struct al_err *err)
{
	check_text(err->msg, sizeof err->msg);
	o->rc = -1;
	snprintf(o->text, sizeof o->text, "%s", err->msg);
}

/* --- mode 0: the export ----------------------------------------------------- */

/* The image ID the export's config would have: located with the parser itself. */
struct find {
	const unsigned char *data;	/* the first config candidate's bytes, in the input */
	size_t len;
	bool in, done;
	const unsigned char *base;
};

static int
find_entry(void *ctx, const struct tar_entry *e)
{
	struct find *f = ctx;
	size_t n = strlen(e->path);

	f->in = !f->done && e->type == '0' && n > 5 && strcmp(e->path + n - 5, ".json") == 0 &&
		strcmp(e->path, "manifest.json") != 0;
	return 0;
}

static int
find_data(void *ctx, const unsigned char *p, size_t n)
{
	struct find *f = ctx;

	if (f->in && !f->data)
		f->data = p;
	if (f->in)
		f->len += n;
	return 0;
}

static int
find_end(void *ctx)
{
	struct find *f = ctx;

	if (f->in)
		f->done = true;
	f->in = false;
	return 0;
}

static const struct tar_stream_ops find_ops = { find_entry, find_data, find_end };

static void
image_id_of(const uint8_t *data, size_t size, char id[72])
{
	struct find f = { 0 };
	struct tar_stream t;
	struct al_err err;
	char hex[HASH_HEX_LEN + 1];

	snprintf(id, 72, "sha256:%064d", 0);
	if (tar_stream_init(&t, &find_ops, &f, &err) < 0)
		return;
	(void)tar_stream_feed(&t, data, size);	/* whole: the data pieces are contiguous */
	tar_stream_free(&t);
	if (f.done) {
		hash_sha256_hex(f.data ? f.data : (const unsigned char *)"", f.len, hex);
		snprintf(id, 72, "sha256:%s", hex);
	}
}

static void
export_once(const uint8_t *data, size_t size, const char *id, const struct strv *sealed,
	    const struct sealed_who *who, struct split sp, struct outcome *o)
{
	struct sealed_export x;
	struct al_err err;
	size_t off = 0, k;
	int rc;

	memset(o, 0, sizeof *o);
	FUZZ_CHECK(sealed_export_init(&x, sealed, &err) == 0);
	for (rc = 0; rc == 0 && off < size; off += k) {
		k = split_next(&sp, size - off);
		rc = sealed_export_feed(&x, data + off, k);
	}
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == 0)
		rc = sealed_export_finish(&x, id);
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc < 0) {
		failed(o, &err);
	} else {
		FUZZ_CHECK(x.n_order <= x.n_blobs);
		judged(o, x.order, x.n_order, sealed, who);
	}
	sealed_export_free(&x);
}

/* --- mode 1: layers straight to the verdict ----------------------------------- */

struct layer_ctx {
	struct sealed_layer *l;
	const struct strv *sealed;
	size_t budget;
	struct al_err *err;
};

static int
layer_entry(void *ctx, const struct tar_entry *e)
{
	struct layer_ctx *c = ctx;

	return sealed_layer_add(c->l, e, c->sealed, &c->budget, c->err) < 0 ? -1 : 0;
}

static const struct tar_stream_ops layer_ops = { layer_entry, NULL, NULL };

static int
layer_read(struct layer_ctx *c, const uint8_t *p, size_t n, struct split *sp)
{
	struct tar_stream t;
	size_t off = 0, k;
	int rc;

	FUZZ_CHECK(tar_stream_init(&t, &layer_ops, c, c->err) == 0);
	for (rc = 0; rc == 0 && off < n; off += k) {
		k = split_next(sp, n - off);
		rc = tar_stream_feed(&t, p + off, k);
	}
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == 0 && !tar_stream_done(&t))
		rc = al_fail(c->err, "fuzz: layer truncated");
	tar_stream_free(&t);
	return rc;
}

static void
layers_once(const uint8_t *data, size_t size, const struct strv *sealed,
	    const struct sealed_who *who, struct split sp, struct outcome *o)
{
	struct sealed_layer layers[LAYERS_MAX];
	const struct sealed_layer *order[LAYERS_MAX];
	struct al_err err;
	struct layer_ctx c = { .sealed = sealed, .budget = SEALED_ENTRIES_MAX, .err = &err };
	const uint8_t *p = data, *end = data + size, *sep;
	size_t n = 0, len;
	int rc = 0;

	memset(o, 0, sizeof *o);
	memset(layers, 0, sizeof layers);
	while (rc == 0 && n < LAYERS_MAX && p <= end) {
		sep = memmem(p, (size_t)(end - p), SEPARATOR, sizeof SEPARATOR - 1);
		len = sep ? (size_t)(sep - p) : (size_t)(end - p);
		c.l = &layers[n];
		order[n] = &layers[n];
		n++;
		rc = layer_read(&c, p, len, &sp);
		if (!sep)
			break;
		p = sep + sizeof SEPARATOR - 1;
	}
	FUZZ_CHECK(c.budget <= SEALED_ENTRIES_MAX);
	if (rc < 0)
		failed(o, &err);
	else
		judged(o, order, n, sealed, who);
	while (n > 0)
		sealed_layer_free(&layers[--n]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sealed_who who = { .uid = 10001, .gids = { 10001 }, .n_gids = 1 };
	uint32_t seed = (uint32_t)fuzz_take(&data, &size, 256);
	unsigned flags = (unsigned)fuzz_take(&data, &size, 256) - 1;
	struct split whole = { .whole = true }, pieces = { .state = 0x9e3779b9u * seed };
	struct outcome a, b;
	struct strv sealed = { 0 };
	uint8_t *copy = NULL;
	char id[72];
	size_t i;

	for (i = 0; i < sizeof sealed_paths / sizeof sealed_paths[0]; i++)
		FUZZ_CHECK(strv_push(&sealed, sealed_paths[i]) == 0);
	if (flags & 2)
		who.gids[who.n_gids++] = 5000;
	if (flags & 4) {
		FUZZ_CHECK((copy = malloc(size ? size : 1)) != NULL);
		memcpy(copy, data, size);
		if (flags & 1)
			fix_segments(copy, size);
		else
			fix_checksums(copy, size);
		data = copy;
	}
	if (flags & 1) {
		layers_once(data, size, &sealed, &who, whole, &a);
		layers_once(data, size, &sealed, &who, pieces, &b);
	} else {
		image_id_of(data, size, id);
		export_once(data, size, id, &sealed, &who, whole, &a);
		export_once(data, size, id, &sealed, &who, pieces, &b);
	}
	check_same(&a, &b);
	strv_free(&sealed);
	free(copy);
	return 0;
}
