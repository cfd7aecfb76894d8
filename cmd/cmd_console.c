/*
 * airlock console: the command line's part. The command table says what is
 * accepted (--config and --connect may repeat); the console itself is
 * tui/'s, reached through console_run with plain data.
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "console.h"

_Static_assert(CLI_REPEAT_MAX <= CONSOLE_CONFIGS_MAX, "every --config fits");

static int
parse(int argc, char **argv, struct console_args *o)
{
	struct cli_opts c;
	int rc = cli_parse("console", argc, argv, &c);

	memset(o, 0, sizeof *o);
	if (rc >= 0)
		return rc;
	o->n_configs = c.n[OPT_CONFIG];
	memcpy(o->configs, c.values[OPT_CONFIG], o->n_configs * sizeof o->configs[0]);
	o->audit = c.audit;
	o->demo = c.n[OPT_DEMO] > 0;
	o->read_only = c.n[OPT_READ_ONLY] > 0;
	o->sessions_max = c.sessions_max;
	o->n_connect = c.n[OPT_CONNECT];
	if (o->n_connect > CONSOLE_CONNECT_MAX)
		return cli_usage_error("console", "--connect: at most %d engines", CONSOLE_CONNECT_MAX);
	memcpy(o->connect, c.values[OPT_CONNECT], o->n_connect * sizeof o->connect[0]);
	if (o->n_connect && (o->demo || o->n_configs || o->sessions_max))
		return cli_usage_error("console", "--connect attaches to running engines: "
				       "--demo, --config and --sessions-max are for the console's own "
				       "(start sessions there with :run or airlock ctl start)");
	return -1;
}

int
cmd_console(int argc, char **argv)
{
	struct console_args o;
	char audit[PATH_MAX];
	int rc = parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "airlock console: needs a terminal on stdin and stdout\n");
		return EXIT_USAGE;
	}
	/* The demo's own log (removed with it) only when the operator named none. */
	if (!o.audit && !o.demo && !o.n_connect && cli_default_audit_path(audit, sizeof audit) == 0)
		o.default_audit = audit;
	return console_run(&o);
}
