#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "mcp.h"

#include "scratch.h"

/*
 * Upstream confinement (engine/mcp/mcp_confine.h) against a real hostile
 * MCP server (tests/fixtures/hostile_upstream, AIRLOCK_HOSTILE): every power
 * it tries fails, and the observers (a unix listener standing in for the
 * Docker socket, TCP and UDP listeners on 127.0.0.1, an audit-database-like
 * file) see nothing. For each protection a mutant (this binary links the
 * -DAIRLOCK_MUTANTS engine) removes it, and its power comes back at its
 * observer; the same mutant without upstream_no_proof is caught at spawn.
 * Runs as root (CI does); otherwise it skips.
 */

static const char *const attempts[] = {
	"engine_fd", "docker_sock", "stand_in_sock", "audit_db", "shadow", "proc1_environ", "engine_environ",
	"engine_mem", "etc_write", "kill_engine", "ptrace", "tcp", "udp", "packet", "io_uring",
	"escape", "mount", "userns", NULL,
};

struct obs {
	char dir[64], sock[96], db[96];
	int unix_fd, tcp_fd, udp_fd;
	int tcp_port, udp_port;
	struct mcp_server_config cfg;
	struct mcp_client *c;
	struct mcp_client *neighbour;	/* another session's upstream, same uid */
	json_t *got;		/* the attempt's report */
};

#define NEIGHBOUR_SHM_KEY	0x41495231	/* the fixture's */
#define IOPRIO_WHO_PROCESS	1
/* sys/shm.h's IPC_PRIVATE clashes with profile.h's: the calls, by number */
#define SHM_FIND(key)		((int)syscall(SYS_shmget, (key), 0, 0))
#define SHM_RMID		0

static int
listen_inet(int type, int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int s = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(s, 8), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

/* As /var/run/docker.sock is: root's, 0660, in a directory anyone may pass. */
static int
listen_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(chmod(path, 0660), 0);
	assert_int_equal(listen(s, 8), 0);
	return s;
}

static void
push(struct strv *s, const char *v)
{
	assert_int_equal(strv_push(s, v), 0);
}

static int
obs_setup(void **state)
{
	struct obs *o = calloc(1, sizeof *o);
	char port[16];
	int fd;

	if (!o)
		return -1;
	scratch_make(o->dir, sizeof o->dir, "confine");
	assert_int_equal(chmod(o->dir, 0711), 0);
	snprintf(o->sock, sizeof o->sock, "%s/docker.sock", o->dir);
	snprintf(o->db, sizeof o->db, "%s/audit.db", o->dir);
	/* writable by anyone: only the upstream's ruleset stands in the way */
	fd = open(o->db, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(o->db, 0666), 0);
	o->unix_fd = listen_unix(o->sock);
	o->tcp_fd = listen_inet(SOCK_STREAM, &o->tcp_port);
	o->udp_fd = listen_inet(SOCK_DGRAM, &o->udp_port);
	o->cfg.name = "hostile";
	push(&o->cfg.argv, getenv("AIRLOCK_HOSTILE"));
	push(&o->cfg.argv, "--unix");
	push(&o->cfg.argv, o->sock);
	push(&o->cfg.argv, "--db");
	push(&o->cfg.argv, o->db);
	snprintf(port, sizeof port, "%d", o->tcp_port);
	push(&o->cfg.argv, "--tcp");
	push(&o->cfg.argv, port);
	snprintf(port, sizeof port, "%d", o->udp_port);
	push(&o->cfg.argv, "--udp");
	push(&o->cfg.argv, port);
	push(&o->cfg.env, "PATH=/usr/bin:/bin");
	o->cfg.init_timeout_ms = 5000;
	o->cfg.call_timeout_ms = 5000;
	*state = o;
	return 0;
}

static int
obs_teardown(void **state)
{
	struct obs *o = *state;
	json_int_t pid = json_integer_value(json_object_get(o->got, "escape_pid"));

	mcp_stop(o->c);
	mcp_stop(o->neighbour);
	/* A mutant's SysV segment would outlive everything: not past the test. */
	if (SHM_FIND(NEIGHBOUR_SHM_KEY) >= 0)
		syscall(SYS_shmctl, SHM_FIND(NEIGHBOUR_SHM_KEY), SHM_RMID, NULL);
	/* A mutant's child that left the group would linger its 30 s: not past the test. */
	if (pid > 1 && json_is_string(json_object_get(o->got, "escape")) &&
	    strcmp(json_string_value(json_object_get(o->got, "escape")), "ok") == 0)
		kill((pid_t)pid, SIGKILL);
	json_decref(o->got);
	strv_free(&o->cfg.argv);
	strv_free(&o->cfg.env);
	close(o->unix_fd);
	close(o->tcp_fd);
	close(o->udp_fd);
	unlink("/etc/airlock-hostile-probe");	/* only a broken run leaves it */
	scratch_remove(o->dir);
	free(o);
	unsetenv("AIRLOCK_MUTANT");
	return 0;
}

