#include "parser.h"
#include "clock.h"
#include "mcp.h"
#include "mcp_digest.h"
#include "parse_wire.h"
#include "self_exe.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct parser {
	struct mcp_client *proc;	/* the process, started and ended as an upstream's */
	int in_fd, out_fd, err_fd;	/* lent by proc */
	size_t cap;			/* the largest reply body (parse_body_max) */
	char *buf;			/* the latest reply; its room grows to a reply's need */
	size_t buf_cap;
	char *dig;			/* the latest digest of an upstream's line */
	size_t dig_cap;
	size_t digests;			/* upstream lines it read */
	bool lost;
	char lockdown[64];		/* its ready message: "landlock 7, 27 calls allowed" */
};

int
parser_program(const char *exe, char *out, size_t cap)
{
	return self_exe_program(exe, PARSER_PROGRAM, out, cap);
}

/* Its config as an upstream's: its own user, no network, nothing writable. */
static int
parser_config(struct mcp_server_config *sc, const char *program, size_t frame_bytes,
	      char *arg, size_t cap)
{
	static char mutants[256];
	const char *m = getenv("AIRLOCK_MUTANT");

	*sc = (struct mcp_server_config){ .name = "parser", .init_timeout_ms = PARSER_START_MS };
	sc->confine.user = PARSER_USER;
	sc->confine.kind = "parser_spawn";	/* the upstreams' mutants are not its */
	sc->confine.outlives_starter = true;	/* a pool or session-start thread starts it */
	/*
	 * Where the spawn finds no Landlock ABI 6 (an older kernel, or the
	 * spawn's child under valgrind, for bench/run's counts), the parser
	 * still starts: its own lockdown needs Landlock, and proves it.
	 */
	sc->confine.unconfined_ok = true;
	snprintf(arg, cap, "%zu", frame_bytes);
	if (strv_push(&sc->argv, program) < 0 || strv_push(&sc->argv, "parser") < 0 ||
	    strv_push(&sc->argv, arg) < 0)
		return -1;
#ifdef AIRLOCK_MUTANTS
	if (m && snprintf(mutants, sizeof mutants, "AIRLOCK_MUTANT=%s", m) < (int)sizeof mutants &&
	    strv_push(&sc->env, mutants) < 0)
		return -1;
#else
	(void)m;
	(void)mutants;
#endif
	return 0;
}

#define PARSER_WHY_MS	200	/* for the line of a parser that did not say ready */

/*
 * Why it never said ready: its one line of stderr (written before it
 * read anything of ours, so its own words), printable and short.
 */
static int
not_ready(struct parser *p, struct al_err *err)
{
	struct pollfd w = { .fd = p->err_fd, .events = POLLIN };
	char why[128] = "";
	ssize_t n = 0;
	size_t i;

	/* A failed lockdown writes its line, then exits at once: wait for either. */
	if (poll(&w, 1, PARSER_WHY_MS) > 0)
		n = read(p->err_fd, why, sizeof why - 1);
	for (i = 0; n > 0 && i < (size_t)n && why[i] >= ' ' && why[i] < 127; i++)
		;
	why[i] = '\0';
	return al_fail(err, "parser: not locked down, nothing parsed%s%s",
		       why[0] ? ": " : "", why);
}

/* The spawn speaks of an "upstream parser": it is the parser. */
static void
spawn_error(struct al_err *err)
{
	static const char up[] = "upstream parser: ";
	char msg[sizeof err->msg];

	if (!err || strncmp(err->msg, up, sizeof up - 1) != 0)
		return;
	snprintf(msg, sizeof msg, "parser: %s", err->msg + sizeof up - 1);
	memcpy(err->msg, msg, sizeof msg);
}

static int
await_ready(struct parser *p, struct al_err *err)
{
	uint32_t type;
	size_t n;

	if (parse_recv(p->out_fd, &type, p->buf, sizeof p->lockdown - 1, &n,
		       clock_mono_ms() + PARSER_START_MS) < 0 || type != PARSE_READY)
		return not_ready(p, err);
	memcpy(p->lockdown, p->buf, n);
	p->lockdown[n] = '\0';
	return 0;
}

