#include "docker.h"
#include "docker_int.h"
#include "clock.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

/* "/containers/<id><tail>" for a checked id. */
static int
docker_container_path(char *path, size_t size, const char *id, const char *tail,
		      struct al_err *err)
{
	int n;

	if (!docker_name_valid(id))
		return al_fail(err, "docker: invalid container id or name");
	n = snprintf(path, size, "/containers/%s%s", id, tail);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: container path too long");
	return 0;
}

static bool
docker_hex_id(const char *s)
{
	return docker_hex_prefix(s) && s[DOCKER_ID_MAX - 1] == '\0';
}

int
docker_create(struct docker *d, const char *name, const json_t *body,
	      char id[DOCKER_ID_MAX], struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32] = "/containers/create";
	json_t *reply = NULL;
	const char *got;
	int rc = -1;

	id[0] = '\0';
	if (!body)
		return al_fail(err, "docker: create: no body");
	if (name && !docker_name_valid(name))
		return al_fail(err, "docker: create: invalid container name");
	if (name)
		snprintf(path, sizeof path, "/containers/create?name=%s", name);
	if (docker_request(d, "POST", path, body, NULL, &reply, err) < 0)
		return -1;
	got = json_string_value(json_object_get(reply, "Id"));
	if (docker_hex_id(got)) {
		memcpy(id, got, DOCKER_ID_MAX);
		rc = 0;
	} else {
		al_fail(err, "docker: POST /containers/create: answer has no valid Id");
	}
	json_decref(reply);
	return rc;
}

int
docker_inspect(struct docker *d, const char *id, json_t **out, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];

	*out = NULL;
	if (docker_container_path(path, sizeof path, id, "/json", err) < 0)
		return -1;
	return docker_get_object(d, path, out, err);
}

int
docker_start(struct docker *d, const char *id, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];

	if (docker_container_path(path, sizeof path, id, "/start", err) < 0)
		return -1;
	return docker_request(d, "POST", path, NULL, NULL, NULL, err);
}

static int
docker_wait_result(const json_t *reply, long *exit_code, struct al_err *err)
{
	const json_t *code = json_object_get(reply, "StatusCode");
	const char *msg = json_string_value(json_object_get(json_object_get(reply, "Error"), "Message"));
	char text[DOCKER_MESSAGE_MAX + 1];

	if (msg && msg[0]) {
		docker_printable(msg, text, sizeof text);
		return al_fail(err, "docker: wait: %s", text);
	}
	if (!json_is_integer(code))
		return al_fail(err, "docker: wait: answer has no StatusCode");
	*exit_code = (long)json_integer_value(code);
	return 0;
}

int
docker_wait_for(struct docker *d, const char *id, long timeout_ms, long *exit_code,
		bool *timed_out, struct al_err *err)
{
	struct docker_call c = { "POST", NULL, NULL, 0, timeout_ms, DOCKER_REPLY_MAX, NULL };
	char path[DOCKER_NAME_MAX + 64];
	json_t *reply = NULL;
	int64_t t0 = clock_mono_ms();
	int rc;

	*exit_code = -1;
	*timed_out = false;
	if (docker_container_path(path, sizeof path, id, "/wait?condition=not-running", err) < 0)
		return -1;
	c.path = path;
	if (docker_call_json(d, &c, NULL, &reply, err) < 0) {
		*timed_out = clock_mono_ms() - t0 >= timeout_ms;
		return -1;
	}
	rc = docker_wait_result(reply, exit_code, err);
	json_decref(reply);
	return rc;
}

int
docker_wait(struct docker *d, const char *id, long *exit_code, struct al_err *err)
{
	bool timed_out;

	return docker_wait_for(d, id, d->timeout_ms, exit_code, &timed_out, err);
}

int
docker_gone(struct docker *d, const char *id, bool *gone, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];
	long status = 0;

	*gone = false;
	if (docker_container_path(path, sizeof path, id, "/json", err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, &status, NULL, err) == 0)
		return 0;
	if (status != 404)
		return -1;
	al_err_clear(err);
	*gone = true;
	return 0;
}

