#include "mcp_confine_int.h"

#include "mutant.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * getpwnam_r's and getgrnam_r's room, on the heap: on a session's worker
 * thread two nested lookups would take 32 kB of a stack that stays touched
 * for the session's life.
 */
#define PW_BUF		16384
#define CAP_LOOP_MAX	64	/* PR_CAPBSET_DROP answers EINVAL past the last one */

/* --- the user, in the parent ---------------------------------------------- */

static bool
in_docker_group(const struct passwd *pw)
{
	char *buf = malloc(PW_BUF);
	struct group gr, *g = NULL;
	bool in = false;
	char **m;

	if (!buf || getgrnam_r("docker", &gr, buf, PW_BUF, &g) != 0 || !g) {
		free(buf);
		return false;
	}
	in = pw->pw_gid == g->gr_gid;
	for (m = g->gr_mem; !in && m && *m; m++)
		in = strcmp(*m, pw->pw_name) == 0;
	free(buf);
	return in;
}

/* Refusals name the opt-in, so the operator sees it is one. */
static int
user_allowed(const struct passwd *pw, bool privileged, struct al_err *err)
{
	if (privileged)
		return 0;
	if (pw->pw_uid == 0 || pw->pw_gid == 0)
		return al_fail(err, "root is not allowed (\"privileged\": true opts in)");
	if (pw->pw_uid == geteuid())	/* its control socket takes that uid for the engine */
		return al_fail(err, "the engine's own user is not allowed (\"privileged\": true "
			       "opts in)");
	if (in_docker_group(pw))
		return al_fail(err, "a member of the docker group is not allowed "
			       "(\"privileged\": true opts in)");
	return 0;
}

int
mcp_confine_check_user(const char *user, bool privileged, struct al_err *err)
{
	char *buf = malloc(PW_BUF);
	struct passwd pw, *p = NULL;
	int rc;

	if (!buf)
		return al_fail(err, "out of memory");
	if (getpwnam_r(user, &pw, buf, PW_BUF, &p) != 0 || !p)
		rc = al_fail(err, "no such user %.64s", user);
	else
		rc = user_allowed(p, privileged, err);
	free(buf);
	return rc;
}

/* Whether the calling thread holds cap in its effective set. */
static bool
cap_effective(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective & (1U << (cap % 32))) != 0;
}

bool
mcp_confine_can_change_ids(void)
{
	return cap_effective(CAP_SETUID) && cap_effective(CAP_SETGID);
}

/*
 * An engine without CAP_SETUID and CAP_SETGID cannot change uid. Its
 * upstream keeps the engine's uid, gid and groups: refused if those hold
 * the docker group (the airlock service's own user does: the unit lost
 * its capabilities, and the upstream must not silently run as it). Nor
 * may it make a unix socket: Landlock does not govern connecting to a
 * pathname socket, and the engine's own (its control socket, a rootless
 * Docker's) take the engine's uid for the engine (socketpair stays).
 */
static int
keep_engine_ids(struct mcp_confine *cf, bool privileged, struct al_err *err)
{
	char *buf;
	struct group gr, *g = NULL;
	gid_t groups[256], docker;
	int n = getgroups(256, groups), i;

	cf->uid = getuid();
	cf->gid = getgid();
	cf->unix_closed = !privileged;
	if (privileged)
		return 0;
	if (!(buf = malloc(PW_BUF)))
		return al_fail(err, "upstream %s: out of memory", cf->name);
	if (getgrnam_r("docker", &gr, buf, PW_BUF, &g) != 0 || !g) {
		free(buf);
		return 0;
	}
	docker = g->gr_gid;
	free(buf);
	for (i = 0; i < n; i++)
		if (groups[i] == docker)
			break;
	if (getegid() == docker || (n > 0 && i < n))
		return al_fail(err, "upstream %s: the engine is in the docker group without "
			       "CAP_SETUID and CAP_SETGID: it cannot drop that group for the "
			       "upstream", cf->name);
	return 0;
}

/*
 * An engine that changes uid must also empty the upstream's bounding set,
 * which takes CAP_SETPCAP, and be able to signal a process of another
 * uid, which takes CAP_KILL: without it a stop, and the parent-death
 * signal, answer EPERM and an upstream that ignores EOF runs on after its
 * session (root has both; the unit grants both).
 */
