/*
 * airlock: run an untrusted agent that holds confidential data inside a
 * hardened, network-less container whose only way out is the gateway.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "airlock-config.h"
#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
	const char *help;
};

static const struct command commands[] = {
	{ "console", cmd_console, "console [--config FILE]... [--demo] [--read-only] [--audit DB]",
	  "the operator console (also: airlock on a terminal)" },
	{ "watchdog", cmd_watchdog, "watchdog SOCKET ID",
	  "internal: the lease process the engine starts" },
	{ "doctor", cmd_doctor, "doctor [--json] [--config FILE]",
	  "check the host and the Docker daemon (PASS/FAIL per check)" },
	{ "run", cmd_run, "run --config FILE [--audit DB] [--otlp URL] [--json]",
	  "run one session headless; print a payload-free summary" },
	{ "inspect", cmd_inspect, "inspect CONTAINER [--json] [--config FILE]",
	  "show the admission report of an existing container" },
	{ "audit", cmd_audit, "audit verify DB [--json]", "re-check the audit log's hash chain" },
	{ "reap", cmd_reap, "reap [--json]", "stop and remove airlock containers whose owner is gone" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: airlock COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-44s %s\n", commands[i].usage, commands[i].help);
	fprintf(f, "\n  airlock --version | --help\n"
		"\nEvery command takes --help. Exit status: 0 ok, 1 a check failed or "
		"admission refused,\n2 usage error, 3 the job could not be done.\n");
}

int
main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return EXIT_ERROR;
		return cmd_console(argc, argv);
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("airlock %s\n", AIRLOCK_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		/* Once, before any thread exists. */
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			fprintf(stderr, "airlock: cannot initialise libcurl\n");
			return EXIT_ERROR;
		}
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "airlock: unknown command '%.64s' (try airlock --help)\n", argv[1]);
	return EXIT_USAGE;
}
