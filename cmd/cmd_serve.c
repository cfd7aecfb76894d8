/*
 * airlock serve: the supervisor headless in the foreground, driven over
 * its control socket (engine/control/control_server.h; docs/operations.md). It
 * logs to stderr, one line per client, session start and end, cutover;
 * never payload.
 *
 * Signals: TERM and INT stop every session and exit (0 when no container
 * is left); HUP logs a status line and re-runs the host checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "audit.h"
#include "cli.h"
#include "config.h"
#include "control_server.h"
#include "doctor.h"
#include "otlp.h"
#include "supervisor.h"
#include "thread.h"

#define STEP_MS 1000

struct serve {
	struct cli_opts o;
	char socket[PATH_MAX];
	char audit_path[PATH_MAX];
	char engine[128];
	char runtime[16];
	struct control_group operate, view;
	const char *operate_name, *view_name;
	int listen_fd;
	ino_t socket_ino;
	struct audit *audit;
	struct otlp *otlp;
	struct supervisor *sup;
	struct control_server *cs;
};

/* ---- signals, through a pipe the server polls ---- */

static int signal_pipe[2] = { -1, -1 };

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(signal_pipe[1], &b, 1) < 0) {
		/* full: a signal of the same kind is already waiting */
	}
	errno = saved;
}

