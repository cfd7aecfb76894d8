/*
 * The host checks as one table, and airlock doctor without a daemon: an
 * endpoint that cannot be used leaves every later check listed as not
 * run, in the table's order; the installed upstreams, one check each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "preflight.h"
#include "scratch.h"

/* Every row: its own lower-case id, help text, stages in running order. */
static void
test_table(void **state)
{
	int c, d;

	(void)state;
	for (c = 0; c < HOST_CHECK_COUNT; c++) {
		const char *id = host_check_id(c);

		assert_true(id[0] != '\0' && strlen(id) < CHECK_ID_MAX);
		for (; *id; id++)
			assert_true(islower((unsigned char)*id) || *id == '_');
		assert_true(strlen(host_check_help(c)) > 10);
		assert_true(strlen(host_check_help(c)) < CHECK_VALUE_MAX);	/* a not-run item's text */
		assert_int_equal(host_check_by_id(host_check_id(c)), c);
		if (c > 0)
			assert_true(host_check_stage(c) >= host_check_stage(c - 1));
		for (d = 0; d < c; d++)
			assert_string_not_equal(host_check_id(c), host_check_id(d));
	}
	assert_int_equal(host_check_by_id("no_such_check"), HOST_CHECK_COUNT);
	assert_int_equal(host_check_by_id("catalog.search"), HOST_CHECK_CATALOG);
	assert_int_equal(host_check_by_id("os.x"), HOST_CHECK_OS);
	assert_int_equal(host_check_by_id("o"), HOST_CHECK_COUNT);
	assert_int_equal(host_check_by_id(NULL), HOST_CHECK_COUNT);
	assert_string_equal(host_check_id(HOST_CHECK_COUNT), "unknown");
}

/*
 * The report lists each table row exactly once, in order; rows at stage
 * `unrun` and later are not run, the ones before it ran.
 */
static void
assert_listed(const struct doctor_report *r, enum host_check_stage unrun)
{
	int c, host_rows = 0;

	for (c = 0; c < HOST_CHECK_COUNT; c++)
		host_rows += host_check_stage(c) <= HOST_STAGE_DAEMON;
	assert_true(host_rows > 10);
	assert_int_equal(r->checks.n, host_rows);
	for (c = 0; c < host_rows; c++) {
		const struct check_item *it = &r->checks.items[c];

		assert_string_equal(it->id, host_check_id(c));
		assert_int_equal(it->run, host_check_stage(c) < unrun);
		if (!it->run) {
			assert_false(it->pass);
			assert_string_equal(it->expected, host_check_help(c));
		}
	}
}

static void
test_remote_endpoint(void **state)
{
	struct doctor_report r;

	(void)state;
	assert_false(doctor_run("tcp://127.0.0.1:2375", "runc", &r));
	assert_listed(&r, HOST_STAGE_PING);
	assert_false(check_list_find(&r.checks, "endpoint")->pass);
	assert_string_equal(r.socket, "");
	doctor_report_free(&r);
}

/* A unix socket nobody listens on: the endpoint passes, the daemon never answers. */
static void
test_no_daemon(void **state)
{
	struct doctor_report r;

	(void)state;
	assert_false(doctor_run("unix:///nonexistent/airlock-test/docker.sock", "runc", &r));
	assert_listed(&r, HOST_STAGE_INFO);
	assert_true(check_list_find(&r.checks, "endpoint")->pass);
	assert_true(check_list_find(&r.checks, "daemon_ping")->run);
	assert_false(check_list_find(&r.checks, "daemon_ping")->pass);
	assert_string_equal(r.socket, "/nonexistent/airlock-test/docker.sock");
	doctor_report_free(&r);
}

/* What preflight_daemon adds are exactly the table's daemon-stage rows. */
static void
test_daemon_rows_in_table(void **state)
{
	json_t *version = json_pack("{s:s, s:s}", "ApiVersion", "1.41", "Version", "20.10.24");
	json_t *info = json_pack("{s:s, s:s, s:s, s:s, s:i, s:[s], s:{s:{s:s}}}",
				 "OSType", "linux", "OperatingSystem", "Debian",
				 "KernelVersion", "6.1.0", "CgroupVersion", "2", "NCPU", 2,
				 "SecurityOptions", "name=seccomp,profile=default",
				 "Runtimes", "runc", "path", "runc");
	struct check_list l;
	size_t i, daemon_rows = 0;
	int c;

	(void)state;
	check_list_init(&l);
	preflight_daemon(version, info, "runc", &l, NULL);
	assert_true(check_list_passed(&l));
	for (i = 0; i < l.n; i++)
		assert_int_equal(host_check_stage(host_check_by_id(l.items[i].id)),
				 HOST_STAGE_DAEMON);
	for (c = 0; c < HOST_CHECK_COUNT; c++)
		daemon_rows += host_check_stage(c) == HOST_STAGE_DAEMON;
	assert_int_equal(l.n, daemon_rows);
	check_list_free(&l);
	json_decref(version);
	json_decref(info);
}

