#include "fuzz.h"

#include <string.h>

#include "docker.h"

/*
 * The Docker endpoints' answer parsing (engine/docker/docker.h) through
 * docker_open_replay: the input's first byte picks the endpoint, the second
 * the HTTP status, the rest is the body. Each endpoint must either fail
 * with a printable message or hand back what its contract says: an object,
 * a list, a 64-hex id, an exit code, a body within its limit.
 */

#define HEX "0123456789abcdef"

static const long statuses[] = { 200, 201, 204, 304, 400, 404, 409, 500, 101, 302 };

static bool
hex64(const char *id)
{
	return strlen(id) == DOCKER_ID_MAX - 1 && strspn(id, HEX) == DOCKER_ID_MAX - 1;
}

static int
call_json(struct docker *d, int which, struct al_err *err)
{
	json_t *out = NULL;
	int rc;

	switch (which) {
	case 0:
		rc = docker_info(d, &out, err);
		FUZZ_CHECK(rc < 0 ? out == NULL : json_is_object(out));
		break;
	case 1:
		rc = docker_inspect(d, "airlock-fuzz", &out, err);
		FUZZ_CHECK(rc < 0 ? out == NULL : json_is_object(out));
		break;
	default:
		rc = docker_list_by_label(d, "io.airlock.managed=1", &out, err);
		FUZZ_CHECK(rc < 0 ? out == NULL : json_is_array(out));
		break;
	}
	json_decref(out);
	return rc;
}

static int
call_id(struct docker *d, int which, struct al_err *err)
{
	static const unsigned char tar[512];
	json_t *body = json_object();
	char id[DOCKER_ID_MAX] = "x";
	int rc;

	FUZZ_CHECK(body != NULL);
	if (which == 3)
		rc = docker_create(d, "airlock-fuzz", body, id, err);
	else if (which == 4)
		rc = docker_image_by_label(d, "io.airlock.demo=1", id, err);
	else
		rc = docker_build(d, tar, sizeof tar, "io.airlock.fuzz", "1", id, err);
	FUZZ_CHECK(rc == 0 ? hex64(id) : rc == 1 ? which == 4 && id[0] == '\0' : rc == -1);
	json_decref(body);
	return rc;
}

static int
call_other(struct docker *d, int which, struct al_err *err)
{
	unsigned char *buf = NULL;
	long code = 7;
	size_t len = 1;
	int rc;

	if (which == 6) {
		rc = docker_wait(d, "airlock-fuzz", &code, err);
		FUZZ_CHECK(rc == 0 || code == -1);
		return rc;
	}
	if (which == 7)
		return docker_ping(d, err);
	rc = docker_archive_get(d, "airlock-fuzz", "/out", 4096, &buf, &len, err);
	FUZZ_CHECK(rc == 0 ? len <= 4096 : buf == NULL && len == 0);
	free(buf);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int which = (int)fuzz_take(&data, &size, 9) - 1;
	long status = statuses[fuzz_take(&data, &size, sizeof statuses / sizeof statuses[0]) - 1];
	struct al_err err = { "" };
	struct docker *d = docker_open_replay(status, data, size, &err);
	int rc;

	FUZZ_CHECK(d != NULL);
	if (which < 3)
		rc = call_json(d, which, &err);
	else if (which < 6)
		rc = call_id(d, which, &err);
	else
		rc = call_other(d, which, &err);
	if (rc < 0)
		FUZZ_CHECK(err.msg[0] != '\0' && fuzz_printable(err.msg));
	docker_close(d);
	return 0;
}
