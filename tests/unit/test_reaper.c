#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"
#include "reaper.h"

#define OTHER_BOOT "00000000-0000-4000-8000-000000000000"

/* Owner labels as the container would carry them; a NULL value is left out. */
static json_t *
labels(const char *pid, const char *start, const char *boot)
{
	json_t *l = json_object();

	assert_non_null(l);
	json_object_set_new(l, LABEL_MANAGED, json_string("1"));
	if (pid)
		json_object_set_new(l, LABEL_OWNER_PID, json_string(pid));
	if (start)
		json_object_set_new(l, LABEL_OWNER_START, json_string(start));
	if (boot)
		json_object_set_new(l, LABEL_OWNER_BOOT, json_string(boot));
	return l;
}

/* Labels for who, with the start time moved by skew. */
static json_t *
labels_of(const struct owner_labels *who, long long skew, const char *boot)
{
	char pid[32], start[32];

	snprintf(pid, sizeof pid, "%ld", who->pid);
	snprintf(start, sizeof start, "%llu", who->start_ticks + (unsigned long long)skew);
	return labels(pid, start, boot ? boot : who->boot_id);
}

static bool
gone(json_t *l, const char *boot)
{
	bool g = reaper_owner_gone(l, boot);

	json_decref(l);
	return g;
}

static void
self(struct owner_labels *me)
{
	struct al_err err;

	if (owner_labels_self(me, "test", &err) < 0)
		fail_msg("owner_labels_self: %s", err.msg);
}

static void
test_self_alive(void **state)
{
	struct owner_labels me;

	(void)state;
	self(&me);
	assert_false(gone(labels_of(&me, 0, NULL), me.boot_id));
}

static void
test_other_boot(void **state)
{
	struct owner_labels me;

	(void)state;
	self(&me);
	assert_true(gone(labels_of(&me, 0, OTHER_BOOT), me.boot_id));
	assert_true(gone(labels_of(&me, 0, ""), me.boot_id));
	/* Without this boot's id nothing can be shown alive. */
	assert_true(gone(labels_of(&me, 0, NULL), NULL));
	assert_true(gone(labels_of(&me, 0, NULL), ""));
}

/* The same pid, another start time: the pid was reused by someone else. */
static void
test_pid_reused(void **state)
{
	struct owner_labels me;

	(void)state;
	self(&me);
	assert_true(gone(labels_of(&me, 1, NULL), me.boot_id));
	assert_true(gone(labels_of(&me, -1, NULL), me.boot_id));
}

static void
test_exited_pid(void **state)
{
	struct owner_labels me, child;
	pid_t pid;
	int status;

	(void)state;
	self(&me);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	child = me;
	child.pid = (long)pid;
	assert_true(gone(labels_of(&child, 0, NULL), me.boot_id));
}

/* This process's owner labels, one of pid or start time replaced by value. */
static json_t *
labels_but(const struct owner_labels *me, bool pid_bad, const char *value)
{
	char pid[32], start[32];

	snprintf(pid, sizeof pid, "%ld", me->pid);
	snprintf(start, sizeof start, "%llu", me->start_ticks);
	return labels(pid_bad ? value : pid, pid_bad ? start : value, me->boot_id);
}

/* The label left out, and each bad value in it, reads as gone: never alive. */
static void
assert_bad_values_gone(bool pid_bad, const char *const *bad)
{
	struct owner_labels me;
	size_t i;

	self(&me);
	assert_true(gone(labels_but(&me, pid_bad, NULL), me.boot_id));
	for (i = 0; bad[i]; i++)
		if (!gone(labels_but(&me, pid_bad, bad[i]), me.boot_id))
			fail_msg("%s label '%s' was taken as alive", pid_bad ? "pid" : "start", bad[i]);
}

static void
test_bad_pid_labels(void **state)
{
	static const char *const bad[] = { "", "abc", "-1", "0", "00", "+1", " 1", "1 ",
		"0x10", "1e3", "12abc", "99999999999999999999", "4294967297", NULL };

	(void)state;
	assert_bad_values_gone(true, bad);
}

static void
test_bad_start_labels(void **state)
{
	static const char *const bad[] = { "", "abc", "-1", "+1", " 1", "1 ",
		"99999999999999999999", NULL };

	(void)state;
	assert_bad_values_gone(false, bad);
}

static void
test_no_labels(void **state)
{
	struct owner_labels me;
	json_t *l;

	(void)state;
	self(&me);
	assert_true(reaper_owner_gone(NULL, me.boot_id));
	l = json_object();
	assert_true(gone(l, me.boot_id));
	/* A label that is not a string is malformed, not a number. */
	l = labels_of(&me, 0, NULL);
	json_object_set_new(l, LABEL_OWNER_PID, json_integer(me.pid));
	assert_true(gone(l, me.boot_id));
}

/*
 * A child renames itself so its command name holds ") " (the stat line
 * then has spaces and parentheses before field 22), reports its own
 * labels, and waits for the pipe to close.
 */
static pid_t
spawn_renamed(struct owner_labels *who, int *hold)
{
	int up[2], down[2];
	pid_t pid;

	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct owner_labels me;
		char c;

		close(up[0]);
		close(down[1]);
		prctl(PR_SET_NAME, "a) b (c) d", 0, 0, 0);
		if (owner_labels_self(&me, NULL, NULL) < 0)
			_exit(1);
		if (write(up[1], &me, sizeof me) != (ssize_t)sizeof me)
			_exit(1);
		_exit(read(down[0], &c, 1) < 0);
	}
	close(up[1]);
	close(down[0]);
	assert_int_equal(read(up[0], who, sizeof *who), (ssize_t)sizeof *who);
	close(up[0]);
	*hold = down[1];
	return pid;
}

static void
test_odd_command_name(void **state)
{
	struct owner_labels who;
	int hold, status, i;
	pid_t pid;

	(void)state;
	pid = spawn_renamed(&who, &hold);
	assert_int_equal(who.pid, (long)pid);
	assert_false(gone(labels_of(&who, 0, NULL), who.boot_id));
	assert_true(gone(labels_of(&who, 1, NULL), who.boot_id));
	close(hold);
	/* Until waitpid the child is a zombie: dead, with its pid still taken. */
	for (i = 0; i < 500 && !gone(labels_of(&who, 0, NULL), who.boot_id); i++)
		usleep(10 * 1000);
	assert_true(i < 500);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(gone(labels_of(&who, 0, NULL), who.boot_id));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_alive),
		cmocka_unit_test(test_other_boot),
		cmocka_unit_test(test_pid_reused),
		cmocka_unit_test(test_exited_pid),
		cmocka_unit_test(test_bad_pid_labels),
		cmocka_unit_test(test_bad_start_labels),
		cmocka_unit_test(test_no_labels),
		cmocka_unit_test(test_odd_command_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
