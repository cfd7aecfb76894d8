/*
 * The standing sets outlive the engine (supervisor_int.h,
 * sup_standing_save and sup_standing_load): a tool revoked or held on
 * every session, a class flow held on every one and the freeze are
 * written to the audit log, as one entry of the engine's, before the
 * cutover that moved them is posted. The next engine on the same log
 * starts with them, so a crash or a restart in an incident loosens
 * nothing. Grants are not carried over: a tool granted on every session
 * is saved as it will stand after the lapse, revoked (saved at the grant:
 * a tool restored before it would otherwise stand allowed).
 *
 * The entry's detail: {"by", "uid", "via", "revision", "revoked": [{"tool",
 * "by", "uid", "via", "revision"}], "held": [tool], "flows": ["a>b"],
 * "frozen": {"by", "uid", "via", "revision"} or absent}. Names only.
 *
 * Sessions' end entries the log refused are kept here too and written
 * again on the same beat (sup_end_unsaved).
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit_verify.h"
#include "clock.h"
#include "journal.h"

#define STANDING_RETRY_MS	2000	/* a refused save is written again after this */

/*
 * The entries' rules, each starting with the prefix the next engine looks
 * for: "standing: 2 revoked, 1 held, 1 flows, frozen" (the parts there
 * are, "nothing" when none is; at most 47 bytes, what the timeline keeps
 * of a rule), "standing restored" when an engine took them up, and
 * "standing unreadable: frozen" when it could not.
 */
#define STANDING_RULE		"standing"
#define STANDING_RESTORED	"standing restored"
#define STANDING_UNREADABLE	"standing unreadable: frozen"

static json_t *
author_json(const struct snap_author *a, int64_t revision)
{
	return json_pack("{s:s, s:I, s:s, s:I}", "by", a->user, "uid", (json_int_t)a->uid,
			 "via", a->via, "revision", (json_int_t)revision);
}

/* A revoked tool's entry, or -1 out of memory. */
static int
revoked_add(json_t *list, const char *tool, const struct snap_author *by, int64_t revision)
{
	json_t *o = author_json(by, revision);

	if (!o || json_object_set_new(o, "tool", json_string(tool)) < 0)
		return json_decref(o), -1;
	return json_array_append_new(list, o);
}

/* Under s->policy: the granted tools, each revoked by its lapse, unless they stand already. */
static int
granted_add(struct supervisor *s, json_t *revoked)
{
	char tool[GRANT_MAX][SNAP_NAME_MAX];
	int64_t revision[GRANT_MAX];
	struct snap_author expiry;
	size_t i, j, n = sup_grant_all(s, tool, revision, GRANT_MAX);

	sup_grant_expiry_author(s, &expiry);
	for (i = 0; i < n; i++) {
		for (j = 0; j < s->n_standing && strcmp(s->standing[j], tool[i]) != 0; j++)
			;
		if (j == s->n_standing && revoked_add(revoked, tool[i], &expiry, revision[i]) < 0)
			return -1;
	}
	return 0;
}

/* Under s->policy (the sets change under it): the entry's detail, or NULL. */
static json_t *
standing_json(struct supervisor *s, const struct snap_author *by)
{
	json_t *o = author_json(by, s->revision), *revoked = json_array(), *held = json_array(),
	       *flows = json_array(), *done = NULL;
	size_t i;
	int rc = o && revoked && held && flows ? 0 : -1;

	for (i = 0; rc == 0 && i < s->n_standing; i++)
		rc = revoked_add(revoked, s->standing[i], &s->standing_by[i],
				 s->standing_revision[i]);
	if (rc == 0)
		rc = granted_add(s, revoked);
	for (i = 0; rc == 0 && i < s->n_standing_hold; i++)
		rc = json_array_append_new(held, json_string(s->standing_hold[i]));
	for (i = 0; rc == 0 && i < s->n_standing_flow; i++)
		rc = json_array_append_new(flows, json_string(s->standing_flow[i]));
	if (rc == 0 && s->frozen)
		rc = json_object_set_new(o, "frozen", author_json(&s->frozen_by, s->frozen_revision));
	if (rc == 0 && json_object_set(o, "revoked", revoked) == 0 &&
	    json_object_set(o, "held", held) == 0 && json_object_set(o, "flows", flows) == 0)
		done = json_incref(o);
	json_decref(o);
	json_decref(revoked);
	json_decref(held);
	json_decref(flows);
	return done;
}

