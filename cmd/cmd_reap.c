#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "docker.h"
#include "preflight.h"
#include "reaper.h"

/*
 * Each container as it is settled: with --json gathered by fate, else a
 * line for each one removed or not removable (the kept ones are counted).
 */
struct reap_seen {
	bool json;
	json_t *by_fate[3];	/* [enum reap_fate]: [{"container", "session"}, …] */
};

static void
reap_seen(void *ctx, const char *container, const char *session, enum reap_fate fate)
{
	struct reap_seen *s = ctx;

	if (s->json) {
		json_array_append_new(s->by_fate[fate], json_pack("{s:s, s:s}", "container",
								  container, "session", session));
		return;
	}
	if (fate != REAP_KEPT)
		printf("%s %.12s %s\n", reap_fate_name(fate), container, session[0] ? session : "-");
}

static int
reap_print(const struct reap_report *r, struct reap_seen *s)
{
	json_t *out;
	int rc;

	if (!s->json) {
		printf("reap: %zu airlock containers, %zu reaped, %zu kept (owner alive), %zu failed\n",
		       r->found, r->reaped, r->kept, r->failed);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
	}
	out = json_pack("{s:I, s:I, s:I, s:I, s:O, s:O, s:O}", "found", (json_int_t)r->found,
			"reaped", (json_int_t)r->reaped, "kept", (json_int_t)r->kept,
			"failed", (json_int_t)r->failed, "reaped_containers",
			s->by_fate[REAP_REAPED], "kept_containers", s->by_fate[REAP_KEPT],
			"failed_containers", s->by_fate[REAP_FAILED]);
	rc = cli_print_json(out);
	json_decref(out);
	return rc;
}

static void
reap_seen_free(struct reap_seen *s)
{
	for (size_t i = 0; i < 3; i++)
		json_decref(s->by_fate[i]);
}

int
cmd_reap(int argc, char **argv)
{
	struct reap_seen seen = { 0 };
	struct reap_report r;
	struct docker *d;
	struct cli_opts o;
	struct al_err err;
	int rc = cli_parse("reap", argc, argv, &o);

	if (rc >= 0)
		return rc;
	seen.json = o.json;
	for (size_t i = 0; i < 3; i++)
		seen.by_fate[i] = json_array();
	d = preflight_connect(getenv("DOCKER_HOST"), &err);
	if (!d || reaper_run_seen(d, &r, reap_seen, &seen, &err) < 0) {
		docker_close(d);
		reap_seen_free(&seen);
		return cli_fail(o.json, "reap", "%s", err.msg);
	}
	docker_close(d);
	/* A partial failure still prints the counts; the cause goes to stderr. */
	if (r.failed)
		fprintf(stderr, "airlock reap: %s\n", err.msg);
	rc = reap_print(&r, &seen);
	reap_seen_free(&seen);
	if (rc != EXIT_OK)
		return rc;
	return r.failed ? EXIT_REFUSED : EXIT_OK;
}
