#include "docker.h"
#include "docker_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#define DOCKER_BUILD_REPLY_MAX	(1u << 20)	/* progress lines; q=1 sends few */

#define DOCKER_REF_MAX	255

/* One part of a repository path: what docker_name_valid allows. */
static bool
docker_ref_part(const char *s, size_t n)
{
	char part[DOCKER_NAME_MAX + 1];

	if (n == 0 || n > DOCKER_NAME_MAX)
		return false;
	memcpy(part, s, n);
	part[n] = '\0';
	return docker_name_valid(part);
}

/*
 * An image id "sha256:<64 hex>", or a local reference: parts of
 * docker_name_valid separated by '/', the last with an optional ":tag"
 * (a tag's characters are a name's). No empty or dot-led part, so nothing
 * can fold into another path; no registry port, no digest.
 */
bool
docker_image_ref_valid(const char *s)
{
	const char *p, *slash, *colon;
	size_t i;

	if (!s || strlen(s) > DOCKER_REF_MAX)
		return false;
	if (strncmp(s, "sha256:", 7) == 0) {
		for (i = 7; s[i]; i++)
			if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
				return false;
		return i == 7 + 64;
	}
	for (p = s; (slash = strchr(p, '/')); p = slash + 1)
		if (!docker_ref_part(p, (size_t)(slash - p)))
			return false;
	colon = strchr(p, ':');
	if (!colon)
		return docker_ref_part(p, strlen(p));
	return docker_ref_part(p, (size_t)(colon - p)) &&
	       docker_ref_part(colon + 1, strlen(colon + 1));
}

int
docker_image_inspect(struct docker *d, const char *image, json_t **out, struct al_err *err)
{
	char path[256];

	*out = NULL;
	if (!docker_image_ref_valid(image))
		return al_fail(err, "docker: invalid image reference");
	snprintf(path, sizeof path, "/images/%s/json", image);
	return docker_get_object(d, path, out, err);
}

/* --- images: build and find by label -------------------------------------- */

/* "sha256:<64 hex>" (optionally followed by one newline) into 64 hex. */
static bool
docker_image_hex(const char *s, char id[DOCKER_ID_MAX])
{
	if (!s || strncmp(s, "sha256:", 7) != 0 || !docker_hex_prefix(s + 7))
		return false;
	if (s[7 + DOCKER_ID_MAX - 1] != '\0' && strcmp(s + 7 + DOCKER_ID_MAX - 1, "\n") != 0)
		return false;
	memcpy(id, s + 7, DOCKER_ID_MAX - 1);
	id[DOCKER_ID_MAX - 1] = '\0';
	return true;
}

/* The newest image of a /images/json list; 1 when the list is empty. */
static int
docker_newest_image(const json_t *list, char id[DOCKER_ID_MAX], struct al_err *err)
{
	json_int_t best = -1;
	const json_t *img;
	size_t i;

	json_array_foreach(list, i, img) {
		json_int_t created = json_integer_value(json_object_get(img, "Created"));
		char hex[DOCKER_ID_MAX];

		if (!docker_image_hex(json_string_value(json_object_get(img, "Id")), hex))
			return al_fail(err, "docker: GET /images/json: an entry has no valid Id");
		if (created > best) {
			best = created;
			memcpy(id, hex, DOCKER_ID_MAX);
		}
	}
	return json_array_size(list) == 0 ? 1 : 0;
}

int
docker_image_by_label(struct docker *d, const char *label, char id[DOCKER_ID_MAX],
		      struct al_err *err)
{
	char path[DOCKER_PATH_MAX];
	json_t *list = NULL;
	int rc;

	id[0] = '\0';
	if (!label || !label[0])
		return al_fail(err, "docker: images: empty label");
	if (docker_label_path(d, "/images/json?", label, path, sizeof path, err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, NULL, &list, err) < 0)
		return -1;
	if (!json_is_array(list))
		rc = al_fail(err, "docker: GET /images/json: answer is not a list");
	else
		rc = docker_newest_image(list, id, err);
	json_decref(list);
	return rc;
}

