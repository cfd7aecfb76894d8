#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "profile.h"
#include "seccomp_profile.h"

#include "scratch.h"

#define IMAGE "sha256:0c88912505e2c6cbb2108b07acd6e30665b153e491259ab2ee8babe6578e567c"

/* Apply a profile object given as JSON text; returns the error or "". */
static const char *
apply(struct profile *p, const char *text)
{
	static struct al_err err;
	json_t *obj = json_loads(text, 0, NULL);

	assert_non_null(obj);
	err.msg[0] = '\0';
	profile_defaults(p);
	profile_apply_json(p, obj, 2, &err);
	json_decref(obj);
	return err.msg;
}

static void
assert_refused(const char *text, const char *message_part)
{
	struct profile p;
	const char *msg = apply(&p, text);

	if (!strstr(msg, message_part))
		fail_msg("%s: expected an error containing '%s', got '%s'", text, message_part, msg);
	profile_free(&p);
}

static void
test_root_spellings(void **state)
{
	static const char *root[] = { "", "0", "00", "root", "ROOT", " 0", "0:0",
		"root:root", "0:1000", "1000:0", "1000:root", "1000:", NULL };
	static const char *fine[] = { "10001:10001", "1000:1000", "65534:65534", NULL };
	size_t i;

	(void)state;
	for (i = 0; root[i]; i++)
		if (!profile_user_is_root(root[i]))
			fail_msg("'%s' was not recognised as root", root[i]);
	assert_true(profile_user_is_root(NULL));
	for (i = 0; fine[i]; i++)
		assert_false(profile_user_is_root(fine[i]));
	assert_false(profile_user_numeric("nobody"));
	assert_false(profile_user_numeric("1000"));
	assert_true(profile_user_numeric("1000:1000"));
}

/* A uid or gid is 32 bits and (uid_t)-1 means "no id": anything past is refused. */
static void
test_user_id_range(void **state)
{
	(void)state;
	assert_true(profile_user_numeric("4294967294:4294967294"));
	assert_false(profile_user_numeric("4294967295:10001"));
	assert_false(profile_user_numeric("4294967296:10001"));
	assert_false(profile_user_numeric("10001:4294967296"));
	assert_false(profile_user_numeric("18446744073709551617:1"));
	assert_refused("{\"user\": \"4294967296:10001\"}", "profile.user: uid and gid must be");
	assert_refused("{\"user\": \"10001:4294967296\"}", "profile.user: uid and gid must be");
}

static void
test_image_id_form(void **state)
{
	(void)state;
	assert_true(profile_image_id_valid(IMAGE));
	assert_false(profile_image_id_valid("alpine:latest"));
	assert_false(profile_image_id_valid("alpine@" IMAGE));
	assert_false(profile_image_id_valid("sha256:0C88912505E2C6CBB2108B07ACD6E30665B153E491259AB2EE8BABE6578E567C"));
	assert_false(profile_image_id_valid("sha256:0c889125"));
	assert_false(profile_image_id_valid(IMAGE "00"));
}

