#include <string.h>

#include "audit.h"
#include "audit_verify.h"
#include "cli.h"

struct audit_args {
	bool json;
	const char *action, *db;
	struct audit_anchor anchor;
	bool anchored;
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
	if (o.n[OPT_ANCHOR]) {
		if (audit_anchor_parse(o.values[OPT_ANCHOR][0], &a->anchor) < 0)
			return cli_usage_error("audit", "--anchor wants SEQ:HASH, an entry's sequence"
					       " and its 64 hex digit hash (as verify prints)");
		a->anchored = true;
	}
	return -1;
}

/* Every decision of the vocabulary, with its count (0 included). */
static json_t *
decisions_json(const struct audit_verify *v)
{
	json_t *o = json_object();
	int d;

	for (d = 0; o && d < AUDIT_D_COUNT; d++)
		json_object_set_new(o, audit_decision_id((enum audit_decision)d),
				    json_integer(v->decisions[d]));
	return o;
}

/* [{"session": S, "calls": [{"call_id", "tool", "seq"}, …]}, …]: v->unknown is by session. */
static json_t *
unknown_json(const struct audit_verify *v)
{
	json_t *list = json_array(), *calls = NULL;
	size_t i;

	for (i = 0; list && i < v->n_unknown; i++) {
		const struct audit_unknown *u = &v->unknown[i];

		if (i == 0 || strcmp(u->session_id, v->unknown[i - 1].session_id) != 0) {
			calls = json_array();
			json_array_append_new(list, json_pack("{s:s, s:o}", "session",
							      u->session_id, "calls", calls));
		}
		json_array_append_new(calls, json_pack("{s:s, s:s, s:I}", "call_id", u->call_id,
						       "tool", u->tool, "seq", (json_int_t)u->seq));
	}
	return list;
}

/* {"seq", "hash"} of the newest entry, to record as a later anchor; null when empty. */
static json_t *
head_json(const struct audit_verify *v)
{
	if (v->head_seq <= 0)
		return json_null();
	return json_pack("{s:I, s:s}", "seq", (json_int_t)v->head_seq, "hash", v->head_hash);
}

static int
print_json(const struct audit_args *a, const struct audit_verify *v)
{
	bool at_entry = !v->ok && v->first_bad_seq > 0;
	json_t *out = json_pack("{s:I, s:b, s:o, s:o, s:o, s:I, s:o, s:o, s:o}",
				"entries", (json_int_t)v->entries,
				"ok", v->ok, "first_bad_seq",
				at_entry ? json_integer(v->first_bad_seq) : json_null(),
				"reason", v->ok ? json_null() : json_string(v->reason),
				"decisions", decisions_json(v),
				"unrecognised", (json_int_t)v->unrecognised,
				"unknown_outcomes", unknown_json(v),
				"head", head_json(v),
				"anchor", a->anchored ? json_pack("{s:I, s:b}", "seq",
								  (json_int_t)a->anchor.seq,
								  "ok", v->anchored)
						      : json_null());
	int rc = cli_print_json(out);

	json_decref(out);
	return rc;
}

/*
 * A call dispatched to its upstream whose terminal entry is not in the
 * log: after a crash, what the contract allows to be lost.
 */
static void
print_unknown(const char *db, const struct audit_verify *v)
{
	size_t i;

	for (i = 0; i < v->n_unknown; i++)
		printf("unknown outcome: session %s call %s (tool %s, dispatch entry %lld)\n",
		       v->unknown[i].session_id, v->unknown[i].call_id, v->unknown[i].tool,
		       (long long)v->unknown[i].seq);
	if (v->n_unknown)
		printf("audit %s: %zu call%s dispatched without a terminal entry (unknown outcome)\n",
		       db, v->n_unknown, v->n_unknown == 1 ? "" : "s");
	if (v->unrecognised)
		printf("audit %s: %lld entr%s with a type or decision outside the vocabulary\n", db,
		       (long long)v->unrecognised, v->unrecognised == 1 ? "y" : "ies");
}

static void
print_text(const struct audit_args *a, const struct audit_verify *v)
{
	const char *db = a->db;

	if (v->ok)
		printf("audit %s: %lld entries, chain ok\n", db, (long long)v->entries);
	else if (v->first_bad_seq == 0)
		printf("audit %s: %s (%lld entries read)\n", db, v->reason,
		       (long long)v->entries);
	else
		printf("audit %s: chain broken at entry %lld: %s\n", db,
		       (long long)v->first_bad_seq, v->reason);
	print_unknown(db, v);
	if (v->ok && a->anchored)
		printf("audit %s: anchor %lld matches\n", db, (long long)a->anchor.seq);
	/* Recorded outside the log, the head is the anchor of a later verify. */
	if (v->ok && v->head_seq > 0)
		printf("audit %s: head %lld:%s\n", db, (long long)v->head_seq, v->head_hash);
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
	if (audit_verify_anchored(a.db, a.anchored ? &a.anchor : NULL, &v, &err) < 0)
		return cli_audit_fail(a.json, "audit", a.db, false, &err);
	if (a.json)
		rc = print_json(&a, &v);
	else
		print_text(&a, &v);
	audit_verify_free(&v);
	if (rc == EXIT_ERROR)
		return rc;
	return v.ok ? EXIT_OK : EXIT_REFUSED;
}
