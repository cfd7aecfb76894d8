/*
 * gateway_handle without Docker: the fixture upstream (a real MCP server
 * process, AIRLOCK_UPSTREAM) and a temporary audit database. Each decision
 * path is judged by what the observers hold: the reply line, the audit
 * rows of the session (type, decision, rule) and the upstream's sink file,
 * which holds every tools/call it received — empty when the sink was never
 * contacted.
 *
 * White box (gateway.c is included) only to mark an earlier terminal entry
 * as lost, the one audit failure a test cannot cause from outside.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../../engine/gateway/gateway.c"

#include "audit_read.h"
#include "audit_verify.h"
#include "no_random.h"
#include "scratch.h"
#include "stop_later.h"
#include "upstream_dir.h"

#define ROWS_MAX	16

/* What the next gw_open gives the session: its initial class, its stop flag. */
static const char *gw_initial = "confidential";
static atomic_bool *gw_stop;

struct gw {
	char dir[64], db[96], sink[96], up[80];
	struct airlock_config c;
	struct audit *a;
	struct gate *gate;
	bool with_gate;
	struct gateway *g;
};

static const char *
upstream_bin(void)
{
	const char *u = getenv("AIRLOCK_UPSTREAM");

	assert_non_null(u);
	assert_true(u[0] == '/');
	return u;
}

/*
 * Tools: echo (allowed), leak (response above its ceiling), post (a public
 * sink: the confidential session is above it), pinned (a pin that never
 * matches), missing (an upstream that cannot start).
 */
static void
gw_config(struct gw *w, const char *mode, int timeout_ms, int frame_bytes)
{
	char text[4096];
	struct al_err err;
	json_t *root;

	snprintf(text, sizeof text,
		 "{\"upstreams\": {"
		 "  \"u\": {\"argv\": [\"%s\", \"--sink\", \"%s\", \"--mode\", \"%s\"],"
		 "         \"timeout_ms\": %d, \"paths\": {\"rw\": [\"%s\"]}},"
		 "  \"gone\": {\"argv\": [\"%s/no-such-upstream\"]}},"
		 " \"tools\": {"
		 "  \"echo\": {\"upstream\": \"u\", \"remote\": \"echo\", \"data_class\": \"confidential\","
		 "            \"sink_ceiling\": \"confidential\", \"response_ceiling\": \"confidential\"},"
		 "  \"leak\": {\"upstream\": \"u\", \"remote\": \"echo\", \"data_class\": \"confidential\","
		 "            \"sink_ceiling\": \"confidential\", \"response_ceiling\": \"public\"},"
		 "  \"post\": {\"upstream\": \"u\", \"remote\": \"echo\", \"data_class\": \"public\","
		 "            \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"},"
		 "  \"pinned\": {\"upstream\": \"u\", \"remote\": \"echo\", \"data_class\": \"confidential\","
		 "            \"sink_ceiling\": \"confidential\", \"response_ceiling\": \"confidential\","
		 "            \"pin\": \"%064d\"},"
		 "  \"missing\": {\"upstream\": \"gone\", \"remote\": \"echo\", \"data_class\": \"confidential\","
		 "            \"sink_ceiling\": \"confidential\", \"response_ceiling\": \"confidential\"}},"
		 " \"aliases\": {\"say\": \"echo\", \"leak\": \"leak\", \"post\": \"post\","
		 "               \"pinned\": \"pinned\", \"missing\": \"missing\"},"
		 " \"initial\": {\"class\": \"%s\"},"
		 " \"bounds\": {\"calls\": 64, \"frame_bytes\": %d}}",
		 upstream_bin(), w->sink, mode, timeout_ms, w->up, w->dir, 0, gw_initial, frame_bytes);
	root = json_loads(text, 0, NULL);
	assert_non_null(root);
	config_init(&w->c);
	if (config_load_json(&w->c, root, 2, &err) < 0)
		fail_msg("config: %s", err.msg);
	json_decref(root);
}

