/*
 * The generic encoder and decoder (control_codec.h): one walk over a field
 * table each way. Every bound is the table's: strings within their size,
 * arrays within their max; the decoder never trusts a count from the wire.
 */
#include "control_codec.h"

#include <stdint.h>
#include <string.h>

#include "frame.h"
#include "snapshot.h"

#define AT(obj, off)	((char *)(obj) + (off))
#define CAT(obj, off)	((const char *)(obj) + (off))

/* ---- encoding ---- */

json_t *
codec_str(const char *s, size_t cap)
{
	char buf[CHECK_VALUE_MAX > SNAP_REASON_MAX ? CHECK_VALUE_MAX : SNAP_REASON_MAX];
	size_t n, i;

	if (!s)
		return json_null();
	n = strnlen(s, cap);
	if (frame_utf8_valid((const unsigned char *)s, n))
		return json_stringn(s, n);
	n = n < sizeof buf ? n : sizeof buf;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	return json_stringn(buf, n);
}

static json_t *
unum(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* One scalar (or sub-object) at p, of type t. */
static json_t *
enc_value(const struct codec_field *f, enum codec_type t, const char *p)
{
	switch (t) {
	case CODEC_STR:
		return codec_str(p, f->size);
	case CODEC_CSTR:
		return codec_str(*(const char *const *)p, f->size ? f->size : SIZE_MAX);
	case CODEC_I64:
		return f->flags & CODEC_NULL_NEG && *(const int64_t *)p < 0
			       ? json_null() : json_integer(*(const int64_t *)p);
	case CODEC_U64:
		return unum(*(const uint64_t *)p);
	case CODEC_U32:
		return unum(*(const uint32_t *)p);
	case CODEC_UINT:
		return unum(*(const unsigned *)p);
	case CODEC_SIZE:
		return unum(*(const size_t *)p);
	case CODEC_LONG:
		return json_integer(*(const long *)p);
	case CODEC_I32:
		return json_integer(*(const int32_t *)p);
	case CODEC_BOOL:
		return json_boolean(*(const bool *)p);
	case CODEC_WORD:
		return json_string(((const struct codec_words *)f->aux)->name(*(const int *)p));
	case CODEC_OBJ:
		return codec_encode(f->aux, p);
	default:
		return NULL;
	}
}

static size_t
arr_count(const struct codec_field *f, const void *obj)
{
	size_t n;

	if (f->count_off == CODEC_FIXED)
		return f->max;
	n = *(const size_t *)CAT(obj, f->count_off);
	return n < f->max ? n : f->max;
}

static json_t *
enc_array(const struct codec_field *f, const void *obj)
{
	json_t *a = json_array();
	size_t i, n = arr_count(f, obj);

	for (i = 0; a && i < n; i++) {
		const char *p = CAT(obj, f->off + i * f->size);

		if (json_array_append_new(a, enc_value(f, f->elem, p)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static bool
is_zero(const struct codec_field *f, const void *obj)
{
	const char *p = CAT(obj, f->off);

	return f->type == CODEC_U64 ? *(const uint64_t *)p == 0 : false;
}

static json_t *
enc_field(const struct codec_field *f, const void *obj)
{
	if (f->type == CODEC_ARR)
		return enc_array(f, obj);
	if (f->type == CODEC_HOOK)
		return ((const struct codec_hook *)f->aux)->enc(obj);
	return enc_value(f, f->type, CAT(obj, f->off));
}

int
codec_encode_into(const struct codec_table *t, const void *obj, json_t *o)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct codec_field *f = &t->f[i];

		if ((f->when && !f->when(obj)) || (f->flags & CODEC_NO_ZERO && is_zero(f, obj)))
			continue;
		if (json_object_set_new(o, f->name, enc_field(f, obj)) < 0)
			return -1;
	}
	return 0;
}

json_t *
codec_encode(const struct codec_table *t, const void *obj)
{
	json_t *o = json_object();

	if (o && codec_encode_into(t, obj, o) == 0)
		return o;
	json_decref(o);
	return NULL;
}

/* ---- decoding ---- */

/* Cut within cap, never inside a UTF-8 sequence: what is kept is still text. */
static void
dec_str(const json_t *v, char *out, size_t cap)
{
	const char *s = json_string_value(v);
	size_t n = s ? strlen(s) : 0;

	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s ? s : "", n);
	out[n] = '\0';
}

static uint64_t
dec_unum(const json_t *v)
{
	json_int_t n = json_integer_value(v);

	return n < 0 ? 0 : (uint64_t)n;
}

/* The word's index, or -1 (missing or unknown). */
static int
dec_word(const struct codec_words *w, const json_t *v)
{
	const char *s = json_string_value(v);
	int i;

	for (i = 0; s && i < w->n; i++)
		if (strcmp(w->name(i), s) == 0)
			return i;
	return -1;
}

/* A sub-object: cleared, then read; -1 when it lacks a required field. */
static int
dec_obj(const struct codec_table *t, const json_t *v, char *p)
{
	memset(p, 0, t->size);
	return codec_decode(t, v, p);
}

/* One value of type t at p; -1 when required and not there. */
static int
dec_value(const struct codec_field *f, enum codec_type t, const json_t *v, char *p)
{
	int w;

	switch (t) {
	case CODEC_STR:
		dec_str(v, p, f->size);
		return f->flags & CODEC_REQUIRED && !p[0] ? -1 : 0;
	case CODEC_I64:
		*(int64_t *)p = f->flags & CODEC_NULL_NEG && json_is_null(v) ? -1
									 : json_integer_value(v);
		break;
	case CODEC_U64:
		*(uint64_t *)p = dec_unum(v);
		break;
	case CODEC_U32:
		*(uint32_t *)p = (uint32_t)dec_unum(v);
		break;
	case CODEC_UINT:
		*(unsigned *)p = (unsigned)dec_unum(v);
		break;
	case CODEC_SIZE:
		*(size_t *)p = (size_t)dec_unum(v);
		break;
	case CODEC_LONG:
		*(long *)p = (long)json_integer_value(v);
		break;
	case CODEC_I32:
		*(int32_t *)p = (int32_t)json_integer_value(v);
		break;
	case CODEC_BOOL:
		*(bool *)p = json_is_true(v);
		break;
	case CODEC_WORD:
		w = dec_word(f->aux, v);
		*(int *)p = w < 0 ? 0 : w;
		return f->flags & CODEC_REQUIRED && w < 0 ? -1 : 0;
	case CODEC_OBJ:
		return dec_obj(f->aux, v, p) < 0 && f->flags & CODEC_REQUIRED ? -1 : 0;
	default:
		break;
	}
	return 0;
}

/* Up to the bound (and a shared count); an element that cannot be read is left out. */
static int
dec_array(const struct codec_field *f, const json_t *a, void *obj)
{
	size_t i, n = 0, max = f->max;

	if (f->flags & CODEC_SHARED)
		max = arr_count(f, obj);
	memset(AT(obj, f->off), 0, f->max * f->size);
	if (f->flags & CODEC_REQUIRED && !json_is_array(a))
		return -1;
	for (i = 0; i < json_array_size(a) && n < max; i++) {
		const json_t *v = json_array_get(a, i);
		char *p = AT(obj, f->off + n * f->size);

		n += (f->elem == CODEC_OBJ ? dec_obj(f->aux, v, p) : dec_value(f, f->elem, v, p)) == 0;
	}
	if (f->count_off != CODEC_FIXED && !(f->flags & CODEC_SHARED))
		*(size_t *)AT(obj, f->count_off) = n;
	return 0;
}

static int
dec_field(const struct codec_field *f, const json_t *v, void *obj)
{
	const struct codec_hook *h = f->aux;

	switch (f->type) {
	case CODEC_ARR:
		return dec_array(f, v, obj);
	case CODEC_HOOK:
		return h->dec ? h->dec(v, obj) : 0;
	case CODEC_CSTR:
		return 0;
	default:
		return dec_value(f, f->type, v, AT(obj, f->off));
	}
}

int
codec_decode(const struct codec_table *t, const json_t *v, void *obj)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct codec_field *f = &t->f[i];

		if (f->flags & CODEC_GATED && f->when && !f->when(obj))
			continue;
		if (dec_field(f, json_object_get(v, f->name), obj) < 0)
			return -1;
	}
	return 0;
}
