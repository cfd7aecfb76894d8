#include <string.h>

#include "audit.h"
#include "cli.h"

struct audit_args {
	bool json;
	const char *action, *db;
};

static int
parse_args(int argc, char **argv, struct audit_args *a)
{
	struct cli_opts o;
	int rc = cli_parse("audit", argc, argv, &o);

	memset(a, 0, sizeof *a);
	if (rc >= 0)
		return rc;
	if (o.n_positional != 2 || strcmp(o.positional[0], "verify") != 0)
		return cli_usage_error("audit", "expected 'verify DB'");
	a->json = o.json;
	a->action = o.positional[0];
	a->db = o.positional[1];
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
	if (audit_verify_file(a.db, &v, &err) < 0)
		return cli_audit_fail(a.json, "audit", a.db, false, &err);
	if (a.json)
		rc = print_json(&v);
	else
		print_text(a.db, &v);
	if (rc == EXIT_ERROR)
		return rc;
	return v.ok ? EXIT_OK : EXIT_REFUSED;
}
