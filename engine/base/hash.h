#ifndef AIRLOCK_HASH_H
#define AIRLOCK_HASH_H

/*
 * SHA-256 through libcrypto, as lowercase hex, of bytes or of a value's
 * canonical JSON text (canon.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "canon.h"

#define HASH_HEX_LEN 64

/* n bytes as 2n lowercase hex digits and a NUL in out. */
void hash_hex(const void *data, size_t n, char *out);

void hash_sha256_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1]);
/* Hash of the canonical form: compact, keys sorted, UTF-8. -1 on failure. */
int hash_json_canonical(const json_t *v, char out[HASH_HEX_LEN + 1]);

/*
 * One digest context, reused: SHA-256 (or HMAC-SHA-256 and its key's pads)
 * fetched or set once, not per digest. One context belongs to one thread
 * at a time.
 */
struct hash_ctx;

struct hash_ctx *hash_ctx_new(void);
/*
 * HMAC-SHA-256 under key (copied; len > 0), as hex of the same width: a
 * payload hash nobody can recompute without the key. NULL on failure.
 */
struct hash_ctx *hash_ctx_new_keyed(const unsigned char *key, size_t len);
void hash_ctx_free(struct hash_ctx *h);
/*
 * As hash_sha256_hex, or the HMAC of a keyed context. A NULL context falls
 * back to hash_sha256_hex; a failing one gives all zeros, never a digest
 * of another kind.
 */
void hash_ctx_hex(struct hash_ctx *h, const void *data, size_t len,
		  char out[HASH_HEX_LEN + 1]);

#endif
