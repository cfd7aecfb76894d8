#include "upstream_relay.h"
#include "thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RELAY_IN_CHUNK		16384
#define RELAY_POLL_MS		1000	/* a wake-up needs no timeout; this bounds a lost one */
/* docker_attach_read takes at most 256 KiB a call: room for one more call. */
#define RELAY_READ_ROOM		(256 << 10)

struct upstream_relay {
	struct docker_attach *a;	/* borrowed */
	int in_rd;	/* the client's stdin writes arrive here */
	int out_wr;	/* the container's stdout leaves here */
	int err_wr;	/* its stderr, best effort */
	int wake[2];	/* a byte: stop */
	unsigned char *out;	/* stdout not yet taken by the client */
	size_t out_len;
	bool stream_done;
	pthread_t th;
	bool running;
};

static void
relay_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int
relay_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* A piece of a frame: stdout queued in order, stderr passed on or dropped. */
static int
relay_chunk(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct upstream_relay *r = ctx;
	ssize_t n;

	if (stream == DOCKER_STDERR) {
		n = write(r->err_wr, data, len);	/* short or refused: dropped */
		(void)n;
		return 0;
	}
	if (stream != DOCKER_STDOUT)
		return 0;
	if (len > UPSTREAM_RELAY_OUT_MAX + RELAY_READ_ROOM - r->out_len)
		return -1;	/* cannot happen within the bounds: the stream is lost */
	memcpy(r->out + r->out_len, data, len);
	r->out_len += len;
	return 0;
}

/* 0: some or none taken; -1: the client is gone. */
static int
relay_flush(struct upstream_relay *r)
{
	ssize_t n = write(r->out_wr, r->out, r->out_len);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	memmove(r->out, r->out + n, r->out_len - (size_t)n);
	r->out_len -= (size_t)n;
	return 0;
}

static void
relay_from_container(struct upstream_relay *r)
{
	struct al_err err;
	enum attach_io io = docker_attach_read(r->a, relay_chunk, r, &err);

	if (io == ATTACH_EOF || io == ATTACH_ERROR)
		r->stream_done = true;
}

/* 0: go on; -1: the stream to the container is lost. */
static int
relay_to_container(struct upstream_relay *r)
{
	unsigned char buf[RELAY_IN_CHUNK];
	struct al_err err;
	ssize_t n = read(r->in_rd, buf, sizeof buf);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0) {	/* the client's goodbye: the container sees EOF */
		relay_close(&r->in_rd);
		docker_attach_close_stdin(r->a);
		return 0;
	}
	return docker_attach_write(r->a, buf, (size_t)n, UPSTREAM_RELAY_WRITE_MS, &err);
}

/* One poll round. 0: go on; -1: the relay is done. */
static int
relay_turn(struct upstream_relay *r)
{
	struct pollfd p[4];
	int n = 0, ia = -1, ii = -1, io = -1;

	p[n++] = (struct pollfd){ .fd = r->wake[0], .events = POLLIN };
	if (!r->stream_done && r->out_len < UPSTREAM_RELAY_OUT_MAX)
		p[ia = n++] = (struct pollfd){ .fd = docker_attach_fd(r->a), .events = POLLIN };
	if (r->in_rd >= 0)
		p[ii = n++] = (struct pollfd){ .fd = r->in_rd, .events = POLLIN };
	if (r->out_len > 0)
		p[io = n++] = (struct pollfd){ .fd = r->out_wr, .events = POLLOUT };
	if (poll(p, (nfds_t)n, RELAY_POLL_MS) < 0)
		return errno == EINTR ? 0 : -1;
	if (p[0].revents)
		return -1;
	if (io >= 0 && p[io].revents && relay_flush(r) < 0)
		return -1;
	if (ia >= 0 && p[ia].revents)
		relay_from_container(r);
	if (ii >= 0 && p[ii].revents && relay_to_container(r) < 0)
		return -1;
	return r->stream_done && r->out_len == 0 ? -1 : 0;
}

/* Its ends close when it is done: the client reads EOF, its writes fail. */
static void *
relay_main(void *arg)
{
	struct upstream_relay *r = arg;

	while (relay_turn(r) == 0)
		;
	relay_close(&r->out_wr);
	relay_close(&r->err_wr);
	relay_close(&r->in_rd);
	return NULL;
}

static void
relay_free(struct upstream_relay *r)
{
	relay_close(&r->in_rd);
	relay_close(&r->out_wr);
	relay_close(&r->err_wr);
	relay_close(&r->wake[0]);
	relay_close(&r->wake[1]);
	free(r->out);
	free(r);
}

/* The pipes: the relay's ends non-blocking, the client's handed out. */
static int
relay_pipes(struct upstream_relay *r, int fds[3])
{
	int in[2], out[2], err[2];

	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	r->in_rd = in[0];
	fds[0] = in[1];
	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	fds[1] = out[0];
	r->out_wr = out[1];
	if (pipe2(err, O_CLOEXEC) < 0)
		return -1;
	fds[2] = err[0];
	r->err_wr = err[1];
	return relay_nonblock(r->in_rd) < 0 || relay_nonblock(r->out_wr) < 0 ||
	       relay_nonblock(r->err_wr) < 0 ? -1 : 0;
}

static void
relay_close_fds(int fds[3])
{
	int i;

	for (i = 0; i < 3; i++)
		relay_close(&fds[i]);
}

int
upstream_relay_start(struct docker_attach *a, struct upstream_relay **out, int fds[3],
		     struct al_err *err)
{
	struct upstream_relay *r = calloc(1, sizeof *r);

	*out = NULL;
	fds[0] = fds[1] = fds[2] = -1;
	if (!r)
		return al_fail(err, "upstream relay: out of memory");
	r->a = a;
	r->in_rd = r->out_wr = r->err_wr = r->wake[0] = r->wake[1] = -1;
	r->out = malloc(UPSTREAM_RELAY_OUT_MAX + RELAY_READ_ROOM);
	if (!r->out || relay_pipes(r, fds) < 0 || thread_start(&r->th, NULL, relay_main, r)) {
		relay_close_fds(fds);
		relay_free(r);
		return al_fail(err, "upstream relay: cannot start: %s", strerror(errno));
	}
	r->running = true;
	*out = r;
	return 0;
}

void
upstream_relay_stop(struct upstream_relay *r)
{
	char b = 'x';
	ssize_t n;

	if (!r)
		return;
	if (r->running) {
		n = write(r->wake[1], &b, 1);
		(void)n;
		pthread_join(r->th, NULL);
	}
	relay_free(r);
}
