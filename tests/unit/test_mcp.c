#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp.h"

#include "scratch.h"
#include "stop_later.h"
#include "upstream_dir.h"

/*
 * The MCP client against real processes: tests/fixtures/upstream (built
 * next to this test, AIRLOCK_UPSTREAM) and the npm servers pinned in
 * tests/thirdparty (AIRLOCK_THIRDPARTY). Missing npm servers skip their
 * cases loudly, or fail them when CI is set.
 */

#define RTT_ROUNDS	200

struct fx {
	char dir[64];
	char sink[128];
	char file[128];		/* a file for the filesystem server */
	struct mcp_server_config cfg;
	struct mcp_client *c;
};

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int
fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);

	if (!f)
		return -1;
	scratch_make(f->dir, sizeof f->dir, "mcp");
	upstream_dir_own(f->dir);
	snprintf(f->sink, sizeof f->sink, "%s/sink", f->dir);
	snprintf(f->file, sizeof f->file, "%s/hello.txt", f->dir);
	*state = f;
	return 0;
}

static void
fx_release(struct fx *f)
{
	mcp_stop(f->c);
	f->c = NULL;
	strv_free(&f->cfg.argv);
	strv_free(&f->cfg.env);
	strv_free(&f->cfg.confine.rw);
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;

	fx_release(f);
	scratch_remove(f->dir);
	free(f);
	return 0;
}

static void
push(struct strv *s, const char *v)
{
	assert_int_equal(strv_push(s, v), 0);
}

static void
fx_config(struct fx *f, const char *mode)
{
	const char *bin = getenv("AIRLOCK_UPSTREAM");

	if (!bin || bin[0] != '/')
		fail_msg("AIRLOCK_UPSTREAM must be the absolute path of the fixture server");
	fx_release(f);
	f->cfg.name = "fixture";
	push(&f->cfg.argv, bin);
	push(&f->cfg.argv, "--sink");
	push(&f->cfg.argv, f->sink);
	push(&f->cfg.argv, "--mode");
	push(&f->cfg.argv, mode);
	push(&f->cfg.argv, "--name");
	push(&f->cfg.argv, "fixture");
	push(&f->cfg.env, "PATH=/usr/bin:/bin");
	push(&f->cfg.env, "AIRLOCK_MARK=1");
	push(&f->cfg.confine.rw, f->dir);	/* the sink */
	f->cfg.init_timeout_ms = 5000;
	f->cfg.call_timeout_ms = 5000;
}

static struct mcp_client *
fx_launch(struct fx *f)
{
	struct al_err err = { "" };

	if (mcp_start(&f->cfg, &f->c, &err) < 0)
		fail_msg("mcp_start: %s", err.msg);
	assert_non_null(f->c);
	return f->c;
}

static struct mcp_client *
fx_start(struct fx *f, const char *mode)
{
	fx_config(f, mode);
	return fx_launch(f);
}

static void
call(struct mcp_client *c, const char *tool, const char *args_json, long timeout_ms,
     struct mcp_call_result *res)
{
	json_t *args = json_loads(args_json, 0, NULL);
	struct al_err err = { "" };

	assert_non_null(args);
	assert_int_equal(mcp_call(c, tool, args, timeout_ms, res, &err), 0);
	assert_string_equal(err.msg, "");
	json_decref(args);
}

static void
assert_text(const struct mcp_call_result *res, const char *want)
{
	assert_int_equal(res->outcome, MCP_OK);
	assert_non_null(res->text);
	assert_int_equal(res->text_len, strlen(want));
	assert_string_equal(res->text, want);
}

