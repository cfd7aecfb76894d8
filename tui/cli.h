#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

/* Command-line subcommands and their shared helpers. */

#include <stdio.h>

#include "checks.h"

/* Exit statuses, documented in docs/airlock.1. */
enum {
	EXIT_OK = 0,
	EXIT_REFUSED = 1,	/* a check failed or admission refused */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_ERROR = 3,		/* could not do the job (daemon, config, I/O) */
};

int cmd_audit(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_reap(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_watchdog(int argc, char **argv);

/* "PASS id  observed" lines; failures also show what was expected. */
void cli_print_checks(FILE *f, const struct check_list *l, const char *fail_word);
/* Print a JSON value on one line to stdout; EXIT_ERROR if that fails. */
int cli_print_json(json_t *v);
/* $XDG_STATE_HOME/airlock/audit.db, else ~/.local/state/airlock/audit.db (made). */
int cli_default_audit_path(char *out, size_t cap);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);



#include <stdbool.h>

struct cli_opts {
	bool json;
	const char *config;
	const char *audit;	/* --audit DB */
	const char *otlp;	/* --otlp URL */
	const char *positional[4];
	int n_positional;
};

/*
 * Parse --json, --config FILE, --audit DB, --otlp URL, --help and
 * --version for a subcommand
 * (argv[0] is the subcommand). Returns -1 to continue, or an exit status
 * (help and version print and return EXIT_OK; bad flags EXIT_USAGE).
 */
int cli_parse(int argc, char **argv, const char *usage, int max_positional,
	      struct cli_opts *o);
#endif
