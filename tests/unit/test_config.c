#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

#define GOOD \
	"{\"upstreams\": {\"vault\": {\"argv\": [\"/usr/bin/true\"], \"cwd\": \"data\"," \
	"                           \"env\": {\"PATH\": \"/usr/bin\"}, \"timeout_ms\": 500}}," \
	" \"tools\": {\"store\": {\"upstream\": \"vault\", \"remote\": \"store\"," \
	"            \"data_class\": \"confidential\", \"sink_ceiling\": \"confidential\"," \
	"            \"response_ceiling\": \"confidential\"}}," \
	" \"aliases\": {\"save\": \"store\"}," \
	" \"initial\": {\"file\": \"payload.json\", \"class\": \"pii\", \"withhold\": [\"secret\"]}," \
	" \"bounds\": {\"calls\": 3, \"session_ms\": 2000}}"

/* Load JSON text; returns the error message, or "" on success. */
static const char *
load(struct airlock_config *c, const char *text)
{
	static struct al_err err;
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);

	if (!root)
		fail_msg("test JSON does not parse: %s", jerr.text);
	err.msg[0] = '\0';
	config_init(c);
	c->base_dir = strdup("/etc/airlock");
	config_load_json(c, root, 2, &err);
	json_decref(root);
	return err.msg;
}

static void
refused(const char *text, const char *part)
{
	struct airlock_config c;
	const char *msg = load(&c, text);

	if (!strstr(msg, part))
		fail_msg("expected an error containing '%s', got '%s'", part, msg);
	config_free(&c);
}

static void
test_good(void **state)
{
	struct airlock_config c;

	(void)state;
	assert_string_equal(load(&c, GOOD), "");
	assert_int_equal(c.n_upstreams, 1);
	assert_string_equal(c.upstreams[0].cwd, "/etc/airlock/data");
	assert_string_equal(c.upstreams[0].env.v[0], "PATH=/usr/bin");
	assert_int_equal(c.upstreams[0].timeout_ms, 500);
	assert_int_equal(config_alias_tool(&c, "save"), 0);
	assert_int_equal(config_alias_tool(&c, "store"), -1);	/* names are not aliases */
	assert_int_equal(c.tools[0].sink_ceiling, 2);
	assert_string_equal(c.initial.file, "/etc/airlock/payload.json");
	assert_int_equal(c.initial.class, 1);
	assert_int_equal(c.bounds.calls, 3);
	assert_int_equal(c.bounds.frame_bytes, 65536);	/* the default */
	assert_int_equal(c.bounds.stdout_bytes, 1 << 20);
	config_free(&c);
}

/* policy.declassify_by_hold: off unless the file says true; strictly a boolean, its only key. */
static void
test_policy(void **state)
{
	struct airlock_config c;

	(void)state;
	assert_string_equal(load(&c, GOOD), "");
	assert_false(c.policy.declassify_by_hold);	/* the default */
	config_free(&c);
	assert_string_equal(load(&c, "{\"policy\": {\"declassify_by_hold\": true}}"), "");
	assert_true(c.policy.declassify_by_hold);
	config_free(&c);
	assert_string_equal(load(&c, "{\"policy\": {\"declassify_by_hold\": false}}"), "");
	assert_false(c.policy.declassify_by_hold);
	config_free(&c);
	assert_string_equal(load(&c, "{\"policy\": {}}"), "");
	assert_false(c.policy.declassify_by_hold);
	config_free(&c);
	refused("{\"policy\": {\"declassify_by_hold\": 1}}",
		"policy.declassify_by_hold: expected true or false");
	refused("{\"policy\": {\"declassify_by_hold\": \"true\"}}",
		"policy.declassify_by_hold: expected true or false");
	refused("{\"policy\": {\"declassify_by_hold\": null}}",
		"policy.declassify_by_hold: expected true or false");
	refused("{\"policy\": {\"declassify\": true}}", "policy.declassify: unknown key");
	refused("{\"policy\": true}", "policy");
	refused("{\"bounds\": {\"declassify_by_hold\": true}}",
		"bounds.declassify_by_hold: unknown key");
}

#define IMG "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define BOXED(rest) "{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"isolation\": \"container\"" rest "}}}"

/* "isolation": the default is a process; a container needs an image ID and nothing host-only. */
static void
test_isolation(void **state)
{
	struct airlock_config c;

	(void)state;
	assert_string_equal(load(&c, "{\"upstreams\": {\"u\": {\"argv\": [\"/x\"]}}}"), "");
	assert_int_equal(c.upstreams[0].isolation, UPSTREAM_PROCESS);
	config_free(&c);
	assert_string_equal(load(&c, "{\"upstreams\": {\"u\": {\"argv\": [\"/x\"],"
				 " \"isolation\": \"process\"}}}"), "");
	assert_int_equal(c.upstreams[0].isolation, UPSTREAM_PROCESS);
	config_free(&c);
	assert_string_equal(load(&c, BOXED(", \"image\": \"" IMG "\", \"network\": \"none\","
				       " \"env\": {\"PATH\": \"/usr/bin\"}")), "");
	assert_int_equal(c.upstreams[0].isolation, UPSTREAM_CONTAINER);
	assert_string_equal(c.upstreams[0].image, IMG);
	assert_string_equal(c.upstreams[0].argv.v[0], "/x");
	config_free(&c);
}