static void
assert_gone(pid_t pid)
{
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

/* --- the fixture server ---------------------------------------------------- */

static void
test_start_lists_tools(void **state)
{
	static const char *const tools[] = { "echo", "store", "publish" };
	char first[3][HASH_HEX_LEN + 1], again[HASH_HEX_LEN + 1];
	struct fx *f = *state;
	struct mcp_client *c;
	struct mcp_stats st;
	long long t0;
	int i;

	t0 = now_us();
	c = fx_start(f, "echo");
	print_message("fixture: spawn to tools listed: %.2f ms\n", (now_us() - t0) / 1000.0);
	assert_string_equal(mcp_negotiated_version(c), MCP_PROTOCOL_VERSION);
	assert_true(mcp_pid(c) > 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(mcp_tool_hash(c, tools[i], first[i]), 0);
	assert_string_not_equal(first[0], first[1]);
	assert_string_not_equal(first[1], first[2]);
	assert_int_equal(mcp_tool_hash(c, "nope", again), -1);
	mcp_get_stats(c, &st);
	assert_int_equal(st.list_changed, 0);
	assert_int_equal(st.malformed_lines, 0);
}

static void
test_hashes_stable_across_starts(void **state)
{
	char a[HASH_HEX_LEN + 1], b[HASH_HEX_LEN + 1];
	struct fx *f = *state;

	assert_int_equal(mcp_tool_hash(fx_start(f, "echo"), "echo", a), 0);
	assert_int_equal(mcp_tool_hash(fx_start(f, "echo"), "echo", b), 0);
	assert_string_equal(a, b);
	assert_int_equal(mcp_tool_hash(f->c, "publish", a), 0);
	fx_release(f);
	assert_int_equal(mcp_tool_hash(fx_start(f, "echo"), "publish", b), 0);
	assert_string_equal(a, b);
}

static void
test_echo_round_trip(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "echo");
	struct mcp_call_result res;
	long long rtt[RTT_ROUNDS], t0;
	struct mcp_stats st;
	int i;

	call(c, "echo", "{\"message\":\"hello\"}", 0, &res);
	assert_text(&res, "hello");
	assert_int_equal(res.other_items, 0);
	mcp_call_result_free(&res);
	for (i = 0; i < RTT_ROUNDS; i++) {
		t0 = now_us();
		call(c, "echo", "{\"message\":\"x\"}", 0, &res);
		rtt[i] = now_us() - t0;
		assert_text(&res, "x");
		mcp_call_result_free(&res);
	}
	qsort(rtt, RTT_ROUNDS, sizeof rtt[0], cmp_ll);
	print_message("fixture: echo round trip median %lld us, p90 %lld us (n=%d)\n",
		      rtt[RTT_ROUNDS / 2], rtt[RTT_ROUNDS * 9 / 10], RTT_ROUNDS);
	mcp_get_stats(c, &st);
	assert_int_equal(st.calls, RTT_ROUNDS + 1);
}

static void
test_sink_records_params(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "echo");
	struct mcp_call_result res;
	json_t *got, *want;
	char line[512];
	FILE *fp;

	call(c, "store", "{\"k\":\"v\",\"n\":1}", 0, &res);
	mcp_call_result_free(&res);
	call(c, "publish", "{\"message\":\"m\"}", 0, &res);
	mcp_call_result_free(&res);
	fp = fopen(f->sink, "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof line, fp));
	got = json_loads(line, 0, NULL);
	want = json_loads("{\"name\":\"store\",\"arguments\":{\"k\":\"v\",\"n\":1}}", 0, NULL);
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);
	assert_non_null(fgets(line, sizeof line, fp));
	assert_string_equal(line, "{\"name\":\"publish\",\"arguments\":{\"message\":\"m\"}}\n");
	assert_null(fgets(line, sizeof line, fp));
	fclose(fp);
}

