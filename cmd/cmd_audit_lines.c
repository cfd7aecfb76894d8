#include "cmd_audit_lines.h"

#include <stdio.h>

#include <jansson.h>

#include "audit_timeline.h"
#include "cli.h"

/* --- an entry ------------------------------------------------------------------ */

int
audit_line_entry(bool json, const struct audit_row *r)
{
	json_t *o;
	int rc;

	if (!json) {
		printf("%lld %s %s %s %s %s %s r%lld %lldus %s\n", (long long)r->seq, r->time,
		       r->session, r->type, r->tool[0] ? r->tool : "-",
		       r->decision[0] ? r->decision : "-", r->rule[0] ? r->rule : "-",
		       (long long)r->revision, (long long)r->latency_us, r->entry_hash);
		return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
	}
	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s}",
		      "seq", (json_int_t)r->seq, "time", r->time, "session", r->session,
		      "call", r->call, "type", r->type, "tool", r->tool, "decision", r->decision,
		      "rule", r->rule, "revision", (json_int_t)r->revision,
		      "latency_us", (json_int_t)r->latency_us, "request_hash", r->request_hash,
		      "response_hash", r->response_hash, "entry_hash", r->entry_hash);
	rc = cli_print_json(o);
	json_decref(o);
	return rc == EXIT_ERROR ? EXIT_ERROR : fflush(stdout) == 0 ? 0 : EXIT_ERROR;
}

/* --- an event ------------------------------------------------------------------ */

static const char *
dash(const char *s)
{
	return s[0] ? s : "-";
}

static const char *
ack_word(const struct timeline_row *e)
{
	return e->applied ? "applied" : e->not_applicable ? "not_applicable" : "rejected";
}

/* "by alice (uid 1001, via ctl)", or "by -" when the entries name no author. */
static void
author_text(const struct timeline_row *e, char *out, size_t cap)
{
	if (e->has_author)
		snprintf(out, cap, "by %s (uid %u, via %s)", e->by.user, (unsigned)e->by.uid,
			 e->by.via);
	else
		snprintf(out, cap, "by -");
}

/* What follows "SEQ TIME KIND " on an event's line. */
static void
event_text(enum timeline_kind kind, const struct timeline_row *e, char *out, size_t cap)
{
	char by[128];

	author_text(e, by, sizeof by);
	switch (kind) {
	case TIMELINE_SESSION_END:
		snprintf(out, cap, "%s %s %s", e->session, e->normal ? "normal" : "abnormal",
			 dash(e->rule));
		break;
	case TIMELINE_ADMISSION_REFUSED:
	case TIMELINE_REAP:
		snprintf(out, cap, "%s %s", e->session, dash(e->rule));
		break;
	case TIMELINE_CUTOVER:
		snprintf(out, cap, "%s %s r%lld %s: %lld applied, %lld not_applicable, %lld rejected",
			 e->op, dash(e->tool), (long long)e->revision, by, (long long)e->applied,
			 (long long)e->not_applicable, (long long)e->rejected);
		break;
	case TIMELINE_AT_START:
		snprintf(out, cap, "%s %s %s r%lld %s %s", e->op, dash(e->tool), e->session,
			 (long long)e->revision, ack_word(e), by);
		break;
	case TIMELINE_REQUEST:
		snprintf(out, cap, "%s \"%s\" %s %s", e->session, e->rule, ack_word(e), by);
		break;
	default:
		snprintf(out, cap, "%s", e->session);
		break;
	}
}

static json_t *
author_json(const struct timeline_row *e)
{
	if (!e->has_author)
		return json_null();
	return json_pack("{s:s, s:I, s:s}", "user", e->by.user, "uid", (json_int_t)e->by.uid,
			 "via", e->by.via);
}

static json_t *
str_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

/* The fields of e's kind (as audit_timeline.h lists them) into o. */
static void
event_fields(json_t *o, enum timeline_kind kind, const struct timeline_row *e)
{
	bool policy = kind == TIMELINE_CUTOVER || kind == TIMELINE_AT_START ||
		      kind == TIMELINE_REQUEST;

	if (kind != TIMELINE_CUTOVER)
		json_object_set_new(o, "session", json_string(e->session));
	if (kind == TIMELINE_SESSION_END)
		json_object_set_new(o, "normal", json_boolean(e->normal));
	if (kind != TIMELINE_SESSION_START && kind != TIMELINE_CUTOVER &&
	    kind != TIMELINE_AT_START)
		json_object_set_new(o, "rule", str_or_null(e->rule));
	if (!policy)
		return;
	json_object_set_new(o, "op", json_string(e->op));
	if (kind != TIMELINE_REQUEST)
		json_object_set_new(o, "tool", str_or_null(e->tool));
	json_object_set_new(o, "revision", json_integer(e->revision));
	json_object_set_new(o, "by", author_json(e));
	json_object_set_new(o, "acks", json_pack("{s:I, s:I, s:I}", "applied",
						 (json_int_t)e->applied, "not_applicable",
						 (json_int_t)e->not_applicable, "rejected",
						 (json_int_t)e->rejected));
}

int
audit_line_event(bool json, const struct timeline_row *r)
{
	enum timeline_kind kind = audit_timeline_kind_by_id(r->kind);
	char text[512];
	json_t *o;
	int rc;

	if (!json) {
		event_text(kind, r, text, sizeof text);
		return printf("%lld %s %s %s\n", (long long)r->seq, r->time, r->kind, text) < 0
		       ? EXIT_ERROR : 0;
	}
	o = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t)r->seq, "time", r->time,
		      "event", r->kind);
	if (o)
		event_fields(o, kind, r);
	rc = cli_print_json(o);
	json_decref(o);
	return rc;
}
