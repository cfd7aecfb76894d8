#include "control_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "frame.h"

#define READ_CHUNK	16384
#define READS_PER_ROUND	4	/* chunks read from one client per round */
#define LINES_PER_ROUND	64	/* requests served for one client per round */
#define ACCEPTS_PER_ROUND 16
#define EVENTS_PER_ROUND 1024
#define PEER_GROUPS_MAX	65536	/* NGROUPS_MAX on Linux */

/* ---- the socket file ---- */

int
control_socket_default(char *out, size_t cap, struct al_err *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(out, cap, "/run/airlock/engine.sock");
	else if (xdg && xdg[0] == '/')
		snprintf(out, cap, "%s/airlock/engine.sock", xdg);
	else
		return al_fail(err, "no --socket given and XDG_RUNTIME_DIR is not set");
	if (strlen(out) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return al_fail(err, "socket path too long: %s", out);
	return 0;
}

static int
own_dir(const char *dir, struct al_err *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
		return al_fail(err, "socket directory %s: not a directory (or a symlink)", dir);
	if (st.st_uid != geteuid())
		return al_fail(err, "socket directory %s: not owned by uid %u", dir,
			       (unsigned)geteuid());
	return 0;
}

int
control_socket_dir(const char *dir, struct control_group group, struct al_err *err)
{
	if (mkdir(dir, 0750) < 0) {
		if (errno != EEXIST)
			return al_fail(err, "socket directory %s: %s", dir, strerror(errno));
		return own_dir(dir, err);
	}
	if (own_dir(dir, err) < 0)
		return -1;
	if (group.present && chown(dir, (uid_t)-1, group.gid) < 0)
		return al_fail(err, "socket directory %s: chown: %s", dir, strerror(errno));
	if (chmod(dir, 0750) < 0)
		return al_fail(err, "socket directory %s: chmod: %s", dir, strerror(errno));
	return 0;
}

static int
fill_addr(struct sockaddr_un *a, const char *path, struct al_err *err)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path)
		return al_fail(err, "socket path too long: %s", path);
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

/* 1: something answers on path; 0: stale (refused); -1: cannot tell. */
static int
probe(const struct sockaddr_un *a, struct al_err *err)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), rc;

	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	rc = connect(fd, (const struct sockaddr *)a, sizeof *a);
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS)
		rc = 1;		/* connected, or a full backlog: alive either way */
	else if (errno == ECONNREFUSED)
		rc = 0;
	else
		rc = al_fail(err, "socket %s: connect: %s", a->sun_path, strerror(errno));
	close(fd);
	return rc;
}