/* The sets in the log; rule NULL: the saved entry's, made of what it holds. */
static void
standing_write(struct supervisor *s, const struct snap_author *by, const char *rule)
{
	struct journal j = { s->o.audit, s->o.otlp };
	json_t *o = standing_json(s, by);
	char *detail = o ? json_dumps(o, JSON_COMPACT) : NULL;
	char saved[SNAP_WORD_MAX];
	struct audit_entry e = {
		.session_id = "engine",
		.rule = rule ? rule : saved,
		.revision = s->revision,
		.detail = detail,
	};

	audit_standing_rule(saved, sizeof saved, o);
	json_decref(o);

	if (!detail || journal_write(&j, NULL, AUDIT_D_APPLIED, &e, NULL) < 0) {
		pthread_mutex_lock(&s->lock);
		sup_audit_refused(s, NULL, 1);	/* counted and shown: never silent */
		if (!rule) {	/* what stands is not in the log: the keeper writes it again */
			s->standing_unsaved = true;
			s->standing_retry_ms = clock_mono_ms() + STANDING_RETRY_MS;
			pthread_cond_signal(&s->keeper_cond);
		}
		pthread_mutex_unlock(&s->lock);
		sup_wake(s);
	} else if (!rule) {
		atomic_store(&s->standing_unsaved, false);
	}
	free(detail);
}

void
sup_standing_save(struct supervisor *s, const struct snap_author *by)
{
	standing_write(s, by, NULL);
}

/* A retry's turn at *at_ms: taken (the next one set) when due, else *next_ms lowered to it. */
static bool
turn_due(int64_t *at_ms, int64_t now_ms, int64_t *next_ms)
{
	if (now_ms >= *at_ms) {
		*at_ms = now_ms + STANDING_RETRY_MS;
		return true;
	}
	if (*at_ms < *next_ms)
		*next_ms = *at_ms;
	return false;
}

bool
sup_standing_retry_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms)
{
	return s->standing_unsaved && turn_due(&s->standing_retry_ms, now_ms, next_ms);
}

/* What stands now, again, by the engine: the sets are the latest whoever moved them. */
void
sup_standing_retry(struct supervisor *s)
{
	pthread_mutex_lock(&s->policy);
	standing_write(s, &s->self, NULL);
	pthread_mutex_unlock(&s->policy);
}

bool
supervisor_standing_unsaved(struct supervisor *s)
{
	return atomic_load(&s->standing_unsaved);
}

/* ---- sessions' ends the log refused ---- */

void
sup_end_unsaved(struct supervisor *s, struct session_end_entry *e)
{
	pthread_mutex_lock(&s->lock);
	if (s->n_unsaved_ends == SUPERVISOR_SESSIONS_MAX) {
		session_end_entry_free(e);	/* counted when refused; too many kept */
	} else {
		s->unsaved_ends[s->n_unsaved_ends++] = e;
		s->ends_retry_ms = clock_mono_ms() + STANDING_RETRY_MS;
		pthread_cond_signal(&s->keeper_cond);
	}
	pthread_mutex_unlock(&s->lock);
}

bool
sup_ends_retry_due(struct supervisor *s, int64_t now_ms, int64_t *next_ms)
{
	return s->n_unsaved_ends > 0 && turn_due(&s->ends_retry_ms, now_ms, next_ms);
}

/* The kept ends the log still lacks, marked. */
struct ends_open {
	struct session_end_entry **e;
	bool *open;
	size_t n;
};

static void
end_open(void *ctx, const char *session_id, const char *start_detail)
{
	struct ends_open *o = ctx;
	size_t i;

	(void)start_detail;
	for (i = 0; i < o->n; i++)
		o->open[i] |= strcmp(o->e[i]->session_id, session_id) == 0;
}

/* Under s->lock: e out of the kept ends, and freed. */
static void
end_drop(struct supervisor *s, struct session_end_entry *e)
{
	size_t i;

	for (i = 0; i < s->n_unsaved_ends && s->unsaved_ends[i] != e; i++)
		;
	if (i == s->n_unsaved_ends)
		return;
	memmove(&s->unsaved_ends[i], &s->unsaved_ends[i + 1],
		(s->n_unsaved_ends - i - 1) * sizeof s->unsaved_ends[0]);
	s->n_unsaved_ends--;
	session_end_entry_free(e);
}

/*
 * Each kept end the log still lacks written, in the order they came; those
 * still refused stay. Asked first: a write the log called refused may have
 * landed (a log moved under the engine commits, then says so), and an end
 * is never written twice. Only the keeper removes: the first n stay put.
 */
void
sup_ends_retry(struct supervisor *s)
{
	struct ends_open o = { NULL, NULL, 0 };
	size_t i;

	pthread_mutex_lock(&s->lock);
	o.n = s->n_unsaved_ends;
	o.e = o.n ? malloc(o.n * sizeof *o.e) : NULL;
	o.open = o.n ? calloc(o.n, sizeof *o.open) : NULL;
	if (o.e)
		memcpy(o.e, s->unsaved_ends, o.n * sizeof *o.e);
	pthread_mutex_unlock(&s->lock);
	if (!o.e || !o.open || audit_unended(s->o.audit, end_open, &o) < 0)
		goto out;	/* asked again at the next turn */
	for (i = 0; i < o.n; i++) {
		if (o.open[i] && session_end_write(o.e[i], s->o.audit, s->o.otlp) < 0)
			break;	/* still refused: the rest wait their turn */
		pthread_mutex_lock(&s->lock);
		end_drop(s, o.e[i]);
		pthread_mutex_unlock(&s->lock);
	}
out:
	free(o.e);
	free(o.open);
}

