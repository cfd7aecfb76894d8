/*
 * An upstream's start, confined against unconfined: mcp_start (spawn,
 * initialize, tools/list) and one tools/call, then mcp_stop, timed end to
 * end. The baseline is the same code with every protection of
 * mcp_confine.h switched off through the test-only mutants (the uid kept,
 * no Landlock, no seccomp filter, no proof in the child), so the ratio is
 * what confinement costs and nothing else. Rounds interleave: unconfined,
 * confined, unconfined, … Run as root: the confined side runs as a session
 * does, under a uid of its own (mcp_uids.h: taken, the start, the call,
 * the stop, the uid given back with its sweep, all timed).
 *
 * With AIRLOCK (the build's airlock), a session's parser of agent lines
 * too (engine/privsep/parser.h): parser_start (spawn, lockdown, ready),
 * one line, parser_stop, against the same with every layer switched off.
 *
 *   confine_bench UPSTREAM [ROUNDS [AIRLOCK]]
 *   sample: upstream_start baseline=X airlock=Y unit=ms     (a round each)
 *   bench: upstream_start baseline=X airlock=Y ratio=R unit=ms runs=N …
 *   sample: parser_start baseline=X airlock=Y unit=ms       (with AIRLOCK)
 *   bench: parser_start …
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "mcp.h"
#include "mcp_uids.h"
#include "parser.h"

#define UNCONFINED "upstream_keep_root,upstream_no_seccomp,upstream_no_landlock_fs," \
		   "upstream_no_landlock_net,upstream_no_proof"

/* One start, call and stop in ms (the confined: under a session's uid); < 0 when any step failed. */
static double
one_start(const struct mcp_server_config *base, const char *mutants)
{
	struct mcp_server_config cfg = *base;
	struct mcp_uid uid = { 0, -1 };
	struct mcp_call_result res;
	struct mcp_client *c = NULL;
	struct al_err err = { "" };
	double t0 = bench_now_ms(), ms = -1;

	if (mutants)
		setenv("AIRLOCK_MUTANT", mutants, 1);
	else if (mcp_uid_take(&uid, &err) < 0)
		goto out;
	cfg.confine.session_uid = uid.uid;
	if (mcp_start(&cfg, &c, &err) == 0 &&
	    mcp_call_text(c, "publish", "{\"text\":\"bench\"}", 16, 0, &res, &err) == 0) {
		if (res.outcome == MCP_OK)
			ms = bench_now_ms() - t0;
		mcp_call_result_free(&res);
	}
	if (c)
		mcp_stop(c);
	mcp_uid_give_back(&uid);
	if (ms > 0)
		ms = bench_now_ms() - t0;	/* the uid given back too */
out:
	if (ms < 0)
		fprintf(stderr, "confine_bench: %s: %s\n", mutants ? "unconfined" : "confined",
			err.msg[0] ? err.msg : "the call did not succeed");
	unsetenv("AIRLOCK_MUTANT");
	return ms;
}

#define PARSER_OPEN "parser_spawn_keep_root,parser_spawn_no_seccomp,parser_spawn_no_landlock_fs," \
		    "parser_spawn_no_landlock_net,parser_spawn_no_proof,parser_no_landlock," \
		    "parser_no_seccomp,parser_no_proof"

/* One parser's start, line and stop in ms; < 0 when any step failed. */
static double
one_parser(const char *program, const char *mutants)
{
	static const char line[] = "{\"operation\":\"say\",\"arguments\":{\"message\":\"hello\"}}";
	struct parsed_frame f;
	struct parser *p = NULL;
	struct al_err err = { "" };
	double t0 = bench_now_ms(), ms = -1;

	if (mutants)
		setenv("AIRLOCK_MUTANT", mutants, 1);
	if (parser_start(program, 65536, &p, &err) == 0 &&
	    parser_frame(p, line, sizeof line - 1, &f) == PARSER_VALID) {
		parser_stop(p);
		p = NULL;
		ms = bench_now_ms() - t0;
	}
	parser_stop(p);
	if (ms < 0)
		fprintf(stderr, "confine_bench: parser %s: %s\n", mutants ? "unconfined" : "confined",
			err.msg[0] ? err.msg : "the line was not parsed");
	unsetenv("AIRLOCK_MUTANT");
	return ms;
}