/* The error message echoes the input; nothing of it may survive. */
static void
test_error_keeps_only_the_code(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "error");
	struct mcp_call_result res;
	struct al_err err = { "" };
	json_t *args = json_pack("{s:s}", "message", "SECRET-7731");

	assert_int_equal(mcp_call(c, "publish", args, 0, &res, &err), 0);
	json_decref(args);
	assert_int_equal(res.outcome, MCP_RPC_ERROR);
	assert_int_equal(res.error_code, -32000);
	assert_null(res.text);
	assert_int_equal(res.text_len, 0);
	assert_int_equal(res.other_items, 0);
	assert_null(strstr(err.msg, "SECRET"));
	assert_null(strstr(err.msg, "failed on"));
	assert_null(memmem(&res, sizeof res, "SECRET", 6));
	mcp_call_result_free(&res);
}

static void
test_tool_error(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;

	call(fx_start(f, "tool_error"), "store", "{\"message\":\"SECRET\"}", 0, &res);
	assert_int_equal(res.outcome, MCP_TOOL_ERROR);
	assert_int_equal(res.error_code, 0);
	assert_null(res.text);
	mcp_call_result_free(&res);
}

static void
test_malformed_line_faults(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "malformed");
	struct mcp_call_result res;
	struct mcp_stats st;

	call(c, "echo", "{\"message\":\"a\"}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	assert_null(res.text);
	mcp_call_result_free(&res);
	mcp_get_stats(c, &st);
	assert_int_equal(st.malformed_lines, 1);
	/* The framing held (the bad line ended), so the next call is answered alike. */
	call(c, "echo", "{\"message\":\"b\"}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	mcp_get_stats(c, &st);
	assert_int_equal(st.malformed_lines, 2);
}

static void
test_stderr_counted(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "stderr");
	struct mcp_call_result res;
	struct mcp_stats st;

	call(c, "echo", "{\"message\":\"to stderr\"}", 0, &res);
	assert_text(&res, "to stderr");
	mcp_call_result_free(&res);
	mcp_get_stats(c, &st);
	assert_true(st.stderr_bytes >= strlen("{\"message\":\"to stderr\"}"));
}

/*
 * Decided: after a timeout the client stays usable. The fixture answers
 * the cancelled call late anyway; that answer must be dropped and the
 * next call must get its own.
 */
static void
test_slow_times_out_then_recovers(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "slow");
	struct mcp_call_result res;
	long long t0, took;

	t0 = now_us();
	call(c, "echo", "{\"message\":\"first\"}", 300, &res);
	took = now_us() - t0;
	assert_int_equal(res.outcome, MCP_TIMEOUT);
	assert_null(res.text);
	assert_true(took >= 290000 && took < 1000000);
	print_message("fixture: slow call timed out after %.1f ms\n", took / 1000.0);
	t0 = now_us();
	call(c, "echo", "{\"message\":\"second\"}", 3000, &res);
	assert_text(&res, "second");
	assert_true(now_us() - t0 < 1000000);
	mcp_call_result_free(&res);
}

/*
 * The session's stop (issue: ctl stop waited for a hung upstream call):
 * raised 200 ms into a call the fixture holds for 10 s, the call gives up
 * within MCP_STOP_LOOK_MS of it, MCP_STOPPED, long before its 5 s timeout.
 */
static void
test_stop_gives_up_the_call(void **state)
{
	struct fx *f = *state;
	atomic_bool stop = false;
	struct mcp_call_result res;
	struct mcp_client *c;
	pthread_t t;
	long long t0, took;

	fx_config(f, "slow");
	f->cfg.stop = &stop;
	c = fx_launch(f);
	t0 = now_us();
	assert_int_equal(stop_later_start(&t, &stop), 0);
	call(c, "echo", "{\"message\":\"held\"}", 5000, &res);
	took = now_us() - t0;
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(res.outcome, MCP_STOPPED);
	assert_null(res.text);
	assert_true(took >= 190000 && took < 2500000);	/* the timeout: 5 s */
	print_message("fixture: a stop 200 ms into the call ended it after %.1f ms\n",
		      took / 1000.0);
}

