/*
 * airlock-watchdog: the lease process on its own (watchdog.h). The engine
 * execs it as `airlock-watchdog watchdog SOCKET ID`; the word "watchdog"
 * keeps the command line what `ps` and the operator's tools already match.
 * It is never run by hand.
 */
#include <stdio.h>
#include <string.h>

#include "watchdog.h"

int
main(int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[1], "watchdog") != 0) {
		fprintf(stderr, "airlock-watchdog: internal; started by the engine\n");
		return 2;
	}
	return watchdog_main(argv[2], argv[3]);
}
