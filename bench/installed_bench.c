/*
 * What a start does for each installed upstream it names: its definition
 * read through a walk of the catalog's path (upstream_catalog_read, the
 * baseline: all a start did before), and that read followed by the walk of
 * what the definition runs (upstream_catalog_code_fault: the program's
 * tree, a node_modules tree, a script). A catalog of one definition whose
 * argv is the words given, in a root-owned scratch directory; warm page
 * cache; ITER of each per round, interleaved. Prints the mean per check of
 * each round and a ratio; asserts nothing but that both sides succeed.
 *
 * usage: installed_bench NAME ROUNDS ITER PROGRAM [ARG...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bench.h"
#include "upstream_catalog.h"

/* DIR/bench.json: {"argv": [words]}, root's 0644 (the bench runs as root). */
static int
install(const char *dir, char **words, int n)
{
	json_t *argv = json_array(), *def = json_object();
	char path[256];
	int i, rc;

	for (i = 0; i < n; i++)
		json_array_append_new(argv, json_string(words[i]));
	json_object_set_new(def, "argv", argv);
	snprintf(path, sizeof path, "%s/bench.json", dir);
	rc = json_dump_file(def, path, 0) == 0 && chmod(path, 0644) == 0 &&
	     chmod(dir, 0755) == 0 ? 0 : -1;
	json_decref(def);
	return rc;
}

/* The definition read, and with walk, what it runs walked: 0, or -1 if refused. */
static int
check_once(const char *dir, bool walk)
{
	struct strv argv = { 0 }, none = { 0 };
	struct al_err err;
	const json_t *words;
	char at[4096];
	json_t *def = upstream_catalog_read(dir, "bench", &err);
	const char *why = def ? NULL : err.msg;
	size_t i;

	if (def && walk) {
		words = json_object_get(def, "argv");
		for (i = 0; i < json_array_size(words); i++)
			strv_push(&argv, json_string_value(json_array_get(words, i)));
		why = upstream_catalog_code_fault(&argv, &none, &none, at, sizeof at);
		strv_free(&argv);
	}
	json_decref(def);
	if (why)
		fprintf(stderr, "installed_bench: refused: %s%s%s\n", walk ? at : "",
			walk ? ": " : "", why);
	return why ? -1 : 0;
}

/* The mean time of iter checks, in microseconds; -1 when one was refused. */
static double
mean_us(const char *dir, bool walk, int iter)
{
	double t = bench_now_us();
	int i;

	for (i = 0; i < iter; i++)
		if (check_once(dir, walk) < 0)
			return -1;
	return (bench_now_us() - t) / iter;
}

int
main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "";
	int rounds = argc > 2 ? atoi(argv[2]) : 0, iter = argc > 3 ? atoi(argv[3]) : 0;
	char dir[] = "/tmp/airlock-installed-bench-XXXXXX";
	double *base, *walk;
	int i, rc = 1;

	if (argc < 5 || rounds < 1 || iter < 1) {
		fprintf(stderr, "usage: installed_bench NAME ROUNDS ITER PROGRAM [ARG...]\n");
		return 2;
	}
	base = calloc((size_t)rounds, sizeof *base);
	walk = calloc((size_t)rounds, sizeof *walk);
	if (!base || !walk || !mkdtemp(dir))
		return 1;
	if (install(dir, argv + 4, argc - 4) < 0)
		goto out;
	for (i = 0; i < rounds; i++) {
		base[i] = mean_us(dir, false, iter);
		walk[i] = mean_us(dir, true, iter);
		if (base[i] < 0 || walk[i] < 0)
			goto out;
		printf("sample: %s baseline=%.2f airlock=%.2f unit=us\n", name, base[i], walk[i]);
	}
	bench_sort(base, (size_t)rounds);
	bench_sort(walk, (size_t)rounds);
	printf("%s: %s, mean of %d checks a round, median of %d rounds\n", name, argv[4], iter,
	       rounds);
	printf("%-44s %9.2f us\n", "definition read (the start before)", base[rounds / 2]);
	printf("%-44s %9.2f us\n", "read + what it runs walked", walk[rounds / 2]);
	printf("%-44s %8.2fx\n", "ratio", walk[rounds / 2] / base[rounds / 2]);
	rc = 0;
out:
	free(base);
	free(walk);
	return bench_remove_dir(dir) | rc;
}