/* The path before bind: absent, or a stale socket of ours (removed). */
static int
clear_path(const struct sockaddr_un *a, struct al_err *err)
{
	const char *path = a->sun_path;
	struct stat st;
	int rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : al_fail(err, "socket %s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return al_fail(err, "socket %s: is a symlink", path);
	if (st.st_uid != geteuid())
		return al_fail(err, "socket %s: not owned by uid %u", path, (unsigned)geteuid());
	if (!S_ISSOCK(st.st_mode))
		return al_fail(err, "socket %s: not a socket", path);
	rc = probe(a, err);
	if (rc == 1) {
		al_fail(err, "another engine answers on %s", path);
		return CONTROL_LISTEN_LIVE;
	}
	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		return al_fail(err, "socket %s: cannot remove the stale socket: %s", path,
			       strerror(errno));
	return rc;
}

static int
bind_path(int fd, const struct sockaddr_un *a, struct control_group group, struct al_err *err)
{
	mode_t old = umask(0117);	/* the file is made 0660 */
	int rc = bind(fd, (const struct sockaddr *)a, sizeof *a);

	umask(old);
	if (rc < 0)
		return al_fail(err, "socket %s: bind: %s", a->sun_path, strerror(errno));
	if (group.present && chown(a->sun_path, (uid_t)-1, group.gid) < 0)
		return al_fail(err, "socket %s: chown: %s", a->sun_path, strerror(errno));
	if (chmod(a->sun_path, 0660) < 0)
		return al_fail(err, "socket %s: chmod: %s", a->sun_path, strerror(errno));
	if (listen(fd, 64) < 0)
		return al_fail(err, "socket %s: listen: %s", a->sun_path, strerror(errno));
	return 0;
}

int
control_listen(const char *path, struct control_group group, int *out, struct al_err *err)
{
	struct sockaddr_un a;
	int fd, rc;

	*out = -1;
	if (fill_addr(&a, path, err) < 0)
		return -1;
	rc = clear_path(&a, err);
	if (rc < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	if (bind_path(fd, &a, group, err) < 0) {
		close(fd);
		return -1;
	}
	*out = fd;
	return 0;
}

int
control_connect(const char *path, struct al_err *err)
{
	struct timeval timeout = { .tv_sec = CONTROL_CONNECT_TIMEOUT_S };
	struct sockaddr_un a;
	int fd;

	if (fill_addr(&a, path, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return al_fail(err, "socket: %s", strerror(errno));
	/* Bounds the connect (a full backlog) and every send after it. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
	if (connect(fd, (const struct sockaddr *)&a, sizeof a) < 0) {
		al_fail(err, "cannot reach the engine at %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the server's state ---- */

struct outq {
	char *buf;
	size_t off, len, alloc;		/* unsent bytes: buf[off, off + len) */
};

struct client {
	int fd;
	unsigned serial;		/* "client N" in the log */
	pid_t pid;
	uid_t uid;
	char user[64];
	enum control_role role;
	struct linebuf in;
	struct outq out;
	bool follow, snapshots;
	uint64_t seq, gap, drops_in_row;
	bool more;			/* complete lines left unserved this round */
	bool eof;			/* nothing more to read */
	bool input_done;		/* the end of its input was judged */
	bool dead;			/* close at the end of the round */
};

/* A revoke or restore whose reply waits for its sessions' acks. */
struct pending {
	unsigned client;		/* serial */
	int64_t id;
	enum cutover_op op;
	char tool[SNAP_NAME_MAX];
	int64_t revision;
	size_t targets, n;
	char ids[SUPERVISOR_SESSIONS_MAX][SNAP_ID_MAX];
	enum { WAITING, ACKED, ENDED } state[SUPERVISOR_SESSIONS_MAX];
	enum cutover_result result[SUPERVISOR_SESSIONS_MAX];
	int64_t waited_us[SUPERVISOR_SESSIONS_MAX];
	int64_t deadline_ms;
};

/* An inline config: the supervisor borrows it until the session is forgotten. */
struct owned {
	char id[SNAP_ID_MAX];
	struct airlock_config cfg;
};

#define OWNED_MAX (2 * SUPERVISOR_SESSIONS_MAX)

struct control_server {
	struct control_server_options o;
	int listen_fd;
	struct client *clients[CONTROL_CLIENTS_MAX];
	unsigned serials;
	struct supervisor_snapshot snap;
	bool snap_ok;
	struct supervisor_event recent[CONTROL_RECENT_MAX];
	size_t n_recent, recent_next;
	struct pending *pending[CONTROL_PENDING_MAX];
	struct owned *owned[OWNED_MAX];
	struct control_counts counts;
	int64_t snap_pushed_ms;		/* pushed snapshots are rate-limited */
	bool snap_due;
};

#define SNAPSHOT_PUSH_MS 250	/* at most four pushed snapshots a second */

static void __attribute__((format(printf, 2, 3)))
say(struct control_server *cs, const char *fmt, ...)
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

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Hooks where the author of a request is known. The audit entries of
 * refused peers and authored requests are written here once the
 * supervisor's audit interface takes an author; today they go to the log.
 */
static void
audit_refused_peer(struct control_server *cs, pid_t pid, uid_t uid, const char *reason)
{
	say(cs, "client refused: uid %u pid %ld: %s", (unsigned)uid, (long)pid, reason);
}

static void
audit_authored(struct control_server *cs, const struct client *c,
	       const struct control_request *r, const char *outcome)
{
	say(cs, "client %u (uid %u %s): %s%s%s%s%s: %s", c->serial, (unsigned)c->uid, c->user,
	    control_op_name(r->op), r->tool[0] ? " " : "", r->tool,
	    r->session[0] ? " " : "", r->session, outcome);
}

/* ---- the outgoing queue ---- */

static int
outq_reserve(struct outq *q, size_t n)
{
	size_t want;
	char *p;

	if (q->off > 0 && q->off + q->len + n > q->alloc) {
		memmove(q->buf, q->buf + q->off, q->len);
		q->off = 0;
	}
	if (q->len + n <= q->alloc)
		return 0;
	want = q->alloc ? q->alloc : 4096;
	while (want < q->len + n)
		want *= 2;
	p = realloc(q->buf, want);
	if (!p)
		return -1;
	q->buf = p;
	q->alloc = want;
	return 0;
}

static void
kill_client(struct control_server *cs, struct client *c, const char *reason)
{
	if (c->dead)
		return;
	c->dead = true;
	say(cs, "client %u (uid %u %s) disconnected: %s", c->serial, (unsigned)c->uid, c->user,
	    reason);
}

/* Queue one frame; past the hard bound the client goes. */
static void
enqueue(struct control_server *cs, struct client *c, const char *line, size_t n)
{
	if (c->dead)
		return;
	if (c->out.len + n > CONTROL_QUEUE_HARD || outq_reserve(&c->out, n) < 0) {
		kill_client(cs, c, CONTROL_E_SLOW);
		return;
	}
	memcpy(c->out.buf + c->out.off + c->out.len, line, n);
	c->out.len += n;
}

static void
flush(struct control_server *cs, struct client *c)
{
	ssize_t n;

	while (!c->dead && c->out.len > 0) {
		n = send(c->fd, c->out.buf + c->out.off, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			kill_client(cs, c, "gone");
			return;
		}
		c->out.off += (size_t)n;
		c->out.len -= (size_t)n;
		c->drops_in_row = 0;
	}
	c->out.off = 0;
}

/* A reply: always queued (a client that never reads meets the hard bound). */
static void
reply(struct control_server *cs, struct client *c, int64_t id, json_t *v)
{
	size_t n;
	char *line = control_line(v, CONTROL_FRAME_MAX, &n);

	if (!line) {
		json_t *e = control_error(id, v ? CONTROL_E_BUSY : CONTROL_E_MEMORY);

		line = control_line(e, CONTROL_FRAME_MAX, &n);
		json_decref(e);
	}
	if (line)
		enqueue(cs, c, line, n);
	else
		kill_client(cs, c, CONTROL_E_MEMORY);
	free(line);
	json_decref(v);
}

static void
reply_error(struct control_server *cs, struct client *c, int64_t id, const char *error)
{
	reply(cs, c, id, control_error(id, error));
}

/* An error with the engine's reason (a config or cutover refusal: operator names only). */
static void
reply_reason(struct control_server *cs, struct client *c, int64_t id, const char *error,
	     const char *reason)
{
	json_t *e = control_error(id, error);

	if (e)
		json_object_set_new(e, "reason", json_string(reason));
	reply(cs, c, id, e);
}

/* A pushed frame: dropped and counted when the client is behind. */
static void
push(struct control_server *cs, struct client *c, const char *key, json_t *body)
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
			kill_client(cs, c, CONTROL_E_SLOW);
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
		if (cs->owned[i] && !in_snapshot(&cs->snap, cs->owned[i]->id)) {
			config_free(&cs->owned[i]->cfg);
			free(cs->owned[i]);
			cs->owned[i] = NULL;
		}
}

/* 1: changed, 0: live parts only, -1: out of memory. */
static int
refresh(struct control_server *cs)
{
	int rc = supervisor_snapshot(cs->o.sup, &cs->snap);

	cs->snap_ok = rc >= 0;
	if (rc >= 0)
		release_owned(cs);
	return rc;
}

/* ---- pending cutovers ---- */

static json_t *
pending_reply(const struct pending *p)
{
	json_t *r = control_ok(p->id), *acks = json_array(), *waiting = json_array(),
	       *ended = json_array();
	size_t i;

	for (i = 0; r && acks && waiting && ended && i < p->n; i++) {
		if (p->state[i] == ACKED)
			json_array_append_new(acks, json_pack("{s:s, s:s, s:I}", "session", p->ids[i],
							      "result", cutover_result_id(p->result[i]),
							      "waited_us", (json_int_t)p->waited_us[i]));
		else
			json_array_append_new(p->state[i] == ENDED ? ended : waiting,
					      json_string(p->ids[i]));
	}
	if (r) {
		json_object_set_new(r, "revision", json_integer(p->revision));
		json_object_set_new(r, "targets", json_integer((json_int_t)p->targets));
		json_object_set_new(r, "acks", acks);
		json_object_set_new(r, "pending", waiting);
		json_object_set_new(r, "ended", ended);
		return r;
	}
	json_decref(acks);
	json_decref(waiting);
	json_decref(ended);
	return NULL;
}

static struct client *
client_by_serial(struct control_server *cs, unsigned serial)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && cs->clients[i]->serial == serial && !cs->clients[i]->dead)
			return cs->clients[i];
	return NULL;
}

static bool
pending_done(const struct pending *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->state[i] == WAITING)
			return false;
	return true;
}

static void
pending_finish(struct control_server *cs, size_t k)
{
	struct pending *p = cs->pending[k];
	struct client *c = client_by_serial(cs, p->client);

	if (c)
		reply(cs, c, p->id, pending_reply(p));
	free(p);
	cs->pending[k] = NULL;
}

/* An ack or an end for one of the sessions a pending cutover waits on. */
static void
pending_event(struct control_server *cs, const struct supervisor_event *e)
{
	size_t k, i;

	for (k = 0; k < CONTROL_PENDING_MAX; k++) {
		struct pending *p = cs->pending[k];
		bool ack = e->kind == SUPERVISOR_EVENT_CUTOVER_ACK && p && e->revision == p->revision;

		if (!p || !(ack || e->kind == SUPERVISOR_EVENT_END))
			continue;
		for (i = 0; i < p->n; i++) {
			if (p->state[i] != WAITING || strcmp(p->ids[i], e->session) != 0)
				continue;
			p->state[i] = ack ? ACKED : ENDED;
			p->result[i] = e->result;
			p->waited_us[i] = e->waited_us;
		}
		if (pending_done(p))
			pending_finish(cs, k);
	}
}

static void
pending_expire(struct control_server *cs)
{
	int64_t t = now_ms();
	size_t k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (cs->pending[k] && (t >= cs->pending[k]->deadline_ms ||
				       !client_by_serial(cs, cs->pending[k]->client)))
			pending_finish(cs, k);
}

static int
pending_timeout(const struct control_server *cs, int timeout_ms)
{
	int64_t t = now_ms();
	size_t k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (cs->pending[k] && cs->pending[k]->deadline_ms - t < timeout_ms)
			timeout_ms = cs->pending[k]->deadline_ms <= t
				     ? 0 : (int)(cs->pending[k]->deadline_ms - t);
	return timeout_ms;
}

/* ---- events from the supervisor ---- */

static void
log_event(struct control_server *cs, const struct supervisor_event *e)
{
	switch (e->kind) {
	case SUPERVISOR_EVENT_END:
		say(cs, "session %s ended %s%s%s", e->session, session_end_id(e->end),
		    e->check[0] ? ", refused by " : "", e->check);
		break;
	case SUPERVISOR_EVENT_CUTOVER:
		cs->counts.cutovers++;
		say(cs, "cutover %s %s revision %lld on %ld sessions", cutover_op_id(e->op), e->tool,
		    (long long)e->revision, e->count);
		break;
	case SUPERVISOR_EVENT_LEASE_FAILED:
		cs->counts.lease_failures++;
		say(cs, "session %s lease failed: %s", e->session, e->reason);
		break;
	case SUPERVISOR_EVENT_REAPER:
	case SUPERVISOR_EVENT_SWEEP:
	case SUPERVISOR_EVENT_AUDIT_REFUSED:
	case SUPERVISOR_EVENT_ADMISSION_REFUSED:
		say(cs, "%s %s%s%s", event_kind_id(e->kind), e->session, e->session[0] ? ": " : "",
		    e->reason);
		break;
	default:
		break;
	}
}

static void
remember(struct control_server *cs, const struct supervisor_event *e)
{
	cs->recent[cs->recent_next] = *e;
	cs->recent_next = (cs->recent_next + 1) % CONTROL_RECENT_MAX;
	if (cs->n_recent < CONTROL_RECENT_MAX)
		cs->n_recent++;
}

static void
fan_out_event(struct control_server *cs, const struct supervisor_event *e)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];

		if (c && !c->dead && c->follow)
			push(cs, c, "event", control_event_json(e));
	}
}

