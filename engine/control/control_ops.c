/* The ops of `airlock serve`: one handler per request, and the table that picks it. */
#include "control_server_int.h"
#include "parser.h"
#include "quarantine.h"
#include "upstream_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the audit of who asked ---- */

/* The author of a client's requests: the kernel's uid and its name; via is informational. */
void
cs_author(const struct client *c, struct snap_author *a)
{
	memset(a, 0, sizeof *a);
	a->uid = (uint32_t)c->uid;
	snprintf(a->user, sizeof a->user, "%.*s", (int)sizeof a->user - 1, c->user);
	snprintf(a->via, sizeof a->via, "%s", c->via[0] ? c->via : "ctl");
}

/*
 * A refusal is written down at most CONTROL_REFUSALS_AUDITED a minute of
 * its kind: anyone may connect, and a view peer may ask for a change
 * again and again; written each time, they would flood the log and hold
 * up the operators' changes behind it ("engine busy").
 */
static bool
refusal_written(struct control_server *cs, struct refusal_budget *b, const char *what)
{
	int64_t now = clock_mono_ms();

	if (now - b->since_ms >= 60000) {
		b->since_ms = now;
		b->in_minute = 0;
	}
	if (++b->in_minute == CONTROL_REFUSALS_AUDITED + 1)
		cs_say(cs, "more than %d %s this minute: counted, not logged or audited, until "
		       "the minute ends", CONTROL_REFUSALS_AUDITED, what);
	return b->in_minute <= CONTROL_REFUSALS_AUDITED;
}

/* A peer refused at accept: logged, and a policy entry naming its uid. */
void
cs_audit_refused_peer(struct control_server *cs, pid_t pid, uid_t uid, bool no_role,
		      const char *why)
{
	struct client who = { .uid = uid };
	struct snap_author a;
	char rule[96];

	if (!refusal_written(cs, &cs->peers, "peers refused"))
		return;
	cs_say(cs, "client refused: uid %u pid %ld: %s", (unsigned)uid, (long)pid, why);
	cs_user_name(uid, who.user, sizeof who.user);
	cs_author(&who, &a);
	/* why is fixed text but for no role (it names the groups) */
	snprintf(rule, sizeof rule, "peer refused: %s", no_role ? "no role" : why);
	supervisor_record(cs->o.sup, &a, NULL, NULL, CUTOVER_REJECTED, rule);
}

/* A request whose outcome the supervisor does not audit itself: logged only. */
static void
log_authored(struct control_server *cs, const struct client *c,
	     const struct control_request *r, const char *outcome)
{
	cs_say(cs, "client %u (uid %u %s): %s%s%s%s%s: %s", c->serial, (unsigned)c->uid, c->user,
	       control_op_name(r->op), r->tool[0] ? " " : "", r->tool,
	       r->session[0] ? " " : "", r->session, outcome);
}

/*
 * Logged, and a policy entry with its author. The rule is fixed text and
 * the op's name; session is one the engine knows (NULL: "engine"), never
 * a name only the request gave.
 */
static void
audit_authored(struct control_server *cs, const struct client *c,
	       const struct control_request *r, const char *session, bool applied,
	       const char *outcome)
{
	struct snap_author a;
	char rule[SNAP_WORD_MAX];

	log_authored(cs, c, r, outcome);
	cs_author(c, &a);
	control_audit_rule(r->op, applied, outcome, rule, sizeof rule);
	supervisor_record(cs->o.sup, &a, session, NULL,
			  applied ? CUTOVER_APPLIED : CUTOVER_REJECTED, rule);
}

/* ---- the ops ---- */

/* {"id": N, "ok": true, key: body}, body taken; or out of memory. */
static void
reply_with(struct control_server *cs, struct client *c, int64_t id, const char *key, json_t *body)
{
	json_t *ok = control_ok(id);

	if (!ok)
		json_decref(body);
	else if (json_object_set_new(ok, key, body) < 0)
		ok = (json_decref(ok), NULL);
	cs_reply(cs, c, id, ok);
}