static bool
as_root(void)
{
	if (geteuid() == 0 && getpwnam(MCP_CONFINE_USER))
		return true;
	print_message("SKIPPED: needs root and the %s user (scripts/setup)\n", MCP_CONFINE_USER);
	return false;
}

/* Start the hostile server (under AIRLOCK_MUTANT=mutant) and run its one tool. */
static void
run_attempt(struct obs *o, const char *mutant)
{
	struct mcp_call_result res;
	struct al_err err = { "" };

	if (mutant)
		setenv("AIRLOCK_MUTANT", mutant, 1);
	if (mcp_start(&o->cfg, &o->c, &err) < 0)
		fail_msg("mcp_start: %s", err.msg);
	unsetenv("AIRLOCK_MUTANT");
	assert_int_equal(mcp_call(o->c, "attempt", NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, MCP_OK);
	print_message("%s: %s\n", mutant ? mutant : "confined", res.text);
	o->got = json_loads(res.text, 0, NULL);
	assert_non_null(o->got);
	mcp_call_result_free(&res);
}

static const char *
got(const struct obs *o, const char *what)
{
	const char *v = json_string_value(json_object_get(o->got, what));

	assert_non_null(v);
	return v;
}

/* Anything waiting at a listener: a connection, a datagram. */
static bool
tcp_seen(const struct obs *o)
{
	int s = accept(o->tcp_fd, NULL, NULL);

	if (s >= 0)
		close(s);
	return s >= 0;
}

static bool
unix_seen(const struct obs *o)
{
	int s = accept(o->unix_fd, NULL, NULL);

	if (s >= 0)
		close(s);
	return s >= 0;
}

static bool
udp_seen(const struct obs *o)
{
	char b[8];

	return recv(o->udp_fd, b, sizeof b, MSG_DONTWAIT) >= 0;
}

static bool
db_written(const struct obs *o)
{
	struct stat st;

	assert_int_equal(stat(o->db, &st), 0);
	return st.st_size > 0;
}

/* pid runs (not a zombie) all through the next ms: false once it is seen gone. */
static bool
running(long long pid, int ms)
{
	char path[64], st[256], *p;
	FILE *f;
	int i;

	assert_true(pid > 1);
	snprintf(path, sizeof path, "/proc/%lld/stat", pid);
	for (i = 0; i <= ms / 50; i++) {
		if (!(f = fopen(path, "re")))
			return false;
		p = fgets(st, sizeof st, f) ? strrchr(st, ')') : NULL;
		fclose(f);
		if (!p || p[2] == 'Z' || p[2] == 'X')
			return false;
		if (i < ms / 50)
			usleep(50 * 1000);
	}
	return true;
}

/* The hostile server's lingering child. */
static bool
escaped_alive(const struct obs *o, int ms)
{
	return running(json_integer_value(json_object_get(o->got, "escape_pid")), ms);
}

static void
test_hostile_gets_nothing(void **state)
{
	struct obs *o = *state;
	const struct mcp_confine_receipt *r;
	size_t i;

	if (!as_root())
		skip();
	umask(0);	/* the engine's umask is not the upstream's */
	run_attempt(o, NULL);
	umask(022);
	assert_string_equal(got(o, "umask"), "0077");
	for (i = 0; attempts[i]; i++)
		if (strcmp(got(o, attempts[i]), "ok") == 0)
			fail_msg("the confined upstream could: %s", attempts[i]);
	assert_false(tcp_seen(o));
	assert_false(udp_seen(o));
	assert_false(unix_seen(o));
	assert_false(db_written(o));
	assert_int_equal(access("/etc/airlock-hostile-probe", F_OK), -1);
	r = mcp_confinement(o->c);
	assert_int_equal(r->uid, getpwnam(MCP_CONFINE_USER)->pw_uid);
	assert_true(r->uid_changed);
	assert_string_equal(r->user, MCP_CONFINE_USER);
	assert_true(r->landlock_abi >= MCP_LANDLOCK_ABI_MIN);
	assert_true(r->landlock_rules > 0);
	assert_int_equal(strlen(r->seccomp_sha256), HASH_HEX_LEN);
	assert_string_equal(r->network, "none");
	assert_false(r->privileged);
	/* Its child tried to leave the group and lingers in it: the stop ends it. */
	mcp_stop(o->c);
	o->c = NULL;
	assert_false(escaped_alive(o, 2000));
}

/* setsid and setpgid allowed: the child leaves the group, and outlives the stop. */
static void
test_mutant_new_group(void **state)
{
	struct obs *o = *state;
	json_int_t pid;

	if (!as_root())
		skip();
	run_attempt(o, "upstream_new_group,upstream_no_proof");
	assert_string_equal(got(o, "escape"), "ok");
	mcp_stop(o->c);
	o->c = NULL;
	assert_true(escaped_alive(o, 1000));
	pid = json_integer_value(json_object_get(o->got, "escape_pid"));
	assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
}

/*
 * Each protection removed: its power comes back at its observer. Root
 * kept reads /etc/shadow; the root-owned socket also needs the rule an
 * upstream keeping its engine's uid has (no unix socket) removed.
 */
static void
test_mutant_keep_root(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	run_attempt(o, "upstream_keep_root,upstream_no_proof");
	assert_string_equal(got(o, "shadow"), "ok");
	assert_string_equal(got(o, "stand_in_sock"), "EPERM");
	assert_false(unix_seen(o));
	assert_int_equal(mcp_confinement(o->c)->uid, 0);
	mcp_stop(o->c);
	json_decref(o->got);
	run_attempt(o, "upstream_keep_root,upstream_same_uid_unix,upstream_no_proof");
	assert_string_equal(got(o, "stand_in_sock"), "ok");
	assert_true(unix_seen(o));
}

static void
test_mutant_no_seccomp(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	run_attempt(o, "upstream_no_seccomp,upstream_no_proof");
	assert_string_equal(got(o, "io_uring"), "ok");
	assert_string_equal(got(o, "userns"), "ok");
}

/*
 * A second confined upstream of the same uid, as another session's is,
 * idle after its handshake; the hostile one (started next) is told its pid.
 */
static pid_t
start_neighbour(struct obs *o)
{
	struct al_err err = { "" };
	char pid[16];

	if (mcp_start(&o->cfg, &o->neighbour, &err) < 0)
		fail_msg("mcp_start (neighbour): %s", err.msg);
	assert_true(mcp_pid(o->neighbour) > 1);
	snprintf(pid, sizeof pid, "%d", (int)mcp_pid(o->neighbour));
	push(&o->cfg.argv, "--neighbour");
	push(&o->cfg.argv, pid);
	return mcp_pid(o->neighbour);
}

/* What the neighbour's kernel state says was done to it, read as root. */
struct neighbour_state {
	long long nofile;
	int nice, ioprio, cpus;
	bool shm;
};

/* Its soft file limit, from /proc (prlimit on another uid takes CAP_SYS_RESOURCE). */
static long long
limits_nofile(pid_t pid)
{
	char path[64], line[256];
	long long soft = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "Max open files", 14) == 0 && sscanf(line + 14, "%lld", &soft) != 1)
			soft = -1;
	fclose(f);
	assert_true(soft > 0);
	return soft;
}

