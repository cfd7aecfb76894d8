#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "control.h"
#include "control_cases.h"
#include "json_tree.h"

/*
 * The digest a connection's parser writes of a peer's line (control_digest)
 * and the engine's reading of it (control_digest_read): the same request
 * or the same refusal as control_parse; a digest a parser taken over might
 * write is refused; an inline config crosses as a tree (json_tree.h) and
 * the engine builds it without a JSON text parser.
 */

static const char *const accepted[] = {
	"{\"id\":7,\"op\":\"revoke\",\"tool\":\"store\",\"sessions\":[\"s-1\",\"s-2\"],\"wait_ms\":5000}",
	"{\"id\":0,\"op\":\"hello\",\"client\":\"console\"}",
	"{\"op\":\"snapshot\",\"id\":9007199254740992}",
	"{\"id\":1,\"op\":\"restore\",\"tool\":\"t\",\"all\":true}",
	"{\"id\":2,\"op\":\"restore\",\"tool\":\"t\",\"sessions\":[\"s-1\"],\"for_s\":86400,\"calls\":1000000}",
	"{\"id\":1,\"op\":\"events\",\"follow\":true,\"snapshots\":false,\"deltas\":true}",
	"{\"id\":1,\"op\":\"host\",\"refresh\":true,\"runtime\":\"runsc\"}",
	"{\"id\":1,\"op\":\"start\",\"path\":\"/etc/airlock/a.json\"}",
	"{\"id\":3,\"op\":\"start\",\"config\":{\"profile\":{\"image\":\"x\",\"n\":1e3}}}",
	"{\"id\":1,\"op\":\"forget\"}",
	"{\"id\":1,\"op\":\"audit\",\"after\":42}",
};

/* line -> digest -> the engine's reading: 0, 1 (a refusal) or -1. */
static int
through_digest(const char *line, struct control_request *r, const char **error)
{
	struct hash_canon d;
	int rc;

	hash_canon_init(&d);
	assert_int_equal(control_digest(line, strlen(line), &d), 0);
	rc = control_digest_read(d.buf, d.len, r, error);
	hash_canon_free(&d);
	return rc;
}

static char *
request_text(struct control_request *r)
{
	json_t *j = control_request_json(r);
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(j);
	assert_non_null(text);
	return text;
}

static void
test_digest_same_reading(void **state)
{
	struct control_request a, b;
	const char *ea, *eb;
	char *ta, *tb;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
		assert_int_equal(control_parse(accepted[i], strlen(accepted[i]), &a, &ea), 0);
		assert_int_equal(through_digest(accepted[i], &b, &eb), 0);
		assert_null(b.config);	/* bytes until the role allows it */
		assert_int_equal(control_request_load_config(&b), 0);
		ta = request_text(&a);
		tb = request_text(&b);
		assert_string_equal(ta, tb);
		free(ta);
		free(tb);
		control_request_free(&a);
		control_request_free(&b);
	}
	for (i = 0; i < CONTROL_REFUSED; i++) {
		assert_int_equal(control_parse(control_refused[i].line, strlen(control_refused[i].line),
					       &a, &ea), -1);
		assert_int_equal(through_digest(control_refused[i].line, &b, &eb), 1);
		assert_string_equal(eb, control_refused[i].error);
		assert_int_equal(a.id, b.id);
		control_request_free(&a);
		control_request_free(&b);
	}
}

/* A digest built by hand, as a parser taken over would write it. */
struct lie {
	char b[512];
	size_t len;
	struct {
		int64_t id;
		uint32_t op, has, error, n_fields;
	} h;
};

static void
lie_begin(struct lie *l, enum control_op op, unsigned has)
{
	memset(l, 0, sizeof *l);
	l->h.id = 1;
	l->h.op = (uint32_t)op;
	l->h.has = has;
	l->len = sizeof l->h;
}

static void
lie_field(struct lie *l, enum control_key k, const void *v, size_t n)
{
	uint32_t f[2] = { (uint32_t)k, (uint32_t)n };

	memcpy(l->b + l->len, f, sizeof f);
	memcpy(l->b + l->len + sizeof f, v, n);
	l->len += sizeof f + n;
	l->h.n_fields++;
}

static int
lie_read(struct lie *l)
{
	struct control_request r;
	const char *error;
	int rc;

	memcpy(l->b, &l->h, sizeof l->h);
	rc = control_digest_read(l->b, l->len, &r, &error);
	control_request_free(&r);
	return rc;
}

