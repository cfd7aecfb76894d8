#include "doctor.h"

#include <string.h>

#include "docker.h"
#include "preflight.h"

static void
daemon_checks(struct doctor_report *r, const char *runtime)
{
	struct al_err err;
	json_t *version = NULL, *info = NULL;
	struct docker *d = docker_open(r->socket, DOCKER_TIMEOUT_MS, &err);

	if (!d || docker_ping(d, &err) < 0) {
		check_add(&r->checks, host_check_id(HOST_CHECK_DAEMON_PING), false, "answers",
			  err.msg);
		preflight_not_run(&r->checks, HOST_STAGE_INFO);
		docker_close(d);
		return;
	}
	check_add(&r->checks, host_check_id(HOST_CHECK_DAEMON_PING), true, "answers", "OK");
	if (docker_version(d, &version, &err) < 0 || docker_info(d, &info, &err) < 0) {
		check_add(&r->checks, host_check_id(HOST_CHECK_DAEMON_INFO), false,
			  "version and info", err.msg);
		preflight_not_run(&r->checks, HOST_STAGE_DAEMON);
	} else {
		check_add(&r->checks, host_check_id(HOST_CHECK_DAEMON_INFO), true,
			  "version and info", "reported");
		preflight_daemon(version, info, runtime, &r->checks, &r->facts);
	}
	json_decref(version);
	json_decref(info);
	docker_close(d);
}

bool
doctor_run_local(const char *docker_host, struct doctor_report *r)
{
	struct al_err err;

	memset(r, 0, sizeof *r);
	check_list_init(&r->checks);
	preflight_local(&r->checks);
	if (preflight_endpoint(docker_host, r->socket, sizeof r->socket, &err) < 0) {
		r->socket[0] = '\0';
		check_add(&r->checks, host_check_id(HOST_CHECK_ENDPOINT), false,
			  "a local unix socket", err.msg);
		preflight_not_run(&r->checks, HOST_STAGE_PING);
		return false;
	}
	check_add(&r->checks, host_check_id(HOST_CHECK_ENDPOINT), true, "a local unix socket",
		  r->socket);
	return true;
}

void
doctor_run_daemon(struct doctor_report *r, const char *runtime)
{
	daemon_checks(r, runtime);
}

bool
doctor_run(const char *docker_host, const char *runtime, struct doctor_report *r)
{
	if (!doctor_run_local(docker_host, r))
		return false;
	doctor_run_daemon(r, runtime);
	return check_list_passed(&r->checks);
}

void
doctor_report_free(struct doctor_report *r)
{
	check_list_free(&r->checks);
}