static struct neighbour_state
neighbour_state(pid_t pid)
{
	struct neighbour_state st = { 0 };
	cpu_set_t set;

	st.nofile = limits_nofile(pid);
	errno = 0;
	st.nice = getpriority(PRIO_PROCESS, (id_t)pid);
	assert_int_equal(errno, 0);
	st.ioprio = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, pid);
	assert_true(st.ioprio >= 0);
	assert_int_equal(sched_getaffinity(pid, sizeof set, &set), 0);
	st.cpus = CPU_COUNT(&set);
	st.shm = SHM_FIND(NEIGHBOUR_SHM_KEY) >= 0;
	return st;
}

static const char *const neighbour_attempts[] = {
	"neighbour_rlimit", "neighbour_nice", "uid_nice", "neighbour_ioprio", "neighbour_cpus",
	"sysv_shm", NULL,
};

/*
 * Every session's upstreams share one uid, and the uid alone decides a
 * pid's limits, priority, I/O class and CPUs, and the SysV objects: the
 * filter leaves an upstream its own (pid 0) and no SysV IPC. Landlock
 * already scopes /proc, ptrace and signals to each upstream's domain.
 */
static void
test_neighbour_untouched(void **state)
{
	struct obs *o = *state;
	struct neighbour_state before, after;
	pid_t pid;
	size_t i;

	if (!as_root())
		skip();
	if (SHM_FIND(NEIGHBOUR_SHM_KEY) >= 0)
		fail_msg("a SysV segment with the test's key exists before the test");
	pid = start_neighbour(o);
	before = neighbour_state(pid);
	run_attempt(o, NULL);
	for (i = 0; neighbour_attempts[i]; i++)
		assert_string_equal(got(o, neighbour_attempts[i]), "EPERM");
	assert_string_equal(got(o, "neighbour_environ"), "EACCES");	/* Landlock's domain */
	after = neighbour_state(pid);
	assert_int_equal(after.nofile, before.nofile);
	assert_int_equal(after.nice, before.nice);
	assert_int_equal(after.ioprio, before.ioprio);
	assert_int_equal(after.cpus, before.cpus);
	assert_false(after.shm);
	assert_true(before.nofile != 17 && before.nice != 19);
}

