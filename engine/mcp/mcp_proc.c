#include "mcp_int.h"
#include "clock.h"
#include "mcp_confine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MCP_STOP_EOF_MS		2000
#define MCP_STOP_TERM_MS	1000
#define MCP_STOP_KILL_MS	5000
#define MCP_STOP_SLICE_MS	20
#define MCP_CLOSE_LOOP_MAX	(1 << 20)	/* descriptors closed one by one without close_range */

/* --- the child, between fork and exec: async-signal-safe calls only ------ */

struct mcp_spawn {
	char **argv;
	char **envp;
	const char *cwd;
	int in[2], out[2], err[2], status[2];
	struct mcp_confine *confine;	/* prepared in the parent, applied in the child */
};

/* Where the child keeps what it needs past closing the rest. */
#define MCP_CHILD_STATUS_FD	3
#define MCP_CHILD_PROGRAM_FD	4
#define MCP_CHILD_RULESET_FD	5
#define MCP_CHILD_FIRST_FREE	6

/* Where a child that never reached the server's code failed. */
enum mcp_spawn_step {
	MCP_STEP_SETUP,		/* pipes, process group, limits */
	MCP_STEP_CWD,		/* the configured working directory */
	MCP_STEP_EXEC,		/* the program itself */
	MCP_STEP_CONFINE,	/* uid, Landlock, seccomp, or their proof (mcp_confine.h) */
};

