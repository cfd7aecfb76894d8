/*
 * What the benchmark programs share: the monotonic clock in the unit each
 * prints, samples sorted in place for their percentiles (each program keeps
 * its own percentile arithmetic: what it prints stays what it printed), and
 * the removal of a mkdtemp work directory. Header only; it measures nothing
 * by itself.
 */
#ifndef AIRLOCK_BENCH_H
#define AIRLOCK_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in microseconds / milliseconds, with their fractions. */
static inline double
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline double
bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort n samples ascending, in place. */
static inline void
bench_sort(double *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp);
}

/*
 * The table under title: the median of a baseline's rounds and of ours
 * (each sorted here, in place), and their ratio, in ms.
 */
static inline void
bench_medians(const char *title, const char *base_label, double *base, const char *ours_label,
	      double *ours, size_t rounds)
{
	bench_sort(base, rounds);
	bench_sort(ours, rounds);
	printf("%-44s %9s\n", title, "ms");
	printf("%-44s %9.3f\n", base_label, base[rounds / 2]);
	printf("%-44s %9.3f\n", ours_label, ours[rounds / 2]);
	printf("%-44s %8.4fx\n", "ratio", ours[rounds / 2] / base[rounds / 2]);
}

/* rm -rf a work directory of ours (a mkdtemp path: no quote in it); the
 * program's exit status: 0 when it went. */
static inline int
bench_remove_dir(const char *dir)
{
	char cmd[160];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}

#endif
