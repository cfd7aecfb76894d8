#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "preflight.h"

static void
test_core_pattern_refusals(void **state)
{
	(void)state;
	assert_false(preflight_core_pattern_ok("|/usr/lib/systemd/systemd-coredump %P %u %g"));
	assert_false(preflight_core_pattern_ok(" |handler"));
	assert_false(preflight_core_pattern_ok("\t |handler"));
	assert_false(preflight_core_pattern_ok(""));
	assert_false(preflight_core_pattern_ok("   "));
	assert_false(preflight_core_pattern_ok("\n"));
	assert_false(preflight_core_pattern_ok(NULL));
}

static void
test_core_pattern_accepted(void **state)
{
	(void)state;
	assert_true(preflight_core_pattern_ok("core"));
	assert_true(preflight_core_pattern_ok("core.%p"));
	assert_true(preflight_core_pattern_ok("/var/crash/core.%e.%p"));
}

static void
test_local_facts(void **state)
{
	struct check_list l;

	(void)state;
	check_list_init(&l);
	preflight_local_facts("Linux", "|/bin/handler", &l);
	assert_true(check_list_find(&l, "os")->pass);
	assert_false(check_list_find(&l, "core_pattern")->pass);
	assert_string_equal(check_list_find(&l, "core_pattern")->observed, "|/bin/handler");
	check_list_free(&l);

	check_list_init(&l);
	preflight_local_facts("Darwin", "", &l);
	assert_false(check_list_find(&l, "os")->pass);
	assert_string_equal(check_list_find(&l, "core_pattern")->observed, "(blank)");
	assert_false(check_list_find(&l, "core_pattern")->pass);
	check_list_free(&l);
}

static void
test_endpoint(void **state)
{
	struct al_err err;
	char path[108];

	(void)state;
	assert_int_equal(preflight_endpoint(NULL, path, sizeof path, &err), 0);
	assert_string_equal(path, "/var/run/docker.sock");
	assert_int_equal(preflight_endpoint("", path, sizeof path, &err), 0);
	assert_int_equal(preflight_endpoint("unix:///run/user/1000/docker.sock", path, sizeof path, &err), 0);
	assert_string_equal(path, "/run/user/1000/docker.sock");
	assert_int_equal(preflight_endpoint("tcp://127.0.0.1:2375", path, sizeof path, &err), -1);
	assert_non_null(strstr(err.msg, "not a local unix socket"));
	assert_int_equal(preflight_endpoint("ssh://user@host", path, sizeof path, &err), -1);
	assert_int_equal(preflight_endpoint("npipe:////./pipe/docker_engine", path, sizeof path, &err), -1);
	assert_int_equal(preflight_endpoint("fd://", path, sizeof path, &err), -1);
	assert_int_equal(preflight_endpoint("unix://relative.sock", path, sizeof path, &err), -1);
}

static json_t *
info_json(const char *os_type, const char *os, const char *seccomp, bool runsc)
{
	json_t *info = json_pack("{s:s, s:s, s:s, s:s, s:i, s:[s], s:{s:{s:s}}}",
				 "OSType", os_type, "OperatingSystem", os,
				 "KernelVersion", "6.1.0", "CgroupVersion", "2", "NCPU", 2,
				 "SecurityOptions", seccomp,
				 "Runtimes", "runc", "path", "runc");

	if (runsc)
		json_object_set_new(json_object_get(info, "Runtimes"), "runsc",
				    json_pack("{s:s, s:[s, s]}", "path", "/usr/bin/runsc",
					      "runtimeArgs", "--network=none", "--oci-seccomp"));
	return info;
}

/* A daemon whose runsc was registered with exactly these arguments (NULL: none reported). */
static json_t *
info_runsc_args(const char *args_json)
{
	json_t *info = info_json("linux", "Debian", "name=seccomp,profile=default", true);
	json_t *runsc = json_object_get(json_object_get(info, "Runtimes"), "runsc");

	json_object_del(runsc, "runtimeArgs");
	if (args_json)
		json_object_set_new(runsc, "runtimeArgs", json_loads(args_json, 0, NULL));
	return info;
}

static bool
daemon_passes(json_t *info, const char *runtime, const char *failing,
	      struct host_facts *facts)
{
	json_t *version = json_pack("{s:s, s:s}", "ApiVersion", "1.41", "Version", "20.10.24");
	struct check_list l;
	bool ok;

