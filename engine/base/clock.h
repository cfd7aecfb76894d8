#ifndef AIRLOCK_CLOCK_H
#define AIRLOCK_CLOCK_H

/*
 * The monotonic clock, for deadlines and latencies; and wall time, only
 * for what a person reads (when something happened).
 */

#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline int64_t
clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t
clock_mono_ms(void)
{
	return clock_mono_us() / 1000;
}

/* Milliseconds since the epoch. */
static inline int64_t
clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A condition variable whose timed waits count on the monotonic clock, so
 * that a step of the wall clock neither stretches nor cuts them. -1 when
 * it cannot be made (nothing is then left to destroy).
 */
int clock_cond_init(pthread_cond_t *c);

/* The time ms milliseconds from now on clock c, as timed waits take it. */
struct timespec clock_deadline(clockid_t c, int64_t ms);

#endif
