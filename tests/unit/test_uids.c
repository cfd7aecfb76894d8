/*
 * A session's own upstream uid (engine/mcp/mcp_uids.h), with real uids:
 * two sessions get two uids of the range /etc/subuid delegates to
 * airlock-upstream; a held uid's lock keeps every other process out; the
 * uid given back leaves no process of it running (one that left its
 * process group and ignores SIGTERM included) and another uid's untouched;
 * one an engine died holding is swept before it is used again; a uid
 * given back leaves no lock file, and a taker that locks a file removed
 * under it (by a give-back between its open and its lock) passes that uid
 * over, where the mutant that trusts the lock (uids_unchecked_lock) held
 * a uid the next taker got too; and an
 * engine run as the unit runs it (not root, CAP_KILL ambient) sweeps that
 * uid alone (in a PID namespace of its own), where the mutant that keeps
 * its capabilities in the sweep (uids_keep_caps) reached every process.
 * As root, with the range scripts/setup writes; without either it is
 * skipped, loudly, and with CI set it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mcp_uids.h"

static unsigned long first, count;

/* The range as /etc/subuid says, read here, not through the engine's reader. */
static int
delegated(void)
{
	char line[256], name[64];
	unsigned long s, n;
	FILE *f = fopen("/etc/subuid", "re");

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%63[^:]:%lu:%lu", name, &s, &n) == 3 &&
		    strcmp(name, MCP_UIDS_OWNER) == 0) {
			first = s;
			count = n;
		}
	if (f)
		fclose(f);
	return count > 0 ? 0 : -1;
}

static int
setup(void **state)
{
	(void)state;
	if (geteuid() == 0 && delegated() == 0)
		return 0;
	if (getenv("CI")) {
		fprintf(stderr, "FAIL: CI is set but this is not root with uids delegated to %s "
			"(run scripts/setup)\n", MCP_UIDS_OWNER);
		return -1;
	}
	fprintf(stderr, "################################################################\n"
		"## SKIPPED: not root, or no uids delegated to %s: session uids NOT verified\n"
		"################################################################\n",
		MCP_UIDS_OWNER);
	exit(77);
}

/* A session's: of the range, but never its first (the sweeps' own). */
static void
assert_delegated(uid_t uid)
{
	assert_true(uid > first && uid < first + count);
}

/* The first uid a process's first take tries under uids_start_at_pid. */
static uid_t
first_try(pid_t pid)
{
	return (uid_t)(first + 1 + (unsigned long)pid % (count - 1));
}

/* A child running as uid, its own session, deaf to SIGTERM: what a sweep must end. */
static pid_t
run_as(uid_t uid)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_IGN);
		if (setsid() < 0 || syscall(SYS_setresuid, uid, uid, uid) < 0)
			_exit(3);
		for (;;)
			pause();
	}
	return pid;
}

/* Until pid ended (100 ms steps, 5 s): how, as waitpid says; -1 still running. */
static int
ended_by(pid_t pid)
{
	int status, i;

	for (i = 0; i < 50; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFSIGNALED(status) ? WTERMSIG(status) : 1000 + WEXITSTATUS(status);
		usleep(100000);
	}
	return -1;
}

/*
 * Another process's try at uid's lock, as a taker makes it (the file made
 * when missing, and removed again when it got it): 1 when it would get it.
 */
static int
other_gets_lock(uid_t uid)
{
	char path[sizeof MCP_UIDS_DIR + 16];
	int status;
	pid_t pid;

	snprintf(path, sizeof path, "%s/%u", MCP_UIDS_DIR, (unsigned)uid);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			_exit(0);
		unlink(path);	/* its own, made here: gone again */
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WEXITSTATUS(status);
}

static void
test_two_sessions_two_uids(void **state)
{
	struct mcp_uid a, b;
	struct al_err err;

	(void)state;
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	assert_int_equal(mcp_uid_take(&b, &err), 0);
	assert_int_not_equal(a.uid, b.uid);
	assert_delegated(a.uid);
	assert_delegated(b.uid);
	assert_int_equal(other_gets_lock(a.uid), 0);	/* held: another engine keeps out */
	assert_int_equal(other_gets_lock(b.uid), 0);
	mcp_uid_give_back(&a);
	assert_int_equal(a.uid, 0);
	assert_int_equal(other_gets_lock(b.uid), 0);
	mcp_uid_give_back(&b);
}

