#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "audit_read.h"
#include "audit_tail.h"
#include "audit_verify.h"
#include "bytes.h"
#include "cli.h"
#include "cmd_audit_lines.h"
#include "cmd_audit_story.h"
#include "mcp.h"		/* MCP_LINE_MAX */
#include "path_reason.h"

#define TAIL_LAST	50	/* tail without --since: the newest entries */
#define TAIL_BATCH	64	/* rows a read */
#define TAIL_POLL_MS	250	/* --follow: how often the log is read again */

struct audit_args {
	bool json, follow;
	const char *action, *db, *session;
	const char *file;		/* hash: its bytes ("-": stdin) */
	char session_id[SNAP_ID_MAX];	/* the one --session picked, whole */
	char since[CLI_SINCE_MAX];	/* entries at or after this UTC time ("" all) */
	struct audit_anchor anchor;
	bool anchored;
};

/* The options each command takes (--json: all but propose, which prints a file). */
static const struct cli_verb_options verb_options[] = {
	{ "verify", { OPT_JSON, OPT_ANCHOR } },
	{ "tail", { OPT_JSON, OPT_FOLLOW, OPT_SESSION, OPT_SINCE } },
	{ "timeline", { OPT_JSON, OPT_SINCE } },
	{ "propose", { OPT_SESSION, OPT_SINCE } },
	{ "hash", { OPT_NONE } },
};

static int
parse_options(const struct cli_opts *o, struct audit_args *a)
{
	a->follow = o->n[OPT_FOLLOW] > 0;
	a->session = o->n[OPT_SESSION] ? o->values[OPT_SESSION][0] : NULL;
	if (o->n[OPT_SINCE] && cli_parse_since(o->values[OPT_SINCE][0], a->since) < 0)
		return cli_usage_error("audit", "%s", CLI_SINCE_USAGE);
	if (o->n[OPT_ANCHOR]) {
		if (audit_anchor_parse(o->values[OPT_ANCHOR][0], &a->anchor) < 0)
			return cli_usage_error("audit", "--anchor wants SEQ:HASH, an entry's sequence"
					       " and its 64 hex digit hash (as verify prints)");
		a->anchored = true;
	}
	return -1;
}

/* DB, and FILE for hash alone. */
static int
check_operands(const struct cli_opts *o)
{
	int want = strcmp(o->positional[0], "hash") == 0 ? 3 : 2;

	if (o->n_positional > want)
		return cli_usage_error("audit", "unexpected argument '%.64s'",
				       o->positional[want]);
	if (o->n_positional < want)
		return cli_usage_error("audit", "hash wants DB FILE");
	return -1;
}

static int
parse_args(int argc, char **argv, struct audit_args *a)
{
	struct cli_opts o;
	int rc = cli_parse("audit", argc, argv, &o);

	memset(a, 0, sizeof *a);
	if (rc >= 0)
		return rc;
	if (o.n_positional == 0)
		return cli_usage_error("audit", "a command is required (verify, tail, timeline, "
				       "propose DB or hash DB FILE)");
	if ((rc = cli_check_verb("audit", o.positional[0], o.n_positional > 1)) >= 0 ||
	    (rc = check_operands(&o)) >= 0)
		return rc;
	if ((rc = cli_verb_options_check("audit", verb_options, sizeof verb_options /
					 sizeof verb_options[0], o.positional[0], &o)) >= 0)
		return rc;
	a->json = o.json;
	a->action = o.positional[0];
	a->db = o.positional[1];
	a->file = o.positional[2];
	return parse_options(&o, a);
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

/* [{"session", "start_seq"}, …]: sessions started and not ended, oldest first. */
static json_t *
unended_json(const struct audit_verify *v)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < v->n_unended; i++)
		json_array_append_new(list, json_pack("{s:s, s:I}", "session",
						      v->unended[i].session_id, "start_seq",
						      (json_int_t)v->unended[i].seq));
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

/* {"seq", "revision", "rule"} of the engine's newest standing entry; null when none. */
static json_t *
standing_json(const struct audit_verify *v)
{
	if (!v->ok || v->standing_seq <= 0)
		return json_null();
	return json_pack("{s:I, s:I, s:s}", "seq", (json_int_t)v->standing_seq, "revision",
			 (json_int_t)v->standing_revision, "rule", v->standing_rule);
}