/* Notifications, a blank line, CRLF and a server request around one answer. */
static void
test_server_request_refused(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "chatty");
	struct mcp_call_result res;
	struct mcp_stats st;

	call(c, "echo", "{}", 0, &res);
	assert_text(&res, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\","
		    "\"error\":{\"code\":-32601,\"message\":\"not supported\"}}");
	mcp_call_result_free(&res);
	mcp_get_stats(c, &st);
	assert_int_equal(st.server_requests, 1);
	assert_int_equal(st.malformed_lines, 0);
	assert_int_equal(st.list_changed, 0);
}

/* A line past MCP_LINE_MAX loses the framing for good. */
static void
test_overlong_line_breaks_the_client(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "overlong");
	struct mcp_call_result res;
	long long t0;

	call(c, "echo", "{}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	t0 = now_us();
	call(c, "echo", "{}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	assert_true(now_us() - t0 < 100000);
}

static void
test_image_item_counted(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;

	call(fx_start(f, "image"), "echo", "{}", 0, &res);
	assert_text(&res, "ok");
	assert_int_equal(res.other_items, 1);
	mcp_call_result_free(&res);
}

static void
test_drift_changes_hash(void **state)
{
	char e1[HASH_HEX_LEN + 1], e2[HASH_HEX_LEN + 1], s1[HASH_HEX_LEN + 1], s2[HASH_HEX_LEN + 1];
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "drift");
	struct mcp_call_result res;
	struct mcp_stats st;

	assert_int_equal(mcp_tool_hash(c, "echo", e1), 0);
	assert_int_equal(mcp_tool_hash(c, "store", s1), 0);
	call(c, "echo", "{\"message\":\"d\"}", 0, &res);
	assert_text(&res, "d");
	mcp_call_result_free(&res);
	assert_int_equal(mcp_tool_hash(c, "echo", e2), 0);
	assert_string_not_equal(e1, e2);
	assert_int_equal(mcp_tool_hash(c, "store", s2), 0);
	assert_string_equal(s1, s2);
	mcp_get_stats(c, &st);
	assert_int_equal(st.list_changed, 1);
}

static void
test_exit_faults(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "exit");
	struct mcp_call_result res;
	char h[HASH_HEX_LEN + 1];
	long long t0;

	call(c, "echo", "{\"message\":\"bye\"}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	t0 = now_us();
	call(c, "echo", "{\"message\":\"again\"}", 0, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	assert_true(now_us() - t0 < 100000);
	/* The listing is still the last one seen; calls fault. */
	assert_int_equal(mcp_tool_hash(c, "echo", h), 0);
}

static void
test_bad_argv_fails_cleanly(void **state)
{
	struct fx *f = *state;
	struct al_err err = { "" };
	struct mcp_client *c = (struct mcp_client *)f;	/* any non-NULL: must be cleared */
	long long t0;

	fx_config(f, "echo");
	free(f->cfg.argv.v[0]);
	f->cfg.argv.v[0] = strdup("/nonexistent/airlock-upstream");
	t0 = now_us();
	assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
	print_message("fixture: failed exec reported in %.2f ms\n", (now_us() - t0) / 1000.0);
	assert_null(c);
	assert_string_equal(err.msg, "upstream fixture: cannot start: program"
			    " /nonexistent/airlock-upstream: No such file or directory");

	free(f->cfg.argv.v[0]);
	f->cfg.argv.v[0] = strdup("/tmp");
	assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg, "upstream fixture: cannot start: program /tmp is a directory");

	free(f->cfg.argv.v[0]);
	f->cfg.argv.v[0] = strdup("upstream");
	assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
	assert_null(c);
	assert_non_null(strstr(err.msg, "absolute"));
}

static void
test_bad_cwd_fails_cleanly(void **state)
{
	struct fx *f = *state;
	struct al_err err = { "" };
	struct mcp_client *c = NULL;

	fx_config(f, "echo");
	f->cfg.cwd = "/nonexistent/dir";
	assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg, "upstream fixture: cannot start: its cwd /nonexistent/dir:"
			    " No such file or directory");
}

