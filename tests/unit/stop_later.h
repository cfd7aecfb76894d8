#ifndef AIRLOCK_TEST_STOP_LATER_H
#define AIRLOCK_TEST_STOP_LATER_H

/*
 * A session's stop raised from another thread while the test's call
 * waits: stop_later_start(&t, &flag) sets flag 200 ms from now; the test
 * joins t after its call returned.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#define STOP_LATER_MS	200

static void *
stop_later_main(void *flag)
{
	struct timespec ts = { 0, STOP_LATER_MS * 1000L * 1000L };

	nanosleep(&ts, NULL);
	atomic_store((atomic_bool *)flag, true);
	return NULL;
}

static inline int
stop_later_start(pthread_t *t, atomic_bool *flag)
{
	return pthread_create(t, NULL, stop_later_main, flag);
}

#endif