static bool
lock_file_there(uid_t uid)
{
	char path[sizeof MCP_UIDS_DIR + 16];
	struct stat st;

	snprintf(path, sizeof path, "%s/%u", MCP_UIDS_DIR, (unsigned)uid);
	return stat(path, &st) == 0;
}

/* Given back swept, its lock file is removed: a new file is a clean uid, and none piles up. */
static void
test_given_back_free_again(void **state)
{
	struct mcp_uid a;
	struct al_err err;
	uid_t uid;

	(void)state;
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	uid = a.uid;
	assert_true(lock_file_there(uid));
	assert_int_equal(other_gets_lock(uid), 0);
	mcp_uid_give_back(&a);
	assert_false(lock_file_there(uid));
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	assert_true(lock_file_there(a.uid));
	mcp_uid_give_back(&a);
}

/* Until pid holds path open (10 ms steps, 5 s): 0, or -1. */
static int
holds_open(pid_t pid, const char *path)
{
	char fd_path[64], target[sizeof MCP_UIDS_DIR + 16];
	ssize_t n;
	int i, fd;

	for (i = 0; i < 500; i++, usleep(10000))
		for (fd = 0; fd < 64; fd++) {
			snprintf(fd_path, sizeof fd_path, "/proc/%d/fd/%d", (int)pid, fd);
			n = readlink(fd_path, target, sizeof target - 1);
			if (n > 0 && (target[n] = '\0', strcmp(target, path) == 0))
				return 0;
		}
	return -1;
}

/*
 * A taker that opened a uid's lock file just before its holder gave it
 * back, and locks it just after (held there by the test build's
 * uids_lock_after_removal until the file is gone). Bits of its exit: 1
 * it took that uid, 2 another taker would get the uid it took, 16 it
 * could not take one. Its first try is at its pid only while this
 * process took no uid before (main runs these first).
 */
