#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission.h"
#include "cli.h"
#include "config.h"
#include "docker.h"
#include "preflight.h"
#include "sealed_image.h"
#include "shim_image.h"

struct inspect_job {
	struct docker *docker;
	struct airlock_config config;
	struct host_facts facts;
	json_t *container, *image;
};

static int
job_open(struct inspect_job *j, const char *config_path, struct al_err *err)
{

	config_init(&j->config);
	if (config_path && config_load_file(&j->config, config_path, config_host_cores(), err) < 0)
		return -1;
	j->docker = preflight_connect(getenv("DOCKER_HOST"), err);
	return j->docker ? 0 : -1;
}

/* Runtimes and cores come from the daemon, as a session would see them. */
static int
job_facts(struct inspect_job *j, struct al_err *err)
{
	struct check_list scratch;
	json_t *version = NULL, *info = NULL;

	if (docker_version(j->docker, &version, err) < 0 ||
	    docker_info(j->docker, &info, err) < 0) {
		json_decref(version);
		return -1;
	}
	check_list_init(&scratch);
	preflight_daemon(version, info, j->config.profile.runtime, &scratch, &j->facts);
	check_list_free(&scratch);
	json_decref(version);
	json_decref(info);
	return 0;
}

static int
job_fetch(struct inspect_job *j, const char *container, struct al_err *err)
{
	const char *image;

	if (docker_inspect(j->docker, container, &j->container, err) < 0)
		return -1;
	image = json_string_value(json_object_get(j->container, "Image"));
	if (!image)
		return al_fail(err, "container %.64s: inspect has no Image", container);
	return docker_image_inspect(j->docker, image, &j->image, err);
}

static void
job_close(struct inspect_job *j)
{
	json_decref(j->container);
	json_decref(j->image);
	docker_close(j->docker);
	config_free(&j->config);
}

static int
report(const struct inspect_job *j, const struct check_list *l, bool admitted, bool json)
{
	const char *id = json_string_value(json_object_get(j->container, "Id"));
	json_t *out;
	int rc;

	if (!json) {
		printf("container %.12s: %s\n", id ? id : "?",
		       admitted ? "admitted" : "REFUSED");
		cli_print_checks(stdout, l, "REFUSE");
		return EXIT_OK;
	}
	out = json_pack("{s:s?, s:b, s:o}", "container", id, "admitted", admitted,
			"report", check_list_to_json(l, "refuse"));
	rc = cli_print_json(out);
	json_decref(out);
	return rc;
}

int
cmd_inspect(int argc, char **argv)
{
	struct inspect_job j = { 0 };
	struct sealed_verdict sealed;
	struct check_list l;
	struct cli_opts o;
	struct al_err err;
	bool admitted, files;
	int rc = cli_parse("inspect", argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.n_positional != 1)
		return cli_usage_error("inspect", "a container name or ID is required");
	if (job_open(&j, o.config, &err) < 0 || job_facts(&j, &err) < 0 ||
	    job_fetch(&j, o.positional[0], &err) < 0) {
		job_close(&j);
		return cli_fail(o.json, "inspect", "%s", err.msg);
	}
	check_list_init(&l);
	/* An MCP profile: /airlock/shim against this engine's shim (shim_digest). */
	if (j.config.profile.shim_required &&
	    shim_image_engine_digest(NULL, j.config.profile.shim_sha256, &err) < 0)
		j.config.profile.shim_sha256[0] = '\0';
	files = j.config.profile.sealed.n > 0 || j.config.profile.shim_required;
	if (files)
		sealed_image_judge(docker_socket_path(j.docker), j.container,
				   &j.config.profile.sealed, j.config.profile.shim_required, &sealed);
	admitted = admission_check_files(j.container, j.image, &j.config.profile, &j.facts,
					 files ? &sealed : NULL, &l);
	rc = report(&j, &l, admitted, o.json);
	check_list_free(&l);
	job_close(&j);
	if (rc != EXIT_OK)
		return rc;
	return admitted ? EXIT_OK : EXIT_REFUSED;
}