/* A program that is no MCP server: what it did is named, not a JSON-RPC code. */
static void
test_not_a_server_named(void **state)
{
	static const struct { const char *prog, *msg; } cases[] = {
		{ "/bin/cat", "upstream fixture: not an MCP server: it sent our initialize request"
			      " back (an echo, as cat would)" },
		{ "/bin/true", "upstream fixture: exited with status 0 before answering initialize" },
		{ "/bin/false", "upstream fixture: exited with status 1 before answering initialize" },
	};
	struct fx *f = *state;
	struct al_err err = { "" };
	struct mcp_client *c = NULL;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fx_config(f, "echo");
		strv_free(&f->cfg.argv);
		push(&f->cfg.argv, cases[i].prog);
		assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
		assert_null(c);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

static void
test_unsupported_version_refused(void **state)
{
	struct fx *f = *state;
	struct al_err err = { "" };
	struct mcp_client *c = NULL;

	fx_config(f, "badversion");
	assert_int_equal(mcp_start(&f->cfg, &c, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg, "upstream fixture: unsupported protocol version");
}

static void
test_env_is_exactly_the_allowlist(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;

	setenv("AIRLOCK_MUST_NOT_LEAK", "1", 1);
	call(fx_start(f, "env"), "echo", "{}", 0, &res);
	unsetenv("AIRLOCK_MUST_NOT_LEAK");
	assert_text(&res, "PATH,AIRLOCK_MARK");
	mcp_call_result_free(&res);
}

/* Descriptors, core limit, cwd, process group and signals as the server sees them. */
static void
test_child_confinement(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;
	struct sigaction sa;
	char cwd[PATH_MAX];
	json_t *self, *want_fds;
	int sock = socket(AF_UNIX, SOCK_STREAM, 0);	/* no CLOEXEC: must not leak */

	assert_true(sock >= 0);
	fx_config(f, "self");
	f->cfg.cwd = f->dir;
	call(fx_launch(f), "echo", "{}", 0, &res);
	close(sock);
	assert_int_equal(res.outcome, MCP_OK);
	self = json_loads(res.text, 0, NULL);
	assert_non_null(self);
	want_fds = json_pack("[i, i, i]", 0, 1, 2);
	assert_true(json_equal(json_object_get(self, "fds"), want_fds));
	assert_int_equal(json_integer_value(json_array_get(json_object_get(self, "core"), 0)), 0);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(self, "core"), 1)), 0);
	assert_non_null(realpath(f->dir, cwd));
	assert_string_equal(json_string_value(json_object_get(self, "cwd")), cwd);
	assert_true(json_is_true(json_object_get(self, "own_group")));
	assert_string_equal(json_string_value(json_object_get(self, "sigpipe")), "default");
	/* ...while the engine itself now ignores SIGPIPE (documented in mcp.h). */
	assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_IGN);
	json_decref(want_fds);
	json_decref(self);
	mcp_call_result_free(&res);
}

static void
test_stop_prompt_on_eof(void **state)
{
	struct fx *f = *state;
	pid_t pid = mcp_pid(fx_start(f, "echo"));
	long long t0 = now_us(), took;

	mcp_stop(f->c);
	f->c = NULL;
	took = now_us() - t0;
	print_message("fixture: stop after stdin EOF took %.2f ms\n", took / 1000.0);
	assert_true(took < 1000000);
	assert_gone(pid);
}

/* hang ignores stdin EOF and SIGTERM: only SIGKILL ends it. */
static void
test_stop_kills_a_hanging_server(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "hang");
	struct mcp_call_result res;
	pid_t pid = mcp_pid(c);
	long long t0, took;

	call(c, "echo", "{\"message\":\"still here\"}", 0, &res);
	assert_text(&res, "still here");
	mcp_call_result_free(&res);
	t0 = now_us();
	mcp_stop(c);
	f->c = NULL;
	took = now_us() - t0;
	print_message("fixture: stop of a hanging server took %.0f ms\n", took / 1000.0);
	assert_true(took >= 2900000 && took < 4500000);
	assert_gone(pid);
}