static void
fan_out_snapshot(struct control_server *cs)
{
	bool wanted = false;
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		wanted |= cs->clients[i] && !cs->clients[i]->dead && cs->clients[i]->snapshots;
	if (!wanted)
		return;
	if (now_ms() - cs->snap_pushed_ms < SNAPSHOT_PUSH_MS) {
		cs->snap_due = true;
		return;
	}
	cs->snap_due = false;
	if (refresh(cs) != 1)
		return;
	cs->snap_pushed_ms = now_ms();
	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];

		if (c && !c->dead && c->snapshots)
			push(cs, c, "snapshot", control_snapshot_json(&cs->snap));
	}
}

static void
drain_events(struct control_server *cs)
{
	struct supervisor_event ev[64];
	size_t n, i, total = 0;

	while (total < EVENTS_PER_ROUND && (n = supervisor_events(cs->o.sup, ev, 64)) > 0) {
		for (i = 0; i < n; i++) {
			log_event(cs, &ev[i]);
			remember(cs, &ev[i]);
			pending_event(cs, &ev[i]);
			fan_out_event(cs, &ev[i]);
		}
		total += n;
	}
	fan_out_snapshot(cs);
}

/* ---- the ops ---- */

static void
op_hello(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *h = control_hello(cs->o.engine, c->role, c->uid, c->user), *ok = control_ok(r->id);

	if (h && ok)
		json_object_update(ok, h);
	json_decref(h);
	reply(cs, c, r->id, h ? ok : (json_decref(ok), NULL));
}

