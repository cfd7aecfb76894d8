#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_limits.h"

/*
 * The config's limits (engine/config/config_limits.h): each number's
 * range is the one the parser enforces (its maximum and its minimum
 * accepted, one past it refused naming the key, one below its minimum
 * refused), each default is
 * the one a config without the key gets, each count's cap holds, and
 * docs/configuration.md shows the table exactly as it is rendered.
 */

#define BASE \
	"{\"upstreams\": {\"u\": {\"argv\": [\"/usr/bin/true\"]}}," \
	" \"tools\": {\"t\": {\"upstream\": \"u\", \"remote\": \"t\", \"data_class\": \"public\"," \
	"                   \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}}," \
	" \"aliases\": {\"op\": \"t\"}}"

static json_t *
base(void)
{
	json_t *root = json_loads(BASE, 0, NULL);

	assert_non_null(root);
	return root;
}

/* 0 when accepted, else the error (static). */
static const char *
load(json_t *root, struct airlock_config *c)
{
	static struct al_err err;

	err.msg[0] = '\0';
	config_init(c);
	c->base_dir = strdup("/etc/airlock");
	config_load_json(c, root, 2, &err);
	json_decref(root);
	return err.msg[0] ? err.msg : NULL;
}

/* The base with one number set at the dotted key (upstreams.NAME. is upstreams.u.). */
static json_t *
with_number(const char *key, long long v)
{
	json_t *root = base(), *o = root;
	char path[96], *dot, *part;

	if (strncmp(key, "upstreams.NAME.", 15) == 0)
		snprintf(path, sizeof path, "upstreams.u.%s", key + 15);
	else if (strcmp(key, "profile.tmpfs.PATH") == 0)
		snprintf(path, sizeof path, "profile.tmpfs./tmp");
	else
		snprintf(path, sizeof path, "%s", key);
	for (part = path; (dot = strchr(part, '.')); part = dot + 1) {
		*dot = '\0';
		if (!json_object_get(o, part))
			json_object_set_new(o, part, json_object());
		o = json_object_get(o, part);
	}
	json_object_set_new(o, part, json_integer(v));
	return root;
}

static bool
numeric(const struct config_limit *l)
{
	return strncmp(l->key, "bounds.", 7) == 0 || strncmp(l->key, "pool.", 5) == 0 ||
	       strcmp(l->key, "upstreams.NAME.timeout_ms") == 0 ||
	       strcmp(l->key, "profile.pids_limit") == 0 || strcmp(l->key, "profile.memory") == 0 ||
	       strcmp(l->key, "profile.nofile") == 0 || strcmp(l->key, "profile.tmpfs.PATH") == 0;
}

static void
test_ranges(void **state)
{
	struct airlock_config c;
	const struct config_limit *l;
	const char *err;
	size_t i, seen = 0;

	(void)state;
	for (i = 0; i < LIMIT_COUNT; i++) {
		l = config_limit((enum config_limit_id)i);
		if (!numeric(l))
			continue;
		seen++;
		err = load(with_number(l->key, l->max), &c);
		if (err)
			fail_msg("%s = max %lld refused: %s", l->key, l->max, err);
		config_free(&c);
		err = load(with_number(l->key, l->max + 1), &c);
		assert_non_null(err);
		config_free(&c);
		err = load(with_number(l->key, (l->min == CONFIG_LIMIT_NONE ? 0 : l->min) - 1), &c);
		assert_non_null(err);
		config_free(&c);
		if (l->min == CONFIG_LIMIT_NONE)
			continue;
		err = load(with_number(l->key, l->min), &c);	/* the minimum itself is taken */
		if (err)
			fail_msg("%s = min %lld refused: %s", l->key, l->min, err);
		config_free(&c);
	}
	assert_int_equal(seen, 13);
}

static void
test_defaults(void **state)
{
	struct airlock_config c;

	(void)state;
	assert_null(load(base(), &c));
	assert_int_equal(c.bounds.frame_bytes, config_limit(LIMIT_FRAME_BYTES)->def);
	assert_int_equal(c.bounds.stdout_bytes, config_limit(LIMIT_STDOUT_BYTES)->def);
	assert_int_equal(c.bounds.stderr_bytes, config_limit(LIMIT_STDERR_BYTES)->def);
	assert_int_equal(c.bounds.calls, config_limit(LIMIT_CALLS)->def);
	assert_int_equal(c.bounds.session_ms, config_limit(LIMIT_SESSION_MS)->def);
	assert_int_equal(c.upstreams[0].timeout_ms, config_limit(LIMIT_UPSTREAM_TIMEOUT_MS)->def);
	assert_int_equal(c.pool.size, config_limit(LIMIT_POOL_SIZE)->def);
	assert_int_equal(c.pool.max_age_ms, config_limit(LIMIT_POOL_MAX_AGE_MS)->def);
	assert_int_equal(c.profile.pids_limit, config_limit(LIMIT_PIDS)->def);
	assert_int_equal(c.profile.memory, config_limit(LIMIT_MEMORY)->def);
	config_free(&c);
}