static void
test_local_misuse(void **state)
{
	struct fx *f = *state;
	struct mcp_client *c = fx_start(f, "echo");
	struct mcp_call_result res;
	struct al_err err = { "" };
	json_t *arr = json_array();

	assert_int_equal(mcp_call(c, "echo", arr, 0, &res, &err), -1);
	assert_string_not_equal(err.msg, "");
	assert_null(res.text);
	json_decref(arr);
	/* NULL arguments mean {}. */
	assert_int_equal(mcp_call(c, "echo", NULL, 0, &res, &err), 0);
	assert_text(&res, "{}");
	mcp_call_result_free(&res);
	mcp_call_result_free(NULL);
	mcp_stop(NULL);
}

/* --- npm servers ----------------------------------------------------------- */

static char npm_copy[] = "/tmp/airlock-npm-XXXXXX";

static void
npm_copy_remove(void)
{
	char cmd[64];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", npm_copy);
	if (system(cmd) != 0)
		fprintf(stderr, "test_mcp: could not remove %s\n", npm_copy);
}

/*
 * The servers run as airlock-upstream, which may not enter the clone (a
 * directory only root can enter: root's home, a mktemp -d): they run from
 * a copy of node_modules it can read, made once, removed at exit.
 */
static const char *
npm_reachable(const char *dir)
{
	static bool made;
	char cmd[4200];

	if (made)
		return npm_copy;
	if (!mkdtemp(npm_copy) || chmod(npm_copy, 0755) != 0)
		fail_msg("mkdtemp %s: %s", npm_copy, strerror(errno));
	atexit(npm_copy_remove);
	snprintf(cmd, sizeof cmd, "cp -a '%s/node_modules' '%s/'", dir, npm_copy);
	if (strchr(dir, '\'') || system(cmd) != 0)
		fail_msg("cannot copy %s/node_modules", dir);
	made = true;
	return npm_copy;
}

/* An installed npm server's absolute path; otherwise skip loudly (fail under CI). */
static bool
thirdparty_bin(const char *name, char *out, size_t cap)
{
	const char *dir = getenv("AIRLOCK_THIRDPARTY"), *ci = getenv("CI");

	if (dir && dir[0] == '/') {
		snprintf(out, cap, "%s/node_modules/.bin/%s", dir, name);
		if (access(out, X_OK) == 0) {
			snprintf(out, cap, "%s/node_modules/.bin/%s", npm_reachable(dir), name);
			return true;
		}
	}
	if (ci && ci[0])
		fail_msg("%s is not installed under CI: run `npm ci` in tests/thirdparty", name);
	print_message("SKIPPED: %s is not installed (run `npm ci` in tests/thirdparty)\n", name);
	return false;
}

/* node must be found through PATH by the servers' "#!/usr/bin/env node". */
static void
node_path_env(struct strv *env)
{
	const char *path = getenv("PATH");
	char buf[4096], cand[4200], entry[4200] = "PATH=/usr/bin:/bin";
	char *dir, *save = NULL;

	snprintf(buf, sizeof buf, "%s", path ? path : "");
	for (dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(cand, sizeof cand, "%s/node", dir);
		if (dir[0] == '/' && access(cand, X_OK) == 0) {
			snprintf(entry, sizeof entry, "PATH=%s:/usr/bin:/bin", dir);
			break;
		}
	}
	push(env, entry);
}

