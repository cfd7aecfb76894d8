#include <stdlib.h>

#include "cli.h"
#include "docker.h"
#include "preflight.h"
#include "reaper.h"

static int
reap_print(const struct reap_report *r, bool json)
{
	json_t *out;
	int rc;

	if (!json) {
		printf("reap: %zu airlock containers, %zu reaped, %zu kept (owner alive), %zu failed\n",
		       r->found, r->reaped, r->kept, r->failed);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
	}
	out = json_pack("{s:I, s:I, s:I, s:I}", "found", (json_int_t)r->found,
			"reaped", (json_int_t)r->reaped, "kept", (json_int_t)r->kept,
			"failed", (json_int_t)r->failed);
	rc = cli_print_json(out);
	json_decref(out);
	return rc;
}

int
cmd_reap(int argc, char **argv)
{
	struct reap_report r;
	struct docker *d;
	struct cli_opts o;
	struct al_err err;
	int rc = cli_parse("reap", argc, argv, &o);

	if (rc >= 0)
		return rc;
	d = preflight_connect(getenv("DOCKER_HOST"), &err);
	if (!d || reaper_run(d, &r, &err) < 0) {
		docker_close(d);
		return cli_fail(o.json, "reap", "%s", err.msg);
	}
	docker_close(d);
	/* A partial failure still prints the counts; the cause goes to stderr. */
	if (r.failed)
		fprintf(stderr, "airlock reap: %s\n", err.msg);
	rc = reap_print(&r, o.json);
	if (rc != EXIT_OK)
		return rc;
	return r.failed ? EXIT_REFUSED : EXIT_OK;
}
