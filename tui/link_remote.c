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

#include "clock.h"
#include "control.h"
#include "control_server.h"
#include "frame.h"
#include "link_dial.h"
#include "supervisor.h"

#define EVENTS_MAX	1024	/* arrived, not yet taken by the UI */
#define RESULTS_MAX	64
#define PENDING_MAX	64	/* requests sent, not yet answered */
#define OUT_MAX		(256u << 10)	/* queued lines past this: "engine busy" */
#define HELLO_MS	10000	/* the hello must come within this */
#define DETAIL_MS	250	/* a shown detail is asked for again after this */
#define HOST_MS		5000	/* the host checks, likewise */
#define CUTOVER_WAIT_MS	5000	/* a cutover's reply waits this long for acks */
#define MISFITS_MAX	3	/* deltas in a row that did not apply: whole snapshots from then on */
#define RETRY_FIRST_MS	250
#define RETRY_MAX_MS	8000

/* What a pending request becomes when its reply arrives. */
enum pending_kind { P_REQUEST, P_DETAIL, P_HOST, P_QUIET };

struct pending {
	int64_t id;
	enum pending_kind kind;
	struct link_result proto;	/* P_REQUEST: filled in from the reply */
};

struct link_remote {
	struct link base;
	/* Set at creation, then read only. */
	struct link_target target;
	int ctl[2];			/* UI → thread: queued lines, stop */
	int wake[2];			/* thread → UI */
	pthread_t thread;
	bool started;
	volatile bool stopping;

	pthread_mutex_t mu;		/* everything below */
	struct link_status st;
	int fd;				/* the thread's; -1 while down */
	pid_t ssh_pid;
	char *out;			/* queued lines */
	size_t out_len, out_off;
	int64_t next_id;
	struct pending pending[PENDING_MAX];
	size_t n_pending;
	struct supervisor_snapshot snap;	/* the latest decoded */
	struct supervisor_snapshot stage;	/* the thread's, decoded into before the swap */
	json_t *pushed;			/* the thread's: the last pushed body, deltas' base */
	bool deltas;			/* the thread's: the engine offers deltas */
	bool resync;			/* the thread's: asked again, a whole one is due */
	unsigned misfits;		/* the thread's: deltas in a row that did not apply */
	bool snap_fresh;
	struct supervisor_event events[EVENTS_MAX];	/* a ring */
	size_t ev_head, ev_n;
	int64_t last_wall;		/* the newest event taken: replays skipped */
	uint64_t last_seq;
	struct link_result results[RESULTS_MAX];
	size_t n_results;
	struct session_detail *detail;
	bool have_detail, detail_asked;
	int64_t detail_at;
	struct host_snapshot host;
	bool host_asked;
	int64_t host_at;
};

static struct link_remote *
remote(struct link *l)
{
	return (struct link_remote *)l;
}

static void
wake_ui(struct link_remote *r)
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

