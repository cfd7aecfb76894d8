#include "container.h"
#include "weaken.h"

#include <string.h>
#include <unistd.h>

void
container_init(struct container *c, struct docker *d, const char *socket_path)
{
	memset(c, 0, sizeof *c);
	c->docker = d;
	c->socket_path = socket_path;
	c->exit_code = -1;
	check_list_init(&c->first);
	check_list_init(&c->second);
}

int
container_admit(struct docker *d, const char *id, const struct profile *p,
		const struct host_facts *host, struct check_list *report,
		struct al_err *err)
{
	json_t *inspect = NULL, *image = NULL;
	const char *image_id;
	const struct check_item *bad;
	bool admitted;

	if (docker_inspect(d, id, &inspect, err) < 0)
		return al_wrap(err, "admission");
	image_id = json_string_value(json_object_get(inspect, "Image"));
	/* A missing image leaves image NULL: the checker refuses, never crashes. */
	if (image_id && profile_image_id_valid(image_id))
		docker_image_inspect(d, image_id, &image, err);
	admitted = admission_check(inspect, image, p, host, report);
	json_decref(inspect);
	json_decref(image);
	if (admitted || weaken_admission_bypassed())
		return 0;
	bad = check_list_first_failure(report);
	return al_fail(err, "admission refused: %s (observed %s, expected %s)",
		       bad ? bad->id : "report", bad ? bad->observed : "incomplete",
		       bad ? bad->expected : "complete");
}

int
container_create_admit(struct container *c, const struct profile *p,
		       const struct owner_labels *who, const struct host_facts *host,
		       struct al_err *err)
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
	return container_admit(c->docker, c->id, p, host, &c->first, err);
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
	check_list_free(&c->second);
	return container_admit(c->docker, c->id, p, host, &c->second, err);
}

int
container_wait_exit(struct container *c, int timeout_ms, long *code, struct al_err *err)
{
	int waited;

	for (waited = 0;; waited += 20) {
		json_t *inspect = NULL, *state;
		bool running;

		if (docker_inspect(c->docker, c->id, &inspect, err) < 0)
			return -1;
		state = json_object_get(inspect, "State");
		running = !json_is_false(json_object_get(state, "Running"));
		*code = (long)json_integer_value(json_object_get(state, "ExitCode"));
		c->oom_killed = json_is_true(json_object_get(state, "OOMKilled"));
		json_decref(inspect);
		if (!running)
			return 0;
		if (waited >= timeout_ms)
			return 1;
		usleep(20 * 1000);
	}
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

/* Re-list by our label and look for this container's ID. */
static int
verify_gone(struct container *c, struct al_err *err)
{
	json_t *list = NULL, *item;
	size_t i;
	int rc = 0;

	if (docker_list_by_label(c->docker, LABEL_MANAGED "=1", &list, err) < 0)
		return al_wrap(err, "re-list after remove");
	json_array_foreach(list, i, item) {
		const char *id = json_string_value(json_object_get(item, "Id"));

		if (id && strcmp(id, c->id) == 0)
			rc = al_fail(err, "container %.12s still listed after remove", c->id);
	}
	json_decref(list);
	return rc;
}

static void
close_stream(struct container *c)
{
	if (c->attach)
		docker_attach_close(c->attach);
	c->attach = NULL;
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
	 */
	if (docker_stop(c->docker, c->id, 0, &stop_err) < 0)
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

void
container_free(struct container *c)
{
	close_stream(c);
	check_list_free(&c->first);
	check_list_free(&c->second);
}
