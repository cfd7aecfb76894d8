#ifndef AIRLOCK_COMMANDS_H
#define AIRLOCK_COMMANDS_H

/*
 * The command table: one row per subcommand (name, operands, options with
 * their argument and whether they may repeat, help text). The parser,
 * `airlock help`, each command's --help and the man page's synopsis check
 * all read it, so the usage line is written once and names exactly what is
 * accepted. Every command also takes --help and --version.
 *
 * Option rules: `--name VALUE` or `--name=VALUE`; a unique prefix of a
 * long name; -h for --help and -c for --config where --config is taken;
 * `--` ends the options; options and operands may mix. An option the row
 * does not list, a missing value, an option given twice that is not
 * repeatable, a missing required option and too many operands are usage
 * errors (EXIT_USAGE) naming the option and printing the usage line.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* Every option any command takes: enum, spelling, argument (NULL: a flag). */
#define CLI_OPTIONS(_) \
	_(JSON,      "--json",      NULL)   \
	_(CONFIG,    "--config",    "FILE") \
	_(AUDIT,     "--audit",     "DB")   \
	_(OTLP,      "--otlp",      "URL")  \
	_(DEMO,      "--demo",      NULL)   \
	_(READ_ONLY, "--read-only", NULL)   \
	_(ANCHOR,    "--anchor",    "SEQ:HASH") \
	_(SOCKET,    "--socket",    "PATH") \
	_(OPERATE_GROUP, "--operate-group", "GROUP") \
	_(VIEW_GROUP, "--view-group", "GROUP") \
	_(SESSION,   "--session",   "ID")   \
	_(ALL,       "--all",       NULL)   \
	_(WAIT,      "--wait",      "MS")   \
	_(FOLLOW,    "--follow",    NULL)   \
	_(STDIO,     "--stdio",     NULL)   \
	_(CONNECT,   "--connect",   "ENGINE") \
	_(NAME,      "--name",      "NAME") \
	_(SESSIONS_MAX, "--sessions-max", "N") \
	_(SINCE,     "--since",     "TIME") \
	_(UPSTREAMS_DIR, "--upstreams-dir", "DIR") \
	_(FOR,       "--for",       "DURATION") \
	_(CALLS,     "--calls",     "N")        \
	_(REST,      "--rest",      NULL)       \
	_(CALLED,    "--called",    "TOOL")     \
	_(WITHIN,    "--within",    "DURATION") \
	_(FLOW,      "--flow",      "FLOW")

enum cli_option {
	OPT_NONE,		/* ends a row's list of uses */
#define CLI_OPTION_ENUM(e, name, arg) OPT_##e,
	CLI_OPTIONS(CLI_OPTION_ENUM)
#undef CLI_OPTION_ENUM
	OPT_COUNT
};

#define CLI_REQUIRED	1u	/* the command cannot run without it */
#define CLI_REPEAT	2u	/* may be given up to CLI_REPEAT_MAX times */
#define CLI_REPEAT_MAX	64
#define CLI_USES_MAX	14
#define CLI_OPERANDS_MAX 4

struct cli_use {
	enum cli_option opt;
	unsigned flags;
	const char *what;	/* what it means for this command, for its --help */
};

/*
 * A command's own commands (ctl's, audit's): the first operand. Its
 * --help lists every one on a line of its own, and an unknown one is a
 * usage error before anything is opened or dialled.
 */
struct cli_verb {
	const char *name;
	const char *operand;	/* as its --help shows it ("TOOL"); NULL: takes none */
	const char *help;
};

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *operands;	/* as the usage line shows them; NULL: none */
	int max_operands;
	struct cli_use uses[CLI_USES_MAX];	/* up to the first OPT_NONE */
	const char *help;
	const struct cli_verb *verbs;	/* up to a row without a name; NULL: none */
};

extern const struct command cli_commands[];
extern const size_t cli_n_commands;

/* The row named name, or NULL. */
const struct command *cli_command(const char *name);
/*
 * The command's verb named verb, taking an operand or not as has_operand
 * says: -1 when it is one, else a usage error naming it (EXIT_USAGE).
 */
int cli_check_verb(const char *command, const char *verb, bool has_operand);
/* "doctor [--json] [--config FILE]": built from the row. */
void cli_usage_line(const struct command *c, char *out, size_t cap);
/* `airlock help`: every row's usage line and help text. */
void cli_usage(FILE *f);
const char *cli_option_name(enum cli_option o);
/* "airlock CMD: <message>" and the row's usage line on stderr; EXIT_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct cli_opts {
	const char *values[OPT_COUNT][CLI_REPEAT_MAX];	/* flags: "" when given */
	size_t n[OPT_COUNT];
	const char *positional[CLI_OPERANDS_MAX];
	int n_positional;
	/* Views of the above for the common options. */
	bool json;
	const char *config, *audit, *otlp;
	size_t sessions_max;	/* --sessions-max (1 .. SUPERVISOR_SESSIONS_MAX), 0 if not given */
};

/*
 * Parse argv (argv[0] is the subcommand, or anything for the console) for
 * the row named command. Returns -1 to continue, or an exit status: help
 * and version print and return EXIT_OK; errors print and return EXIT_USAGE.
 */
int cli_parse(const char *command, int argc, char **argv, struct cli_opts *o);

#endif
