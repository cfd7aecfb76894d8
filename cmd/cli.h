#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

/*
 * The subcommands' shared helpers: printing checks and JSON, the default
 * audit path, failures. The command table and its parser are commands.h.
 */

#include <stdbool.h>
#include <stdio.h>

#include "checks.h"
#include "commands.h"
#include "err.h"

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
/* cli_fail for an audit database the engine could not open: path and reason. */
int cli_audit_fail(bool json, const char *command, const char *path, bool create,
		   const struct al_err *err);

/*
 * --since: a UTC time as the log stores it (2026-12-05T13:00, seconds
 * optional) or an age (90s, 15m, 2h, 7d), into the stored form. 0, or -1
 * when it is neither (say CLI_SINCE_USAGE).
 */
/*
 * The options each verb of a command takes, among those some verb takes
 * (a verb not in the rows takes none of them): the one table a command's
 * verbs are checked against before anything is opened or dialled.
 */
#define CLI_VERB_OPTIONS_MAX	6
struct cli_verb_options {
	const char *verb;
	enum cli_option opts[CLI_VERB_OPTIONS_MAX];
};

/*
 * An option given (o) that some row lists but verb's does not: a usage
 * error naming it ("--follow is not an option of audit verify"), else -1.
 */
int cli_verb_options_check(const char *command, const struct cli_verb_options *rows, size_t n,
			   const char *verb, const struct cli_opts *o);

#define CLI_SINCE_MAX	32
#define CLI_SINCE_USAGE	"--since wants a UTC time (2026-12-05T13:00) or an age (90s, 15m, 2h, 7d)"
int cli_parse_since(const char *v, char out[CLI_SINCE_MAX]);


#endif
