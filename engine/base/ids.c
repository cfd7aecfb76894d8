#include "ids.h"
#include "hash.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int
id_draw(void *raw, size_t n)
{
	unsigned char *p = raw;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = getrandom(p + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int
id_hex(char *out, size_t cap, const char *prefix, const void *raw, size_t bytes)
{
	size_t plen = strlen(prefix);

	if (cap > 0)
		out[0] = '\0';
	if (plen + 2 * bytes + 1 > cap)
		return -1;
	memcpy(out, prefix, plen);
	hash_hex(raw, bytes, out + plen);
	return 0;
}

int
id_random(char *out, size_t cap, const char *prefix, size_t bytes)
{
	unsigned char raw[32];

	if (cap > 0)
		out[0] = '\0';
	if (bytes > sizeof raw || strlen(prefix) + 2 * bytes + 1 > cap)
		return -1;
	if (id_draw(raw, bytes) < 0)
		return -1;
	return id_hex(out, cap, prefix, raw, bytes);
}
