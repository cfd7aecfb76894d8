#include "container.h"
#include "weaken.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "sealed.h"
#include "sealed_image.h"

struct container {
	struct docker *docker;		/* borrowed; used by one thread */
	const char *socket_path;	/* borrowed; attach opens its own connection */
	char name[PROFILE_NAME_MAX];
	char id[DOCKER_ID_MAX];
	struct docker_attach *attach;
	struct check_list first, second;	/* the two admission reports */
	/*
	 * The image document of the first admission, for the second: an image
	 * ID is the hash of its config, so the same ID cannot read differently.
	 */
	json_t *image;
	struct sealed_verdict sealed;	/* profile.sealed, judged once per container */
	bool sealed_judged;
	struct admission_process start;	/* recorded right after the start, or pid 0 */
	bool created, started, removed;
	bool exited;			/* the daemon's wait reported its exit */
	/* Evidence read at cleanup. */
	long exit_code;
	bool oom_killed;
};

struct container *
container_new(struct docker *d, const char *socket_path)
{
	struct container *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->docker = d;
	c->socket_path = socket_path;
	c->exit_code = -1;
	check_list_init(&c->first);
	check_list_init(&c->second);
	return c;
}

static void
close_stream(struct container *c)
{
	if (c->attach)
		docker_attach_close(c->attach);
	c->attach = NULL;
}

void
container_free(struct container *c)
{
	if (!c)
		return;
	close_stream(c);
	check_list_free(&c->first);
	check_list_free(&c->second);
	json_decref(c->image);
	free(c);
}

/*
 * The verdict on the image's files (profile.sealed, and /airlock/shim for
 * MCP sessions) for this container: judged on the first admission, kept
 * for the second (a container's image and user cannot change).
 */
static const struct sealed_verdict *
sealed_for(struct docker *d, const json_t *inspect, const struct profile *p,
	   struct sealed_verdict *cache, bool *judged)
{
	if (p->sealed.n == 0 && !p->shim_required)
		return NULL;
	if (!*judged)
		sealed_image_judge(docker_socket_path(d), inspect, &p->sealed, p->shim_required,
				   cache);
	*judged = true;
	return cache;
}

/*
 * The image document for IMAGE_ID: the one in *kept when it has that ID,
 * else read from the daemon and kept. A missing image leaves NULL: the
 * checker refuses, never crashes.
 */
static const json_t *
image_for(struct docker *d, const char *image_id, json_t **kept, struct al_err *err)
{
	const char *had = json_string_value(json_object_get(*kept, "Id"));

	if (!image_id || !profile_image_id_valid(image_id))
		return NULL;
	if (had && strcmp(had, image_id) == 0)
		return *kept;
	json_decref(*kept);
	*kept = NULL;
	docker_image_inspect(d, image_id, kept, err);
	return *kept;
}

/* What one admission reads, judges against and reports into. */
struct admit_job {
	const struct profile *p;
	const struct host_facts *host;
	const struct admission_state *state;	/* NULL: not an admission (container_admit) */
	json_t **image;
	struct sealed_verdict *cache;
	bool *judged;
	struct check_list *report;
};

static int
admit(struct docker *d, const char *id, const struct admit_job *j, struct al_err *err)
{
	json_t *inspect = NULL;
	const struct sealed_verdict *sealed;
	const char *image_id;
	const struct check_item *bad;
	bool admitted;

	if (docker_inspect(d, id, &inspect, err) < 0)
		return al_wrap(err, "admission");
	image_id = json_string_value(json_object_get(inspect, "Image"));
	sealed = sealed_for(d, inspect, j->p, j->cache, j->judged);
	admitted = admission_check_state(inspect, image_for(d, image_id, j->image, err), j->p,
					 j->host, sealed, j->state, j->report);
	json_decref(inspect);
	if (admitted || weaken_admission_bypassed())
		return 0;
	bad = check_list_first_failure(j->report);
	return al_fail(err, "admission refused: %s (observed %s, expected %s)",
		       bad ? bad->id : "report", bad ? bad->observed : "incomplete",
		       bad ? bad->expected : "complete");
}

int
container_admit(struct docker *d, const char *id, const struct profile *p,
		const struct host_facts *host, struct check_list *report,
		struct al_err *err)
{
	struct sealed_verdict cache;
	bool judged = false;
	json_t *image = NULL;
	const struct admit_job j = { .p = p, .host = host, .image = &image, .cache = &cache,
				     .judged = &judged, .report = report };
	int rc = admit(d, id, &j, err);

	json_decref(image);
	return rc;
}

int
container_create(struct container *c, const struct profile *p,
		 const struct owner_labels *who, struct al_err *err)
{
	json_t *body;
	int rc;

	if (!profile_image_id_valid(p->image))
		return al_fail(err, "profile has no immutable image ID");
	if (profile_container_name(c->name, err) < 0)
		return -1;
	body = profile_create_body(p, who);
	if (!body)
		return al_fail(err, "out of memory rendering the create body");
	weaken_create_body(body);
	rc = docker_create(c->docker, c->name, body, c->id, err);
	json_decref(body);
	if (rc < 0)
		return al_wrap(err, "create");
	c->created = true;
	return 0;
}

