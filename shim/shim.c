/*
 * airlock-shim: MCP for an unmodified agent inside an airlock container
 * (docs/mcp-agents.md). Two modes:
 *
 *   airlock-shim [--payload-stdin] -- AGENT ARGV...
 *	the container's entrypoint. Owns the bridge (stdin/stdout), reads the
 *	engine's MCP initial frame, starts the agent (its stdout and stderr go
 *	to the container's stderr, which the engine counts and discards; its
 *	stdin is /dev/null, or the payload line and EOF), and serves MCP to
 *	every `airlock-shim --mcp` that connects, one bridge request at a time.
 *	Exits with the agent's status once the agent is gone.
 *
 *   airlock-shim --mcp
 *	what the agent's MCP configuration launches as a stdio server: hands
 *	its stdin and stdout to the parent shim, which serves them itself, and
 *	waits until the parent is done with them; when they cannot be handed
 *	over (not a pipe or a socket), relays bytes between them and the parent.
 *
 * The two meet on the abstract unix socket SHIM_SOCKET_NAME: abstract names
 * live in the network namespace, and an airlock container has its own
 * (network none), so the name is private to the container and needs no
 * writable path. Any process in the container may connect: the shim is not
 * a security boundary (docs/guarantees.md); the gateway decides every call.
 *
 * No network code: a unix socket is the only socket. Diagnostics are fixed
 * strings; nothing read from the bridge or a client is ever printed.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim_io.h"
#include "shim_mcp.h"
#include "shim_rpc.h"

#define CLIENTS_MAX		16
#define QUEUE_MAX		64	/* tools/call waiting for the bridge */
#define CLIENT_OUT_MAX		(8u << 20)	/* unread answers before a client is dropped */
#define TICK_MS			100

/*
 * A bounded line buffer. Lines longer than SHIM_LINE_MAX are dropped whole
 * (skipping until their newline) and counted in too_long.
 */
struct linebuf {
	char buf[SHIM_LINE_MAX + 1];
	size_t len;
	bool skipping;
	unsigned too_long;
};

/*
 * Take the next complete line (without newline or a trailing CR) into
 * line and n; false when none is complete. After a read, call again until false.
 */
