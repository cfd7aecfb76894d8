#ifndef AIRLOCK_CLOCK_H
#define AIRLOCK_CLOCK_H

/*
 * The monotonic clock, for deadlines and latencies; and wall time, only
 * for what a person reads (when something happened).
 */

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

#endif