static int
queue_line(struct link_remote *r, json_t *req, enum pending_kind kind,
	   const struct link_result *proto, const char **why)
{
	size_t n;
	char *line;

	if (r->st.state != LINK_UP || r->fd < 0) {
		*why = "not connected";
		json_decref(req);
		return -1;
	}
	if (r->n_pending == PENDING_MAX || r->out_len > OUT_MAX) {
		*why = CONTROL_E_BUSY;
		json_decref(req);
		return -1;
	}
	json_object_set_new(req, "id", json_integer(++r->next_id));
	line = control_line(req, CONTROL_LINE_MAX + 1, &n);
	json_decref(req);
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
send_request(struct link *l, json_t *req, struct link_result *res)
{
	struct link_remote *r = remote(l);
	const char *why = NULL;
	int rc;

	if (!req) {
		res->ok = false;
		snprintf(res->error, sizeof res->error, "%s", CONTROL_E_MEMORY);
		return LINK_DONE;
	}
	pthread_mutex_lock(&r->mu);
	rc = queue_line(r, req, P_REQUEST, res, &why);
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
	struct link_remote *r = remote(l);
	struct session_row *rows = s->rows;
	size_t n, cap = s->cap;
	int rc = -1;

	pthread_mutex_lock(&r->mu);
	n = r->snap.n;
	if (n > cap && (rows = realloc(s->rows, n * sizeof *rows)))
		cap = n;
	if (rows && cap >= n && r->snap_fresh) {
		*s = r->snap;
		s->rows = rows;
		s->cap = cap;
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
	struct link_remote *r = remote(l);
	int64_t now = clock_mono_ms();
	const char *why;
	int rc = -1;

	pthread_mutex_lock(&r->mu);
	if (r->have_detail && strcmp(r->detail->row.id, id) == 0) {
		*d = *r->detail;
		rc = 0;
	}
	if (!r->detail_asked && (rc < 0 || now - r->detail_at >= DETAIL_MS) &&
	    queue_line(r, json_pack("{s:s, s:s}", "op", "detail", "session", id), P_DETAIL, NULL,
		       &why) == 0) {
		r->detail_asked = true;
		r->detail_at = now;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static void
ask_host(struct link_remote *r, bool refresh, const char *runtime)
{
	json_t *req = json_pack("{s:s, s:b}", "op", "host", "refresh", refresh);
	const char *why;

	if (req && runtime && runtime[0])
		json_object_set_new(req, "runtime", json_string(runtime));
	if (queue_line(r, req, P_HOST, NULL, &why) == 0) {
		r->host_asked = true;
		r->host_at = clock_mono_ms();
	}
}

static void
remote_host(struct link *l, struct host_snapshot *h)
{
	struct link_remote *r = remote(l);

	pthread_mutex_lock(&r->mu);
	*h = r->host;
	if (!r->host_asked && clock_mono_ms() - r->host_at >= HOST_MS)
		ask_host(r, false, NULL);
	pthread_mutex_unlock(&r->mu);
}

static void
remote_host_refresh(struct link *l, const char *runtime)
{
	struct link_remote *r = remote(l);

	pthread_mutex_lock(&r->mu);
	ask_host(r, true, runtime);
	pthread_mutex_unlock(&r->mu);
}

static size_t
remote_events(struct link *l, struct supervisor_event *ev, size_t cap)
{
	struct link_remote *r = remote(l);
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
	struct link_remote *r = remote(l);
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
	return remote(l)->wake[0];
}

static void
remote_status(struct link *l, struct link_status *s)
{
	struct link_remote *r = remote(l);

	pthread_mutex_lock(&r->mu);
	*s = r->st;
	pthread_mutex_unlock(&r->mu);
}

static int
remote_start(struct link *l, const char *path, struct link_result *res)
{
	res->req = LINK_REQ_START;
	snprintf(res->path, sizeof res->path, "%s", path);
	return send_request(l, json_pack("{s:s, s:s}", "op", "start", "path", path), res);
}

static int
remote_stop(struct link *l, const char *id, struct link_result *res)
{
	res->req = LINK_REQ_STOP;
	snprintf(res->session, sizeof res->session, "%s", id);
	return send_request(l, json_pack("{s:s, s:s}", "op", "stop", "session", id), res);
}

static int
remote_stop_all(struct link *l, struct link_result *res)
{
	res->req = LINK_REQ_STOP_ALL;
	return send_request(l, json_pack("{s:s}", "op", "stop-all"), res);
}

static json_t *
ids_json(const char *const *ids, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(ids[i]));
	return a;
}

static int
remote_cutover(struct link *l, enum cutover_op op, const char *tool, const char *const *ids,
	       size_t n, struct link_result *res)
{
	json_t *req = json_pack("{s:s, s:I}", "op", cutover_op_id(op), "wait_ms",
				(json_int_t)CUTOVER_WAIT_MS);

	res->req = LINK_REQ_CUTOVER;
	res->op = op;
	snprintf(res->tool, sizeof res->tool, "%s", tool ? tool : "");
	if (req && (op == CUTOVER_REVOKE || op == CUTOVER_RESTORE)) {
		json_object_set_new(req, "tool", json_string(tool));
		if (ids)
			json_object_set_new(req, "sessions", ids_json(ids, n));
		else
			json_object_set_new(req, "all", json_true());
	}
	return send_request(l, req, res);
}

static int
remote_forget(struct link *l, const char *id, struct link_result *res)
{
	res->req = LINK_REQ_FORGET;
	snprintf(res->session, sizeof res->session, "%s", id);
	return send_request(l, json_pack("{s:s, s:[s]}", "op", "forget", "sessions", id), res);
}

/* ---- frames from the engine (the link's thread) ---- */

static void
push_result(struct link_remote *r, const struct link_result *res)
{
	if (r->n_results == RESULTS_MAX)
		memmove(r->results, r->results + 1, --r->n_results * sizeof *res);
	r->results[r->n_results++] = *res;
}

/* An event, unless a reconnect's replay already gave it. */
static void
push_event(struct link_remote *r, const json_t *body, bool replayed)
{
	struct supervisor_event e;

	if (control_event_from_json(body, &e) < 0)
		return;
	e.replayed = replayed;
	if (e.wall_ms < r->last_wall || (e.wall_ms == r->last_wall && e.seq <= r->last_seq))
		return;
	r->last_wall = e.wall_ms;
	r->last_seq = e.seq;
	if (r->ev_n == EVENTS_MAX) {
		r->ev_head = (r->ev_head + 1) % EVENTS_MAX;
		r->ev_n--;
		r->st.gaps++;
	}
	r->events[(r->ev_head + r->ev_n++) % EVENTS_MAX] = e;
}

/* Decoded off the lock (a big engine's snapshot is not small), swapped under it. */
static void
take_snapshot(struct link_remote *r, const json_t *body)
{
	struct supervisor_snapshot t;

	if (control_snapshot_from_json(body, &r->stage) < 0)
		return;
	pthread_mutex_lock(&r->mu);
	t = r->snap;
	r->snap = r->stage;
	r->stage = t;
	r->snap_fresh = true;
	pthread_mutex_unlock(&r->mu);
}

/* A whole pushed snapshot: shown, and kept as the next delta's base. */
static void
keep_pushed(struct link_remote *r, const json_t *body)
{
	take_snapshot(r, body);
	json_decref(r->pushed);
	r->pushed = r->deltas ? json_incref((json_t *)body) : NULL;
	r->resync = false;
}

static void subscribe_events(struct link_remote *r);

/*
 * A pushed delta onto the last pushed snapshot. One that does not apply
 * (not our base, malformed) is not shown: the base is dropped and the
 * subscription asked again, whose answer starts with a whole snapshot.
 * After MISFITS_MAX in a row the engine's deltas are not trusted again
 * on this connection: it is asked for whole snapshots only.
 */
static void
take_delta(struct link_remote *r, const json_t *delta)
{
	if (r->pushed && control_snapshot_apply(r->pushed, delta) == 0) {
		r->misfits = 0;
		take_snapshot(r, r->pushed);
		return;
	}
	json_decref(r->pushed);
	r->pushed = NULL;
	if (r->resync)		/* the deltas sent before the engine read our request */
		return;
	r->resync = true;
	if (++r->misfits >= MISFITS_MAX)
		r->deltas = false;
	pthread_mutex_lock(&r->mu);
	r->st.gaps++;
	subscribe_events(r);
	pthread_mutex_unlock(&r->mu);
}

/* A request's reply, as the result the console shows. */
static void
reply_result(struct link_remote *r, struct link_result *res, const json_t *f)
{
	res->ok = json_is_true(json_object_get(f, "ok"));
	if (!res->ok) {
		const char *e = json_string_value(json_object_get(f, "error"));
		const char *why = json_string_value(json_object_get(f, "reason"));

		snprintf(res->error, sizeof res->error, "engine %s: %.60s%s%.80s", r->st.name,
			 e ? e : "refused", why ? ": " : "", why ? why : "");
	} else {
		const char *id = json_string_value(json_object_get(f, "session"));

		if (res->req == LINK_REQ_START && id)
			snprintf(res->session, sizeof res->session, "%s", id);
		res->revision = json_integer_value(json_object_get(f, "revision"));
		res->targets = (size_t)json_integer_value(json_object_get(f, res->req == LINK_REQ_STOP_ALL
									   ? "stopped" : "targets"));
		res->acks = json_array_size(json_object_get(f, "acks"));
		res->pending = json_array_size(json_object_get(f, "pending"));
	}
	push_result(r, res);
}

static void
take_reply(struct link_remote *r, const json_t *f)
{
	int64_t id = json_integer_value(json_object_get(f, "id"));
	struct pending p;
	size_t i;

	for (i = 0; i < r->n_pending && r->pending[i].id != id; i++)
		;
	if (i == r->n_pending)
		return;
	p = r->pending[i];
	memmove(r->pending + i, r->pending + i + 1, (--r->n_pending - i) * sizeof p);
	switch (p.kind) {
	case P_REQUEST:
		reply_result(r, &p.proto, f);
		break;
	case P_DETAIL:
		r->detail_asked = false;
		r->have_detail = json_is_true(json_object_get(f, "ok")) &&
				 control_detail_from_json(json_object_get(f, "detail"), r->detail) == 0;
		break;
	case P_HOST:
		r->host_asked = false;
		if (json_is_true(json_object_get(f, "ok")))
			control_host_from_json(json_object_get(f, "host"), &r->host);
		break;
	case P_QUIET: {
		const json_t *ev = json_object_get(f, "events"), *e;
		size_t k;

		json_array_foreach(ev, k, e)
			push_event(r, e, true);
		break;
	}
	}
}

/* One line from the engine. -1: it said goodbye. */
static int
take_frame(struct link_remote *r, const char *line, size_t len)
{
	json_t *f = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const json_t *body = json_object_get(f, "snapshot");
	bool pushed = json_object_get(f, "seq") != NULL;
	int rc = 0;

	if (!json_is_object(f)) {
		json_decref(f);
		return 0;
	}
	if (body && pushed)
		keep_pushed(r, body);
	else if (body && json_object_get(f, "id"))
		take_snapshot(r, body);
	else if (pushed && (body = json_object_get(f, "snapshot_delta")))
		take_delta(r, body);
	pthread_mutex_lock(&r->mu);
	r->st.gaps += (uint64_t)json_integer_value(json_object_get(f, "gap"));
	if (pushed && (body = json_object_get(f, "event")))
		push_event(r, body, false);
	else if (!pushed && json_object_get(f, "id"))
		take_reply(r, f);
	else if (!pushed && json_is_false(json_object_get(f, "ok"))) {
		snprintf(r->st.why, sizeof r->st.why, "the engine closed: %.100s",
			 json_string_value(json_object_get(f, "error")) ?: "no reason");
		rc = -1;
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(f);
	wake_ui(r);
	return rc;
}

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
			push_result(r, &res);
		}
	r->n_pending = 0;
	r->out_len = r->out_off = 0;
	r->detail_asked = r->host_asked = false;
	r->fd = -1;
	r->st.attempts++;
	r->st.state = LINK_LOST;
	r->st.retry_ms = clock_mono_ms() + backoff_ms(r->st.attempts);
	if (why && why[0])
		snprintf(r->st.why, sizeof r->st.why, "%s", why);
	pthread_mutex_unlock(&r->mu);
	wake_ui(r);
}

/* The hello: the engine's name and our role, or why it will not talk to us. */
static int
take_hello(struct link_remote *r, const char *line, size_t len, char *why, size_t cap)
{
	json_t *h = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *name = json_string_value(json_object_get(h, "engine"));
	const char *role = json_string_value(json_object_get(h, "role"));
	int rc = -1;

	if (json_integer_value(json_object_get(h, "airlock")) != CONTROL_VERSION)
		snprintf(why, cap, "the engine speaks another protocol");
	else if (json_is_false(json_object_get(h, "ok")))
		snprintf(why, cap, "the engine refused this console: %.80s",
			 json_string_value(json_object_get(h, "error")) ?: "no reason");
	else {
		pthread_mutex_lock(&r->mu);
		snprintf(r->st.name, sizeof r->st.name, "%s", name ? name : "engine");
		snprintf(r->st.role, sizeof r->st.role, "%s", role ? role : "view");
		pthread_mutex_unlock(&r->mu);
		r->deltas = json_is_true(json_object_get(h, "deltas"));
		rc = 0;
	}
	json_decref(h);
	return rc;
}

/* Events and snapshots pushed: as deltas where the engine offers them. Under mu. */
static void
subscribe_events(struct link_remote *r)
{
	json_t *req = json_pack("{s:s, s:b, s:b}", "op", "events", "follow", 1, "snapshots", 1);
	const char *why;

	if (req && r->deltas)	/* an engine that does not offer them refuses the key */
		json_object_set_new(req, "deltas", json_true());
	queue_line(r, req, P_QUIET, NULL, &why);
}

/* After the hello: who we are, and what we follow. */
static void
subscribe(struct link_remote *r)
{
	const char *why;

	json_decref(r->pushed);		/* a new connection: no base yet */
	r->pushed = NULL;
	r->resync = false;
	r->misfits = 0;
	pthread_mutex_lock(&r->mu);
	r->st.state = LINK_UP;
	r->st.why[0] = '\0';
	queue_line(r, json_pack("{s:s, s:s}", "op", "hello", "client", "console"), P_QUIET, NULL,
		   &why);
	subscribe_events(r);
	queue_line(r, json_pack("{s:s}", "op", "snapshot"), P_QUIET, NULL, &why);
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

/* One connection, from dial to loss. */
static void
session(struct link_remote *r)
{
	char why[LINK_TEXT_MAX] = "", buf[65536];
	int64_t hello_by = clock_mono_ms() + HELLO_MS;
	struct linebuf in;
	bool hello = false;
	const char *line;
	size_t len;
	pid_t pid;
	ssize_t n;
	int fd;

	pthread_mutex_lock(&r->mu);
	r->st.state = LINK_CONNECTING;
	pthread_mutex_unlock(&r->mu);
	wake_ui(r);
	fd = link_dial(&r->target, &pid, why, sizeof why);
	if (fd < 0 || linebuf_init(&in, CONTROL_FRAME_MAX, 2 * (size_t)CONTROL_FRAME_MAX) < 0) {
		if (fd >= 0)
			close(fd);
		went_down(r, why[0] ? why : "out of memory");
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_lock(&r->mu);
	r->fd = fd;
	r->ssh_pid = pid;
	pthread_mutex_unlock(&r->mu);
	snprintf(why, sizeof why, "the engine closed the connection");
	while (!r->stopping) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = r->ctl[0], .events = POLLIN } };

		if (out_waiting(r))
			p[0].events |= POLLOUT;
		if (poll(p, 2, hello ? 1000 : 250) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN)
			drain_fd(r->ctl[0]);
		if (!hello && clock_mono_ms() > hello_by) {
			snprintf(why, sizeof why, "no hello from the engine");
			break;
		}
		if (p[0].revents & POLLOUT && flush_out(r, fd) < 0)
			break;
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (hello && flush_out(r, fd) < 0)
				break;
			continue;
		}
		n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0 || linebuf_append(&in, buf, (size_t)n) < 0) {
			if (n > 0)
				snprintf(why, sizeof why, "a frame from the engine was too long");
			break;
		}
		while (linebuf_next(&in, &line, &len) == 1) {
			if (!hello) {
				if (take_hello(r, line, len, why, sizeof why) < 0)
					goto down;
				hello = true;
				subscribe(r);
				continue;
			}
			if (take_frame(r, line, len) < 0) {
				why[0] = '\0';	/* take_frame said why */
				goto down;
			}
			pthread_mutex_lock(&r->mu);
			r->st.attempts = 0;
			pthread_mutex_unlock(&r->mu);
		}
		if (hello && flush_out(r, fd) < 0)
			break;
	}
down:
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
	struct link_remote *r = remote(l);

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
	.cutover = remote_cutover,
	.forget = remote_forget,
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
	if (!r->detail || link_target_parse(target, &r->target, why) < 0) {
		free(r->detail);
		free(r);
		return NULL;
	}
	r->st.state = LINK_CONNECTING;
	snprintf(r->st.name, sizeof r->st.name, "%.31s",
		 r->target.ssh_dest[0] ? r->target.ssh_dest : "engine");
	snprintf(r->st.where, sizeof r->st.where, "%s", target);
	pthread_mutex_init(&r->mu, NULL);
	if (pipe2(r->ctl, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(r->detail);
		free(r);
		return NULL;
	}
	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(r->ctl[0]);
		close(r->ctl[1]);
		free(r->detail);
		free(r);
		return NULL;
	}
	r->started = pthread_create(&r->thread, NULL, link_thread, r) == 0;
	if (!r->started) {
		remote_close(&r->base);
		return NULL;
	}
	return &r->base;
}
