#include <string.h>

#include "audit.h"
#include "cli.h"

#define AUDIT_USAGE "audit verify DB [--json]"

struct audit_args {
	bool json;
	const char *action, *db;
};

static int
usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "airlock audit: %s '%.64s'\nusage: airlock %s\n", what, arg,
		AUDIT_USAGE);
	return EXIT_USAGE;
}

/*
 * The usage line puts --json after the database path, which cli_parse's
 * stop-at-the-first-operand scan refuses; with a single flag, the command
 * reads its own arguments.
 */
static int
parse_args(int argc, char **argv, struct audit_args *a)
{
	const char **slot[] = { &a->action, &a->db };
	size_t n = 0;
	int i;

	memset(a, 0, sizeof *a);
	for (i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			printf("usage: airlock %s\n", AUDIT_USAGE);
			return EXIT_OK;
		}
		if (strcmp(argv[i], "--json") == 0)
			a->json = true;
		else if (argv[i][0] == '-' && argv[i][1] != '\0')
			return usage_error("unknown option", argv[i]);
		else if (n < 2)
			*slot[n++] = argv[i];
		else
			return usage_error("unexpected argument", argv[i]);
	}
	if (n != 2 || strcmp(a->action, "verify") != 0) {
		fprintf(stderr, "airlock audit: expected 'verify DB'\nusage: airlock %s\n",
			AUDIT_USAGE);
		return EXIT_USAGE;
	}
	return -1;
}

static int
print_json(const struct audit_verify *v)
{
	bool at_entry = !v->ok && v->first_bad_seq > 0;
	json_t *out = json_pack("{s:I, s:b, s:o, s:o}", "entries", (json_int_t)v->entries,
				"ok", v->ok, "first_bad_seq",
				at_entry ? json_integer(v->first_bad_seq) : json_null(),
				"reason", v->ok ? json_null() : json_string(v->reason));
	int rc = cli_print_json(out);

	json_decref(out);
	return rc;
}

static void
print_text(const char *db, const struct audit_verify *v)
{
	if (v->ok)
		printf("audit %s: %lld entries, chain ok\n", db, (long long)v->entries);
	else if (v->first_bad_seq == 0)
		printf("audit %s: %s (%lld entries read)\n", db, v->reason,
		       (long long)v->entries);
	else
		printf("audit %s: chain broken at entry %lld: %s\n", db,
		       (long long)v->first_bad_seq, v->reason);
}

int
cmd_audit(int argc, char **argv)
{
	struct audit_args a;
	struct audit_verify v;
	struct al_err err;
	int rc = parse_args(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (audit_verify_file(a.db, &v, &err) < 0) {
		fprintf(stderr, "airlock %s\n", err.msg);	/* err reads "audit: …" */
		return EXIT_ERROR;
	}
	if (a.json)
		rc = print_json(&v);
	else
		print_text(a.db, &v);
	if (rc == EXIT_ERROR)
		return rc;
	return v.ok ? EXIT_OK : EXIT_REFUSED;
}