static void
gw_open_with(struct gw *w, const char *mode, int timeout_ms, int frame_bytes, bool with_gate)
{
	bool approved[GATE_TOOLS_MAX];
	struct al_err err;
	size_t i;

	memset(w, 0, sizeof *w);
	scratch_make(w->dir, sizeof w->dir, "gw");
	snprintf(w->db, sizeof w->db, "%s/audit.db", w->dir);
	upstream_dir_make(w->dir, w->up, sizeof w->up);
	snprintf(w->sink, sizeof w->sink, "%s/u.sink", w->up);
	gw_config(w, mode, timeout_ms, frame_bytes);
	assert_int_equal(audit_open(w->db, &w->a, &err), 0);
	w->with_gate = with_gate;
	if (with_gate) {
		for (i = 0; i < w->c.n_tools; i++)
			approved[i] = true;
		w->gate = gate_new(approved, w->c.n_tools);
		assert_non_null(w->gate);
	}
	assert_int_equal(gateway_open(&(struct gateway_options){
		.config = &w->c, .session_id = "sess-gw", .audit = w->a,
		.gate = with_gate ? w->gate : NULL, .exe = getenv("AIRLOCK_BIN"),
		.stop = gw_stop }, &w->g, &err), 0);
}

static void
gw_open(struct gw *w, const char *mode)
{
	gw_open_with(w, mode, 5000, 65536, false);
}

/* Close the gateway (its queued entries settle), then the log. */
static void
gw_finish(struct gw *w)
{
	if (w->g)
		gateway_close(w->g);
	w->g = NULL;
	if (w->with_gate)
		gate_free(w->gate);
	audit_close(w->a);
	w->a = NULL;
}

static void
gw_free(struct gw *w)
{
	config_free(&w->c);
	upstream_dir_remove(w->up);
	scratch_remove(w->dir);
}

static enum gateway_status
gw_call(struct gw *w, const char *line, enum policy_rule *rule, char **reply)
{
	enum gateway_status st;
	size_t len;

	st = gateway_handle(w->g, line, strlen(line), reply, &len, rule);
	if (st == GW_REPLY) {
		assert_non_null(*reply);
		assert_int_equal(strlen(*reply), len);
	} else {
		assert_null(*reply);
	}
	return st;
}

/* One call that gets a reply; the reply is checked and freed. */
static void
expect_reply(struct gw *w, const char *line, enum policy_rule want, const char *want_reply)
{
	enum policy_rule rule;
	char *reply;

	assert_int_equal(gw_call(w, line, &rule, &reply), GW_REPLY);
	assert_string_equal(policy_rule_id(rule), policy_rule_id(want));
	assert_string_equal(reply, want_reply);
	free(reply);
}

static void
expect_fault(struct gw *w, const char *line, enum gateway_status want_st, enum policy_rule want)
{
	enum policy_rule rule;
	char *reply;

	assert_int_equal(gw_call(w, line, &rule, &reply), want_st);
	assert_string_equal(policy_rule_id(rule), policy_rule_id(want));
	assert_true(policy_rule_fatal(rule));
}

