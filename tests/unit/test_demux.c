#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"

#define OUT_MAX 4096

/* What the demultiplexer handed out, per stream. */
struct sink {
	unsigned char out[3][OUT_MAX];
	size_t len[3];
	size_t chunks;
	size_t abort_at;	/* return 7 on this chunk (1-based); 0: never */
};

static int
sink_chunk(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct sink *s = ctx;

	assert_true(stream <= DOCKER_STDERR);
	assert_true(len > 0);
	assert_true(s->len[stream] + len <= OUT_MAX);
	memcpy(s->out[stream] + s->len[stream], data, len);
	s->len[stream] += len;
	s->chunks++;
	return s->chunks == s->abort_at ? 7 : 0;
}

static size_t
put_frame(unsigned char *buf, int type, const void *payload, uint32_t len)
{
	buf[0] = (unsigned char)type;
	buf[1] = buf[2] = buf[3] = 0;
	buf[4] = (unsigned char)(len >> 24);
	buf[5] = (unsigned char)(len >> 16);
	buf[6] = (unsigned char)(len >> 8);
	buf[7] = (unsigned char)len;
	memcpy(buf + 8, payload, len);
	return 8 + len;
}

/* stdout "hello\n", stderr "oops", an empty stdout frame, stdout of 300 bytes. */
static size_t
sample_stream(unsigned char *buf, unsigned char *big)
{
	size_t n = 0, i;

	for (i = 0; i < 300; i++)
		big[i] = (unsigned char)('a' + i % 26);
	n += put_frame(buf + n, DOCKER_STDOUT, "hello\n", 6);
	n += put_frame(buf + n, DOCKER_STDERR, "oops", 4);
	n += put_frame(buf + n, DOCKER_STDOUT, "", 0);
	n += put_frame(buf + n, DOCKER_STDOUT, big, 300);
	return n;
}

static void
check_sample(const struct sink *s, const unsigned char *big)
{
	assert_int_equal(s->len[DOCKER_STDOUT], 306);
	assert_memory_equal(s->out[DOCKER_STDOUT], "hello\n", 6);
	assert_memory_equal(s->out[DOCKER_STDOUT] + 6, big, 300);
	assert_int_equal(s->len[DOCKER_STDERR], 4);
	assert_memory_equal(s->out[DOCKER_STDERR], "oops", 4);
	assert_int_equal(s->len[DOCKER_STDIN], 0);
}

/* Each test's demultiplexer, fresh, and the sink it feeds (too large for the stack). */
struct fx {
	struct docker_demux dm;
	struct sink s;
};

static struct fx *
fx_new(void)
{
	struct fx *f = calloc(1, sizeof *f);

	assert_non_null(f);
	docker_demux_init(&f->dm);
	return f;
}

static int
setup(void **state)
{
	*state = fx_new();
	return 0;
}

static int
teardown(void **state)
{
	free(*state);
	return 0;
}

static int
feed(struct fx *f, const unsigned char *buf, size_t n)
{
	return docker_demux_feed(&f->dm, buf, n, sink_chunk, &f->s);
}

static void
test_split_every_boundary(void **state)
{
	unsigned char buf[512], big[300];
	size_t n = sample_stream(buf, big), cut;
	struct fx *f;

	(void)state;
	for (cut = 0; cut <= n; cut++) {
		f = fx_new();
		assert_int_equal(feed(f, buf, cut), 0);
		assert_int_equal(feed(f, buf + cut, n - cut), 0);
		check_sample(&f->s, big);
		assert_int_equal(f->dm.left, 0);
		assert_int_equal(f->dm.hdr_have, 0);
		free(f);
	}
}

static void
test_byte_by_byte(void **state)
{
	struct fx *f = *state;
	unsigned char buf[512], big[300];
	size_t n = sample_stream(buf, big), i;

	for (i = 0; i < n; i++)
		assert_int_equal(feed(f, buf + i, 1), 0);
	check_sample(&f->s, big);
}

static void
test_many_frames_one_feed(void **state)
{
	struct fx *f = *state;
	unsigned char buf[100 * 16];
	size_t n = 0;
	char word[8];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(word, sizeof word, "%02d,", i);
		n += put_frame(buf + n, i % 2 ? DOCKER_STDERR : DOCKER_STDOUT, word, 3);
	}
	assert_int_equal(feed(f, buf, n), 0);
	assert_int_equal(f->s.chunks, 100);
	assert_int_equal(f->s.len[DOCKER_STDOUT], 150);
	assert_int_equal(f->s.len[DOCKER_STDERR], 150);
	assert_memory_equal(f->s.out[DOCKER_STDOUT], "00,02,04,", 9);
	assert_memory_equal(f->s.out[DOCKER_STDERR], "01,03,05,", 9);
}

static void
test_zero_length_frames(void **state)
{
	struct fx *f = *state;
	unsigned char buf[64];
	size_t n = 0;

	n += put_frame(buf + n, DOCKER_STDOUT, "", 0);
	n += put_frame(buf + n, DOCKER_STDERR, "", 0);
	n += put_frame(buf + n, DOCKER_STDOUT, "x", 1);
	n += put_frame(buf + n, DOCKER_STDOUT, "", 0);
	assert_int_equal(feed(f, buf, n), 0);
	assert_int_equal(f->s.chunks, 1);
	assert_int_equal(f->s.len[DOCKER_STDOUT], 1);
	assert_int_equal(f->dm.left, 0);
	assert_int_equal(f->dm.hdr_have, 0);
}

static void
test_unknown_stream_type(void **state)
{
	struct fx *f = *state;
	unsigned char buf[64];
	size_t n = 0;

	n += put_frame(buf + n, DOCKER_STDOUT, "ok", 2);
	n += put_frame(buf + n, 3, "no", 2);
	assert_int_equal(feed(f, buf, n), -1);
	assert_true(f->dm.bad);
	assert_int_equal(f->s.len[DOCKER_STDOUT], 2);
	/* Once the framing is lost, nothing more is delivered. */
	assert_int_equal(feed(f, buf, n), -1);
	assert_int_equal(f->s.chunks, 1);
}

static void
test_nonzero_padding(void **state)
{
	struct fx *f = *state;
	unsigned char buf[16];
	size_t n = put_frame(buf, DOCKER_STDOUT, "ab", 2);

	buf[2] = 1;
	assert_int_equal(feed(f, buf, n), -1);
	assert_true(f->dm.bad);
	assert_int_equal(f->s.chunks, 0);
}

static void
test_callback_abort(void **state)
{
	struct fx *f = *state;
	unsigned char buf[64];
	size_t n = 0;

	n += put_frame(buf + n, DOCKER_STDOUT, "one", 3);
	n += put_frame(buf + n, DOCKER_STDERR, "two", 3);
	n += put_frame(buf + n, DOCKER_STDOUT, "three", 5);
	f->s.abort_at = 2;
	assert_int_equal(feed(f, buf, n), 7);
	assert_false(f->dm.bad);
	assert_int_equal(f->s.chunks, 2);
	assert_int_equal(f->s.len[DOCKER_STDOUT], 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_every_boundary),
		cmocka_unit_test_setup_teardown(test_byte_by_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_frames_one_feed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_length_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_stream_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonzero_padding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_abort, setup, teardown),
	};

	return cmocka_run_group_tests_name("demux", tests, NULL, NULL);
}