/* The same without the filter: the neighbour's state changes under it. */
static void
test_mutant_no_seccomp_reaches_neighbour(void **state)
{
	struct obs *o = *state;
	struct neighbour_state after;
	pid_t pid;

	if (!as_root())
		skip();
	pid = start_neighbour(o);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		print_message("one CPU: the neighbour's CPU set cannot shrink\n");
	run_attempt(o, "upstream_no_seccomp,upstream_no_proof");
	after = neighbour_state(pid);
	assert_string_equal(got(o, "neighbour_rlimit"), "ok");
	assert_int_equal(after.nofile, 17);
	assert_int_equal(after.nice, 19);
	assert_string_equal(got(o, "neighbour_ioprio"), "ok");
	assert_int_equal(after.ioprio, 3 << 13);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		assert_int_equal(after.cpus, 1);
	assert_string_equal(got(o, "sysv_shm"), "ok");
	assert_true(after.shm);
}

static void
test_mutant_no_landlock_fs(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	run_attempt(o, "upstream_no_landlock_fs,upstream_no_proof");
	assert_string_equal(got(o, "audit_db"), "ok");
	assert_true(db_written(o));
}

static void
test_mutant_no_landlock_net(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	run_attempt(o, "upstream_no_landlock_net,upstream_no_proof");
	assert_string_equal(got(o, "tcp"), "ok");
	assert_true(tcp_seen(o));
}

/* The proof at spawn: each protection missing is a refusal, not a server. */
static void
refused(struct obs *o, const char *mutant, const char *want)
{
	struct al_err err = { "" };
	char msg[128];

	setenv("AIRLOCK_MUTANT", mutant, 1);
	if (mcp_start(&o->cfg, &o->c, &err) == 0)
		fail_msg("%s: the upstream started", mutant);
	unsetenv("AIRLOCK_MUTANT");
	assert_null(o->c);
	snprintf(msg, sizeof msg, "upstream hostile: confinement not enforced (%s)", want);
	assert_memory_equal(err.msg, msg, strlen(msg));
	assert_false(tcp_seen(o));
	assert_false(db_written(o));
}

static void
test_proof_refuses_missing_protection(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	refused(o, "upstream_keep_root", "uid");
	refused(o, "upstream_no_seccomp", "seccomp");
	refused(o, "upstream_no_landlock_fs", "landlock fs");
	refused(o, "upstream_no_landlock_net", "landlock net");
	refused(o, "upstream_new_group", "process group");
	refused(o, "upstream_no_deathsig", "parent-death signal");
}

/* What an engine of its own (below) reports: the upstream's pid, or -1 and why. */
struct hang_report {
	pid_t up;
	char why[256];
};

/* Its effective and permitted CAP_KILL gone: an engine as the unit would run it without it. */
static int
drop_cap_kill(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[CAP_KILL / 32].effective &= ~(1U << (CAP_KILL % 32));
	d[CAP_KILL / 32].permitted &= ~(1U << (CAP_KILL % 32));
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * An engine of its own (a child of this test, as root, without CAP_KILL
 * when asked) starts the fixture upstream in its hang mode (it ignores
 * stdin EOF and SIGTERM). stop: it then stops it (mcp_stop) and exits;
 * else it waits to be killed. Its pid in *engine.
 */
static struct hang_report
hang_engine(const char *mutant, bool without_kill, bool stop, pid_t *engine)
{
	struct mcp_server_config cfg = { .name = "hang", .init_timeout_ms = 5000 };
	struct hang_report r = { .up = -1 };
	struct mcp_client *c = NULL;
	struct al_err err = { "" };
	int p[2];

	assert_non_null(getenv("AIRLOCK_UPSTREAM"));
	assert_int_equal(pipe(p), 0);
	*engine = fork();
	assert_true(*engine >= 0);
	if (*engine == 0) {
		close(p[0]);
		if (mutant)
			setenv("AIRLOCK_MUTANT", mutant, 1);
		if ((without_kill && drop_cap_kill() < 0) ||
		    strv_push(&cfg.argv, getenv("AIRLOCK_UPSTREAM")) < 0 ||
		    strv_push(&cfg.argv, "--sink") < 0 || strv_push(&cfg.argv, "/dev/null") < 0 ||
		    strv_push(&cfg.argv, "--mode") < 0 || strv_push(&cfg.argv, "hang") < 0)
			_exit(2);
		if (mcp_start(&cfg, &c, &err) == 0)
			r.up = mcp_pid(c);
		snprintf(r.why, sizeof r.why, "%s", err.msg);
		if (write(p[1], &r, sizeof r) != sizeof r)
			_exit(3);
		if (stop) {
			mcp_stop(c);
			_exit(0);
		}
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &r, sizeof r), sizeof r);
	close(p[0]);
	print_message("%s: %s\n", mutant ? mutant : "confined", r.up > 0 ? "started" : r.why);
	return r;
}