/* Every bad value fails closed, with a fixed message that names the fix. */
static void
test_isolation_refusals(void **state)
{
	(void)state;
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"isolation\": \"vm\"}}}",
		"upstreams.u.isolation: expected \"process\" or \"container\"");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"isolation\": \"Container\"}}}",
		"upstreams.u.isolation: expected \"process\" or \"container\"");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"isolation\": true}}}",
		"upstreams.u.isolation: expected \"process\" or \"container\"");
	refused(BOXED(""), "upstreams.u.image: required with isolation container"
		" (an immutable local image ID sha256:<64 hex>)");
	refused(BOXED(", \"image\": \"node:20\""),
		"upstreams.u.image: must be an immutable local image ID sha256:<64 hex>, not a name or tag");
	refused(BOXED(", \"image\": \"sha256:0123\""), "upstreams.u.image: must be an immutable");
	refused(BOXED(", \"image\": 7"), "upstreams.u.image: must be an immutable");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"image\": \"" IMG "\"}}}",
		"upstreams.u.image: only with \"isolation\": \"container\"");
	refused(BOXED(", \"image\": \"" IMG "\", \"network\": {\"connect\": [443]}"),
		"upstreams.u.network: isolation container allows only \"none\"");
	refused(BOXED(", \"image\": \"" IMG "\", \"paths\": {\"rw\": [\"/tmp\"]}"),
		"upstreams.u.paths: not with isolation container");
	refused(BOXED(", \"image\": \"" IMG "\", \"user\": \"nobody\""),
		"upstreams.u.user: not with isolation container");
	refused(BOXED(", \"image\": \"" IMG "\", \"cwd\": \"/srv\""),
		"upstreams.u.cwd: not with isolation container");
	refused(BOXED(", \"image\": \"" IMG "\", \"privileged\": true"),
		"upstreams.u.privileged: not with isolation container");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"rel\"], \"isolation\": \"container\","
		" \"image\": \"" IMG "\"}}}", "absolute path");
}

static void
test_refusals(void **state)
{
	(void)state;
	refused("{\"bogus\": 1}", "bogus: unknown key");
	refused("{\"bounds\": {\"frame_bytes\": 70000}}", "bounds.frame_bytes");
	refused("{\"bounds\": {\"stdout_bytes\": 5000000}}", "bounds.stdout_bytes");
	refused("{\"bounds\": {\"session_ms\": 700000}}", "bounds.session_ms");
	refused("{\"bounds\": {\"calls\": -1}}", "bounds.calls");
	refused("{\"bounds\": {\"cals\": 3}}", "bounds.cals: unknown key");
	refused("{\"classes\": []}", "classes");
	refused("{\"classes\": [\"a\", \"a\"]}", "duplicate class");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"relative\"]}}}", "absolute path");
	refused("{\"upstreams\": {\"u\": {\"argv\": []}}}", "absolute path");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"shell\": true}}}", "upstreams.u.shell: unknown key");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"timeout_ms\": 999999}}}", "timeout_ms");
	refused("{\"tools\": {\"t\": {\"upstream\": \"nowhere\", \"remote\": \"r\", \"data_class\": \"public\","
		" \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}}}", "no upstream named nowhere");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"]}}, \"tools\": {\"t\": {\"upstream\": \"u\","
		" \"remote\": \"r\", \"data_class\": \"secret\", \"sink_ceiling\": \"public\","
		" \"response_ceiling\": \"public\"}}}", "tools.t.data_class");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"]}}, \"tools\": {\"t\": {\"upstream\": \"u\","
		" \"remote\": \"r\", \"data_class\": \"public\", \"sink_ceiling\": \"public\","
		" \"response_ceiling\": \"public\", \"pin\": \"abc\"}}}", "tools.t.pin");
	refused("{\"aliases\": {\"save\": \"store\"}}", "aliases.save: not a tool");
	refused("{\"initial\": {\"class\": \"top-secret\"}}", "initial.class");
	refused("{\"initial\": {\"class\": \"public\", \"withold\": []}}", "initial.withold: unknown key");
	refused("{\"profile\": {\"user\": \"root\"}}", "profile.user");
}

/* Build {"k0": member, "k1": member, ...} with n members. */
static char *
object_of(size_t n, const char *member)
{
	size_t cap = 64 + n * (strlen(member) + 16), i, len = 1;
	char *s = malloc(cap);

	assert_non_null(s);
	strcpy(s, "{");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\": %s", i ? ", " : "", i, member);
	snprintf(s + len, cap - len, "}");
	return s;
}