/* The session's rows as "type decision rule", in sequence order. */
static size_t
audit_rows(const char *db, char rows[ROWS_MAX][96])
{
	sqlite3 *h;
	sqlite3_stmt *st;
	size_t n = 0;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT type, decision, coalesce(rule, '-')"
					    " FROM audit_entries WHERE session_id = 'sess-gw'"
					    " ORDER BY seq", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && n < ROWS_MAX) {
		snprintf(rows[n], 96, "%s %s %s", sqlite3_column_text(st, 0),
			 sqlite3_column_text(st, 1), sqlite3_column_text(st, 2));
		n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

/* Exactly these rows (NULL-terminated), and a chain that verifies. */
static void
expect_rows(struct gw *w, const char *const *want)
{
	char rows[ROWS_MAX][96];
	size_t n = audit_rows(w->db, rows), i;
	struct audit_verify v;
	struct al_err err;

	for (i = 0; want[i]; i++) {
		if (i >= n)
			fail_msg("row %zu missing, want \"%s\"", i, want[i]);
		assert_string_equal(rows[i], want[i]);
	}
	assert_int_equal(n, i);
	assert_int_equal(audit_verify_file(w->db, &v, &err), 0);
	assert_true(v.ok);
	assert_int_equal(v.n_unknown, 0);
	assert_int_equal(v.unrecognised, 0);
	audit_verify_free(&v);
}

/* The number of tools/call the upstream received (one sink line each). */
static int
sink_calls(const struct gw *w)
{
	FILE *f = fopen(w->sink, "r");
	int n = 0, ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

#define SAY	"{\"operation\":\"say\",\"arguments\":{\"message\":\"hello\"}}"

/* The details of the session's dispatch rows, in sequence order ("-": none). */
static size_t
dispatch_details(const char *db, char rows[ROWS_MAX][512])
{
	sqlite3 *h;
	sqlite3_stmt *st;
	size_t n = 0;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT coalesce(detail, '-') FROM audit_entries"
					    " WHERE session_id = 'sess-gw' AND type = 'dispatch'"
					    " ORDER BY seq", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW && n < ROWS_MAX)
		snprintf(rows[n++], 512, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

static void
test_allowed(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call allowed allowed",
					    "dispatch dispatch -", "call allowed allowed", NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, SAY, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"hello\"}\n");
	expect_reply(&w, SAY, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"hello\"}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 2);
	expect_rows(&w, rows);
	gw_free(&w);
}

/* The first dispatch to an upstream carries what its process got; later ones do not. */
static void
test_dispatch_records_confinement(void **state)
{
	char details[ROWS_MAX][512];
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, SAY, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"hello\"}\n");
	expect_reply(&w, SAY, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"hello\"}\n");
	gw_finish(&w);
	assert_int_equal(dispatch_details(w.db, details), 2);
	print_message("first dispatch: %s\n", details[0]);
	assert_non_null(strstr(details[0], "{\"confinement\":{\"gid\":"));
	assert_non_null(strstr(details[0], "\"landlock_abi\":"));
	assert_non_null(strstr(details[0], "\"network\":\"none\""));
	assert_non_null(strstr(details[0], "\"privileged\":false"));
	if (geteuid() == 0)
		assert_non_null(strstr(details[0], "\"user\":\"airlock-upstream\""));
	assert_string_equal(details[1], "-");
	gw_free(&w);
}

/*
 * HMAC-SHA-256 of the canonical arguments under the key stored in the log
 * itself (read back from the file), never their plain SHA-256: that one
 * anyone holding the hash could test guesses against.
 */
static void
keyed_hash_from_file(const char *db, const char *bytes, char out[HASH_HEX_LEN + 1])
{
	unsigned char key[AUDIT_KEY_LEN];
	char plain[HASH_HEX_LEN + 1];
	struct hash_ctx *hc;

	assert_null(audit_read_key(db, key));
	hc = hash_ctx_new_keyed(key, sizeof key);
	assert_non_null(hc);
	hash_ctx_hex(hc, bytes, strlen(bytes), out);
	hash_ctx_free(hc);
	hash_sha256_hex(bytes, strlen(bytes), plain);
	assert_string_not_equal(out, plain);
}

/* The upstream receives the canonical arguments the request hash covers. */
static void
test_arguments_as_hashed(void **state)
{
	const char *line = "{\"operation\":\"say\",\"arguments\":{\"z\":1,\"message\":\"m\",\"a\":[true]}}";
	const char *canon = "{\"a\":[true],\"message\":\"m\",\"z\":1}";
	char want[HASH_HEX_LEN + 1], sink[512];
	sqlite3_stmt *st;
	sqlite3 *h;
	struct gw w;
	FILE *f;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, line, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"m\"}\n");
	gw_finish(&w);
	keyed_hash_from_file(w.db, canon, want);
	assert_int_equal(sqlite3_open_v2(w.db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT DISTINCT request_hash FROM audit_entries"
					    " WHERE type IN ('dispatch', 'call')", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	/* and the answer's text, "m", keyed the same way */
	keyed_hash_from_file(w.db, "m", want);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT response_hash FROM audit_entries"
					    " WHERE type = 'call'", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
	sqlite3_finalize(st);
	sqlite3_close(h);
	f = fopen(w.sink, "r");
	assert_non_null(f);
	assert_non_null(fgets(sink, sizeof sink, f));
	fclose(f);
	assert_non_null(strstr(sink, "\"message\":\"m\""));
	gw_free(&w);
}

static void
test_invalid_request(void **state)
{
	static const char *const rows[] = { NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_fault(&w, "{\"operation\":\"say\"}", GW_INVALID, RULE_INVALID_REQUEST);
	expect_fault(&w, "{\"operation\":\"nope\",\"arguments\":{}}", GW_INVALID,
		     RULE_INVALID_REQUEST);
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

static void
test_sink_ceiling(void **state)
{
	static const char *const rows[] = { "call denied sink_ceiling", NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, "{\"operation\":\"post\",\"arguments\":{\"message\":\"x\"}}",
		     RULE_SINK_CEILING, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

/* A held call's wait, as the supervisor's hook: what it was shown, and one answer. */
struct fake_hold {
	struct hold_view seen;
	int waits;
	enum gateway_hold_answer answer;
};

static enum gateway_hold_answer
fake_wait(void *ctx, struct hold_view *v)
{
	struct fake_hold *h = ctx;

	h->seen = *v;
	h->waits++;
	return h->answer;
}

#define POST	"{\"operation\":\"post\",\"arguments\":{\"message\":\"x\"}}"

/*
 * Class flow holds through the gateway: an allowed flow waits and an
 * approval lets it on; a denied flow (confidential > public) waits only
 * where the gate holds it, and an approval takes it past the sink ceiling
 * only when the config opted in as well; a deny is hold_denied.
 */
static void
test_flow_holds(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call allowed allowed",
		"call denied sink_ceiling", "call denied sink_ceiling", "dispatch dispatch -",
		"call allowed allowed", "call denied hold_denied", NULL };
	struct fake_hold h = { .answer = GW_HOLD_APPROVED };
	struct gateway_hold hook = { fake_wait, &h };
	enum policy_rule rule;
	char *reply;
	struct gw w;

	(void)state;
	gw_open_with(&w, "echo", 5000, 65536, true);
	w.g->o.hold = &hook;
	gate_post_flow(w.gate, 1, 2, 2, true);	/* confidential > confidential: allowed */
	gate_post_flow(w.gate, 2, 2, 0, true);	/* confidential > public: not applicable */
	assert_int_equal(gw_call(&w, SAY, &rule, &reply), GW_REPLY);
	free(reply);
	assert_int_equal(rule, RULE_ALLOWED);
	assert_int_equal(h.waits, 1);
	assert_string_equal(h.seen.held_by, "flow");
	assert_false(h.seen.declassify);
	expect_reply(&w, POST, RULE_SINK_CEILING, "{\"allowed\":false,\"response\":null}\n");
	assert_int_equal(h.waits, 1);	/* without the opt-in no wait: denied at once */
	/* the gate opted in, the config not: it waits, and an approval declassifies nothing */
	gate_set_declassify(w.gate, true);
	gate_post_flow(w.gate, 3, 2, 0, true);
	expect_reply(&w, POST, RULE_SINK_CEILING, "{\"allowed\":false,\"response\":null}\n");
	assert_int_equal(h.waits, 2);
	assert_false(h.seen.declassify);
	w.c.policy.declassify_by_hold = true;
	assert_int_equal(gw_call(&w, POST, &rule, &reply), GW_REPLY);
	free(reply);
	assert_int_equal(rule, RULE_ALLOWED);	/* both opted in: declassified */
	assert_int_equal(h.waits, 3);
	assert_true(h.seen.declassify);
	assert_string_equal(h.seen.session_class, "confidential");
	assert_string_equal(h.seen.sink_ceiling, "public");
	h.answer = GW_HOLD_DENIED;
	expect_reply(&w, POST, RULE_HOLD_DENIED, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 2);	/* the allowed flow's and the declassified call */
	expect_rows(&w, rows);
	gw_free(&w);
}

/* The config opted in, the gate not (it never held the flow): denied sink_ceiling, no wait. */
static void
test_flow_needs_the_gate(void **state)
{
	static const char *const rows[] = { "call denied sink_ceiling", NULL };
	struct fake_hold h = { .answer = GW_HOLD_APPROVED };
	struct gateway_hold hook = { fake_wait, &h };
	struct gw w;

	(void)state;
	gw_open_with(&w, "echo", 5000, 65536, true);
	w.g->o.hold = &hook;
	w.c.policy.declassify_by_hold = true;
	gate_post_flow(w.gate, 1, 2, 0, true);	/* the gate has no opt-in: not applicable */
	expect_reply(&w, POST, RULE_SINK_CEILING, "{\"allowed\":false,\"response\":null}\n");
	assert_int_equal(h.waits, 0);
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

static void
test_revoked_and_closed(void **state)
{
	static const char *const rows[] = { "call denied revoked", "call denied gate_closed", NULL };
	bool allowed[GATE_TOOLS_MAX] = { false };
	struct gate_ack ack;
	struct gw w;

	(void)state;
	gw_open_with(&w, "echo", 5000, 65536, true);
	gate_update(w.gate, 1, allowed, w.c.n_tools, &ack);
	assert_int_equal(ack.verdict, GATE_APPLIED);
	expect_reply(&w, SAY, RULE_REVOKED, "{\"allowed\":false,\"response\":null}\n");
	gate_update(w.gate, 1, allowed, w.c.n_tools, &ack);	/* stale: closes the gate */
	assert_false(ack.open);
	expect_reply(&w, SAY, RULE_GATE_CLOSED, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

static void
test_catalog_drift(void **state)
{
	static const char *const rows[] = { "call denied catalog_drift", NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, "{\"operation\":\"pinned\",\"arguments\":{\"message\":\"x\"}}",
		     RULE_CATALOG_DRIFT, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);	/* listed, never called */
	expect_rows(&w, rows);
	gw_free(&w);
}

/* Dispatched, answered, withheld from the agent. */
static void
test_egress_denied(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call egress_denied egress_denied",
					    NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, "{\"operation\":\"leak\",\"arguments\":{\"message\":\"SECRET\"}}",
		     RULE_EGRESS_DENIED, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 1);
	expect_rows(&w, rows);
	gw_free(&w);
}

/* A response whose reply line would not fit a frame. */
static void
test_response_too_large(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -",
					    "call egress_denied response_too_large", NULL };
	char line[2048];
	struct gw w;

	(void)state;
	gw_open_with(&w, "echo", 5000, 1024, false);
	snprintf(line, sizeof line, "{\"operation\":\"say\",\"arguments\":{\"message\":\"%01500d\"}}", 0);
	expect_reply(&w, line, RULE_RESPONSE_TOO_LARGE, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 1);
	expect_rows(&w, rows);
	gw_free(&w);
}

/* JSON-RPC errors and isError results: allowed, answered with null, code kept. */
static void
test_upstream_errors(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call error upstream_error", NULL };
	const char *modes[] = { "error", "tool_error" };
	struct gw w;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		gw_open(&w, modes[i]);
		expect_reply(&w, SAY, RULE_UPSTREAM_ERROR, "{\"allowed\":true,\"response\":null}\n");
		gw_finish(&w);
		assert_int_equal(sink_calls(&w), 1);
		expect_rows(&w, rows);
		gw_free(&w);
	}
}

/* Faults end the session: the terminal entry is written at once. */
static void
test_upstream_fault(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call fault upstream_fault", NULL };
	const char *modes[] = { "malformed", "exit" };
	struct gw w;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		gw_open(&w, modes[i]);
		expect_fault(&w, SAY, GW_FAULT, RULE_UPSTREAM_FAULT);
		gw_finish(&w);
		assert_int_equal(sink_calls(&w), 1);
		expect_rows(&w, rows);
		gw_free(&w);
	}
}

static void
test_upstream_timeout(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call fault upstream_timeout",
					    NULL };
	struct gw w;

	(void)state;
	gw_open_with(&w, "slow", 300, 65536, false);
	expect_fault(&w, SAY, GW_FAULT, RULE_UPSTREAM_TIMEOUT);
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 1);
	expect_rows(&w, rows);
	gw_free(&w);
}

/*
 * The session stops while its call waits at the upstream (the fixture
 * holds it 10 s, the timeout is 5 s): the call gives up, its terminal
 * entry says stopped, not upstream_timeout.
 */
static void
test_upstream_stopped(void **state)
{
	static const char *const rows[] = { "dispatch dispatch -", "call fault stopped", NULL };
	atomic_bool stop = false;
	pthread_t t;
	struct gw w;

	(void)state;
	gw_stop = &stop;
	gw_open_with(&w, "slow", 5000, 65536, false);
	gw_stop = NULL;
	assert_int_equal(stop_later_start(&t, &stop), 0);
	expect_fault(&w, SAY, GW_FAULT, RULE_STOPPED);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(gateway_fault_reason(w.g),
			    "stopped by the operator during a call of tool echo (upstream u)");
	gw_finish(&w);
	expect_rows(&w, rows);
	gw_free(&w);
}

/*
 * MCP sessions: an unpinned tool's listed definition is its upstream's
 * output, so the session's class rises to the tool's data class before
 * the agent sees it, and a sink below it is denied from then on (the
 * hostile review's vault description reached a public sink). A public
 * tool's definition raises nothing; a pin that does not match lists
 * nothing and raises nothing.
 */
static void
test_definition_raises_class(void **state)
{
	static const char *const rows[] = { "call denied sink_ceiling", NULL };
	struct mcp_tool_shown up;
	struct gw w;
	int pub, conf;

	(void)state;
	gw_initial = "public";
	gw_open(&w, "echo");
	gw_initial = "confidential";
	pub = class_rank(&w.c.classes, "public");
	conf = class_rank(&w.c.classes, "confidential");
	assert_int_equal(gateway_session_class(w.g), pub);
	assert_true(gateway_tool_definition(w.g, config_alias_tool(&w.c, "post"), &up));
	mcp_tool_shown_free(&up);
	assert_int_equal(gateway_session_class(w.g), pub);
	assert_false(gateway_tool_definition(w.g, config_alias_tool(&w.c, "pinned"), &up));
	assert_int_equal(gateway_session_class(w.g), pub);
	assert_true(gateway_tool_definition(w.g, config_alias_tool(&w.c, "say"), &up));
	assert_non_null(up.desc);
	mcp_tool_shown_free(&up);
	assert_int_equal(gateway_session_class(w.g), conf);
	expect_reply(&w, POST, RULE_SINK_CEILING, "{\"allowed\":false,\"response\":null}\n");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

static void
test_upstream_unavailable(void **state)
{
	static const char *const rows[] = { "call fault upstream_unavailable", NULL };
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_fault(&w, "{\"operation\":\"missing\",\"arguments\":{}}", GW_FAULT,
		     RULE_UPSTREAM_UNAVAILABLE);
	assert_non_null(strstr(gateway_fault_reason(w.g), "cannot start"));
	gw_finish(&w);
	expect_rows(&w, rows);
	gw_free(&w);
}

/*
 * An earlier terminal entry that could not be committed (as if the timer's
 * transaction failed): nothing more leaves, the upstream is not called.
 */
static void
test_audit_failed(void **state)
{
	struct gw w;

	(void)state;
	gw_open(&w, "echo");
	expect_reply(&w, SAY, RULE_ALLOWED, "{\"allowed\":true,\"response\":\"hello\"}\n");
	assert_int_equal(audit_lane_settle(w.a, &w.g->lane, NULL), 0);
	w.g->lane.failed = true;	/* settled: no other thread touches the lane now */
	expect_fault(&w, SAY, GW_FAULT, RULE_AUDIT_FAILED);
	expect_fault(&w, "{\"operation\":\"post\",\"arguments\":{}}", GW_FAULT, RULE_AUDIT_FAILED);
	assert_string_equal(gateway_fault_reason(w.g), "audit log: cannot append an entry");
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 1);	/* only the first call */
	gw_free(&w);
}

static void
test_no_randomness(void **state)
{
	static const char *const rows[] = { NULL };
	int status = -1;
	struct gw w;
	pid_t pid;

	(void)state;
	gw_open(&w, "echo");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		enum policy_rule rule;
		char *reply;
		size_t len;

		if (no_random_here() < 0)
			_exit(2);
		_exit(gateway_handle(w.g, SAY, strlen(SAY), &reply, &len, &rule) == GW_FAULT &&
		      rule == RULE_NO_RANDOMNESS && !reply ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	gw_finish(&w);
	assert_int_equal(sink_calls(&w), 0);
	expect_rows(&w, rows);
	gw_free(&w);
}

/* Every fault the gateway returns is a fatal row of the rule table. */
static void
test_fault_rules_in_table(void **state)
{
	const enum policy_rule faults[] = { RULE_INVALID_REQUEST, RULE_NO_RANDOMNESS,
					    RULE_OUT_OF_MEMORY, RULE_AUDIT_FAILED,
					    RULE_UPSTREAM_FAULT, RULE_UPSTREAM_TIMEOUT,
					    RULE_UPSTREAM_UNAVAILABLE };
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		assert_true(policy_rule_fatal(faults[i]));
		assert_false(policy_rule_allowed(faults[i]));
	}
	for (r = 0; r < RULE_COUNT; r++) {
		assert_string_not_equal(policy_rule_id((enum policy_rule)r), "unknown");
		assert_false(policy_rule_fatal((enum policy_rule)r) &&
			     policy_rule_allowed((enum policy_rule)r));
	}
	assert_string_equal(policy_rule_id(RULE_COUNT), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_dispatch_records_confinement),
		cmocka_unit_test(test_arguments_as_hashed),
		cmocka_unit_test(test_invalid_request),
		cmocka_unit_test(test_sink_ceiling),
		cmocka_unit_test(test_revoked_and_closed),
		cmocka_unit_test(test_flow_holds),
		cmocka_unit_test(test_flow_needs_the_gate),
		cmocka_unit_test(test_catalog_drift),
		cmocka_unit_test(test_egress_denied),
		cmocka_unit_test(test_response_too_large),
		cmocka_unit_test(test_upstream_errors),
		cmocka_unit_test(test_upstream_fault),
		cmocka_unit_test(test_upstream_timeout),
		cmocka_unit_test(test_upstream_stopped),
		cmocka_unit_test(test_definition_raises_class),
		cmocka_unit_test(test_upstream_unavailable),
		cmocka_unit_test(test_audit_failed),
		cmocka_unit_test(test_no_randomness),
		cmocka_unit_test(test_fault_rules_in_table),
	};

	return cmocka_run_group_tests_name("gateway", tests, NULL, NULL);
}
