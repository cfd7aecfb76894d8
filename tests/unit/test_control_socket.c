#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control_server.h"
#include "scratch.h"

/* The socket file of airlock serve: modes, stale and live sockets, refusals. */

static const struct control_group no_group = { false, 0 };

static void
test_listen_live_stale(void **state)
{
	char dir[256], path[300];
	struct al_err err;
	struct stat st;
	int fd, again, client;

	(void)state;
	scratch_make(dir, sizeof dir, "control-socket");
	snprintf(path, sizeof path, "%s/engine.sock", dir);
	assert_int_equal(control_listen(path, no_group, &fd, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);

	/* Another engine answers: refused, and its socket is left alone. */
	assert_int_equal(control_listen(path, no_group, &again, &err), CONTROL_LISTEN_LIVE);
	assert_non_null(strstr(err.msg, "another engine answers on"));
	assert_int_equal(again, -1);
	client = control_connect(path, &err);
	assert_true(client >= 0);
	close(client);

	/* The engine died: its file is stale, removed and bound again. */
	close(fd);
	assert_int_equal(control_listen(path, no_group, &fd, &err), 0);
	close(fd);
	unlink(path);
	assert_int_equal(control_connect(path, &err), -1);
	assert_non_null(strstr(err.msg, "cannot reach the engine at"));
	scratch_remove(dir);
}

static void
test_listen_refusals(void **state)
{
	char dir[256], path[300], target[300];
	struct al_err err;
	int fd;

	(void)state;
	scratch_make(dir, sizeof dir, "control-refuse");
	snprintf(target, sizeof target, "%s/target.sock", dir);
	snprintf(path, sizeof path, "%s/link.sock", dir);
	assert_int_equal(control_listen(target, no_group, &fd, &err), 0);
	close(fd);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(control_listen(path, no_group, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "is a symlink"));
	unlink(path);
	unlink(target);

	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(control_listen(path, no_group, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "not a socket"));
	unlink(path);

	memset(path, 'x', sizeof path - 1);
	path[sizeof path - 1] = '\0';
	assert_int_equal(control_listen(path, no_group, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "socket path too long"));
	scratch_remove(dir);
}

static void
test_socket_dir(void **state)
{
	char dir[256], sub[300], file[300];
	struct al_err err;
	struct stat st;
	int fd;

	(void)state;
	scratch_make(dir, sizeof dir, "control-dir");
	snprintf(sub, sizeof sub, "%s/airlock", dir);
	assert_int_equal(control_socket_dir(sub, no_group, &err), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(control_socket_dir(sub, no_group, &err), 0);	/* exists, ours */
	rmdir(sub);
	snprintf(file, sizeof file, "%s/plain", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(control_socket_dir(file, no_group, &err), -1);
	assert_non_null(strstr(err.msg, "not a directory"));
	unlink(file);
	scratch_remove(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_live_stale),
		cmocka_unit_test(test_listen_refusals),
		cmocka_unit_test(test_socket_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