static int
print_json(const struct audit_args *a, const struct audit_verify *v)
{
	bool at_entry = !v->ok && v->first_bad_seq > 0;
	json_t *out = json_pack("{s:I, s:b, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o}",
				"entries", (json_int_t)v->entries,
				"ok", v->ok, "first_bad_seq",
				at_entry ? json_integer(v->first_bad_seq) : json_null(),
				"reason", v->ok ? json_null() : json_string(v->reason),
				"decisions", decisions_json(v),
				"unrecognised", (json_int_t)v->unrecognised,
				"unknown_outcomes", unknown_json(v),
				"unended_sessions", unended_json(v),
				"head", head_json(v),
				"standing", standing_json(v),
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
	for (i = 0; i < v->n_unended; i++)
		printf("never ended: session %s (session_start entry %lld)\n",
		       v->unended[i].session_id, (long long)v->unended[i].seq);
	if (v->n_unended)
		printf("audit %s: %zu session%s started without a session_end (still running, "
		       "or its engine died)\n", db, v->n_unended, v->n_unended == 1 ? "" : "s");
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
	/* What the next engine on this log takes up (docs/operations.md). */
	if (v->ok && v->standing_seq > 0)
		printf("audit %s: standing at entry %lld (revision %lld): %s\n", db,
		       (long long)v->standing_seq, (long long)v->standing_revision,
		       v->standing_rule);
	else if (v->ok && v->entries > 0)
		printf("audit %s: standing: no entry (nothing revoked, held or frozen "
		       "on every session)\n", db);
}

/* --- tail: the entries, payload-free as the console shows them ----------------- */

/* Print the rows that pass --since; *after moves to the last one read. */
static int
print_rows(const struct audit_args *a, const struct audit_row *rows, size_t n, int64_t *after)
{
	for (size_t i = 0; i < n; i++) {
		*after = rows[i].seq;
		if ((!a->since[0] || strcmp(rows[i].time, a->since) >= 0) &&
		    audit_line_entry(a->json, &rows[i]) != 0)
			return EXIT_ERROR;
	}
	return 0;
}

/* Everything after *after, in batches; with --follow, forever. */
static int
tail_read(const struct audit_args *a, struct audit_tail *t, int64_t after)
{
	struct audit_row rows[TAIL_BATCH];
	size_t n;

	for (;;) {
		if (audit_tail_read(t, after, a->session, rows, TAIL_BATCH, &n) < 0)
			return cli_fail(a->json, "audit", "%s: %s", a->db, audit_tail_error(t));
		if (print_rows(a, rows, n, &after) != 0)
			return EXIT_ERROR;
		if (n == TAIL_BATCH)
			continue;
		if (!a->follow)
			return EXIT_OK;
		usleep(TAIL_POLL_MS * 1000);
	}
}

/*
 * Without --since, the newest TAIL_LAST entries first (as tail(1) does);
 * with it, every entry from that time on. Then, with --follow, each new one.
 */
static int
cmd_tail(const struct audit_args *a)
{
	struct audit_row rows[TAIL_LAST];
	struct audit_tail *t;
	struct al_err err;
	char text[512];
	int64_t after = 0, top;
	size_t n = 0;
	int rc;

	if (audit_tail_open(a->db, &t, &err) < 0) {
		path_failure(text, sizeof text, "audit tail", a->db, false, err.msg);
		return cli_fail(a->json, "audit", "%s", text);
	}
	if (!a->since[0]) {
		top = audit_tail_max_seq(t);
		if (top < 0 || audit_tail_last(t, TAIL_LAST, a->session, rows, &n) < 0) {
			rc = cli_fail(a->json, "audit", "%s: %s", a->db, audit_tail_error(t));
			audit_tail_close(t);
			return rc;
		}
		if (print_rows(a, rows, n, &after) != 0) {
			audit_tail_close(t);
			return EXIT_ERROR;
		}
		after = after > top ? after : top;
	}
	rc = tail_read(a, t, after);
	audit_tail_close(t);
	return rc;
}

/* --- hash: a payload an investigator holds, hashed as the log's writers did --- */

/* FILE's bytes, or stdin's: no payload the log hashed is longer than a server's line. */
static int
read_payload(const struct audit_args *a, char **buf, size_t *n)
{
	bool in = strcmp(a->file, "-") == 0;
	int fd = in ? STDIN_FILENO : open(a->file, O_RDONLY | O_CLOEXEC);
	enum bytes_read r = fd < 0 ? BYTES_READ_ERROR : bytes_read_fd(fd, MCP_LINE_MAX, buf, n);
	char text[512];

	if (fd >= 0 && !in)
		close(fd);
	if (r == BYTES_READ_OK)
		return 0;
	if (r == BYTES_READ_TOO_LARGE)
		snprintf(text, sizeof text, "audit hash %s: longer than any payload the log "
			 "hashes (%d bytes)", a->file, MCP_LINE_MAX);
	else
		path_failure(text, sizeof text, "audit hash", in ? "stdin" : a->file, false,
			     r == BYTES_READ_NOMEM ? "out of memory" : "cannot read");
	return cli_fail(false, "audit", "%s", text);
}

/*
 * The log's payload key from the file (root's: it is 0600), never made;
 * the bytes hashed with it, as request_hash and response_hash are.
 */
static int
cmd_hash(const struct audit_args *a)
{
	unsigned char key[AUDIT_KEY_LEN];
	char hex[HASH_HEX_LEN + 1], text[512], *buf = NULL;
	const char *why = audit_read_key(a->db, key);
	struct hash_ctx *hc;
	size_t n = 0;
	int rc;

	if (why) {
		path_failure(text, sizeof text, "audit hash", a->db, false, why);
		return cli_fail(false, "audit", "%s", text);
	}
	hc = hash_ctx_new_keyed(key, sizeof key);
	explicit_bzero(key, sizeof key);
	if (!hc)
		return cli_fail(false, "audit", "audit hash: no HMAC-SHA-256 from libcrypto");
	if ((rc = read_payload(a, &buf, &n)) == 0) {
		hash_ctx_hex(hc, buf, n, hex);
		rc = printf("%s\n", hex) < 0 || fflush(stdout) != 0 ? EXIT_ERROR : EXIT_OK;
	}
	if (buf)
		explicit_bzero(buf, n);
	free(buf);
	hash_ctx_free(hc);
	return rc;
}

/*
 * --session as an operator types it elsewhere (ids.h): a prefix of the id
 * of one session that started in the log stands for its whole id; a name
 * no such session has is kept as typed (the engine's own entries, a
 * session refused at admission). -1, or the exit status: ambiguous is
 * refused. A log that cannot be read is left to the command to say.
 */
static int
pick_session(struct audit_args *a)
{
	struct audit_tail *t;
	struct al_err err;
	char why[128];
	int rc;

	if (!a->session || audit_tail_open(a->db, &t, &err) < 0)
		return -1;
	rc = audit_tail_pick_session(t, a->session, a->session_id, why, sizeof why);
	audit_tail_close(t);
	if (rc < 0) {
		cli_fail(a->json, "audit", "%s: --session: %s", a->db, why);
		return EXIT_REFUSED;
	}
	if (rc == 1)
		a->session = a->session_id;
	else if (strcmp(a->session, "engine") != 0)	/* a typo reads as nothing: say why */
		fprintf(stderr, "airlock audit: %s: --session %.40s: no session that started here "
			"has such an id: read as a whole id (a session refused at admission)\n",
			a->db, a->session);
	return -1;
}

int
cmd_audit(int argc, char **argv)
{
	struct audit_args a;
	struct audit_verify v;
	struct al_err err;
	int rc = parse_args(argc, argv, &a);

	if (rc >= 0 || (rc = pick_session(&a)) >= 0)
		return rc;
	if (strcmp(a.action, "tail") == 0)
		return cmd_tail(&a);
	if (strcmp(a.action, "hash") == 0)
		return cmd_hash(&a);
	if (strcmp(a.action, "timeline") == 0 || strcmp(a.action, "propose") == 0) {
		struct audit_story_args s = { a.db, a.since[0] ? a.since : NULL, a.session, a.json };

		return a.action[0] == 't' ? cmd_audit_timeline(&s) : cmd_audit_propose(&s);
	}
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
