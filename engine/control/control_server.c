/* The control server of `airlock serve`: clients, their queues and pushes, accept, the loop. */
#include "control_server_int.h"
#include "mutant.h"
#include "parser.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK	16384
#define READS_PER_ROUND	4	/* chunks read from one client per round */
#define LINES_PER_ROUND	64	/* requests served for one client per round */
#define ACCEPTS_PER_ROUND 16
#define LISTEN_REST_MS 100	/* out of descriptors with no spare: the listener rests */
#define PEER_GROUPS_MAX	65536	/* NGROUPS_MAX on Linux */
#define READY_RETRY_MS	1000	/* a ready parser could not be started: tried again after */

/* ---- clients ---- */

/* Root and the engine's own uid: the last slots are theirs (control_server.h). */
static bool
owner_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Its parsers are kept ready (the test build's mutant keeps none). */
static bool
kept_ready(uid_t uid)
{
	return owner_uid(uid) && !mutant("control_no_ready_parsers");
}

/*
 * A client's parser stopped, a lent one too: one connection's lines could
 * have taken it over, and the next owner's must not reach it. Another is
 * started in its place when the service has a task for it.
 */
static void
parser_back(struct control_server *cs, struct client *c)
{
	if (c->lent)
		cs->lent--;
	parser_stop(c->parser);
	c->parser = NULL;
}

static void
client_free(struct control_server *cs, struct client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	linebuf_free(&c->in);
	parser_back(cs, c);
	free(c->out.buf);
	free(c);
}

struct parser *
cs_owner_parser(struct control_server *cs, struct client *c)
{
	if (!kept_ready(c->uid) || cs->n_ready == 0)
		return NULL;
	c->lent = true;
	cs->lent++;
	return cs->ready[--cs->n_ready];
}

/*
 * Ready and lent together back to CONTROL_CLIENTS_OWNER_MIN (a start takes
 * about 2 ms); after a start failed, none is tried for READY_RETRY_MS, so
 * a service out of tasks is not asked for one a round.
 */
static void
ready_parsers(struct control_server *cs)
{
	struct al_err err;

	if (!kept_ready(0))
		return;		/* root's are kept: none are, in the mutant */
	while (cs->n_ready + cs->lent < CONTROL_CLIENTS_OWNER_MIN &&
	       clock_mono_ms() >= cs->ready_retry_ms) {
		if (parser_start_beside(cs->o.exe, CONTROL_LINE_MAX, &cs->ready[cs->n_ready],
					&err) == 0) {
			cs->n_ready++;
			continue;
		}
		if (cs->ready_retry_ms == 0)	/* once until they are all there again */
			cs_say(cs, "a parser kept for root could not be started: %s", err.msg);
		cs->ready_retry_ms = clock_mono_ms() + READY_RETRY_MS;
	}
	if (cs->n_ready + cs->lent == CONTROL_CLIENTS_OWNER_MIN)
		cs->ready_retry_ms = 0;
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
			cs_end_input(cs, c, CONTROL_E_TOO_LONG);	/* past CONTROL_LINE_MAX */
			return;
		}
		cs_serve_line(cs, c, line, len);
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
		cs_reply_error(cs, c, -1, CONTROL_E_TRUNCATED);
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
			cs_end_input(cs, c, CONTROL_E_TOO_LONG);
			return;
		}
		serve_lines(cs, c);
	}
	end_of_input(cs, c);
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
	char *line = control_line(bye, 1024, &n);

	if (line && send(fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing to do: the peer is going anyway */
	}
	free(line);
	json_decref(bye);
}

/*
 * A free slot for a peer of role and uid, or -1. A view peer is not given
 * one of the last CONTROL_CLIENTS_MAX - CONTROL_CLIENTS_VIEW_MAX, nor
 * anyone but root and the engine's uid one of the last
 * CONTROL_CLIENTS_OWNER_MIN: connections held open by a view peer cannot
 * lock an operator out of a freeze, nor an operator root.
 */
static int
free_slot(const struct control_server *cs, enum control_role role, uid_t uid)
{
	int i, slot = -1, views = 0, others = 0;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		if (!cs->clients[i]) {
			slot = slot < 0 ? i : slot;
			continue;
		}
		views += cs->clients[i]->role == CONTROL_ROLE_VIEW;
		others += !owner_uid(cs->clients[i]->uid);
	}
	if (role == CONTROL_ROLE_VIEW && views >= CONTROL_CLIENTS_VIEW_MAX)
		return -1;
	return !owner_uid(uid) && others >= CONTROL_CLIENTS_MAX - CONTROL_CLIENTS_OWNER_MIN ?
	       -1 : slot;
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
		client_free(NULL, c);	/* no parser yet */
		return NULL;
	}
	c->serial = serial;
	c->pid = cred->pid;
	c->uid = cred->uid;
	c->role = role;
	cs_user_name(cred->uid, c->user, sizeof c->user);
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

