#include "mcp_int.h"
#include "clock.h"
#include "grow.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The read buffer starts at a page and doubles to a line's need; emptied
 * past MCP_BUF_KEEP it is given back (a session lives long, its answers
 * are mostly short: 500 sessions keep 500 such buffers).
 */
#define MCP_BUF_START		4096
#define MCP_BUF_KEEP		65536
#define MCP_BUF_MAX		(MCP_LINE_MAX + 1)	/* one line, or proof that it is too long */
#define MCP_READ_ROUNDS		16	/* reads per wake-up before lines are looked at */

void
mcp_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* --- reading: stderr counted, stdout cut into lines ---------------------- */

/* stderr is the server's own business: count it, forget it. */
void
mcp_drain_stderr(struct mcp_client *c)
{
	char scratch[16384];
	ssize_t n;
	int i;

	for (i = 0; i < MCP_READ_ROUNDS && c->err_fd >= 0; i++) {
		n = read(c->err_fd, scratch, sizeof scratch);
		if (n > 0)
			c->stats.stderr_bytes += (size_t)n;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		else if (n == 0 || errno != EINTR)
			mcp_close_fd(&c->err_fd);
	}
}

/* 0: room for more; 1: full of one unfinished line; -1: out of memory. */
static int
mcp_buf_room(struct mcp_client *c)
{
	if (c->off == c->len && c->cap > MCP_BUF_KEEP) {
		free(c->buf);
		c->buf = NULL;
		c->cap = c->len = c->off = 0;
	}
	if (c->off > 0) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len < c->cap)
		return 0;
	if (c->cap >= MCP_BUF_MAX)
		return 1;
	return grow(&c->buf, &c->cap, c->len + 1, 1, MCP_BUF_START, MCP_BUF_MAX);
}

/* Read what stdout has. EOF is kept in c->eof so that lines before it still count. */
static int
mcp_read_stdout(struct mcp_client *c)
{
	ssize_t n;
	int i, room;

	for (i = 0; i < MCP_READ_ROUNDS && c->out_fd >= 0; i++) {
		room = mcp_buf_room(c);
		if (room < 0)
			return -1;
		if (room > 0)
			return 0;	/* the line scanner reports it as too long */
		n = read(c->out_fd, c->buf + c->len, c->cap - c->len);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		mcp_close_fd(&c->out_fd);
		c->eof = true;
	}
	return 0;
}

static bool
mcp_can_read(const struct mcp_client *c)
{
	return c->out_fd >= 0 && (c->off > 0 || c->len < c->cap || c->cap < MCP_BUF_MAX);
}

/*
 * A replayed server answers only when waited for, one line per wait, then
 * EOF; a wait whose deadline has passed (a drain between calls) gets nothing.
 */
static int
mcp_replay_pump(struct mcp_client *c, long long deadline)
{
	const char *nl;
	size_t n;
	int room;

	if (clock_mono_ms() >= deadline)
		return 0;
	if (c->replay_len == 0) {
		c->eof = true;
		return 1;
	}
	room = mcp_buf_room(c);
	if (room != 0)
		return room < 0 ? -1 : 1;	/* full: the line scanner reports it as too long */
	nl = memchr(c->replay, '\n', c->replay_len);
	n = nl ? (size_t)(nl - c->replay) + 1 : c->replay_len;
	if (n > c->cap - c->len)
		n = c->cap - c->len;
	memcpy(c->buf + c->len, c->replay, n);
	c->len += n;
	c->replay += n;
	c->replay_len -= n;
	return 1;
}

/*
 * Wait until stdout brings bytes (or, with want_write, stdin takes some),
 * draining stderr on the way. 1: something happened, look again; 0: the
 * deadline passed, or the session stops; -1: poll or memory failed.
 */
static int
mcp_pump(struct mcp_client *c, bool want_write, long long deadline)
{
	struct pollfd p[3];
	long long left = deadline - clock_mono_ms();
	int n = 0, out = -1, in = -1, err = -1, rc;

	if (mcp_stopping(c))
		return 0;
	if (c->stop && left > MCP_STOP_LOOK_MS)
		left = MCP_STOP_LOOK_MS;	/* a stop is seen within this */
	if (c->replaying)
		return mcp_replay_pump(c, deadline);
	if (c->out_fd >= 0 && mcp_can_read(c))
		p[out = n++] = (struct pollfd){ .fd = c->out_fd, .events = POLLIN };
	if (c->err_fd >= 0)
		p[err = n++] = (struct pollfd){ .fd = c->err_fd, .events = POLLIN };
	if (want_write && c->in_fd >= 0)
		p[in = n++] = (struct pollfd){ .fd = c->in_fd, .events = POLLOUT };
	rc = poll(p, (nfds_t)n, left <= 0 ? 0 : left > MCP_POLL_MAX_MS ? MCP_POLL_MAX_MS : (int)left);
	if (rc < 0 && errno != EINTR)
		return -1;
	if (rc > 0 && err >= 0 && p[err].revents)
		mcp_drain_stderr(c);
	if (rc > 0 && out >= 0 && p[out].revents && mcp_read_stdout(c) < 0)
		return -1;
	if (rc > 0 && ((out >= 0 && p[out].revents) || (in >= 0 && p[in].revents)))
		return 1;
	return clock_mono_ms() >= deadline ? 0 : 1;
}