static void
test_digest_lies(void **state)
{
	int64_t big = CONTROL_WAIT_MAX_MS + 1, ok = 5;
	uint8_t two = 2, yes = 1;
	struct lie l;

	(void)state;
	/* the honest one reads */
	lie_begin(&l, CONTROL_OP_STOP, CK(SESSION));
	lie_field(&l, CONTROL_K_SESSION, "s-1", 3);
	assert_int_equal(lie_read(&l), 0);
	/* a word the parser would have refused */
	lie_begin(&l, CONTROL_OP_STOP, CK(SESSION));
	lie_field(&l, CONTROL_K_SESSION, "s 1", 3);
	assert_int_equal(lie_read(&l), -1);
	/* a key the op does not take; a required one missing */
	lie_begin(&l, CONTROL_OP_SNAPSHOT, CK(SESSION));
	lie_field(&l, CONTROL_K_SESSION, "s-1", 3);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_STOP, 0);
	assert_int_equal(lie_read(&l), -1);
	/* a bool that is neither; a wait past its bound */
	lie_begin(&l, CONTROL_OP_REVOKE, CK(TOOL) | CK(ALL));
	lie_field(&l, CONTROL_K_TOOL, "t", 1);
	lie_field(&l, CONTROL_K_ALL, &two, 1);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_FREEZE, CK(WAIT));
	lie_field(&l, CONTROL_K_WAIT, &big, sizeof big);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_FREEZE, CK(WAIT));
	lie_field(&l, CONTROL_K_WAIT, &ok, sizeof ok);
	assert_int_equal(lie_read(&l), 0);
	/* a field twice, one not in has, bytes after the last */
	lie_begin(&l, CONTROL_OP_REVOKE, CK(TOOL) | CK(ALL));
	lie_field(&l, CONTROL_K_TOOL, "t", 1);
	lie_field(&l, CONTROL_K_ALL, &yes, 1);
	assert_int_equal(lie_read(&l), 0);
	lie_field(&l, CONTROL_K_ALL, &yes, 1);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_FREEZE, 0);
	lie_field(&l, CONTROL_K_WAIT, &ok, sizeof ok);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_FREEZE, 0);
	l.len += 2;
	assert_int_equal(lie_read(&l), -1);
	/* what the table cannot say: all and sessions at once */
	lie_begin(&l, CONTROL_OP_REVOKE, CK(TOOL) | CK(ALL) | CK(SESSIONS));
	lie_field(&l, CONTROL_K_TOOL, "t", 1);
	lie_field(&l, CONTROL_K_ALL, &yes, 1);
	lie_field(&l, CONTROL_K_SESSIONS, "s-1\0", 4);
	assert_int_equal(lie_read(&l), -1);
	/* ids that do not end, a path that is not absolute, a config that is not an object */
	lie_begin(&l, CONTROL_OP_FORGET, CK(SESSIONS));
	lie_field(&l, CONTROL_K_SESSIONS, "s-1", 3);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_START, CK(PATH));
	lie_field(&l, CONTROL_K_PATH, "etc/a", 5);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_START, CK(CONFIG));
	lie_field(&l, CONTROL_K_CONFIG, "a\x01n", 3);
	assert_int_equal(lie_read(&l), -1);
	/* a config as JSON text: the engine takes none */
	lie_begin(&l, CONTROL_OP_START, CK(CONFIG));
	lie_field(&l, CONTROL_K_CONFIG, "{}", 2);
	assert_int_equal(lie_read(&l), -1);
	/* a refusal with fields, an unknown refusal, an op past the table, a bad id */
	lie_begin(&l, CONTROL_OP_HELLO, 0);
	l.h.error = 3;
	assert_int_equal(lie_read(&l), 1);
	l.h.error = 99;
	assert_int_equal(lie_read(&l), -1);
	l.h.error = 3;
	lie_field(&l, CONTROL_K_TOOL, "t", 1);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_COUNT, 0);
	assert_int_equal(lie_read(&l), -1);
	lie_begin(&l, CONTROL_OP_HELLO, 0);
	l.h.id = -2;
	assert_int_equal(lie_read(&l), -1);
}

/* A realistic inline config, as ctl sends it (examples/session.json.in). */
static const char session_config[] =
	"{\"profile\":{\"image\":\"airlock-example:1\"},"
	"\"bounds\":{\"session_ms\":600000,\"calls\":4096,\"ratio\":0.75},"
	"\"upstreams\":{\"memory\":{\"argv\":[\"/opt/m/mcp-server-memory\"],"
	"\"env\":{\"PATH\":\"/usr/bin:/bin\",\"MEMORY_FILE_PATH\":\"/srv/m/memory.jsonl\"},"
	"\"paths\":{\"rw\":[\"/srv/m\"]},\"timeout_ms\":30000}},"
	"\"tools\":{\"create_entities\":{\"upstream\":\"memory\",\"remote\":\"create_entities\","
	"\"data_class\":\"confidential\",\"sink_ceiling\":\"confidential\"}},"
	"\"aliases\":{\"remember\":{\"tool\":\"create_entities\","
	"\"description\":\"Keep a note \\u00e9 \\\"quoted\\\" \\t in memory.\"}},"
	"\"initial\":{\"file\":\"/srv/m/payload.json\",\"class\":\"confidential\",\"withhold\":[],"
	"\"none\":null,\"yes\":true,\"no\":false,\"neg\":-9223372036854775808}}";