/*
 * A peer with no role (reason NULL) is told the groups that would let it
 * in; the engine is the gate. Any other, the fixed reason.
 */
static void
refuse(struct control_server *cs, int fd, const struct ucred *cred, const char *reason)
{
	char why[256];

	cs->counts.refused++;
	if (!reason)
		control_not_allowed(why, sizeof why, cred->uid, cs->o.operate_name, cs->o.view_name);
	else
		snprintf(why, sizeof why, "%s", reason);
	cs_audit_refused_peer(cs, cred->pid, cred->uid, !reason, why);
	send_bye(fd, why);
	close(fd);
}

static void
admit(struct control_server *cs, int fd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	enum control_role role = role_of(cs, fd, &cred);
	int slot = free_slot(cs, role, cred.uid);
	struct client *c;
	json_t *hello;

	if (role == CONTROL_ROLE_NONE || slot < 0) {
		refuse(cs, fd, &cred, role == CONTROL_ROLE_NONE ? NULL : CONTROL_E_FULL);
		return;
	}
	c = client_new(fd, &cred, role, ++cs->serials);
	if (!c) {
		close(fd);
		return;
	}
	cs->clients[slot] = c;
	cs_say(cs, "client %u connected: uid %u (%s) pid %ld, %s", c->serial, (unsigned)c->uid,
	    c->user, (long)c->pid, control_role_name(role));
	hello = control_hello(cs->o.engine, role, c->uid, c->user);
	cs_reply(cs, c, -1, hello);
}

/*
 * Out of descriptors the listener stays readable: a loop that only
 * returned would spin and leave every peer, root's too, waiting without a
 * word. The spare descriptor makes room to take each waiting peer and tell
 * it so; without one (it could not be had back) the listener rests.
 */
static void
out_of_descriptors(struct control_server *cs)
{
	struct ucred cred;
	socklen_t len;
	int i, fd;

	if (cs->spare_fd >= 0) {
		close(cs->spare_fd);
		for (i = 0; i < ACCEPTS_PER_ROUND; i++) {
			fd = accept4(cs->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				break;
			cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
			len = sizeof cred;
			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
				cred.uid = (uid_t)-1;
			refuse(cs, fd, &cred, CONTROL_E_NOFD);
		}
		cs->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (cs->spare_fd < 0)
		cs->listen_rest_ms = clock_mono_ms() + LISTEN_REST_MS;
}

static void
accept_clients(struct control_server *cs)
{
	int i, fd;

	for (i = 0; i < ACCEPTS_PER_ROUND; i++) {
		fd = accept4(cs->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE))
			out_of_descriptors(cs);
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
	return !cs_start_waits_for(cs, c->serial);
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
			cs_say(cs, "client %u (uid %u %s) closed", c->serial, (unsigned)c->uid, c->user);
		client_free(cs, c);
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
	cs->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (cs_starts_open(cs, err) < 0) {
		free(cs);
		return -1;
	}
	if (!cs->o.engine)
		cs->o.engine = "airlock";
	if (!cs->o.runtime)
		cs->o.runtime = "runc";
	ready_parsers(cs);
	*out = cs;
	return 0;
}

void
control_server_started(struct control_server *cs, const char *session_id, const char *how)
{
	cs_say(cs, "session %s started (%s)", session_id, how);
}

void
control_server_status(struct control_server *cs, char *buf, size_t cap)
{
	cs_refresh(cs);
	snprintf(buf, cap, "%zu sessions (%zu live), %zu clients, revision %lld, %llu cutovers, "
		 "%llu peers refused, %llu frames dropped", cs->snap.n, cs->snap.live,
		 cs_n_clients(cs), (long long)cs->snap.revision,
		 (unsigned long long)cs->counts.cutovers, (unsigned long long)cs->counts.refused,
		 (unsigned long long)cs->counts.dropped);
}

#define POLL_FIXED 4

/* The pollfd set: listener, wake, extra, starts read, then each live client. */
static size_t
poll_set(struct control_server *cs, int extra_fd, struct pollfd *p, struct client **who)
{
	size_t i, n = POLL_FIXED;

	p[0] = (struct pollfd){ .fd = clock_mono_ms() < cs->listen_rest_ms ? -1 : cs->listen_fd,
				.events = POLLIN };
	p[1] = (struct pollfd){ .fd = supervisor_wake_fd(cs->o.sup), .events = POLLIN };
	p[2] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	p[3] = (struct pollfd){ .fd = cs->starts_wake, .events = POLLIN };
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
	int64_t due = cs->snap_pushed_ms + SNAPSHOT_PUSH_MS - clock_mono_ms(), rest;
	size_t i;

	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i] && cs->clients[i]->more && !cs->clients[i]->dead)
			return 0;
	rest = cs->listen_rest_ms - clock_mono_ms();
	if (rest > 0 && (timeout_ms < 0 || rest < timeout_ms))
		timeout_ms = (int)rest;	/* the listener back after its rest */
	rest = cs->ready_retry_ms - clock_mono_ms();
	if (cs->ready_retry_ms > 0 && (timeout_ms < 0 || rest < timeout_ms))
		timeout_ms = rest > 0 ? (int)rest : 0;	/* a parser kept ready tried again */
	if (!cs_snapshots_wanted(cs))	/* a push due when its last reader left is not */
		return cs_pending_timeout(cs, timeout_ms);
	if (!cs->snap_due)
		due = cs->snap_pushed_ms + SNAPSHOT_IDLE_MS - clock_mono_ms();
	if (due < timeout_ms)
		timeout_ms = due > 0 ? (int)due : 0;
	return cs_pending_timeout(cs, timeout_ms);
}

