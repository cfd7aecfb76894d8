#include "bytes.h"

#include <string.h>

int
bytes_str(char *out, size_t cap, const char *p, size_t n)
{
	if (n >= cap || memchr(p, '\0', n))
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

int
bytes_decimal(const char *s, size_t n, size_t digits, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > digits)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}
