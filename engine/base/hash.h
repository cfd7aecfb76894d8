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
 * One digest context, reused: SHA-256 fetched once, no allocation per
 * digest. One context belongs to one thread at a time.
 */
struct hash_ctx;

struct hash_ctx *hash_ctx_new(void);
void hash_ctx_free(struct hash_ctx *h);
/* As hash_sha256_hex; a NULL or failing context falls back to it. */
void hash_ctx_hex(struct hash_ctx *h, const void *data, size_t len,
		  char out[HASH_HEX_LEN + 1]);

#endif
