#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker.h"
#include "tar.h"

#define BLOCK 512

static unsigned char big[3 * BLOCK + 7];

static const char *
write_temp(const char *dir, const char *name, const unsigned char *buf, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void
read_back(const char *path, unsigned char *buf, size_t cap, size_t *len)
{
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	*len = fread(buf, 1, cap, f);
	fclose(f);
}

static void
rm_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* One file comes back through the engine's own reader, byte for byte. */
static void
test_round_trip_reader(void **state)
{
	static const char text[] = "FROM scratch\nCOPY agent /agent\n";
	struct tar_file f = { "Dockerfile", text, sizeof text - 1, 0644 };
	const unsigned char *data;
	unsigned char *tar;
	size_t len, n;
	struct al_err err;

	(void)state;
	assert_int_equal(tar_write(&f, 1, &tar, &len, &err), 0);
	assert_int_equal(len, 4 * BLOCK);	/* header, one data block, two end blocks */
	assert_int_equal(tar_first_file(tar, len, &data, &n, &err), 0);
	assert_int_equal(n, sizeof text - 1);
	assert_memory_equal(data, text, n);
	assert_memory_equal(tar + 257, "ustar\0" "00", 8);
	free(tar);
}

static void
fill_big(void)
{
	size_t i;

	for (i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 + 3);
}

/* Sizes 0, exactly one block and past three blocks: padding is right. */
static void
test_sizes_and_padding(void **state)
{
	static unsigned char block[BLOCK];
	struct tar_file f[3] = {
		{ "empty", NULL, 0, 0600 },
		{ "one/block", block, BLOCK, 0644 },
		{ "big.bin", big, sizeof big, 0755 },
	};
	unsigned char *tar, *again;
	size_t len, len2, i;
	struct al_err err;

	(void)state;
	fill_big();
	memset(block, 'b', sizeof block);
	assert_int_equal(tar_write(f, 3, &tar, &len, &err), 0);
	assert_int_equal(len % BLOCK, 0);
	assert_int_equal(len, BLOCK * (3 + 0 + 1 + 4 + 2));
	for (i = len - 2 * BLOCK; i < len; i++)
		assert_int_equal(tar[i], 0);
	/* mtime 0 and owner 0:0: the same files give the same bytes. */
	assert_int_equal(tar_write(f, 3, &again, &len2, &err), 0);
	assert_int_equal(len2, len);
	assert_memory_equal(again, tar, len);
	free(again);
	free(tar);
}

static void
assert_file(const char *dir, const char *name, const void *want, size_t n, unsigned mode)
{
	static unsigned char got[4 * BLOCK];
	char path[256];
	struct stat st;
	size_t len;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, mode);
	read_back(path, got, sizeof got, &len);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
}

/* GNU tar (or bsdtar) lists and extracts it: names, contents and modes. */
static void
test_system_tar(void **state)
{
	static const char script[] = "#!/bin/sh\necho hi\n";
	struct tar_file f[3] = {
		{ "Dockerfile", "FROM scratch\n", 13, 0644 },
		{ "bin/run.sh", script, sizeof script - 1, 0755 },
		{ "data.bin", big, sizeof big, 0600 },
	};
	char dir[] = "/tmp/test_tar.XXXXXX", cmd[1024], out[256];
	unsigned char *tar;
	size_t len;
	struct al_err err;
	const char *file;

	(void)state;
	fill_big();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(tar_write(f, 3, &tar, &len, &err), 0);
	file = write_temp(dir, "ctx.tar", tar, len);
	snprintf(cmd, sizeof cmd, "tar -tvf '%s' > '%s/list' 2>&1 && mkdir '%s/x' && "
		 "tar -xpf '%s' -C '%s/x'", file, dir, dir, file, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(out, sizeof out, "%s/x", dir);
	assert_file(out, "Dockerfile", "FROM scratch\n", 13, 0644);
	assert_file(out, "bin/run.sh", script, sizeof script - 1, 0755);
	assert_file(out, "data.bin", big, sizeof big, 0600);
	/* The listing shows each entry once as a regular file with its mode. */
	snprintf(cmd, sizeof cmd, "grep -c '^-' '%s/list' | grep -qx 3 && "
		 "grep -q '^-rwxr-xr-x .* bin/run.sh$' '%s/list' && "
		 "grep -q '^-rw------- .* data.bin$' '%s/list'", dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	free(tar);
	rm_tree(dir);
}

static void
assert_refused(const struct tar_file *f, size_t n, const char *msg)
{
	unsigned char *tar = (unsigned char *)"x";
	size_t len = 1;
	struct al_err err;

	assert_int_equal(tar_write(f, n, &tar, &len, &err), -1);
	assert_null(tar);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err.msg, msg));
}

/* Names that would unpack elsewhere, missing data and too many files. */
static void
test_refusals(void **state)
{
	static const char *bad[] = {
		"", "/etc/passwd", "../up", "a/../../b", "a/..", "..", "dir/", "sp ace", "tab\t",
		("0123456789012345678901234567890123456789012345678901234567890123456789"
		 "012345678901234567890123456789"),	/* 100 bytes */
	};
	static struct tar_file many[TAR_FILES_MAX + 1];
	struct tar_file f = { NULL, "x", 1, 0644 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f.name = bad[i];
		assert_refused(&f, 1, "invalid name");
	}
	f.name = NULL;
	assert_refused(&f, 1, "invalid name");
	f.name = "ok";
	f.data = NULL;
	assert_refused(&f, 1, "no data");
	for (i = 0; i < TAR_FILES_MAX + 1; i++)
		many[i] = (struct tar_file){ "f", "", 0, 0644 };
	assert_refused(many, TAR_FILES_MAX + 1, "more than");
	f.data = "x";
	f.len = TAR_BYTES_MAX;
	assert_refused(&f, 1, "larger than");
}

/* The longest name that fits (99 bytes) and an empty archive are fine. */
static void
test_limits_accepted(void **state)
{
	char name[TAR_NAME_MAX + 1];
	struct tar_file f = { name, "x", 1, 0644 };
	const unsigned char *data;
	unsigned char *tar;
	size_t len, n;
	struct al_err err;

	(void)state;
	memset(name, 'n', TAR_NAME_MAX);
	name[TAR_NAME_MAX] = '\0';
	assert_int_equal(tar_write(&f, 1, &tar, &len, &err), 0);
	assert_int_equal(tar_first_file(tar, len, &data, &n, &err), 0);
	assert_memory_equal(tar, name, TAR_NAME_MAX);
	assert_int_equal(tar[TAR_NAME_MAX], 0);
	free(tar);
	assert_int_equal(tar_write(NULL, 0, &tar, &len, &err), 0);
	assert_int_equal(len, 2 * BLOCK);
	assert_int_equal(tar_first_file(tar, len, &data, &n, &err), -1);
	free(tar);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_reader),
		cmocka_unit_test(test_sizes_and_padding),
		cmocka_unit_test(test_system_tar),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_limits_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
