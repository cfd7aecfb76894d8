#ifndef AIRLOCK_CONTROL_SERVER_H
#define AIRLOCK_CONTROL_SERVER_H

/*
 * The control socket of `airlock serve` (docs/operations.md): the socket
 * file, and one server that multiplexes the listener, every client and the
 * supervisor's wake descriptor with poll on the calling thread. The
 * protocol itself is control.h.
 *
 * Never blocked by a client: client sockets are non-blocking and written
 * with MSG_NOSIGNAL; each has a bounded outgoing queue. Replies are always
 * queued; a pushed frame (event, snapshot) is dropped and counted when the
 * queue is past CONTROL_QUEUE_SOFT, and a client past CONTROL_QUEUE_HARD,
 * or that dropped CONTROL_DROPS_MAX frames in a row, is disconnected.
 * Input is read in bounded rounds; a bad line gets a fixed refusal, an
 * oversized one a refusal and a disconnect.
 *
 * Roles come from the kernel at accept (SO_PEERCRED, SO_PEERGROUPS):
 * control_role_of. The socket file lets anyone connect (0666): the
 * engine is the gate, so that a peer with no role can be told why. It gets
 * one frame, {"ok": false, "error": "not allowed: uid U is in neither
 * 'OPERATE' (operate) nor 'VIEW' (view)"} (control_not_allowed), and is
 * disconnected. Refusals are logged and audited up to
 * CONTROL_REFUSALS_AUDITED a minute (anyone may connect, so anyone could
 * flood the log); past that they are only counted.
 */

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "control.h"
#include "err.h"
#include "supervisor.h"

#define CONTROL_CLIENTS_MAX	64
/* View peers hold at most this many: the rest stay for operate (the kill switch). */
#define CONTROL_CLIENTS_VIEW_MAX	48
/*
 * And the last this many stay for root and the engine's own uid: an
 * operate-group member's connections cannot lock root out of a freeze.
 */
#define CONTROL_CLIENTS_OWNER_MIN	4
#define CONTROL_QUEUE_SOFT	(256u << 10)	/* pushed frames dropped past this */
#define CONTROL_QUEUE_HARD	(16u << 20)	/* disconnected past this */
#define CONTROL_DROPS_MAX	4096		/* dropped in a row: disconnected */
#define CONTROL_RECENT_MAX	256		/* events an "events" reply starts with */
#define CONTROL_PENDING_MAX	16		/* cutovers waiting for their acks */
#define CONTROL_LISTEN_LIVE	(-2)		/* another engine answers on the socket */
#define CONTROL_REFUSALS_AUDITED 32		/* refused peers logged and audited a minute */
/*
 * A revoke or restore is refused "engine busy" while more policy entries
 * than this wait for the audit writer: a client sending cutovers faster
 * than the log takes them would otherwise overflow its queue, and the
 * entries lost would leave the log incomplete.
 */
#define CONTROL_AUDIT_BACKLOG_MAX 256

/* The system engine's socket (docs/airlock.service). */
#define CONTROL_SOCKET_SYSTEM "/run/airlock/engine.sock"

/*
 * Where serve listens by default: CONTROL_SOCKET_SYSTEM as root, else
 * $XDG_RUNTIME_DIR/airlock/engine.sock. -1 when neither applies.
 */
int control_socket_default(char *out, size_t cap, struct al_err *err);

/*
 * Where a client (ctl, a console, inspect) connects when no socket is
 * named: as root, CONTROL_SOCKET_SYSTEM; else its user's own engine's
 * socket ($XDG_RUNTIME_DIR/airlock/engine.sock) when one is there, else
 * the system engine's. An on-call operator in the operate or view group
 * reaches the service without naming it.
 */
void control_socket_dial(char *out, size_t cap);

/*
 * The default socket's directory, made when missing and set again at every
 * start: 0755, ours, so that every role can reach the socket in it and
 * no one else can put a file there. An existing one must be a directory
 * we own, not a symlink (opened with O_NOFOLLOW, then changed through the
 * descriptor).
 */
int control_socket_dir(const char *dir, struct al_err *err);

/*
 * Why a socket's directory is unsafe (NULL: safe): st is its stat, self
 * the engine's uid. It must be a directory, not a symlink, owned by root
 * or self, and not writable by group or others unless sticky (/tmp):
 * whoever may rename entries in it could put their own socket in the
 * engine's place, and clients would talk to it.
 */
const char *control_dir_unsafe(const struct stat *st, uid_t self);
/* The same, owned by root, a or b. */
const char *control_dir_unsafe_to(const struct stat *st, uid_t a, uid_t b);
/*
 * path's directory and every one above it pass control_dir_unsafe_to(a,
 * b), resolved (a link such as /var/run followed): 0, or -1 naming the
 * directory at fault in err (may be NULL).
 */
int control_path_safe(const char *path, uid_t a, uid_t b, struct al_err *err);

/*
 * Bind and listen on path, mode 0666 (the engine decides who may stay:
 * control_role_of). Its directory must pass control_dir_unsafe. A path
 * that is a symlink, not a socket or not ours is refused; a socket
 * another engine answers on gives CONTROL_LISTEN_LIVE; a stale one (the
 * connect is refused) is removed and bound again. The mode is set by the
 * umask around bind, never by a chmod of the path (which would follow a
 * symlink put there after the bind). *fd is non-blocking.
 */
int control_listen(const char *path, int *fd, struct al_err *err);

#define CONTROL_CONNECT_TIMEOUT_S 10

/*
 * A client's connection to path (blocking, close-on-exec; the connect and
 * each send give up after CONTROL_CONNECT_TIMEOUT_S); -1 with err. The
 * path is looked at first: "PATH: does not exist", "PATH: not a socket";
 * then who answers: root, the caller, or its directory's sole owner.
 */
int control_connect(const char *path, struct al_err *err);

struct control_server_options {
	struct supervisor *sup;		/* required */
	const char *engine;		/* the name in the hello */
	const char *runtime;		/* host checks are for it */
	struct control_group operate, view;
	const char *operate_name, *view_name;	/* named to a refused peer */
	FILE *log;			/* one line per client, session end, cutover */
	const char *audit;		/* the log the engine writes: the "audit" op reads it */
	const char *exe;		/* the airlock binary its clients' parsers are
					 * beside (NULL: this one) */
};

struct control_server;

/* Takes the listening fd (closed by control_server_close). */
int control_server_open(const struct control_server_options *o, int listen_fd,
			struct control_server **out, struct al_err *err);

/*
 * One round: poll the listener, the clients, the supervisor and extra_fd
 * (-1: none) for at most timeout_ms, and serve what is ready. Returns 1
 * when extra_fd is readable, 0 otherwise.
 */
int control_server_step(struct control_server *cs, int extra_fd, int timeout_ms);

/* A session started by the engine's own operator (serve --config): logged alike. */
void control_server_started(struct control_server *cs, const char *session_id, const char *how);

/* "N sessions (M live), K clients, revision R": one line for the log. */
void control_server_status(struct control_server *cs, char *buf, size_t cap);

/*
 * The engine is stopping, before its sessions are: each start whose config
 * is still being read is waited for and refused, audited and answered
 * ("the engine is stopping"); no session starts from one after.
 */
void control_server_stopping(struct control_server *cs);

/* The last frame to every client ("engine stopping"), then close all. */
void control_server_close(struct control_server *cs);

#endif