static void
op_snapshot(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;

	if (refresh(cs) < 0) {
		reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	ok = control_ok(r->id);
	if (ok && json_object_set_new(ok, "snapshot", control_snapshot_json(&cs->snap)) < 0)
		ok = (json_decref(ok), NULL);
	reply(cs, c, r->id, ok);
}

static void
op_detail(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct session_detail *d = calloc(1, sizeof *d);
	json_t *ok;

	if (!d) {
		reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	if (supervisor_detail(cs->o.sup, r->session, d) < 0) {
		free(d);
		reply_error(cs, c, r->id, CONTROL_E_SESSION);
		return;
	}
	ok = control_ok(r->id);
	if (ok && json_object_set_new(ok, "detail", control_detail_json(d)) < 0)
		ok = (json_decref(ok), NULL);
	free(d);
	reply(cs, c, r->id, ok);
}

static json_t *
recent_json(const struct control_server *cs)
{
	json_t *a = json_array();
	size_t i, start = (cs->recent_next + CONTROL_RECENT_MAX - cs->n_recent) % CONTROL_RECENT_MAX;

	for (i = 0; a && i < cs->n_recent; i++)
		if (json_array_append_new(a, control_event_json(
				&cs->recent[(start + i) % CONTROL_RECENT_MAX])) < 0)
			a = (json_decref(a), NULL);
	return a;
}

static void
op_events(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok = control_ok(r->id);

	if (ok && json_object_set_new(ok, "events", recent_json(cs)) < 0)
		ok = (json_decref(ok), NULL);
	c->follow = r->follow;
	c->snapshots = r->snapshots;
	reply(cs, c, r->id, ok);
	if (c->snapshots && refresh(cs) >= 0)
		push(cs, c, "snapshot", control_snapshot_json(&cs->snap));
}

static void
op_host(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct host_snapshot *h = calloc(1, sizeof *h);
	json_t *ok;

	if (!h) {
		reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	if (r->refresh)
		supervisor_host_refresh(cs->o.sup, r->runtime[0] ? r->runtime : cs->o.runtime);
	supervisor_host(cs->o.sup, h);
	ok = control_ok(r->id);
	if (ok && json_object_set_new(ok, "host", control_host_json(h)) < 0)
		ok = (json_decref(ok), NULL);
	free(h);
	reply(cs, c, r->id, ok);
}

/* The resident set from /proc/self/statm (pages); 0 when unreadable. */
static uint64_t
rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static size_t
n_clients(const struct control_server *cs)
{
	size_t i, n = 0;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		n += cs->clients[i] && !cs->clients[i]->dead;
	return n;
}

static void
op_metrics(struct control_server *cs, struct client *c, const struct control_request *r)
{
	char *text;
	json_t *ok;

	if (refresh(cs) < 0) {
		reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	cs->counts.clients = n_clients(cs);
	cs->counts.rss_bytes = rss_bytes();
	text = control_metrics_text(&cs->snap, &cs->counts);
	ok = text ? control_ok(r->id) : NULL;
	if (ok && json_object_set_new(ok, "text", json_string(text)) < 0)
		ok = (json_decref(ok), NULL);
	free(text);
	reply(cs, c, r->id, ok);
}

static int
start_inline(struct control_server *cs, const json_t *config, char id[SNAP_ID_MAX],
	     struct al_err *err)
{
	struct owned *o = NULL;
	size_t i;

	for (i = 0; i < OWNED_MAX && cs->owned[i]; i++)
		;
	if (i == OWNED_MAX)
		return al_fail(err, "too many inline configs held");
	o = calloc(1, sizeof *o);
	if (!o)
		return al_fail(err, "out of memory");
	config_init(&o->cfg);
	if (config_load_json(&o->cfg, config, config_host_cores(), err) < 0 ||
	    supervisor_start(cs->o.sup, &o->cfg, id, err) < 0) {
		config_free(&o->cfg);
		free(o);
		return -1;
	}
	snprintf(o->id, sizeof o->id, "%s", id);
	cs->owned[i] = o;
	return 0;
}

static void
op_start(struct control_server *cs, struct client *c, const struct control_request *r)
{
	char id[SNAP_ID_MAX];
	struct al_err err;
	json_t *ok;
	int rc = r->config ? start_inline(cs, r->config, id, &err)
			   : supervisor_start_file(cs->o.sup, r->path, id, &err);

	if (rc < 0) {
		audit_authored(cs, c, r, CONTROL_E_CONFIG);
		reply_reason(cs, c, r->id, CONTROL_E_CONFIG, err.msg);
		return;
	}
	say(cs, "session %s started by client %u (uid %u %s)%s%s", id, c->serial,
	    (unsigned)c->uid, c->user, r->config ? ", inline config" : ", config ",
	    r->config ? "" : r->path);
	ok = control_ok(r->id);
	if (ok)
		json_object_set_new(ok, "session", json_string(id));
	reply(cs, c, r->id, ok);
}

static void
op_stop(struct control_server *cs, struct client *c, const struct control_request *r)
{
	if (supervisor_stop_session(cs->o.sup, r->session) < 0) {
		reply_error(cs, c, r->id, CONTROL_E_SESSION);
		return;
	}
	audit_authored(cs, c, r, "stopping");
	reply(cs, c, r->id, control_ok(r->id));
}

static void
op_stop_all(struct control_server *cs, struct client *c, const struct control_request *r)
{
	size_t i, n = 0;
	json_t *ok;

	if (refresh(cs) < 0) {
		reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	for (i = 0; i < cs->snap.n; i++)
		if (cs->snap.rows[i].state != SESSION_STATE_ENDED &&
		    supervisor_stop_session(cs->o.sup, cs->snap.rows[i].id) == 0)
			n++;
	audit_authored(cs, c, r, "stopping");
	ok = control_ok(r->id);
	if (ok)
		json_object_set_new(ok, "stopped", json_integer((json_int_t)n));
	reply(cs, c, r->id, ok);
}

static void
op_forget(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok = control_ok(r->id), *done = json_array(), *kept = json_array();
	size_t i;

	if (r->n_ids == 0 && refresh(cs) >= 0) {
		for (i = 0; i < cs->snap.n; i++)
			if (cs->snap.rows[i].state == SESSION_STATE_ENDED &&
			    supervisor_forget(cs->o.sup, cs->snap.rows[i].id) == 0)
				json_array_append_new(done, json_string(cs->snap.rows[i].id));
	}
	for (i = 0; i < r->n_ids; i++)
		json_array_append_new(supervisor_forget(cs->o.sup, r->ids[i]) == 0 ? done : kept,
				      json_string(r->ids[i]));
	if (ok) {
		json_object_set_new(ok, "forgotten", done);
		json_object_set_new(ok, "not_ended", kept);
	} else {
		json_decref(done);
		json_decref(kept);
	}
	audit_authored(cs, c, r, "done");
	reply(cs, c, r->id, ok);
}

/* The sessions a cutover targets, as ids: the named ones, or every live one now. */
static void
cutover_targets(struct control_server *cs, const struct control_request *r, struct pending *p)
{
	size_t i;

	p->n = 0;
	if (!r->all) {
		for (i = 0; i < r->n_ids; i++)
			snprintf(p->ids[p->n++], SNAP_ID_MAX, "%s", r->ids[i]);
		return;
	}
	for (i = 0; i < cs->snap.n && p->n < SUPERVISOR_SESSIONS_MAX; i++)
		if (cs->snap.rows[i].state != SESSION_STATE_ENDED)
			snprintf(p->ids[p->n++], SNAP_ID_MAX, "%s", cs->snap.rows[i].id);
}

static int
pending_slot(const struct control_server *cs)
{
	int k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (!cs->pending[k])
			return k;
	return -1;
}

static void
op_cutover(struct control_server *cs, struct client *c, const struct control_request *r)
{
	enum cutover_op op = r->op == CONTROL_OP_REVOKE ? CUTOVER_REVOKE : CUTOVER_RESTORE;
	const char *ids[CONTROL_IDS_MAX];
	struct pending *p = calloc(1, sizeof *p);
	int slot = pending_slot(cs);
	struct al_err err;
	size_t i;

	if (!p || slot < 0 || refresh(cs) < 0 || cs->snap.audit_backlog > CONTROL_AUDIT_BACKLOG_MAX) {
		free(p);
		reply_error(cs, c, r->id, p ? CONTROL_E_BUSY : CONTROL_E_MEMORY);
		return;
	}
	for (i = 0; i < r->n_ids; i++)
		ids[i] = r->ids[i];
	if (supervisor_cutover(cs->o.sup, op, r->tool, r->all ? NULL : ids, r->n_ids,
			       &p->revision, &p->targets, &err) < 0) {
		free(p);
		audit_authored(cs, c, r, CONTROL_E_CUTOVER);
		reply_reason(cs, c, r->id, CONTROL_E_CUTOVER, err.msg);
		return;
	}
	audit_authored(cs, c, r, r->all ? "all sessions" : "named sessions");
	p->client = c->serial;
	p->id = r->id;
	p->op = op;
	snprintf(p->tool, sizeof p->tool, "%s", r->tool);
	p->deadline_ms = now_ms() + r->wait_ms;
	cutover_targets(cs, r, p);
	cs->pending[slot] = p;
	if (r->wait_ms == 0 || pending_done(p))
		pending_finish(cs, (size_t)slot);
}

typedef void (*op_fn)(struct control_server *, struct client *, const struct control_request *);

static const op_fn op_table[CONTROL_OP_COUNT] = {
	[CONTROL_OP_HELLO] = op_hello,
	[CONTROL_OP_SNAPSHOT] = op_snapshot,
	[CONTROL_OP_DETAIL] = op_detail,
	[CONTROL_OP_EVENTS] = op_events,
	[CONTROL_OP_HOST] = op_host,
	[CONTROL_OP_METRICS] = op_metrics,
	[CONTROL_OP_START] = op_start,
	[CONTROL_OP_STOP] = op_stop,
	[CONTROL_OP_REVOKE] = op_cutover,
	[CONTROL_OP_RESTORE] = op_cutover,
	[CONTROL_OP_FORGET] = op_forget,
	[CONTROL_OP_STOP_ALL] = op_stop_all,
};

/* One request line: refused with a fixed text, or served by its op. */
static void
serve_line(struct control_server *cs, struct client *c, const char *line, size_t len)
{
	struct control_request r;
	const char *error;

	if (control_parse(line, len, &r, &error) < 0)
		reply_error(cs, c, r.id, error);
	else if (control_op_changes(r.op) && c->role != CONTROL_ROLE_OPERATE) {
		audit_authored(cs, c, &r, CONTROL_E_VIEW);
		reply_error(cs, c, r.id, CONTROL_E_VIEW);
	} else
		op_table[r.op](cs, c, &r);
	control_request_free(&r);
}

/* ---- clients ---- */

static void
client_free(struct client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	linebuf_free(&c->in);
	free(c->out.buf);
	free(c);
}

/* A line past CONTROL_LINE_MAX: refused; read nothing more, close once it is out. */
static void
too_long(struct control_server *cs, struct client *c)
{
	say(cs, "client %u (uid %u %s): %s", c->serial, (unsigned)c->uid, c->user,
	    CONTROL_E_TOO_LONG);
	reply_error(cs, c, -1, CONTROL_E_TOO_LONG);
	c->eof = c->input_done = true;
	c->more = false;
}

/* The bytes read so far, as lines; an oversized line ends the client. */
static void
serve_lines(struct control_server *cs, struct client *c)
{
	const char *line;
	size_t len;
	int n = 0, rc;

	c->more = false;
	while (!c->dead && !c->input_done && (rc = linebuf_next(&c->in, &line, &len)) != 0) {
		if (rc < 0) {
			too_long(cs, c);
			return;
		}
		serve_line(cs, c, line, len);
		if (++n == LINES_PER_ROUND) {
			c->more = true;
			return;
		}
	}
}

/* At the end of its input: an unfinished line is refused. */
static void
end_of_input(struct control_server *cs, struct client *c)
{
	if (!c->eof || c->more || c->input_done)
		return;
	c->input_done = true;
	if (linebuf_pending(&c->in) > 0)
		reply_error(cs, c, -1, CONTROL_E_TRUNCATED);
}

static void
read_client(struct control_server *cs, struct client *c)
{
	char buf[READ_CHUNK];
	ssize_t n;
	int i;

	for (i = 0; i < READS_PER_ROUND && !c->eof && !c->dead && !c->more; i++) {
		n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			break;
		if (n <= 0) {
			c->eof = true;
			break;
		}
		if (linebuf_append(&c->in, buf, (size_t)n) < 0) {
			too_long(cs, c);
			return;
		}
		serve_lines(cs, c);
	}
	end_of_input(cs, c);
}

static const char *
user_name(uid_t uid, char *out, size_t cap)
{
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(out, cap, "%s", res->pw_name);
	else
		snprintf(out, cap, "%u", (unsigned)uid);
	return out;
}

/* The peer's supplementary groups as of its connect; NULL with n 0 when none. */
static gid_t *
peer_groups(int fd, size_t *n)
{
	gid_t probe_buf[1];
	socklen_t len = 0;
	gid_t *g;

	*n = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, probe_buf, &len) == 0 || errno != ERANGE ||
	    len == 0 || len > PEER_GROUPS_MAX * sizeof(gid_t))
		return NULL;
	g = malloc(len);
	if (!g || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		free(g);
		return NULL;
	}
	*n = len / sizeof(gid_t);
	return g;
}

/* One frame on a socket we are about to close: best effort, never waits. */
static void
send_bye(int fd, const char *reason)
{
	json_t *bye = control_bye(reason);
	size_t n;
	char *line = control_line(bye, 256, &n);

	if (line && send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing to do: the peer is going anyway */
	}
	free(line);
	json_decref(bye);
}

static int
free_slot(const struct control_server *cs)
{
	int i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (!cs->clients[i])
			return i;
	return -1;
}

static struct client *
client_new(int fd, const struct ucred *cred, enum control_role role, unsigned serial)
{
	struct client *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->fd = fd;
	if (linebuf_init(&c->in, CONTROL_LINE_MAX, 2 * CONTROL_LINE_MAX + 2) < 0) {
		c->fd = -1;
		client_free(c);
		return NULL;
	}
	c->serial = serial;
	c->pid = cred->pid;
	c->uid = cred->uid;
	c->role = role;
	user_name(cred->uid, c->user, sizeof c->user);
	return c;
}

static enum control_role
role_of(struct control_server *cs, int fd, struct ucred *cred)
{
	socklen_t len = sizeof *cred;
	struct control_peer p;
	enum control_role role;
	gid_t *groups;
	size_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
		return CONTROL_ROLE_NONE;
	groups = peer_groups(fd, &n);
	p = (struct control_peer){ .pid = cred->pid, .uid = cred->uid, .gid = cred->gid,
				   .n_groups = n, .groups = groups };
	role = control_role_of(&p, geteuid(), cs->o.operate, cs->o.view);
	free(groups);
	return role;
}

static void
admit(struct control_server *cs, int fd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	enum control_role role = role_of(cs, fd, &cred);
	int slot = free_slot(cs);
	struct client *c;
	json_t *hello;

	if (role == CONTROL_ROLE_NONE || slot < 0) {
		cs->counts.refused++;
		audit_refused_peer(cs, cred.pid, cred.uid, role == CONTROL_ROLE_NONE
				   ? "in neither the operate nor the view group" : CONTROL_E_FULL);
		send_bye(fd, role == CONTROL_ROLE_NONE ? CONTROL_E_PEER : CONTROL_E_FULL);
		close(fd);
		return;
	}
	c = client_new(fd, &cred, role, ++cs->serials);
	if (!c) {
		close(fd);
		return;
	}
	cs->clients[slot] = c;
	say(cs, "client %u connected: uid %u (%s) pid %ld, %s", c->serial, (unsigned)c->uid,
	    c->user, (long)c->pid, control_role_name(role));
	hello = control_hello(cs->o.engine, role, c->uid, c->user);
	reply(cs, c, -1, hello);
}

static void
accept_clients(struct control_server *cs)
{
	int i, fd;

	for (i = 0; i < ACCEPTS_PER_ROUND; i++) {
		fd = accept4(cs->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		admit(cs, fd);
	}
}

/* Gone, or read to the end with nothing left to send or wait for. */
static bool
finished(const struct control_server *cs, const struct client *c)
{
	size_t k;

	if (c->dead)
		return true;
	if (!c->eof || c->more || c->out.len > 0)
		return false;
	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (cs->pending[k] && cs->pending[k]->client == c->serial)
			return false;
	return true;
}

static void
reap_clients(struct control_server *cs)
{
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];

		if (!c || !finished(cs, c))
			continue;
		if (!c->dead)
			say(cs, "client %u (uid %u %s) closed", c->serial, (unsigned)c->uid, c->user);
		client_free(c);
		cs->clients[i] = NULL;
	}
}

/* ---- the server ---- */

int
control_server_open(const struct control_server_options *o, int listen_fd,
		    struct control_server **out, struct al_err *err)
{
	struct control_server *cs = calloc(1, sizeof *cs);

	*out = NULL;
	if (!cs)
		return al_fail(err, "out of memory");
	cs->o = *o;
	cs->listen_fd = listen_fd;
	if (!cs->o.engine)
		cs->o.engine = "airlock";
	if (!cs->o.runtime)
		cs->o.runtime = "runc";
	*out = cs;
	return 0;
}

void
control_server_started(struct control_server *cs, const char *session_id, const char *how)
{
	say(cs, "session %s started (%s)", session_id, how);
}

void
control_server_status(struct control_server *cs, char *buf, size_t cap)
{
	refresh(cs);
	snprintf(buf, cap, "%zu sessions (%zu live), %zu clients, revision %lld, %llu cutovers, "
		 "%llu peers refused, %llu frames dropped", cs->snap.n, cs->snap.live,
		 n_clients(cs), (long long)cs->snap.revision,
		 (unsigned long long)cs->counts.cutovers, (unsigned long long)cs->counts.refused,
		 (unsigned long long)cs->counts.dropped);
}

/* The pollfd set: listener, wake, extra, then each live client. */
static size_t
poll_set(struct control_server *cs, int extra_fd, struct pollfd *p, struct client **who)
{
	size_t i, n = 3;

	p[0] = (struct pollfd){ .fd = cs->listen_fd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = supervisor_wake_fd(cs->o.sup), .events = POLLIN };
	p[2] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		struct client *c = cs->clients[i];
		short ev = 0;

		if (!c || c->dead)
			continue;
		/* A client that does not read its replies is not read either. */
		if (!c->eof && !c->more && c->out.len <= CONTROL_QUEUE_SOFT)
			ev |= POLLIN;
		if (c->out.len > 0)
			ev |= POLLOUT;
		p[n] = (struct pollfd){ .fd = c->fd, .events = ev };
		who[n++] = c;
	}
	return n;
}

/* No longer than the nearest deadline: a pending cutover, a due snapshot, lines left. */
static int
step_timeout(const struct control_server *cs, int timeout_ms)
{
	int64_t due = cs->snap_pushed_ms + SNAPSHOT_PUSH_MS - now_ms();
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && cs->clients[i]->more && !cs->clients[i]->dead)
			return 0;
	if (cs->snap_due && due < timeout_ms)
		timeout_ms = due > 0 ? (int)due : 0;
	return pending_timeout(cs, timeout_ms);
}

