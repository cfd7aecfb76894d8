/*
 * The control server's downward helpers (control_server_int.h): the log
 * line, clients' outgoing queues, replies and pushed frames, the snapshot
 * the server holds. The loop (control_server.c), the ops (control_ops.c)
 * and the events (control_events.c) call these; these call none of them,
 * so the calls flow one way: server -> ops -> events -> io.
 */
#include "control_server_int.h"
#include "grow.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void
cs_say(struct control_server *cs, const char *fmt, ...)
{
	va_list ap;

	if (!cs->o.log)
		return;
	fprintf(cs->o.log, "airlock serve: ");
	va_start(ap, fmt);
	vfprintf(cs->o.log, fmt, ap);
	va_end(ap);
	fputc('\n', cs->o.log);
	fflush(cs->o.log);
}

/* ---- the outgoing queue ---- */

static int
outq_reserve(struct outq *q, size_t n)
{
	if (q->off > 0 && q->off + q->len + n > q->alloc) {
		memmove(q->buf, q->buf + q->off, q->len);
		q->off = 0;
	}
	return grow(&q->buf, &q->alloc, q->len + n, 1, 4096, SIZE_MAX);
}

void
cs_kill_client(struct control_server *cs, struct client *c, const char *reason)
{
	if (c->dead)
		return;
	c->dead = true;
	cs_say(cs, "client %u (uid %u %s) disconnected: %s", c->serial, (unsigned)c->uid, c->user,
	    reason);
}

/* Queue one frame; past the hard bound the client goes. */
static void
enqueue(struct control_server *cs, struct client *c, const char *line, size_t n)
{
	if (c->dead)
		return;
	if (c->out.len + n > CONTROL_QUEUE_HARD || outq_reserve(&c->out, n) < 0) {
		cs_kill_client(cs, c, CONTROL_E_SLOW);
		return;
	}
	memcpy(c->out.buf + c->out.off + c->out.len, line, n);
	c->out.len += n;
}

void
cs_flush(struct control_server *cs, struct client *c)
{
	ssize_t n;

	while (!c->dead && c->out.len > 0) {
		n = send(c->fd, c->out.buf + c->out.off, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			cs_kill_client(cs, c, "gone");
			return;
		}
		c->out.off += (size_t)n;
		c->out.len -= (size_t)n;
		cs->counts.bytes_sent += (uint64_t)n;
		c->drops_in_row = 0;
	}
	c->out.off = 0;
}

/* A reply: always queued (a client that never reads meets the hard bound). */
void
cs_reply(struct control_server *cs, struct client *c, int64_t id, json_t *v)
{
	size_t n;
	char *line = control_line(v, CONTROL_FRAME_MAX, &n);

	if (!line) {
		json_t *e = control_error(id, v ? CONTROL_E_BUSY : CONTROL_E_MEMORY, NULL);

		line = control_line(e, CONTROL_FRAME_MAX, &n);
		json_decref(e);
	}
	if (line)
		enqueue(cs, c, line, n);
	else
		cs_kill_client(cs, c, CONTROL_E_MEMORY);
	free(line);
	json_decref(v);
}

void
cs_reply_error(struct control_server *cs, struct client *c, int64_t id, const char *error)
{
	cs_reply(cs, c, id, control_error(id, error, NULL));
}

void
cs_end_input(struct control_server *cs, struct client *c, const char *why)
{
	cs_say(cs, "client %u (uid %u %s): %s, disconnected", c->serial, (unsigned)c->uid,
	    c->user, why);
	cs_reply_error(cs, c, -1, why);
	c->eof = c->input_done = true;
	c->more = false;
}

/* An error with the engine's reason (a config or cutover refusal: operator names only). */
void
cs_reply_reason(struct control_server *cs, struct client *c, int64_t id, const char *error,
	     const char *reason)
{
	cs_reply(cs, c, id, control_error(id, error, reason));
}