static bool
linebuf_take(struct linebuf *b, char **line, size_t *n, size_t *used)
{
	char *nl = memchr(b->buf + *used, '\n', b->len - *used);
	size_t start = *used;

	if (!nl)
		return false;
	*used = (size_t)(nl - b->buf) + 1;
	*line = b->buf + start;
	*n = (size_t)(nl - *line);
	if (*n > 0 && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

/* After taking lines: keep the unfinished rest; too long a rest is dropped. */
static void
linebuf_compact(struct linebuf *b, size_t used)
{
	memmove(b->buf, b->buf + used, b->len - used);
	b->len -= used;
	if (b->len >= SHIM_LINE_MAX) {
		b->len = 0;
		b->skipping = true;
		b->too_long++;
	}
}

/* Read what fd has: 0 on data, -1 on EOF or error. */
static int
linebuf_read(struct linebuf *b, int fd)
{
	ssize_t r = read(fd, b->buf + b->len, SHIM_LINE_MAX - b->len);
	char *nl;

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return -1;
	b->len += (size_t)r;
	if (b->skipping) {
		nl = memchr(b->buf, '\n', b->len);
		if (!nl)
			b->len = 0;
		else {
			b->skipping = false;
			linebuf_compact(b, (size_t)(nl - b->buf) + 1);
		}
	}
	return 0;
}
/* --- the parent: clients ----------------------------------------------------- */

struct client {
	int fd;			/* its connection; -1: a free slot */
	int rd, wr;		/* where its requests come from and its answers go:
				   fd itself, or the --mcp child's stdin and stdout
				   handed over on fd; -1 until its first byte */
	unsigned gen;		/* bumped at each reuse: stale answers are dropped */
	bool initialized;	/* it may be sent list_changed */
	struct linebuf in;
	char *out;		/* answers not yet written */
	size_t out_len;
};

struct pending {
	int slot;
	unsigned gen;
	json_t *id;
	char *call;		/* the bridge line, until sent */
};

struct parent {
	struct shim_state *st;
	int listen_fd;
	pid_t agent;
	int agent_status;
	bool agent_gone;
	struct client c[CLIENTS_MAX];
	struct pending q[QUEUE_MAX];
	size_t q_len;
	bool in_flight;		/* q[0] was sent to the bridge */
	struct linebuf bridge;
	sigset_t mask;		/* the signal mask the shim started with: the agent's */
	sigset_t poll_mask;	/* the mask while in ppoll: SIGCHLD let through */
};

static void
client_close(struct client *c)
{
	if (c->rd >= 0 && c->rd != c->fd)
		close(c->rd);
	if (c->wr >= 0 && c->wr != c->fd)
		close(c->wr);
	if (c->fd >= 0)
		close(c->fd);
	c->rd = c->wr = -1;
	free(c->out);
	c->out = NULL;
	c->out_len = 0;
	c->fd = -1;
	c->initialized = false;
	c->in.len = 0;
	c->in.skipping = false;
}

/* Queue text for the client; a client that reads nothing for too long is dropped. */
static void
client_send(struct client *c, const char *text)
{
	size_t n = strlen(text);
	char *p;

	if (c->fd < 0)
		return;
	if (c->out_len + n > CLIENT_OUT_MAX || !(p = realloc(c->out, c->out_len + n))) {
		client_close(c);
		return;
	}
	memcpy(p + c->out_len, text, n);
	c->out = p;
	c->out_len += n;
}

static void
client_flush(struct client *c)
{
	ssize_t w;

	while (c->wr >= 0 && c->out_len > 0) {
		w = write(c->wr, c->out, c->out_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {
			client_close(c);
			return;
		}
		memmove(c->out, c->out + w, c->out_len - (size_t)w);
		c->out_len -= (size_t)w;
	}
}

static void
accept_client(struct parent *p)
{
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	size_t i;

	if (fd < 0)
		return;
	for (i = 0; i < CLIENTS_MAX; i++)
		if (p->c[i].fd < 0) {
			p->c[i].fd = fd;
			p->c[i].rd = p->c[i].wr = -1;
			p->c[i].gen++;
			return;
		}
	close(fd);	/* too many clients: this one sees EOF */
}

/* --- the parent: the bridge -------------------------------------------------- */

static void
pending_drop(struct parent *p)
{
	json_decref(p->q[0].id);
	free(p->q[0].call);
	memmove(&p->q[0], &p->q[1], (p->q_len - 1) * sizeof p->q[0]);
	p->q_len--;
	p->in_flight = false;
}

/* Send the next queued call when none is in flight. */
static int
bridge_next(struct parent *p)
{
	struct pending *h = &p->q[0];
	int rc;

	if (p->in_flight || p->q_len == 0)
		return 0;
	rc = shim_write_all(1, h->call, strlen(h->call));
	free(h->call);
	h->call = NULL;
	p->in_flight = true;
	return rc;
}

static void
enqueue(struct parent *p, size_t slot, struct shim_out *o)
{
	struct client *c = &p->c[slot];
	char *err;

	if (p->q_len == QUEUE_MAX) {
		if ((err = shim_error_line(o->id, RPC_INTERNAL_ERROR)))
			client_send(c, err);
		free(err);
		return;
	}
	p->q[p->q_len++] = (struct pending){ .slot = (int)slot, .gen = c->gen, .id = o->id,
					     .call = o->call };
	o->id = NULL;
	o->call = NULL;
}

static void
on_client_line(struct parent *p, size_t slot, const char *line, size_t n)
{
	struct shim_out o;

	shim_handle(p->st, line, n, &o);
	if (o.initialized)
		p->c[slot].initialized = true;
	if (o.action == SHIM_REPLY)
		client_send(&p->c[slot], o.reply);
	else if (o.action == SHIM_CALL)
		enqueue(p, slot, &o);
	shim_out_free(&o);
}

static void
client_readable(struct parent *p, size_t slot)
{
	struct client *c = &p->c[slot];
	unsigned long_before = c->in.too_long;
	size_t used = 0, n;
	char *line, *err;

	if (linebuf_read(&c->in, c->rd) < 0) {
		client_close(c);
		return;
	}
	while (c->fd >= 0 && linebuf_take(&c->in, &line, &n, &used))
		if (n > 0)
			on_client_line(p, slot, line, n);
	if (c->fd < 0)
		return;
	linebuf_compact(&c->in, used);
	if (c->in.too_long != long_before && (err = shim_error_line(NULL, RPC_PARSE_ERROR))) {
		client_send(c, err);
		free(err);
	}
}

/*
 * Its first byte on the connection (--mcp child section above): the
 * hand-over byte with exactly two descriptors, each a pipe or a socket, or
 * the first byte of a plain stream. Anything else closes the client, and
 * closes every descriptor that came with it.
 */
static ssize_t
recv_first(int fd, char *byte, int fds[2], size_t *nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
	struct cmsghdr *c;
	ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	size_t i;
	int got;

	*nfds = 0;
	for (c = r >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
			if (*nfds < 2)
				fds[(*nfds)++] = got;
			else
				close(got);
		}
	}
	if (r >= 0 && (m.msg_flags & MSG_CTRUNC))
		*nfds = 3;	/* more than two: refused */
	return r;
}

static bool
take_stdio(struct client *c, const int fds[2])
{
	const char ack = 1;
	int i, fl;

	for (i = 0; i < 2; i++)
		if (!shim_passable(fds[i]) || (fl = fcntl(fds[i], F_GETFL)) < 0 ||
		    fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) < 0)
			return false;
	if (send(c->fd, &ack, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
		return false;
	c->rd = fds[0];
	c->wr = fds[1];
	return true;
}

static void
client_first(struct parent *p, size_t slot)
{
	struct client *c = &p->c[slot];
	int fds[2] = { -1, -1 };
	size_t nfds, i;
	char byte;
	ssize_t r = recv_first(c->fd, &byte, fds, &nfds);

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r == 1 && nfds == 2 && byte == HANDOVER_BYTE && take_stdio(c, fds))
		return;
	for (i = 0; i < nfds && i < 2; i++)
		close(fds[i]);
	if (r != 1 || nfds != 0) {
		client_close(c);
		return;
	}
	c->rd = c->wr = c->fd;	/* a stream: the byte is its first */
	c->in.buf[0] = byte;
	c->in.len = 1;
	client_readable(p, slot);
}

static void
broadcast_changed(struct parent *p)
{
	size_t i;

	for (i = 0; i < CLIENTS_MAX; i++)
		if (p->c[i].fd >= 0 && p->c[i].initialized)
			client_send(&p->c[i], shim_list_changed_line());
}

/* One engine line; -1 ends the shim (an engine line we cannot read). */
static int
on_bridge_line(struct parent *p, const char *line, size_t n)
{
	struct pending *h = &p->q[0];
	char *res = NULL;

	switch (shim_engine_answer(p->st, line, n, p->in_flight ? h->id : NULL, &res)) {
	case SHIM_ENGINE_CHANGED:
		broadcast_changed(p);
		return 0;
	case SHIM_ENGINE_REPLY:
		if (!p->in_flight)
			return -1;
		if (res && p->c[h->slot].fd >= 0 && p->c[h->slot].gen == h->gen)
			client_send(&p->c[h->slot], res);
		free(res);
		pending_drop(p);
		return 0;
	default:
		return -1;
	}
}

static int
bridge_readable(struct parent *p)
{
	size_t used = 0, n;
	char *line;

	if (linebuf_read(&p->bridge, 0) < 0)
		return -1;
	while (linebuf_take(&p->bridge, &line, &n, &used))
		if (on_bridge_line(p, line, n) < 0)
			return -1;
	linebuf_compact(&p->bridge, used);
	return p->bridge.too_long ? -1 : 0;
}

/* --- the parent: start ---------------------------------------------------------- */

/* The first bridge line: the initial frame. Bytes after it stay buffered. */
static struct shim_state *
read_frame(struct linebuf *b)
{
	struct shim_state *st = NULL;
	size_t used = 0, n;
	char *line;

	while (!linebuf_take(b, &line, &n, &used))
		if (b->skipping || b->len >= SHIM_LINE_MAX || linebuf_read(b, 0) < 0)
			return NULL;
	st = shim_state_new(line, n);
	memset(b->buf, 0, used);	/* the payload's bytes go */
	linebuf_compact(b, used);
	return st;
}

static int
listen_socket(void)
{
	struct sockaddr_un a;
	socklen_t alen = shim_socket_address(&a);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, alen) < 0 || listen(s, CLIENTS_MAX) < 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

/* The agent's stdin: /dev/null, or a pipe holding the payload line. */
static int
agent_stdin(const struct shim_state *st, bool payload)
{
	const char *text = shim_payload_text(st);
	int fds[2];

	if (!payload)
		return open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	/* A pipe holds 64 KiB: the frame's bound, so the write never blocks. */
	if (fcntl(fds[1], F_SETPIPE_SZ, SHIM_LINE_MAX * 2) < 0 ||
	    shim_write_all(fds[1], text, strlen(text)) < 0 || shim_write_all(fds[1], "\n", 1) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[1]);
	return fds[0];
}

static pid_t
start_agent(char **argv, int in, const sigset_t *mask)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (dup2(in, 0) < 0 || dup2(2, 1) < 0)
		_exit(EXIT_EXEC);
	execvp(argv[0], argv);
	shim_say("airlock-shim: cannot start the agent\n");
	_exit(EXIT_EXEC);
}

/*
 * SIGCHLD is blocked but while the loop sleeps in ppoll: the flag says the
 * agent may be gone, so a turn costs no wait4 (a syscall a turn, two a call).
 */
static volatile sig_atomic_t child_changed;

static void
on_sigchld(int sig)
{
	(void)sig;
	child_changed = 1;
}

static int
watch_children(sigset_t *before, sigset_t *during_poll)
{
	struct sigaction sa = { .sa_handler = on_sigchld, .sa_flags = SA_NOCLDSTOP };
	sigset_t block;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	if (sigaction(SIGCHLD, &sa, NULL) < 0 || sigprocmask(SIG_BLOCK, &block, before) < 0)
		return -1;
	*during_poll = *before;
	sigdelset(during_poll, SIGCHLD);
	return 0;
}

static void
reap(struct parent *p)
{
	int status;

	if (!child_changed)
		return;
	child_changed = 0;
	if (!p->agent_gone && waitpid(p->agent, &status, WNOHANG) == p->agent) {
		p->agent_gone = true;
		p->agent_status = WIFEXITED(status) ? WEXITSTATUS(status)
						    : 128 + WTERMSIG(status);
	}
}

/* --- the parent: the loop -------------------------------------------------------- */

/* What a client's poll entry is for. */
enum {
	WATCH_FIRST = 1,	/* its connection, before its first byte */
	WATCH_READ = 2,		/* its requests */
	WATCH_WRITE = 4,	/* its answers, when some wait */
	WATCH_GONE = 8,		/* the connection of a handed-over client: its end */
};

struct watch {
	size_t slot;
	unsigned what;
};

#define POLL_MAX	(2 + 3 * CLIENTS_MAX)

static void
watch(struct pollfd *fds, struct watch *w, size_t *n, size_t slot, int fd, unsigned what)
{
	short ev = (what & WATCH_WRITE) ? POLLOUT : 0;

	if (what & ~WATCH_WRITE)
		ev |= POLLIN;
	w[*n] = (struct watch){ .slot = slot, .what = what };
	fds[(*n)++] = (struct pollfd){ .fd = fd, .events = ev };
}

static size_t
poll_set(struct parent *p, struct pollfd *fds, struct watch *w)
{
	size_t n = 0, i;
	struct client *c;

	fds[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
	fds[n++] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
	for (i = 0; i < CLIENTS_MAX; i++) {
		c = &p->c[i];
		if (c->fd < 0)
			continue;
		if (c->rd < 0)
			watch(fds, w, &n, i, c->fd, WATCH_FIRST);
		else if (c->rd == c->fd)
			watch(fds, w, &n, i, c->fd, WATCH_READ | (c->out_len ? WATCH_WRITE : 0));
		else {
			watch(fds, w, &n, i, c->rd, WATCH_READ);
			if (c->out_len)
				watch(fds, w, &n, i, c->wr, WATCH_WRITE);
			watch(fds, w, &n, i, c->fd, WATCH_GONE);
		}
	}
	return n;
}

static void
on_client_event(struct parent *p, const struct watch *w, short revents)
{
	struct client *c = &p->c[w->slot];

	if (c->fd < 0 || !revents)
		return;		/* closed earlier in this turn */
	if (w->what & WATCH_GONE)
		client_close(c);
	else if (w->what & WATCH_FIRST)
		client_first(p, w->slot);
	else {
		if ((w->what & WATCH_WRITE) && (revents & (POLLOUT | POLLERR | POLLHUP)))
			client_flush(c);
		if ((w->what & WATCH_READ) && c->fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR)))
			client_readable(p, w->slot);
	}
}

