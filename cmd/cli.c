#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "airlock-config.h"

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
	char msg[512];
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

static const char *
create_reason(const char *path, char *buf, size_t cap)
{
	char *copy = strdup(path), *slash;
	const char *dir;
	int bad;

	if (!copy)
		return "";
	slash = strrchr(copy, '/');
	dir = slash == copy ? "/" : slash ? (*slash = '\0', copy) : ".";
	bad = access(dir, W_OK | X_OK) < 0 ? errno : 0;
	if (bad)
		snprintf(buf, cap, "%s: %s", dir, strerror(bad));
	free(copy);
	return bad ? buf : "";
}

const char *
cli_path_reason(const char *path, bool create, char *buf, size_t cap)
{
	struct stat st;

	buf[0] = '\0';
	if (stat(path, &st) < 0) {
		if (errno == ENOENT && create)
			return create_reason(path, buf, cap);
		snprintf(buf, cap, "%s", strerror(errno));
		return buf;
	}
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (access(path, create ? R_OK | W_OK : R_OK) < 0)
		snprintf(buf, cap, "%s", strerror(errno));
	return buf;
}

int
cli_audit_fail(bool json, const char *command, const char *path, bool create,
	       const struct al_err *err)
{
	const char *msg = strncmp(err->msg, "audit: ", 7) == 0 ? err->msg + 7 : err->msg;
	char why[256];
	const char *reason = cli_path_reason(path, create, why, sizeof why);

	return cli_fail(json, command, "audit %s: %s%s%s", path, msg, reason[0] ? ": " : "",
			reason);
}