/*
 * Room for need bytes in *buf: what a session keeps between lines is a
 * page or so, not the largest reply it may get (parse_body_max of a 64 KiB
 * frame is half a megabyte). A room past PARSER_ROOM_KEEP is given back
 * at the next line. 0, or -1 when out of memory.
 */
#define PARSER_ROOM_FIRST	4096
#define PARSER_ROOM_KEEP	(64 << 10)

static int
room(char **buf, size_t *cap, size_t need)
{
	size_t want = need > PARSER_ROOM_FIRST ? need : PARSER_ROOM_FIRST;

	if (*buf && *cap >= want && *cap <= PARSER_ROOM_KEEP)
		return 0;
	free(*buf);
	*cap = 0;
	if (!(*buf = malloc(want)))
		return -1;
	*cap = want;
	return 0;
}

int
parser_start(const char *program, size_t frame_bytes, struct parser **out, struct al_err *err)
{
	struct mcp_server_config sc;
	struct al_err why;
	struct parser *p = calloc(1, sizeof *p);
	char arg[24];
	int rc = -1;

	*out = NULL;
	if (!p || !program || frame_bytes < 2 || frame_bytes > PARSE_FRAME_LIMIT) {
		free(p);
		return al_fail(err, "parser: bad arguments");
	}
	/* That it exists (privileged: the root and docker refusals are for configs' users). */
	if (mcp_confine_can_change_ids() && mcp_confine_check_user(PARSER_USER, true, &why) < 0) {
		free(p);
		return al_fail(err, "parser: %s: run scripts/setup or: useradd --system %s",
			       why.msg, PARSER_USER);
	}
	p->cap = parse_body_max(frame_bytes);
	if (room(&p->buf, &p->buf_cap, PARSER_ROOM_FIRST) < 0 || parser_config(&sc, program, frame_bytes, arg, sizeof arg) < 0)
		al_fail(err, "parser: out of memory");
	else if (mcp_start_process(&sc, &p->proc, err) == 0) {
		mcp_process_fds(p->proc, &p->in_fd, &p->out_fd, &p->err_fd);
		rc = await_ready(p, err);
	} else
		spawn_error(err);
	strv_free(&sc.argv);
	strv_free(&sc.env);
	if (rc < 0)
		parser_stop(p);
	else
		*out = p;
	return rc;
}

int
parser_start_beside(const char *exe, size_t frame_bytes, struct parser **out,
		    struct al_err *err)
{
	char program[PATH_MAX];

	*out = NULL;
	if (parser_program(exe, program, sizeof program) < 0)
		return al_fail(err, "parser: %s", program);
	return parser_start(program, frame_bytes, out, err);
}

void
parser_stop(struct parser *p)
{
	if (!p)
		return;
	mcp_stop(p->proc);
	free(p->buf);
	free(p->dig);
	free(p);
}

static enum parser_verdict
lose(struct parser *p)
{
	p->lost = true;
	return PARSER_LOST;
}

/*
 * Believed only once checked: an operation of 1..64 bytes, then one
 * object on one line (no newline, no NUL), within the caps.
 */
static int
checked(const char *body, size_t n, struct parsed_frame *out)
{
	const char *nul = memchr(body, '\0', n < FRAME_OPERATION_MAX + 1 ? n : FRAME_OPERATION_MAX + 1);
	size_t op;

	if (!nul || nul == body)
		return -1;
	op = (size_t)(nul - body);
	out->args = nul + 1;
	out->args_len = n - op - 1;
	if (out->args_len < 2 || out->args[0] != '{' || out->args[out->args_len - 1] != '}' ||
	    memchr(out->args, '\n', out->args_len) || memchr(out->args, '\0', out->args_len))
		return -1;
	memcpy(out->operation, body, op + 1);
	return 0;
}

