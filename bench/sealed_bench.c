/*
 * The sealed check's reader over a synthetic image export held in memory
 * (no Docker): one layer of FILES files of SIZE bytes plus a sealed
 * directory, through sealed_export_feed/_finish and sealed_judge, beside
 * the floor of a plain SHA-256 over the same bytes (the reader hashes
 * every byte; the tar parsing and the judging are what it adds).
 *
 *   sealed_bench [FILES] [SIZE] [ROUNDS]
 *
 * Besides the table, each round is a "sample:" line for bench/run
 * (bench/report.py): sealed_export_read, the floor as baseline.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "hash.h"
#include "sealed.h"
#include "sealed_image.h"

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void
grow(struct buf *b, size_t n)
{
	while (b->len + n > b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1 << 20;
		if (!(b->p = realloc(b->p, b->cap))) {
			perror("realloc");
			exit(1);
		}
	}
}

static void
put_block(struct buf *b, const void *p, size_t n)
{
	size_t pad = (512 - n % 512) % 512;

	grow(b, n + pad);
	memcpy(b->p + b->len, p, n);
	memset(b->p + b->len + n, 0, pad);
	b->len += n + pad;
}

static void
header(struct buf *b, char type, const char *name, unsigned mode, size_t size)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;
	char tmp[32];
	size_t i;

	memcpy(h, name, strlen(name));
	snprintf(tmp, sizeof tmp, "%07o", mode);
	memcpy(h + 100, tmp, 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf(tmp, sizeof tmp, "%011zo", size);
	memcpy(h + 124, tmp, 11);
	memcpy(h + 136, "00000000000", 11);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf(tmp, sizeof tmp, "%06o", sum);
	memcpy(h + 148, tmp, 7);
	put_block(b, h, 512);
}

static void
file(struct buf *b, const char *name, unsigned mode, const void *data, size_t n)
{
	header(b, '0', name, mode, n);
	if (n)
		put_block(b, data, n);
}

static void
end(struct buf *b)
{
	grow(b, 1024);
	memset(b->p + b->len, 0, 1024);
	b->len += 1024;
}

/* One layer: /usr/share/f<i> files, and /srv/vault 0700 with a key. */
static void
build(struct buf *x, char image[72], int files, size_t size)
{
	struct buf layer = { 0 };
	char name[96], hex[65], config[256], manifest[256];
	unsigned char *data = calloc(1, size ? size : 1);
	int i;

	header(&layer, '5', "usr/share/", 0755, 0);
	for (i = 0; i < files; i++) {
		snprintf(name, sizeof name, "usr/share/f%d", i);
		file(&layer, name, 0644, data, size);
	}
	header(&layer, '5', "srv/", 0755, 0);
	header(&layer, '5', "srv/vault/", 0700, 0);
	file(&layer, "srv/vault/key", 0644, "k", 1);
	end(&layer);
	hash_sha256_hex(layer.p, layer.len, hex);
	snprintf(config, sizeof config, "{\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:%s\"]}}", hex);
	hash_sha256_hex(config, strlen(config), hex);
	snprintf(image, 72, "sha256:%s", hex);
	snprintf(name, sizeof name, "%s.json", hex);
	file(x, name, 0644, config, strlen(config));
	file(x, "0001/layer.tar", 0644, layer.p, layer.len);
	snprintf(manifest, sizeof manifest, "[{\"Config\":\"%s\",\"Layers\":[\"0001/layer.tar\"]}]", name);
	file(x, "manifest.json", 0644, manifest, strlen(manifest));
	end(x);
	free(layer.p);
	free(data);
}

/* One pass of the reader, fed 64 KiB at a time as curl would. */
static int
read_once(const struct buf *x, const char *image, const struct strv *sealed)
{
	struct sealed_who who = { .uid = 10001, .gids = { 10001 }, .n_gids = 1 };
	struct sealed_verdict v;
	struct sealed_export se;
	struct al_err err;
	size_t off, k;
	int rc = sealed_export_init(&se, sealed, &err);

	for (off = 0; rc == 0 && off < x->len; off += k) {
		k = x->len - off < 65536 ? x->len - off : 65536;
		rc = sealed_export_feed(&se, x->p + off, k);
	}
	if (rc == 0 && (rc = sealed_export_finish(&se, image)) == 0)
		sealed_judge(se.order, se.n_order, sealed, &who, &v);
	if (rc < 0)
		fprintf(stderr, "sealed_bench: %s\n", err.msg);
	else if (!v.pass) {
		fprintf(stderr, "sealed_bench: unexpected refusal: %s\n", v.text);
		rc = -1;
	}
	sealed_export_free(&se);
	return rc;
}

int
main(int argc, char **argv)
{
	int files = argc > 1 ? atoi(argv[1]) : 20000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 4096;
	int rounds = argc > 3 ? atoi(argv[3]) : 5, i;
	double *reader = calloc((size_t)rounds, sizeof *reader);
	double *floor = calloc((size_t)rounds, sizeof *floor);
	struct strv sealed = { 0 };
	struct buf x = { 0 };
	char image[72], hex[65];
	double t;

	if (!reader || !floor || strv_push(&sealed, "/srv/vault") < 0)
		return 1;
	build(&x, image, files, size);
	for (i = 0; i < rounds; i++) {
		t = bench_now_ms();
		hash_sha256_hex(x.p, x.len, hex);
		floor[i] = bench_now_ms() - t;
		t = bench_now_ms();
		if (read_once(&x, image, &sealed) < 0)
			return 1;
		reader[i] = bench_now_ms() - t;
		printf("sample: sealed_export_read baseline=%.1f airlock=%.1f unit=ms\n", floor[i],
		       reader[i]);
	}
	bench_sort(reader, (size_t)rounds);
	bench_sort(floor, (size_t)rounds);
	printf("export of %d files x %zu bytes: %.1f MiB\n", files, size, x.len / 1048576.0);
	printf("%-44s %9s\n", "median of rounds", "ms");
	printf("%-44s %9.1f\n", "floor: SHA-256 over the export", floor[rounds / 2]);
	printf("%-44s %9.1f\n", "reader: parse, hash, keep, judge", reader[rounds / 2]);
	printf("%-44s %8.2fx\n", "ratio", reader[rounds / 2] / floor[rounds / 2]);
	printf("%-44s %9.0f\n", "reader throughput (MiB/s)", x.len / 1048576.0 / (reader[rounds / 2] / 1e3));
	strv_free(&sealed);
	free(x.p);
	free(reader);
	free(floor);
	return 0;
}
