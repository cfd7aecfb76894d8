#include "commands.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "airlock-config.h"
#include "supervisor.h"	/* SUPERVISOR_SESSIONS_MAX */

#define USAGE_COLUMN	44	/* the width of the usage column in the command list */
#define USAGE_MAX	512	/* a usage line, whole: ctl's is past 200 */

static const struct {
	const char *name;
	const char *arg;
} options[OPT_COUNT] = {
	[OPT_NONE] = { "", NULL },
#define CLI_OPTION_ROW(e, name, arg) [OPT_##e] = { name, arg },
	CLI_OPTIONS(CLI_OPTION_ROW)
#undef CLI_OPTION_ROW
};

#define OPT(o, what)	{ OPT_##o, 0, what }
#define OPT_REQ(o, what)	{ OPT_##o, CLI_REQUIRED, what }
#define OPT_REP(o, what)	{ OPT_##o, CLI_REPEAT, what }

#define JSON_WHAT	"print one JSON object instead of text (errors too)"
#define SESSIONS_MAX_WHAT	"sessions held at once (default: host memory / 32 MiB, 16..1024)"
#define CONFIGS_WHAT	"a session to start at once (repeat for more, up to 64)"
#define AUDIT_WHAT	"the audit log (default $XDG_STATE_HOME/airlock/audit.db)"
#define OTLP_WHAT	"also export each audit entry as a span to URL/v1/traces"

static const struct cli_verb audit_verbs[] = {
	{ "verify", "DB", "re-check the hash chain up to its head (and --anchor)" },
	{ "tail", "DB", "its entries, oldest first (--since, --session, --follow)" },
	{ "timeline", "DB", "the policy story: sessions, cutovers and acks (--since)" },
	{ "propose", "DB", "an incident file allowing what was denied (--session)" },
	{ "hash", "DB FILE", "FILE's bytes (-: stdin's) hashed with the log's key" },
	{ NULL, NULL, NULL },
};

static const struct cli_verb ctl_verbs[] = {
	{ "status", NULL, "the engine's name, your role, counts, revision, freeze" },
	{ "sessions", NULL, "every session, one line each: state and container" },
	{ "tools", NULL, "each session's tools: allowed, revoked or not approved" },
	{ "start", "FILE", "a session from a config file, read with your rights" },
	{ "stop", "ID", "stop one session; its container is removed" },
	{ "revoke", "TOOL", "deny TOOL (--all or --session ID), wait for every ack" },
	{ "restore", "TOOL", "allow TOOL again, as revoke (--for, --calls: a grant)" },
	{ "hold", "TOOL", "its calls wait for approve or deny; TOOL may be an alias" },
	{ "pending", NULL, "the held calls waiting now: ids, sizes, hashes (--follow)" },
	{ "approve", "ID", "let the held call ID go on (--rest: its later ones too)" },
	{ "deny", "ID", "deny the held call ID (hold_denied)" },
	{ "apply", "FILE", "an incident policy file: its cutovers, on every session" },
	{ "stop-all", NULL, "stop every session" },
	{ "freeze", NULL, "the kill switch: every call of every session denied" },
	{ "thaw", NULL, "lift the freeze" },
	{ "quarantine", "[ID]", "hold ID (--all, --called TOOL): calls denied, paused" },
	{ "release", "[ID]", "lift a quarantine of ID (or --all): unpaused" },
	{ "events", NULL, "the engine's recent events (--follow: as they come)" },
	{ "audit", NULL, "its audit log's newest entries, payload-free (--follow)" },
	{ "timeline", NULL, "its log's policy story (--since, --follow)" },
	{ "metrics", NULL, "OpenMetrics text: sessions, calls, cutovers; no payload" },
	{ "host", NULL, "the engine's host checks, run again now (installed.KEY too)" },
	{ NULL, NULL, NULL },
};

