#include "audit_timeline.h"
#include "audit.h"
#include "audit_read.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#define PAGE		256	/* entries a statement */
#define LOOKBACK	4096	/* events searched back for a revision's group */
#define DETAIL_MAX	512	/* a policy entry's author is far shorter: longer is not read */

/*
 * The entries a timeline is made of, a page after ?1: policy entries
 * (with their detail, for the author), session starts and ends, refused
 * admissions and reaps. Never a call or a dispatch, never a hash.
 */
static const char page_sql[] =
	"SELECT seq, ts, session_id, type, tool, decision, rule, revision,"
	" CASE WHEN type = ?4 AND length(detail) <= ?10 THEN detail END"
	" FROM audit_entries"
	" WHERE seq > ?1 AND type IN (?4, ?5, ?6, ?7, ?8) AND (type != ?6 OR decision = ?9)"
	" AND (?2 IS NULL OR ts >= ?2) AND seq <= ?11"
	" ORDER BY seq LIMIT ?3";

enum { C_SEQ, C_TS, C_SESSION, C_TYPE, C_TOOL, C_DECISION, C_RULE, C_REVISION, C_DETAIL };

static const char *const kind_ids[] = {
#define TIMELINE_KIND_ID(e, id) id,
	AUDIT_TIMELINE_KINDS(TIMELINE_KIND_ID)
#undef TIMELINE_KIND_ID
};

/* The ops a cutover's ack names first in its rule (snapshot.h's cutover_op_id). */
static const char *const cutover_ops[] = { "revoke", "restore", "freeze", "thaw", "hold" };

const char *
audit_timeline_kind_id(enum timeline_kind k)
{
	return k < TIMELINE_KIND_COUNT ? kind_ids[k] : "unknown";
}

enum timeline_kind
audit_timeline_kind_by_id(const char *id)
{
	int k;

	for (k = 0; k < TIMELINE_KIND_COUNT && strcmp(kind_ids[k], id) != 0; k++)
		;
	return (enum timeline_kind)k;
}

static const char *
col(sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);

	return s ? s : "";
}

/* A new event at the end, or NULL when the timeline is full (tl->truncated). */
static struct timeline_event *
push(struct audit_timeline *tl, size_t *cap, enum timeline_kind kind, sqlite3_stmt *st)
{
	size_t limit = tl->limit ? tl->limit : AUDIT_TIMELINE_MAX;
	struct timeline_event *e;

	if (grow(&tl->v, cap, tl->n + 1, sizeof *tl->v, 64, limit) < 0) {
		tl->truncated = true;	/* full, or no memory for more */
		return NULL;
	}
	e = &tl->v[tl->n++];
	e->kind = kind;
	e->seq = sqlite3_column_int64(st, C_SEQ);
	e->revision = sqlite3_column_int64(st, C_REVISION);
	audit_read_text(e->time, sizeof e->time, col(st, C_TS));
	audit_read_text(e->session, sizeof e->session, col(st, C_SESSION));
	return e;
}

/* {"by": user, "uid": N, "via": kind}, and nothing else of the detail is kept. */
static bool
author_of(const char *detail, struct snap_author *by)
{
	json_t *o = detail[0] ? json_loads(detail, JSON_REJECT_DUPLICATES, NULL) : NULL;
	json_t *user = json_object_get(o, "by"), *uid = json_object_get(o, "uid");
	json_t *via = json_object_get(o, "via");
	bool ok = json_is_string(user) && json_is_string(via) && json_is_integer(uid) &&
		  json_integer_value(uid) >= 0 && json_integer_value(uid) <= UINT32_MAX;

	if (ok) {
		audit_read_text(by->user, sizeof by->user, json_string_value(user));
		audit_read_text(by->via, sizeof by->via, json_string_value(via));
		by->uid = (uint32_t)json_integer_value(uid);
	}
	json_decref(o);
	return ok;
}

/* The entry's policy decision as an ack of the event. */
static void
count_ack(struct timeline_event *e, sqlite3_stmt *st)
{
	switch (audit_decision_lookup(col(st, C_TYPE), col(st, C_DECISION))) {
	case AUDIT_D_APPLIED:
		e->applied++;
		break;
	case AUDIT_D_NOT_APPLICABLE:
		e->not_applicable++;
		break;
	default:
		e->rejected++;
		break;
	}
}

