#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "link_dial.h"

/* What --connect takes: a socket, or ssh://[user@]host[:port][/socket]. */
static void
test_targets(void **state)
{
	struct link_target t;
	const char *why = NULL;

	(void)state;
	assert_int_equal(link_target_parse("/run/airlock/engine.sock", &t, &why), 0);
	assert_string_equal(t.path, "/run/airlock/engine.sock");
	assert_string_equal(t.ssh_dest, "");

	assert_int_equal(link_target_parse("ssh://ops@build-7", &t, &why), 0);
	assert_string_equal(t.ssh_dest, "ops@build-7");
	assert_string_equal(t.ssh_port, "");
	assert_string_equal(t.path, "");

	assert_int_equal(link_target_parse("ssh://127.0.0.1:2222/tmp/x/b.sock", &t, &why), 0);
	assert_string_equal(t.ssh_dest, "127.0.0.1");
	assert_string_equal(t.ssh_port, "2222");
	assert_string_equal(t.path, "/tmp/x/b.sock");
}

/* Refused before anything runs: no host, an option for a host, a port that is no number. */
static void
test_refused(void **state)
{
	static const char *const bad[] = {
		"ssh://", "ssh:///run/x.sock", "ssh://-oProxyCommand=sh", "ssh://:22/x",
		"ssh://host:/x", "ssh://host:22x/x", "ssh://host:123456789/x",
	};
	struct link_target t;
	const char *why;
	char long_path[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		assert_int_equal(link_target_parse(bad[i], &t, &why), -1);
		assert_non_null(why);
	}
	memset(long_path, 'a', sizeof long_path - 1);
	long_path[0] = '/';
	long_path[sizeof long_path - 1] = '\0';
	assert_int_equal(link_target_parse(long_path, &t, &why), -1);
	assert_string_equal(why, "the socket path is too long");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
