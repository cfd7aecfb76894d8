#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admission.h"
#include "canon.h"
#include "cli.h"
#include "clock.h"
#include "config.h"
#include "control.h"
#include "control_server.h"
#include "docker.h"
#include "frame.h"
#include "mcp_confine.h"
#include "preflight.h"
#include "profile.h"
#include "sealed_image.h"
#include "shim_image.h"

#define ENGINE_TIMEOUT_MS	5000	/* the session's engine: its hello, then the detail */

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

/* ---- the session's engine: its upstreams' confinement (the console's detail) ---- */

/* The next JSON object from fd by deadline, made printable; NULL at EOF, timeout or garbage. */
static json_t *
engine_frame(int fd, struct linebuf *in, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	const char *line;
	char buf[16384];
	size_t len;
	ssize_t n;
	int64_t left;

	while (linebuf_next(in, &line, &len) != 1) {
		left = deadline - clock_mono_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		n = recv(fd, buf, sizeof buf, 0);
		if (n <= 0 || linebuf_append(in, buf, (size_t)n) < 0)
			return NULL;
	}
	return canon_printable_load(line, len);
}

static int
engine_ask(int fd, const char *session, struct al_err *err)
{
	struct control_request req;
	json_t *j;
	char *line = NULL;
	size_t n = 0;
	int rc;

	control_request_init(&req, CONTROL_OP_DETAIL);
	req.id = 1;
	if (control_request_str(&req, CONTROL_K_SESSION, session) < 0)
		return al_fail(err, "session %.64s: %s", session, CONTROL_E_ARG);
	j = control_request_json(&req);
	line = j ? control_line(j, CONTROL_LINE_MAX + 1, &n) : NULL;
	json_decref(j);
	rc = line && send(fd, line, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
	free(line);
	return rc < 0 ? al_fail(err, "the engine did not take the request") : 0;
}

/* The reply to request 1 (pushed frames before it skipped); NULL when none came. */
static json_t *
engine_answer(int fd, struct linebuf *in, int64_t deadline)
{
	json_t *f;

	while ((f = engine_frame(fd, in, deadline))) {
		if (json_integer_value(json_object_get(f, "id")) == 1 && json_object_get(f, "ok"))
			return f;
		json_decref(f);
	}
	return NULL;
}

/* The hello, then the detail's reply. */
static int
engine_reply(int fd, struct session_detail *d, struct al_err *err)
{
	int64_t deadline = clock_mono_ms() + ENGINE_TIMEOUT_MS;
	struct linebuf in;
	json_t *f;
	int rc = -1;

	if (linebuf_init(&in, CONTROL_FRAME_MAX, 2 * (size_t)CONTROL_FRAME_MAX) < 0)
		return al_fail(err, "out of memory");
	f = engine_frame(fd, &in, deadline);	/* the hello */
	if (f && json_is_false(json_object_get(f, "ok"))) {
		al_fail(err, "the engine refused this connection: %.64s",
			json_string_value(json_object_get(f, "error")) ?: "?");
	} else if (f) {
		json_decref(f);
		f = engine_answer(fd, &in, deadline);
		if (f && json_is_true(json_object_get(f, "ok")) &&
		    control_detail_from_json(json_object_get(f, "detail"), d) == 0)
			rc = 0;
		else if (f)
			al_fail(err, "the engine has no such session");
	}
	if (!f)
		al_fail(err, "the engine did not answer");
	json_decref(f);
	linebuf_free(&in);
	return rc;
}

/* The container's session, asked of the engine at socket (NULL: serve's default). */
static int
engine_detail(const char *socket, const char *session, struct session_detail *d,
	      struct al_err *err)
{
	char path[PATH_MAX];
	int fd, rc;

	err->msg[0] = '\0';
	if (socket)
		snprintf(path, sizeof path, "%s", socket);
	else
		control_socket_dial(path, sizeof path);
	fd = control_connect(path, err);
	if (fd < 0)
		return -1;
	rc = engine_ask(fd, session, err) < 0 ? -1 : engine_reply(fd, d, err);
	close(fd);
	return rc;
}

/* The io.airlock.session label, or NULL (not one of ours). */
static const char *
session_of(const json_t *container)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(container, "Config"), "Labels"), LABEL_SESSION));
}

struct upstreams {
	const char *session;
	bool have;
	struct session_detail *d;
	struct al_err err;		/* why not, when !have */
};

static void
upstreams_fetch(const struct inspect_job *j, const char *socket, struct upstreams *u)
{
	u->session = session_of(j->container);
	u->have = false;
	u->d = calloc(1, sizeof *u->d);
	if (!u->session)
		al_fail(&u->err, "not an airlock session's container (no %s label)", LABEL_SESSION);
	else if (!u->d)
		al_fail(&u->err, "out of memory");
	else if (engine_detail(socket, u->session, u->d, &u->err) == 0)
		u->have = true;
}

static void
upstreams_print(const struct upstreams *u)
{
	char line[512];
	size_t i;

	if (!u->have) {
		printf("\nupstreams: not shown: %s\n", u->err.msg);
		return;
	}
	printf("\nupstreams of session %s:%s\n", u->session, u->d->n_upstreams ? "" : " none");
	for (i = 0; i < u->d->n_upstreams; i++)
		printf("  %-16s %s\n", u->d->upstreams[i].name,
		       mcp_confine_text(&u->d->upstreams[i], line, sizeof line));
}

static json_t *
upstreams_json(const struct upstreams *u)
{
	json_t *arr;
	size_t i;

	if (!u->have)
		return json_pack("{s:s}", "error", u->err.msg);
	arr = json_array();
	for (i = 0; arr && i < u->d->n_upstreams; i++)
		json_array_append_new(arr, control_upstream_json(&u->d->upstreams[i]));
	return json_pack("{s:s, s:o}", "session", u->session, "upstreams", arr);
}

static int
report(const struct inspect_job *j, const struct check_list *l, bool admitted, bool json,
       const struct upstreams *u)
{
	const char *id = json_string_value(json_object_get(j->container, "Id"));
	json_t *out;
	int rc;

	if (!json) {
		printf("container %.12s: %s\n", id ? id : "?",
		       admitted ? "admitted" : "REFUSED");
		cli_print_checks(stdout, l, "REFUSE");
		upstreams_print(u);
		return EXIT_OK;
	}
	out = json_pack("{s:s?, s:b, s:o, s:o}", "container", id, "admitted", admitted,
			"report", check_list_to_json(l, "refuse"), "engine", upstreams_json(u));
	rc = cli_print_json(out);
	json_decref(out);
	return rc;
}

int
cmd_inspect(int argc, char **argv)
{
	struct inspect_job j = { 0 };
	struct upstreams ups = { 0 };
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
	upstreams_fetch(&j, o.n[OPT_SOCKET] ? o.values[OPT_SOCKET][0] : NULL, &ups);
	rc = report(&j, &l, admitted, o.json, &ups);
	free(ups.d);
	check_list_free(&l);
	job_close(&j);
	if (rc != EXIT_OK)
		return rc;
	return admitted ? EXIT_OK : EXIT_REFUSED;
}