int
control_server_step(struct control_server *cs, int extra_fd, int timeout_ms)
{
	struct pollfd p[3 + CONTROL_CLIENTS_MAX];
	struct client *who[3 + CONTROL_CLIENTS_MAX] = { 0 };
	size_t n = poll_set(cs, extra_fd, p, who), i;
	int rc = poll(p, n, step_timeout(cs, timeout_ms));

	if (rc < 0)
		return 0;
	if (p[1].revents & POLLIN || cs->snap_due)
		drain_events(cs);
	if (p[0].revents & POLLIN)
		accept_clients(cs);
	for (i = 3; i < n; i++) {
		if (who[i]->more && !who[i]->dead) {
			serve_lines(cs, who[i]);
			end_of_input(cs, who[i]);
		}
		if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
			read_client(cs, who[i]);
	}
	pending_expire(cs);
	for (i = 3; i < n; i++)
		if (!who[i]->dead && who[i]->out.len > 0)
			flush(cs, who[i]);
	reap_clients(cs);
	return extra_fd >= 0 && (p[2].revents & POLLIN) ? 1 : 0;
}

void
control_server_close(struct control_server *cs)
{
	size_t i;

	if (!cs)
		return;
	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i]) {
			flush(cs, cs->clients[i]);
			if (!cs->clients[i]->dead && cs->clients[i]->out.len == 0)
				send_bye(cs->clients[i]->fd, "engine stopping");
			client_free(cs->clients[i]);
		}
	for (i = 0; i < CONTROL_PENDING_MAX; i++)
		free(cs->pending[i]);
	for (i = 0; i < OWNED_MAX; i++)
		if (cs->owned[i]) {
			config_free(&cs->owned[i]->cfg);
			free(cs->owned[i]);
		}
	if (cs->listen_fd >= 0)
		close(cs->listen_fd);
	supervisor_snapshot_free(&cs->snap);
	free(cs);
}
