#include "fuzz.h"

#include <string.h>

#include "docker.h"

/*
 * The /events stream parser (engine/docker/docker.h) through docker_events_replay:
 * the first byte sets the receive size, the second the HTTP status, the
 * third after how many events the reader asks to stop (0: never); the rest
 * is the stream. Every event handed out is an object, no more of them than
 * the stream has lines, and the call succeeds only when the reader stopped.
 */

static const long statuses[] = { 200, 200, 200, 400, 404, 500 };

struct reader {
	size_t events, stop_at;
};

static int
on_event(const json_t *event, void *ctx)
{
	struct reader *r = ctx;

	FUZZ_CHECK(json_is_object(event));
	r->events++;
	return r->events == r->stop_at;
}

static size_t
lines(const uint8_t *p, size_t n)
{
	size_t k = 0;
	const uint8_t *nl;

	while (n > 0 && (nl = memchr(p, '\n', n))) {
		k++;
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	return k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk = fuzz_take(&data, &size, 64);
	long status = statuses[fuzz_take(&data, &size, sizeof statuses / sizeof statuses[0]) - 1];
	struct reader r = { 0, fuzz_take(&data, &size, 8) - 1 };
	struct al_err err = { "" };
	int rc;

	rc = docker_events_replay(status, (const char *)data, size, chunk, on_event, &r, &err);
	FUZZ_CHECK(r.events <= lines(data, size));
	if (status != 200)
		FUZZ_CHECK(r.events == 0);
	FUZZ_CHECK((rc == 0) == (r.stop_at > 0 && r.events == r.stop_at));
	if (rc == 0)
		return 0;
	FUZZ_CHECK(err.msg[0] != '\0' && fuzz_printable(err.msg));
	return 0;
}