static int
late_taker(const char *mutants)
{
	char path[sizeof MCP_UIDS_DIR + 16], go;
	int pipefd[2], fd, status;
	pid_t taker;
	uid_t x;

	assert_int_equal(pipe(pipefd), 0);
	taker = fork();
	assert_true(taker >= 0);
	if (taker == 0) {
		struct mcp_uid u;
		struct al_err err;
		int bits;

		setenv("AIRLOCK_MUTANT", mutants, 1);
		if (read(pipefd[0], &go, 1) != 1 || mcp_uid_take(&u, &err) < 0)
			_exit(16);
		bits = (u.uid == first_try(getpid())) |
		       other_gets_lock(u.uid) << 1;
		mcp_uid_give_back(&u);
		_exit(bits);
	}
	/* Its first try (uids_start_at_pid): a uid held here, as a session holds it. */
	x = first_try(taker);
	snprintf(path, sizeof path, "%s/%u", MCP_UIDS_DIR, (unsigned)x);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	assert_int_equal(pwrite(fd, "1", 1, 0), 1);
	assert_int_equal(write(pipefd[1], "g", 1), 1);
	assert_int_equal(holds_open(taker, path), 0);
	/* The give-back, as mcp_uid_give_back makes it: marked swept, removed, let go. */
	assert_int_equal(pwrite(fd, "0", 1, 0), 1);
	assert_int_equal(unlink(path), 0);
	close(fd);
	assert_int_equal(waitpid(taker, &status, 0), taker);
	close(pipefd[0]);
	close(pipefd[1]);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
test_lock_on_a_removed_file_holds_nothing(void **state)
{
	(void)state;
	/* It passes the removed file over: the uid it takes no other taker gets. */
	assert_int_equal(late_taker("uids_start_at_pid,uids_lock_after_removal"), 0);
}

static void
test_mutant_unchecked_lock_shares_a_uid(void **state)
{
	(void)state;
	/* Locked on the removed file, it took that uid, and so would the next taker. */
	assert_int_equal(late_taker("uids_start_at_pid,uids_lock_after_removal,"
				    "uids_unchecked_lock"), 1 | 2);
}

static void
test_give_back_sweeps_its_uid_only(void **state)
{
	struct mcp_uid a, b;
	struct al_err err;
	pid_t mine[3], other;
	int i;

	(void)state;
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	assert_int_equal(mcp_uid_take(&b, &err), 0);
	for (i = 0; i < 3; i++)
		mine[i] = run_as(a.uid);
	other = run_as(b.uid);
	usleep(200000);		/* each has taken its uid */
	mcp_uid_give_back(&a);
	for (i = 0; i < 3; i++)
		assert_int_equal(ended_by(mine[i]), SIGKILL);
	assert_int_equal(waitpid(other, NULL, WNOHANG), 0);	/* another session's runs on */
	mcp_uid_give_back(&b);
	assert_int_equal(ended_by(other), SIGKILL);
}

/*
 * An engine that died holding a uid left its lock file marked held and a
 * process of that uid running: the next taker sweeps it before use. In a
 * child, whose first take starts at its pid in the range under the test
 * build's uids_start_at_pid: so this runs before any take of this
 * process's.
 */
static void
test_dead_engines_leftover_swept(void **state)
{
	int status;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		uid_t x = first_try(getpid());
		char path[sizeof MCP_UIDS_DIR + 16];
		struct mcp_uid u;
		struct al_err err;
		pid_t left;
		int fd, how;

		setenv("AIRLOCK_MUTANT", "uids_start_at_pid", 1);
		mkdir("/run/airlock", 0755);		/* as the engine makes them */
		mkdir(MCP_UIDS_DIR, 0700);
		snprintf(path, sizeof path, "%s/%u", MCP_UIDS_DIR, (unsigned)x);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || pwrite(fd, "1", 1, 0) != 1)
			_exit(10);
		close(fd);
		left = run_as(x);
		usleep(200000);
		if (mcp_uid_take(&u, &err) < 0 || u.uid != x)
			_exit(11);	/* another took x: run again */
		how = ended_by(left);
		mcp_uid_give_back(&u);
		_exit(how == SIGKILL ? 0 : 12);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void *
stop_all_others(void *arg)
{
	(void)arg;
	for (;;)
		kill(-1, SIGSTOP);	/* spares its own process */
	return NULL;
}

/* A process of uid whose two threads stop every other process of its uid, as fast as they can. */
static pid_t
stopper_as(uid_t uid)
{
	pid_t pid = fork();
	pthread_t t;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setsid() < 0 || syscall(SYS_setresuid, uid, uid, uid) < 0 ||
		    pthread_create(&t, NULL, stop_all_others, NULL) != 0)
			_exit(3);
		stop_all_others(NULL);
	}
	return pid;
}

/*
 * Once the sweep's child has the uid, the uid's processes may signal it:
 * one that stops it whenever it can (a review's stopped it 16 runs of 20,
 * and the engine's thread waited for it for good) costs it rounds, not
 * the engine: the give-back returns, the stopper is killed and the uid is
 * swept.
 */
static void
test_sweep_outlasts_its_stoppers(void **state)
{
	struct mcp_uid a;
	struct al_err err;
	pid_t stopper;
	uid_t uid;

	(void)state;
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	uid = a.uid;
	stopper = stopper_as(uid);
	usleep(200000);		/* it has taken the uid */
	mcp_uid_give_back(&a);
	assert_int_equal(ended_by(stopper), SIGKILL);
	assert_false(lock_file_there(uid));	/* swept: given back */
}

/* The unit's capabilities (docs/airlock.service), ambient, as a uid that is not root. */
static int
become_service(uid_t uid)
{
	static const int caps[] = { CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_KILL };
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	size_t i;

	memset(d, 0, sizeof d);
	for (i = 0; i < sizeof caps / sizeof caps[0]; i++)
		d[0].effective |= 1u << caps[i];
	d[0].permitted = d[0].inheritable = d[0].effective;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0 || syscall(SYS_capset, &h, d) < 0)
		return -1;
	for (i = 0; i < sizeof caps / sizeof caps[0]; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, caps[i], 0, 0) < 0)
			return -1;
	return 0;
}