static void
test_refusals(void **state)
{
	(void)state;
	assert_refused("{\"memory\": 5368709120}", "profile.memory");
	assert_refused("{\"memory\": 0}", "profile.memory");
	assert_refused("{\"pids_limit\": 0}", "profile.pids_limit");
	assert_refused("{\"pids_limit\": -1}", "profile.pids_limit");
	assert_refused("{\"pids_limit\": 2000}", "profile.pids_limit");
	assert_refused("{\"pids_limit\": \"32\"}", "profile.pids_limit: expected an integer");
	assert_refused("{\"bogus\": 1}", "profile.bogus: unknown key");
	assert_refused("{\"user\": \"0\"}", "profile.user: root");
	assert_refused("{\"user\": \"root:root\"}", "profile.user: root");
	assert_refused("{\"user\": \"nobody:nogroup\"}", "profile.user: expected numeric");
	assert_refused("{\"image\": \"alpine:latest\"}", "profile.image");
	assert_refused("{\"image\": \"alpine@" IMAGE "\"}", "profile.image");
	assert_refused("{\"runtime\": \"kata\"}", "profile.runtime");
	assert_refused("{\"runtime\": \"runsc\", \"pids_limit\": 32}", "runsc needs at least");
	assert_refused("{\"cpus\": 3}", "profile.cpus");
	assert_refused("{\"cpus\": 0}", "profile.cpus");
	assert_refused("{\"ipc\": \"host\"}", "profile.ipc");
	assert_refused("{\"ipc\": \"shareable\"}", "profile.ipc");
	assert_refused("{\"tmpfs\": {\"/proc/x\": 4096}}", "not allowed");
	assert_refused("{\"tmpfs\": {\"/tmp\": 1073741824}}", "profile.tmpfs./tmp");
	assert_refused("{\"env\": {\"1BAD\": \"x\"}}", "not a valid variable name");
	assert_refused("{\"env\": {\"A\": 1}}", "profile.env.A");
	assert_refused("{\"entrypoint\": \"/bin/sh\"}", "profile.entrypoint");
	assert_refused("{\"nofile\": 1000000}", "profile.nofile");
	assert_refused("[]", "profile: expected an object");
}

static const json_t *
hc(const json_t *body, const char *key)
{
	return json_object_get(json_object_get(body, "HostConfig"), key);
}

static void
test_runsc_default_pids(void **state)
{
	struct profile p;

	(void)state;
	assert_string_equal(apply(&p, "{\"runtime\": \"runsc\"}"), "");
	assert_int_equal(p.pids_limit, PROFILE_PIDS_RUNSC);
	profile_free(&p);
	assert_string_equal(apply(&p, "{\"pids_limit\": 256, \"runtime\": \"runsc\"}"), "");
	assert_int_equal(p.pids_limit, 256);
	profile_free(&p);
}

/* runsc bounds the agent's processes by nproc, with room for gVisor's threads; runc never. */
static void
test_nproc(void **state)
{
	struct owner_labels who = { .pid = 1, .boot_id = "b", .session = "s" };
	struct profile p;
	const json_t *u;
	json_t *body;

	(void)state;
	assert_string_equal(apply(&p, "{\"runtime\": \"runsc\"}"), "");
	assert_int_equal(p.nproc, PROFILE_NPROC_RUNSC);
	body = profile_create_body(&p, &who);
	assert_non_null(body);
	u = json_array_get(hc(body, "Ulimits"), 1);
	assert_string_equal(json_string_value(json_object_get(u, "Name")), "nproc");
	assert_int_equal(json_integer_value(json_object_get(u, "Soft")), PROFILE_NPROC_RUNSC);
	assert_int_equal(json_integer_value(json_object_get(u, "Hard")), PROFILE_NPROC_RUNSC);
	json_decref(body);
	profile_free(&p);
	assert_string_equal(apply(&p, "{\"nproc\": 8, \"runtime\": \"runsc\"}"), "");
	assert_int_equal(p.nproc, 8);
	profile_free(&p);
	assert_string_equal(apply(&p, "{}"), "");
	assert_int_equal(p.nproc, 0);
	body = profile_create_body(&p, &who);
	assert_int_equal(json_array_size(hc(body, "Ulimits")), 1);
	json_decref(body);
	profile_free(&p);
	assert_refused("{\"nproc\": 8}", "profile.nproc: runsc only");
	assert_refused("{\"nproc\": 8, \"runtime\": \"runc\"}", "profile.nproc: runsc only");
	assert_refused("{\"nproc\": 0, \"runtime\": \"runsc\"}", "profile.nproc");
	assert_refused("{\"nproc\": 129, \"runtime\": \"runsc\"}", "profile.nproc");
	assert_refused("{\"runtime\": \"runsc\", \"pids_limit\": 128}", "per nproc");
	assert_refused("{\"runtime\": \"runsc\", \"nproc\": 64, \"pids_limit\": 500}", "per nproc");
}

