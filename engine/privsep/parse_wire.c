#include "parse_wire.h"
#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

size_t
parse_body_max(size_t frame_bytes)
{
	return PARSE_EXPANSION * frame_bytes + PARSE_SLACK;
}

/* Until fd is ready for events, or the deadline: 0, or -1 with errno. */
static int
wait_fd(int fd, short events, int64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left;
	int rc;

	for (;;) {
		left = deadline_ms - clock_mono_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		rc = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

int
parse_send(int fd, uint32_t type, const void *a, size_t a_len, const void *b,
	   size_t b_len, int64_t deadline_ms)
{
	struct parse_header h = { type, (uint32_t)(a_len + b_len) };
	struct iovec v[3] = {
		{ &h, sizeof h }, { (void *)a, a_len }, { (void *)b, b_len },
	};
	struct iovec *at = v;
	int n = 3;
	ssize_t w;

	if (a_len + b_len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	while (n > 0) {
		w = writev(fd, at, n);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (w < 0 && errno == EAGAIN && wait_fd(fd, POLLOUT, deadline_ms) < 0)
			return -1;
		for (; w > 0 && n > 0; at++, n--) {
			if ((size_t)w < at->iov_len) {
				at->iov_base = (char *)at->iov_base + w;
				at->iov_len -= (size_t)w;
				break;
			}
			w -= (ssize_t)at->iov_len;
		}
		while (n > 0 && at->iov_len == 0) {
			at++;
			n--;
		}
	}
	return 0;
}

/* Exactly len bytes, or -1 (EPIPE at the end of the stream). */
static int
read_full(int fd, void *buf, size_t len, int64_t deadline_ms)
{
	size_t got = 0;
	ssize_t r;

	while (got < len) {
		r = read(fd, (char *)buf + got, len - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0) {
			errno = EPIPE;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || wait_fd(fd, POLLIN, deadline_ms) < 0)
			return -1;
	}
	return 0;
}

int
parse_recv_head(int fd, struct parse_header *h, int64_t deadline_ms)
{
	return read_full(fd, h, sizeof *h, deadline_ms);
}

int
parse_recv_body(int fd, void *buf, size_t len, int64_t deadline_ms)
{
	return read_full(fd, buf, len, deadline_ms);
}

int
parse_recv(int fd, uint32_t *type, void *buf, size_t cap, size_t *len, int64_t deadline_ms)
{
	struct parse_header h;

	if (parse_recv_head(fd, &h, deadline_ms) < 0)
		return -1;
	if (h.len > cap) {
		errno = EMSGSIZE;
		return -1;
	}
	if (parse_recv_body(fd, buf, h.len, deadline_ms) < 0)
		return -1;
	*type = h.type;
	*len = h.len;
	return 0;
}
