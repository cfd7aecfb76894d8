#ifndef AIRLOCK_HASH_H
#define AIRLOCK_HASH_H

/* SHA-256 through libcrypto, as lowercase hex. */

#include <stddef.h>

#include <jansson.h>

#define HASH_HEX_LEN 64

void hash_sha256_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1]);
/* Hash of the canonical form: compact, keys sorted, UTF-8. -1 on failure. */
int hash_json_canonical(const json_t *v, char out[HASH_HEX_LEN + 1]);

#endif
