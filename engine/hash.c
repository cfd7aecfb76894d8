#include "hash.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

void
hash_sha256_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32) {
		/* Never a valid digest: a verifier sees the mismatch. */
		memset(out, '0', HASH_HEX_LEN);
		out[HASH_HEX_LEN] = '\0';
		return;
	}
	/* By table: a snprintf per byte was a fifth of a call's instructions. */
	for (i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[md[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
	}
	out[2 * n] = '\0';
}

int
hash_json_canonical(const json_t *v, char out[HASH_HEX_LEN + 1])
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (!s)
		return -1;
	hash_sha256_hex(s, strlen(s), out);
	free(s);
	return 0;
}