static int
check_caps(const struct mcp_confine *cf, struct al_err *err)
{
	if (!cap_effective(CAP_SETPCAP))
		return al_fail(err, "upstream %s: the engine holds CAP_SETUID but not CAP_SETPCAP: "
			       "it cannot drop the upstream's bounding set", cf->name);
	if (!cap_effective(CAP_KILL) && !confine_mutant(cf, "kill_unchecked"))
		return al_fail(err, "upstream %s: the engine holds CAP_SETUID but not CAP_KILL: "
			       "it could not stop the upstream", cf->name);
	return 0;
}

/* The named user's ids, held to user_allowed. */
static int
user_ids(struct mcp_confine *cf, const char *user, const struct mcp_confine_config *cfg,
	 char *buf, struct al_err *err)
{
	struct passwd pw, *p = NULL;
	struct al_err why;

	if ((getpwnam_r(user, &pw, buf, PW_BUF, &p) != 0 || !p) && !cfg->user)
		return al_fail(err, "upstream %s: user %s does not exist: run scripts/setup or: "
			       "useradd --system %s", cf->name, user, user);
	if (!p)
		return al_fail(err, "upstream %s: user %.64s does not exist", cf->name, user);
	if (user_allowed(p, cfg->privileged, &why) < 0)
		return al_fail(err, "upstream %s: user %.64s: %s", cf->name, user, why.msg);
	cf->uid = p->pw_uid;
	cf->gid = p->pw_gid;
	return 0;
}

static int
resolve_ids(struct mcp_confine *cf, const struct mcp_confine_config *cfg, struct al_err *err)
{
	const char *user = cfg->user ? cfg->user : MCP_CONFINE_USER;
	char *buf;
	int rc;

	cf->change_ids = mcp_confine_can_change_ids() && !confine_mutant(cf, "keep_root");
	if (!cf->change_ids)
		return keep_engine_ids(cf, cfg->privileged, err);
	if (check_caps(cf, err) < 0)
		return -1;
	if (!(buf = malloc(PW_BUF)))
		return al_fail(err, "upstream %s: out of memory", cf->name);
	rc = user_ids(cf, user, cfg, buf, err);
	free(buf);
	if (rc < 0)
		return -1;
	snprintf(cf->receipt.user, sizeof cf->receipt.user, "%s", user);
	if (cfg->session_uid > 0 && strcmp(user, MCP_CONFINE_USER) == 0) {
		/* The test build's mutant shares the user's uid, bounded alike. */
		if (!confine_mutant(cf, "shared_uid"))
			cf->uid = cfg->session_uid;
		cf->tasks = cf->receipt.tasks = MCP_UPSTREAM_TASKS;
		cf->receipt.session_uid = true;
	}
	return 0;
}

/* --- preparing, in the parent -------------------------------------------- */

/* ELF programs run from a descriptor the parent opened; scripts by path. */
static void
open_program(struct mcp_confine *cf, const char *path)
{
	char magic[2];
	struct stat st;

	/* Non-blocking: a FIFO named as the program must not hold the spawn. */
	cf->program_fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (cf->program_fd < 0)
		return;		/* exec by path reports the error as before */
	if (fstat(cf->program_fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread(cf->program_fd, magic, 2, 0) != 2 || (magic[0] == '#' && magic[1] == '!')) {
		close(cf->program_fd);
		cf->program_fd = -1;
	}
}

static void
ports_text(char *out, size_t cap, const uint16_t *v, size_t n)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%u", i ? "," : "", v[i]);
	if (n == 0)
		snprintf(out, cap, "-");
}

static void
receipt_network(struct mcp_confine_receipt *r, const struct mcp_confine_config *cfg)
{
	char c[40], b[40];

	if (!cfg->network) {
		snprintf(r->network, sizeof r->network, "none");
		return;
	}
	ports_text(c, sizeof c, cfg->connect, cfg->n_connect);
	ports_text(b, sizeof b, cfg->bind, cfg->n_bind);
	snprintf(r->network, sizeof r->network, "connect %s bind %s udp %s", c, b,
		 cfg->udp ? "yes" : "no");
}

