#include "seam_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>

#include <curl/curl.h>
#include <sqlite3.h>

const char *
seam_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !v[0]) {
		fprintf(stderr, "%s: %s is not set (run it through its suite's script)\n",
			program_invocation_short_name, name);
		exit(1);
	}
	return v;
}

size_t
seam_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int ch;

	if (!f)
		return 0;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

int
seam_audit_rows(const char *db, const char *fmt, ...)
{
	char where[512], sql[640];
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	va_list ap;
	int n = -1;

	va_start(ap, fmt);
	vsnprintf(where, sizeof where, fmt, ap);
	va_end(ap);
	snprintf(sql, sizeof sql, "select count(*) from audit_entries where %s", where);
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return -1;
	}
	sqlite3_busy_timeout(h, 2000);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

int
seam_setup(char *work, char *db, size_t dbcap, const char *canary, struct audit **audit)
{
	struct al_err err;
	char path[128];
	FILE *f;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	/*
	 * Upstreams run as airlock-upstream (engine/mcp/mcp_confine.h): work is
	 * a drop box it may create its sinks in (sticky: not remove ours); the
	 * configs list it in "paths.rw".
	 */
	if (!mkdtemp(work) || chmod(work, 01733) != 0)
		return -1;
	snprintf(db, dbcap, "%s/audit.db", work);
	snprintf(path, sizeof path, "%s/payload.json", work);
	f = fopen(path, "w");
	if (!f || fprintf(f, "{\"note\":\"%s\"}\n", canary) < 0 || fclose(f) != 0)
		return -1;
	return audit_open(db, audit, &err);
}

int
seam_teardown(const char *work, struct audit *audit)
{
	char cmd[160];

	audit_close(audit);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
	return system(cmd) == 0 ? 0 : -1;
}
