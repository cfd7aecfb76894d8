#include "clock.h"

int
clock_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t at;
	int rc;

	if (pthread_condattr_init(&at) != 0)
		return -1;
	rc = pthread_condattr_setclock(&at, CLOCK_MONOTONIC) == 0 &&
	     pthread_cond_init(c, &at) == 0 ? 0 : -1;
	pthread_condattr_destroy(&at);
	return rc;
}

struct timespec
clock_deadline(clockid_t c, int64_t ms)
{
	struct timespec t;

	clock_gettime(c, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}