void
mcp_confine_plan(const struct mcp_confine_config *cfg, struct mcp_confine_receipt *r)
{
	memset(r, 0, sizeof *r);
	r->privileged = cfg->privileged;
	r->unconfined_ok = cfg->unconfined_ok;
	r->paths_ro = (unsigned)cfg->ro.n;
	r->paths_rw = (unsigned)cfg->rw.n;
	receipt_network(r, cfg);
	/* The upstream user (shared), its own ruleset and filter; the engine's namespaces (#41). */
	snprintf(r->isolation, sizeof r->isolation, "process");
}

static struct mcp_confine *
confine_new(const char *name, const char *kind)
{
	struct mcp_confine *cf = calloc(1, sizeof *cf);

	if (!cf)
		return NULL;
	snprintf(cf->name, sizeof cf->name, "%s", name ? name : "?");
	snprintf(cf->kind, sizeof cf->kind, "%s", kind ? kind : "upstream");
	cf->program_fd = cf->ruleset_fd = -1;
	return cf;
}

int
mcp_confine_prepare(const char *name, const struct mcp_confine_config *cfg,
		    const struct strv *argv, struct mcp_confine **out, struct al_err *err)
{
	struct mcp_confine *cf = confine_new(name, cfg->kind);

	*out = NULL;
	if (!cf)
		return al_fail(err, "upstream: out of memory");
	mcp_confine_plan(cfg, &cf->receipt);
	cf->privileged = cfg->privileged;
	cf->seccomp = !confine_mutant(cf, "no_seccomp");
	cf->prove = !confine_mutant(cf, "no_proof");
	cf->tied = !cfg->outlives_starter;
	cf->tie = cf->tied && !confine_mutant(cf, "no_deathsig");
	if (resolve_ids(cf, cfg, err) < 0 || mcp_landlock_prepare(cf, cfg, argv, err) < 0 ||
	    mcp_seccomp_prepare(cf, cfg, err) < 0) {
		mcp_confine_free(cf);
		return -1;
	}
	cf->receipt.uid = cf->uid;
	cf->receipt.gid = cf->gid;
	cf->receipt.uid_changed = cf->change_ids;
	open_program(cf, argv->v[0]);
	*out = cf;
	return 0;
}

void
mcp_confine_free(struct mcp_confine *cf)
{
	if (!cf)
		return;
	if (cf->program_fd >= 0)
		close(cf->program_fd);
	if (cf->ruleset_fd >= 0)
		close(cf->ruleset_fd);
	free(cf->prog.filter);
	free(cf);
}

const struct mcp_confine_receipt *
mcp_confine_receipt(const struct mcp_confine *cf)
{
	return &cf->receipt;
}

int
mcp_confine_program_fd(const struct mcp_confine *cf)
{
	return cf->program_fd;
}

int
mcp_confine_ruleset_fd(const struct mcp_confine *cf)
{
	return cf->ruleset_fd;
}

void
mcp_confine_moved(struct mcp_confine *cf, int program_fd, int ruleset_fd)
{
	cf->program_fd = program_fd;
	cf->ruleset_fd = ruleset_fd;
}

/* --- what an upstream got, as the console and the commands show it --------- */

void
mcp_confine_view(const char *name, const struct mcp_confine_receipt *r, bool started,
		 const char *cfg_user, struct upstream_view *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name ? name : "?");
	out->started = started;
	snprintf(out->user, sizeof out->user, "%s",
		 started ? r->user : cfg_user ? cfg_user : MCP_CONFINE_USER);
	out->uid = started ? (uint32_t)r->uid : 0;
	out->gid = started ? (uint32_t)r->gid : 0;
	out->uid_changed = started && r->uid_changed;
	out->landlock_abi = started ? r->landlock_abi : 0;
	out->landlock_rules = started ? r->landlock_rules : 0;
	out->paths_ro = r->paths_ro;
	out->paths_rw = r->paths_rw;
	if (started)
		snprintf(out->seccomp, sizeof out->seccomp, "%.*s", SNAP_HASH_PREFIX,
			 r->seccomp_sha256);
	snprintf(out->network, sizeof out->network, "%s", r->network);
	snprintf(out->isolation, sizeof out->isolation, "%s", r->isolation);
	out->privileged = r->privileged;
	out->unconfined_ok = r->unconfined_ok;
}