static void
test_create_body_defaults(void **state)
{
	struct owner_labels who = { .pid = 42, .start_ticks = 7, .boot_id = "b", .session = "s" };
	struct profile p;
	json_t *body;

	(void)state;
	profile_defaults(&p);
	snprintf(p.image, sizeof p.image, "%s", IMAGE);
	body = profile_create_body(&p, &who);
	assert_non_null(body);
	assert_string_equal(json_string_value(json_object_get(body, "Image")), IMAGE);
	assert_string_equal(json_string_value(json_object_get(body, "User")), "10001:10001");
	assert_true(json_is_false(json_object_get(body, "Tty")));
	assert_true(json_is_true(json_object_get(body, "OpenStdin")));
	assert_true(json_is_true(json_object_get(body, "StdinOnce")));
	assert_int_equal(json_array_size(json_object_get(body, "Env")), 0);
	assert_null(json_object_get(body, "Entrypoint"));	/* the image's */
	assert_string_equal(json_string_value(hc(body, "NetworkMode")), "none");
	assert_true(json_is_true(json_object_get(body, "NetworkDisabled")));
	assert_true(json_is_true(hc(body, "ReadonlyRootfs")));
	assert_true(json_is_false(hc(body, "Privileged")));
	assert_string_equal(json_string_value(json_array_get(hc(body, "CapDrop"), 0)), "ALL");
	assert_int_equal(json_array_size(hc(body, "CapAdd")), 0);
	assert_string_equal(json_string_value(json_array_get(hc(body, "SecurityOpt"), 0)),
			    "no-new-privileges=true");
	assert_int_equal(json_array_size(hc(body, "SecurityOpt")), 1);
	assert_string_equal(json_string_value(json_object_get(hc(body, "LogConfig"), "Type")), "none");
	assert_string_equal(json_string_value(json_object_get(hc(body, "RestartPolicy"), "Name")), "no");
	assert_int_equal(json_integer_value(hc(body, "PidsLimit")), 32);
	assert_int_equal(json_integer_value(hc(body, "Memory")), 128 << 20);
	assert_int_equal(json_integer_value(hc(body, "MemorySwap")), 128 << 20);
	assert_int_equal(json_integer_value(hc(body, "NanoCpus")), 1000000000);
	assert_string_equal(json_string_value(hc(body, "IpcMode")), "none");
	assert_string_equal(json_string_value(hc(body, "CgroupnsMode")), "private");
	assert_true(json_is_true(hc(body, "Init")));
	assert_string_equal(json_string_value(hc(body, "Runtime")), "runc");
	assert_string_equal(json_string_value(json_object_get(json_array_get(hc(body, "Ulimits"), 0), "Name")), "core");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(hc(body, "Ulimits"), 0), "Hard")), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(body, "Labels"), LABEL_OWNER_PID)), "42");
	assert_string_equal(json_string_value(json_object_get(json_object_get(body, "Labels"), LABEL_SESSION)), "s");
	json_decref(body);
	profile_free(&p);
}

/*
 * runsc: no-new-privileges and airlock's seccomp profile, its exact bytes
 * (engine/admission/seccomp/runsc.json), which clone3 is allowed by (issue #33).
 */
static void
test_create_body_runsc_seccomp(void **state)
{
	struct owner_labels who = { .pid = 1, .boot_id = "b", .session = "s" };
	const char *entry;
	struct profile p;
	json_t *body, *profile;

	(void)state;
	assert_string_equal(apply(&p, "{\"runtime\": \"runsc\"}"), "");
	body = profile_create_body(&p, &who);
	assert_non_null(body);
	assert_int_equal(json_array_size(hc(body, "SecurityOpt")), 2);
	assert_string_equal(json_string_value(json_array_get(hc(body, "SecurityOpt"), 0)),
			    "no-new-privileges=true");
	entry = json_string_value(json_array_get(hc(body, "SecurityOpt"), 1));
	assert_non_null(entry);
	assert_true(strncmp(entry, "seccomp=", 8) == 0);
	assert_string_equal(entry + 8, seccomp_runsc_profile());
	assert_true(seccomp_is_runsc_entry(entry));
	profile = json_loads(entry + 8, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(profile, "defaultAction")),
			    "SCMP_ACT_ERRNO");
	json_decref(profile);
	json_decref(body);
	profile_free(&p);
}