/*
 * One check per definition, by its key, in name order: a definition whose
 * program is root's passes; one whose program is another's fails naming
 * it; a key longer than an id holds is whole in what was observed; a file
 * that is not NAME.json is no definition; no directory, no check.
 */
static void
test_installed(void **state)
{
	char cat[256], prog[300], def[400], absent[300];
	const struct check_item *good, *bad;
	struct doctor_report r;

	(void)state;
	if (geteuid() != 0)
		skip();
	scratch_make(cat, sizeof cat, "doctor");
	assert_int_equal(chmod(cat, 0755), 0);
	snprintf(prog, sizeof prog, "%s/root", cat);	/* each program in a directory of its own */
	assert_int_equal(mkdir(prog, 0755), 0);
	scratch_put(cat, "root/prog", "#!/bin/sh\n", 0755);
	snprintf(def, sizeof def, "{\"argv\": [\"%s/prog\"]}", prog);
	scratch_put(cat, "good.json", def, 0644);
	snprintf(prog, sizeof prog, "%s/other", cat);
	assert_int_equal(mkdir(prog, 0755), 0);
	scratch_put(cat, "other/theirs", "#!/bin/sh\n", 0755);
	snprintf(prog, sizeof prog, "%s/other/theirs", cat);
	assert_int_equal(chown(prog, 65534, 65534), 0);
	snprintf(def, sizeof def, "{\"argv\": [\"%s\"]}", prog);
	scratch_put(cat, "bad.json", def, 0644);
	scratch_put(cat, "notes.txt", "not a definition", 0644);
	snprintf(def, sizeof def, "{\"argv\": [\"%s/root/prog\"]}", cat);
	scratch_put(cat, "a-key-longer-than-any-check-id-holds.json", def, 0644);

	memset(&r, 0, sizeof r);
	check_list_init(&r.checks);
	doctor_installed(&r, cat);
	assert_int_equal(r.checks.n, 3);
	assert_string_equal(r.checks.items[1].id, "installed.bad");
	/* an id is cut to fit; the definition's name is whole in what was observed */
	assert_true(strncmp(r.checks.items[0].id, "installed.a-key-", 16) == 0);
	assert_string_equal(r.checks.items[0].observed,
			    "a-key-longer-than-any-check-id-holds.json: root's, as what it runs");
	good = check_list_find(&r.checks, "installed.good");
	bad = check_list_find(&r.checks, "installed.bad");
	assert_non_null(good);
	if (!good->pass || !good->run)
		fail_msg("installed.good: %s", good->observed);
	assert_string_equal(good->observed, "good.json: root's, as what it runs");
	assert_false(bad->pass);
	snprintf(def, sizeof def, "%s: not owned by root", prog);	/* the rule's words: help's */
	assert_string_equal(bad->observed, def);
	assert_int_equal(host_check_by_id(bad->id), HOST_CHECK_INSTALLED);
	doctor_report_free(&r);

	snprintf(absent, sizeof absent, "%s/absent", cat);
	memset(&r, 0, sizeof r);
	check_list_init(&r.checks);
	doctor_installed(&r, absent);
	assert_int_equal(r.checks.n, 0);
	doctor_report_free(&r);
	assert_int_equal(unlink(prog), 0);
	snprintf(prog, sizeof prog, "%s/root/prog", cat);
	assert_int_equal(unlink(prog), 0);
	snprintf(prog, sizeof prog, "%s/root", cat);
	assert_int_equal(rmdir(prog), 0);
	snprintf(prog, sizeof prog, "%s/other", cat);
	assert_int_equal(rmdir(prog), 0);
	scratch_remove(cat);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_remote_endpoint),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test(test_daemon_rows_in_table),
		cmocka_unit_test(test_installed),
	};

	return cmocka_run_group_tests_name("doctor", tests, NULL, NULL);
}