int
control_server_step(struct control_server *cs, int extra_fd, int timeout_ms)
{
	struct pollfd p[POLL_FIXED + CONTROL_CLIENTS_MAX];
	struct client *who[POLL_FIXED + CONTROL_CLIENTS_MAX] = { 0 };
	size_t n = poll_set(cs, extra_fd, p, who), i;
	int rc = poll(p, n, step_timeout(cs, timeout_ms));

	if (rc < 0)
		return 0;
	if (!cs->snap_due && cs_snapshots_wanted(cs) &&
	    clock_mono_ms() - cs->snap_pushed_ms >= SNAPSHOT_IDLE_MS)
		cs->snap_due = true;
	if (p[1].revents & POLLIN || cs->snap_due)
		cs_drain_events(cs);
	cs_starts_finish(cs);	/* every round: a wake is only a wake */
	if (p[0].revents & POLLIN)
		accept_clients(cs);
	for (i = POLL_FIXED; i < n; i++) {
		if (who[i]->more && !who[i]->dead) {
			serve_lines(cs, who[i]);
			end_of_input(cs, who[i]);
		}
		if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
			read_client(cs, who[i]);
	}
	cs_pending_expire(cs);
	for (i = POLL_FIXED; i < n; i++)
		if (!who[i]->dead && who[i]->out.len > 0)
			cs_flush(cs, who[i]);
	reap_clients(cs);
	ready_parsers(cs);
	return extra_fd >= 0 && (p[2].revents & POLLIN) ? 1 : 0;
}

void
control_server_stopping(struct control_server *cs)
{
	struct pollfd p = { .fd = cs->starts_wake, .events = POLLIN };

	cs->stopping = true;
	while (cs_starts_any(cs)) {
		(void)poll(&p, 1, 100);
		cs_starts_finish(cs);
	}
}

void
control_server_close(struct control_server *cs)
{
	size_t i;

	if (!cs)
		return;
	cs_starts_close(cs);	/* before the configs: their threads write them */
	for (i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (cs->clients[i]) {
			cs_flush(cs, cs->clients[i]);
			if (!cs->clients[i]->dead && cs->clients[i]->out.len == 0)
				send_bye(cs->clients[i]->fd, "engine stopping");
			client_free(cs, cs->clients[i]);
		}
	for (i = 0; i < cs->n_ready; i++)
		parser_stop(cs->ready[i]);
	for (i = 0; i < CONTROL_PENDING_MAX; i++)
		free(cs->pending[i]);
	for (i = 0; i < OWNED_MAX; i++)
		if (cs->owned[i]) {
			config_free(&cs->owned[i]->cfg);
			free(cs->owned[i]);
		}
	if (cs->listen_fd >= 0)
		close(cs->listen_fd);
	if (cs->spare_fd >= 0)
		close(cs->spare_fd);
	supervisor_snapshot_free(&cs->snap);
	json_decref(cs->pushed);
	audit_tail_close(cs->tail);
	free(cs);
}
