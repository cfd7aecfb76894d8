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
	assert_int_equal(control_listen(path, &fd, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0666);	/* the engine is the gate */

	/* Another engine answers: refused, and its socket is left alone. */
	assert_int_equal(control_listen(path, &again, &err), CONTROL_LISTEN_LIVE);
	assert_non_null(strstr(err.msg, "another engine answers on"));
	assert_int_equal(again, -1);
	client = control_connect(path, &err);
	assert_true(client >= 0);
	close(client);

	/* The engine died: its file is stale, removed and bound again. */
	close(fd);
	assert_int_equal(control_listen(path, &fd, &err), 0);
	close(fd);
	unlink(path);
	assert_int_equal(control_connect(path, &err), -1);
	assert_non_null(strstr(err.msg, ": does not exist"));
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
	assert_int_equal(control_listen(target, &fd, &err), 0);
	close(fd);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(control_listen(path, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "is a symlink"));
	unlink(path);
	unlink(target);

	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(control_listen(path, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "not a socket"));
	unlink(path);

	memset(path, 'x', sizeof path - 1);
	path[sizeof path - 1] = '\0';
	assert_int_equal(control_listen(path, &fd, &err), -1);
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
	assert_int_equal(control_socket_dir(sub, &err), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	/* An older engine's 0750: set again, so the view role reaches the socket. */
	assert_int_equal(chmod(sub, 0750), 0);
	assert_int_equal(control_socket_dir(sub, &err), 0);	/* exists, ours */
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	rmdir(sub);
	/* A symlink planted in its place is not followed. */
	assert_int_equal(symlink(dir, sub), 0);
	assert_int_equal(control_socket_dir(sub, &err), -1);
	assert_non_null(strstr(err.msg, "not a directory (or a symlink)"));
	unlink(sub);
	snprintf(file, sizeof file, "%s/plain", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(control_socket_dir(file, &err), -1);
	assert_non_null(strstr(err.msg, "not a directory"));
	unlink(file);
	scratch_remove(dir);
}

/* What a client says before it connects: a plain file, a missing path, a stale socket. */
static void
test_connect_says(void **state)
{
	char dir[256], path[300], want[400];
	struct al_err err;
	int fd;

	(void)state;
	scratch_make(dir, sizeof dir, "control-connect");
	snprintf(path, sizeof path, "%s/plain", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(control_connect(path, &err), -1);
	snprintf(want, sizeof want, "%s: not a socket", path);
	assert_string_equal(err.msg, want);
	unlink(path);
	assert_int_equal(control_connect(path, &err), -1);
	snprintf(want, sizeof want, "%s: does not exist", path);
	assert_string_equal(err.msg, want);

	/* A socket no one listens on any more: the connect's own word. */
	assert_int_equal(control_listen(path, &fd, &err), 0);
	close(fd);
	assert_int_equal(control_connect(path, &err), -1);
	assert_non_null(strstr(err.msg, "Connection refused"));
	unlink(path);
	scratch_remove(dir);
}

static struct stat
dir_stat(mode_t mode, uid_t uid)
{
	struct stat st = { .st_mode = S_IFDIR | mode, .st_uid = uid };

	return st;
}

/* The socket's directory: whoever may rename entries in it could stand in for the engine. */
static void
test_dir_unsafe(void **state)
{
	struct stat st;

	(void)state;
	st = dir_stat(0755, 0);
	assert_null(control_dir_unsafe(&st, 1000));
	st = dir_stat(0700, 1000);
	assert_null(control_dir_unsafe(&st, 1000));
	st = dir_stat(01777, 0);	/* /tmp */
	assert_null(control_dir_unsafe(&st, 1000));
	st = dir_stat(0777, 0);
	assert_string_equal(control_dir_unsafe(&st, 1000),
			    "writable by others and not sticky: they could replace the socket");
	st = dir_stat(0775, 1000);
	assert_non_null(control_dir_unsafe(&st, 1000));
	st = dir_stat(0755, 1001);
	assert_string_equal(control_dir_unsafe(&st, 1000),
			    "owned by another user: they could replace the socket");
	st = (struct stat){ .st_mode = S_IFLNK | 0777, .st_uid = 0 };
	assert_string_equal(control_dir_unsafe(&st, 1000), "not a directory (or a symlink)");
}

/* serve refuses a socket in a directory others may write, before it binds. */
static void
test_listen_unsafe_dir(void **state)
{
	char dir[256], path[300];
	struct al_err err;
	int fd;

	(void)state;
	scratch_make(dir, sizeof dir, "control-unsafe");
	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(path, sizeof path, "%s/engine.sock", dir);
	assert_int_equal(control_listen(path, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "writable by others and not sticky"));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(control_listen(path, &fd, &err), 0);
	close(fd);
	unlink(path);
	scratch_remove(dir);
}

/*
 * A directory above the socket's that another user owns: they could
 * rename the engine's directory away and put their own (and a socket) in
 * its place. serve refuses it, naming that directory; so does a client
 * deciding whether to trust who answers there.
 */
static void
test_listen_unsafe_ancestor(void **state)
{
	char dir[256], mid[300], sub[320], path[340];
	struct al_err err;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIPPED: needs root to give a directory to uid 65534\n");
		skip();
	}
	scratch_make(dir, sizeof dir, "control-ancestor");
	snprintf(mid, sizeof mid, "%s/theirs", dir);
	snprintf(sub, sizeof sub, "%s/ours", mid);
	snprintf(path, sizeof path, "%s/engine.sock", sub);
	assert_int_equal(mkdir(mid, 0755), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chown(mid, 65534, 65534), 0);
	assert_int_equal(control_listen(path, &fd, &err), -1);
	assert_non_null(strstr(err.msg, "/theirs: owned by another user"));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(control_path_safe(path, 0, 0, &err), -1);
	assert_int_equal(control_path_safe(path, 65534, 0, &err), 0);	/* a client of theirs */
	assert_int_equal(chown(mid, 0, 0), 0);
	assert_int_equal(control_listen(path, &fd, &err), 0);
	close(fd);
	unlink(path);
	rmdir(sub);
	rmdir(mid);
	scratch_remove(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_live_stale),
		cmocka_unit_test(test_listen_refusals),
		cmocka_unit_test(test_socket_dir),
		cmocka_unit_test(test_connect_says),
		cmocka_unit_test(test_dir_unsafe),
		cmocka_unit_test(test_listen_unsafe_dir),
		cmocka_unit_test(test_listen_unsafe_ancestor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
