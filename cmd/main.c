/*
 * airlock: run an untrusted agent that holds confidential data inside a
 * hardened, network-less container whose only way out is the gateway.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "airlock-config.h"
#include "cli.h"

int
main(int argc, char **argv)
{
	const struct command *c;

	/*
	 * Past a file-size limit (ulimit -f) a write fails with EFBIG rather
	 * than killing the engine: the audit log's refusal then ends the
	 * session audit_failed and its container is removed. Children get
	 * the default back (mcp.c, watchdog.c).
	 */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return EXIT_ERROR;
		return cmd_console(argc, argv);
	}
	if (argc < 2) {
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		cli_usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("airlock %s\n", AIRLOCK_VERSION);
		return EXIT_OK;
	}
	c = cli_command(argv[1]);
	if (c) {
		/* Once, before any thread exists. */
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			fprintf(stderr, "airlock: cannot initialise libcurl\n");
			return EXIT_ERROR;
		}
		return c->run(argc - 1, argv + 1);
	}
	fprintf(stderr, "airlock: unknown command '%.64s' (try airlock --help)\n", argv[1]);
	return EXIT_USAGE;
}
