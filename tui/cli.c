#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "airlock-config.h"

int
cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/*
 * A command takes exactly the options its usage line names: the usage text
 * is written once and is also the list of what is accepted.
 */
static bool
usage_names(const char *usage, const char *option)
{
	size_t n = strlen(option);
	const char *p;

	for (p = strstr(usage, option); p; p = strstr(p + 1, option))
		if (p[n] == '\0' || p[n] == ' ' || p[n] == ']')
			return true;
	return false;
}

static int
refuse_option(char **argv, const char *option, const char *usage)
{
	fprintf(stderr, "airlock %s: %s is not an option of this command\nusage: airlock %s\n",
		argv[0], option, usage);
	return EXIT_USAGE;
}

int
cli_parse(int argc, char **argv, const char *usage, int max_positional,
	  struct cli_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'c' },
		{ "audit", required_argument, NULL, 'a' },
		{ "otlp", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hc:", longopts, NULL)) != -1) {
		const char *name = c == 'j' ? "--json" : c == 'c' ? "--config" : c == 'a' ? "--audit"
				 : c == 'o' ? "--otlp" : NULL;

		if (name && !usage_names(usage, name))
			return refuse_option(argv, name, usage);
		switch (c) {
		case 'j': o->json = true; break;
		case 'c': o->config = optarg; break;
		case 'a': o->audit = optarg; break;
		case 'o': o->otlp = optarg; break;
		case 'h': printf("usage: airlock %s\n", usage); return EXIT_OK;
		case 'V': printf("airlock %s\n", AIRLOCK_VERSION); return EXIT_OK;
		default:
			fprintf(stderr, "airlock %s: unknown or incomplete option '%.64s'\n"
				"usage: airlock %s\n", argv[0], argv[optind - 1], usage);
			return EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++) {
		if (o->n_positional >= max_positional) {
			fprintf(stderr, "airlock %s: unexpected argument '%.64s'\nusage: airlock %s\n",
				argv[0], argv[optind], usage);
			return EXIT_USAGE;
		}
		o->positional[o->n_positional++] = argv[optind];
	}
	return -1;
}

void
cli_print_checks(FILE *f, const struct check_list *l, const char *fail_word)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct check_item *it = &l->items[i];

		if (!it->run)
			fprintf(f, "--    %-20s not run\n", it->id);
		else if (it->pass)
			fprintf(f, "PASS  %-20s %s\n", it->id, it->observed);
		else
			fprintf(f, "%-5s %-20s %s (expected %s)\n", fail_word, it->id,
				it->observed, it->expected);
	}
	if (l->oom)
		fprintf(f, "%-5s %-20s %s\n", fail_word, "report", "incomplete (out of memory)");
}

int
cli_print_json(json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
	int rc = EXIT_ERROR;

	if (s && puts(s) >= 0 && fflush(stdout) == 0)
		rc = EXIT_OK;
	free(s);
	return rc;
}

/* mkdir -p, each level 0700. */
static int
make_dirs(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/* $XDG_STATE_HOME/airlock/audit.db, else ~/.local/state/airlock/audit.db. */
int
cli_default_audit_path(char *out, size_t cap)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[4096];

	if (state && state[0] == '/')
		snprintf(dir, sizeof dir, "%s/airlock", state);
	else if (home && home[0] == '/')
		snprintf(dir, sizeof dir, "%s/.local/state/airlock", home);
	else
		return -1;
	if (make_dirs(dir) < 0)
		return -1;
	snprintf(out, cap, "%s/audit.db", dir);
	return 0;
}
