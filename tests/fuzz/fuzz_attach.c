#include "fuzz.h"

#include <string.h>

#include "docker.h"

/*
 * The attach handshake and the stream demultiplexer (engine/docker/docker.h),
 * through docker_attach_replay: the input's first byte chooses how many
 * bytes each receive brings, the rest is everything the daemon answers on
 * the hijacked connection. A stream that ends cleanly must have delivered
 * exactly the payload bytes a plain reading of its 8-byte frames finds.
 */

struct seen {
	size_t bytes[3];
};

static int
on_chunk(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct seen *s = ctx;

	FUZZ_CHECK(stream >= DOCKER_STDIN && stream <= DOCKER_STDERR);
	FUZZ_CHECK(len > 0 && data != NULL);
	s->bytes[stream] += len;
	return 0;
}

/* The model: skip the header, then walk the frames as the protocol says. */
static bool
model(const uint8_t *p, size_t n, struct seen *want)
{
	const uint8_t *end = memmem(p, n, "\r\n\r\n", 4);
	size_t off, len;

	if (!end)
		return false;
	off = (size_t)(end - p) + 4;
	while (n - off >= 8) {
		if (p[off] > DOCKER_STDERR || p[off + 1] || p[off + 2] || p[off + 3])
			return false;
		len = (size_t)p[off + 4] << 24 | (size_t)p[off + 5] << 16 |
		      (size_t)p[off + 6] << 8 | p[off + 7];
		if (len > n - off - 8)
			len = n - off - 8;	/* the stream ended inside the frame */
		want->bytes[p[off]] += len;
		off += 8 + len;
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk = fuzz_take(&data, &size, 64);
	struct seen got = { { 0 } }, want = { { 0 } };
	struct al_err err = { "" };

	if (docker_attach_replay(data, size, chunk == 64 ? 16384 : chunk, on_chunk, &got,
				 &err) < 0) {
		FUZZ_CHECK(err.msg[0] != '\0' && fuzz_printable(err.msg));
		return 0;
	}
	FUZZ_CHECK(model(data, size, &want));
	FUZZ_CHECK(memcmp(&got, &want, sizeof got) == 0);
	return 0;
}
