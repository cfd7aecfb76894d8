#include <stdio.h>

#include "cli.h"
#include "watchdog.h"

/*
 * `airlock watchdog SOCKET ID`: the lease process (the engine runs the
 * smaller airlock-watchdog program with the same arguments). Its stdin
 * and stdout are the lease socket; it is never run by hand, and run so it
 * refuses any container that does not carry airlock's labels.
 */
int
cmd_watchdog(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse("watchdog", argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (o.n_positional != 2) {
		fprintf(stderr, "airlock watchdog: internal; started by the engine\n");
		return EXIT_USAGE;
	}
	return watchdog_main(o.positional[0], o.positional[1]);
}
