#include "mcp.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "airlock-config.h"

#define MCP_BUF_START		65536
#define MCP_BUF_MAX		(MCP_LINE_MAX + 1)	/* one line, or proof that it is too long */
#define MCP_READ_ROUNDS		16	/* reads per wake-up before lines are looked at */
#define MCP_MSGS_MAX		65536	/* messages one wait handles: a flood is a fault */
#define MCP_PAGES_MAX		(MCP_TOOLS_MAX + 1)
#define MCP_INIT_DEFAULT_MS	10000
#define MCP_CALL_DEFAULT_MS	30000
#define MCP_REPLY_MS		500	/* a refusal or a cancellation sent between calls */
#define MCP_STOP_EOF_MS		2000
#define MCP_STOP_TERM_MS	1000
#define MCP_STOP_KILL_MS	5000
#define MCP_STOP_SLICE_MS	20
#define MCP_POLL_MAX_MS		60000
#define MCP_CLOSE_LOOP_MAX	(1 << 20)	/* descriptors closed one by one without close_range */

/* The protocol versions whose tools/list and tools/call we understand. */
static const char *const mcp_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
};

struct mcp_tool {
	char *name;
	char hash[HASH_HEX_LEN + 1];
};

struct mcp_listing {
	struct mcp_tool *v;	/* MCP_TOOLS_MAX slots once the first tool arrives */
	size_t n;
};

struct mcp_client {
	char *name;
	pid_t pid;
	bool reaped;
	int in_fd;		/* the server's stdin; -1 once closed */
	int out_fd;		/* its stdout; -1 after EOF */
	int err_fd;		/* its stderr; -1 after EOF */
	char *buf;		/* stdout bytes from off to len are not yet taken */
	size_t off, len, cap;
	size_t scan;		/* bytes after off known to hold no newline */
	bool eof;
	bool broken;		/* EOF, I/O error or lost framing: every call faults */
	bool stale;		/* a tools/list_changed came after the listing began */
	json_int_t next_id;
	long init_ms, call_ms;
	char version[16];
	struct mcp_listing tools;
	struct mcp_stats stats;
	bool replaying;		/* mcp_start_replay: no process, stdout from replay */
	const char *replay;	/* the replayed stdout not yet delivered (borrowed) */
	size_t replay_len;
};

enum mcp_got {
	MCP_GOT_MSG,
	MCP_GOT_BAD,	/* a line that is not a JSON-RPC message */
	MCP_GOT_NONE,	/* the deadline passed */
	MCP_GOT_LOST,	/* EOF, an I/O error, a line past MCP_LINE_MAX */
};

enum mcp_wait {
	MCP_W_ANSWER,
	MCP_W_TIMEOUT,
	MCP_W_BAD,
	MCP_W_LOST,
	MCP_W_NOMEM,
};

static void
mcp_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* --- the child, between fork and exec: async-signal-safe calls only ------ */

struct mcp_spawn {
	char **argv;
	char **envp;
	const char *cwd;
	int in[2], out[2], err[2], status[2];
};

/* Tell the parent why, through the status pipe, and die. */
static void __attribute__((noreturn))
mcp_child_fail(int status_fd)
{
	int e = errno;
	ssize_t n = write(status_fd, &e, sizeof e);

	(void)n;
	_exit(127);
}