/* One turn of the loop; -1 when the bridge is gone or unreadable. */
static int
turn(struct parent *p)
{
	struct pollfd fds[POLL_MAX];
	struct watch w[POLL_MAX];
	size_t n = poll_set(p, fds, w), i;
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = TICK_MS * 1000000L };

	if (ppoll(fds, n, &tick, &p->poll_mask) < 0)
		return errno == EINTR ? 0 : -1;
	if (fds[0].revents && bridge_readable(p) < 0)
		return -1;
	if (fds[1].revents)
		accept_client(p);
	for (i = 2; i < n; i++)
		on_client_event(p, &w[i], fds[i].revents);
	for (i = 0; i < CLIENTS_MAX; i++)
		client_flush(&p->c[i]);
	return bridge_next(p);
}

static int
parent_main(char **argv, bool payload_stdin)
{
	static struct parent p;
	int in, rc = 0;
	size_t i;

	for (i = 0; i < CLIENTS_MAX; i++)
		p.c[i].fd = p.c[i].rd = p.c[i].wr = -1;
	if (!(p.st = read_frame(&p.bridge))) {
		shim_say("airlock-shim: no MCP initial frame from the engine\n");
		return EXIT_FRAME;
	}
	if ((p.listen_fd = listen_socket()) < 0) {
		shim_say("airlock-shim: cannot listen on its socket\n");
		return EXIT_NO_SHIM;
	}
	if (watch_children(&p.mask, &p.poll_mask) < 0 || (in = agent_stdin(p.st, payload_stdin)) < 0 ||
	    (p.agent = start_agent(argv, in, &p.mask)) < 0) {
		shim_say("airlock-shim: cannot start the agent\n");
		return EXIT_EXEC;
	}
	close(in);
	while (!p.agent_gone) {
		if (turn(&p) < 0) {
			/* the engine ended the session, or spoke out of turn */
			kill(p.agent, SIGKILL);
			waitpid(p.agent, NULL, 0);
			rc = EXIT_ENGINE;
			break;
		}
		reap(&p);
	}
	shim_state_free(p.st);
	return rc ? rc : p.agent_status;
}

int
main(int argc, char **argv)
{
	bool payload_stdin = false;
	int i = 1;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && strcmp(argv[1], "--mcp") == 0)
		return shim_mcp_main();
	if (i < argc && strcmp(argv[i], "--payload-stdin") == 0) {
		payload_stdin = true;
		i++;
	}
	if (i + 1 < argc && strcmp(argv[i], "--") == 0)
		return parent_main(argv + i + 1, payload_stdin);
	shim_say("usage: airlock-shim [--payload-stdin] -- AGENT [ARG...] | airlock-shim --mcp\n");
	return EXIT_USAGE;
}
