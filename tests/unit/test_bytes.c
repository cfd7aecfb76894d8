#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"

/*
 * Bounded bytes from outside: a file read whole up to its bound (from a
 * pipe, as a FIFO or a short read would give it), a run as a string.
 */

/* A pipe holding n bytes of 'x', its write end closed: the read end. */
static int
pipe_of(size_t n)
{
	char block[512];
	int fds[2];
	size_t k;

	memset(block, 'x', sizeof block);
	assert_int_equal(pipe(fds), 0);
	for (; n > 0; n -= k) {
		k = n < sizeof block ? n : sizeof block;
		assert_int_equal(write(fds[1], block, k), (ssize_t)k);
	}
	close(fds[1]);
	return fds[0];
}

static void
read_expect(size_t have, size_t cap, enum bytes_read want, size_t want_n)
{
	int fd = pipe_of(have);
	char *buf = NULL;
	size_t n = 99;

	assert_int_equal(bytes_read_fd(fd, cap, &buf, &n), want);
	assert_int_equal(n, want_n);
	assert_non_null(buf);
	if (want == BYTES_READ_OK && n > 0)
		assert_int_equal(buf[n - 1], 'x');
	free(buf);
	close(fd);
}

static void
test_read_fd(void **state)
{
	char *buf = NULL;
	size_t n = 99;

	(void)state;
	read_expect(0, 16, BYTES_READ_OK, 0);
	read_expect(16, 16, BYTES_READ_OK, 16);		/* the bound itself fits */
	read_expect(17, 16, BYTES_READ_TOO_LARGE, 17);	/* one more does not */
	read_expect(4000, 1000, BYTES_READ_TOO_LARGE, 1001);	/* it stops past the bound */
	read_expect(3000, 4096, BYTES_READ_OK, 3000);	/* many short reads */
	errno = 0;
	assert_int_equal(bytes_read_fd(-1, 16, &buf, &n), BYTES_READ_ERROR);
	assert_int_equal(errno, EBADF);
	assert_int_equal(n, 0);
	free(buf);
}

static void
test_str(void **state)
{
	char out[4];
	uint64_t v = 7;

	(void)state;
	assert_int_equal(bytes_str(out, sizeof out, "abc", 3), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(bytes_str(out, sizeof out, "abcd", 4), -1);	/* no room for the NUL */
	assert_int_equal(bytes_str(out, sizeof out, "a\0c", 3), -1);
	assert_int_equal(bytes_decimal("0042", 4, 4, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(bytes_decimal("00042", 5, 4, &v), -1);
	assert_int_equal(bytes_decimal("4x", 2, 4, &v), -1);
	assert_int_equal(v, 42);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_fd),
		cmocka_unit_test(test_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