/* The hang upstream's engine SIGKILLed (no stop runs): its pid. */
static pid_t
upstream_of_killed_engine(const char *mutant)
{
	struct hang_report r;
	pid_t engine;
	int status;

	r = hang_engine(mutant, false, false, &engine);
	assert_true(r.up > 1);
	assert_true(running(r.up, 0));
	assert_int_equal(kill(engine, SIGKILL), 0);
	assert_int_equal(waitpid(engine, &status, 0), engine);
	return r.up;
}

/*
 * Its upstream dies with the engine, however the engine dies (the
 * parent-death signal, SIGKILL): even one that ignores EOF and SIGTERM.
 * Mutant upstream_no_deathsig is refused at spawn (above); with
 * upstream_no_proof the upstream outlives its killed engine.
 */
static void
test_dies_with_its_engine(void **state)
{
	pid_t up;

	(void)state;
	if (!as_root())
		skip();
	up = upstream_of_killed_engine(NULL);
	assert_false(running(up, 2000));
	up = upstream_of_killed_engine("upstream_no_deathsig,upstream_no_proof");
	assert_true(running(up, 1000));
	assert_int_equal(kill(up, SIGKILL), 0);
	assert_false(running(up, 2000));
}

/*
 * An engine that changes uid but lacks CAP_KILL could signal none of its
 * upstreams (another uid): a stop of one that ignores EOF and SIGTERM
 * would leave it running after its session. Refused at spawn, naming
 * why; mutant upstream_kill_unchecked starts it, and it outlives the stop.
 */
static void
test_engine_without_cap_kill(void **state)
{
	struct hang_report r;
	pid_t engine;
	int status;

	(void)state;
	if (!as_root())
		skip();
	r = hang_engine(NULL, true, true, &engine);
	assert_int_equal(waitpid(engine, &status, 0), engine);
	assert_int_equal(r.up, -1);
	assert_string_equal(r.why, "upstream hang: the engine holds CAP_SETUID but not CAP_KILL: "
			    "it could not stop the upstream");
	r = hang_engine("upstream_kill_unchecked", true, true, &engine);
	assert_true(r.up > 1);
	assert_int_equal(waitpid(engine, &status, 0), engine);	/* its stop is over */
	assert_true(running(r.up, 500));
	assert_int_equal(kill(r.up, SIGKILL), 0);
	assert_false(running(r.up, 2000));
}

/* --- the config's fields ---------------------------------------------------- */

static int
load(const char *upstream, struct al_err *err)
{
	char text[1024];
	struct airlock_config c;
	json_t *root;
	int rc;

	snprintf(text, sizeof text, "{\"upstreams\": {\"u\": {\"argv\": [\"/bin/true\"]%s}}}",
		 upstream);
	root = json_loads(text, 0, NULL);
	assert_non_null(root);
	config_init(&c);
	rc = config_load_json(&c, root, 2, err);
	if (rc == 0 && strstr(upstream, "privileged"))
		assert_true(c.upstreams[0].confine.privileged);
	config_free(&c);
	json_decref(root);
	return rc;
}

static void
expect_error(const char *upstream, const char *want)
{
	struct al_err err = { "" };

	assert_int_equal(load(upstream, &err), -1);
	assert_string_equal(err.msg, want);
}

static void
test_config_refusals(void **state)
{
	struct al_err err = { "" };

	(void)state;
	expect_error(", \"user\": \"root\"",
		     "upstreams.u.user: root is not allowed (\"privileged\": true opts in)");
	expect_error(", \"user\": \"no-such-user-here\"",
		     "upstreams.u.user: no such user no-such-user-here");
	expect_error(", \"paths\": {\"rw\": [\"/\"]}", "upstreams.u.paths.rw[0]: / is not allowed");
	expect_error(", \"paths\": {\"x\": []}", "upstreams.u.paths.x: unknown key");
	expect_error(", \"network\": \"all\"",
		     "upstreams.u.network: expected \"none\" or {connect, bind, udp}");
	expect_error(", \"network\": {\"connect\": [0]}",
		     "upstreams.u.network.connect[0]: expected an integer in 1..65535");
	expect_error(", \"privileged\": 1", "upstreams.u.privileged: expected true or false");
	/* the loud opt-in: root accepted, and recorded */
	assert_int_equal(load(", \"user\": \"root\", \"privileged\": true", &err), 0);
	assert_int_equal(load(", \"network\": {\"connect\": [443], \"udp\": true}, "
			      "\"paths\": {\"ro\": [\"/srv\"], \"rw\": [\"/var/tmp\"]}", &err), 0);
}

/* A listed path that does not exist is an error naming it, and nothing runs. */
static void
test_missing_path_refused(void **state)
{
	struct obs *o = *state;
	struct al_err err = { "" };

	if (!as_root())
		skip();
	assert_int_equal(strv_push(&o->cfg.confine.ro, "/no/such/dir"), 0);
	assert_int_equal(mcp_start(&o->cfg, &o->c, &err), -1);
	strv_free(&o->cfg.confine.ro);
	assert_string_equal(err.msg, "upstream hostile: confinement path /no/such/dir: "
			    "No such file or directory");
}

