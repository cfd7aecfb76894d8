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

/* --- the reader: tar_first_file over hand-made archives ------------------ */

#define BLK 512

/* Write the header's checksum, over an edit too. */
static void
tar_resum(unsigned char *h)
{
	unsigned int sum = 0;
	size_t i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < BLK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static void
tar_entry(unsigned char *h, const char *name, char type, size_t size)
{
	memset(h, 0, BLK);
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011lo", (unsigned long)(size & 077777777777UL));
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	tar_resum(h);
}

/* A directory "d/", then "d/f.txt" holding text, then the end blocks. */
static size_t
make_tar(unsigned char *tar, const char *text)
{
	size_t n = strlen(text), padded = (n + BLK - 1) / BLK * BLK;

	memset(tar, 0, 2 * BLK + padded + 2 * BLK);
	tar_entry(tar, "d/", '5', 0);
	tar_entry(tar + BLK, "d/f.txt", '0', n);
	memcpy(tar + 2 * BLK, text, n);
	return 2 * BLK + padded + 2 * BLK;
}

/* tar_first_file refuses: no data handed out, and an error naming why (msg, if given). */
static void
assert_no_file(const unsigned char *tar, size_t len, const char *msg)
{
	const unsigned char *data = (const unsigned char *)"x";
	size_t data_len;
	struct al_err err;

	err.msg[0] = '\0';
	assert_int_equal(tar_first_file(tar, len, &data, &data_len, &err), -1);
	assert_null(data);
	assert_true(err.msg[0] != '\0');
	if (msg && !strstr(err.msg, msg))
		fail_msg("want \"%s\", got \"%s\"", msg, err.msg);
}

static void
test_tar_valid(void **state)
{
	static unsigned char tar[8 * BLK];
	const unsigned char *data;
	size_t len, data_len;
	struct al_err err;

	(void)state;
	len = make_tar(tar, "policy: strict\n");
	assert_int_equal(tar_first_file(tar, len, &data, &data_len, &err), 0);
	assert_int_equal(data_len, 15);
	assert_memory_equal(data, "policy: strict\n", 15);
	assert_ptr_equal(data, tar + 2 * BLK);
}

static void
test_tar_truncated(void **state)
{
	static unsigned char tar[8 * BLK];
	const unsigned char *data;
	size_t cut, data_len;
	struct al_err err;

	(void)state;
	make_tar(tar, "0123456789");
	/* Cut inside the first header, inside the second, and inside the data. */
	for (cut = 0; cut < 2 * BLK + 10; cut++)
		assert_no_file(tar, cut, NULL);
	assert_int_equal(tar_first_file(tar, 2 * BLK + 10, &data, &data_len, &err), 0);
	assert_int_equal(tar_first_file(NULL, 0, &data, &data_len, &err), -1);
}

static void
test_tar_bad_size(void **state)
{
	static unsigned char tar[8 * BLK];
	static const char *sizes[] = {
		"00000000x12", "           ", "\x80\0\0\0\0\0\0\0\0\0\x10\0", "77777777777",
	};
	size_t len, i;

	(void)state;
	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		len = make_tar(tar, "abc");
		memcpy(tar + BLK + 124, sizes[i], 12);
		tar_resum(tar + BLK);	/* so only the size is wrong */
		assert_no_file(tar, len, NULL);
	}
}

static void
test_tar_bad_checksum(void **state)
{
	static unsigned char tar[8 * BLK];
	size_t len;

	(void)state;
	len = make_tar(tar, "abc");
	tar[BLK + 10] ^= 1;
	assert_no_file(tar, len, "checksum");
}

static void
test_tar_no_regular_file(void **state)
{
	static unsigned char tar[8 * BLK];

	(void)state;
	memset(tar, 0, sizeof tar);
	tar_entry(tar, "d/", '5', 0);
	tar_entry(tar + BLK, "d/link", '2', 0);
	assert_no_file(tar, 4 * BLK, "no regular file");
	/* All zeros, or not even one block. */
	memset(tar, 0, sizeof tar);
	assert_no_file(tar, 2 * BLK, NULL);
	assert_no_file(tar, 0, NULL);
	/* No ustar magic. */
	tar_entry(tar, "f", '0', 0);
	memset(tar + 257, 'x', 6);
	assert_no_file(tar, 2 * BLK, NULL);
}

static void
test_tar_skips_pax_header(void **state)
{
	static unsigned char tar[8 * BLK];
	const unsigned char *data;
	size_t data_len;
	struct al_err err;

	(void)state;
	memset(tar, 0, sizeof tar);
	tar_entry(tar, "PaxHeaders/f", 'x', 600);
	memset(tar + BLK, 'p', 600);
	tar_entry(tar + 3 * BLK, "f", '0', 2);
	memcpy(tar + 4 * BLK, "hi", 2);
	assert_int_equal(tar_first_file(tar, 7 * BLK, &data, &data_len, &err), 0);
	assert_int_equal(data_len, 2);
	assert_memory_equal(data, "hi", 2);
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
		cmocka_unit_test(test_tar_valid),
		cmocka_unit_test(test_tar_truncated),
		cmocka_unit_test(test_tar_bad_size),
		cmocka_unit_test(test_tar_bad_checksum),
		cmocka_unit_test(test_tar_no_regular_file),
		cmocka_unit_test(test_tar_skips_pax_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