static void
text_landlock(const struct upstream_view *u, char *out, size_t cap)
{
	if (!u->started)
		snprintf(out, cap, "landlock - (ro %u, rw %u)", u->paths_ro, u->paths_rw);
	else if (u->landlock_abi == 0)
		snprintf(out, cap, "landlock none (ro %u, rw %u)", u->paths_ro, u->paths_rw);
	else
		snprintf(out, cap, "landlock ABI %d, %u rules (ro %u, rw %u)", u->landlock_abi,
			 u->landlock_rules, u->paths_ro, u->paths_rw);
}

char *
mcp_confine_text(const struct upstream_view *u, char *out, size_t cap)
{
	char user[SNAP_USER_MAX + 40], ll[96];
	const char *marks = upstream_view_marks(u);

	text_landlock(u, ll, sizeof ll);
	snprintf(out, cap, "%s  %s  seccomp %s  network %s  isolation %s%s%s",
		 upstream_view_who(u, user, sizeof user), ll,
		 u->seccomp[0] ? u->seccomp : "-", u->network, u->isolation, marks ? "  " : "",
		 marks ? marks : "");
	return out;
}

/* --- in the child: system calls only --------------------------------------- */

/*
 * The bounding set first (dropping needs CAP_SETPCAP, gone after a setuid
 * from root), then the ids; an engine that cannot change ids has no
 * bounding set worth dropping and may not: EPERM there is not a failure.
 * A non-root engine with the capabilities keeps them across setresuid:
 * mcp_caps_drop empties every set after.
 */
static int
drop_ids(const struct mcp_confine *cf)
{
	int cap;

	for (cap = 0; cap < CAP_LOOP_MAX; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			if (cf->change_ids)
				return -1;
		}
	struct rlimit tasks = { cf->tasks, cf->tasks };

	if (cf->tasks > 0 && setrlimit(RLIMIT_NPROC, &tasks) < 0)
		return -1;
	if (cf->tasks > 0)
		umask(007);	/* what it makes in paths.rw its group's too: the next session's uid differs */
	if (cf->change_ids && (setgroups(0, NULL) < 0 || setresgid(cf->gid, cf->gid, cf->gid) < 0 ||
			       setresuid(cf->uid, cf->uid, cf->uid) < 0))
		return -1;
	return 0;
}

int
mcp_caps_drop(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof d);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	return (int)syscall(SYS_capset, &h, d);
}

bool
mcp_caps_left(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return true;
	return (d[0].effective | d[1].effective | d[0].permitted | d[1].permitted) != 0;
}

/* The forbidden TCP connect: Landlock must refuse it (EACCES), not the peer. */
static int
probe_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, e;

	if (s < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = connect(s, (struct sockaddr *)&a, sizeof a);
	e = errno;
	close(s);
	errno = rc == 0 ? 0 : e;
	return rc == 0 || e != EACCES ? -1 : 0;
}

/* A descriptor that should not have been given: 0 when it was refused with want. */
static int
refused_with(int fd, int want)
{
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = fd >= 0 ? 0 : e;
	return fd < 0 && e == want ? 0 : -1;
}

/* "/" is beneath no rule (the lists never name it): reading it must be refused. */
static int
probe_open(void)
{
	return refused_with(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
}

/* A filtered call that the kernel would fail otherwise (EFAULT), not with EPERM. */
static int
probe_filtered(void)
{
	long rc = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0UL);
	int e = errno;

	errno = rc >= 0 ? 0 : e;
	return rc < 0 && e == EPERM ? 0 : -1;
}