static int
catch_signals(void)
{
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	thread_catch_stop(on_signal, SA_RESTART);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ---- set-up ---- */

/* A group by name: absent is fine for a default, an error for one the operator named. */
static int
find_group(const char *name, bool named, struct control_group *out)
{
	struct group gr, *res = NULL;
	char buf[4096];

	out->present = false;
	if (getgrnam_r(name, &gr, buf, sizeof buf, &res) == 0 && res) {
		out->present = true;
		out->gid = res->gr_gid;
		return 0;
	}
	if (named)
		return cli_fail(false, "serve", "group %s does not exist", name);
	return 0;
}

static int
resolve_groups(struct serve *s)
{
	const struct cli_opts *o = &s->o;

	s->operate_name = o->n[OPT_OPERATE_GROUP] ? o->values[OPT_OPERATE_GROUP][0] : "airlock";
	s->view_name = o->n[OPT_VIEW_GROUP] ? o->values[OPT_VIEW_GROUP][0] : "airlock-view";
	if (find_group(s->operate_name, o->n[OPT_OPERATE_GROUP] > 0, &s->operate) != 0 ||
	    find_group(s->view_name, o->n[OPT_VIEW_GROUP] > 0, &s->view) != 0)
		return -1;
	return 0;
}

/* The default socket's directory is made here; a named socket's must exist. */
static int
socket_path(struct serve *s)
{
	struct al_err err;
	char *slash;

	if (s->o.n[OPT_SOCKET]) {
		snprintf(s->socket, sizeof s->socket, "%s", s->o.values[OPT_SOCKET][0]);
		return 0;
	}
	if (control_socket_default(s->socket, sizeof s->socket, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	slash = strrchr(s->socket, '/');
	*slash = '\0';
	if (control_socket_dir(s->socket, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	*slash = '/';
	return 0;
}

static int
listen_socket(struct serve *s)
{
	struct al_err err;
	struct stat st;

	if (control_listen(s->socket, &s->listen_fd, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	if (stat(s->socket, &st) == 0)
		s->socket_ino = st.st_ino;
	return 0;
}

static int
open_sinks(struct serve *s)
{
	struct al_err err;

	if (s->o.audit)
		snprintf(s->audit_path, sizeof s->audit_path, "%s", s->o.audit);
	else if (cli_default_audit_path(s->audit_path, sizeof s->audit_path) < 0)
		return cli_fail(false, "serve", "no --audit given and no state directory usable");
	if (audit_open(s->audit_path, &s->audit, &err) < 0)
		return cli_audit_fail(false, "serve", s->audit_path, true, &err);
	if (s->o.otlp && otlp_open(s->o.otlp, &s->otlp, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	return 0;
}

/* What the last engine on this log left standing, said once as the engine starts. */
static void
standing_said(struct supervisor *sup)
{
	struct supervisor_snapshot *snap = calloc(1, sizeof *snap);

	if (snap && supervisor_snapshot(sup, snap) >= 0 &&
	    (snap->n_standing || snap->n_standing_hold || snap->n_standing_flow || snap->frozen))
		fprintf(stderr, "airlock serve: standing from the audit log (revision %lld): "
			"revoked %zu, held %zu, flows held %zu%s\n", (long long)snap->revision,
			snap->n_standing, snap->n_standing_hold, snap->n_standing_flow,
			snap->frozen ? ", frozen" : "");
	if (snap)
		supervisor_snapshot_free(snap);
	free(snap);
}

/* --upstreams-dir, or NULL: the installed upstreams' default. */
static const char *
upstreams_dir(const struct serve *s)
{
	return s->o.n[OPT_UPSTREAMS_DIR] ? s->o.values[OPT_UPSTREAMS_DIR][0] : NULL;
}

static int
open_supervisor(struct serve *s)
{
	struct supervisor_options so = { .docker_host = getenv("DOCKER_HOST"), .audit = s->audit,
					 .otlp = s->otlp, .reap_at_start = true,
					 .sessions_max = s->o.sessions_max,
					 .upstreams_dir = upstreams_dir(s) };
	struct reap_report reaped = { 0 };
	struct al_err err;

	if (supervisor_open(&so, &s->sup, &reaped, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	/* Live engines' containers are not orphans: counted apart, left alone. */
	if (reaped.found)
		fprintf(stderr, "airlock serve: %zu airlock container%s at start: %zu orphans of "
			"gone engines (%zu reaped, %zu failed), %zu of live engines left alone\n",
			reaped.found, reaped.found == 1 ? "" : "s", reaped.reaped + reaped.failed, reaped.reaped, reaped.failed,
			reaped.kept);
	standing_said(s->sup);
	return 0;
}

/* Each installed upstream as an operator's start would find it: a line each. */
static void
log_installed(const struct serve *s)
{
	struct doctor_report r;
	size_t i;

	memset(&r, 0, sizeof r);
	check_list_init(&r.checks);
	doctor_installed(&r, upstreams_dir(s));
	for (i = 0; i < r.checks.n; i++)
		fprintf(stderr, "airlock serve: %s: %s%s\n", r.checks.items[i].id,
			r.checks.items[i].pass ? "" : "FAIL: ", r.checks.items[i].observed);
	doctor_report_free(&r);
}

/*
 * Every --config read before anything touches a container (the reaper
 * included): a bad one ends serve first, in the words a start would use.
 * The first one's runtime is the host checks'.
 */
static int
check_configs(struct serve *s)
{
	struct airlock_config c;
	struct al_err err;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < s->o.n[OPT_CONFIG]; i++) {
		const char *path = s->o.values[OPT_CONFIG][i];

		config_init(&c);
		c.upstreams_dir = upstreams_dir(s);
		if (config_load_file(&c, path, 1, &err) < 0)
			rc = cli_fail(false, "serve", "%s", err.msg);
		else if (i == 0)
			snprintf(s->runtime, sizeof s->runtime, "%s", c.profile.runtime);
		config_free(&c);
	}
	return rc;
}

/* The --config sessions. */
static int
start_configs(struct serve *s)
{
	char id[SNAP_ID_MAX], how[PATH_MAX + 16];
	struct al_err err;
	size_t i;

	for (i = 0; i < s->o.n[OPT_CONFIG]; i++) {
		const char *path = s->o.values[OPT_CONFIG][i];

		if (supervisor_start_file(s->sup, path, id, &err) < 0)
			return cli_fail(false, "serve", "%s", err.msg);
		snprintf(how, sizeof how, "config %s", path);
		control_server_started(s->cs, id, how);
	}
	return 0;
}

static int
open_server(struct serve *s)
{
	struct control_server_options co = { .sup = s->sup, .engine = s->engine,
					     .runtime = s->runtime, .operate = s->operate,
					     .view = s->view, .operate_name = s->operate_name,
					     .view_name = s->view_name, .log = stderr,
					     .audit = s->audit_path };
	struct al_err err;

	if (control_server_open(&co, s->listen_fd, &s->cs, &err) < 0)
		return cli_fail(false, "serve", "%s", err.msg);
	s->listen_fd = -1;	/* the server's now */
	return 0;
}

static void
name_engine(struct serve *s)
{
	char host[64] = "localhost";

	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	if (s->o.n[OPT_NAME])
		snprintf(s->engine, sizeof s->engine, "%.31s", s->o.values[OPT_NAME][0]);
	else
		snprintf(s->engine, sizeof s->engine, "%s:%ld", host, (long)getpid());
	snprintf(s->runtime, sizeof s->runtime, "runc");
}

/* ---- running ---- */

static void
group_line(const char *role, const char *name, struct control_group g)
{
	if (g.present)
		fprintf(stderr, "airlock serve: %s group %s (gid %u)\n", role, name, (unsigned)g.gid);
	else
		fprintf(stderr, "airlock serve: %s group %s does not exist: no one is given that role "
			"by group\n", role, name);
}

/*
 * The socket is 0666 and the engine decides; a directory others cannot
 * pass keeps the view role (and every refusal's reason) out before it.
 */
static void
reach_line(const struct serve *s)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof dir, "%s", s->socket);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	if (slash == dir)
		slash++;	/* "/engine.sock": the directory is "/" */
	*slash = '\0';
	if (stat(dir, &st) == 0 && !(st.st_mode & S_IXOTH))
		fprintf(stderr, "airlock serve: socket directory %s is %04o: only its owner and "
			"group can reach the socket (0755 lets every role in; the engine decides)\n",
			dir, (unsigned)(st.st_mode & 07777));
}

static void
ready(struct serve *s)
{
	fprintf(stderr, "airlock serve: engine %s listening on %s (audit %s)\n", s->engine,
		s->socket, s->audit_path);
	group_line("operate", s->operate_name, s->operate);
	group_line("view", s->view_name, s->view);
	reach_line(s);
	sd_notifyf(0, "READY=1\nSTATUS=listening on %s", s->socket);
}

/* HUP: a status line in the log and for systemd, and the host checks again. */
static void
hangup(struct serve *s)
{
	char line[256];

	control_server_status(s->cs, line, sizeof line);
	fprintf(stderr, "airlock serve: status: %s; host checks re-run\n", line);
	sd_notifyf(0, "STATUS=%s", line);
	supervisor_host_refresh(s->sup, s->runtime);
}

/* Until TERM or INT. */
static void
run(struct serve *s)
{
	unsigned char sig[16];
	ssize_t n, i;

	for (;;) {
		if (control_server_step(s->cs, signal_pipe[0], STEP_MS) != 1)
			continue;
		n = read(signal_pipe[0], sig, sizeof sig);
		for (i = 0; i < n; i++) {
			if (sig[i] == SIGHUP) {
				hangup(s);
				continue;
			}
			fprintf(stderr, "airlock serve: %s: stopping\n",
				sig[i] == SIGINT ? "SIGINT" : "SIGTERM");
			return;
		}
	}
}

/* Our socket file goes with us; one someone else bound since stays. */
static void
remove_socket(const struct serve *s)
{
	struct stat st;

	if (s->socket_ino && lstat(s->socket, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_ino == s->socket_ino)
		unlink(s->socket);
}

/* Stop everything: returns the exit status. */
static int
stop(struct serve *s)
{
	size_t live = s->sup ? supervisor_live(s->sup) : 0;
	uint64_t refused = 0;
	int left = 0;

	sd_notify(0, "STOPPING=1");
	if (s->cs)	/* a start being read starts nothing now */
		control_server_stopping(s->cs);
	if (s->sup) {
		fprintf(stderr, "airlock serve: stopping %zu live sessions\n", live);
		left = supervisor_shutdown(s->sup);
		refused = supervisor_audit_failures(s->sup);
		supervisor_close(s->sup);
	}
	control_server_close(s->cs);	/* after the supervisor: it holds inline configs */
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	remove_socket(s);
	otlp_close(s->otlp);
	if (s->audit)
		audit_close(s->audit);
	if (left < 0)
		fprintf(stderr, "airlock serve: the daemon did not answer: containers left unknown\n");
	else if (s->sup)
		fprintf(stderr, "airlock serve: stopped; %d containers left\n", left);
	if (refused)
		fprintf(stderr, "airlock serve: the audit log refused %llu writes: it is incomplete\n",
			(unsigned long long)refused);
	return left == 0 && !refused ? EXIT_OK : EXIT_ERROR;
}

/*
 * Every session and connection holds descriptors (about 15 a session with
 * one upstream, 4 a connection with its parser): the soft limit (1024
 * under systemd) goes up to the hard one (524288 there). The engine polls,
 * never selects.
 */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int
cmd_serve(int argc, char **argv)
{
	struct serve s = { .listen_fd = -1 };
	int rc = cli_parse("serve", argc, argv, &s.o);

	if (rc >= 0)
		return rc;
	name_engine(&s);
	raise_nofile();
	if (catch_signals() < 0)
		return cli_fail(false, "serve", "cannot set up signals: %s", strerror(errno));
	if (resolve_groups(&s) != 0 || check_configs(&s) != 0 || socket_path(&s) != 0 ||
	    listen_socket(&s) != 0)
		return EXIT_ERROR;
	log_installed(&s);
	if (open_sinks(&s) != 0 || open_supervisor(&s) != 0 || open_server(&s) != 0 ||
	    start_configs(&s) != 0) {
		stop(&s);
		return EXIT_ERROR;
	}
	supervisor_host_refresh(s.sup, s.runtime);
	ready(&s);
	run(&s);
	return stop(&s);
}