/* runsc: a read-only /tmp unless the operator configured one; runc: none. */
static void
test_create_body_runsc_tmp(void **state)
{
	struct owner_labels who = { .pid = 1, .boot_id = "b", .session = "s" };
	struct profile p;
	json_t *body;

	(void)state;
	assert_string_equal(apply(&p, "{\"runtime\": \"runsc\"}"), "");
	body = profile_create_body(&p, &who);
	assert_string_equal(json_string_value(json_object_get(hc(body, "Tmpfs"), "/tmp")),
			    "ro,noexec,nosuid,nodev,size=4096");
	assert_int_equal(json_object_size(hc(body, "Tmpfs")), 1);
	json_decref(body);
	profile_free(&p);
	assert_string_equal(apply(&p, "{\"runtime\": \"runsc\", \"tmpfs\": {\"/tmp\": 8192}}"), "");
	body = profile_create_body(&p, &who);
	assert_string_equal(json_string_value(json_object_get(hc(body, "Tmpfs"), "/tmp")),
			    "rw,noexec,nosuid,nodev,size=8192");
	json_decref(body);
	profile_free(&p);
	assert_string_equal(apply(&p, "{\"runtime\": \"runc\"}"), "");
	body = profile_create_body(&p, &who);
	assert_null(hc(body, "Tmpfs"));
	json_decref(body);
	profile_free(&p);
}

static void
test_create_body_configured(void **state)
{
	struct owner_labels who = { .pid = 1, .boot_id = "b", .session = "s" };
	struct profile p;
	json_t *body;

	(void)state;
	assert_string_equal(apply(&p, "{\"entrypoint\": [\"/agent\", \"--x\"], \"cmd\": [],"
				  " \"env\": {\"MODE\": \"normal\"}, \"ipc\": \"private\","
				  " \"nofile\": 64, \"tmpfs\": {\"/tmp\": 1048576}, \"memory\": 67108864}"), "");
	body = profile_create_body(&p, &who);
	assert_int_equal(json_array_size(json_object_get(body, "Entrypoint")), 2);
	assert_int_equal(json_array_size(json_object_get(body, "Cmd")), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(body, "Env"), 0)), "MODE=normal");
	assert_string_equal(json_string_value(hc(body, "IpcMode")), "private");
	assert_int_equal(json_array_size(hc(body, "Ulimits")), 2);
	assert_string_equal(json_string_value(json_object_get(hc(body, "Tmpfs"), "/tmp")),
			    "rw,noexec,nosuid,nodev,size=1048576");
	assert_int_equal(json_integer_value(hc(body, "MemorySwap")), 67108864);
	json_decref(body);
	profile_free(&p);
}

static void
test_container_name(void **state)
{
	char a[48], b[48];
	struct al_err err;
	size_t i;

	(void)state;
	assert_int_equal(profile_container_name(a, &err), 0);
	assert_int_equal(profile_container_name(b, &err), 0);
	assert_int_equal(strlen(a), 8 + 32);
	assert_memory_equal(a, "airlock-", 8);
	for (i = 8; i < 40; i++)
		assert_true(isxdigit((unsigned char)a[i]) && !isupper((unsigned char)a[i]));
	assert_string_not_equal(a, b);
}

static void
test_owner_labels(void **state)
{
	struct owner_labels who;
	struct al_err err;

	(void)state;
	assert_int_equal(owner_labels_self(&who, "sess", &err), 0);
	assert_int_equal(who.pid, (long)getpid());
	assert_true(who.start_ticks > 0);
	assert_int_equal(strlen(who.boot_id), 36);
	assert_string_equal(who.session, "sess");
}

