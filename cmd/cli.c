#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "airlock-config.h"
#include "path_reason.h"

int
cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
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

int
cli_fail(bool json, const char *command, const char *fmt, ...)
{
	char msg[AL_ERR_MAX + 256];	/* an engine's error, whole, with what it is about */
	json_t *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "airlock %s: %s\n", command, msg);
	if (json) {
		out = json_pack("{s:b, s:s, s:s}", "ok", 0, "command", command, "error", msg);
		cli_print_json(out);
		json_decref(out);
	}
	return EXIT_ERROR;
}

int
cli_audit_fail(bool json, const char *command, const char *path, bool create,
	       const struct al_err *err)
{
	char text[AL_ERR_MAX + 256];

	path_failure(text, sizeof text, "audit", path, create, err->msg);
	return cli_fail(json, command, "%s", text);
}

/* Stored times are ISO 8601 UTC, so one string compare orders them. */
int
cli_parse_since(const char *v, char out[CLI_SINCE_MAX])
{
	static const char units[] = "smhd";
	static const long secs[] = { 1, 60, 3600, 86400 };
	char *end;
	long n = strtol(v, &end, 10);
	const char *u = *end ? strchr(units, *end) : NULL;
	time_t t;
	struct tm tm;

	if (end != v && n >= 0 && n <= 3650L * 86400 && u && end[1] == '\0') {
		t = time(NULL) - n * secs[u - units];
		strftime(out, CLI_SINCE_MAX, "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
		return 0;
	}
	if (strlen(v) >= 16 && strlen(v) < CLI_SINCE_MAX && strptime(v, v[16] ? "%Y-%m-%dT%H:%M:%S" :
							  "%Y-%m-%dT%H:%M", &tm)) {
		snprintf(out, CLI_SINCE_MAX, "%s", v);
		return 0;
	}
	return -1;
}

static bool
row_lists(const struct cli_verb_options *row, enum cli_option opt)
{
	for (size_t j = 0; j < CLI_VERB_OPTIONS_MAX; j++)
		if (row->opts[j] == opt)
			return true;
	return false;
}

int
cli_verb_options_check(const char *command, const struct cli_verb_options *rows, size_t n,
		       const char *verb, const struct cli_opts *o)
{
	const struct cli_verb_options *mine = NULL;
	bool listed;
	size_t i;
	int opt;

	for (i = 0; i < n && !mine; i++)
		if (strcmp(rows[i].verb, verb) == 0)
			mine = &rows[i];
	for (opt = OPT_NONE + 1; opt < OPT_COUNT; opt++) {
		for (i = 0, listed = false; i < n && !listed; i++)
			listed = row_lists(&rows[i], (enum cli_option)opt);
		if (o->n[opt] && listed && !(mine && row_lists(mine, (enum cli_option)opt)))
			return cli_usage_error(command, "%s is not an option of %s %s",
					       cli_option_name((enum cli_option)opt), command, verb);
	}
	return -1;
}