const struct command cli_commands[] = {
	{ "console", cmd_console, NULL, 0,
	  { OPT_REP(CONFIG, CONFIGS_WHAT),
	    OPT(DEMO, "the built-in demo: four confined sessions, kept alive"),
	    OPT(READ_ONLY, "refuse every request that changes a session or the policy"),
	    OPT(AUDIT, AUDIT_WHAT),
	    OPT_REP(CONNECT, "attach to a running engine: its socket, or ssh://[user@]host[:port][/socket]; repeat for more (up to 8)"),
	    OPT(SESSIONS_MAX, SESSIONS_MAX_WHAT) },
	  "the operator console (also: airlock on a terminal)", NULL },
	{ "watchdog", cmd_watchdog, "SOCKET ID", 2, { { 0 } },
	  "internal: the lease process the engine starts", NULL },
	{ "doctor", cmd_doctor, NULL, 0,
	  { OPT(JSON, JSON_WHAT),
	    OPT(CONFIG, "also check what this session needs: runtime, image, catalog"),
	    OPT(UPSTREAMS_DIR, "the installed upstreams to check, as serve's (default /etc/airlock/upstreams.d)") },
	  "check the host and the Docker daemon (PASS/FAIL per check)", NULL },
	{ "run", cmd_run, NULL, 0,
	  { OPT_REQ(CONFIG, "the session: profile, upstreams, aliases, tools, bounds"),
	    OPT(AUDIT, AUDIT_WHAT),
	    OPT(OTLP, OTLP_WHAT),
	    OPT(JSON, JSON_WHAT) },
	  "run one session headless; print a payload-free summary", NULL },
	{ "inspect", cmd_inspect, "CONTAINER", 1,
	  { OPT(JSON, JSON_WHAT),
	    OPT(CONFIG, "judge against this profile instead of the defaults"),
	    OPT(SOCKET, "its session's engine, for its upstreams (default as serve's)") },
	  "show the admission report of an existing container", NULL },
	{ "audit", cmd_audit, "COMMAND DB [FILE]", 3,
	  { OPT(JSON, JSON_WHAT),
	    OPT(ANCHOR, "verify: also require this entry (a head printed earlier)"),
	    OPT(FOLLOW, "tail: keep printing entries as they are appended"),
	    OPT(SESSION, "tail, propose: only this session's entries (its id, or a unique prefix)"),
	    OPT(SINCE, "tail, timeline, propose: from a UTC time or an age (15m, 2h)") },
	  "the audit log: its chain, entries, story and denials (payload-free)", audit_verbs },
	{ "image", cmd_image, "add-shim IMAGE", 2, { OPT(JSON, JSON_WHAT) },
	  "build IMAGE with this engine's airlock-shim at /airlock/shim", NULL },
	{ "reap", cmd_reap, NULL, 0, { OPT(JSON, JSON_WHAT) },
	  "stop and remove airlock containers whose owner is gone", NULL },
	{ "serve", cmd_serve, NULL, 0,
	  { OPT_REP(CONFIG, CONFIGS_WHAT),
	    OPT(SOCKET, "the control socket (default /run/airlock/engine.sock as root)"),
	    OPT(AUDIT, AUDIT_WHAT),
	    OPT(OTLP, OTLP_WHAT),
	    OPT(OPERATE_GROUP, "members may operate (default airlock)"),
	    OPT(VIEW_GROUP, "members may view (default airlock-view)"),
	    OPT(NAME, "the engine's name in consoles and ctl (default HOST:PID)"),
	    OPT(SESSIONS_MAX, SESSIONS_MAX_WHAT),
	    OPT(UPSTREAMS_DIR, "installed upstreams, root's (default /etc/airlock/upstreams.d)") },
	  "run the engine headless, driven over its control socket", NULL },
	{ "ctl", cmd_ctl, "COMMAND [ARG]", 2,
	  { OPT(SOCKET, "the engine's control socket (default as serve's)"),
	    OPT(JSON, "print the engine's reply objects, one per line"),
	    OPT_REP(SESSION, "revoke, restore or hold on this session (repeat for more)"),
	    OPT(ALL, "revoke, restore, hold, quarantine, release: every session"),
	    OPT(WAIT, "wait this long for every acknowledgement (default 5000)"),
	    OPT(FOR, "restore: a grant that lapses after 90s, 15m, 2h (at most 24h)"),
	    OPT(CALLS, "restore: a grant that lapses after N allowed calls (1..1000000)"),
	    OPT(FOLLOW, "events, pending, audit, timeline: print more as they come"),
	    OPT(SINCE, "timeline: the events from a UTC time or an age (15m, 2h)"),
	    OPT(REST, "approve: the tool's later calls in that session too"),
	    OPT(CALLED, "quarantine: every live session that called TOOL (--within)"),
	    OPT(WITHIN, "quarantine --called: the window, 90s, 15m, 2h (default 10m)"),
	    OPT(FLOW, "hold, restore: a class flow CLASS>SINK, not a TOOL"),
	    OPT(STDIO, "copy between stdin/stdout and the socket (for ssh)") },
	  "talk to a running engine: sessions, tools, revoke, hold, freeze, events", ctl_verbs },
};