static bool
is_cutover_op(const char *word)
{
	for (size_t i = 0; i < sizeof cutover_ops / sizeof cutover_ops[0]; i++)
		if (strcmp(word, cutover_ops[i]) == 0)
			return true;
	return false;
}

/*
 * What a policy entry's rule says it is. The supervisor writes "<op>
 * <gate's reason>" for a cutover's ack and "<op> at start" for what a
 * session got as it started; the control server "<op> by request",
 * "<op> refused[: why]", "start refused: …", "peer refused: …"; a whole
 * update's ack is the gate's reason alone. A held call's entries, "hold
 * <id> waiting" and its decision ("hold <id> approved", "… denied", "…
 * timed out", …), are told as written, like a request.
 */
static enum timeline_kind
policy_kind(const char *rule, char op[16])
{
	const char *sp = strchr(rule, ' '), *rest = sp ? sp + 1 : "";
	size_t n = sp ? (size_t)(sp - rule) : strlen(rule);

	snprintf(op, 16, "%.*s", (int)(n < 15 ? n : 15), rule);
	if (strcmp(rest, "by request") == 0 || strncmp(rest, "refused", 7) == 0 ||
	    (strcmp(op, "hold") == 0 && rest[0] >= '0' && rest[0] <= '9'))
		return TIMELINE_REQUEST;
	if (!is_cutover_op(op)) {
		snprintf(op, 16, "update");
		return TIMELINE_CUTOVER;
	}
	return strcmp(rest, "at start") == 0 ? TIMELINE_AT_START : TIMELINE_CUTOVER;
}

/* The revision's event, if one was begun lately: a cutover's acks come together. */
static struct timeline_event *
group_of(struct audit_timeline *tl, int64_t revision, const char *op, const char *tool)
{
	size_t i, stop = tl->n > LOOKBACK ? tl->n - LOOKBACK : 0;

	for (i = tl->n; i-- > stop;) {
		struct timeline_event *e = &tl->v[i];

		if (e->kind == TIMELINE_CUTOVER && e->revision == revision &&
		    strcmp(e->op, op) == 0 && strcmp(e->tool, tool) == 0)
			return e;
	}
	return NULL;
}

/* A session's quarantine or release, or its pause the daemon refused (issue 43, item 3). */
static bool
is_hold(const char *rule)
{
	return strncmp(rule, "quarantine", 10) == 0 || strncmp(rule, "release", 7) == 0;
}

/*
 * An entry of the engine's own (session "engine") is never a session's
 * acknowledgement: a request or refusal, a grant's terms or lapse, a
 * cutover that reached no live session. Nor is a quarantine or release,
 * one session's with its author. Each is told as written.
 */
static enum timeline_kind
entry_kind(sqlite3_stmt *st, char op[16])
{
	enum timeline_kind kind = policy_kind(col(st, C_RULE), op);
	const char *rule = col(st, C_RULE);
	size_t n = strcspn(rule, " :");

	if (strcmp(col(st, C_SESSION), "engine") != 0 && !is_hold(rule))
		return kind;
	snprintf(op, 16, "%.*s", (int)(n < 15 ? n : 15), rule);	/* "grant: 2 calls" */
	return TIMELINE_REQUEST;
}

static int
add_policy(struct audit_timeline *tl, size_t *cap, sqlite3_stmt *st)
{
	char op[16], tool[SNAP_NAME_MAX];
	enum timeline_kind kind = entry_kind(st, op);
	struct timeline_event *e = NULL;

	audit_read_text(tool, sizeof tool, col(st, C_TOOL));
	if (kind == TIMELINE_CUTOVER)
		e = group_of(tl, sqlite3_column_int64(st, C_REVISION), op, tool);
	if (!e) {
		if (!(e = push(tl, cap, kind, st)))
			return -1;
		snprintf(e->op, sizeof e->op, "%s", op);
		memcpy(e->tool, tool, sizeof tool);
		if (kind == TIMELINE_REQUEST)
			audit_read_text(e->rule, sizeof e->rule, col(st, C_RULE));
		if (kind == TIMELINE_CUTOVER)
			e->session[0] = '\0';	/* the acks name the sessions */
	}
	if (!e->has_author)
		e->has_author = author_of(col(st, C_DETAIL), &e->by);
	count_ack(e, st);
	return 0;
}

