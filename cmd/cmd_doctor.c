#include <stdlib.h>

#include <stdio.h>

#include "cli.h"
#include "config.h"
#include "config_check.h"
#include "control.h"
#include "docker.h"
#include "doctor.h"
#include "mcp_confine.h"

static int
load_config(const char *path, const char *upstreams_dir, struct airlock_config *c, bool json)
{
	struct al_err err;

	config_init(c);
	c->upstreams_dir = upstreams_dir;
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

/* Each upstream's view, as a session's detail has it over the control socket. */
static json_t *
upstreams_json(const struct doctor_report *r)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < r->n_upstreams; i++)
		json_array_append_new(arr, control_upstream_json(&r->upstreams[i]));
	return arr;
}

static int
print_json(const struct doctor_report *r, bool ok)
{
	json_t *out = json_pack("{s:b, s:s, s:o, s:o}", "ok", ok, "endpoint", r->socket,
				"checks", checks_json(&r->checks), "upstreams", upstreams_json(r));
	int rc = cli_print_json(out);

	json_decref(out);
	return rc;
}

/* After the checks: what each upstream gets here, its opt-ins marked loud. */
static void
print_upstreams(const struct doctor_report *r)
{
	char line[512];
	size_t i;

	if (r->n_upstreams == 0)
		return;
	printf("\nupstream confinement on this host (prepared as a spawn would; nothing started):\n");
	for (i = 0; i < r->n_upstreams; i++)
		printf("  %-16s %s\n", r->upstreams[i].name,
		       mcp_confine_text(&r->upstreams[i], line, sizeof line));
}

int
cmd_doctor(int argc, char **argv)
{
	struct airlock_config c;
	struct cli_opts o;
	struct doctor_report r;
	const char *dir;
	int rc = cli_parse("doctor", argc, argv, &o);
	bool ok;

	if (rc >= 0)
		return rc;
	dir = o.n[OPT_UPSTREAMS_DIR] ? o.values[OPT_UPSTREAMS_DIR][0] : NULL;
	if (load_config(o.config, dir, &c, o.json) < 0) {
		config_free(&c);
		return EXIT_ERROR;
	}
	doctor_run(getenv("DOCKER_HOST"), c.profile.runtime, &r);
	doctor_probe_clone3(&r, c.profile.runtime);
	doctor_confine_host(&r, o.config ? &c : NULL, NULL);
	doctor_installed(&r, dir);
	if (o.config) {
		config_checks(&c, &r);
		doctor_confine_upstreams(&r, &c);
	}
	ok = check_list_passed(&r.checks);
	if (o.json)
		rc = print_json(&r, ok);
	else {
		cli_print_checks(stdout, &r.checks, "FAIL");
		print_upstreams(&r);
	}
	doctor_report_free(&r);
	config_free(&c);
	if (rc == EXIT_ERROR)
		return rc;
	return ok ? EXIT_OK : EXIT_REFUSED;
}
