/*
 * A session's upstream uid taken and given back (engine/mcp/mcp_uids.h:
 * the lock, and the sweep's child that kills what is left of the uid), in
 * an engine holding MIB MiB of memory it has written against the same in
 * one holding none: how the give-back grows with the engine. A child
 * copied from the engine (fork) copies its page tables, and stalls every
 * other thread's page faults while it does; one that shares them does not.
 * Rounds interleave: none, MIB, none, … Run as root with uids delegated
 * (scripts/setup).
 *
 *   uid_bench ROUNDS MIB
 *   sample: uid_give_back baseline=X airlock=Y unit=ms     (a round each)
 *   bench: uid_give_back_MIBmib baseline=X airlock=Y ratio=R unit=ms runs=N …
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "mcp_uids.h"

/* One take and give-back in ms; < 0 when the take failed. */
static double
one_round(void)
{
	struct mcp_uid uid;
	struct al_err err = { "" };
	double t0 = bench_now_ms();

	if (mcp_uid_take(&uid, &err) < 0) {
		fprintf(stderr, "uid_bench: %s\n", err.msg);
		return -1;
	}
	mcp_uid_give_back(&uid);
	return bench_now_ms() - t0;
}

/* A round with mib MiB written first (0: none), the memory let go after. */
static double
round_holding(size_t mib)
{
	size_t len = mib << 20;
	char *ballast = NULL;
	double ms;

	if (mib) {
		ballast = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ballast == MAP_FAILED)
			return -1;
		memset(ballast, 1, len);
	}
	ms = one_round();
	if (ballast)
		munmap(ballast, len);
	return ms;
}

static double
median(double *v, size_t n)
{
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	size_t rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 20;
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 256, i;
	double *base = calloc(rounds ? rounds : 1, sizeof *base);
	double *ours = calloc(rounds ? rounds : 1, sizeof *ours);

	if (rounds == 0 || mib == 0 || !base || !ours) {
		fprintf(stderr, "usage: uid_bench ROUNDS MIB (both above 0)\n");
		return 2;
	}
	for (i = 0; i < rounds; i++) {
		if ((base[i] = round_holding(0)) < 0 || (ours[i] = round_holding(mib)) < 0)
			return 1;
		printf("sample: uid_give_back baseline=%.3f airlock=%.3f unit=ms\n", base[i], ours[i]);
	}
	bench_sort(ours, rounds);
	printf("bench: uid_give_back_%zumib baseline=%.3f airlock=%.3f ratio=%.2f unit=ms runs=%zu "
	       "airlock_min=%.3f airlock_max=%.3f\n", mib, median(base, rounds), median(ours, rounds),
	       median(ours, rounds) / median(base, rounds), rounds, ours[0], ours[rounds - 1]);
	free(base);
	free(ours);
	return 0;
}
