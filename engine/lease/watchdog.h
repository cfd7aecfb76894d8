#ifndef AIRLOCK_WATCHDOG_H
#define AIRLOCK_WATCHDOG_H

/*
 * The lease (docs/guarantees.md, "What supervision guarantees"): a separate watchdog process stops the container
 * when the engine dies or stalls, and the engine stops it when the
 * watchdog dies or stalls.
 *
 * Engine side (lease_*): fork + exec of the small airlock-watchdog program
 * as `airlock-watchdog watchdog SOCKET ID` (a fresh process image that
 * never held plaintext, linked against libc only), detached (double fork,
 * setsid), every other descriptor closed, RLIMIT_CORE 0/0, no environment.
 * The two talk over a socketpair that is the watchdog's stdin and stdout.
 * lease_spawn starts it and returns at once; the pulse thread waits for
 * "ready\n" (within 5 s) while the caller starts the container, and
 * lease_wait_ready is the barrier before any data enters. The pulse thread
 * then writes "." every 250 ms and needs "." back within 1 s; no ack, a
 * wrong byte or a dead watchdog makes the lease fail: on_fail is called
 * once from the pulse thread (it must stop the container itself).
 *
 * Watchdog side (watchdog_main, watchdog_proc.c): 2 s without a heartbeat,
 * EOF, or any byte other than "." or "d" → stop the container through the
 * Engine API (t=0), up to 3 attempts of 5 s each, then exit. "d" (done)
 * is sent only by lease_done, once the engine has itself removed the
 * container and seen it gone: the watchdog then exits without calling the
 * daemon.
 *
 * The session's upstream processes (lease_guard): "g<pid>;" names the
 * process group an upstream leads. When the watchdog acts it first
 * SIGKILLs each such group, so what an upstream started does not outlive
 * its engine either (the upstream itself dies with the engine's thread:
 * mcp_confine.h). A group whose leader's pid now names another process
 * (another start time than at its registration) is spared. It holds
 * CAP_KILL for this where the engine does (an upstream runs as another
 * uid): its only capability. At most LEASE_GROUPS_MAX groups; one more,
 * or a malformed message, is a wrong byte.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define LEASE_READY_MS		5000
#define LEASE_PULSE_MS		250
#define LEASE_ACK_MS		1000
#define WATCHDOG_SILENCE_MS	2000
#define WATCHDOG_STOP_TIMEOUT_MS 5000	/* one stop request */
/*
 * A stop that fails (no daemon at the socket, an error answer) is tried
 * again, first after WATCHDOG_RETRY_FIRST_MS, the wait doubling up to
 * WATCHDOG_RETRY_MAX_MS, for WATCHDOG_STOP_WINDOW_MS in all: a daemon that
 * restarts within the window still gets the container stopped, even when
 * the engine is gone too.
 */
#define WATCHDOG_RETRY_FIRST_MS	100
#define WATCHDOG_RETRY_MAX_MS	2000
#define WATCHDOG_STOP_WINDOW_MS	(10 * 60 * 1000)
#define LEASE_HISTORY		32	/* ack round trips kept for the console */
#define LEASE_PULSE		'.'	/* engine → watchdog heartbeat, and its ack */
#define LEASE_DONE		'd'	/* engine → watchdog: container removed, exit quietly */
#define LEASE_GUARD		'g'	/* engine → watchdog: "g<pid>;", a group to kill */
#define LEASE_GUARD_END		';'
#define LEASE_GROUPS_MAX	64

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
 * exe: the airlock binary whose directory holds airlock-watchdog (NULL:
 * /proc/self/exe); else the installed AIRLOCK_LIBEXECDIR copy is used.
 * lease_spawn returns once the watchdog process exists and the pulse
 * thread runs; the watchdog is armed from its ready on. lease_wait_ready
 * returns 0 once it said ready, -1 when it did not within LEASE_READY_MS
 * (on_fail is not called for that: the caller ends the session).
 * lease_arm is the two in one.
 */
/*
 * The watchdog program for exe as lease_spawn finds it: 0 with its path in
 * out, or -1 with where it was looked for in out (self_exe_program).
 */
int lease_program(const char *exe, char *out, size_t cap);
int lease_spawn(const char *exe, const char *socket_path, const char *container_id,
		lease_fail_fn on_fail, void *ctx, struct lease **out, struct al_err *err);
int lease_wait_ready(struct lease *l, struct al_err *err);
int lease_arm(const char *exe, const char *socket_path, const char *container_id,
	      lease_fail_fn on_fail, void *ctx, struct lease **out, struct al_err *err);
void lease_get_status(struct lease *l, struct lease_status *out);
/* Stop pulsing and close the socket: the watchdog stops the container again (harmless). */
void lease_close(struct lease *l);
/*
 * Only once the container is removed and seen gone: stop pulsing, tell the
 * watchdog it is done ("d"), close. The watchdog exits without a request.
 */
void lease_done(struct lease *l);
/*
 * The watchdog kills the process group pid leads when it acts (above).
 * Safe with NULL; a watchdog already gone is found by the next pulse.
 */
void lease_guard(struct lease *l, pid_t pid);

/* `airlock-watchdog watchdog SOCKET ID`: stdin/stdout are the lease socket. */
int watchdog_main(const char *socket_path, const char *container_id);

/*
 * One HTTP/1.1 request without a body over the daemon's unix socket
 * (Connection: close), for the watchdog's own calls: resp gets up to cap-1
 * bytes of the answer (status line, headers, body), NUL-terminated.
 * Returns the HTTP status, or -1 when no answer came within timeout_ms.
 */
int watchdog_http(const char *socket_path, const char *method, const char *path,
		  int timeout_ms, char *resp, size_t cap, size_t *len);

#endif