static struct mcp_client *
npm_start(struct fx *f, const char *bin, const char *arg)
{
	long long t0;

	fx_release(f);
	f->cfg.name = "npm";
	push(&f->cfg.argv, bin);
	push(&f->cfg.argv, arg);
	node_path_env(&f->cfg.env);
	f->cfg.init_timeout_ms = 20000;
	f->cfg.call_timeout_ms = 10000;
	t0 = now_us();
	fx_launch(f);
	print_message("%s: spawn to tools listed: %.1f ms\n", strrchr(bin, '/') + 1,
		      (now_us() - t0) / 1000.0);
	return f->c;
}

static void
test_everything_echo(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;
	long long rtt[RTT_ROUNDS], t0;
	char bin[PATH_MAX], h[HASH_HEX_LEN + 1];
	struct mcp_client *c;
	int i;

	if (!thirdparty_bin("mcp-server-everything", bin, sizeof bin))
		skip();
	c = npm_start(f, bin, "stdio");
	assert_string_equal(mcp_negotiated_version(c), MCP_PROTOCOL_VERSION);
	assert_int_equal(mcp_tool_hash(c, "echo", h), 0);
	call(c, "echo", "{\"message\":\"hi\"}", 0, &res);
	assert_text(&res, "Echo: hi");
	mcp_call_result_free(&res);
	for (i = 0; i < RTT_ROUNDS; i++) {
		t0 = now_us();
		call(c, "echo", "{\"message\":\"x\"}", 0, &res);
		rtt[i] = now_us() - t0;
		assert_text(&res, "Echo: x");
		mcp_call_result_free(&res);
	}
	qsort(rtt, RTT_ROUNDS, sizeof rtt[0], cmp_ll);
	print_message("everything: echo round trip median %lld us, p90 %lld us (n=%d)\n",
		      rtt[RTT_ROUNDS / 2], rtt[RTT_ROUNDS * 9 / 10], RTT_ROUNDS);
	i = mcp_pid(c);
	t0 = now_us();
	mcp_stop(c);
	f->c = NULL;
	print_message("everything: stop took %.1f ms\n", (now_us() - t0) / 1000.0);
	assert_gone(i);
}

static void
test_everything_unknown_tool(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;
	char bin[PATH_MAX];

	if (!thirdparty_bin("mcp-server-everything", bin, sizeof bin))
		skip();
	call(npm_start(f, bin, "stdio"), "no-such-tool", "{}", 0, &res);
	assert_true(res.outcome == MCP_TOOL_ERROR || res.outcome == MCP_RPC_ERROR);
	assert_null(res.text);
	mcp_call_result_free(&res);
}

/* list_changed comes right after initialized: the re-list must still find the tools. */
static void
test_everything_list_changed(void **state)
{
	char a[HASH_HEX_LEN + 1], b[HASH_HEX_LEN + 1], s[HASH_HEX_LEN + 1];
	struct fx *f = *state;
	struct mcp_client *c;
	struct mcp_stats st;
	char bin[PATH_MAX];

	if (!thirdparty_bin("mcp-server-everything", bin, sizeof bin))
		skip();
	c = npm_start(f, bin, "stdio");
	usleep(200000);
	assert_int_equal(mcp_tool_hash(c, "echo", a), 0);
	assert_int_equal(mcp_tool_hash(c, "get-sum", s), 0);
	assert_int_equal(mcp_tool_hash(c, "echo", b), 0);
	assert_string_equal(a, b);
	mcp_get_stats(c, &st);
	print_message("everything: list_changed %zu, server requests %zu, stderr %zu bytes\n",
		      st.list_changed, st.server_requests, st.stderr_bytes);
	assert_true(st.list_changed >= 1);
	assert_int_equal(st.server_requests, 0);
	assert_int_equal(st.malformed_lines, 0);
}

