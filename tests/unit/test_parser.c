#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hash.h"
#include "mcp.h"
#include "mcp_confine.h"
#include "parser.h"

#include "scratch.h"
#include "upstream_dir.h"

/*
 * The parser of agent lines (engine/privsep/parser.h) as the engine runs
 * it: the real airlock-parser-mutants program beside AIRLOCK_BIN, spawned
 * confined. Its answers (canonical arguments, invalid lines, a parser
 * killed mid-session), then a parser taken over (the test build's
 * PARSE_ESCAPE): the Docker socket, the audit database, ptrace and a
 * signal of the engine all fail, and the observers (a root-only unix
 * listener standing in for the Docker socket, a root-only 0600 file for
 * the database) see nothing. Each layer holds alone (its user without the
 * lockdown; the lockdown as root), a mutant without one layer is refused
 * before it reads a byte, and with every switchable layer off the socket
 * and the database come back at their observers. The confinement parts
 * need root (CI runs as root).
 *
 * An upstream's lines go the same way: the fixture MCP server (its chatty
 * mode: notifications, a blank line, a server request) read only through
 * the parser, its tool hashes the same as read in-process (pins hold); a
 * parser that forges the answer's text (the mutant parser_forge_answer)
 * is what the client gets, so the engine reads nothing itself; a parser
 * killed between calls loses the stream, never read in-process instead.
 */

struct fix {
	char dir[64], sock[96], db[96], program[4096];
	int listener;
	struct parser *p;
};

static bool
root_with_user(void)
{
	if (geteuid() == 0 && mcp_confine_can_change_ids())
		return true;
	print_message("SKIPPED: needs root and the %s user (scripts/setup)\n", PARSER_USER);
	return false;
}

/* As /var/run/docker.sock is: root's, 0660. */
static int
listen_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(chmod(path, 0660), 0);
	assert_int_equal(listen(s, 8), 0);
	return s;
}