const size_t cli_n_commands = sizeof cli_commands / sizeof cli_commands[0];

const struct command *
cli_command(const char *name)
{
	size_t i;

	for (i = 0; name && i < cli_n_commands; i++)
		if (strcmp(cli_commands[i].name, name) == 0)
			return &cli_commands[i];
	return NULL;
}

int
cli_check_verb(const char *command, const char *verb, bool has_operand)
{
	const struct command *c = cli_command(command);
	const struct cli_verb *v;

	for (v = c ? c->verbs : NULL; v && v->name; v++) {
		if (strcmp(v->name, verb) != 0)
			continue;
		/* "[ID]": an operand or none (quarantine ID, or --all) */
		if (v->operand && v->operand[0] == '[')
			return -1;
		if (!v->operand != !has_operand)
			return cli_usage_error(command, v->operand ? "%s wants %s" : "%s takes no %s",
					       verb, v->operand ? v->operand : "operand");
		return -1;
	}
	return cli_usage_error(command, "unknown command '%.32s' (airlock %s --help lists them)",
			       verb, command);
}

const char *
cli_option_name(enum cli_option o)
{
	return o < OPT_COUNT ? options[o].name : "?";
}

static void __attribute__((format(printf, 3, 4)))
append(char *out, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(out);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(out + n, cap - n, fmt, ap);
	va_end(ap);
}

/* "--config FILE", "--json": an option and its argument. */
static void
spell_option(enum cli_option o, char *out, size_t cap)
{
	snprintf(out, cap, "%s%s%s", options[o].name, options[o].arg ? " " : "",
		 options[o].arg ? options[o].arg : "");
}

/* "--config FILE", "[--config FILE]...", "[--json]" */
static void
append_use(char *out, size_t cap, const struct cli_use *u)
{
	bool required = u->flags & CLI_REQUIRED;
	char spelled[64];

	spell_option(u->opt, spelled, sizeof spelled);
	append(out, cap, " %s%s%s%s", required ? "" : "[", spelled, required ? "" : "]",
	       u->flags & CLI_REPEAT ? "..." : "");
}

void
cli_usage_line(const struct command *c, char *out, size_t cap)
{
	size_t i;

	snprintf(out, cap, "%s", c->name);
	if (c->operands)
		append(out, cap, " %s", c->operands);
	for (i = 0; i < CLI_USES_MAX && c->uses[i].opt != OPT_NONE; i++)
		append_use(out, cap, &c->uses[i]);
}

void
cli_usage(FILE *f)
{
	char line[USAGE_MAX];
	size_t i;

	fprintf(f, "usage: airlock COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < cli_n_commands; i++) {
		cli_usage_line(&cli_commands[i], line, sizeof line);
		/* A usage too long for its column has its words to itself. */
		if (strlen(line) > USAGE_COLUMN)
			fprintf(f, "  %s\n  %-*s %s\n", line, USAGE_COLUMN, "",
				cli_commands[i].help);
		else
			fprintf(f, "  %-*s %s\n", USAGE_COLUMN, line, cli_commands[i].help);
	}
	fprintf(f, "\n  airlock --version | --help\n"
		"\nEvery command takes --help. Exit status: 0 ok, 1 a check failed or "
		"admission refused,\n2 usage error, 3 the job could not be done.\n");
}