enum parser_verdict
parser_frame(struct parser *p, const char *line, size_t len, struct parsed_frame *out)
{
	int64_t deadline = clock_mono_ms() + PARSER_REPLY_MS;
	struct parse_header h;

	if (!p || p->lost || len > p->cap)	/* the bridge keeps lines to a frame */
		return p ? lose(p) : PARSER_LOST;
	if (parse_send(p->in_fd, PARSE_FRAME, line, len, NULL, 0, deadline) < 0 ||
	    parse_recv_head(p->out_fd, &h, deadline) < 0 || h.len > p->cap ||
	    room(&p->buf, &p->buf_cap, h.len) < 0 ||
	    parse_recv_body(p->out_fd, p->buf, h.len, deadline) < 0)
		return lose(p);
	if (h.type == PARSE_FRAME_BAD && h.len == 0)
		return PARSER_INVALID;
	if (h.type != PARSE_FRAME_OK || checked(p->buf, h.len, out) < 0)
		return lose(p);
	return PARSER_VALID;
}

/* A line out, its digest back into p->dig: 0 with *n its length, or -1 (lost). */
static int
exchange(struct parser *p, uint32_t type, uint32_t reply, size_t max, const char *line,
	 size_t len, size_t *n)
{
	int64_t deadline = clock_mono_ms() + PARSER_REPLY_MS;
	struct parse_header h;

	if (!p || p->lost)
		return -1;
	if (parse_send(p->in_fd, type, line, len, NULL, 0, deadline) < 0 ||
	    parse_recv_head(p->out_fd, &h, deadline) < 0 || h.type != reply || h.len > max ||
	    room(&p->dig, &p->dig_cap, h.len) < 0 ||
	    parse_recv_body(p->out_fd, p->dig, h.len, deadline) < 0) {
		p->lost = true;
		return -1;
	}
	*n = h.len;
	return 0;
}

int
parser_mcp_digest(void *ctx, const char *line, size_t len, struct mcp_msg *out)
{
	struct parser *p = ctx;
	size_t n;

	if (len > MCP_LINE_MAX ||
	    exchange(p, PARSE_MCP, PARSE_MCP_DIGEST, MCP_DIGEST_MAX, line, len, &n) < 0 ||
	    mcp_digest_read(p->dig, n, out) < 0)
		goto lost;
	p->digests++;
	return 0;
lost:
	if (p)
		p->lost = true;
	return -1;
}

int
parser_control(struct parser *p, const char *line, size_t len, const void **digest,
	       size_t *digest_len)
{
	if (len > PARSER_CONTROL_LINE_MAX ||
	    exchange(p, PARSE_CONTROL, PARSE_CONTROL_DIGEST, PARSER_CONTROL_DIGEST_MAX, line, len,
		     digest_len) < 0) {
		if (p)
			p->lost = true;
		return -1;
	}
	*digest = p->dig;
	return 0;
}

void
parser_set_lost(struct parser *p)
{
	if (p)
		p->lost = true;
}

bool
parser_lost(const struct parser *p)
{
	return !p || p->lost;
}

size_t
parser_digests(const struct parser *p)
{
	return p ? p->digests : 0;
}

int
parser_pid(const struct parser *p)
{
	return (int)mcp_pid(p->proc);
}

const struct mcp_confine_receipt *
parser_confinement(const struct parser *p)
{
	return mcp_confinement(p->proc);
}

const char *
parser_lockdown_text(const struct parser *p)
{
	return p->lockdown;
}

#ifdef AIRLOCK_MUTANTS
int
parser_escape_test(struct parser *p, const char *docker_socket, const char *audit_db,
		   int engine_pid, char *out, size_t cap)
{
	int64_t deadline = clock_mono_ms() + PARSER_REPLY_MS;
	char body[600];
	uint32_t type;
	size_t n;
	int w = snprintf(body, sizeof body, "%s%c%s%c%d", docker_socket, 0, audit_db, 0, engine_pid);

	if (w < 0 || (size_t)w + 1 > sizeof body ||
	    parse_send(p->in_fd, PARSE_ESCAPE, body, (size_t)w + 1, NULL, 0, deadline) < 0 ||
	    parse_recv(p->out_fd, &type, p->buf, p->buf_cap, &n, deadline) < 0 ||
	    type != PARSE_ESCAPE_REPORT || n + 1 > cap)
		return -1;
	memcpy(out, p->buf, n);
	out[n] = '\0';
	return 0;
}
#endif