	check_list_init(&l);
	preflight_daemon(version, info, runtime, &l, facts);
	ok = check_list_passed(&l);
	if (failing)
		assert_false(check_list_find(&l, failing)->pass);
	check_list_free(&l);
	json_decref(version);
	json_decref(info);
	return ok;
}

static void
test_daemon(void **state)
{
	struct host_facts f;

	(void)state;
	assert_true(daemon_passes(info_json("linux", "Debian GNU/Linux 12 (bookworm)",
					    "name=seccomp,profile=default", true), "runsc", NULL, &f));
	assert_true(f.runtime_runc && f.runtime_runsc);
	assert_int_equal(f.cores, 2);
	assert_false(daemon_passes(info_json("windows", "Windows", "name=seccomp,profile=default", false),
				   "runc", "daemon_os_type", &f));
	assert_false(daemon_passes(info_json("linux", "Docker Desktop", "name=seccomp,profile=default", false),
				   "runc", "daemon_not_desktop", &f));
	assert_false(daemon_passes(info_json("linux", "Debian", "name=apparmor", false),
				   "runc", "seccomp", &f));
	assert_false(daemon_passes(info_json("linux", "Debian", "name=seccomp,profile=unconfined", false),
				   "runc", "seccomp", &f));
}

/* runsc configured but absent from the daemon: refused, never a fallback. */
static void
test_runsc_absent_refused(void **state)
{
	struct host_facts f;

	(void)state;
	assert_false(daemon_passes(info_json("linux", "Debian", "name=seccomp,profile=default", false),
				   "runsc", "runtime", &f));
	assert_false(f.runtime_runsc);
}

/*
 * runsc without --oci-seccomp leaves Docker's seccomp profile unapplied
 * inside the sandbox; without --network=none it cannot run NetworkMode none.
 * Either missing, overridden later, or not reported at all: refused.
 */
static void
test_runsc_args(void **state)
{
	static const char *const refused[] = {
		"[\"--network=none\"]",			/* the old scripts/daemon.json */
		"[\"--oci-seccomp\"]",
		"[]",
		"[\"--network=none\", \"--oci-seccomp\", \"--oci-seccomp=false\"]",
		"[\"--network=host\", \"--oci-seccomp\"]",
		"[\"--network=none\", \"--oci-seccomp\", \"--network\", \"sandbox\"]",
		"[\"--network=none\", 7]",
		"{\"--oci-seccomp\": true}",
	};
	static const char *const accepted[] = {
		"[\"--network=none\", \"--oci-seccomp\"]",
		"[\"-oci-seccomp=true\", \"--network\", \"none\", \"--debug\"]",
		"[\"--platform=ptrace\", \"--oci-seccomp=true\", \"-network=none\"]",
	};
	struct host_facts f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
		assert_false(daemon_passes(info_runsc_args(refused[i]), "runsc", "runsc_args", &f));
	assert_false(daemon_passes(info_runsc_args(NULL), "runsc", "runsc_args", &f));
	for (i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
		assert_true(daemon_passes(info_runsc_args(accepted[i]), "runsc", NULL, &f));
	/* runc sessions do not depend on how runsc is registered. */
	assert_true(daemon_passes(info_runsc_args("[]"), "runc", NULL, &f));
}

static void
test_old_api_refused(void **state)
{
	json_t *version = json_pack("{s:s, s:s}", "ApiVersion", "1.40", "Version", "19.03");
	json_t *info = info_json("linux", "Debian", "name=seccomp,profile=default", false);
	struct check_list l;

	(void)state;
	check_list_init(&l);
	preflight_daemon(version, info, "runc", &l, NULL);
	assert_false(check_list_find(&l, "api_version")->pass);
	check_list_free(&l);
	check_list_init(&l);
	preflight_daemon(json_null(), json_null(), "runc", &l, NULL);	/* garbage: refuse */
	assert_false(check_list_passed(&l));
	check_list_free(&l);
	json_decref(version);
	json_decref(info);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_pattern_refusals),
		cmocka_unit_test(test_core_pattern_accepted),
		cmocka_unit_test(test_local_facts),
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_daemon),
		cmocka_unit_test(test_runsc_absent_refused),
		cmocka_unit_test(test_runsc_args),
		cmocka_unit_test(test_old_api_refused),
	};

	return cmocka_run_group_tests_name("preflight", tests, NULL, NULL);
}