int
container_admit_first(struct container *c, const struct profile *p,
		      const struct host_facts *host, struct al_err *err)
{
	const struct admission_state created = { .phase = ADMISSION_PHASE_CREATED };
	const struct admit_job j = { .p = p, .host = host, .state = &created, .image = &c->image,
				     .cache = &c->sealed, .judged = &c->sealed_judged,
				     .report = &c->first };

	if (!c->created)
		return al_fail(err, "admission: no container");
	return admit(c->docker, c->id, &j, err);
}

int
container_create_admit(struct container *c, const struct profile *p,
		       const struct owner_labels *who, const struct host_facts *host,
		       struct al_err *err)
{
	if (container_create(c, p, who, err) < 0)
		return -1;
	return container_admit_first(c, p, host, err);
}

int
container_attach_start(struct container *c, struct al_err *err)
{
	if (!c->created)
		return al_fail(err, "attach: no container");
	if (docker_attach_open(c->socket_path, c->id, DOCKER_TIMEOUT_MS, &c->attach, err) < 0)
		return al_wrap(err, "attach");
	if (docker_start(c->docker, c->id, err) < 0)
		return al_wrap(err, "start");
	c->started = true;
	return 0;
}

int
container_readmit(struct container *c, const struct profile *p,
		  const struct host_facts *host, struct al_err *err)
{
	const struct admission_state started = { .phase = ADMISSION_PHASE_STARTED,
						 .start = c->start };
	const struct admit_job j = { .p = p, .host = host, .state = &started, .image = &c->image,
				     .cache = &c->sealed, .judged = &c->sealed_judged,
				     .report = &c->second };

	check_list_free(&c->second);
	return admit(c->docker, c->id, &j, err);
}

int
container_record_start(struct container *c, struct al_err *err)
{
	json_t *inspect = NULL;
	int rc;

	if (!c->started)
		return al_fail(err, "record the start: not started");
	if (docker_inspect(c->docker, c->id, &inspect, err) < 0)
		return al_wrap(err, "record the start");
	rc = admission_process_read(inspect, &c->start);
	json_decref(inspect);
	if (rc < 0)
		return al_fail(err, "record the start: no running process");
	return 0;
}

static void
read_evidence(struct container *c)
{
	struct al_err err;
	json_t *inspect = NULL, *state;

	if (docker_inspect(c->docker, c->id, &inspect, &err) < 0)
		return;
	state = json_object_get(inspect, "State");
	if (json_is_integer(json_object_get(state, "ExitCode")))
		c->exit_code = (long)json_integer_value(json_object_get(state, "ExitCode"));
	c->oom_killed = json_is_true(json_object_get(state, "OOMKilled"));
	json_decref(inspect);
}

int
container_wait_exit(struct container *c, int timeout_ms, long *code, struct al_err *err)
{
	bool timed_out = false;

	if (docker_wait_for(c->docker, c->id, timeout_ms, code, &timed_out, err) < 0)
		return timed_out ? 1 : -1;
	c->exited = true;
	/* An abnormal exit: OOMKilled tells the memory limit from the agent's own status. */
	if (*code != 0)
		read_evidence(c);
	return 0;
}


/* One request proves the removal: the daemon no longer knows the ID. */
static int
verify_gone(struct container *c, struct al_err *err)
{
	bool gone = false;

	if (docker_gone(c->docker, c->id, &gone, err) < 0)
		return al_wrap(err, "look-up after remove");
	if (!gone)
		return al_fail(err, "container %.12s still present after remove", c->id);
	return 0;
}

int
container_cleanup(struct container *c, struct al_err *err)
{
	struct al_err stop_err;

	if (!c->created || c->removed) {
		close_stream(c);
		return 0;
	}
	/*
	 * Stop first, even if the stream already died: the process may still
	 * run, and closing the stream first would hand it a stdin EOF to act on.
	 * A container the daemon already reported exited (wait) cannot run
	 * again (restart policy "no"), so it needs no stop.
	 */
	if (!c->exited && docker_stop(c->docker, c->id, 0, &stop_err) < 0)
		docker_kill(c->docker, c->id, "KILL", &stop_err);
	close_stream(c);
	read_evidence(c);
	if (weaken_keep_stopped())
		return 0;
	if (docker_remove(c->docker, c->id, true, err) < 0)
		return al_wrap(err, "remove");
	if (verify_gone(c, err) < 0)
		return -1;
	c->removed = true;
	return 0;
}

const char *
container_id(const struct container *c)
{
	return c->id;
}

struct docker_attach *
container_stream(const struct container *c)
{
	return c->attach;
}

const struct check_list *
container_report(const struct container *c, int phase)
{
	return phase == 1 ? &c->first : &c->second;
}

void
container_reports_drop(struct container *c)
{
	check_list_free(&c->first);
	check_list_free(&c->second);
}

bool
container_is(const struct container *c, enum container_fact f)
{
	if (!c)
		return false;
	switch (f) {
	case CONTAINER_CREATED:
		return c->created;
	case CONTAINER_STARTED:
		return c->started;
	case CONTAINER_EXITED:
		return c->exited;
	case CONTAINER_REMOVED:
		return c->removed;
	case CONTAINER_OOM_KILLED:
		return c->oom_killed;
	}
	return false;
}

long
container_exit_code(const struct container *c)
{
	return c ? c->exit_code : -1;
}