/* An upstream that keeps the engine's uid: no unix socket of its own (EPERM). */
static int
probe_unix(void)
{
	return refused_with(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
}

/* No TCP rules on this kernel and no network in the config: no inet socket (EPERM). */
static int
probe_inet(void)
{
	return refused_with(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
}

/*
 * Nothing it starts may leave the group. setpgid with a negative group
 * answers EINVAL before anything else, so the filter's EPERM is told
 * apart here, in the child (setsid, in the same rule, answers EPERM to a
 * session leader either way: the mutant removes both).
 */
static int
probe_group(void)
{
	long rc = syscall(SYS_setpgid, 0, -1);
	int e = errno;

	errno = rc >= 0 ? 0 : e;
	return rc < 0 && e == EPERM ? 0 : -1;
}

/* RLIMIT_NPROC is n, soft and hard. */
static bool
tasks_bounded(unsigned long n)
{
	struct rlimit r;

	return getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur == n && r.rlim_max == n;
}

/* The parent-death signal is SIGKILL (a change of ids clears it: set after them). */
static bool
tied_to_starter(void)
{
	int sig = 0;

	errno = 0;
	return prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) == 0 && sig == SIGKILL;
}

/*
 * Dies with the thread that started it (the session's, or the engine
 * whatever ends it; the kernel checks the dying thread may signal it:
 * CAP_KILL, check_caps). Its stdin is the starter's pipe, written to only
 * after exec: a hang-up already means the starter died before the signal
 * was set, and the child goes too.
 */
static int
tie_to_starter(void)
{
	struct pollfd in = { .fd = 0, .events = POLLIN };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -1;
	if (poll(&in, 1, 0) > 0 && (in.revents & (POLLHUP | POLLERR))) {
		errno = EPIPE;
		return -1;
	}
	return 0;
}

/*
 * What was intended, not what was done, is checked: a protection that
 * silently did not take (or a mutant that removed it) is caught here.
 */
static enum mcp_confine_step
prove(const struct mcp_confine *cf)
{
	if (!cf->prove)
		return MCP_CONFINE_OK;
	if (!cf->privileged && (getuid() == 0 || geteuid() == 0)) {
		errno = 0;
		return MCP_CONFINE_CHECK_UID;
	}
	if (mcp_caps_left()) {
		errno = 0;
		return MCP_CONFINE_CHECK_CAPS;
	}
	if (cf->tasks > 0 && !tasks_bounded(cf->tasks)) {
		errno = 0;
		return MCP_CONFINE_CHECK_TASKS;
	}
	if (cf->landlock && probe_open() < 0)
		return MCP_CONFINE_CHECK_FS;
	if (cf->net_due && probe_connect(cf->probe_port) < 0)
		return MCP_CONFINE_CHECK_NET;
	if (cf->inet_closed && probe_inet() < 0)
		return MCP_CONFINE_CHECK_NET;
	if (probe_filtered() < 0)
		return MCP_CONFINE_CHECK_SYSCALL;
	if (cf->unix_closed && probe_unix() < 0)
		return MCP_CONFINE_CHECK_UNIX;
	if (probe_group() < 0)
		return MCP_CONFINE_CHECK_GROUP;
	if (cf->tied && !tied_to_starter())
		return MCP_CONFINE_TIE;
	return MCP_CONFINE_OK;
}

enum mcp_confine_step
mcp_confine_apply(const struct mcp_confine *cf)
{
	if (drop_ids(cf) < 0 || mcp_caps_drop() < 0)
		return MCP_CONFINE_IDS;
	if (cf->tie && tie_to_starter() < 0)
		return MCP_CONFINE_TIE;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return MCP_CONFINE_NNP;
	if (cf->ruleset_fd >= 0) {
		if (mcp_landlock_restrict(cf->ruleset_fd) < 0)
			return MCP_CONFINE_LANDLOCK;
		close(cf->ruleset_fd);
	}
	if (cf->seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &cf->prog) < 0)
		return MCP_CONFINE_SECCOMP;
	return prove(cf);
}

const char *
mcp_confine_step_name(int step)
{
	static const char *const names[] = {
		[MCP_CONFINE_OK] = "none",
		[MCP_CONFINE_IDS] = "uid",
		[MCP_CONFINE_NNP] = "no_new_privs",
		[MCP_CONFINE_LANDLOCK] = "landlock",
		[MCP_CONFINE_SECCOMP] = "seccomp",
		[MCP_CONFINE_CHECK_FS] = "landlock fs",
		[MCP_CONFINE_CHECK_NET] = "landlock net",
		[MCP_CONFINE_CHECK_SYSCALL] = "seccomp",
		[MCP_CONFINE_CHECK_UID] = "uid",
		[MCP_CONFINE_CHECK_CAPS] = "capabilities",
		[MCP_CONFINE_CHECK_TASKS] = "task limit",
		[MCP_CONFINE_CHECK_UNIX] = "unix socket",
		[MCP_CONFINE_CHECK_GROUP] = "process group",
		[MCP_CONFINE_TIE] = "parent-death signal",
	};

	if (step < 0 || (size_t)step >= sizeof names / sizeof names[0])
		return "unknown";
	return names[step];
}
