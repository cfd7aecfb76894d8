#ifndef AIRLOCK_WATCHDOG_H
#define AIRLOCK_WATCHDOG_H

/*
 * The lease (DESIGN.md §8): a separate watchdog process stops the container
 * when the engine dies or stalls, and the engine stops it when the
 * watchdog dies or stalls.
 *
 * Engine side (lease_*): fork + exec of `airlock watchdog SOCKET ID` (a
 * fresh process image that never held plaintext), detached (double fork,
 * setsid), every other descriptor closed, RLIMIT_CORE 0/0. The two talk
 * over a socketpair that is the watchdog's stdin and stdout. The watchdog
 * must say "ready\n" within 5 s. A pulse thread then writes "." every
 * 250 ms and needs "." back within 1 s; no ack, a wrong byte or a dead
 * watchdog makes the lease fail: on_fail is called once from the pulse
 * thread (it must stop the container itself).
 *
 * Watchdog side (watchdog_main): 2 s without a heartbeat, EOF, or any byte
 * other than "." → stop the container through the Engine API (t=0), up to
 * 3 attempts of 5 s each, then exit.
 */

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define LEASE_READY_MS		5000
#define LEASE_PULSE_MS		250
#define LEASE_ACK_MS		1000
#define WATCHDOG_SILENCE_MS	2000
#define WATCHDOG_STOP_ATTEMPTS	3
#define WATCHDOG_STOP_TIMEOUT_MS 5000
#define LEASE_HISTORY		32	/* ack round trips kept for the console */

struct lease;

typedef void (*lease_fail_fn)(void *ctx, const char *reason);

struct lease_status {
	bool armed;
	bool failed;
	char reason[32];	/* fixed: "no ack", "wrong byte", "watchdog gone", … */
	uint64_t pulses, acks;
	int64_t last_ack_us;	/* round trip of the latest ack */
	int64_t max_ack_us;
	int64_t last_ack_mono_ms;	/* CLOCK_MONOTONIC ms of the latest ack */
	long watchdog_pid;
	size_t n_history;		/* history_us[0..n): latest round trips, oldest first */
	int32_t history_us[LEASE_HISTORY];
};

/*
 * exe: the airlock binary to run as the watchdog (NULL: /proc/self/exe).
 * Returns once the watchdog said ready and the pulse thread runs.
 */
int lease_arm(const char *exe, const char *socket_path, const char *container_id,
	      lease_fail_fn on_fail, void *ctx, struct lease **out, struct al_err *err);
void lease_get_status(struct lease *l, struct lease_status *out);
/* Stop pulsing and close the socket: the watchdog stops the container again (harmless). */
void lease_close(struct lease *l);

/* `airlock watchdog SOCKET ID`: stdin/stdout are the lease socket. */
int watchdog_main(const char *socket_path, const char *container_id);

#endif