/*
 * pid 1 of a PID namespace of its own: a process of the session's uid, a
 * bystander as root and one as another uid, and an engine as the service
 * runs it that sweeps the uid. Bits of what went wrong: 1 the engine was
 * killed, 2 the uid's process lives, 4 root's died, 8 the other's died;
 * 16 the setup failed.
 */
static int
namespace_init(uid_t uid, uid_t other, uid_t service)
{
	pid_t victim = run_as(uid), by_root = fork(), by_other, engine;
	int status, bad = 0;

	if (by_root == 0)
		for (;;)
			pause();
	by_other = run_as(other);
	usleep(200000);
	engine = fork();
	if (engine == 0)
		_exit(become_service(service) < 0 ? 3 : mcp_uid_kill_all(uid) == 0 ? 0 : 4);
	if (waitpid(engine, &status, 0) != engine)
		return 16;
	bad |= WIFSIGNALED(status) ? 1 : WEXITSTATUS(status) == 3 ? 16 : 0;
	bad |= waitpid(victim, NULL, WNOHANG) == victim ? 0 : 2;
	bad |= waitpid(by_root, NULL, WNOHANG) == 0 ? 0 : 4;
	bad |= waitpid(by_other, NULL, WNOHANG) == 0 ? 0 : 8;
	kill(-1, SIGKILL);	/* pid 1 is spared: the rest of the namespace goes */
	return bad;
}

/* The sweep as the unit's engine, in a namespace whose pid 1 reports; with mutant set, under it. */
static int
service_sweep(const char *mutant_name)
{
	struct mcp_uid u;
	struct al_err err;
	int status;
	pid_t outer;

	assert_int_equal(mcp_uid_take(&u, &err), 0);
	outer = fork();
	assert_true(outer >= 0);
	if (outer == 0) {
		pid_t init;

		if (mutant_name)
			setenv("AIRLOCK_MUTANT", mutant_name, 1);
		if (unshare(CLONE_NEWPID) < 0 || (init = fork()) < 0)
			_exit(32);
		if (init == 0)
			_exit(namespace_init(u.uid, 65534, 65533));
		_exit(waitpid(init, &status, 0) == init && WIFEXITED(status) ? WEXITSTATUS(status) : 33);
	}
	assert_int_equal(waitpid(outer, &status, 0), outer);
	mcp_uid_give_back(&u);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
test_service_sweep_reaches_its_uid_alone(void **state)
{
	(void)state;
	assert_int_equal(service_sweep(NULL), 0);
}

static void
test_mutant_keeping_caps_reaches_everyone(void **state)
{
	int bad;

	(void)state;
	bad = service_sweep("uids_keep_caps");
	assert_int_equal(bad & 16, 0);		/* it ran */
	assert_int_not_equal(bad & (1 | 4 | 8), 0);	/* the engine or a bystander killed */
}

static void
test_kill_all_refuses_root(void **state)
{
	(void)state;
	assert_int_equal(mcp_uid_kill_all(0), -1);
	assert_int_equal(mcp_uid_kill_all((uid_t)first), -1);	/* the sweeps' own */
	assert_int_equal(mcp_uid_kill_all(65534), -1);		/* not of the range */
	assert_int_equal(mcp_uid_kill_all((uid_t)(first + count)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: their children's takes start at their pids only while this process took none. */
		cmocka_unit_test(test_dead_engines_leftover_swept),
		cmocka_unit_test(test_lock_on_a_removed_file_holds_nothing),
		cmocka_unit_test(test_mutant_unchecked_lock_shares_a_uid),
		cmocka_unit_test(test_two_sessions_two_uids),
		cmocka_unit_test(test_given_back_free_again),
		cmocka_unit_test(test_give_back_sweeps_its_uid_only),
		cmocka_unit_test(test_sweep_outlasts_its_stoppers),
		cmocka_unit_test(test_service_sweep_reaches_its_uid_alone),
		cmocka_unit_test(test_mutant_keeping_caps_reaches_everyone),
		cmocka_unit_test(test_kill_all_refuses_root),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