/* Exec keeps ignored signals and the mask: give the server a clean slate. */
static void
mcp_child_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int s;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void
mcp_child_close_from(int low)
{
	struct rlimit r;
	long fd, max = MCP_CLOSE_LOOP_MAX;

	if (close_range((unsigned int)low, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (rlim_t)max)
		max = (long)r.rlim_cur;
	for (fd = low; fd < max; fd++)
		close((int)fd);
}

/*
 * Pipe ends are first copied above 2 so that the dup2 calls onto 0..2
 * cannot overwrite one another (the engine may run with 0..2 closed).
 * The status pipe ends up as 3, close-on-exec; everything above is closed.
 */
static void __attribute__((noreturn))
mcp_child(const struct mcp_spawn *sp)
{
	struct rlimit core = { 0, 0 };
	int st, in, out, err;

	st = fcntl(sp->status[1], F_DUPFD_CLOEXEC, 3);
	if (st < 0)
		_exit(127);
	in = fcntl(sp->in[0], F_DUPFD, 3);
	out = fcntl(sp->out[1], F_DUPFD, 3);
	err = fcntl(sp->err[1], F_DUPFD, 3);
	if (in < 0 || out < 0 || err < 0 ||
	    dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		mcp_child_fail(st);
	if (st != 3 && (dup2(st, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		mcp_child_fail(st);
	st = 3;
	mcp_child_close_from(4);
	if (setpgid(0, 0) < 0 || setrlimit(RLIMIT_CORE, &core) < 0)
		mcp_child_fail(st);
	mcp_child_signals();
	if (sp->cwd && chdir(sp->cwd) < 0)
		mcp_child_fail(st);
	execve(sp->argv[0], sp->argv, sp->envp);
	mcp_child_fail(st);
}

/* --- spawning, in the parent --------------------------------------------- */

/* strv is not NULL-terminated; execve wants it so. */
static char **
mcp_vector(const struct strv *s)
{
	char **v = calloc(s->n + 1, sizeof *v);
	size_t i;

	if (!v)
		return NULL;
	for (i = 0; i < s->n; i++)
		v[i] = s->v[i];
	return v;
}

static void
mcp_spawn_close(struct mcp_spawn *sp)
{
	mcp_close_fd(&sp->in[0]);
	mcp_close_fd(&sp->in[1]);
	mcp_close_fd(&sp->out[0]);
	mcp_close_fd(&sp->out[1]);
	mcp_close_fd(&sp->err[0]);
	mcp_close_fd(&sp->err[1]);
	mcp_close_fd(&sp->status[0]);
	mcp_close_fd(&sp->status[1]);
	free(sp->argv);
	free(sp->envp);
}

static int
mcp_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int
mcp_spawn_prepare(struct mcp_spawn *sp, const struct mcp_server_config *cfg)
{
	sp->argv = mcp_vector(&cfg->argv);
	sp->envp = mcp_vector(&cfg->env);
	sp->cwd = cfg->cwd;
	if (!sp->argv || !sp->envp)
		return -1;
	if (pipe2(sp->in, O_CLOEXEC) < 0 || pipe2(sp->out, O_CLOEXEC) < 0 ||
	    pipe2(sp->err, O_CLOEXEC) < 0 || pipe2(sp->status, O_CLOEXEC) < 0)
		return -1;
	if (mcp_nonblock(sp->in[1]) < 0 || mcp_nonblock(sp->out[0]) < 0 ||
	    mcp_nonblock(sp->err[0]) < 0)
		return -1;
	return 0;
}

/*
 * The status pipe closes at exec (success) or carries the child's errno.
 * 0: the server runs; -1: it failed before exec or did not get there in time.
 */
static int
mcp_spawn_status(int fd, long long deadline, int *why)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long left;
	int e = 0, rc;
	ssize_t n;

	for (;;) {
		left = deadline - clock_mono_ms();
		if (left <= 0) {
			*why = ETIMEDOUT;
			return -1;
		}
		rc = poll(&p, 1, left > MCP_POLL_MAX_MS ? MCP_POLL_MAX_MS : (int)left);
		if (rc < 0 && errno != EINTR) {
			*why = errno;
			return -1;
		}
		if (rc <= 0)
			continue;
		n = read(fd, &e, sizeof e);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return 0;
		*why = n == sizeof e ? e : errno;
		return -1;
	}
}

static int
mcp_spawn(struct mcp_client *c, const struct mcp_server_config *cfg, struct al_err *err)
{
	struct mcp_spawn sp = {
		.in = { -1, -1 }, .out = { -1, -1 }, .err = { -1, -1 }, .status = { -1, -1 },
	};
	int rc = -1, why = 0;

	if (mcp_spawn_prepare(&sp, cfg) < 0) {
		why = errno;
		goto out;
	}
	c->pid = fork();
	if (c->pid == 0)
		mcp_child(&sp);
	if (c->pid < 0) {
		why = errno;
		goto out;
	}
	/* Also here, so the group exists whichever side runs first. */
	setpgid(c->pid, c->pid);
	mcp_close_fd(&sp.status[1]);
	if (mcp_spawn_status(sp.status[0], clock_mono_ms() + c->init_ms, &why) < 0)
		goto out;
	c->in_fd = sp.in[1];
	c->out_fd = sp.out[0];
	c->err_fd = sp.err[0];
	sp.in[1] = sp.out[0] = sp.err[0] = -1;
	rc = 0;
out:
	mcp_spawn_close(&sp);
	if (rc < 0)
		al_fail(err, "upstream %s: cannot start%s%s", c->name, why ? ": " : "",
			why ? strerror(why) : "");
	return rc;
}

/* --- reading: stderr counted, stdout cut into lines ---------------------- */

/* stderr is the server's own business: count it, forget it. */
static void
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
	size_t cap;
	char *p;

	if (c->off > 0) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len < c->cap)
		return 0;
	if (c->cap >= MCP_BUF_MAX)
		return 1;
	cap = c->cap ? c->cap * 2 : MCP_BUF_START;
	if (cap > MCP_BUF_MAX)
		cap = MCP_BUF_MAX;
	p = realloc(c->buf, cap);
	if (!p)
		return -1;
	c->buf = p;
	c->cap = cap;
	return 0;
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
 * deadline passed; -1: poll or memory failed.
 */
static int
mcp_pump(struct mcp_client *c, bool want_write, long long deadline)
{
	struct pollfd p[3];
	long long left = deadline - clock_mono_ms();
	int n = 0, out = -1, in = -1, err = -1, rc;

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

/* A JSON-RPC 2.0 message: an object with jsonrpc "2.0" and a method or an id. */
static json_t *
mcp_parse(const char *line, size_t n)
{
	json_t *msg = json_loadb(line, n, JSON_REJECT_DUPLICATES, NULL);
	const char *v;

	if (!json_is_object(msg))
		goto bad;
	v = json_string_value(json_object_get(msg, "jsonrpc"));
	if (!v || strcmp(v, "2.0") != 0)
		goto bad;
	if (!json_object_get(msg, "method") && !json_object_get(msg, "id"))
		goto bad;
	return msg;
bad:
	json_decref(msg);
	return NULL;
}

static enum mcp_got
mcp_lose(struct mcp_client *c)
{
	c->broken = true;
	return MCP_GOT_LOST;
}

/* The next message before the deadline. Blank lines carry nothing and are skipped. */
static enum mcp_got
mcp_read_msg(struct mcp_client *c, long long deadline, json_t **msg)
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
		if (rc > 0) {
			*msg = mcp_parse(line, n);
			return *msg ? MCP_GOT_MSG : MCP_GOT_BAD;
		}
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
static int
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
static int
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

/* --- the exchange ---------------------------------------------------------- */

/* The server asked us something: we offer nothing (no roots, no sampling). */
static int
mcp_refuse(struct mcp_client *c, json_t *id, long long deadline)
{
	json_t *reply;
	int rc;

	c->stats.server_requests++;
	reply = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id,
			  "error", "code", -32601, "message", "not supported");
	if (!reply)
		return 0;	/* unanswered: the server's own timeout deals with it */
	rc = mcp_send(c, reply, deadline);
	json_decref(reply);
	return rc == -1 ? -1 : 0;
}

/* Anything but the awaited answer. -1: the stream is lost. */
static int
mcp_handle(struct mcp_client *c, json_t *msg, long long deadline)
{
	json_t *id = json_object_get(msg, "id");
	const char *method;

	if (!json_object_get(msg, "method"))
		return 0;	/* a response nobody waits for: late, after a timeout */
	if (id)
		return mcp_refuse(c, id, deadline);
	method = json_string_value(json_object_get(msg, "method"));
	if (method && strcmp(method, "notifications/tools/list_changed") == 0) {
		c->stats.list_changed++;
		c->stale = true;
	}
	return 0;
}

static bool
mcp_is_answer(const json_t *msg, json_int_t id)
{
	const json_t *v = json_object_get(msg, "id");

	return !json_object_get(msg, "method") && json_is_integer(v) &&
	       json_integer_value(v) == id;
}

/* Read messages until the answer to id arrives, handling the others on the way. */
static enum mcp_wait
mcp_await(struct mcp_client *c, json_int_t id, long long deadline, json_t **answer)
{
	json_t *msg;
	size_t i;
	int rc;

	for (i = 0; i < MCP_MSGS_MAX; i++) {
		switch (mcp_read_msg(c, deadline, &msg)) {
		case MCP_GOT_NONE:
			return MCP_W_TIMEOUT;
		case MCP_GOT_LOST:
			return MCP_W_LOST;
		case MCP_GOT_BAD:
			c->stats.malformed_lines++;
			return MCP_W_BAD;
		case MCP_GOT_MSG:
			break;
		}
		if (mcp_is_answer(msg, id)) {
			*answer = msg;
			return MCP_W_ANSWER;
		}
		rc = mcp_handle(c, msg, deadline);
		json_decref(msg);
		if (rc < 0)
			return MCP_W_LOST;
		if (clock_mono_ms() >= deadline)
			return MCP_W_TIMEOUT;
	}
	return MCP_W_BAD;
}

/* What the server sent between exchanges, without waiting for more. */
static void
mcp_drain(struct mcp_client *c)
{
	json_t *msg;
	size_t i;
	int rc;

	for (i = 0; i < MCP_MSGS_MAX; i++) {
		switch (mcp_read_msg(c, clock_mono_ms(), &msg)) {
		case MCP_GOT_NONE:
		case MCP_GOT_LOST:
			return;
		case MCP_GOT_BAD:
			c->stats.malformed_lines++;
			continue;
		case MCP_GOT_MSG:
			break;
		}
		rc = mcp_handle(c, msg, clock_mono_ms() + MCP_REPLY_MS);
		json_decref(msg);
		if (rc < 0)
			return;
	}
}

/* Send a request (params borrowed) and wait for its answer. */
static enum mcp_wait
mcp_exchange(struct mcp_client *c, const char *method, json_t *params,
	     long long deadline, json_int_t *id_out, json_t **answer)
{
	json_int_t id = c->next_id++;
	json_t *req;
	int rc;

	if (id_out)
		*id_out = id;
	if (c->broken)
		return MCP_W_LOST;
	req = json_pack("{s:s, s:I, s:s, s:O}", "jsonrpc", "2.0", "id", id,
			"method", method, "params", params);
	if (!req)
		return MCP_W_NOMEM;
	rc = mcp_send(c, req, deadline);
	json_decref(req);
	if (rc == -2)
		return MCP_W_NOMEM;
	if (rc < 0)
		return MCP_W_LOST;
	return mcp_await(c, id, deadline, answer);
}

static int
mcp_notify(struct mcp_client *c, const char *method, json_t *params, long long deadline)
{
	json_t *note = params ?
		json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method", method, "params", params) :
		json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	int rc;

	if (!note)
		return -2;
	rc = mcp_send(c, note, deadline);
	json_decref(note);
	return rc;
}

static int
mcp_wait_fail(struct mcp_client *c, enum mcp_wait w, const char *step, struct al_err *err)
{
	if (w == MCP_W_NOMEM)
		return al_fail(err, "upstream %s: %s: out of memory", c->name, step);
	if (w == MCP_W_TIMEOUT)
		return al_fail(err, "upstream %s: %s timed out", c->name, step);
	return al_fail(err, "upstream %s: %s failed", c->name, step);
}

/* The answer's result object; NULL (with err set) for an error or a malformed answer. */
static json_t *
mcp_result(struct mcp_client *c, json_t *answer, const char *step, struct al_err *err)
{
	json_t *res = json_object_get(answer, "result");
	json_t *code = json_object_get(json_object_get(answer, "error"), "code");

	if (json_is_integer(code) && !res) {
		al_fail(err, "upstream %s: %s refused (code %lld)", c->name, step,
			(long long)json_integer_value(code));
		return NULL;
	}
	if (!json_is_object(res) || json_object_get(answer, "error")) {
		al_fail(err, "upstream %s: %s failed", c->name, step);
		return NULL;
	}
	return res;
}

/* --- initialize ------------------------------------------------------------ */

static int
mcp_accept_version(struct mcp_client *c, json_t *result, struct al_err *err)
{
	const char *v = json_string_value(json_object_get(result, "protocolVersion"));
	size_t i;

	for (i = 0; v && i < sizeof mcp_versions / sizeof mcp_versions[0]; i++) {
		if (strcmp(v, mcp_versions[i]) == 0) {
			memcpy(c->version, mcp_versions[i], strlen(mcp_versions[i]) + 1);
			return 0;
		}
	}
	return al_fail(err, "upstream %s: unsupported protocol version", c->name);
}

/* No client capabilities: declaring roots or sampling changes what servers do. */
static int
mcp_initialize(struct mcp_client *c, long long deadline, struct al_err *err)
{
	json_t *params, *answer = NULL;
	enum mcp_wait w;
	int rc;

	params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", MCP_PROTOCOL_VERSION,
			   "capabilities", "clientInfo", "name", "airlock", "version", AIRLOCK_VERSION);
	if (!params)
		return al_fail(err, "upstream %s: out of memory", c->name);
	w = mcp_exchange(c, "initialize", params, deadline, NULL, &answer);
	json_decref(params);
	if (w != MCP_W_ANSWER)
		return mcp_wait_fail(c, w, "initialize", err);
	rc = -1;
	if (mcp_result(c, answer, "initialize", err))
		rc = mcp_accept_version(c, json_object_get(answer, "result"), err);
	json_decref(answer);
	if (rc == 0 && mcp_notify(c, "notifications/initialized", NULL, deadline) < 0)
		rc = mcp_wait_fail(c, MCP_W_LOST, "initialize", err);
	return rc;
}

/* --- tools/list ------------------------------------------------------------ */

static void
mcp_listing_free(struct mcp_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static const struct mcp_tool *
mcp_listing_find(const struct mcp_listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

static int
mcp_listing_add(struct mcp_client *c, struct mcp_listing *l, const json_t *tool,
		struct al_err *err)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	struct mcp_tool *t;

	if (!json_is_object(tool) || !name || !name[0])
		return al_fail(err, "upstream %s: tools/list: invalid tool entry", c->name);
	if (mcp_listing_find(l, name))
		return al_fail(err, "upstream %s: tools/list: duplicate tool", c->name);
	if (l->n >= MCP_TOOLS_MAX)
		return al_fail(err, "upstream %s: tools/list: more than %d tools", c->name,
			       MCP_TOOLS_MAX);
	if (!l->v && !(l->v = calloc(MCP_TOOLS_MAX, sizeof *l->v)))
		return al_fail(err, "upstream %s: out of memory", c->name);
	t = &l->v[l->n];
	if (hash_json_canonical(tool, t->hash) < 0 || !(t->name = strdup(name)))
		return al_fail(err, "upstream %s: out of memory", c->name);
	l->n++;
	return 0;
}

/* Take one page's tools; *cursor becomes its nextCursor (NULL on the last page). */
static int
mcp_list_take(struct mcp_client *c, struct mcp_listing *l, json_t *result, char **cursor,
	      struct al_err *err)
{
	json_t *tools = json_object_get(result, "tools"), *tool;
	json_t *next = json_object_get(result, "nextCursor");
	size_t i;

	free(*cursor);
	*cursor = NULL;
	if (!json_is_array(tools) || (next && !json_is_string(next) && !json_is_null(next)))
		return al_fail(err, "upstream %s: tools/list failed", c->name);
	json_array_foreach(tools, i, tool)
		if (mcp_listing_add(c, l, tool, err) < 0)
			return -1;
	if (json_is_string(next) && !(*cursor = strdup(json_string_value(next))))
		return al_fail(err, "upstream %s: out of memory", c->name);
	return 0;
}

static int
mcp_list_page(struct mcp_client *c, struct mcp_listing *l, char **cursor,
	      long long deadline, struct al_err *err)
{
	json_t *params, *answer = NULL, *result;
	enum mcp_wait w;
	int rc = -1;

	params = *cursor ? json_pack("{s:s}", "cursor", *cursor) : json_object();
	if (!params)
		return al_fail(err, "upstream %s: out of memory", c->name);
	w = mcp_exchange(c, "tools/list", params, deadline, NULL, &answer);
	json_decref(params);
	if (w != MCP_W_ANSWER)
		return mcp_wait_fail(c, w, "tools/list", err);
	result = mcp_result(c, answer, "tools/list", err);
	if (result)
		rc = mcp_list_take(c, l, result, cursor, err);
	json_decref(answer);
	return rc;
}

/*
 * A fresh listing replaces the old one only when complete. A list_changed
 * that arrives while listing leaves the listing stale: the change may have
 * raced the answer.
 */
static int
mcp_list_tools(struct mcp_client *c, long long deadline, struct al_err *err)
{
	struct mcp_listing fresh = { 0 };
	char *cursor = NULL;
	int page, rc = 0;

	c->stale = false;
	for (page = 0; page < MCP_PAGES_MAX && rc == 0; page++)
		if ((rc = mcp_list_page(c, &fresh, &cursor, deadline, err)) == 0 && !cursor)
			break;
	if (rc == 0 && cursor)
		rc = al_fail(err, "upstream %s: tools/list: more than %d pages", c->name,
			     MCP_PAGES_MAX);
	free(cursor);
	if (rc < 0) {
		mcp_listing_free(&fresh);
		c->stale = true;
		return -1;
	}
	mcp_listing_free(&c->tools);
	c->tools = fresh;
	return 0;
}

/* --- stopping -------------------------------------------------------------- */

/* Keep the pipes moving so that a server blocked on a full one can exit. */
static void
mcp_discard(struct mcp_client *c, int ms)
{
	struct pollfd p[2];
	char scratch[16384];
	nfds_t n = 0;
	ssize_t got;

	if (c->out_fd >= 0)
		p[n++] = (struct pollfd){ .fd = c->out_fd, .events = POLLIN };
	if (c->err_fd >= 0)
		p[n++] = (struct pollfd){ .fd = c->err_fd, .events = POLLIN };
	if (poll(n ? p : NULL, n, ms) <= 0)
		return;
	if (c->err_fd >= 0)
		mcp_drain_stderr(c);
	if (c->out_fd >= 0 && p[0].revents) {
		got = read(c->out_fd, scratch, sizeof scratch);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			mcp_close_fd(&c->out_fd);
	}
}

/*
 * true once the server has exited. It is left unreaped (WNOWAIT): a zombie
 * keeps its pid, so the group id stays ours while we signal the group.
 */
static bool
mcp_wait_exit(struct mcp_client *c, long ms)
{
	long long deadline = clock_mono_ms() + ms, left;
	int slice = 1;	/* most servers are gone within a few ms: look often at first */
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
			return errno == ECHILD;
		if (si.si_pid == c->pid)
			return true;
		left = deadline - clock_mono_ms();
		if (left <= 0)
			return false;
		mcp_discard(c, left < slice ? (int)left : slice);
		if (slice < MCP_STOP_SLICE_MS)
			slice *= 2;
	}
}

static void
mcp_signal(struct mcp_client *c, int sig)
{
	if (kill(-c->pid, sig) < 0 && errno == ESRCH)
		kill(c->pid, sig);
}

static void
mcp_end_process(struct mcp_client *c)
{
	mcp_close_fd(&c->in_fd);	/* EOF on stdin is the polite goodbye */
	if (!mcp_wait_exit(c, MCP_STOP_EOF_MS)) {
		mcp_signal(c, SIGTERM);
		if (!mcp_wait_exit(c, MCP_STOP_TERM_MS))
			mcp_signal(c, SIGKILL);
	}
	/* Whatever else runs in the group goes too. */
	mcp_signal(c, SIGKILL);
	if (mcp_wait_exit(c, MCP_STOP_KILL_MS) && waitpid(c->pid, NULL, WNOHANG) == c->pid)
		c->reaped = true;
}

void
mcp_stop(struct mcp_client *c)
{
	if (!c)
		return;
	if (c->pid > 0 && !c->reaped)
		mcp_end_process(c);
	mcp_close_fd(&c->in_fd);
	mcp_close_fd(&c->out_fd);
	mcp_close_fd(&c->err_fd);
	mcp_listing_free(&c->tools);
	free(c->buf);
	free(c->name);
	free(c);
}

/* --- the public calls ------------------------------------------------------ */

/* Writes to a dead server's stdin must fail with EPIPE, not kill the engine. */
static void
mcp_ignore_sigpipe(void)
{
	struct sigaction old, sa;

	if (sigaction(SIGPIPE, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
}

static struct mcp_client *
mcp_client_new(const struct mcp_server_config *cfg)
{
	struct mcp_client *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->name = strdup(cfg->name ? cfg->name : "?");
	if (!c->name) {
		free(c);
		return NULL;
	}
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->next_id = 1;
	c->init_ms = cfg->init_timeout_ms > 0 ? cfg->init_timeout_ms : MCP_INIT_DEFAULT_MS;
	c->call_ms = cfg->call_timeout_ms > 0 ? cfg->call_timeout_ms : MCP_CALL_DEFAULT_MS;
	return c;
}

/* initialize, then the first listing, within one init timeout. */
static int
mcp_begin(struct mcp_client *c, struct al_err *err)
{
	long long deadline = clock_mono_ms() + c->init_ms;

	if (mcp_initialize(c, deadline, err) < 0 || mcp_list_tools(c, deadline, err) < 0)
		return -1;
	return 0;
}

/* The handshake on a client whose transport is up; on failure it is stopped. */
static int
mcp_started(struct mcp_client *c, struct mcp_client **out, struct al_err *err)
{
	if (mcp_begin(c, err) < 0) {
		mcp_stop(c);
		return -1;
	}
	*out = c;
	return 0;
}

int
mcp_start(const struct mcp_server_config *cfg, struct mcp_client **out, struct al_err *err)
{
	struct mcp_client *c;

	if (!out || !cfg)
		return al_fail(err, "upstream: bad arguments");
	*out = NULL;
	if (cfg->argv.n == 0 || !cfg->argv.v[0] || cfg->argv.v[0][0] != '/')
		return al_fail(err, "upstream %s: argv[0] must be an absolute path",
			       cfg->name ? cfg->name : "?");
	c = mcp_client_new(cfg);
	if (!c)
		return al_fail(err, "upstream: out of memory");
	mcp_ignore_sigpipe();
	if (mcp_spawn(c, cfg, err) < 0) {
		mcp_stop(c);
		return -1;
	}
	return mcp_started(c, out, err);
}

/* stdout comes from the replay (mcp_replay_pump); what we write goes nowhere. */
static int
mcp_replay_open(struct mcp_client *c, const void *bytes, size_t len)
{
	c->replaying = true;
	c->replay = bytes;
	c->replay_len = len;
	c->in_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return c->in_fd < 0 ? -1 : 0;
}

int
mcp_start_replay(const char *name, const void *bytes, size_t len, struct mcp_client **out,
		 struct al_err *err)
{
	struct mcp_server_config cfg = { .name = name };
	struct mcp_client *c;

	if (!out || (len && !bytes))
		return al_fail(err, "upstream: bad arguments");
	*out = NULL;
	c = mcp_client_new(&cfg);
	if (!c)
		return al_fail(err, "upstream: out of memory");
	if (mcp_replay_open(c, bytes, len) < 0) {
		al_fail(err, "upstream %s: cannot start", c->name);
		mcp_stop(c);
		return -1;
	}
	return mcp_started(c, out, err);
}

int
mcp_tool_hash(struct mcp_client *c, const char *tool, char out[HASH_HEX_LEN + 1])
{
	const struct mcp_tool *t;

	if (!c || !tool)
		return -1;
	mcp_drain(c);
	if (c->stale && (c->broken || mcp_list_tools(c, clock_mono_ms() + c->init_ms, NULL) < 0))
		return -1;
	t = mcp_listing_find(&c->tools, tool);
	if (!t)
		return -1;
	memcpy(out, t->hash, HASH_HEX_LEN + 1);
	return 0;
}

static const char *
mcp_item_text(const json_t *item, size_t *len)
{
	const json_t *text = json_object_get(item, "text");

	*len = json_string_length(text);
	return json_string_value(text);
}

/* Every item needs a type; a text item needs its text. Sums what is kept. */
static bool
mcp_content_valid(const json_t *content, size_t *len, size_t *others)
{
	const json_t *item;
	const char *type;
	size_t i, n;

	if (!json_is_array(content))
		return false;
	json_array_foreach(content, i, item) {
		type = json_string_value(json_object_get(item, "type"));
		if (!type)
			return false;
		if (strcmp(type, "text") != 0)
			(*others)++;
		else if (mcp_item_text(item, &n))
			*len += n;
		else
			return false;
	}
	return true;
}

/* Text items concatenated in order, no separator; other items only counted. */
static int
mcp_take_content(const json_t *content, struct mcp_call_result *res)
{
	size_t i, len = 0, others = 0, n;
	const json_t *item;
	const char *text;

	if (!mcp_content_valid(content, &len, &others))
		return 0;	/* res->outcome stays MCP_FAULT */
	res->text = malloc(len + 1);
	if (!res->text)
		return -1;
	res->text_len = 0;
	json_array_foreach(content, i, item) {
		if (strcmp(json_string_value(json_object_get(item, "type")), "text") != 0)
			continue;
		text = mcp_item_text(item, &n);
		memcpy(res->text + res->text_len, text, n);
		res->text_len += n;
	}
	res->text[res->text_len] = '\0';
	res->other_items = others;
	res->outcome = MCP_OK;
	return 0;
}

/* Exactly one of result and error. Of an error only the code is kept. */
static int
mcp_take_answer(const json_t *answer, struct mcp_call_result *res)
{
	const json_t *result = json_object_get(answer, "result");
	const json_t *error = json_object_get(answer, "error");
	const json_t *code = json_object_get(error, "code");

	res->outcome = MCP_FAULT;
	if (!result == !error)
		return 0;
	if (error) {
		if (!json_is_integer(code) || json_integer_value(code) < -2147483648LL ||
		    json_integer_value(code) > 2147483647LL)
			return 0;
		res->outcome = MCP_RPC_ERROR;
		res->error_code = (long)json_integer_value(code);
		return 0;
	}
	if (!json_is_object(result))
		return 0;
	if (json_is_true(json_object_get(result, "isError"))) {
		res->outcome = MCP_TOOL_ERROR;
		return 0;
	}
	return mcp_take_content(json_object_get(result, "content"), res);
}

/* The spec's way to give up on a request; a late answer is dropped by id. */
static void
mcp_cancel(struct mcp_client *c, json_int_t id)
{
	json_t *params = json_pack("{s:I, s:s}", "requestId", id, "reason", "timeout");

	if (!params)
		return;
	mcp_notify(c, "notifications/cancelled", params, clock_mono_ms() + MCP_REPLY_MS);
	json_decref(params);
}

static int
mcp_call_outcome(struct mcp_client *c, enum mcp_wait w, json_int_t id, json_t *answer,
		 struct mcp_call_result *res, struct al_err *err)
{
	int rc = 0;

	res->outcome = MCP_FAULT;
	switch (w) {
	case MCP_W_NOMEM:
		return al_fail(err, "upstream %s: out of memory", c->name);
	case MCP_W_TIMEOUT:
		mcp_cancel(c, id);
		res->outcome = MCP_TIMEOUT;
		break;
	case MCP_W_ANSWER:
		rc = mcp_take_answer(answer, res);
		json_decref(answer);
		if (rc < 0)
			return al_fail(err, "upstream %s: out of memory", c->name);
		break;
	case MCP_W_BAD:
	case MCP_W_LOST:
		break;
	}
	return 0;
}

int
mcp_call(struct mcp_client *c, const char *tool, const json_t *arguments,
	 long timeout_ms, struct mcp_call_result *res, struct al_err *err)
{
	json_t *params, *answer = NULL;
	json_int_t id = 0;
	enum mcp_wait w;
	long long deadline;

	if (!res)
		return al_fail(err, "upstream: bad call arguments");
	memset(res, 0, sizeof *res);
	if (!c || !tool || (arguments && !json_is_object(arguments)))
		return al_fail(err, "upstream: bad call arguments");
	c->stats.calls++;
	if (c->broken) {
		res->outcome = MCP_FAULT;
		return 0;
	}
	mcp_drain(c);
	deadline = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : c->call_ms);
	params = json_pack("{s:s, s:o}", "name", tool, "arguments",
			   arguments ? json_deep_copy(arguments) : json_object());
	if (!params)
		return al_fail(err, "upstream %s: out of memory", c->name);
	w = mcp_exchange(c, "tools/call", params, deadline, &id, &answer);
	json_decref(params);
	return mcp_call_outcome(c, w, id, answer, res, err);
}

/*
 * The tools/call line written once, around the caller's text: no json_t
 * for the arguments, no second serialisation, no printf. The tool name is
 * a string from the operator's config, escaped as jansson escapes it
 * (hash.h); a name that is not valid UTF-8 makes the line bad.
 */
static void
mcp_call_line(struct hash_canon *line, json_int_t id, const char *tool, const char *args,
	      size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char method[] = ",\"method\":\"tools/call\",\"params\":{\"name\":";
	static const char arguments[] = ",\"arguments\":";

	hash_canon_raw(line, head, sizeof head - 1);
	hash_canon_int(line, (int64_t)id);
	hash_canon_raw(line, method, sizeof method - 1);
	hash_canon_str(line, tool, strlen(tool));
	hash_canon_raw(line, arguments, sizeof arguments - 1);
	hash_canon_raw(line, args, len);
	hash_canon_raw(line, "}}\n", 3);
}

int
mcp_call_text(struct mcp_client *c, const char *tool, const char *args, size_t len,
	      long timeout_ms, struct mcp_call_result *res, struct al_err *err)
{
	json_t *answer = NULL;
	enum mcp_wait w = MCP_W_LOST;
	long long deadline;
	struct hash_canon line;
	json_int_t id;

	if (!res)
		return al_fail(err, "upstream: bad call arguments");
	memset(res, 0, sizeof *res);
	if (!c || !tool || !args || len < 2 || args[0] != '{')
		return al_fail(err, "upstream: bad call arguments");
	c->stats.calls++;
	if (c->broken) {
		res->outcome = MCP_FAULT;
		return 0;
	}
	mcp_drain(c);
	deadline = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : c->call_ms);
	id = c->next_id++;
	hash_canon_init(&line);
	mcp_call_line(&line, id, tool, args, len);
	if (line.bad) {
		hash_canon_free(&line);
		return al_fail(err, "upstream %s: out of memory", c->name);
	}
	if (mcp_write_all(c, line.buf, line.len, deadline) < 0)
		mcp_lose(c);
	else
		w = mcp_await(c, id, deadline, &answer);
	hash_canon_free(&line);
	return mcp_call_outcome(c, w, id, answer, res, err);
}

void
mcp_call_result_free(struct mcp_call_result *res)
{
	if (!res)
		return;
	free(res->text);
	memset(res, 0, sizeof *res);
}

void
mcp_get_stats(const struct mcp_client *c, struct mcp_stats *out)
{
	if (c)
		*out = c->stats;
	else
		memset(out, 0, sizeof *out);
}

pid_t
mcp_pid(const struct mcp_client *c)
{
	return c ? c->pid : -1;
}

const char *
mcp_negotiated_version(const struct mcp_client *c)
{
	return c ? c->version : "";
}
