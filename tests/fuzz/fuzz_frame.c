#include "fuzz.h"

#include <string.h>

#include "frame.h"

/*
 * The request parser and the reply renderer (engine/policy/frame.h). The input is
 * one agent line. A line the parser accepts must be what §6 allows; the
 * same bytes as an upstream's response text must render to exactly one
 * line that reads back to them, or not at all.
 */

/* What §6 allows, read by plain jansson: one object, exactly the two keys. */
static bool
two_keys(const uint8_t *data, size_t size)
{
	json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	bool ok = json_is_object(o) && json_object_size(o) == 2 &&
		  json_is_string(json_object_get(o, "operation")) &&
		  json_is_object(json_object_get(o, "arguments"));

	json_decref(o);
	return ok;
}

static void
check_request(const uint8_t *data, size_t size)
{
	struct agent_request req;
	size_t n;

	if (frame_parse((const char *)data, size, &req) < 0) {
		FUZZ_CHECK(req.arguments == NULL);
		return;
	}
	n = strlen(req.operation);
	FUZZ_CHECK(n > 0 && n <= FRAME_OPERATION_MAX);
	FUZZ_CHECK(json_is_object(req.arguments));
	FUZZ_CHECK(!memchr(data, '\0', size) && frame_utf8_valid(data, size));
	FUZZ_CHECK(two_keys(data, size));
	frame_request_free(&req);
	FUZZ_CHECK(req.arguments == NULL);
}

static void
check_reply(const uint8_t *data, size_t size, bool allowed)
{
	json_t *back;
	size_t n = 0;
	char *line = frame_reply(allowed, (const char *)data, size, FRAME_BYTES_DEFAULT, &n);

	if (!line)
		return;
	FUZZ_CHECK(n > 0 && n <= FRAME_BYTES_DEFAULT && line[n - 1] == '\n');
	FUZZ_CHECK(memchr(line, '\n', n) == line + n - 1 && strlen(line) == n);
	back = json_loadb(line, n - 1, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	FUZZ_CHECK(json_is_object(back) && json_object_size(back) == 2);
	FUZZ_CHECK(json_is_boolean(json_object_get(back, "allowed")) &&
		   json_is_true(json_object_get(back, "allowed")) == allowed);
	FUZZ_CHECK(json_string_length(json_object_get(back, "response")) == size);
	FUZZ_CHECK(memcmp(json_string_value(json_object_get(back, "response")), data, size) == 0);
	json_decref(back);
	free(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_request(data, size);
	check_reply(data, size, size % 2 == 0);
	return 0;
}
