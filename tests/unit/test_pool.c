/*
 * The warm pool's pure part (engine/sandbox/pool.h) and its config key
 * (engine/config/config.c): which entry a claim takes, which are discarded, how
 * many to warm, what the key tells apart, and the refusals of bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "config.h"
#include "pool.h"

#define IMAGE "sha256:" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *
load(struct airlock_config *c, const char *text)
{
	static struct al_err err;
	json_t *root = json_loads(text, 0, NULL);

	assert_non_null(root);
	err.msg[0] = '\0';
	config_init(c);
	config_load_json(c, root, 2, &err);
	json_decref(root);
	return err.msg;
}

static void
test_config(void **state)
{
	static const struct {
		const char *text, *error;
	} bad[] = {
		{ "{\"pool\": {\"size\": 17}}", "pool.size: expected an integer in 0..16" },
		{ "{\"pool\": {\"size\": -1}}", "pool.size: expected an integer in 0..16" },
		{ "{\"pool\": {\"size\": \"3\"}}", "pool.size: expected an integer in 0..16" },
		{ "{\"pool\": {\"size\": 2.0}}", "pool.size: expected an integer in 0..16" },
		{ "{\"pool\": {\"max_age_ms\": 99}}", "pool.max_age_ms: expected an integer in" },
		{ "{\"pool\": {\"max_age_ms\": 86400001}}", "pool.max_age_ms: expected an integer in" },
		{ "{\"pool\": {\"sise\": 2}}", "pool.sise: unknown key" },
		{ "{\"pool\": 2}", "pool: expected an object" },
	};
	struct airlock_config c;
	size_t i;

	(void)state;
	assert_string_equal(load(&c, "{}"), "");
	assert_int_equal(c.pool.size, 0);			/* off by default */
	assert_int_equal(c.pool.max_age_ms, POOL_MAX_AGE_MS_DEFAULT);
	config_free(&c);
	assert_string_equal(load(&c, "{\"pool\": {\"size\": 16, \"max_age_ms\": 100}}"), "");
	assert_int_equal(c.pool.size, 16);
	assert_int_equal(c.pool.max_age_ms, 100);
	config_free(&c);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *msg = load(&c, bad[i].text);

		if (!strstr(msg, bad[i].error))
			fail_msg("%s: expected '%s', got '%s'", bad[i].text, bad[i].error, msg);
		config_free(&c);
	}
}

static void
key_of(const char *text, char out[POOL_KEY_LEN + 1])
{
	struct airlock_config c;
	char full[512];

	snprintf(full, sizeof full, "{\"profile\": {\"image\": \"%s\"%s}}", IMAGE, text);
	assert_string_equal(load(&c, full), "");
	assert_int_equal(pool_key(&c.profile, out), 0);
	assert_int_equal(strlen(out), POOL_KEY_LEN);
	config_free(&c);
}

/* Everything that shapes the container changes the key; the pool's own settings do not. */
static void
test_key(void **state)
{
	static const char *const differ[] = {
		", \"memory\": 67108864", ", \"cmd\": [\"loop\"]", ", \"runtime\": \"runsc\"",
		", \"env\": {\"A\": \"1\"}", ", \"sealed\": [\"/secret\"]", ", \"pids_limit\": 16",
		", \"user\": \"10002:10002\"", ", \"tmpfs\": {\"/scratch\": 4096}",
	};
	char base[POOL_KEY_LEN + 1], again[POOL_KEY_LEN + 1], other[POOL_KEY_LEN + 1];
	struct airlock_config c;
	size_t i;

	(void)state;
	key_of("", base);
	key_of("", again);
	assert_string_equal(base, again);
	for (i = 0; i < sizeof differ / sizeof differ[0]; i++) {
		key_of(differ[i], other);
		if (strcmp(base, other) == 0)
			fail_msg("%s does not change the key", differ[i]);
	}
	assert_string_equal(load(&c, "{\"profile\": {\"image\": \"" IMAGE "\"},"
				     " \"pool\": {\"size\": 3}, \"bounds\": {\"calls\": 2}}"), "");
	assert_int_equal(pool_key(&c.profile, other), 0);
	assert_string_equal(base, other);
	config_free(&c);
}

static void
test_judge(void **state)
{
	struct pool_entry e = { .state = POOL_READY, .ready_ms = 1000 };

	(void)state;
	assert_int_equal(pool_judge(&e, 1999, 1000), POOL_KEEP);
	assert_int_equal(pool_judge(&e, 2000, 1000), POOL_DISCARD_AGED);
	e.lease_failed = true;
	assert_int_equal(pool_judge(&e, 1000, 1000), POOL_DISCARD_LEASE);
	e.lease_failed = false;
	e.exited = true;
	assert_int_equal(pool_judge(&e, 1000, 1000), POOL_DISCARD_EXITED);
	e.state = POOL_WARMING;	/* not ready: nothing to judge yet */
	assert_int_equal(pool_judge(&e, 99999, 1000), POOL_KEEP);
	assert_string_equal(pool_verdict_id(POOL_DISCARD_AGED), "aged");
	assert_string_equal(pool_verdict_id(POOL_DISCARD_LEASE), "lease_failed");
}

static void
test_pick(void **state)
{
	struct pool_entry e[5] = {
		{ .state = POOL_WARMING, .ready_ms = 0 },
		{ .state = POOL_READY, .ready_ms = 500 },
		{ .state = POOL_READY, .ready_ms = 100, .lease_failed = true },
		{ .state = POOL_READY, .ready_ms = 300 },
		{ .state = POOL_EMPTY, .ready_ms = 0 },
	};

	(void)state;
	/* The oldest that is fit: not the failed lease, not the warming one. */
	assert_int_equal(pool_pick(e, 5, 1000, 10000), 3);
	/* Past its age: the next one. */
	assert_int_equal(pool_pick(e, 5, 1350, 1000), 1);
	/* None fit. */
	assert_int_equal(pool_pick(e, 5, 5000, 1000), -1);
	assert_int_equal(pool_pick(e, 0, 1000, 1000), -1);
	e[3].exited = true;
	assert_int_equal(pool_pick(e, 5, 1000, 10000), 1);
}

static void
test_to_warm(void **state)
{
	struct pool_entry e[4] = {
		{ .state = POOL_READY }, { .state = POOL_WARMING }, { .state = POOL_EMPTY },
		{ .state = POOL_EMPTY },
	};

	(void)state;
	assert_int_equal(pool_to_warm(e, 4, 0), 0);
	assert_int_equal(pool_to_warm(e, 4, 2), 0);
	assert_int_equal(pool_to_warm(e, 4, 3), 1);
	assert_int_equal(pool_to_warm(e, 4, 16), 2);	/* never past the empty entries */
	assert_int_equal(pool_count(e, 4, POOL_EMPTY), 2);
	assert_int_equal(pool_count(e, 4, POOL_READY), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_to_warm),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
