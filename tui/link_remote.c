/*
 * An engine elsewhere (link.h): `airlock serve` over its control socket
 * (engine/protocol/control.h), directly or through ssh. One thread per link owns the
 * connection: it connects, says hello, subscribes to events and snapshots,
 * reads every frame, writes what the UI queued, and after a loss tries
 * again with back-off. The UI thread only ever takes the mutex to copy
 * what arrived or to queue a line: it never waits on the engine.
 */
#include "link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config_inline.h"
#include "link_remote_int.h"
#include "thread.h"

void
link_remote_wake_ui(struct link_remote *r)
{
	char c = 1;

	if (write(r->wake[1], &c, 1) < 0 && errno != EAGAIN)
		return;
}

static void
poke_thread(struct link_remote *r)
{
	char c = 1;

	if (write(r->ctl[1], &c, 1) < 0 && errno != EAGAIN)
		return;
}

static void
drain_fd(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof buf) > 0)
		;
}

/* ---- queueing requests (the UI thread; r->mu held) ---- */

/*
 * req as the protocol's table writes it (control_request_json), with the
 * next id. NULL: a value did not fit, which the engine would refuse.
 */
int
link_remote_queue_line(struct link_remote *r, struct control_request *req,
		       enum pending_kind kind, const struct link_result *proto, const char **why)
{
	json_t *j;
	size_t n;
	char *line;

	*why = !req ? CONTROL_E_ARG : r->st.state != LINK_UP || r->fd < 0 ? "not connected"
	     : r->n_pending == PENDING_MAX || r->out_len > OUT_MAX ? CONTROL_E_BUSY : NULL;
	if (*why)
		return -1;
	req->id = ++r->next_id;
	j = control_request_json(req);
	line = control_line(j, CONTROL_LINE_MAX + 1, &n);
	json_decref(j);
	if (!line) {
		*why = CONTROL_E_MEMORY;
		return -1;
	}
	if (r->out_off > 0) {
		memmove(r->out, r->out + r->out_off, r->out_len);
		r->out_off = 0;
	}
	char *grown = realloc(r->out, r->out_len + n);

	if (!grown) {
		free(line);
		*why = CONTROL_E_MEMORY;
		return -1;
	}
	r->out = grown;
	memcpy(r->out + r->out_len, line, n);
	r->out_len += n;
	free(line);
	r->pending[r->n_pending++] = (struct pending){ .id = r->next_id, .kind = kind };
	if (proto)
		r->pending[r->n_pending - 1].proto = *proto;
	poke_thread(r);
	return 0;
}

/* A request of the operator's: LINK_SENT, or LINK_DONE with why. */
static int
send_request(struct link *l, struct control_request *req, struct link_result *res)
{
	struct link_remote *r = link_remote_of(l);
	const char *why = NULL;
	int rc;

	pthread_mutex_lock(&r->mu);
	rc = link_remote_queue_line(r, req, P_REQUEST, res, &why);
	if (rc < 0)
		snprintf(res->error, sizeof res->error, "engine %s: %s", r->st.name, why);
	pthread_mutex_unlock(&r->mu);
	res->ok = false;
	return rc < 0 ? LINK_DONE : LINK_SENT;
}

/* ---- the ops ---- */