static void
test_config_file_errors(void **state)
{
	struct airlock_config c;
	struct al_err err;
	char path[] = "/tmp/airlock-test-config-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_true(write(fd, "{\"profile\": {\"memory\": 1}}", 26) == 26);
	close(fd);
	config_init(&c);
	assert_int_equal(config_load_file(&c, path, 2, &err), -1);
	assert_non_null(strstr(err.msg, "profile.memory"));
	config_free(&c);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(write(fd, "{\"profile\": {}, \"profile\": {}}", 30) == 30);
	close(fd);
	config_init(&c);
	assert_int_equal(config_load_file(&c, path, 2, &err), -1);
	assert_non_null(strstr(err.msg, "duplicate"));
	config_free(&c);
	unlink(path);
	config_init(&c);
	assert_int_equal(config_load_file(&c, "/nonexistent/airlock.json", 2, &err), -1);
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	config_free(&c);
}

/* Only a container carrying every airlock label may be guarded (and stopped). */
static void
test_labels_managed(void **state)
{
	struct owner_labels who = { .pid = 42, .start_ticks = 7, .boot_id = "b", .session = "s" };
	json_t *body, *labels;
	static const char *const keys[] = { LABEL_MANAGED, LABEL_SESSION, LABEL_OWNER_PID,
					    LABEL_OWNER_START, LABEL_OWNER_BOOT };
	struct profile p;
	size_t i;

	(void)state;
	profile_defaults(&p);
	body = profile_create_body(&p, &who);
	labels = json_object_get(body, "Labels");
	assert_true(profile_labels_managed(labels));
	assert_false(profile_labels_managed(NULL));
	assert_false(profile_labels_managed(json_object_get(body, "Image")));
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *copy = json_deep_copy(labels);

		json_object_del(copy, keys[i]);
		assert_false(profile_labels_managed(copy));
		json_object_set_new(copy, keys[i], json_string(""));
		assert_false(profile_labels_managed(copy));
		json_decref(copy);
	}
	json_object_set_new(labels, LABEL_MANAGED, json_string("0"));
	assert_false(profile_labels_managed(labels));
	json_decref(body);
	profile_free(&p);
}

static const char *
load_text(const char *text)
{
	static struct al_err err;
	struct airlock_config c;
	char path[] = "/tmp/airlock-test-config-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	err.msg[0] = '\0';
	config_init(&c);
	config_load_file(&c, path, 2, &err);
	config_free(&c);
	unlink(path);
	return err.msg;
}

/* A session file without an image would only fail at create: refused at load, by key. */
static void
test_config_file_needs_image(void **state)
{
	(void)state;
	assert_non_null(strstr(load_text("{}"), "profile: required"));
	assert_non_null(strstr(load_text("{\"profile\": {\"runtime\": \"runc\"}}"),
			       "profile.image: required"));
	assert_string_equal(load_text("{\"profile\": {\"image\": \"" IMAGE "\"}}"), "");
}

/* A directory is not an empty config. */
static void
test_config_file_directory(void **state)
{
	struct airlock_config c;
	struct al_err err;
	char dir[64];

	(void)state;
	scratch_make(dir, sizeof dir, "test-dir");
	config_init(&c);
	assert_int_equal(config_load_file(&c, dir, 2, &err), -1);
	assert_non_null(strstr(err.msg, dir));
	assert_non_null(strstr(err.msg, "not a regular file"));
	config_free(&c);
	scratch_remove(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_spellings),
		cmocka_unit_test(test_image_id_form),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_runsc_default_pids),
		cmocka_unit_test(test_nproc),
		cmocka_unit_test(test_create_body_defaults),
		cmocka_unit_test(test_create_body_configured),
		cmocka_unit_test(test_create_body_runsc_seccomp),
		cmocka_unit_test(test_create_body_runsc_tmp),
		cmocka_unit_test(test_container_name),
		cmocka_unit_test(test_owner_labels),
		cmocka_unit_test(test_config_file_errors),
		cmocka_unit_test(test_user_id_range),
		cmocka_unit_test(test_labels_managed),
		cmocka_unit_test(test_config_file_needs_image),
		cmocka_unit_test(test_config_file_directory),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