/* 1: a line (without "\n" or "\r\n") at *line; 0: none yet; -1: too long. */
static int
mcp_next_line(struct mcp_client *c, char **line, size_t *n)
{
	size_t have = c->len - c->off;
	/* buf is NULL until the first read: no arithmetic on it, not even + 0. */
	char *start = have ? c->buf + c->off : NULL, *nl = NULL;

	if (have > c->scan)
		nl = memchr(start + c->scan, '\n', have - c->scan);
	if (!nl) {
		c->scan = have;
		return have > MCP_LINE_MAX ? -1 : 0;
	}
	*line = start;
	*n = (size_t)(nl - start);
	if (*n > MCP_LINE_MAX)
		return -1;
	c->off += *n + 1;
	c->scan = 0;
	if (*n > 0 && start[*n - 1] == '\r')
		(*n)--;
	return 1;
}

/*
 * A line read: its digest, by the session's parser (c->digest), else made
 * here (tests, fuzzers, benchmarks). A reader that is lost, or a digest
 * that is not one, loses the stream: the line is not read here instead.
 */
static enum mcp_got
mcp_take_line(struct mcp_client *c, const char *line, size_t n, struct mcp_msg *msg)
{
	if (c->digest) {
		if (c->digest(c->digest_ctx, line, n, msg) < 0)
			return mcp_lose(c);
	} else {
		if (!c->dig) {
			if (!(c->dig = malloc(sizeof *c->dig)))
				return mcp_lose(c);
			hash_canon_init(c->dig);
		}
		if (mcp_digest(line, n, MCP_DIGEST_MAX, c->dig) < 0 ||
		    mcp_digest_read(c->dig->buf, c->dig->len, msg) < 0)
			return mcp_lose(c);
	}
	return msg->kind == MCP_MSG_BAD ? MCP_GOT_BAD : MCP_GOT_MSG;
}

enum mcp_got
mcp_lose(struct mcp_client *c)
{
	c->broken = true;
	return MCP_GOT_LOST;
}

/* The next message before the deadline. Blank lines carry nothing and are skipped. */
enum mcp_got
mcp_read_msg(struct mcp_client *c, long long deadline, struct mcp_msg *msg)
{
	char *line;
	size_t n;
	int rc;

	if (c->broken)
		return MCP_GOT_LOST;
	for (;;) {
		rc = mcp_next_line(c, &line, &n);
		if (rc < 0)
			return mcp_lose(c);
		if (rc > 0 && n == 0)
			continue;
		if (rc > 0)
			return mcp_take_line(c, line, n, msg);
		if (c->eof)
			return mcp_lose(c);
		rc = mcp_pump(c, false, deadline);
		if (rc == 0)
			return MCP_GOT_NONE;
		if (rc < 0)
			return mcp_lose(c);
	}
}

/* --- writing --------------------------------------------------------------- */

/* A partial line cannot be taken back: any failure here loses the stream. */
int
mcp_write_all(struct mcp_client *c, const char *s, size_t len, long long deadline)
{
	ssize_t n;

	while (len > 0) {
		if (c->broken || c->in_fd < 0)
			return -1;
		n = write(c->in_fd, s, len);
		if (n > 0) {
			s += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (mcp_pump(c, true, deadline) <= 0)
			return -1;
	}
	return 0;
}

/* 0: sent; -1: the stream is lost; -2: out of memory (nothing was sent). */
int
mcp_send(struct mcp_client *c, const json_t *msg, long long deadline)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	int rc;

	if (!s)
		return -2;
	rc = mcp_write_all(c, s, strlen(s), deadline);
	if (rc == 0)
		rc = mcp_write_all(c, "\n", 1, deadline);
	free(s);
	if (rc < 0)
		mcp_lose(c);
	return rc;
}
