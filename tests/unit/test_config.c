#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_custom_classes),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