static double
median(double *v, size_t n)
{
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The parser's start, interleaved as the upstream's; base and ours reused. */
static int
parser_rounds(const char *airlock, size_t rounds, double *base, double *ours)
{
	char program[PATH_MAX];

	if (parser_program(airlock, program, sizeof program) < 0) {
		fprintf(stderr, "confine_bench: no parser beside %s\n", airlock);
		return 1;
	}
	for (size_t i = 0; i < rounds; i++) {
		base[i] = one_parser(program, PARSER_OPEN);
		ours[i] = one_parser(program, NULL);
		if (base[i] < 0 || ours[i] < 0)
			return 1;
		printf("sample: parser_start baseline=%.2f airlock=%.2f unit=ms\n", base[i], ours[i]);
	}
	double b = median(base, rounds), a = median(ours, rounds);

	printf("bench: parser_start baseline=%.2f airlock=%.2f ratio=%.2f unit=ms runs=%zu\n",
	       b, a, a / b, rounds);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 20;
	/* A sink each: the unconfined side's is root's, which airlock-upstream may not append to. */
	struct mcp_server_config cfg = { .name = "bench" }, open = { .name = "bench" };
	char dir[] = "/tmp/airlock-confine-bench-XXXXXX", sink[64], program[PATH_MAX];
	double *base, *ours;
	int rc = 1;

	if (argc < 2 || rounds == 0 || geteuid() != 0 || !realpath(argv[1], program)) {
		fprintf(stderr, "usage (as root): confine_bench UPSTREAM [ROUNDS [AIRLOCK]]\n");
		return 2;
	}
	base = calloc(rounds, sizeof *base);
	ours = calloc(rounds, sizeof *ours);
	/* The sinks' directory: the upstream group's, as an operator's paths.rw. */
	struct passwd *up = getpwnam(MCP_UIDS_OWNER);

	if (!base || !ours || !up || !mkdtemp(dir) || chown(dir, 0, up->pw_gid) != 0 ||
	    chmod(dir, 02770) != 0)
		return 2;
	snprintf(sink, sizeof sink, "%s/confined", dir);
	strv_push(&cfg.argv, program);
	strv_push(&cfg.argv, "--sink");
	strv_push(&cfg.argv, sink);
	strv_push(&cfg.confine.rw, dir);
	snprintf(sink, sizeof sink, "%s/unconfined", dir);
	strv_push(&open.argv, program);
	strv_push(&open.argv, "--sink");
	strv_push(&open.argv, sink);
	for (size_t i = 0; i < rounds; i++) {
		base[i] = one_start(&open, UNCONFINED);
		ours[i] = one_start(&cfg, NULL);
		if (base[i] < 0 || ours[i] < 0)
			goto out;
		printf("sample: upstream_start baseline=%.2f airlock=%.2f unit=ms\n", base[i], ours[i]);
	}
	double lo = ours[0], hi = ours[0];

	for (size_t i = 1; i < rounds; i++) {
		lo = ours[i] < lo ? ours[i] : lo;
		hi = ours[i] > hi ? ours[i] : hi;
	}
	double b = median(base, rounds), a = median(ours, rounds);

	printf("bench: upstream_start baseline=%.2f airlock=%.2f ratio=%.2f unit=ms runs=%zu "
	       "airlock_min=%.2f airlock_max=%.2f\n", b, a, a / b, rounds, lo, hi);
	rc = argc > 3 ? parser_rounds(argv[3], rounds, base, ours) : 0;
out:
	strv_free(&cfg.argv);
	strv_free(&open.argv);
	strv_free(&cfg.confine.rw);
	free(base);
	free(ours);
	return rc | bench_remove_dir(dir);
}