/* n upstreams (each with a tool and an alias, n_tools of them), or n argv words. */
static json_t *
with_counts(size_t upstreams, size_t tools, size_t argv, size_t withhold, size_t desc)
{
	json_t *root = json_object(), *ups = json_object(), *ts = json_object(), *as = json_object();
	json_t *words = json_array(), *held = json_array(), *alias;
	char name[32], *text = calloc(desc + 1, 1);
	size_t i;

	assert_non_null(text);
	memset(text, 'd', desc);
	json_array_append_new(words, json_string("/usr/bin/true"));
	for (i = 1; i < argv; i++)
		json_array_append_new(words, json_string("x"));
	for (i = 0; i < upstreams; i++) {
		snprintf(name, sizeof name, "u%zu", i);
		json_object_set_new(ups, name, json_pack("{s:O}", "argv", words));
	}
	for (i = 0; i < tools; i++) {
		snprintf(name, sizeof name, "t%zu", i);
		json_object_set_new(ts, name, json_pack("{s:s, s:s, s:s, s:s, s:s}", "upstream", "u0",
							"remote", name, "data_class", "public",
							"sink_ceiling", "public",
							"response_ceiling", "public"));
		alias = json_pack("{s:s, s:s}", "tool", name, "description", text);
		snprintf(name, sizeof name, "op%zu", i);
		json_object_set_new(as, name, alias);
	}
	for (i = 0; i < withhold; i++) {
		snprintf(name, sizeof name, "f%zu", i);
		json_array_append_new(held, json_string(name));
	}
	json_object_set_new(root, "upstreams", ups);
	json_object_set_new(root, "tools", ts);
	json_object_set_new(root, "aliases", as);
	json_object_set_new(root, "initial", json_pack("{s:s, s:o}", "class", "public",
						       "withhold", held));
	json_decref(words);
	free(text);
	return root;
}

/* The base with n classes, "public" among them. */
static json_t *
with_classes(size_t n)
{
	json_t *root = base(), *names = json_array();
	char name[32];
	size_t i;

	json_array_append_new(names, json_string("public"));
	for (i = 1; i < n; i++) {
		snprintf(name, sizeof name, "c%zu", i);
		json_array_append_new(names, json_string(name));
	}
	json_object_set_new(root, "classes", names);
	return root;
}

static void
test_counts(void **state)
{
	size_t up = (size_t)config_limit(LIMIT_UPSTREAMS)->max;
	size_t tools = (size_t)config_limit(LIMIT_TOOLS)->max;
	size_t argv = (size_t)config_limit(LIMIT_UPSTREAM_ARGV)->max;
	size_t held = (size_t)config_limit(LIMIT_WITHHOLD)->max;
	size_t desc = (size_t)config_limit(LIMIT_DESCRIPTION)->max;
	struct airlock_config c;
	const char *err;

	(void)state;
	assert_int_equal(config_limit(LIMIT_ALIASES)->max, tools);	/* one alias a tool here */
	err = load(with_counts(up, tools, argv, held, desc), &c);
	if (err)
		fail_msg("every count at its cap refused: %s", err);
	config_free(&c);
	assert_non_null(load(with_counts(up + 1, 1, 1, 0, 1), &c));
	config_free(&c);
	assert_non_null(load(with_counts(1, tools + 1, 1, 0, 1), &c));
	config_free(&c);
	assert_non_null(load(with_counts(1, 1, argv + 1, 0, 1), &c));
	config_free(&c);
	assert_non_null(load(with_counts(1, 1, 1, held + 1, 1), &c));
	config_free(&c);
	assert_non_null(load(with_counts(1, 1, 1, 0, desc + 1), &c));
	config_free(&c);
	assert_null(load(with_classes((size_t)config_limit(LIMIT_CLASSES)->max), &c));
	config_free(&c);
	assert_non_null(load(with_classes((size_t)config_limit(LIMIT_CLASSES)->max + 1), &c));
	config_free(&c);
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
test_documented(void **state)
{
	const char *fixtures = getenv("AIRLOCK_FIXTURES");
	char path[4096], *doc, *begin, *end, *want;
	size_t n = config_limits_markdown(NULL, 0);

	(void)state;
	assert_non_null(fixtures);
	snprintf(path, sizeof path, "%s/../../docs/configuration.md", fixtures);
	doc = slurp(path);
	begin = strstr(doc, "<!-- limits: begin -->\n");
	end = strstr(doc, "<!-- limits: end -->");
	assert_non_null(begin);
	assert_non_null(end);
	begin += strlen("<!-- limits: begin -->\n");
	want = malloc(n + 1);
	assert_non_null(want);
	assert_int_equal(config_limits_markdown(want, n + 1), n);
	if ((size_t)(end - begin) != n || memcmp(begin, want, n) != 0)
		fail_msg("docs/configuration.md's limits are not the table's; the table:\n%s", want);
	free(want);
	free(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