/* A program under a root-only directory: the engine opens it, the upstream runs it. */
static void
test_program_in_root_only_dir(void **state)
{
	struct obs *o = *state;
	char dir[128], prog[160], cmd[512];

	if (!as_root())
		skip();
	snprintf(dir, sizeof dir, "%s/private", o->dir);
	snprintf(prog, sizeof prog, "%s/hostile", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", o->cfg.argv.v[0], prog);
	assert_int_equal(system(cmd), 0);
	free(o->cfg.argv.v[0]);
	o->cfg.argv.v[0] = strdup(prog);
	run_attempt(o, NULL);
	assert_string_equal(got(o, "shadow"), "EACCES");
	mcp_stop(o->c);
	o->c = NULL;
	assert_int_equal(unlink(prog), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A FIFO named as the program: refused, the spawn not held by an open that waits for a writer. */
static void
test_fifo_program_refused(void **state)
{
	struct obs *o = *state;
	struct al_err err = { "" };
	char fifo[128];

	if (!as_root())
		skip();
	snprintf(fifo, sizeof fifo, "%s/fifo", o->dir);
	assert_int_equal(mkfifo(fifo, 0755), 0);
	free(o->cfg.argv.v[0]);
	o->cfg.argv.v[0] = strdup(fifo);
	assert_int_equal(mcp_start(&o->cfg, &o->c, &err), -1);
	assert_null(o->c);
	print_message("fifo: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "upstream hostile"));
}

/*
 * Under mutant (a kernel offering Landlock ABI abi): refused without the
 * opt-in, saying so; with it, the hostile server runs beside a neighbour
 * and reports, its receipt saying that ABI.
 */
static void
run_opted_in_on(struct obs *o, const char *mutant, int abi)
{
	struct al_err err = { "" };
	char want[160];

	setenv("AIRLOCK_MUTANT", mutant, 1);
	assert_int_equal(mcp_start(&o->cfg, &o->c, &err), -1);
	unsetenv("AIRLOCK_MUTANT");
	snprintf(want, sizeof want, "upstream hostile: the kernel offers Landlock ABI %d, "
		 "confinement needs 6 (or the upstream's \"unconfined_ok\": true)", abi);
	assert_string_equal(err.msg, want);
	o->cfg.confine.unconfined_ok = true;
	start_neighbour(o);
	run_attempt(o, mutant);
	assert_int_equal(mcp_confinement(o->c)->landlock_abi, abi);
}

/* A kernel without Landlock: refused, unless the loud opt-in (then it shows). */
static void
test_no_landlock_refused_unless_opted_in(void **state)
{
	struct obs *o = *state;

	if (!as_root())
		skip();
	run_opted_in_on(o, "upstream_landlock_absent", 0);
	assert_string_equal(got(o, "audit_db"), "ok");	/* files: only the uid stands */
	/* and another session's upstream of the uid: what its session sent it */
	assert_string_equal(got(o, "neighbour_environ"), "ok");
	assert_string_equal(got(o, "shadow"), "EACCES");
	assert_string_equal(got(o, "userns"), "EPERM");
	/* no TCP rules and no network configured: the filter gives no inet socket */
	assert_string_equal(got(o, "tcp"), "EPERM");
	assert_false(tcp_seen(o));
}

/*
 * Opted in on an older kernel (Debian 12's 6.1: ABI 2), what it has still
 * applies: the file rules, each upstream's /proc and ptrace its own
 * domain's; TCP closed by the filter (no network configured). Marked
 * UNCONFINED all the same: no TCP rules, no scopes.
 */
static void
test_older_landlock_applied_when_opted_in(void **state)
{
	struct obs *o = *state;
	struct upstream_view v;

	if (!as_root())
		skip();
	run_opted_in_on(o, "upstream_landlock_abi2", 2);
	assert_true(mcp_confinement(o->c)->landlock_rules > 0);
	assert_string_equal(got(o, "audit_db"), "EACCES");
	assert_false(db_written(o));
	assert_string_equal(got(o, "neighbour_environ"), "EACCES");
	assert_string_equal(got(o, "tcp"), "EPERM");
	assert_false(tcp_seen(o));
	mcp_confine_view("hostile", mcp_confinement(o->c), true, NULL, &v);
	assert_string_equal(upstream_view_marks(&v), "UNCONFINED");
}

/* The hostile server copied beside the observers, run through `#!/bin/sh` (no program fd). */
static void
hostile_as_script(struct obs *o)
{
	char prog[160], script[256], cmd[512];

	snprintf(prog, sizeof prog, "%s/hostile", o->dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0755 '%s'", o->cfg.argv.v[0], prog, prog);
	assert_int_equal(system(cmd), 0);
	snprintf(script, sizeof script, "#!/bin/sh\nexec %s \"$@\"\n", prog);
	scratch_put(o->dir, "hostile.sh", script, 0755);
	free(o->cfg.argv.v[0]);
	snprintf(prog, sizeof prog, "%s/hostile.sh", o->dir);
	o->cfg.argv.v[0] = strdup(prog);
}

/*
 * The engine's descriptors 4 and 5 (the slots its program and ruleset
 * descriptors take in the child) without close-on-exec, and an upstream
 * that needs neither (a script, no Landlock): the upstream holds none.
 */
static void
test_engine_fds_not_inherited(void **state)
{
	struct obs *o = *state;
	int p[2], saved[2], slot;

	if (!as_root())
		skip();
	hostile_as_script(o);
	o->cfg.confine.unconfined_ok = true;
	assert_int_equal(pipe(p), 0);	/* neither end close-on-exec */
	for (slot = 0; slot < 2; slot++) {
		saved[slot] = fcntl(4 + slot, F_DUPFD_CLOEXEC, 64);	/* -1: nothing there */
		assert_int_equal(dup2(p[slot], 4 + slot), 4 + slot);
	}
	run_attempt(o, "upstream_landlock_absent");
	for (slot = 0; slot < 2; slot++) {
		if (saved[slot] >= 0) {
			assert_int_equal(dup3(saved[slot], 4 + slot, O_CLOEXEC), 4 + slot);
			close(saved[slot]);
		} else
			close(4 + slot);
	}
	close(p[0]);
	close(p[1]);
	assert_int_equal(mcp_confinement(o->c)->landlock_abi, 0);
	assert_string_equal(got(o, "engine_fd"), "EBADF");
}

/*
 * An engine without CAP_SETUID (a child of this test as uid 65534) keeps
 * its uid for the upstream, and a socket of that uid, 0600 (its control
 * socket), takes a peer of the uid for the engine. The upstream makes no
 * unix socket; a mutant without the rule is caught at spawn, and with the
 * proof off too it connects. Gives what the child's upstream reported,
 * or the spawn's error.
 */
static void
as_engine_without_caps(struct obs *o, const char *mutant, char *out, size_t cap)
{
	struct mcp_call_result res;
	struct al_err err = { "" };
	int p[2];
	ssize_t n;
	pid_t pid;
	int status;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(2);
		if (mutant)
			setenv("AIRLOCK_MUTANT", mutant, 1);
		if (mcp_start(&o->cfg, &o->c, &err) < 0)
			n = write(p[1], err.msg, strlen(err.msg));
		else if (mcp_call(o->c, "attempt", NULL, 0, &res, &err) == 0 && res.text)
			n = write(p[1], res.text, strlen(res.text));
		else
			n = write(p[1], "no answer", 9);
		mcp_stop(o->c);
		_exit(n > 0 ? 0 : 3);
	}
	close(p[1]);
	n = read(p[0], out, cap - 1);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(n > 0);
	out[n] = '\0';
	print_message("%s: %s\n", mutant ? mutant : "confined", out);
}

static void
test_same_uid_makes_no_unix_socket(void **state)
{
	struct obs *o = *state;
	char out[4096];
	json_t *j;

	if (!as_root())
		skip();
	hostile_as_script(o);	/* where uid 65534 may read and run it */
	assert_int_equal(chown(o->sock, 65534, 65534), 0);
	assert_int_equal(chmod(o->sock, 0600), 0);
	as_engine_without_caps(o, NULL, out, sizeof out);
	assert_non_null(j = json_loads(out, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(j, "stand_in_sock")), "EPERM");
	assert_string_equal(json_string_value(json_object_get(j, "audit_db")), "EACCES");
	json_decref(j);
	assert_false(unix_seen(o));
	as_engine_without_caps(o, "upstream_same_uid_unix", out, sizeof out);
	assert_string_equal(out, "upstream hostile: confinement not enforced (unix socket)");
	assert_false(unix_seen(o));
	as_engine_without_caps(o, "upstream_same_uid_unix,upstream_no_proof", out, sizeof out);
	assert_non_null(j = json_loads(out, 0, NULL));
	assert_string_equal(json_string_value(json_object_get(j, "stand_in_sock")), "ok");
	json_decref(j);
	assert_true(unix_seen(o));
}

/* The plan a config alone decides, its view and its line (pure: no root needed). */
static void
test_plan_view_text(void **state)
{
	struct mcp_confine_config cfg = { .network = true, .udp = false, .privileged = true,
					  .unconfined_ok = true, .connect = { 443, 80 },
					  .n_connect = 2 };
	struct mcp_confine_receipt r;
	struct upstream_view u;
	char line[512];

	(void)state;
	assert_int_equal(strv_push(&cfg.ro, "/srv"), 0);
	assert_int_equal(strv_push(&cfg.ro, "/opt"), 0);
	assert_int_equal(strv_push(&cfg.rw, "/var/tmp"), 0);
	mcp_confine_plan(&cfg, &r);
	assert_true(r.privileged && r.unconfined_ok);
	assert_int_equal(r.paths_ro, 2);
	assert_int_equal(r.paths_rw, 1);
	assert_string_equal(r.network, "connect 443,80 bind - udp no");
	assert_string_equal(r.isolation, "process");
	assert_int_equal(r.landlock_abi, 0);
	mcp_confine_view("mail", &r, false, NULL, &u);
	assert_false(u.started);
	assert_string_equal(u.user, MCP_CONFINE_USER);
	assert_string_equal(upstream_view_marks(&u), "PRIVILEGED UNCONFINED-OK");
	assert_string_equal(mcp_confine_text(&u, line, sizeof line),
			    "not started (user airlock-upstream)  landlock - (ro 2, rw 1)  seccomp -  "
			    "network connect 443,80 bind - udp no  isolation process  "
			    "PRIVILEGED UNCONFINED-OK");
	strv_free(&cfg.ro);
	strv_free(&cfg.rw);

	/* A receipt as a spawn fills it: the default, loud about nothing. */
	memset(&cfg, 0, sizeof cfg);
	mcp_confine_plan(&cfg, &r);
	snprintf(r.user, sizeof r.user, "airlock-upstream");
	r.uid = 999;
	r.gid = 995;
	r.uid_changed = true;
	r.landlock_abi = 6;
	r.landlock_rules = 21;
	memset(r.seccomp_sha256, 'a', HASH_HEX_LEN);
	r.seccomp_sha256[HASH_HEX_LEN] = '\0';
	mcp_confine_view("vault", &r, true, "ignored", &u);
	assert_null(upstream_view_marks(&u));
	assert_string_equal(u.seccomp, "aaaaaaaaaaaaaaaa");
	assert_string_equal(mcp_confine_text(&u, line, sizeof line),
			    "uid 999 (airlock-upstream)  landlock ABI 6, 21 rules (ro 0, rw 0)  "
			    "seccomp aaaaaaaaaaaaaaaa  network none  isolation process");
	r.landlock_abi = 0;
	r.uid_changed = false;
	r.uid = 0;
	mcp_confine_view("vault", &r, true, NULL, &u);
	assert_string_equal(upstream_view_marks(&u), "UNCONFINED");
	assert_non_null(strstr(mcp_confine_text(&u, line, sizeof line),
			       "uid 0 (the engine's own)  landlock none (ro 0, rw 0)"));
}

/* A real spawn's receipt, as the console sees it. */
static void
test_receipt_view(void **state)
{
	struct obs *o = *state;
	struct upstream_view u;
	struct passwd *pw = getpwnam(MCP_CONFINE_USER);

	if (!as_root() || !pw)
		skip();
	run_attempt(o, NULL);
	mcp_confine_view("hostile", mcp_confinement(o->c), true, NULL, &u);
	assert_true(u.started && u.uid_changed);
	assert_int_equal(u.uid, pw->pw_uid);
	assert_string_equal(u.user, MCP_CONFINE_USER);
	assert_true(u.landlock_abi >= MCP_LANDLOCK_ABI_MIN);
	assert_int_equal(u.landlock_abi, mcp_confine_landlock_abi());
	assert_true(u.landlock_rules > 0);
	assert_int_equal(strlen(u.seccomp), SNAP_HASH_PREFIX);
	assert_string_equal(u.network, "none");
	assert_string_equal(u.isolation, "process");
	assert_true(mcp_confine_seccomp_available());
	mcp_stop(o->c);
	o->c = NULL;
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, obs_setup, obs_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_hostile_gets_nothing),
		T(test_mutant_keep_root),
		T(test_mutant_no_seccomp),
		T(test_neighbour_untouched),
		T(test_mutant_no_seccomp_reaches_neighbour),
		T(test_mutant_no_landlock_fs),
		T(test_mutant_no_landlock_net),
		T(test_mutant_new_group),
		T(test_dies_with_its_engine),
		T(test_engine_without_cap_kill),
		T(test_proof_refuses_missing_protection),
		T(test_missing_path_refused),
		T(test_program_in_root_only_dir),
		T(test_no_landlock_refused_unless_opted_in),
		T(test_older_landlock_applied_when_opted_in),
		T(test_engine_fds_not_inherited),
		T(test_fifo_program_refused),
		T(test_same_uid_makes_no_unix_socket),
		T(test_receipt_view),
		cmocka_unit_test(test_config_refusals),
		cmocka_unit_test(test_plan_view_text),
	};

	if (!getenv("AIRLOCK_HOSTILE") || getenv("AIRLOCK_HOSTILE")[0] != '/') {
		fprintf(stderr, "AIRLOCK_HOSTILE must be the fixture's absolute path\n");
		return 1;
	}
	return cmocka_run_group_tests_name("confine", tests, NULL, NULL);
}
