#ifndef AIRLOCK_HASH_H
#define AIRLOCK_HASH_H

/*
 * SHA-256 through libcrypto, as lowercase hex; and canonical JSON text
 * written straight into one buffer, so a value is serialised once and the
 * same bytes serve its hash and whatever is sent on.
 *
 * Canonical means what json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENCODE_ANY) writes: no spaces, object keys sorted, strings as
 * jansson escapes them (", \, \b \f \n \r \t, other controls as \u00XX,
 * everything else as UTF-8). Audit entry hashes are computed over this
 * form, so the writer below must stay byte-identical to it: the unit test
 * compares the two.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define HASH_HEX_LEN 64

/* n bytes as 2n lowercase hex digits and a NUL in out. */
void hash_hex(const void *data, size_t n, char *out);

void hash_sha256_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1]);
/* Hash of the canonical form: compact, keys sorted, UTF-8. -1 on failure. */
int hash_json_canonical(const json_t *v, char out[HASH_HEX_LEN + 1]);

/*
 * One digest context, reused: SHA-256 fetched once, no allocation per
 * digest. One context belongs to one thread at a time.
 */
struct hash_ctx;

struct hash_ctx *hash_ctx_new(void);
void hash_ctx_free(struct hash_ctx *h);
/* As hash_sha256_hex; a NULL or failing context falls back to it. */
void hash_ctx_hex(struct hash_ctx *h, const void *data, size_t len,
		  char out[HASH_HEX_LEN + 1]);

/*
 * A canonical JSON writer. Values inside an array are separated by the
 * writer itself. bad is set (and stays) on out of memory or on a string
 * that is not valid UTF-8; the text is then not to be used.
 */
#define HASH_CANON_INLINE	1024

struct hash_canon {
	char *buf;		/* inline, or malloc'd once it outgrows it */
	size_t len, cap;
	bool bad;
	bool first;		/* nothing written yet in the open array */
	char inline_buf[HASH_CANON_INLINE];
};

void hash_canon_init(struct hash_canon *c);
void hash_canon_free(struct hash_canon *c);
void hash_canon_array_open(struct hash_canon *c);
void hash_canon_array_close(struct hash_canon *c);
void hash_canon_int(struct hash_canon *c, int64_t v);
/* A string of len bytes (NUL bytes allowed), or null when s is NULL. */
void hash_canon_str(struct hash_canon *c, const char *s, size_t len);
/* Any jansson value, keys sorted (one element when inside an array). */
void hash_canon_json(struct hash_canon *c, const json_t *v);
/*
 * Text as it is, not an element: the value written next gets no comma.
 * For the members of an object whose keys the caller writes in order
 * ("{\"id\":" then the value); the caller keeps the text valid JSON.
 */
void hash_canon_raw(struct hash_canon *c, const char *s, size_t len);
/*
 * The text as a malloc'd string of *len bytes (plus a NUL), for the
 * caller to free; the writer is left empty. NULL (and the writer freed)
 * when bad or out of memory.
 */
char *hash_canon_take(struct hash_canon *c, size_t *len);

#endif