static void
refused_wrapped(const char *before, size_t n, const char *member, const char *after,
		const char *part)
{
	char *obj = object_of(n, member), *text;

	assert_true(asprintf(&text, "%s%s%s", before, obj, after) > 0);
	refused(text, part);
	free(text);
	free(obj);
}

/* Every named object has a bound on its members and on its names. */
static void
test_named_object_bounds(void **state)
{
	(void)state;
	refused_wrapped("{\"upstreams\": ", 17, "{\"argv\": [\"/x\"]}", "}",
			"upstreams: expected an object of at most 16 servers");
	refused("{\"upstreams\": []}", "upstreams: expected an object of at most 16 servers");
	refused_wrapped("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"], \"env\": ", 65, "\"v\"", "}}}",
			"upstreams.u.env: expected an object of at most 64 names");
	refused_wrapped("{\"tools\": ", 65, "{}", "}", "tools: expected an object of at most 64 tools");
	refused_wrapped("{\"aliases\": ", 65, "\"t\"", "}",
			"aliases: expected an object of at most 64 operations");
	refused_wrapped("{\"profile\": {\"env\": ", 65, "\"v\"", "}}",
			"profile.env: expected an object of at most 64 names");
	refused("{\"profile\": {\"tmpfs\": {\"/a\": 4096, \"/b\": 4096, \"/c\": 4096,"
		" \"/d\": 4096, \"/e\": 4096}}}", "profile.tmpfs: expected an object of at most 4 targets");
	refused("{\"upstreams\": {\"\": {\"argv\": [\"/x\"]}}}", "upstreams: a name must be 1..63 bytes");
	refused("{\"tools\": {\"\": {}}}", "tools: a name must be 1..63 bytes");
	refused("{\"aliases\": {\"\": \"t\"}}", "aliases: an operation must be 1..64 bytes");
	refused("{\"aliases\": {\"save\": 3}}", "aliases.save: not a tool in the catalog");
	/* names reach every screen and reply: ESC, BEL, DEL and C1 (U+009B) drive terminals */
	refused("{\"tools\": {\"st\\u001b]2;X\\u0007\": {}}}", "tools: a name must hold no control character");
	refused("{\"aliases\": {\"sa\\u009bve\": \"t\"}}", "aliases: an operation must hold no control character");
	refused("{\"upstreams\": {\"u\\u007f\": {\"argv\": [\"/x\"]}}}",
		"upstreams: a name must hold no control character");
	refused("{\"upstreams\": {\"u\": {\"argv\": [\"/x\"]}}, \"tools\": {\"t\": {\"upstream\": \"u\","
		" \"remote\": \"re\\u001b[2J\"}}}", "tools.t.remote: a name must hold no control character");
	refused("{\"profile\": {\"env\": {\"1X\": \"v\"}}}", "profile.env.1X: not a valid variable name");
	refused("{\"profile\": {\"tmpfs\": {\"/proc\": 4096}}}", "profile.tmpfs: target /proc is not allowed");
}

static void
test_custom_classes(void **state)
{
	struct airlock_config c;

	(void)state;
	assert_string_equal(load(&c, "{\"classes\": [\"low\", \"high\"],"
				 " \"initial\": {\"class\": \"high\"}}"), "");
	assert_int_equal(c.classes.n, 2);
	assert_int_equal(c.initial.class, 1);
	assert_int_equal(class_rank(&c.classes, "public"), -1);
	config_free(&c);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * An operator's JSON file: a FIFO is refused without blocking in open (no
 * writer ever comes), a file one byte over the cap is refused, not cut to
 * it, and the reasons carry no path.
 */
static void
test_read_json(void **state)
{
	char dir[] = "/tmp/airlock-config-XXXXXX", path[64], fifo[64];
	struct al_err err = { "" };
	json_t *root;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/p.json", dir);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);

	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(config_read_json(fifo, 64, &err));
	assert_string_equal(err.msg, "not a regular file");
	assert_null(config_read_json(dir, 64, &err));
	assert_string_equal(err.msg, "not a regular file");
	assert_null(config_read_json(path, 64, &err));
	assert_string_equal(err.msg, "cannot open: No such file or directory");

	/* {"a": "xxx…"}: exactly 16 bytes is read whole; 17 is refused. */
	write_file(path, "{\"a\": \"xxxxxxx\"}");
	root = config_read_json(path, 16, &err);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "a")), "xxxxxxx");
	json_decref(root);
	assert_null(config_read_json(path, 15, &err));
	assert_string_equal(err.msg, "larger than 15 bytes");

	write_file(path, "{\"a\": 1, \"a\": 2}");
	assert_null(config_read_json(path, 64, &err));
	assert_non_null(strstr(err.msg, "line 1 column"));
	assert_non_null(strstr(err.msg, "duplicate"));

	unlink(fifo);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_isolation),
		cmocka_unit_test(test_isolation_refusals),
		cmocka_unit_test(test_custom_classes),
		cmocka_unit_test(test_named_object_bounds),
		cmocka_unit_test(test_read_json),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