static int
remote_snapshot(struct link *l, struct supervisor_snapshot *s)
{
	struct link_remote *r = link_remote_of(l);
	struct session_row *rows = s->rows;
	size_t n, cap = s->cap;
	int rc = -1;

	pthread_mutex_lock(&r->mu);
	n = r->snap.n;
	if (n > cap && (rows = realloc(s->rows, n * sizeof *rows)))
		cap = n;
	if ((rows || n == 0) && cap >= n && r->snap_fresh) {	/* an idle engine's is fresh too */
		*s = r->snap;
		s->rows = rows;
		s->cap = cap;
		if (n)
			memcpy(rows, r->snap.rows, n * sizeof *rows);
		rc = r->st.state == LINK_UP ? 0 : -1;
	} else if (rows) {
		s->rows = rows;
		s->cap = cap;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static int
remote_detail(struct link *l, const char *id, struct session_detail *d)
{
	struct link_remote *r = link_remote_of(l);
	int64_t now = clock_mono_ms();
	struct control_request req;
	const char *why;
	int rc = -1;

	control_request_init(&req, CONTROL_OP_DETAIL);
	pthread_mutex_lock(&r->mu);
	if (r->have_detail && strcmp(r->detail->row.id, id) == 0) {
		*d = *r->detail;
		rc = 0;
	}
	if (!r->detail_asked && (rc < 0 || now - r->detail_at >= DETAIL_MS) &&
	    control_request_str(&req, CONTROL_K_SESSION, id) == 0 &&
	    link_remote_queue_line(r, &req, P_DETAIL, NULL, &why) == 0) {
		r->detail_asked = true;
		r->detail_at = now;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static void
ask_host(struct link_remote *r, bool refresh, const char *runtime)
{
	struct control_request req;
	const char *why;

	control_request_init(&req, CONTROL_OP_HOST);
	control_request_bool(&req, CONTROL_K_REFRESH, refresh);
	if (runtime && runtime[0] && control_request_str(&req, CONTROL_K_RUNTIME, runtime) < 0)
		return;
	if (link_remote_queue_line(r, &req, P_HOST, NULL, &why) == 0) {
		r->host_asked = true;
		r->host_at = clock_mono_ms();
	}
}

static void
remote_host(struct link *l, struct host_snapshot *h)
{
	struct link_remote *r = link_remote_of(l);

	pthread_mutex_lock(&r->mu);
	*h = r->host;
	if (!r->host_asked && clock_mono_ms() - r->host_at >= HOST_MS)
		ask_host(r, false, NULL);
	pthread_mutex_unlock(&r->mu);
}

static void
remote_host_refresh(struct link *l, const char *runtime)
{
	struct link_remote *r = link_remote_of(l);

	pthread_mutex_lock(&r->mu);
	ask_host(r, true, runtime);
	pthread_mutex_unlock(&r->mu);
}

static size_t
remote_events(struct link *l, struct supervisor_event *ev, size_t cap)
{
	struct link_remote *r = link_remote_of(l);
	size_t n = 0;

	pthread_mutex_lock(&r->mu);
	drain_fd(r->wake[0]);
	while (n < cap && r->ev_n > 0) {
		ev[n++] = r->events[r->ev_head];
		r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
		r->ev_n--;
	}
	pthread_mutex_unlock(&r->mu);
	return n;
}

static size_t
remote_results(struct link *l, struct link_result *out, size_t cap)
{
	struct link_remote *r = link_remote_of(l);
	size_t n;

	pthread_mutex_lock(&r->mu);
	n = r->n_results < cap ? r->n_results : cap;
	memcpy(out, r->results, n * sizeof *out);
	memmove(r->results, r->results + n, (r->n_results - n) * sizeof *out);
	r->n_results -= n;
	pthread_mutex_unlock(&r->mu);
	return n;
}

static int
remote_wake_fd(struct link *l)
{
	return link_remote_of(l)->wake[0];
}

static void
remote_status(struct link *l, struct link_status *s)
{
	struct link_remote *r = link_remote_of(l);

	pthread_mutex_lock(&r->mu);
	*s = r->st;
	pthread_mutex_unlock(&r->mu);
}

/* A request of the operator's with one string key: NULL when it does not fit. */
static struct control_request *
request_str(struct control_request *req, enum control_op op, enum control_key k, const char *v)
{
	control_request_init(req, op);
	return control_request_str(req, k, v) == 0 ? req : NULL;
}

/*
 * The config is read here, with the console user's rights, and sent whole:
 * the engine opens no file for a peer (engine/config/config_inline.h).
 */
static int
remote_start(struct link *l, const char *path, struct link_result *res)
{
	struct control_request req;
	struct al_err err;
	json_t *cfg = config_inline_file(path, &err);
	int rc;

	res->req = LINK_REQ_START;
	snprintf(res->path, sizeof res->path, "%s", path);
	if (!cfg) {
		res->ok = false;
		snprintf(res->error, sizeof res->error, "%s", err.msg);
		return LINK_DONE;
	}
	control_request_init(&req, CONTROL_OP_START);
	control_request_config(&req, cfg);
	rc = send_request(l, &req, res);
	control_request_free(&req);
	return rc;
}

static int
remote_stop(struct link *l, const char *id, struct link_result *res)
{
	struct control_request req;

	res->req = LINK_REQ_STOP;
	snprintf(res->session, sizeof res->session, "%s", id);
	return send_request(l, request_str(&req, CONTROL_OP_STOP, CONTROL_K_SESSION, id), res);
}

static int
remote_quarantine(struct link *l, const char *id, bool on, struct link_result *res)
{
	struct control_request req;

	res->req = LINK_REQ_QUARANTINE;
	res->op = on ? CUTOVER_FREEZE : CUTOVER_THAW;
	snprintf(res->session, sizeof res->session, "%s", id);
	control_request_init(&req, on ? CONTROL_OP_QUARANTINE : CONTROL_OP_RELEASE);
	return send_request(l, control_request_add_id(&req, id) == 0 ? &req : NULL, res);
}

static int
remote_stop_all(struct link *l, struct link_result *res)
{
	struct control_request req;

	res->req = LINK_REQ_STOP_ALL;
	control_request_init(&req, CONTROL_OP_STOP_ALL);
	return send_request(l, &req, res);
}

/* A revoke or restore names its tool, and its sessions or all of them. */
static int
cutover_targets(struct control_request *req, const char *tool, const char *const *ids, size_t n)
{
	size_t i;

	if (control_request_str(req, CONTROL_K_TOOL, tool) < 0)
		return -1;
	if (!ids)
		control_request_bool(req, CONTROL_K_ALL, true);
	req->has |= ids ? CONTROL_KEY(SESSIONS) : 0;
	for (i = 0; ids && i < n; i++)
		if (control_request_add_id(req, ids[i]) < 0)
			return -1;
	return 0;
}

static int
remote_cutover(struct link *l, enum cutover_op op, const char *tool, const char *const *ids,
	       size_t n, const struct link_grant *grant, struct link_result *res)
{
	enum control_op o = CONTROL_OP_COUNT;
	struct control_request req;
	bool bad = false;

	res->req = LINK_REQ_CUTOVER;
	res->op = op;
	snprintf(res->tool, sizeof res->tool, "%s", tool ? tool : "");
	control_op_by_name(cutover_op_id(op), &o);	/* the same words */
	control_request_init(&req, o);
	control_request_int(&req, CONTROL_K_WAIT, CUTOVER_WAIT_MS);
	if (op == CUTOVER_REVOKE || op == CUTOVER_RESTORE || op == CUTOVER_HOLD)
		bad = cutover_targets(&req, tool, ids, n) < 0;
	if (grant && grant->flow) {	/* a class flow takes the tool's place */
		req.has &= ~CONTROL_KEY(TOOL);
		bad = bad || control_request_str(&req, CONTROL_K_FLOW, tool) < 0;
	}
	if (op == CUTOVER_RESTORE && grant && (grant->for_s || grant->calls)) {
		res->grant = *grant;
		if (grant->for_s)
			control_request_int(&req, CONTROL_K_FOR, grant->for_s);
		if (grant->calls)
			control_request_int(&req, CONTROL_K_CALLS, grant->calls);
	}
	return send_request(l, bad ? NULL : &req, res);
}

/* approve or deny hold_id, through the protocol's table like every request. */
static int
remote_decide(struct link *l, int64_t id, bool approve, bool rest, struct link_result *res)
{
	struct control_request req;

	res->req = approve ? LINK_REQ_APPROVE : LINK_REQ_DENY;
	res->hold = id;
	res->rest = approve && rest;
	control_request_init(&req, approve ? CONTROL_OP_APPROVE : CONTROL_OP_DENY);
	control_request_int(&req, CONTROL_K_HOLD_ID, id);
	if (res->rest)
		control_request_bool(&req, CONTROL_K_REST, true);
	return send_request(l, &req, res);
}

static int
remote_forget(struct link *l, const char *id, struct link_result *res)
{
	struct control_request req;

	res->req = LINK_REQ_FORGET;
	snprintf(res->session, sizeof res->session, "%s", id);
	control_request_init(&req, CONTROL_OP_FORGET);
	return send_request(l, control_request_add_id(&req, id) == 0 ? &req : NULL, res);
}

/*
 * The engine's own audit log, from its latest answer: rows after *after
 * (the newest when *after < 0: then from the log's head on). Asked again
 * every AUDIT_MS while up.
 */
/* ---- connecting ---- */

static int64_t
backoff_ms(unsigned attempts)
{
	int64_t ms = RETRY_FIRST_MS;

	while (attempts-- > 1 && ms < RETRY_MAX_MS)
		ms *= 2;
	return ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS;
}

/* Down: every request waiting gets its answer now, and the next attempt a time. */
static void
went_down(struct link_remote *r, const char *why)
{
	struct link_result res;
	size_t i;

	pthread_mutex_lock(&r->mu);
	for (i = 0; i < r->n_pending; i++)
		if (r->pending[i].kind == P_REQUEST) {
			res = r->pending[i].proto;
			res.ok = false;
			snprintf(res.error, sizeof res.error,
				 "engine %s: lost before it answered: the request may have been carried out",
				 r->st.name);
			link_remote_push_result(r, &res);
		}
	r->n_pending = 0;
	r->out_len = r->out_off = 0;
	r->detail_asked = r->host_asked = r->audit_asked = r->timeline_asked = false;
	r->holds_asked = false;
	r->holds_have = false;		/* the next connection's answer, not this one's */
	r->holds_stale = true;
	r->fd = -1;
	r->st.attempts++;
	r->st.state = LINK_LOST;
	r->st.retry_ms = clock_mono_ms() + backoff_ms(r->st.attempts);
	if (why && why[0])
		snprintf(r->st.why, sizeof r->st.why, "%s", why);
	pthread_mutex_unlock(&r->mu);
	link_remote_wake_ui(r);
}

/* The hello: the engine's name and our role, or why it will not talk to us. */
static int
take_hello(struct link_remote *r, const char *line, size_t len, char *why, size_t cap)
{
	json_t *h = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	struct control_hello_msg m;
	int rc = -1;

	if (control_hello_from_json(h, &m) < 0 || m.airlock != CONTROL_VERSION)
		snprintf(why, cap, "the engine speaks another protocol");
	else if (json_is_false(json_object_get(h, "ok")))	/* a bye instead (control_bye) */
		snprintf(why, cap, "refused: %.200s",
			 json_string_value(json_object_get(h, "error")) ?: "no reason");
	else {
		pthread_mutex_lock(&r->mu);
		snprintf(r->st.name, sizeof r->st.name, "%.31s", json_object_get(h, "engine") ?
			 m.engine : "engine");
		/* Words outside the table read as the lesser role: the engine decides anyway. */
		snprintf(r->st.role, sizeof r->st.role, "%s",
			 control_role_name(m.role == CONTROL_ROLE_OPERATE ? m.role : CONTROL_ROLE_VIEW));
		pthread_mutex_unlock(&r->mu);
		r->deltas = m.deltas;
		rc = 0;
	}
	json_decref(h);
	return rc;
}

/* Events and snapshots pushed: as deltas where the engine offers them. Under mu. */
void
link_remote_subscribe_events(struct link_remote *r)
{
	struct control_request req;
	const char *why;

	control_request_init(&req, CONTROL_OP_EVENTS);
	control_request_bool(&req, CONTROL_K_FOLLOW, true);
	control_request_bool(&req, CONTROL_K_SNAPSHOTS, true);
	if (r->deltas)	/* an engine that does not offer them refuses the key */
		control_request_bool(&req, CONTROL_K_DELTAS, true);
	link_remote_queue_line(r, &req, P_QUIET, NULL, &why);
}

/* After the hello: who we are, and what we follow. */
static void
subscribe(struct link_remote *r)
{
	struct control_request req;
	const char *why;

	json_decref(r->pushed);		/* a new connection: no base yet */
	r->pushed = NULL;
	r->resync = false;
	r->misfits = 0;
	pthread_mutex_lock(&r->mu);
	r->st.state = LINK_UP;
	r->st.why[0] = '\0';
	link_remote_queue_line(r, request_str(&req, CONTROL_OP_HELLO, CONTROL_K_CLIENT, "console"),
			       P_QUIET, NULL, &why);
	link_remote_subscribe_events(r);
	control_request_init(&req, CONTROL_OP_SNAPSHOT);
	link_remote_queue_line(r, &req, P_QUIET, NULL, &why);
	ask_host(r, false, NULL);
	pthread_mutex_unlock(&r->mu);
}

/* Queued lines out, as far as the socket takes them now. */
static int
flush_out(struct link_remote *r, int fd)
{
	ssize_t w;

	pthread_mutex_lock(&r->mu);
	while (r->out_len > 0) {
		w = send(fd, r->out + r->out_off, r->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (w <= 0) {
			pthread_mutex_unlock(&r->mu);
			return -1;
		}
		r->out_off += (size_t)w;
		r->out_len -= (size_t)w;
	}
	pthread_mutex_unlock(&r->mu);
	return 0;
}

static bool
out_waiting(struct link_remote *r)
{
	bool any;

	pthread_mutex_lock(&r->mu);
	any = r->out_len > 0;
	pthread_mutex_unlock(&r->mu);
	return any;
}

/* Dialled, non-blocking, and the thread's: the fd, or -1 (went down, why said). */
static int
dial(struct link_remote *r, struct linebuf *in, pid_t *pid, char *why, size_t cap)
{
	int fd;

	pthread_mutex_lock(&r->mu);
	r->st.state = LINK_CONNECTING;
	pthread_mutex_unlock(&r->mu);
	link_remote_wake_ui(r);
	fd = link_dial(&r->target, pid, why, cap);
	if (fd < 0 || linebuf_init(in, CONTROL_FRAME_MAX, 2 * (size_t)CONTROL_FRAME_MAX) < 0) {
		if (fd >= 0)
			close(fd);
		went_down(r, why[0] ? why : "out of memory");
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_lock(&r->mu);
	r->fd = fd;
	r->ssh_pid = *pid;
	pthread_mutex_unlock(&r->mu);
	return fd;
}

/* Every complete line: the hello first, then frames. -1: the connection is over. */
static int
take_lines(struct link_remote *r, struct linebuf *in, bool *hello, char *why, size_t cap)
{
	const char *line;
	size_t len;

	while (linebuf_next(in, &line, &len) == 1) {
		if (!*hello) {
			if (take_hello(r, line, len, why, cap) < 0)
				return -1;
			*hello = true;
			subscribe(r);
			continue;
		}
		if (link_remote_take_frame(r, line, len) < 0) {
			why[0] = '\0';	/* the frame said why */
			return -1;
		}
		pthread_mutex_lock(&r->mu);
		r->st.attempts = 0;
		pthread_mutex_unlock(&r->mu);
	}
	return 0;
}

/* One round of the connection: 1 go on, 0 nothing read, -1 over (why said). */
static int
round_trip(struct link_remote *r, int fd, struct linebuf *in, bool *hello, char *why, size_t cap)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = r->ctl[0], .events = POLLIN } };
	char buf[65536];
	ssize_t n;

	if (out_waiting(r))
		p[0].events |= POLLOUT;
	if (poll(p, 2, *hello ? 1000 : 250) < 0 && errno != EINTR)
		return -1;
	if (p[1].revents & POLLIN)
		drain_fd(r->ctl[0]);
	if (p[0].revents & POLLOUT && flush_out(r, fd) < 0)
		return -1;
	if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return *hello && flush_out(r, fd) < 0 ? -1 : 0;
	n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0 || linebuf_append(in, buf, (size_t)n) < 0) {
		if (n > 0)
			snprintf(why, cap, "a frame from the engine was too long");
		return -1;
	}
	if (take_lines(r, in, hello, why, cap) < 0)
		return -1;
	return *hello && flush_out(r, fd) < 0 ? -1 : 1;
}

/* One connection, from dial to loss. */
static void
session(struct link_remote *r)
{
	char why[LINK_TEXT_MAX] = "";
	int64_t hello_by = clock_mono_ms() + HELLO_MS;
	struct linebuf in;
	bool hello = false;
	pid_t pid;
	int fd = dial(r, &in, &pid, why, sizeof why);

	if (fd < 0)
		return;
	snprintf(why, sizeof why, "the engine closed the connection");
	while (!r->stopping) {
		if (!hello && clock_mono_ms() > hello_by) {
			snprintf(why, sizeof why, "no hello from the engine");
			break;
		}
		if (round_trip(r, fd, &in, &hello, why, sizeof why) < 0)
			break;
	}
	linebuf_free(&in);
	close(fd);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	went_down(r, r->stopping ? "" : why);
}

static void *
link_thread(void *arg)
{
	struct link_remote *r = arg;
	int64_t wait;

	while (!r->stopping) {
		session(r);
		pthread_mutex_lock(&r->mu);
		wait = r->st.retry_ms - clock_mono_ms();
		pthread_mutex_unlock(&r->mu);
		if (wait > 0 && !r->stopping) {
			struct pollfd p = { .fd = r->ctl[0], .events = POLLIN };

			poll(&p, 1, (int)wait);
			drain_fd(r->ctl[0]);
		}
	}
	return NULL;
}

static void
remote_close(struct link *l)
{
	struct link_remote *r = link_remote_of(l);

	r->stopping = true;
	poke_thread(r);
	if (r->started)
		pthread_join(r->thread, NULL);
	close(r->ctl[0]);
	close(r->ctl[1]);
	close(r->wake[0]);
	close(r->wake[1]);
	pthread_mutex_destroy(&r->mu);
	supervisor_snapshot_free(&r->snap);
	supervisor_snapshot_free(&r->stage);
	json_decref(r->pushed);
	free(r->detail);
	free(r->audit);
	free(r->timeline);
	free(r->holds);
	free(r->out);
	free(r);
}

static const struct link_ops remote_ops = {
	.snapshot = remote_snapshot,
	.detail = remote_detail,
	.host = remote_host,
	.host_refresh = remote_host_refresh,
	.events = remote_events,
	.results = remote_results,
	.wake_fd = remote_wake_fd,
	.status = remote_status,
	.start = remote_start,
	.stop = remote_stop,
	.stop_all = remote_stop_all,
	.quarantine = remote_quarantine,
	.cutover = remote_cutover,
	.forget = remote_forget,
	.audit = link_remote_audit,
	.timeline = link_remote_timeline,
	.pending = link_remote_pending,
	.decide = remote_decide,
	.close = remote_close,
};

struct link *
link_remote_new(const char *target, const char **why)
{
	struct link_remote *r = calloc(1, sizeof *r);

	*why = "out of memory";
	if (!r)
		return NULL;
	r->base.ops = &remote_ops;
	r->base.remote = true;
	r->fd = -1;
	r->detail = calloc(1, sizeof *r->detail);
	r->audit = calloc(1, sizeof *r->audit);
	r->timeline = calloc(1, sizeof *r->timeline);
	r->holds = calloc(1, sizeof *r->holds);
	if (!r->detail || !r->audit || !r->timeline || !r->holds ||
	    link_target_parse(target, &r->target, why) < 0)
		goto fail;
	r->st.state = LINK_CONNECTING;
	r->holds_stale = true;	/* the first connection lists what waits */
	snprintf(r->st.name, sizeof r->st.name, "%.31s",
		 r->target.ssh_dest[0] ? r->target.ssh_dest : "engine");
	snprintf(r->st.where, sizeof r->st.where, "%s", target);
	pthread_mutex_init(&r->mu, NULL);
	if (pipe2(r->ctl, O_CLOEXEC | O_NONBLOCK) < 0)
		goto fail;
	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(r->ctl[0]);
		close(r->ctl[1]);
		goto fail;
	}
	r->started = thread_start(&r->thread, NULL, link_thread, r) == 0;	/* signals: the UI thread's */
	if (!r->started) {
		remote_close(&r->base);
		return NULL;
	}
	return &r->base;
fail:
	free(r->detail);
	free(r->audit);
	free(r->timeline);
	free(r->holds);
	free(r);
	return NULL;
}
