#ifndef AIRLOCK_THREAD_H
#define AIRLOCK_THREAD_H

#include <pthread.h>

/*
 * Start a thread that takes no signal: every signal is blocked in it from
 * its first instruction (the mask is inherited at creation, so there is no
 * window), and the caller's own mask is as it was. Signals belong to the
 * threads that wait for them (the console's SIGWINCH, serve's SIGTERM).
 * pthread_create's result.
 */
int thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

/* The signals that ask a process to stop (SIGINT, SIGTERM, SIGHUP) go to handler. */
void thread_catch_stop(void (*handler)(int), int sa_flags);

#endif
