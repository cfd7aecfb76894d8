#ifndef AIRLOCK_CONSOLE_H
#define AIRLOCK_CONSOLE_H

/*
 * The console room's one entry (docs/console.md): `airlock console` parses
 * its command line in cmd/cmd_console.c and hands over plain data here.
 */

#include <stdbool.h>
#include <stddef.h>

#define CONSOLE_CONFIGS_MAX	64	/* --config, repeated */
#define CONSOLE_CONNECT_MAX	8	/* --connect, repeated (the model's links) */

/* What console_run returns: airlock(1)'s exit statuses. */
enum {
	CONSOLE_OK = 0,
	CONSOLE_REFUSED = 1,	/* containers were left, or the audit log refused writes */
	CONSOLE_ERROR = 3,	/* could not start, or the daemon did not answer */
};

struct console_args {
	const char *configs[CONSOLE_CONFIGS_MAX];	/* sessions to start at once */
	size_t n_configs;
	const char *connect[CONSOLE_CONNECT_MAX];	/* engines to attach to; 0: the console's own */
	size_t n_connect;
	const char *audit;		/* --audit, or NULL */
	const char *default_audit;	/* the log when neither --audit nor the demo names one; NULL: none */
	bool demo, read_only;
	size_t sessions_max;		/* 0: the host's default */
};

/*
 * The console on this terminal (stdin and stdout are one) until the
 * operator quits: its own engine, or the engines in connect. Messages on
 * stderr start "airlock console: ".
 */
int console_run(const struct console_args *a);

#endif