void
sup_ends_close(struct supervisor *s)
{
	size_t i;

	sup_ends_retry(s);
	for (i = 0; i < s->n_unsaved_ends; i++)
		session_end_entry_free(s->unsaved_ends[i]);
	s->n_unsaved_ends = 0;
}

/* ---- the next engine ---- */

/* {"by", "uid", "via", "revision"} into *a and *revision; -1 unless each is there. */
static int
author_read(json_t *o, struct snap_author *a, int64_t *revision)
{
	const char *user, *via;
	json_int_t uid, rev;

	if (json_unpack(o, "{s:s, s:I, s:s, s:I}", "by", &user, "uid", &uid, "via", &via,
			"revision", &rev) < 0 || uid < 0 || uid > UINT32_MAX || rev < 0)
		return -1;
	memset(a, 0, sizeof *a);
	a->uid = (uint32_t)uid;
	sup_copy_word(a->user, sizeof a->user, user);
	sup_copy_word(a->via, sizeof a->via, via);
	*revision = rev;
	return 0;
}

/* A name the sets may hold: a string, not empty, that fits. */
static const char *
name_read(json_t *v)
{
	const char *name = json_string_value(v);

	return name && name[0] && strlen(name) < SNAP_NAME_MAX ? name : NULL;
}

/*
 * A list into list[0..*n), at most max: names, or with by non-NULL
 * objects {"tool", "by", "uid", "via", "revision"}, their authors into by[]
 * and revision[].
 */
static int
list_read(json_t *from, char (*list)[SNAP_NAME_MAX], size_t *n, size_t max,
	  struct snap_author *by, int64_t *revision)
{
	const char *name;
	size_t i;
	json_t *v;

	if (!json_is_array(from) || json_array_size(from) > max)
		return -1;
	json_array_foreach(from, i, v) {
		if (!(name = name_read(by ? json_object_get(v, "tool") : v)) ||
		    (by && author_read(v, &by[i], &revision[i]) < 0))
			return -1;
		sup_copy_word(list[i], SNAP_NAME_MAX, name);
		*n = i + 1;
	}
	return 0;
}

/* The sets from a saved entry's detail; -1 when any part of it is not as written. */
static int
standing_read(struct supervisor *s, const char *detail)
{
	json_t *o = json_loads(detail, JSON_REJECT_DUPLICATES, NULL), *frozen;
	json_int_t revision;
	int rc = -1;

	if (o && json_unpack(o, "{s:I}", "revision", &revision) == 0 && revision >= 0 &&
	    list_read(json_object_get(o, "revoked"), s->standing, &s->n_standing,
		      SUPERVISOR_STANDING_MAX, s->standing_by, s->standing_revision) == 0 &&
	    list_read(json_object_get(o, "held"), s->standing_hold, &s->n_standing_hold,
		      SUPERVISOR_STANDING_MAX, NULL, NULL) == 0 &&
	    list_read(json_object_get(o, "flows"), s->standing_flow, &s->n_standing_flow,
		      SNAP_FLOWS_MAX, NULL, NULL) == 0) {
		s->revision = revision;
		frozen = json_object_get(o, "frozen");
		s->frozen = frozen != NULL;
		rc = frozen ? author_read(frozen, &s->frozen_by, &s->frozen_revision) : 0;
	}
	json_decref(o);
	return rc;
}

/*
 * The revision goes on past the highest any policy entry names: the
 * sets' entry has the revision of the last change on every session, and
 * a change on some sessions (or a grant's) may have come after it. Held
 * calls' ids go on past the log's too: `ctl approve 3` names one call.
 */
int
sup_standing_load(struct supervisor *s, struct al_err *err)
{
	bool unreadable;
	char *detail;
	int64_t top, hold_top;

	if (audit_policy_highest(s->o.audit, &top, &hold_top) < 0 ||
	    audit_engine_latest(s->o.audit, STANDING_RULE, &detail) < 0)
		return al_fail(err, "supervisor: the audit log's standing policy cannot be read");
	pthread_mutex_lock(&s->hold_lock);
	s->holds.serial = hold_top;
	pthread_mutex_unlock(&s->hold_lock);
	pthread_mutex_lock(&s->policy);
	pthread_mutex_lock(&s->lock);
	s->revision = top;
	if (!detail) {	/* a new log, or no change ever made on every session */
		pthread_mutex_unlock(&s->lock);
		pthread_mutex_unlock(&s->policy);
		return 0;
	}
	unreadable = standing_read(s, detail) < 0;
	s->revision = s->revision > top ? s->revision : top;
	if (unreadable) {
		s->n_standing = s->n_standing_hold = s->n_standing_flow = 0;
		s->frozen = true;	/* what stood is unknown: nothing goes out until a thaw */
		s->frozen_by = s->self;
		s->frozen_revision = s->revision;
	}
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	standing_write(s, &s->self, unreadable ? STANDING_UNREADABLE : STANDING_RESTORED);
	pthread_mutex_unlock(&s->policy);
	free(detail);
	return 0;
}