int
docker_stop(struct docker *d, const char *id, int t_seconds, struct al_err *err)
{
	struct docker_call c = { "POST", NULL, NULL, 0, d->timeout_ms, DOCKER_REPLY_MAX, NULL };
	char path[DOCKER_NAME_MAX + 64], tail[32];

	if (t_seconds < 0)
		t_seconds = 0;
	snprintf(tail, sizeof tail, "/stop?t=%d", t_seconds);
	if (docker_container_path(path, sizeof path, id, tail, err) < 0)
		return -1;
	/* The daemon waits t seconds before it kills; our deadline must outlast it. */
	c.path = path;
	c.timeout_ms += (long)t_seconds * 1000;
	return docker_call_json(d, &c, NULL, NULL, err);
}

static bool
docker_signal_valid(const char *s)
{
	size_t n = s ? strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") : 0;

	return n > 0 && n <= 16 && s[n] == '\0';
}

int
docker_kill(struct docker *d, const char *id, const char *signal, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 64], tail[40];

	if (!docker_signal_valid(signal))
		return al_fail(err, "docker: kill: invalid signal name");
	snprintf(tail, sizeof tail, "/kill?signal=%s", signal);
	if (docker_container_path(path, sizeof path, id, tail, err) < 0)
		return -1;
	return docker_request(d, "POST", path, NULL, NULL, NULL, err);
}

static int
docker_freezer(struct docker *d, const char *id, const char *tail, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 64];

	if (docker_container_path(path, sizeof path, id, tail, err) < 0)
		return -1;
	return docker_request(d, "POST", path, NULL, NULL, NULL, err);
}

int
docker_pause(struct docker *d, const char *id, struct al_err *err)
{
	return docker_freezer(d, id, "/pause", err);
}

int
docker_unpause(struct docker *d, const char *id, struct al_err *err)
{
	return docker_freezer(d, id, "/unpause", err);
}

int
docker_remove(struct docker *d, const char *id, bool missing_ok, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 64];
	long status;

	if (docker_container_path(path, sizeof path, id, "?force=1&v=1", err) < 0)
		return -1;
	if (docker_request(d, "DELETE", path, NULL, &status, NULL, err) == 0)
		return 0;
	if (status == 404 && missing_ok) {
		al_err_clear(err);
		return 0;
	}
	return -1;
}

int
docker_list_by_label(struct docker *d, const char *label, json_t **out, struct al_err *err)
{
	char path[DOCKER_PATH_MAX];

	*out = NULL;
	if (!label || !label[0])
		return al_fail(err, "docker: list: empty label");
	if (docker_label_path(d, "/containers/json?all=1&", label, path, sizeof path, err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, NULL, out, err) < 0)
		return -1;
	if (!json_is_array(*out)) {
		json_decref(*out);
		*out = NULL;
		return al_fail(err, "docker: GET /containers/json: answer is not a list");
	}
	return 0;
}

static int
docker_archive_path(struct docker *d, const char *id, const char *path, char *out,
		    size_t size, struct al_err *err)
{
	char *esc;
	int n;

	if (!docker_name_valid(id))
		return al_fail(err, "docker: invalid container id or name");
	if (!(esc = curl_easy_escape(d->curl, path, 0)))
		return al_fail(err, "docker: archive: out of memory");
	n = snprintf(out, size, "/containers/%s/archive?path=%s", id, esc);
	curl_free(esc);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: archive: path too long");
	return 0;
}

int
docker_archive_get(struct docker *d, const char *id, const char *path,
		   size_t max, unsigned char **buf, size_t *len,
		   struct al_err *err)
{
	struct docker_call c = { "GET", NULL, NULL, 0, d->timeout_ms, max, NULL };
	char url_path[DOCKER_PATH_MAX];
	struct docker_buf resp;
	long st;

	*buf = NULL;
	*len = 0;
	if (!path || !path[0] || max == 0)
		return al_fail(err, "docker: archive: empty path or zero limit");
	if (docker_archive_path(d, id, path, url_path, sizeof url_path, err) < 0)
		return -1;
	c.path = url_path;
	if (docker_perform(d, &c, &resp, &st, err) < 0)
		return -1;
	if (st != 200) {
		docker_status_fail(&c, st, &resp, err);
		docker_buf_free(&resp);
		return -1;
	}
	*buf = resp.data;
	*len = resp.len;
	return 0;
}