static void
test_filesystem_read(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;
	char bin[PATH_MAX], dir[PATH_MAX], args[PATH_MAX + 32];
	FILE *fp;

	if (!thirdparty_bin("mcp-server-filesystem", bin, sizeof bin))
		skip();
	fp = fopen(f->file, "w");
	assert_non_null(fp);
	fputs("hello fs\n", fp);
	fclose(fp);
	assert_non_null(realpath(f->dir, dir));
	snprintf(args, sizeof args, "{\"path\":\"%s/hello.txt\"}", dir);
	call(npm_start(f, bin, dir), "read_text_file", args, 0, &res);
	assert_text(&res, "hello fs\n");
	mcp_call_result_free(&res);
}

/* --- a transport the caller started (mcp_start_fds) ------------------------- */

/* The fixture started here, its stdio on pipes, as the relay hands them over. */
static pid_t
spawn_plain(const struct fx *f, int fds[3])
{
	char *argv[16] = { NULL };
	int in[2], out[2], err[2];
	size_t i;
	pid_t pid;

	for (i = 0; i < f->cfg.argv.n && i < 15; i++)
		argv[i] = f->cfg.argv.v[i];
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	fds[0] = in[1];
	fds[1] = out[0];
	fds[2] = err[0];
	return pid;
}

/*
 * The same handshake and calls over descriptors; mcp_stop closes them and
 * signals nothing: the server ends on its stdin's EOF, reaped here.
 */
static void
test_start_fds(void **state)
{
	struct fx *f = *state;
	struct mcp_call_result res;
	struct al_err err = { "" };
	char h[HASH_HEX_LEN + 1];
	int fds[3], status = -1;
	pid_t pid;

	fx_config(f, "echo");
	pid = spawn_plain(f, fds);
	if (mcp_start_fds(&f->cfg, fds[0], fds[1], fds[2], &f->c, &err) < 0)
		fail_msg("mcp_start_fds: %s", err.msg);
	assert_int_equal(mcp_pid(f->c), 0);
	assert_int_equal(mcp_tool_hash(f->c, "echo", h), 0);
	call(f->c, "echo", "{\"message\":\"over fds\"}", 0, &res);
	assert_text(&res, "over fds");
	mcp_call_result_free(&res);
	mcp_stop(f->c);
	f->c = NULL;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Bad descriptors are refused and whatever was given is closed. */
static void
test_start_fds_refuses(void **state)
{
	struct fx *f = *state;
	struct al_err err = { "" };
	int p[2];

	fx_config(f, "echo");
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(mcp_start_fds(&f->cfg, -1, p[0], p[1], &f->c, &err), -1);
	assert_string_equal(err.msg, "upstream: bad arguments");
	assert_null(f->c);
	assert_int_equal(fcntl(p[0], F_GETFD), -1);
	assert_int_equal(fcntl(p[1], F_GETFD), -1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_start_lists_tools),
		T(test_start_fds),
		T(test_start_fds_refuses),
		T(test_hashes_stable_across_starts),
		T(test_echo_round_trip),
		T(test_sink_records_params),
		T(test_error_keeps_only_the_code),
		T(test_tool_error),
		T(test_malformed_line_faults),
		T(test_stderr_counted),
		T(test_slow_times_out_then_recovers),
		T(test_stop_gives_up_the_call),
		T(test_server_request_refused),
		T(test_overlong_line_breaks_the_client),
		T(test_image_item_counted),
		T(test_drift_changes_hash),
		T(test_exit_faults),
		T(test_bad_argv_fails_cleanly),
		T(test_bad_cwd_fails_cleanly),
		T(test_not_a_server_named),
		T(test_unsupported_version_refused),
		T(test_env_is_exactly_the_allowlist),
		T(test_child_confinement),
		T(test_stop_prompt_on_eof),
		T(test_stop_kills_a_hanging_server),
		T(test_local_misuse),
		T(test_everything_echo),
		T(test_everything_unknown_tool),
		T(test_everything_list_changed),
		T(test_filesystem_read),
	};

	return cmocka_run_group_tests_name("mcp", tests, NULL, NULL);
}
