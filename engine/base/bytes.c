#include "bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum bytes_read
bytes_read_fd(int fd, size_t cap, char **buf, size_t *n)
{
	ssize_t got = 1;
	int saved = 0;

	*n = 0;
	if (!(*buf = malloc(cap + 1)))
		return BYTES_READ_NOMEM;
	while (got > 0 && *n <= cap) {
		got = read(fd, *buf + *n, cap + 1 - *n);
		if (got < 0 && errno == EINTR)
			got = 1;
		else if (got < 0)
			saved = errno;
		else
			*n += (size_t)got;
	}
	errno = saved;
	return got < 0 ? BYTES_READ_ERROR : *n > cap ? BYTES_READ_TOO_LARGE : BYTES_READ_OK;
}

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