/* Label keys as Docker recommends them: lowercase, digits, '.', '-'. */
static bool
docker_label_ok(const char *key, const char *value)
{
	size_t i;

	if (!key || !key[0] || strlen(key) > DOCKER_NAME_MAX ||
	    strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789.-") != strlen(key))
		return false;
	for (i = 0; value && value[i]; i++)
		if (i >= DOCKER_NAME_MAX || value[i] < 0x20 || value[i] >= 0x7f)
			return false;
	return value != NULL;
}

/* "/build?q=1&rm=1&forcerm=1&labels=<urlencoded {key: value}>" */
static int
docker_build_path(struct docker *d, const char *key, const char *value, char *path,
		  size_t size, struct al_err *err)
{
	json_t *labels = json_pack("{s:s}", key, value);
	char *text = labels ? json_dumps(labels, JSON_COMPACT) : NULL;
	char *esc = text ? curl_easy_escape(d->curl, text, 0) : NULL;
	int n = esc ? snprintf(path, size, "/build?q=1&rm=1&forcerm=1&labels=%s", esc) : -1;

	curl_free(esc);
	free(text);
	json_decref(labels);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: build: cannot encode the label");
	return 0;
}

/*
 * One line of the build's progress stream. An error line is the daemon's
 * own text about our Dockerfile, so it may be repeated (bounded, printable).
 */
static int
docker_build_line(const char *line, size_t n, char id[DOCKER_ID_MAX], struct al_err *err)
{
	json_t *o = json_loadb(line, n, 0, NULL);
	const json_t *detail;
	const char *msg;
	char text[DOCKER_MESSAGE_MAX + 1];
	int rc = 0;

	if (!json_is_object(o)) {
		json_decref(o);
		return al_fail(err, "docker: POST /build: answer is not JSON lines");
	}
	detail = json_object_get(o, "errorDetail");
	msg = json_string_value(json_object_get(detail, "message"));
	if (!msg)
		msg = json_string_value(json_object_get(o, "error"));
	if (msg || detail) {
		docker_printable(msg ? msg : "", text, sizeof text);
		rc = al_fail(err, "docker: POST /build: build failed: %s", text);
	} else if (!docker_image_hex(json_string_value(json_object_get(
			   json_object_get(o, "aux"), "ID")), id)) {
		/* With q=1 some daemons send the ID only as a stream line. */
		docker_image_hex(json_string_value(json_object_get(o, "stream")), id);
	}
	json_decref(o);
	return rc;
}

static bool
docker_blank(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\r' && p[i] != '\t')
			return false;
	return true;
}

static int
docker_build_answer(const struct docker_buf *b, char id[DOCKER_ID_MAX], struct al_err *err)
{
	/* An empty answer has no buffer at all: no arithmetic on NULL. */
	const char *p = (const char *)b->data, *end = p ? p + b->len : NULL;

	/* Bounded: the answer itself is at most DOCKER_BUILD_REPLY_MAX bytes. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (!docker_blank(p, n) && docker_build_line(p, n, id, err) < 0)
			return -1;
		p += n + 1;
	}
	if (!id[0])
		return al_fail(err, "docker: POST /build: answer has no image ID");
	return 0;
}

int
docker_build(struct docker *d, const void *tar, size_t len, const char *label_key,
	     const char *label_value, char id[DOCKER_ID_MAX], struct al_err *err)
{
	struct docker_call c = { "POST", NULL, tar, len, DOCKER_BUILD_TIMEOUT_MS,
				 DOCKER_BUILD_REPLY_MAX, "application/x-tar" };
	char path[DOCKER_PATH_MAX];
	struct docker_buf resp;
	long st;
	int rc;

	id[0] = '\0';
	if (!tar || len == 0)
		return al_fail(err, "docker: build: empty context");
	if (!docker_label_ok(label_key, label_value))
		return al_fail(err, "docker: build: invalid label");
	if (docker_build_path(d, label_key, label_value, path, sizeof path, err) < 0)
		return -1;
	c.path = path;
	if (docker_perform(d, &c, &resp, &st, err) < 0)
		return -1;
	if (!docker_status_ok(st))
		rc = docker_status_fail(&c, st, &resp, err);
	else
		rc = docker_build_answer(&resp, id, err);
	if (rc < 0)
		id[0] = '\0';
	docker_buf_free(&resp);
	return rc;
}
