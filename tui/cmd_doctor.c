#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "doctor.h"

static int
load_runtime(const char *path, char *runtime, size_t cap)
{
	struct airlock_config c;
	struct al_err err;

	config_init(&c);
	if (path && config_load_file(&c, path, config_host_cores(), &err) < 0) {
		fprintf(stderr, "airlock: %s\n", err.msg);
		config_free(&c);
		return -1;
	}
	snprintf(runtime, cap, "%s", c.profile.runtime);
	config_free(&c);
	return 0;
}

/* Each check as check_list_to_json has it, with its help text from the table. */
static json_t *
checks_json(const struct check_list *l)
{
	json_t *arr = check_list_to_json(l, "fail"), *item;
	size_t i;

	json_array_foreach(arr, i, item) {
		enum host_check c = host_check_by_id(l->items[i].id);

		json_object_set_new(item, "help", json_string(host_check_help(c)));
	}
	return arr;
}

static int
print_json(const struct doctor_report *r, bool ok)
{
	json_t *out = json_pack("{s:b, s:s, s:o}", "ok", ok, "endpoint", r->socket,
				"checks", checks_json(&r->checks));
	int rc = cli_print_json(out);

	json_decref(out);
	return rc;
}

int
cmd_doctor(int argc, char **argv)
{
	struct cli_opts o;
	struct doctor_report r;
	char runtime[16];
	int rc = cli_parse(argc, argv, "doctor [--json] [--config FILE]", 0, &o);
	bool ok;

	if (rc >= 0)
		return rc;
	if (load_runtime(o.config, runtime, sizeof runtime) < 0)
		return EXIT_ERROR;
	ok = doctor_run(getenv("DOCKER_HOST"), runtime, &r);
	if (o.json)
		rc = print_json(&r, ok);
	else
		cli_print_checks(stdout, &r.checks, "FAIL");
	doctor_report_free(&r);
	if (rc == EXIT_ERROR)
		return rc;
	return ok ? EXIT_OK : EXIT_REFUSED;
}