static int
fix_setup(void **state)
{
	struct fix *f = calloc(1, sizeof *f);
	int fd;

	if (!f)
		return -1;
	assert_non_null(getenv("AIRLOCK_BIN"));
	assert_int_equal(parser_program(getenv("AIRLOCK_BIN"), f->program, sizeof f->program), 0);
	scratch_make(f->dir, sizeof f->dir, "parser");
	assert_int_equal(chmod(f->dir, 0711), 0);
	snprintf(f->sock, sizeof f->sock, "%s/docker.sock", f->dir);
	snprintf(f->db, sizeof f->db, "%s/audit.db", f->dir);
	fd = open(f->db, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	f->listener = listen_unix(f->sock);
	*state = f;
	return 0;
}

static int
fix_teardown(void **state)
{
	struct fix *f = *state;

	parser_stop(f->p);
	close(f->listener);
	scratch_remove(f->dir);
	free(f);
	unsetenv("AIRLOCK_MUTANT");
	return 0;
}

static void
start(struct fix *f)
{
	struct al_err err;

	parser_stop(f->p);
	f->p = NULL;
	if (parser_start(f->program, 65536, &f->p, &err) < 0)
		fail_msg("parser_start: %s", err.msg);
}

static enum parser_verdict
parse(struct fix *f, const char *line, struct parsed_frame *pf)
{
	return parser_frame(f->p, line, strlen(line), pf);
}

/* --- what it answers --------------------------------------------------------- */

static void
test_canonical(void **state)
{
	struct fix *f = *state;
	struct parsed_frame pf;

	start(f);
	assert_int_equal(parse(f, "{\"arguments\":{\"b\":1e9,\"a\":\"x\\u0041\"},"
			      "\"operation\":\"save\"}", &pf), PARSER_VALID);
	assert_string_equal(pf.operation, "save");
	assert_int_equal(pf.args_len, strlen("{\"a\":\"xA\",\"b\":1000000000.0}"));
	assert_memory_equal(pf.args, "{\"a\":\"xA\",\"b\":1000000000.0}", pf.args_len);
	/* one parser answers line after line */
	assert_int_equal(parse(f, "{\"operation\":\"publish\",\"arguments\":{}}", &pf), PARSER_VALID);
	assert_string_equal(pf.operation, "publish");
	assert_memory_equal(pf.args, "{}", 2);
}

/*
 * Canonical text longer than the engine's page of room and than what it
 * keeps between lines: 15,000 times 1e9 (4 bytes a number in the line,
 * 13 in the answer) comes back whole over several reads, then a short
 * line after it in the room given back.
 */
static void
test_long_answer(void **state)
{
	struct fix *f = *state;
	enum { N = 15000 };
	size_t cap = 64 + 4 * N, want_cap = 16 + 13 * N, i;
	char *line = malloc(cap), *want = malloc(want_cap), *l = line, *w = want;
	struct parsed_frame pf;

	assert_non_null(line);
	assert_non_null(want);
	l += sprintf(l, "{\"arguments\":{\"a\":[");
	w += sprintf(w, "{\"a\":[");
	for (i = 0; i < N; i++) {
		l += sprintf(l, i ? ",1e9" : "1e9");
		w += sprintf(w, i ? ",1000000000.0" : "1000000000.0");
	}
	strcpy(l, "]},\"operation\":\"save\"}");
	strcpy(w, "]}");
	assert_true(strlen(line) < 65536);
	start(f);
	assert_int_equal(parse(f, line, &pf), PARSER_VALID);
	assert_string_equal(pf.operation, "save");
	assert_true(strlen(want) > 64 << 10);
	assert_int_equal(pf.args_len, strlen(want));
	assert_memory_equal(pf.args, want, pf.args_len);
	assert_int_equal(parse(f, "{\"operation\":\"publish\",\"arguments\":{\"b\":2}}", &pf),
			 PARSER_VALID);
	assert_string_equal(pf.operation, "publish");
	assert_int_equal(pf.args_len, 7);
	assert_memory_equal(pf.args, "{\"b\":2}", 7);
	free(line);
	free(want);
}

static void
test_invalid(void **state)
{
	static const char *const bad[] = {
		"not json", "{\"operation\":\"save\"}", "{\"operation\":\"\",\"arguments\":{}}",
		"{\"operation\":\"save\",\"operation\":\"x\",\"arguments\":{}}",
		"{\"operation\":\"save\",\"arguments\":[]}", "{\"operation\":\"save\",\"arguments\":{},\"x\":1}",
		"{\"operation\":\"s\xff\",\"arguments\":{}}", NULL,
	};
	struct fix *f = *state;
	struct parsed_frame pf;
	size_t i;

	start(f);
	for (i = 0; bad[i]; i++)
		assert_int_equal(parse(f, bad[i], &pf), PARSER_INVALID);
	/* an invalid line does not lose the parser */
	assert_int_equal(parse(f, "{\"operation\":\"save\",\"arguments\":{}}", &pf), PARSER_VALID);
}

static void
test_killed_is_lost(void **state)
{
	struct fix *f = *state;
	struct parsed_frame pf;

	start(f);
	assert_true(parser_pid(f->p) > 0);
	assert_int_equal(kill(parser_pid(f->p), SIGKILL), 0);
	assert_int_equal(parse(f, "{\"operation\":\"save\",\"arguments\":{}}", &pf), PARSER_LOST);
	assert_int_equal(parse(f, "{\"operation\":\"save\",\"arguments\":{}}", &pf), PARSER_LOST);
}

/* --- what it is ---------------------------------------------------------------- */

/* The Uid line of /proc/PID/status: real, effective, saved, fs. */
static void
proc_uids(int pid, char *out, size_t cap)
{
	char path[64], line[256];
	FILE *fp;

	snprintf(path, sizeof path, "/proc/%d/status", pid);
	fp = fopen(path, "r");
	assert_non_null(fp);
	out[0] = '\0';
	while (fgets(line, sizeof line, fp))
		if (strncmp(line, "Uid:", 4) == 0)
			snprintf(out, cap, "%.120s", line + 4);
	fclose(fp);
}

static void
test_runs_confined(void **state)
{
	struct fix *f = *state;
	const struct mcp_confine_receipt *r;
	char uids[128], want[128];

	if (!root_with_user())
		skip();
	/* an upstream's mutants are not the parser's: with all of them on, it is confined */
	setenv("AIRLOCK_MUTANT", "upstream_keep_root,upstream_no_seccomp,upstream_no_landlock_fs,"
	       "upstream_no_landlock_net,upstream_no_proof", 1);
	start(f);
	r = parser_confinement(f->p);
	assert_string_equal(r->user, PARSER_USER);
	assert_true(r->uid_changed);
	assert_true(r->uid != 0);
	proc_uids(parser_pid(f->p), uids, sizeof uids);
	snprintf(want, sizeof want, "\t%u\t%u\t%u\t%u\n", r->uid, r->uid, r->uid, r->uid);
	assert_string_equal(uids, want);
	assert_true(r->landlock_abi >= MCP_LANDLOCK_ABI_MIN);
	assert_non_null(strstr(parser_lockdown_text(f->p), "landlock "));
	assert_non_null(strstr(parser_lockdown_text(f->p), "calls allowed"));
	assert_null(strstr(parser_lockdown_text(f->p), "landlock 0"));
}

/* --- taken over ---------------------------------------------------------------- */

static bool
accepted(int listener)
{
	int c = accept(listener, NULL, NULL);

	if (c < 0)
		return false;
	close(c);
	return true;
}

static off_t
size_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* The takeover under AIRLOCK_MUTANT=mutants: its report, and what the observers saw. */
static void
escape(struct fix *f, const char *mutants, char *report, size_t cap, bool *seen)
{
	off_t before = size_of(f->db);

	setenv("AIRLOCK_MUTANT", mutants, 1);
	start(f);
	assert_int_equal(parser_escape_test(f->p, f->sock, f->db, (int)getpid(), report, cap), 0);
	*seen = accepted(f->listener) || size_of(f->db) != before;
	print_message("   %-70s %s\n", mutants[0] ? mutants : "(as shipped)", report);
}

static void
expect_held(struct fix *f, const char *mutants)
{
	char report[160];
	bool seen;

	escape(f, mutants, report, sizeof report, &seen);
	assert_false(seen);
	assert_null(strstr(report, "=ok"));
	assert_non_null(strstr(report, "docker=E"));
	assert_non_null(strstr(report, "audit=E"));
	assert_non_null(strstr(report, "ptrace=E"));
	assert_non_null(strstr(report, "signal=E"));
}

static void
test_takeover_holds(void **state)
{
	struct fix *f = *state;
	char real[160];

	if (!root_with_user())
		skip();
	expect_held(f, "");
	/* each layer alone: its user without the lockdown; the lockdown as root */
	expect_held(f, "parser_no_landlock,parser_no_seccomp,parser_no_proof");
	expect_held(f, "parser_spawn_keep_root,parser_spawn_no_proof");
	/* the real Docker socket, where there is one */
	if (access("/var/run/docker.sock", F_OK) == 0) {
		unsetenv("AIRLOCK_MUTANT");
		start(f);
		assert_int_equal(parser_escape_test(f->p, "/var/run/docker.sock", f->db,
						    (int)getpid(), real, sizeof real), 0);
		assert_null(strstr(real, "docker=ok"));
	}
}

static void
test_takeover_mutants(void **state)
{
	static const char *const refused[][2] = {
		{ "parser_no_landlock", "proof: open" },
		{ "parser_no_seccomp", "proof: socket" },
		{ "parser_spawn_keep_root", "confinement not enforced" },
	};
	struct fix *f = *state;
	struct al_err err;
	char report[160];
	size_t i;
	bool seen;

	if (!root_with_user())
		skip();
	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		setenv("AIRLOCK_MUTANT", refused[i][0], 1);
		assert_int_equal(parser_start(f->program, 65536, &f->p, &err), -1);
		assert_null(f->p);
		assert_non_null(strstr(err.msg, refused[i][1]));
		assert_false(accepted(f->listener));
	}
	/*
	 * Every layer with an off switch off (the spawn's and its own), every
	 * proof skipped: the socket and the database come back at their
	 * observers. ptrace and signals stay refused by what has no switch:
	 * the spawn's Landlock scopes and its emptied capability sets.
	 */
	escape(f, "parser_spawn_keep_root,parser_spawn_no_landlock_fs,parser_spawn_no_landlock_net,"
		  "parser_spawn_no_seccomp,parser_spawn_no_proof,parser_no_landlock,parser_no_seccomp,"
		  "parser_no_proof", report, sizeof report, &seen);
	assert_true(seen);
	assert_string_equal(report, "docker=ok audit=ok ptrace=EPERM signal=EPERM");
}

