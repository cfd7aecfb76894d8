#include "shim_mcp.h"
#include "shim_io.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int
shim_connect(void)
{
	struct sockaddr_un a;
	socklen_t alen = shim_socket_address(&a);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s >= 0 && connect(s, (struct sockaddr *)&a, alen) == 0)
		return s;
	if (s >= 0)
		close(s);
	return -1;
}


/* Send fds with the hand-over byte; 0 when sent (nothing is sent on failure). */
static int
send_fds(int s, const int fds[2])
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	char byte = HANDOVER_BYTE;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	ssize_t w;

	memset(&ctl, 0, sizeof ctl);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, 2 * sizeof(int));
	do
		w = sendmsg(s, &m, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == 1 ? 0 : -1;
}

/* One byte from s: 1 read, 0 at EOF, -1 on an error. */
static int
read_byte(int s)
{
	char b;
	ssize_t r;

	do
		r = read(s, &b, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 1 : (int)r;
}

enum handover { HANDED, NOT_SENT, REFUSED };

static enum handover
hand_over(int s)
{
	static const int fds[2] = { 0, 1 };

	if (!shim_passable(0) || !shim_passable(1) || send_fds(s, fds) < 0)
		return NOT_SENT;
	if (read_byte(s) != 1)
		return REFUSED;	/* the parent closed them: ours still work */
	/* Only the parent holds them now: the client's EOF is the parent's to see. */
	close(0);
	close(1);
	return HANDED;
}

static int
relay_copy(int from, int to)
{
	char buf[65536];
	ssize_t r = read(from, buf, sizeof buf);

	if (r < 0 && errno == EINTR)
		return 0;
	if (r <= 0)
		return -1;
	return shim_write_all(to, buf, (size_t)r);
}

/* The fallback: bytes between stdio and the parent, both ways. */
static int
relay(int s)
{
	struct pollfd p[2];
	bool in_open = true;

	for (;;) {
		p[0] = (struct pollfd){ .fd = in_open ? 0 : -1, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s, .events = POLLIN };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (p[0].revents && relay_copy(0, s) < 0) {
			in_open = false;
			shutdown(s, SHUT_WR);
		}
		if (p[1].revents && relay_copy(s, 1) < 0)
			return 0;
	}
}

int
shim_mcp_main(void)
{
	int s = shim_connect();

	if (s >= 0) {
		switch (hand_over(s)) {
		case HANDED:
			while (read_byte(s) == 1)
				;	/* until the parent is done with the client */
			return 0;
		case REFUSED:
			close(s);
			s = shim_connect();
			break;
		case NOT_SENT:
			break;
		}
	}
	if (s < 0) {
		shim_say("airlock-shim: no shim serves this container\n");
		return EXIT_NO_SHIM;
	}
	return relay(s);
}
