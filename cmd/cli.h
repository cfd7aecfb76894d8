#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

/* Command-line subcommands and their shared helpers. */

#include <stdbool.h>
#include <stdio.h>

#include "checks.h"
#include "commands.h"
#include "err.h"

/* Exit statuses, documented in docs/airlock.1. */
enum {
	EXIT_OK = 0,
	EXIT_REFUSED = 1,	/* a check failed or admission refused */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_ERROR = 3,		/* could not do the job (daemon, config, I/O) */
};

int cmd_audit(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_reap(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_watchdog(int argc, char **argv);

/* "PASS id  observed" lines; failures also show what was expected. */
void cli_print_checks(FILE *f, const struct check_list *l, const char *fail_word);
/* Print a JSON value on one line to stdout; EXIT_ERROR if that fails. */
int cli_print_json(json_t *v);
/* $XDG_STATE_HOME/airlock/audit.db, else ~/.local/state/airlock/audit.db (made). */
int cli_default_audit_path(char *out, size_t cap);
/* True when argv[i] is -h or --help. */
int cli_is_help(const char *arg);

/*
 * A job that could not be done: "airlock CMD: <message>" on stderr and,
 * with --json, {"ok":false,"command":CMD,"error":<message>} on stdout.
 * The message is fixed text plus operator-given names. Returns EXIT_ERROR.
 */
int cli_fail(bool json, const char *command, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Why path cannot be read (or created, or written): strerror text, or "". */
const char *cli_path_reason(const char *path, bool create, char *buf, size_t cap);
/* cli_fail for an audit database the engine could not open: path and reason. */
int cli_audit_fail(bool json, const char *command, const char *path, bool create,
		   const struct al_err *err);


#endif