/* --- an upstream's lines ------------------------------------------------------ */

struct up {
	char dir[64], sink[96];
	struct mcp_server_config cfg;
	struct mcp_client *c;
};

static void
up_start(struct up *u, struct parser *p)
{
	const char *bin = getenv("AIRLOCK_UPSTREAM");
	struct al_err err = { "" };

	if (!bin || bin[0] != '/')
		fail_msg("AIRLOCK_UPSTREAM must be the absolute path of the fixture server");
	if (!u->dir[0]) {
		scratch_make(u->dir, sizeof u->dir, "parser-up");
		upstream_dir_own(u->dir);
		snprintf(u->sink, sizeof u->sink, "%s/sink", u->dir);
	}
	mcp_stop(u->c);
	strv_free(&u->cfg.argv);
	strv_free(&u->cfg.env);
	strv_free(&u->cfg.confine.rw);
	u->cfg = (struct mcp_server_config){ .name = "fixture", .init_timeout_ms = 5000,
					     .call_timeout_ms = 5000 };
	assert_int_equal(strv_push(&u->cfg.argv, bin), 0);
	assert_int_equal(strv_push(&u->cfg.argv, "--sink"), 0);
	assert_int_equal(strv_push(&u->cfg.argv, u->sink), 0);
	assert_int_equal(strv_push(&u->cfg.argv, "--mode"), 0);
	assert_int_equal(strv_push(&u->cfg.argv, "chatty"), 0);
	assert_int_equal(strv_push(&u->cfg.env, "PATH=/usr/bin:/bin"), 0);
	assert_int_equal(strv_push(&u->cfg.confine.rw, u->dir), 0);
	u->cfg.digest = p ? parser_mcp_digest : NULL;
	u->cfg.digest_ctx = p;
	if (mcp_start(&u->cfg, &u->c, &err) < 0)
		fail_msg("mcp_start: %s", err.msg);
}