/* One entry into the timeline; -1 when it is full. */
static int
add_entry(struct audit_timeline *tl, size_t *cap, sqlite3_stmt *st)
{
	const char *type = col(st, C_TYPE);
	struct timeline_event *e;

	if (strcmp(type, audit_type_id(AUDIT_T_POLICY)) == 0)
		return add_policy(tl, cap, st);
	if (strcmp(type, audit_type_id(AUDIT_T_SESSION_START)) == 0)
		return push(tl, cap, TIMELINE_SESSION_START, st) ? 0 : -1;
	e = push(tl, cap, strcmp(type, audit_type_id(AUDIT_T_SESSION_END)) == 0
		 ? TIMELINE_SESSION_END : strcmp(type, audit_type_id(AUDIT_T_REAP)) == 0
		 ? TIMELINE_REAP : TIMELINE_ADMISSION_REFUSED, st);
	if (!e)
		return -1;
	audit_read_text(e->rule, sizeof e->rule, col(st, C_RULE));
	e->normal = audit_decision_lookup(type, col(st, C_DECISION)) == AUDIT_D_NORMAL;
	return 0;
}

/* What stays the same for every page of one read: all but the cursor (?1). */
static int
bind_read(sqlite3_stmt *st, const char *since, int64_t upto)
{
	static const enum audit_type types[] = { AUDIT_T_POLICY, AUDIT_T_SESSION_START,
		AUDIT_T_ADMISSION, AUDIT_T_SESSION_END, AUDIT_T_REAP };
	int rc = since ? sqlite3_bind_text(st, 2, since, -1, SQLITE_STATIC)
		       : sqlite3_bind_null(st, 2);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 3, PAGE);
	for (int i = 0; rc == SQLITE_OK && i < 5; i++)
		rc = sqlite3_bind_text(st, 4 + i, audit_type_id(types[i]), -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 9, audit_decision_id(AUDIT_D_REFUSED), -1,
				       SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 10, DETAIL_MAX);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 11, upto);
	return rc;
}

/*
 * One page from the cursor: the statement run to its end (or to a full
 * timeline) and reset, so no read transaction is held between pages.
 * *got: entries read.
 */
static int
read_page(struct audit_timeline *tl, size_t *cap, sqlite3_stmt *st, int64_t *after,
	  size_t *got)
{
	int rc = sqlite3_bind_int64(st, 1, *after);

	*got = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if (add_entry(tl, cap, st) < 0)
			break;	/* full: tl->truncated says so; this entry is the next page's */
		*after = sqlite3_column_int64(st, C_SEQ);
		(*got)++;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_OK ? 0 : rc;
}

/* The log's newest seq (0: empty), or why not. */
static const char *
read_head(sqlite3 *db, int64_t *head)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "SELECT coalesce(max(seq), 0) FROM audit_entries", -1,
				    &st, NULL);

	if (rc != SQLITE_OK)
		return audit_read_prepare_error(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*head = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? NULL : audit_read_step_error(rc);
}

/* What one read asks (read_events), and where it puts the events. */
struct events_query {
	const char *since;
	int64_t scan, *after;
	struct audit_timeline *out;
};