/* An answer's struct, zeroed, and its reply in *ok; or NULL, out of memory told. */
static void *
answer_new(struct control_server *cs, struct client *c, int64_t id, size_t size, json_t **ok)
{
	void *a = calloc(1, size);

	*ok = a ? control_ok(id) : NULL;
	if (*ok)
		return a;
	free(a);
	cs_reply_error(cs, c, id, CONTROL_E_MEMORY);
	return NULL;
}

/* The answer's reply ok, or error (ok dropped) when there is one. */
static void
answer_reply(struct control_server *cs, struct client *c, int64_t id, json_t *ok,
	     const char *error)
{
	if (error) {
		json_decref(ok);
		cs_reply_error(cs, c, id, error);
	} else
		cs_reply(cs, c, id, ok);
}

/* A change's answer (control_done, by r's op) into ok, sent; d freed. */
static void
done_reply(struct control_server *cs, struct client *c, const struct control_request *r,
	   struct control_done *d, json_t *ok)
{
	answer_reply(cs, c, r->id, ok, control_done_into(r->op, d, ok) < 0 ? CONTROL_E_MEMORY : NULL);
	free(d);
}

/* A start's or a stop's answer: the session it acted on. */
static void
reply_session(struct control_server *cs, struct client *c, const struct control_request *r,
	      const char *id)
{
	json_t *ok;
	struct control_done *d = answer_new(cs, c, r->id, sizeof *d, &ok);

	if (!d)
		return;
	snprintf(d->session, sizeof d->session, "%s", id);
	done_reply(cs, c, r, d, ok);
}

static void
op_hello(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *h = control_hello(cs->o.engine, c->role, c->uid, c->user), *ok = control_ok(r->id);

	if (r->client[0])
		snprintf(c->via, sizeof c->via, "%s", r->client);

	if (h && ok)
		json_object_update(ok, h);
	json_decref(h);
	cs_reply(cs, c, r->id, h ? ok : (json_decref(ok), NULL));
}

static void
op_snapshot(struct control_server *cs, struct client *c, const struct control_request *r)
{
	if (cs_refresh(cs) < 0)
		cs_reply_error(cs, c, r->id, CONTROL_E_MEMORY);
	else
		reply_with(cs, c, r->id, "snapshot", control_snapshot_json(&cs->snap));
}

/*
 * The session a request names, by its id or a unique prefix (ids.h), into
 * id; else refused "no such session" with the engine's words why. The
 * same words for every verb that takes a session (detail, stop, a cutover's).
 */
static int
session_named(struct control_server *cs, struct client *c, const struct control_request *r,
	      const char *typed, char id[SNAP_ID_MAX])
{
	struct al_err err;

	if (supervisor_session_id(cs->o.sup, typed, id, &err) == 0)
		return 0;
	cs_reply_reason(cs, c, r->id, CONTROL_E_SESSION, err.msg);
	return -1;
}

