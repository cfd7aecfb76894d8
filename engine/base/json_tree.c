/* A JSON value as a binary tree, both ways (json_tree.h). */
#include "json_tree.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define UINT_BYTES	10	/* the longest LEB128 of 64 bits */

/* --- writing ------------------------------------------------------------- */

/* v as LEB128 into b: the bytes written. */
static size_t
leb128(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	do {
		b[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		b[n++] |= v ? 0x80 : 0;
	} while (v);
	return n;
}

/* A tag and the unsigned number after it, in one append. */
static void
put_tagged(struct hash_canon *out, uint8_t tag, uint64_t v)
{
	uint8_t b[1 + UINT_BYTES];

	b[0] = tag;
	hash_canon_raw(out, (const char *)b, 1 + leb128(b + 1, v));
}

#define KEY	0	/* put_text's tag for a key: none */

/* A string (its tag first) or a key: its length, its bytes; no NUL in them. */
static void
put_text(struct hash_canon *out, uint8_t tag, const char *s, size_t len)
{
	uint8_t b[1 + UINT_BYTES];
	size_t n = 0;

	if (memchr(s, '\0', len)) {
		out->bad = true;
		return;
	}
	if (tag != KEY)
		b[n++] = tag;
	n += leb128(b + n, len);
	hash_canon_raw(out, (const char *)b, n);
	hash_canon_raw(out, s, len);
}

static uint64_t
zigzag(int64_t v)
{
	return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

static void
put_real(struct hash_canon *out, double d)
{
	char b[1 + sizeof d];

	if (!isfinite(d)) {
		out->bad = true;
		return;
	}
	b[0] = JSON_TREE_REAL;
	memcpy(b + 1, &d, sizeof d);
	hash_canon_raw(out, b, sizeof b);
}

static void write_value(struct hash_canon *out, const json_t *v, unsigned depth);

static void
put_object(struct hash_canon *out, const json_t *v, unsigned depth)
{
	const char *key;
	size_t len;
	json_t *m;

	put_tagged(out, JSON_TREE_OBJECT, json_object_size(v));
	json_object_keylen_foreach((json_t *)v, key, len, m) {
		if (out->bad)
			return;
		put_text(out, KEY, key, len);
		write_value(out, m, depth);
	}
}

static void
put_array(struct hash_canon *out, const json_t *v, unsigned depth)
{
	size_t i, n = json_array_size(v);

	put_tagged(out, JSON_TREE_ARRAY, n);
	for (i = 0; i < n && !out->bad; i++)
		write_value(out, json_array_get(v, i), depth);
}

/* depth: the arrays and objects around v. */
static void
write_value(struct hash_canon *out, const json_t *v, unsigned depth)
{
	static const char tags[] = { [JSON_NULL] = JSON_TREE_NULL, [JSON_TRUE] = JSON_TREE_TRUE,
				     [JSON_FALSE] = JSON_TREE_FALSE };

	if (out->bad)
		return;
	if ((json_is_object(v) || json_is_array(v)) && depth == JSON_TREE_DEPTH_MAX) {
		out->bad = true;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_object(out, v, depth + 1);
		return;
	case JSON_ARRAY:
		put_array(out, v, depth + 1);
		return;
	case JSON_STRING:
		put_text(out, JSON_TREE_STRING, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		put_tagged(out, JSON_TREE_INTEGER, zigzag(json_integer_value(v)));
		return;
	case JSON_REAL:
		put_real(out, json_real_value(v));
		return;
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		hash_canon_raw(out, &tags[json_typeof(v)], 1);
		return;
	}
	out->bad = true;
}

void
json_tree_write(struct hash_canon *out, const json_t *v)
{
	if (!v) {
		out->bad = true;
		return;
	}
	write_value(out, v, 0);
}

static bool
shallow(const json_t *v, unsigned depth)
{
	const char *key;
	json_t *m;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return true;
	if (depth == JSON_TREE_DEPTH_MAX)
		return false;
	json_object_foreach((json_t *)v, key, m)
		if (!shallow(m, depth + 1))
			return false;
	json_array_foreach(v, i, m)
		if (!shallow(m, depth + 1))
			return false;
	return true;
}

bool
json_tree_shallow(const json_t *v)
{
	return v && shallow(v, 0);
}

/* --- reading ------------------------------------------------------------- */

struct tree_in {
	const uint8_t *p, *end;
};

static size_t
left(const struct tree_in *in)
{
	return (size_t)(in->end - in->p);
}

/* An unsigned number in its shortest LEB128 form: 0, or -1. */
static int
get_uint(struct tree_in *in, uint64_t *out)
{
	unsigned shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (in->p == in->end || shift > 63)
			return -1;
		b = *in->p++;
		if (shift == 63 && b > 1)	/* past 64 bits */
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (b == 0 && shift > 7)	/* a zero last byte: a shorter form exists */
		return -1;
	*out = v;
	return 0;
}

/* A length and that many bytes, without NUL (UTF-8 is jansson's to check). */
static int
get_text(struct tree_in *in, const char **s, size_t *len)
{
	uint64_t n;

	if (get_uint(in, &n) < 0 || n > left(in) || memchr(in->p, '\0', (size_t)n))
		return -1;
	*s = (const char *)in->p;
	*len = (size_t)n;
	in->p += n;
	return 0;
}

static json_t *
read_integer(struct tree_in *in)
{
	uint64_t u;

	if (get_uint(in, &u) < 0)
		return NULL;
	return json_integer(u & 1 ? (json_int_t)~(u >> 1) : (json_int_t)(u >> 1));
}

static json_t *
read_real(struct tree_in *in)
{
	double d;

	if (left(in) < sizeof d)
		return NULL;
	memcpy(&d, in->p, sizeof d);
	in->p += sizeof d;
	return isfinite(d) ? json_real(d) : NULL;
}

static json_t *
read_string(struct tree_in *in)
{
	const char *s;
	size_t len;

	return get_text(in, &s, &len) < 0 ? NULL : json_stringn(s, len);
}

static json_t *read_value(struct tree_in *in, unsigned depth);

/* Each value takes a byte at least, so count is bounded by the bytes left. */
static json_t *
read_array(struct tree_in *in, unsigned depth)
{
	uint64_t n, i;
	json_t *a;

	if (get_uint(in, &n) < 0 || n > left(in) || !(a = json_array()))
		return NULL;
	for (i = 0; i < n; i++)
		if (json_array_append_new(a, read_value(in, depth)) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* One member: a key new to o (json_object_setn_new checks its UTF-8), a value. */
static int
read_member(struct tree_in *in, json_t *o, unsigned depth)
{
	const char *key;
	size_t len;

	if (get_text(in, &key, &len) < 0 || json_object_getn(o, key, len))
		return -1;
	return json_object_setn_new(o, key, len, read_value(in, depth));
}

/* Each member takes two bytes at least: an empty key's length and a tag. */
static json_t *
read_object(struct tree_in *in, unsigned depth)
{
	uint64_t n, i;
	json_t *o;

	if (get_uint(in, &n) < 0 || n > left(in) / 2 || !(o = json_object()))
		return NULL;
	for (i = 0; i < n; i++)
		if (read_member(in, o, depth) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* depth: the arrays and objects around the value. */
static json_t *
read_value(struct tree_in *in, unsigned depth)
{
	if (in->p == in->end)
		return NULL;
	switch (*in->p++) {
	case JSON_TREE_NULL:
		return json_null();
	case JSON_TREE_TRUE:
		return json_true();
	case JSON_TREE_FALSE:
		return json_false();
	case JSON_TREE_INTEGER:
		return read_integer(in);
	case JSON_TREE_REAL:
		return read_real(in);
	case JSON_TREE_STRING:
		return read_string(in);
	case JSON_TREE_ARRAY:
		return depth < JSON_TREE_DEPTH_MAX ? read_array(in, depth + 1) : NULL;
	case JSON_TREE_OBJECT:
		return depth < JSON_TREE_DEPTH_MAX ? read_object(in, depth + 1) : NULL;
	}
	return NULL;
}

json_t *
json_tree_read(const void *buf, size_t len)
{
	struct tree_in in;
	json_t *v;

	if (!buf)
		return NULL;
	in = (struct tree_in){ buf, (const uint8_t *)buf + len };
	v = read_value(&in, 0);
	if (v && in.p != in.end) {
		json_decref(v);
		return NULL;
	}
	return v;
}
