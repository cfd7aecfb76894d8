#include "ids.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int
id_random(char *out, size_t cap, const char *prefix, size_t bytes)
{
	unsigned char raw[32];
	size_t plen = strlen(prefix), got = 0, i;
	ssize_t n;

	if (cap > 0)
		out[0] = '\0';
	if (bytes > sizeof raw || plen + 2 * bytes + 1 > cap)
		return -1;
	while (got < bytes) {
		n = getrandom(raw + got, bytes - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	memcpy(out, prefix, plen);
	for (i = 0; i < bytes; i++)
		snprintf(out + plen + 2 * i, 3, "%02x", raw[i]);
	return 0;
}