/* "airlock CMD: <what is wrong>" and the usage line, on stderr. */
static int __attribute__((format(printf, 3, 0)))
usage_verror(const char *command, const char *usage, const char *fmt, va_list ap)
{
	fprintf(stderr, "airlock %s: ", command);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nusage: airlock %s\n", usage);
	return EXIT_USAGE;
}

int
cli_usage_error(const char *command, const char *fmt, ...)
{
	const struct command *c = cli_command(command);
	char line[USAGE_MAX] = "";
	va_list ap;

	if (c)
		cli_usage_line(c, line, sizeof line);
	va_start(ap, fmt);
	usage_verror(command, line, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

/* ---- the parser ---- */

struct parse {
	const struct command *c;
	struct cli_opts *o;
	char usage[USAGE_MAX];
};

static int __attribute__((format(printf, 2, 3)))
usage_error(const struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	usage_verror(p->c->name, p->usage, fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

/* The row's use of an option, or NULL when the command does not take it. */
static const struct cli_use *
use_of(const struct command *c, enum cli_option opt)
{
	size_t i;

	for (i = 0; opt != OPT_NONE && i < CLI_USES_MAX && c->uses[i].opt != OPT_NONE; i++)
		if (c->uses[i].opt == opt)
			return &c->uses[i];
	return NULL;
}

#define OPT_HELP	(OPT_COUNT + 0)
#define OPT_VERSION	(OPT_COUNT + 1)
#define OPT_AMBIGUOUS	(-2)

static bool
is_prefix(const char *word, size_t n, const char *name)
{
	return strncmp(word, name, n) == 0;
}

/*
 * The option a long word names: an exact spelling, else the only one of
 * the row's options (and --help, --version) it is a prefix of. -1 if none.
 */
static int
lookup_long(const struct command *c, const char *word, size_t n)
{
	int found = -1, i;

	for (i = OPT_NONE + 1; i < OPT_COUNT; i++)
		if (strlen(options[i].name) == n && is_prefix(word, n, options[i].name))
			return i;
	if (n == 6 && is_prefix(word, n, "--help"))
		return OPT_HELP;
	if (n == 9 && is_prefix(word, n, "--version"))
		return OPT_VERSION;
	for (i = OPT_NONE + 1; i < OPT_COUNT; i++)
		if (use_of(c, (enum cli_option)i) && is_prefix(word, n, options[i].name))
			found = found == -1 ? i : OPT_AMBIGUOUS;
	if (is_prefix(word, n, "--help"))
		found = found == -1 ? OPT_HELP : OPT_AMBIGUOUS;
	if (is_prefix(word, n, "--version"))
		found = found == -1 ? OPT_VERSION : OPT_AMBIGUOUS;
	return n > 2 ? found : -1;
}

static int
store(struct parse *p, enum cli_option opt, const char *value)
{
	const struct cli_use *u = use_of(p->c, opt);
	struct cli_opts *o = p->o;

	if (!u)
		return usage_error(p, "%s is not an option of this command", options[opt].name);
	if (o->n[opt] > 0 && !(u->flags & CLI_REPEAT))
		return usage_error(p, "%s given twice (it takes one value)", options[opt].name);
	if (o->n[opt] == CLI_REPEAT_MAX)
		return usage_error(p, "%s given more than %d times", options[opt].name,
				   CLI_REPEAT_MAX);
	o->values[opt][o->n[opt]++] = value ? value : "";
	return -1;
}

/*
 * A command's --help: its usage line first (exactly what it accepts), what
 * it does, and what each option means for it.
 */
static void
command_help(const struct command *c, const char *usage)
{
	char name[USAGE_COLUMN];
	size_t i;

	const struct cli_verb *v;

	printf("usage: airlock %s\n\n%s\n", usage, c->help);
	for (v = c->verbs; v && v->name; v++) {
		if (v == c->verbs)
			printf("\ncommands:\n");
		snprintf(name, sizeof name, "%s%s%s", v->name, v->operand ? " " : "",
			 v->operand ? v->operand : "");
		printf("  %-17s %s\n", name, v->help);
	}
	for (i = 0; i < CLI_USES_MAX && c->uses[i].opt != OPT_NONE; i++) {
		if (i == 0)
			printf("\noptions:\n");
		spell_option(c->uses[i].opt, name, sizeof name);
		printf("  %-17s %s\n", name, c->uses[i].what);
	}
	printf("\nSee airlock(1) (from a build tree: man -l docs/airlock.1).\n");
}

/* One word that starts with "-". *i moves past a separate value. */
static int
option_word(struct parse *p, int argc, char **argv, int *i)
{
	const char *w = argv[*i], *eq = strchr(w, '='), *value = NULL;
	size_t n = w[1] == '-' ? (eq ? (size_t)(eq - w) : strlen(w)) : 0;
	int opt = n ? lookup_long(p->c, w, n)
		    : strcmp(w, "-h") == 0 ? OPT_HELP
		    : strcmp(w, "-c") == 0 ? OPT_CONFIG : -1;

	if (opt == -1 || opt == OPT_AMBIGUOUS)
		return usage_error(p, "unknown or incomplete option '%.64s'", w);
	if (opt == OPT_HELP || opt == OPT_VERSION) {
		if (opt == OPT_HELP)
			command_help(p->c, p->usage);
		else
			printf("airlock %s\n", AIRLOCK_VERSION);
		return EXIT_OK;
	}
	if (options[opt].arg && eq && n)
		value = eq + 1;
	else if (options[opt].arg && *i + 1 < argc)
		value = argv[++*i];
	else if (options[opt].arg)
		return usage_error(p, "%s wants a value (%s)", options[opt].name, options[opt].arg);
	else if (eq && n)
		return usage_error(p, "%s takes no value", options[opt].name);
	return store(p, (enum cli_option)opt, value);
}

static int
operand(struct parse *p, const char *w)
{
	struct cli_opts *o = p->o;

	if (o->n_positional >= p->c->max_operands)
		return usage_error(p, "unexpected argument '%.64s'", w);
	o->positional[o->n_positional++] = w;
	return -1;
}

/* --sessions-max N: a whole number within the engine's ceiling. */
static int
sessions_max(struct parse *p)
{
	const char *v = p->o->n[OPT_SESSIONS_MAX] ? p->o->values[OPT_SESSIONS_MAX][0] : NULL;
	unsigned long n;

	if (!v)
		return -1;
	n = strspn(v, "0123456789") == strlen(v) && strlen(v) <= 5 ? strtoul(v, NULL, 10) : 0;
	if (n < 1 || n > SUPERVISOR_SESSIONS_MAX)
		return usage_error(p, "--sessions-max wants a number from 1 to %d",
				   SUPERVISOR_SESSIONS_MAX);
	p->o->sessions_max = n;
	return -1;
}

static int
finish(struct parse *p)
{
	struct cli_opts *o = p->o;
	size_t i;

	for (i = 0; i < CLI_USES_MAX && p->c->uses[i].opt != OPT_NONE; i++) {
		enum cli_option opt = p->c->uses[i].opt;

		if ((p->c->uses[i].flags & CLI_REQUIRED) && o->n[opt] == 0) {
			char what[64];

			spell_option(opt, what, sizeof what);
			return usage_error(p, "%s is required", what);
		}
	}
	o->json = o->n[OPT_JSON] > 0;
	o->config = o->n[OPT_CONFIG] ? o->values[OPT_CONFIG][0] : NULL;
	o->audit = o->n[OPT_AUDIT] ? o->values[OPT_AUDIT][0] : NULL;
	o->otlp = o->n[OPT_OTLP] ? o->values[OPT_OTLP][0] : NULL;
	return sessions_max(p);
}

int
cli_parse(const char *command, int argc, char **argv, struct cli_opts *o)
{
	struct parse p = { .c = cli_command(command), .o = o };
	bool options_end = false;
	int i, rc;

	memset(o, 0, sizeof *o);
	if (!p.c)
		return EXIT_USAGE;
	cli_usage_line(p.c, p.usage, sizeof p.usage);
	for (i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (!options_end && strcmp(w, "--") == 0) {
			options_end = true;
			continue;
		}
		if (!options_end && w[0] == '-' && w[1] != '\0')
			rc = option_word(&p, argc, argv, &i);
		else
			rc = operand(&p, w);
		if (rc >= 0)
			return rc;
	}
	return finish(&p);
}