static void
up_stop(struct up *u)
{
	mcp_stop(u->c);
	strv_free(&u->cfg.argv);
	strv_free(&u->cfg.env);
	strv_free(&u->cfg.confine.rw);
	if (u->dir[0])
		scratch_remove(u->dir);
}

static void
up_call(struct up *u, struct mcp_call_result *res)
{
	static const char args[] = "{\"message\":\"canary-7f3a\"}";
	struct al_err err = { "" };

	assert_int_equal(mcp_call_text(u->c, "echo", args, sizeof args - 1, 0, res, &err), 0);
}

static void
test_upstream_through_parser(void **state)
{
	struct fix *f = *state;
	struct up in = { 0 }, through = { 0 };
	char h_in[HASH_HEX_LEN + 1], h_through[HASH_HEX_LEN + 1];
	struct mcp_call_result res;
	struct mcp_stats st;
	size_t before;

	start(f);
	up_start(&through, f->p);
	before = parser_digests(f->p);
	assert_true(before >= 3);	/* initialize, two pages of tools/list */
	up_call(&through, &res);
	assert_int_equal(res.outcome, MCP_OK);
	/* chatty: the answer's text is our refusal of its request, as written */
	assert_string_equal(res.text, "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\","
			    "\"error\":{\"code\":-32601,\"message\":\"not supported\"}}");
	mcp_call_result_free(&res);
	mcp_get_stats(through.c, &st);
	assert_int_equal(st.server_requests, 1);
	assert_true(parser_digests(f->p) >= before + 4);	/* notes, the request, the answer */
	/* the same hashes as read in this process: a pin made before holds */
	up_start(&in, NULL);
	assert_int_equal(mcp_tool_hash(in.c, "echo", h_in), 0);
	assert_int_equal(mcp_tool_hash(through.c, "echo", h_through), 0);
	assert_string_equal(h_in, h_through);
	assert_false(parser_lost(f->p));
	up_stop(&in);
	up_stop(&through);
}

static void
test_upstream_forged(void **state)
{
	struct fix *f = *state;
	struct up u = { 0 };
	struct mcp_call_result res;
	size_t i;

	setenv("AIRLOCK_MUTANT", "parser_forge_answer", 1);
	start(f);
	up_start(&u, f->p);
	up_call(&u, &res);
	assert_int_equal(res.outcome, MCP_OK);
	assert_true(res.text_len > 0);
	for (i = 0; i < res.text_len; i++)
		assert_int_equal(res.text[i], 'F');	/* the parser's word, not the line's */
	mcp_call_result_free(&res);
	up_stop(&u);
}

static void
test_upstream_parser_killed(void **state)
{
	struct fix *f = *state;
	struct up u = { 0 };
	struct mcp_call_result res;

	start(f);
	up_start(&u, f->p);
	assert_int_equal(kill(parser_pid(f->p), SIGKILL), 0);
	up_call(&u, &res);
	assert_int_equal(res.outcome, MCP_FAULT);
	assert_true(parser_lost(f->p));
	up_call(&u, &res);	/* the stream stays lost: nothing is read here instead */
	assert_int_equal(res.outcome, MCP_FAULT);
	up_stop(&u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_canonical, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_long_answer, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_invalid, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_killed_is_lost, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_runs_confined, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_takeover_holds, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_takeover_mutants, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_upstream_through_parser, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_upstream_forged, fix_setup, fix_teardown),
		cmocka_unit_test_setup_teardown(test_upstream_parser_killed, fix_setup, fix_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
