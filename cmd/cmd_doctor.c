#include <stdlib.h>

#include "cli.h"
#include "config.h"
#include "config_check.h"
#include "docker.h"
#include "doctor.h"

static int
load_config(const char *path, struct airlock_config *c, bool json)
{
	struct al_err err;

	config_init(c);
	if (path && config_load_file(c, path, config_host_cores(), &err) < 0) {
		cli_fail(json, "doctor", "%s", err.msg);
		return -1;
	}
	return 0;
}

/* With --config: the image on this daemon, and each tool in its upstream's list. */
static void
config_checks(const struct airlock_config *c, struct doctor_report *r)
{
	struct docker *d;
	struct al_err err;

	if (!r->socket[0]) {
		check_add(&r->checks, host_check_id(HOST_CHECK_IMAGE), false, c->profile.image, "not checked: no usable endpoint");
	} else if (!(d = docker_open(r->socket, DOCKER_TIMEOUT_MS, &err)) ||
		   config_check_image(d, &c->profile, &err) < 0) {
		check_add(&r->checks, host_check_id(HOST_CHECK_IMAGE), false, c->profile.image, err.msg);
		docker_close(d);
	} else {
		check_add(&r->checks, host_check_id(HOST_CHECK_IMAGE), true, c->profile.image, "on this host");
		docker_close(d);
	}
	config_check_catalog(c, &r->checks);
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
	struct airlock_config c;
	struct cli_opts o;
	struct doctor_report r;
	int rc = cli_parse("doctor", argc, argv, &o);
	bool ok;

	if (rc >= 0)
		return rc;
	if (load_config(o.config, &c, o.json) < 0) {
		config_free(&c);
		return EXIT_ERROR;
	}
	doctor_run(getenv("DOCKER_HOST"), c.profile.runtime, &r);
	doctor_probe_clone3(&r, c.profile.runtime);
	if (o.config)
		config_checks(&c, &r);
	ok = check_list_passed(&r.checks);
	if (o.json)
		rc = print_json(&r, ok);
	else
		cli_print_checks(stdout, &r.checks, "FAIL");
	doctor_report_free(&r);
	config_free(&c);
	if (rc == EXIT_ERROR)
		return rc;
	return ok ? EXIT_OK : EXIT_REFUSED;
}
