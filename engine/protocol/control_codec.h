#ifndef AIRLOCK_CONTROL_CODEC_H
#define AIRLOCK_CONTROL_CODEC_H

/*
 * The one encoder and the one decoder of the control protocol: each walks a
 * field table (control_tables.c declares one per structure that crosses
 * the socket) instead of code written per field. A table line says the
 * JSON name, the type, where the field is in the C struct (offsetof), its
 * size, and for sub-objects and arrays the table or bound they follow.
 *
 * Encoding: fields in table order (the key order on the wire), each string
 * cut at its size, non-UTF-8 bytes as '?'. Decoding: a missing field is
 * zero; a string is cut within its size on a UTF-8 boundary; an array is
 * read up to its bound; a word not in its table is 0 (the first word), or
 * refuses the object when the field is required. Nothing is guessed.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum codec_type {
	CODEC_STR,	/* char[size] */
	CODEC_CSTR,	/* const char *, at most size bytes (0: no bound); encode only */
	CODEC_I64,	/* int64_t */
	CODEC_U64,	/* uint64_t: encoded at most INT64_MAX, a negative decoded 0 */
	CODEC_U32,	/* uint32_t, the same */
	CODEC_UINT,	/* unsigned, the same */
	CODEC_SIZE,	/* size_t, the same */
	CODEC_LONG,	/* long */
	CODEC_I32,	/* int32_t */
	CODEC_BOOL,	/* bool */
	CODEC_WORD,	/* an enum (int) named by words: aux is a struct codec_words */
	CODEC_OBJ,	/* a struct inside: aux is its struct codec_table */
	CODEC_ARR,	/* elem[max] with a size_t count at count_off (CODEC_FIXED: max always) */
	CODEC_HOOK,	/* its own code: aux is a struct codec_hook */
};

#define CODEC_FIXED ((size_t)-1)

/* Field flags. */
#define CODEC_REQUIRED	(1u << 0)	/* decode: missing, empty or unknown refuses the object */
#define CODEC_GATED	(1u << 1)	/* decode: read only when `when` holds, as encoded */
#define CODEC_NULL_NEG	(1u << 2)	/* I64: a negative is null, and null is read back -1 */
#define CODEC_NO_ZERO	(1u << 3)	/* encode: left out when zero */
#define CODEC_SHARED	(1u << 4)	/* ARR: another array sets the count; read up to it */

struct codec_words {
	const char *(*name)(int i);
	int n;
};

struct codec_hook {
	json_t *(*enc)(const void *obj);
	int (*dec)(const json_t *v, void *obj);	/* NULL: not read back */
};

struct codec_field {
	const char *name;
	enum codec_type type;
	size_t off;
	size_t size;		/* STR, CSTR: the bound; ARR: one element */
	unsigned flags;
	const void *aux;	/* OBJ, ARR of OBJ: table; WORD: words; HOOK: hook */
	enum codec_type elem;	/* ARR: STR, I32, I64, U64 or OBJ */
	size_t count_off, max;	/* ARR */
	bool (*when)(const void *obj);	/* encoded only when true; NULL: always */
};

struct codec_table {
	const char *name;
	size_t size;		/* of the struct */
	size_t n;
	const struct codec_field *f;
};

#define CODEC_TABLE(type, fields) \
	{ #type, sizeof(struct type), sizeof(fields) / sizeof(fields)[0], fields }

/* The object for obj by table t; NULL when out of memory. */
json_t *codec_encode(const struct codec_table *t, const void *obj);
/* Into an object already made (a reply's fields after id and ok): 0 or -1. */
int codec_encode_into(const struct codec_table *t, const void *obj, json_t *o);
/*
 * v into obj by table t: 0, or -1 when a required field is missing or
 * unknown. Fields not in v are set to zero; obj is not cleared first (the
 * caller clears it when its padding matters).
 */
int codec_decode(const struct codec_table *t, const json_t *v, void *obj);

/* A string within cap bytes, non-UTF-8 bytes as '?' (engine strings are ASCII). */
json_t *codec_str(const char *s, size_t cap);

#endif