/* A pushed frame: dropped and counted when the client is behind. */
void
cs_push(struct control_server *cs, struct client *c, const char *key, json_t *body)
{
	json_t *frame;
	char *line;
	size_t n;

	c->seq++;
	if (c->out.len > CONTROL_QUEUE_SOFT) {
		json_decref(body);
		c->gap++;
		cs->counts.dropped++;
		if (++c->drops_in_row > CONTROL_DROPS_MAX)
			cs_kill_client(cs, c, CONTROL_E_SLOW);
		return;
	}
	frame = control_push(c->seq, c->gap, key, body);
	line = control_line(frame, CONTROL_FRAME_MAX, &n);
	json_decref(frame);
	if (!line) {
		c->gap++;
		cs->counts.dropped++;
		return;
	}
	c->gap = 0;
	enqueue(cs, c, line, n);
	free(line);
}

bool
cs_push_text(struct control_server *cs, struct client *c, const char *key, const char *body,
	     size_t len)
{
	char head[96];
	size_t h;
	char *line;

	c->seq++;
	if (c->out.len > CONTROL_QUEUE_SOFT || len > CONTROL_FRAME_MAX - sizeof head) {
		c->gap++;
		cs->counts.dropped++;
		if (c->out.len > CONTROL_QUEUE_SOFT && ++c->drops_in_row > CONTROL_DROPS_MAX)
			cs_kill_client(cs, c, CONTROL_E_SLOW);
		return false;
	}
	if (c->gap)
		h = (size_t)snprintf(head, sizeof head, "{\"seq\":%llu,\"gap\":%llu,\"%s\":",
				     (unsigned long long)c->seq, (unsigned long long)c->gap, key);
	else
		h = (size_t)snprintf(head, sizeof head, "{\"seq\":%llu,\"%s\":",
				     (unsigned long long)c->seq, key);
	line = malloc(h + len + 2);
	if (!line) {
		c->gap++;
		cs->counts.dropped++;
		return false;
	}
	memcpy(line, head, h);
	memcpy(line + h, body, len);
	memcpy(line + h + len, "}\n", 2);
	c->gap = 0;
	enqueue(cs, c, line, h + len + 2);
	free(line);
	return !c->dead;
}

/* ---- the snapshot, and the configs it lets go ---- */

static bool
in_snapshot(const struct supervisor_snapshot *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->rows[i].id, id) == 0)
			return true;
	return false;
}

static void
release_owned(struct control_server *cs)
{
	size_t i;

	for (i = 0; i < OWNED_MAX; i++)
		if (cs->owned[i] && !cs->owned[i]->loading &&
		    !in_snapshot(&cs->snap, cs->owned[i]->id)) {
			config_free(&cs->owned[i]->cfg);
			free(cs->owned[i]);
			cs->owned[i] = NULL;
		}
}

/* 1: changed, 0: live parts only, -1: out of memory. */
int
cs_refresh(struct control_server *cs)
{
	int rc = supervisor_snapshot(cs->o.sup, &cs->snap);

	cs->snap_ok = rc >= 0;
	if (rc >= 0)
		release_owned(cs);
	return rc;
}

struct client *
cs_client_by_serial(struct control_server *cs, unsigned serial)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && cs->clients[i]->serial == serial && !cs->clients[i]->dead)
			return cs->clients[i];
	return NULL;
}

bool
cs_snapshots_wanted(const struct control_server *cs)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && !cs->clients[i]->dead && cs->clients[i]->snapshots)
			return true;
	return false;
}

size_t
cs_n_clients(const struct control_server *cs)
{
	size_t i, n = 0;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		n += cs->clients[i] && !cs->clients[i]->dead;
	return n;
}

const char *
cs_user_name(uid_t uid, char *out, size_t cap)
{
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(out, cap, "%s", res->pw_name);
	else
		snprintf(out, cap, "%u", (unsigned)uid);
	return out;
}