/* {"id":5,"op":"start","config":CONFIG} through the digest: the engine's reading, loaded. */
static void
start_through_digest(const char *config, struct control_request *r, struct hash_canon *d)
{
	const char *error;
	char *line;

	assert_true(asprintf(&line, "{\"id\":5,\"op\":\"start\",\"config\":%s}", config) > 0);
	hash_canon_init(d);
	assert_int_equal(control_digest(line, strlen(line), d), 0);
	assert_int_equal(control_digest_read(d->buf, d->len, r, &error), 0);
	free(line);
	assert_int_equal(r->op, CONTROL_OP_START);
	assert_null(r->config);
	assert_int_equal(control_request_load_config(r), 0);
	assert_true(json_is_object(r->config));
}

/* The whole path gives what jansson's parse of the same text gives; no text crosses. */
static void
test_config_whole_path(void **state)
{
	json_t *want = json_loads(session_config, JSON_REJECT_DUPLICATES, NULL);
	struct control_request r;
	struct hash_canon d;

	(void)state;
	assert_non_null(want);
	start_through_digest(session_config, &r, &d);
	assert_true(json_equal(r.config, want));
	assert_true(r.config_tree_len < strlen(session_config));
	assert_null(memmem(d.buf, d.len, "\"profile\"", 9));
	control_request_free(&r);
	assert_null(r.config);
	assert_null(r.config_tree);
	hash_canon_free(&d);
	json_decref(want);
}

static void
assert_keys(const json_t *o, const char *const *keys, size_t n)
{
	const char *k;
	size_t i = 0;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		assert_true(i < n);
		assert_string_equal(k, keys[i++]);
	}
	assert_int_equal(i, n);
}

/*
 * The engine builds the config from the tree, not from text: the peer's
 * key order is kept, where the parser's canonical text (keys sorted) read
 * back by a text parser would give them sorted.
 */
static void
test_config_not_text(void **state)
{
	static const char *const outer[] = { "zeta", "alpha", "mid" };
	static const char *const inner[] = { "y", "b" };
	struct control_request r;
	struct hash_canon d;

	(void)state;
	start_through_digest("{\"zeta\":1,\"alpha\":{\"y\":2,\"b\":3},\"mid\":[0.5,-0.0]}", &r,
			     &d);
	assert_keys(r.config, outer, 3);
	assert_keys(json_object_get(r.config, "alpha"), inner, 2);
	assert_true(signbit(json_real_value(json_array_get(json_object_get(r.config, "mid"), 1))));
	control_request_free(&r);
	hash_canon_free(&d);
}

/* A config nested "levels" objects deep, as text: malloc'd. */
static char *
nested_config(size_t levels)
{
	static const char open[] = "{\"a\":";
	char *s = malloc(levels * sizeof open + 2), *p = s;
	size_t i;

	assert_non_null(s);
	for (i = 1; i < levels; i++, p += sizeof open - 1)
		memcpy(p, open, sizeof open - 1);
	memcpy(p, "{}", 2);
	memset(p + 2, '}', levels - 1);
	p[levels + 1] = '\0';
	return s;
}

/* As deep as the tree carries, accepted; one deeper, refused by both sides alike. */
static void
test_config_depth(void **state)
{
	char *ok = nested_config(JSON_TREE_DEPTH_MAX), *deep = nested_config(JSON_TREE_DEPTH_MAX + 1);
	struct control_request r, p;
	struct hash_canon d;
	const char *error;
	char *line;

	(void)state;
	start_through_digest(ok, &r, &d);
	control_request_free(&r);
	hash_canon_free(&d);
	assert_true(asprintf(&line, "{\"id\":6,\"op\":\"start\",\"config\":%s}", deep) > 0);
	assert_int_equal(control_parse(line, strlen(line), &p, &error), -1);
	assert_string_equal(error, CONTROL_E_ARG);
	control_request_free(&p);
	assert_int_equal(through_digest(line, &r, &error), 1);
	assert_string_equal(error, CONTROL_E_ARG);
	assert_int_equal(r.id, 6);
	control_request_free(&r);
	free(line);
	free(ok);
	free(deep);
}

/* A tree a parser taken over might send: kept as bytes, refused when built. */
static void
test_config_tree_lies(void **state)
{
	static const struct {
		const char *tree;
		size_t len;
	} lies[] = {
		{ "o\x02\x01" "an\x01" "at", 8 },	/* a key twice */
		{ "o\x01\x01" "a", 4 },		/* a member without its value */
		{ "o\x01\x01\x00n", 5 },		/* a NUL in a key */
		{ "o\x00n", 3 },			/* a byte after the object */
	};
	struct control_request r;
	const char *error;
	struct lie l;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof lies / sizeof lies[0]; i++) {
		lie_begin(&l, CONTROL_OP_START, CK(CONFIG));
		lie_field(&l, CONTROL_K_CONFIG, lies[i].tree, lies[i].len);
		memcpy(l.b, &l.h, sizeof l.h);
		assert_int_equal(control_digest_read(l.b, l.len, &r, &error), 0);
		assert_int_equal(control_request_load_config(&r), -1);
		assert_null(r.config);
		control_request_free(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest_same_reading),
		cmocka_unit_test(test_digest_lies),
		cmocka_unit_test(test_config_whole_path),
		cmocka_unit_test(test_config_not_text),
		cmocka_unit_test(test_config_depth),
		cmocka_unit_test(test_config_tree_lies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