static void
op_detail(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct session_detail *d = calloc(1, sizeof *d);
	char id[SNAP_ID_MAX];

	if (!d) {
		cs_reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	if (session_named(cs, c, r, r->session, id) < 0) {
		free(d);
		return;
	}
	if (supervisor_detail(cs->o.sup, id, d) < 0) {
		free(d);
		cs_reply_error(cs, c, r->id, CONTROL_E_SESSION);
		return;
	}
	reply_with(cs, c, r->id, "detail", control_detail_json(d));
	free(d);
}

static json_t *
recent_json(const struct control_server *cs)
{
	json_t *a = json_array();
	size_t i, start = (cs->recent_next + CONTROL_RECENT_MAX - cs->n_recent) % CONTROL_RECENT_MAX;

	for (i = 0; a && i < cs->n_recent; i++)
		if (json_array_append_new(a, control_event_json(
				&cs->recent[(start + i) % CONTROL_RECENT_MAX])) < 0)
			a = (json_decref(a), NULL);
	return a;
}

static void
op_events(struct control_server *cs, struct client *c, const struct control_request *r)
{
	c->follow = r->follow;
	c->snapshots = r->snapshots;
	c->deltas = r->deltas;
	c->base_ms = 0;		/* the next push is whole */
	reply_with(cs, c, r->id, "events", recent_json(cs));
	if (c->snapshots && cs_refresh(cs) >= 0)
		cs_push(cs, c, "snapshot", control_snapshot_json(&cs->snap));
}

static void
op_host(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct host_snapshot *h = calloc(1, sizeof *h);

	if (!h) {
		cs_reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	/*
	 * Any role may have the checks run again; only an operator names
	 * another runtime: the one they run with is every console's (the
	 * keeper re-runs it), and a view peer's would be a false alarm there.
	 */
	if (r->refresh)
		supervisor_host_refresh(cs->o.sup, r->runtime[0] && c->role == CONTROL_ROLE_OPERATE ?
					r->runtime : cs->o.runtime);
	supervisor_host(cs->o.sup, h);
	reply_with(cs, c, r->id, "host", control_host_json(h));
	free(h);
}

/*
 * The engine's own audit log, payload-free rows (snapshot.h): those after
 * the asked seq, or the newest, at most CONTROL_AUDIT_ROWS an answer.
 */
static int
audit_rows(struct control_server *cs, const struct control_request *r, struct control_audit *a)
{
	struct al_err err;

	if (!cs->tail && (!cs->o.audit || audit_tail_open(cs->o.audit, &cs->tail, &err) < 0))
		return -1;
	a->head = audit_tail_max_seq(cs->tail);
	if (a->head < 0)
		return -1;
	if (r->has & CONTROL_KEY(AFTER))
		return audit_tail_read(cs->tail, r->after, NULL, a->rows, CONTROL_AUDIT_ROWS, &a->n);
	return audit_tail_last(cs->tail, CONTROL_AUDIT_ROWS, NULL, a->rows, &a->n);
}

static void
op_audit(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;
	struct control_audit *a = answer_new(cs, c, r->id, sizeof *a, &ok);

	if (!a)
		return;
	answer_reply(cs, c, r->id, ok, audit_rows(cs, r, a) < 0 ? CONTROL_E_AUDIT
				       : control_audit_into(a, ok) < 0 ? CONTROL_E_MEMORY : NULL);
	free(a);
}

/*
 * The policy story of the engine's own log (audit_timeline.h): the events
 * of the entries after the asked seq, at most CONTROL_TIMELINE_ROWS an
 * answer, with the cursor of the next ask. Read by the supervisor from
 * the cursor on, so a console that follows costs what was written since.
 */
static void
op_timeline(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;
	struct control_timeline *t = answer_new(cs, c, r->id, sizeof *t, &ok);
	struct al_err err;
	int rc;

	if (!t)
		return;
	t->next = r->has & CONTROL_KEY(AFTER) ? r->after : 0;
	rc = supervisor_timeline(cs->o.sup, &t->next, t->rows, CONTROL_TIMELINE_ROWS, &t->n,
				 &t->more, &err);
	answer_reply(cs, c, r->id, ok, rc < 0 ? CONTROL_E_AUDIT
				       : control_timeline_into(t, ok) < 0 ? CONTROL_E_MEMORY : NULL);
	free(t);
}

/* The resident set from /proc/self/statm (pages); 0 when unreadable. */
static uint64_t
rss_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void
op_metrics(struct control_server *cs, struct client *c, const struct control_request *r)
{
	char *text;

	if (cs_refresh(cs) < 0) {
		cs_reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	cs->counts.clients = cs_n_clients(cs);
	cs->counts.rss_bytes = rss_bytes();
	text = control_metrics_text(&cs->snap, &cs->counts);
	reply_with(cs, c, r->id, "text", text ? json_string(text) : NULL);
	free(text);
}

/*
 * A peer whose config may give argv, env and cwd itself, and whose path
 * the engine may open: root, or the engine's own uid (it gains no rights
 * by it). Any other operate peer names installed upstreams only
 * (upstream_catalog.h; docs/operations.md, "Who may connect: roles").
 */
static bool
peer_trusted(const struct client *c)
{
	return c->uid == 0 || c->uid == geteuid();
}

/* A start refused before any config is loaded: audited with its author and why. */
static void
start_refused(struct control_server *cs, struct client *c, const struct control_request *r,
	      const char *word, const char *why)
{
	struct snap_author a;
	char rule[SNAP_WORD_MAX];

	log_authored(cs, c, r, why);
	cs_author(c, &a);
	snprintf(rule, sizeof rule, "start refused: %s", word);
	supervisor_record(cs->o.sup, &a, NULL, NULL, CUTOVER_REJECTED, rule);
	cs_reply_reason(cs, c, r->id, CONTROL_E_CONFIG, why);
}

/*
 * What a peer that is not trusted may not ask: a path (the engine would
 * open it with its own rights), argv, env, cwd or a file named in the
 * config. True when refused (and audited).
 */
static bool
start_untrusted(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct al_err err;
	const char *word;

	if (peer_trusted(c))
		return false;
	if (!r->config) {
		start_refused(cs, c, r, "path from a peer",
			      "the engine opens no config file for a peer that is not root: "
			      "use a current airlock ctl, which sends the file's contents");
		return true;
	}
	word = upstream_catalog_peer_fault(r->config, supervisor_upstreams_dir(cs->o.sup), &err);
	if (word)
		start_refused(cs, c, r, word, err.msg);
	return word != NULL;
}

/*
 * Read off the loop (control_starts.c): an installed upstream's code is
 * walked at every start. Answered by cs_starts_finish once read.
 */
static void
op_start(struct control_server *cs, struct client *c, const struct control_request *r)
{
	struct al_err err;

	if (start_untrusted(cs, c, r))
		return;
	if (cs_starts_busy(cs)) {
		snprintf(err.msg, sizeof err.msg, "%d starts wait for their configs to be read: "
			 "try again", CONTROL_STARTS_MAX);
		audit_authored(cs, c, r, NULL, false, CONTROL_E_BUSY);
		cs_reply_reason(cs, c, r->id, CONTROL_E_BUSY, err.msg);
		return;
	}
	if (cs_start_begin(cs, c, r, !peer_trusted(c), &err) < 0) {
		audit_authored(cs, c, r, NULL, false, CONTROL_E_CONFIG);
		cs_reply_reason(cs, c, r->id, CONTROL_E_CONFIG, err.msg);
	}
}

/* A start whose config was read: the session started from it, or why not. */
static void
start_done(struct control_server *cs, struct start_job *j)
{
	struct client *c = cs_client_by_serial(cs, j->who.serial);
	const struct control_request *r = &j->req;
	char id[SNAP_ID_MAX];
	int rc = j->rc;

	if (rc == 0 && cs->stopping)
		rc = al_fail(&j->err, "the engine is stopping");
	if (rc == 0)
		rc = supervisor_start(cs->o.sup, &j->o->cfg, id, &j->err);
	if (rc < 0) {
		audit_authored(cs, &j->who, r, NULL, false, CONTROL_E_CONFIG);
		if (c)
			cs_reply_reason(cs, c, r->id, CONTROL_E_CONFIG, j->err.msg);
	} else {
		audit_authored(cs, &j->who, r, id, true, "started");
		cs_say(cs, "session %s started by client %u (uid %u %s)%s%s", id, j->who.serial,
		       (unsigned)j->who.uid, j->who.user,
		       j->config ? ", inline config" : ", config ", j->config ? "" : r->path);
		if (c)
			reply_session(cs, c, r, id);
	}
	cs_start_end(cs, j, rc < 0 ? NULL : id);
}

void
cs_starts_finish(struct control_server *cs)
{
	struct start_job *j;

	while ((j = cs_start_next_done(cs)))
		start_done(cs, j);
}

static void
op_stop(struct control_server *cs, struct client *c, const struct control_request *r)
{
	char id[SNAP_ID_MAX], why[SNAP_ID_MAX + 32];

	if (session_named(cs, c, r, r->session, id) < 0)
		return;
	if (supervisor_stop_session(cs->o.sup, id) < 0) {
		snprintf(why, sizeof why, "session %s has ended", id);
		cs_reply_reason(cs, c, r->id, CONTROL_E_SESSION, why);
		return;
	}
	audit_authored(cs, c, r, id, true, "stopping");
	reply_session(cs, c, r, id);
}

static void
op_stop_all(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;
	struct control_done *d;
	size_t i;

	if (cs_refresh(cs) < 0) {
		cs_reply_error(cs, c, r->id, CONTROL_E_MEMORY);
		return;
	}
	if (!(d = answer_new(cs, c, r->id, sizeof *d, &ok)))
		return;
	for (i = 0; i < cs->snap.n; i++)
		if (cs->snap.rows[i].state != SESSION_STATE_ENDED &&
		    supervisor_stop_session(cs->o.sup, cs->snap.rows[i].id) == 0)
			d->stopped++;
	audit_authored(cs, c, r, NULL, true, "stopping");
	done_reply(cs, c, r, d, ok);
}

/* Forgotten: into d's ids; named but not ended: into its kept. */
static void
forget_one(struct control_server *cs, const char *id, struct control_done *d, bool named)
{
	bool done = supervisor_forget(cs->o.sup, id) == 0;

	if (done && d->n_ids < CONTROL_SESSIONS_MAX)
		snprintf(d->ids[d->n_ids++], SNAP_ID_MAX, "%s", id);
	else if (!done && named && d->n_kept < CONTROL_SESSIONS_MAX)
		snprintf(d->kept[d->n_kept++], SNAP_ID_MAX, "%s", id);
}

static void
op_forget(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;
	struct control_done *d = answer_new(cs, c, r->id, sizeof *d, &ok);
	size_t i;

	if (!d)
		return;
	if (r->n_ids == 0 && cs_refresh(cs) >= 0)
		for (i = 0; i < cs->snap.n; i++)
			if (cs->snap.rows[i].state == SESSION_STATE_ENDED)
				forget_one(cs, cs->snap.rows[i].id, d, false);
	for (i = 0; i < r->n_ids; i++)
		forget_one(cs, r->ids[i], d, true);
	audit_authored(cs, c, r, NULL, true, "done");
	done_reply(cs, c, r, d, ok);
}

/*
 * The sessions a cutover targets, as ids: the named ones, or every live
 * one now. A named one that has ended already is told so at once: no ack
 * or end will come for it.
 */
static void
cutover_targets(struct control_server *cs, const struct control_request *r, struct pending *p)
{
	struct session_row row;
	size_t i;

	p->n = 0;
	if (!r->all) {
		for (i = 0; i < r->n_ids; i++) {
			if (supervisor_row(cs->o.sup, r->ids[i], &row) == 0 &&
			    row.state == SESSION_STATE_ENDED)
				p->state[p->n] = ENDED;
			snprintf(p->ids[p->n++], SNAP_ID_MAX, "%s", r->ids[i]);
		}
		return;
	}
	for (i = 0; i < cs->snap.n && p->n < SUPERVISOR_SESSIONS_MAX; i++)
		if (cs->snap.rows[i].state != SESSION_STATE_ENDED)
			snprintf(p->ids[p->n++], SNAP_ID_MAX, "%s", cs->snap.rows[i].id);
}

static int
pending_slot(const struct control_server *cs)
{
	int k;

	for (k = 0; k < CONTROL_PENDING_MAX; k++)
		if (!cs->pending[k])
			return k;
	return -1;
}

/* A slot and a pending reply for a cutover, or a refusal sent: busy, out of memory. */
static struct pending *
pending_new(struct control_server *cs, struct client *c, const struct control_request *r,
	    int *slot)
{
	struct pending *p = calloc(1, sizeof *p);

	*slot = pending_slot(cs);
	if (!p || *slot < 0 || cs_refresh(cs) < 0 ||
	    cs->snap.audit_backlog > CONTROL_AUDIT_BACKLOG_MAX) {
		free(p);
		cs_reply_error(cs, c, r->id, p ? CONTROL_E_BUSY : CONTROL_E_MEMORY);
		return NULL;
	}
	return p;
}

/* The cutover is under way: its reply waits for the acks (or wait_ms). */
static void
pending_wait(struct control_server *cs, struct client *c, const struct control_request *r,
	     struct pending *p, int slot, enum cutover_op op)
{
	p->client = c->serial;
	p->id = r->id;
	p->op = op;
	snprintf(p->tool, sizeof p->tool, "%s", r->tool);
	p->deadline_ms = clock_mono_ms() + r->wait_ms;
	p->unsaved = supervisor_standing_unsaved(cs->o.sup);
	cutover_targets(cs, r, p);
	cs->pending[slot] = p;
	if (r->wait_ms == 0 || cs_pending_done(p))
		cs_pending_finish(cs, (size_t)slot);
}

/* A cutover's sessions as whole ids, in a copy of the request (its acks name them so). */
static int
cutover_named(struct control_server *cs, struct client *c, const struct control_request *r,
	      struct control_request *whole)
{
	size_t i;

	*whole = *r;
	for (i = 0; !r->all && i < r->n_ids; i++)
		if (session_named(cs, c, r, r->ids[i], whole->ids[i]) < 0)
			return -1;
	return 0;
}

static void
op_cutover(struct control_server *cs, struct client *c, const struct control_request *named)
{
	enum cutover_op op = named->op == CONTROL_OP_REVOKE ? CUTOVER_REVOKE :
			     named->op == CONTROL_OP_HOLD ? CUTOVER_HOLD : CUTOVER_RESTORE;
	const char *ids[CONTROL_IDS_MAX];
	struct control_request whole, *r = &whole;
	struct cutover_done done;
	struct snap_author a;
	struct al_err err;
	struct pending *p;
	int slot;
	size_t i;

	if (cutover_named(cs, c, named, &whole) < 0)
		return;
	if (!(p = pending_new(cs, c, r, &slot)))
		return;
	for (i = 0; i < r->n_ids; i++)
		ids[i] = r->ids[i];
	cs_author(c, &a);
	if (r->has & CK(FLOW))	/* its audit row and acks name the flow as their tool */
		snprintf(whole.tool, sizeof whole.tool, "%s", r->flow);
	if ((r->for_s || r->calls
	     ? supervisor_grant(cs->o.sup, r->tool, r->all ? NULL : ids, r->n_ids, &a, r->for_s,
				r->calls, &done, &err)
	     : r->has & CK(FLOW)
	     ? supervisor_flow_cutover_by(cs->o.sup, op, r->flow, r->all ? NULL : ids, r->n_ids,
					  &a, &done, &err)
	     : supervisor_cutover_by(cs->o.sup, op, r->tool, r->all ? NULL : ids, r->n_ids, &a,
				     &done, &err)) < 0) {
		free(p);
		audit_authored(cs, c, r, NULL, false, CONTROL_E_CUTOVER);
		cs_reply_reason(cs, c, r->id, CONTROL_E_CUTOVER, err.msg);
		return;
	}
	log_authored(cs, c, r, r->for_s || r->calls ? (r->all ? "all sessions, a grant"
								 : "named sessions, a grant")
				: r->all ? "all sessions" : "named sessions");
	p->revision = done.revision;
	p->targets = done.targets;
	/* The answer names what it acted on: an alias resolved (one lookup, the cutover's). */
	snprintf(whole.tool, sizeof whole.tool, "%s", done.tool);
	pending_wait(cs, c, r, p, slot, op);
}

/* The kill switch: every live session, acknowledged like a cutover. */
static void
op_freeze(struct control_server *cs, struct client *c, const struct control_request *r)
{
	bool freeze = r->op == CONTROL_OP_FREEZE;
	struct control_request all = *r;
	struct snap_author a;
	struct al_err err;
	struct pending *p;
	int slot;

	if (!(p = pending_new(cs, c, r, &slot)))
		return;
	cs_author(c, &a);
	if (supervisor_freeze(cs->o.sup, freeze, &a, &p->revision, &p->targets, &err) < 0) {
		free(p);
		audit_authored(cs, c, r, NULL, false, CONTROL_E_CUTOVER);
		cs_reply_reason(cs, c, r->id, CONTROL_E_CUTOVER, err.msg);
		return;
	}
	log_authored(cs, c, r, "all sessions");
	all.all = true;
	all.config = NULL;
	pending_wait(cs, c, &all, p, slot, freeze ? CUTOVER_FREEZE : CUTOVER_THAW);
}

/* The held calls waiting now: what each is, never its payload. */
static void
op_pending(struct control_server *cs, struct client *c, const struct control_request *r)
{
	json_t *ok;
	struct control_pending *p = answer_new(cs, c, r->id, sizeof *p, &ok);

	if (!p)
		return;
	p->n = supervisor_holds(cs->o.sup, p->calls, SNAP_HOLDS_MAX);
	answer_reply(cs, c, r->id, ok, control_pending_into(p, ok) < 0 ? CONTROL_E_MEMORY : NULL);
	free(p);
}

/* An operator's approve or deny of one held call; its waiter writes the decision's entry. */
static void
op_decide(struct control_server *cs, struct client *c, const struct control_request *r)
{
	bool approve = r->op == CONTROL_OP_APPROVE;
	struct snap_author a;
	struct al_err err;
	char what[40];

	cs_author(c, &a);
	snprintf(what, sizeof what, "hold %lld", (long long)r->hold_id);
	if (supervisor_hold_decide(cs->o.sup, r->hold_id, approve, r->rest, &a, &err) < 0) {
		audit_authored(cs, c, r, NULL, false, CONTROL_E_HOLD);
		cs_reply_reason(cs, c, r->id, CONTROL_E_HOLD, err.msg);
		return;
	}
	log_authored(cs, c, r, what);
	cs_reply(cs, c, r->id, control_ok(r->id));
}

/* The ids a quarantine picks: named, all (NULL), or those that called a tool in the window. */
static const char *const *
quarantine_pick(struct control_server *cs, const struct control_request *r,
		char (*called)[SNAP_ID_MAX], const char **named, size_t *n)
{
	int64_t within_s = r->within_s ? r->within_s : QUARANTINE_WITHIN_DEFAULT_S;
	size_t i;

	if (r->all)
		return NULL;
	if (r->has & CK(TOOL)) {
		*n = supervisor_called_within(cs->o.sup, r->tool, within_s * 1000, called,
					      SUPERVISOR_SESSIONS_MAX);
		for (i = 0; i < *n && i < SUPERVISOR_SESSIONS_MAX; i++)
			named[i] = called[i];
		return named;
	}
	for (i = 0; i < r->n_ids; i++)
		named[i] = r->ids[i];
	*n = r->n_ids;
	return named;
}

/*
 * Quarantine or release (issue 43, item 3): the supervisor writes a
 * policy entry per session with the author; the reply lists the ids that
 * changed (one already so, or ended, is not listed).
 */
static void
op_quarantine(struct control_server *cs, struct client *c, const struct control_request *named)
{
	bool on = named->op == CONTROL_OP_QUARANTINE;
	char (*called)[SNAP_ID_MAX] = calloc(SUPERVISOR_SESSIONS_MAX, SNAP_ID_MAX);
	const char **pick = calloc(SUPERVISOR_SESSIONS_MAX, sizeof *pick);
	const char *const *ids;
	struct control_request whole;
	struct control_done *d = NULL;
	struct snap_author a;
	struct al_err err;
	json_t *ok;
	size_t n = 0;

	if (!called || !pick)
		cs_reply_error(cs, c, named->id, CONTROL_E_MEMORY);
	else if ((named->has & CK(TOOL)) && supervisor_tool_check(cs->o.sup, named->tool, &err) < 0) {
		audit_authored(cs, c, named, NULL, false, CONTROL_E_QUARANTINE);
		cs_reply_reason(cs, c, named->id, CONTROL_E_QUARANTINE, err.msg);
	} else if (cutover_named(cs, c, named, &whole) == 0 &&
		 (d = answer_new(cs, c, named->id, sizeof *d, &ok))) {
		ids = quarantine_pick(cs, &whole, called, pick, &n);
		cs_author(c, &a);
		d->n_ids = supervisor_quarantine(cs->o.sup, on, ids, n, &a, d->ids,
						 CONTROL_SESSIONS_MAX);
		log_authored(cs, c, &whole, on ? "quarantined" : "released");
		done_reply(cs, c, named, d, ok);
	}
	free(called);
	free(pick);
}

typedef void (*op_fn)(struct control_server *, struct client *, const struct control_request *);

static const op_fn op_table[CONTROL_OP_COUNT] = {
	[CONTROL_OP_HELLO] = op_hello,
	[CONTROL_OP_SNAPSHOT] = op_snapshot,
	[CONTROL_OP_DETAIL] = op_detail,
	[CONTROL_OP_EVENTS] = op_events,
	[CONTROL_OP_HOST] = op_host,
	[CONTROL_OP_METRICS] = op_metrics,
	[CONTROL_OP_AUDIT] = op_audit,
	[CONTROL_OP_TIMELINE] = op_timeline,
	[CONTROL_OP_START] = op_start,
	[CONTROL_OP_STOP] = op_stop,
	[CONTROL_OP_REVOKE] = op_cutover,
	[CONTROL_OP_RESTORE] = op_cutover,
	[CONTROL_OP_FORGET] = op_forget,
	[CONTROL_OP_STOP_ALL] = op_stop_all,
	[CONTROL_OP_FREEZE] = op_freeze,
	[CONTROL_OP_THAW] = op_freeze,
	[CONTROL_OP_HOLD] = op_cutover,
	[CONTROL_OP_PENDING] = op_pending,
	[CONTROL_OP_APPROVE] = op_decide,
	[CONTROL_OP_DENY] = op_decide,
	[CONTROL_OP_QUARANTINE] = op_quarantine,
	[CONTROL_OP_RELEASE] = op_quarantine,
};

_Static_assert(PARSER_CONTROL_LINE_MAX == CONTROL_LINE_MAX, "the parser takes every line");

/*
 * The client's own parser (issue 41, section 3): one a connection, so a
 * peer whose line takes its parser over reaches only its own requests,
 * which the kernel's word on its role still bounds. Started at its first
 * line; it ends with the connection. Root's and the engine's uid's were
 * started ahead (cs_owner_parser), and end with theirs too.
 */
static int
client_parser(struct control_server *cs, struct client *c)
{
	struct al_err err;

	if (c->parser || (c->parser = cs_owner_parser(cs, c)))
		return 0;
	if (parser_start_beside(cs->o.exe, CONTROL_LINE_MAX, &c->parser, &err) == 0)
		return 0;
	cs_say(cs, "client %u (uid %u %s): %s", c->serial, (unsigned)c->uid, c->user, err.msg);
	return -1;
}

/* Its parser is gone: nothing more is read from this client. */
static void
parser_gone(struct control_server *cs, struct client *c)
{
	parser_set_lost(c->parser);
	cs_end_input(cs, c, CONTROL_E_PARSER);
}

/* One request line: refused with a fixed text, or served by its op. */
void
cs_serve_line(struct control_server *cs, struct client *c, const char *line, size_t len)
{
	struct control_request r;
	const char *error;
	const void *digest;
	size_t n;
	int rc;

	if (client_parser(cs, c) < 0 || parser_control(c->parser, line, len, &digest, &n) < 0 ||
	    (rc = control_digest_read(digest, n, &r, &error)) < 0) {
		parser_gone(cs, c);
		return;
	}
	if (rc > 0)
		cs_reply_error(cs, c, r.id, error);
	else if (c->role < control_op_role(r.op)) {	/* the table says who may */
		cs->counts.refused_view++;
		if (refusal_written(cs, &cs->views, "view-only changes refused"))
			audit_authored(cs, c, &r, NULL, false, CONTROL_E_VIEW);
		cs_reply_error(cs, c, r.id, CONTROL_E_VIEW);
	} else if (control_request_load_config(&r) < 0) {
		control_request_free(&r);
		parser_gone(cs, c);	/* a config it called an object is none */
		return;
	} else
		op_table[r.op](cs, c, &r);
	control_request_free(&r);
}