/* The pages of one read, on the connection audit_read_run opened. */
static const char *
read_pages(sqlite3 *db, void *arg)
{
	struct events_query *q = arg;
	struct audit_timeline *out = q->out;
	sqlite3_stmt *st = NULL;
	size_t cap = 0, got = PAGE;
	int64_t head = 0, upto, *after = q->after;
	const char *why = read_head(db, &head);
	int rc;

	if (why)
		return why;
	upto = q->scan && head - *after > q->scan ? *after + q->scan : head;
	rc = sqlite3_prepare_v2(db, page_sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = bind_read(st, q->since, upto);
	if (rc != SQLITE_OK)
		why = audit_read_prepare_error(rc);
	while (!why && got == PAGE && !out->truncated)
		if ((rc = read_page(out, &cap, st, after, &got)) != 0)
			why = audit_read_step_error(rc);
	if (!why && !out->truncated) {
		if (upto > *after)
			*after = upto;
		out->truncated = upto < head;
	}
	sqlite3_finalize(st);
	return why;
}

/*
 * The events after seq after (since: NULL or a time), within out->limit,
 * of the entries up to the log's newest when the read began, or of the
 * next scan of them (0: no bound). Read to that end, *after is its last
 * entry, an event or not: the next read starts past the calls this one
 * went through, not at its last event (a follower asking twice a second
 * would read every call since the last change again, 0.34 s for 2
 * million). Every entry up to it was committed before the pages were
 * read, so none is skipped. Stopped by scan before the newest, the read
 * says so in out->truncated: more may follow.
 */
static int
read_events(const char *path, const char *since, int64_t scan, int64_t *after,
	    struct audit_timeline *out, struct al_err *err)
{
	struct events_query q = { since, scan, after, out };
	const char *why = audit_read_run(path, read_pages, &q);

	if (why) {
		audit_timeline_free(out);
		return al_fail(err, "audit timeline: %s", why);
	}
	return 0;
}

int
audit_timeline_read(const char *path, const char *since, struct audit_timeline *out,
		    struct al_err *err)
{
	int64_t after = 0;

	memset(out, 0, sizeof *out);
	return read_events(path, since, 0, &after, out, err);
}

int
audit_timeline_page(const char *path, int64_t after, size_t cap, struct audit_timeline *out,
		    int64_t *next, struct al_err *err)
{
	int64_t at = after;

	memset(out, 0, sizeof *out);
	*next = after;
	if (after < 0 || cap == 0 || cap > AUDIT_TIMELINE_MAX)
		return al_fail(err, "audit timeline: bad page");
	out->limit = cap;
	if (read_events(path, NULL, AUDIT_TIMELINE_SCAN, &at, out, err) < 0)
		return -1;	/* the cursor stays: nothing was given */
	*next = at;
	return 0;
}

void
audit_timeline_row(const struct timeline_event *e, struct timeline_row *r)
{
	memset(r, 0, sizeof *r);
	r->seq = e->seq;
	snprintf(r->time, sizeof r->time, "%s", e->time);
	snprintf(r->kind, sizeof r->kind, "%s", audit_timeline_kind_id(e->kind));
	snprintf(r->session, sizeof r->session, "%s", e->session);
	snprintf(r->op, sizeof r->op, "%s", e->op);
	snprintf(r->tool, sizeof r->tool, "%s", e->tool);
	snprintf(r->rule, sizeof r->rule, "%s", e->rule);
	r->revision = e->revision;
	r->normal = e->normal;
	r->has_author = e->has_author;
	r->by = e->by;
	r->applied = e->applied;
	r->not_applicable = e->not_applicable;
	r->rejected = e->rejected;
}

bool
audit_timeline_fold(struct timeline_row *rows, size_t n, const struct timeline_row *r)
{
	const char *change = kind_ids[TIMELINE_CUTOVER];
	size_t i, stop = n > LOOKBACK ? n - LOOKBACK : 0;

	if (strcmp(r->kind, change) != 0)
		return false;
	for (i = n; i-- > stop;) {
		struct timeline_row *e = &rows[i];

		if (e->engine != r->engine || strcmp(e->kind, change) != 0 ||
		    e->revision != r->revision || strcmp(e->op, r->op) != 0 ||
		    strcmp(e->tool, r->tool) != 0)
			continue;
		e->applied += r->applied;
		e->not_applicable += r->not_applicable;
		e->rejected += r->rejected;
		if (!e->has_author && r->has_author) {
			e->has_author = true;
			e->by = r->by;
		}
		return true;
	}
	return false;
}

void
audit_timeline_free(struct audit_timeline *tl)
{
	if (!tl)
		return;
	free(tl->v);
	memset(tl, 0, sizeof *tl);
}