/* Tell the parent where and why (and which confinement step), and die. */
static void __attribute__((noreturn))
mcp_child_fail(int status_fd, enum mcp_spawn_step step, int detail)
{
	int why[3] = { (int)step, errno, detail };
	ssize_t n = write(status_fd, why, sizeof why);

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

/* A descriptor moved to a fixed number, close-on-exec (or -1 when there is none). */
static int
mcp_child_pin(int fd, int at)
{
	if (fd < 0)
		return -1;
	return dup3(fd, at, O_CLOEXEC) < 0 ? -2 : at;
}

/*
 * Pipe ends are first copied above 2 so that the dup2 calls onto 0..2
 * cannot overwrite one another (the engine may run with 0..2 closed); the
 * program and ruleset descriptors above the fixed slots they end up in.
 * The status pipe ends up as 3, close-on-exec; everything above 5 is
 * closed, and 4 or 5 when no descriptor took it (a script has no program
 * descriptor, an unconfined_ok upstream no ruleset: the engine's own 4
 * and 5 would reach it otherwise).
 */
static int
mcp_child_fds(const struct mcp_spawn *sp)
{
	int st, in, out, err, prog = -1, rules = -1;

	st = fcntl(sp->status[1], F_DUPFD_CLOEXEC, 3);
	if (st < 0)
		_exit(127);
	if (mcp_confine_program_fd(sp->confine) >= 0)
		prog = fcntl(mcp_confine_program_fd(sp->confine), F_DUPFD_CLOEXEC, MCP_CHILD_FIRST_FREE);
	if (mcp_confine_ruleset_fd(sp->confine) >= 0)
		rules = fcntl(mcp_confine_ruleset_fd(sp->confine), F_DUPFD_CLOEXEC, MCP_CHILD_FIRST_FREE);
	in = fcntl(sp->in[0], F_DUPFD, 3);
	out = fcntl(sp->out[1], F_DUPFD, 3);
	err = fcntl(sp->err[1], F_DUPFD, 3);
	if (in < 0 || out < 0 || err < 0 || prog < -1 || rules < -1 ||
	    dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		mcp_child_fail(st, MCP_STEP_SETUP, 0);
	if (st != MCP_CHILD_STATUS_FD && mcp_child_pin(st, MCP_CHILD_STATUS_FD) < 0)
		mcp_child_fail(st, MCP_STEP_SETUP, 0);
	st = MCP_CHILD_STATUS_FD;
	prog = mcp_child_pin(prog, MCP_CHILD_PROGRAM_FD);
	rules = mcp_child_pin(rules, MCP_CHILD_RULESET_FD);
	if (prog < -1 || rules < -1)
		mcp_child_fail(st, MCP_STEP_SETUP, 0);
	if (prog < 0)
		close(MCP_CHILD_PROGRAM_FD);
	if (rules < 0)
		close(MCP_CHILD_RULESET_FD);
	mcp_child_close_from(MCP_CHILD_FIRST_FREE);
	mcp_confine_moved(sp->confine, prog, rules);
	return st;
}

/*
 * Its own session (so no terminal and no group of the engine's), limits,
 * umask 077, clean signals; then confinement, proven before anything of the server
 * runs; the working directory as the upstream's user; exec.
 */
static void __attribute__((noreturn))
mcp_child(const struct mcp_spawn *sp)
{
	struct rlimit core = { 0, 0 };
	enum mcp_confine_step cs;
	int st = mcp_child_fds(sp), prog;

	if (setsid() < 0 || setrlimit(RLIMIT_CORE, &core) < 0)
		mcp_child_fail(st, MCP_STEP_SETUP, 0);
	umask(077);	/* what it writes is its own, whatever the engine's umask */
	mcp_child_signals();
	cs = mcp_confine_apply(sp->confine);
	if (cs != MCP_CONFINE_OK)
		mcp_child_fail(st, MCP_STEP_CONFINE, (int)cs);
	if (sp->cwd && chdir(sp->cwd) < 0)
		mcp_child_fail(st, MCP_STEP_CWD, 0);
	prog = mcp_confine_program_fd(sp->confine);
	if (prog >= 0)
		execveat(prog, "", sp->argv, sp->envp, AT_EMPTY_PATH);
	else
		execve(sp->argv[0], sp->argv, sp->envp);
	mcp_child_fail(st, MCP_STEP_EXEC, 0);
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
	mcp_confine_free(sp->confine);
	sp->confine = NULL;
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
 * The status pipe closes at exec (success) or carries the child's step and
 * errno. 0: the server runs; -1: it failed before exec or did not get
 * there in time.
 */
static int
mcp_spawn_status(int fd, long long deadline, int *why, enum mcp_spawn_step *step, int *detail)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long left;
	int e[3] = { 0, 0, 0 }, rc;
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
		n = read(fd, e, sizeof e);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return 0;
		*why = n == sizeof e ? e[1] : errno;
		*step = n == sizeof e ? (enum mcp_spawn_step)e[0] : MCP_STEP_SETUP;
		*detail = n == sizeof e ? e[2] : 0;
		return -1;
	}
}

/* Which of the config's paths failed, and how: its names are the operator's. */
static void
mcp_spawn_fail(const struct mcp_client *c, const struct mcp_server_config *cfg,
	       enum mcp_spawn_step step, int why, int detail, struct al_err *err)
{
	const char *prog = cfg->argv.n ? cfg->argv.v[0] : "";
	const char *user = c->confinement.user;
	struct stat st;

	if (step == MCP_STEP_CONFINE)
		al_fail(err, "upstream %s: confinement not enforced (%s)%s%s", c->name,
			mcp_confine_step_name(detail), why ? ": " : "", why ? strerror(why) : "");
	else if (step == MCP_STEP_CWD && why == EACCES && user[0])
		al_fail(err, "upstream %s: %s cannot read %.200s", c->name, user,
			cfg->cwd ? cfg->cwd : "");
	else if (step == MCP_STEP_CWD)
		al_fail(err, "upstream %s: cannot start: its cwd %.200s: %s", c->name,
			cfg->cwd ? cfg->cwd : "", strerror(why));
	else if (step == MCP_STEP_EXEC && stat(prog, &st) == 0 && S_ISDIR(st.st_mode))
		al_fail(err, "upstream %s: cannot start: program %.200s is a directory", c->name, prog);
	else if (step == MCP_STEP_EXEC && why == EACCES && user[0])
		al_fail(err, "upstream %s: %s cannot read %.200s", c->name, user, prog);
	else if (step == MCP_STEP_EXEC)
		al_fail(err, "upstream %s: cannot start: program %.200s: %s", c->name, prog,
			strerror(why));
	else
		al_fail(err, "upstream %s: cannot start%s%s", c->name, why ? ": " : "",
			why ? strerror(why) : "");
}

int
mcp_spawn(struct mcp_client *c, const struct mcp_server_config *cfg, struct al_err *err)
{
	struct mcp_spawn sp = {
		.in = { -1, -1 }, .out = { -1, -1 }, .err = { -1, -1 }, .status = { -1, -1 },
	};
	enum mcp_spawn_step step = MCP_STEP_SETUP;
	int rc = -1, why = 0, detail = 0;

	if (mcp_confine_prepare(c->name, &cfg->confine, &cfg->argv, &sp.confine, err) < 0)
		return -1;
	c->confinement = *mcp_confine_receipt(sp.confine);
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
	/*
	 * The child's setsid makes its group; the status pipe closes only at
	 * exec, so the group exists before this returns (no setpgid here: a
	 * group leader cannot setsid).
	 */
	mcp_close_fd(&sp.status[1]);
	if (mcp_spawn_status(sp.status[0], clock_mono_ms() + c->init_ms, &why, &step, &detail) < 0)
		goto out;
	c->in_fd = sp.in[1];
	c->out_fd = sp.out[0];
	c->err_fd = sp.err[0];
	sp.in[1] = sp.out[0] = sp.err[0] = -1;
	rc = 0;
out:
	mcp_spawn_close(&sp);
	if (rc < 0)
		mcp_spawn_fail(c, cfg, step, why, detail, err);
	return rc;
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

bool
mcp_exited(struct mcp_client *c, long ms, char *how, size_t cap)
{
	long long deadline = clock_mono_ms() + ms;
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof si);
		if (c->pid <= 0 || waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
			return false;
		if (si.si_pid == c->pid)
			break;
		if (clock_mono_ms() >= deadline)
			return false;
		mcp_discard(c, 5);
	}
	if (si.si_code == CLD_EXITED)
		snprintf(how, cap, "exited with status %d", si.si_status);
	else
		snprintf(how, cap, "was killed by signal %d (%s)", si.si_status,
			 strsignal(si.si_status));
	return true;
}

static void
mcp_signal(struct mcp_client *c, int sig)
{
	if (kill(-c->pid, sig) < 0 && errno == ESRCH)
		kill(c->pid, sig);
}

void
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
