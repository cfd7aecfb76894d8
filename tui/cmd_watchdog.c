#include <stdio.h>

#include "cli.h"
#include "watchdog.h"

/*
 * `airlock watchdog SOCKET ID`: the lease process. The engine starts it
 * (fork + exec) with the lease socket as stdin and stdout; it is never
 * run by hand.
 */
int
cmd_watchdog(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "airlock watchdog: internal; started by the engine\n");
		return EXIT_USAGE;
	}
	return watchdog_main(argv[1], argv[2]);
}
