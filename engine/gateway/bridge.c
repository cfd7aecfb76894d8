#include "bridge.h"
#include "clock.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"
#include "err.h"
#include "frame.h"
#include "policy.h"
#include "profile.h"

#define REPLY_WRITE_MS_MAX	5000
#define EXIT_WAIT_MS		2000

struct bridge {
	struct bridge_options o;
	struct linebuf lines;
	struct bridge_report r;
};

/* The first end wins: what follows it (cleanup, EOF) is its symptom. */
static void
end(struct bridge *b, enum session_end e)
{
	if (b->r.ended)
		return;
	b->r.ended = true;
	b->r.end = e;
}

/* An end with its reason for the operator (fixed text and numbers only). */
static void fail(struct bridge *b, enum session_end e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
fail(struct bridge *b, enum session_end e, const char *fmt, ...)
{
	va_list ap;

	if (b->r.ended)
		return;
	va_start(ap, fmt);
	vsnprintf(b->r.reason, sizeof b->r.reason, fmt, ap);
	va_end(ap);
	end(b, e);
}

struct bridge *
bridge_open(const struct bridge_options *o)
{
	struct bridge *b = calloc(1, sizeof *b);

	if (b && linebuf_init(&b->lines, o->bounds->frame_bytes - 1,
			      o->bounds->stdout_bytes + 1) == 0) {
		b->o = *o;
		return b;
	}
	free(b);
	return NULL;
}

const struct bridge_report *
bridge_report(const struct bridge *b)
{
	return &b->r;
}

void
bridge_extend(struct bridge *b, int64_t ms)
{
	if (ms > 0)
		b->o.deadline_ms += ms;
}

static int
write_timeout(const struct bridge *b)
{
	int64_t left = b->o.deadline_ms - clock_mono_ms();

	if (left < 1)
		return 1;
	return left < REPLY_WRITE_MS_MAX ? (int)left : REPLY_WRITE_MS_MAX;
}

void
bridge_set_deadline(struct bridge *b, int64_t deadline_ms)
{
	b->o.deadline_ms = deadline_ms;
}

int
bridge_write(struct bridge *b, const char *line, size_t len)
{
	struct al_err err;

	if (docker_attach_write(container_stream(b->o.box), line, len, write_timeout(b),
				&err) < 0) {
		end(b, SESSION_END_STREAM_FAILED);
		return -1;
	}
	return 0;
}

/* Container output: stdout feeds the line buffer, stderr is only counted. */
static int
on_output(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct bridge *b = ctx;
	struct bridge_report *r = &b->r;

	if (stream == DOCKER_STDERR) {
		r->stderr_bytes += len;
		if (r->stderr_bytes > b->o.bounds->stderr_bytes) {
			end(b, SESSION_END_STDERR_BUDGET);
			return 1;
		}
		return 0;
	}
	r->stdout_bytes += len;
	if (r->stdout_bytes > b->o.bounds->stdout_bytes) {
		end(b, SESSION_END_STDOUT_BUDGET);
		return 1;
	}
	if (linebuf_append(&b->lines, data, len) < 0) {
		end(b, SESSION_END_FRAME_TOO_LARGE);
		return 1;
	}
	return 0;
}

static enum session_end
end_for_rule(enum policy_rule rule)
{
	switch (rule) {
	case RULE_UPSTREAM_TIMEOUT:
		return SESSION_END_UPSTREAM_TIMEOUT;
	case RULE_UPSTREAM_UNAVAILABLE:
		return SESSION_END_UPSTREAM_UNAVAILABLE;
	case RULE_AUDIT_FAILED:
		return SESSION_END_AUDIT_FAILED;
	case RULE_PARSER_LOST:
		return SESSION_END_PARSER_FAILED;
	case RULE_STOPPED:	/* its call gave up: the stop is the end */
		return SESSION_END_OPERATOR_STOP;
	default:
		return SESSION_END_UPSTREAM_FAULT;
	}
}

static bool
calls_left(const struct bridge *b)
{
	struct gateway_counters n;

	gateway_get_counters(b->o.gw, &n);
	return n.calls < (uint64_t)b->o.bounds->calls;
}

/* One complete agent line through the gateway and back. */
static void
handle_line(struct bridge *b, const char *line, size_t len)
{
	enum policy_rule rule;
	size_t reply_len;
	char *reply;

	if (!calls_left(b)) {
		end(b, SESSION_END_CALL_BUDGET);
		return;
	}
	switch (gateway_handle(b->o.gw, line, len, &reply, &reply_len, &rule)) {
	case GW_INVALID:
		end(b, SESSION_END_INVALID_REQUEST);
		return;
	case GW_FAULT:
		fail(b, end_for_rule(rule), "%s", gateway_fault_reason(b->o.gw));
		return;
	case GW_REPLY:
		break;
	}
	bridge_write(b, reply, reply_len);
	free(reply);
	if (b->o.replied)
		b->o.replied(b->o.ctx);
}

static void
drain_lines(struct bridge *b)
{
	const char *line;
	size_t len;
	int rc;

	while (!b->r.ended && (rc = linebuf_next(&b->lines, &line, &len)) != 0) {
		if (rc < 0) {
			end(b, SESSION_END_FRAME_TOO_LARGE);
			return;
		}
		handle_line(b, line, len);
	}
}

/*
 * What a non-zero exit means depends on who could have produced it. The
 * daemon's OOMKilled flag names the memory limit. Under runsc, status 2 is
 * what gVisor's sandbox itself exits with when its Go runtime dies (at the
 * pids limit it cannot start a host thread; gVisor issue 2490): the daemon
 * reports that exactly like the agent's own exit 2, so the summary names
 * the sandbox and says it cannot be told apart.
 */
static void
end_nonzero_exit(struct bridge *b, long code)
{
	bool runsc = strcmp(b->o.runtime, "runsc") == 0;

	if (container_is(b->o.box, CONTAINER_OOM_KILLED))
		fail(b, SESSION_END_OOM_KILLED, "killed at the memory limit (OOMKilled, status %ld)",
		     code);
	else if (runsc && code == PROFILE_RUNSC_FATAL_STATUS)
		fail(b, SESSION_END_SANDBOX_DIED, "container exited with status %ld under runsc: "
		     "the gVisor sandbox dies with this status (e.g. at the pids limit); "
		     "the agent's own exit %ld looks the same", code, code);
	else
		fail(b, SESSION_END_AGENT_FAILED, "agent exited with status %ld", code);
}

/*
 * Stream EOF: the agent is done (with an init process, stdout closes only
 * when the agent exits). An unfinished line is not a request; a non-zero
 * exit is a failed agent.
 */
static void
on_eof(struct bridge *b)
{
	struct al_err err;
	long code = -1;

	drain_lines(b);
	if (linebuf_pending(&b->lines) > 0) {
		end(b, SESSION_END_INVALID_REQUEST);
		return;
	}
	if (container_wait_exit(b->o.box, EXIT_WAIT_MS, &code, &err) != 0)
		fail(b, SESSION_END_AGENT_FAILED, "agent did not exit after closing its output");
	else if (code != 0)
		end_nonzero_exit(b, code);
	end(b, SESSION_END_AGENT_EXIT);
}

bool
bridge_step(struct bridge *b, int wait_ms)
{
	struct docker_attach *a = container_stream(b->o.box);
	struct pollfd pfd = { .fd = docker_attach_fd(a), .events = POLLIN };
	struct al_err err;
	enum attach_io io;

	if (b->r.ended)
		return false;
	if (poll(&pfd, 1, wait_ms) <= 0)
		return true;	/* a tick, or EINTR: the caller's checks run again */
	io = docker_attach_read(a, on_output, b, &err);
	if (b->r.ended)
		return false;	/* a budget tripped inside the callback */
	if (io == ATTACH_EOF)
		on_eof(b);
	else if (io == ATTACH_ERROR)
		end(b, SESSION_END_STREAM_FAILED);
	else
		drain_lines(b);
	return !b->r.ended;
}

void
bridge_close(struct bridge *b)
{
	if (!b)
		return;
	linebuf_free(&b->lines);
	free(b);
}
