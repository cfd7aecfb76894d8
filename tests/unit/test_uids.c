/*
 * A session's own upstream uid (engine/mcp/mcp_uids.h), with real uids:
 * two sessions get two uids of the range /etc/subuid delegates to
 * airlock-upstream; a held uid's lock keeps every other process out; the
 * uid given back leaves no process of it running (one that left its
 * process group and ignores SIGTERM included) and another uid's untouched;
 * one an engine died holding is swept before it is used again.
 * As root, with the range scripts/setup writes; without either it is
 * skipped, loudly, and with CI set it fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

static void
assert_delegated(uid_t uid)
{
	assert_true(uid >= first && uid < first + count);
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

/* Another process's try at uid's lock: 1 when it would have got it. */
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
		int fd = open(path, O_RDWR | O_CLOEXEC);

		_exit(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 ? 1 : 0);
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

static void
test_given_back_free_again(void **state)
{
	struct mcp_uid a;
	struct al_err err;
	uid_t uid;

	(void)state;
	assert_int_equal(mcp_uid_take(&a, &err), 0);
	uid = a.uid;
	assert_int_equal(other_gets_lock(uid), 0);
	mcp_uid_give_back(&a);
	assert_int_equal(other_gets_lock(uid), 1);
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
 * child, whose first take starts at its pid in the range (mcp_uids.c): so
 * this runs before any take of this process's.
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
		uid_t x = (uid_t)(first + (unsigned long)getpid() % count);
		char path[sizeof MCP_UIDS_DIR + 16];
		struct mcp_uid u;
		struct al_err err;
		pid_t left;
		int fd, how;

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

static void
test_kill_all_refuses_root(void **state)
{
	(void)state;
	assert_int_equal(mcp_uid_kill_all(0), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dead_engines_leftover_swept),	/* first: no take before */
		cmocka_unit_test(test_two_sessions_two_uids),
		cmocka_unit_test(test_given_back_free_again),
		cmocka_unit_test(test_give_back_sweeps_its_uid_only),
		cmocka_unit_test(test_kill_all_refuses_root),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
