/*
 * The console's model: engine snapshots in, the selection's target and
 * what it offers out. The one place that says what the operator's keys
 * would act on, for the key bar and the dispatcher alike.
 */
#include "model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_timeline.h"
#include "clock.h"
#include "grow.h"
#include "ids.h"
#include "supervisor.h"

int
model_init(struct model *m, bool read_only)
{
	memset(m, 0, sizeof *m);
	m->detail = calloc(1, sizeof *m->detail);
	m->hist_flat = calloc(MODEL_HISTORY_MAX, sizeof *m->hist_flat);
	m->timeline = calloc(MODEL_TIMELINE_MAX, sizeof *m->timeline);
	m->pending = calloc(MODEL_PENDING_MAX, sizeof *m->pending);
	if (!m->detail || !m->hist_flat || !m->timeline || !m->pending) {
		model_free(m);
		return -1;
	}
	m->read_only = read_only;
	m->view = VIEW_SESSIONS;
	for (size_t i = 0; i < MODEL_LINKS_MAX; i++) {
		m->audit_after[i] = -1;
		m->pending_due[i] = true;	/* the first refresh lists what waits already */
	}
	return 0;
}

void
model_free(struct model *m)
{
	size_t i;

	supervisor_snapshot_free(&m->snap);
	for (i = 0; i < MODEL_LINKS_MAX; i++)
		supervisor_snapshot_free(&m->per[i]);
	free(m->detail);
	free(m->hist_flat);
	free(m->timeline);
	free(m->pending);
	m->detail = NULL;
	m->hist_flat = NULL;
	m->timeline = NULL;
	m->pending = NULL;
}

/* ---- history and the audit tail ---- */

void
model_add_events(struct model *m, const struct supervisor_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (m->hist_n == MODEL_HISTORY_MAX) {
			m->hist_head = (m->hist_head + 1) % MODEL_HISTORY_MAX;
			m->hist_n--;
		}
		m->history[(m->hist_head + m->hist_n++) % MODEL_HISTORY_MAX] = ev[i];
	}
	/* Flattened once per batch, so views read it as a plain array. */
	for (i = 0; i < m->hist_n; i++)
		m->hist_flat[i] = m->history[(m->hist_head + i) % MODEL_HISTORY_MAX];
}

void
model_add_engine_events(struct model *m, unsigned engine, struct supervisor_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ev[i].engine = engine;
		if (engine < MODEL_LINKS_MAX && (ev[i].kind == SUPERVISOR_EVENT_HOLD_WAITING ||
						 ev[i].kind == SUPERVISOR_EVENT_HOLD_DECIDED))
			m->pending_due[engine] = true;
	}
	model_add_events(m, ev, n);
}

bool
model_tail_failed(struct model *m, const char *why)
{
	bool first = !m->tail_error[0];

	snprintf(m->tail_error, sizeof m->tail_error, "%.100s", why);
	return first;
}

/* New rows at the end; the oldest fall out past MODEL_AUDIT_MAX. */
static void
add_audit(struct model *m, const struct audit_row *rows, size_t n)
{
	size_t keep = MODEL_AUDIT_MAX - n;

	if (m->n_audit > keep) {
		memmove(m->audit_rows, m->audit_rows + (m->n_audit - keep), keep * sizeof rows[0]);
		m->n_audit = keep;
	}
	memcpy(m->audit_rows + m->n_audit, rows, n * sizeof rows[0]);
	m->n_audit += n;
}

/*
 * Each engine's audit rows through its link, in the order they arrive
 * (docs/console.md): the view never opens a log itself.
 */
static bool
follow_audit(struct model *m, struct link *const *links)
{
	struct audit_row rows[64];
	char why[MODEL_WHY_MAX];
	bool failed = false, said = false;
	size_t i, n;

	for (i = 0; i < m->n_links; i++) {
		if (link_audit(links[i], &m->audit_after[i], rows, 64, &n, why, sizeof why) < 0) {
			said |= model_tail_failed(m, why);
			failed = true;
			continue;
		}
		add_audit(m, rows, n);
	}
	if (!failed)
		m->tail_error[0] = '\0';
	return said;
}

/* One event in: folded, or placed by time among other engines' (the oldest out when full). */
static void
add_timeline_row(struct model *m, const struct timeline_row *r)
{
	size_t at;

	if (audit_timeline_fold(m->timeline, m->n_timeline, r))
		return;
	if (m->n_timeline == MODEL_TIMELINE_MAX) {
		memmove(m->timeline, m->timeline + 1, --m->n_timeline * sizeof *r);
		m->timeline_dropped++;
	}
	for (at = m->n_timeline; at > 0; at--) {
		const struct timeline_row *e = &m->timeline[at - 1];

		if (e->engine == r->engine || strcmp(e->time, r->time) <= 0)
			break;
	}
	memmove(m->timeline + at + 1, m->timeline + at, (m->n_timeline - at) * sizeof *r);
	m->timeline[at] = *r;
	m->n_timeline++;
}

void
model_add_timeline(struct model *m, unsigned engine, struct timeline_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rows[i].engine = engine;
		add_timeline_row(m, &rows[i]);
	}
}

/*
 * Each engine's new timeline events through its link, while the view is
 * shown: each read takes what was written after the engine's cursor, a
 * few pages at most a refresh (each page goes through a bounded number of
 * entries, AUDIT_TIMELINE_SCAN). The view never opens a log itself.
 */
static void
follow_timeline(struct model *m, struct link *const *links)
{
	struct timeline_row rows[64];
	char why[MODEL_WHY_MAX];
	bool failed = false, more;
	size_t i, n, page;

	for (i = 0; i < m->n_links; i++) {
		more = true;
		for (page = 0; more && page < MODEL_TIMELINE_PAGES; page++) {
			if (link_timeline(links[i], &m->timeline_after[i], rows, 64, &n, &more, why,
					  sizeof why) < 0) {
				snprintf(m->timeline_error, sizeof m->timeline_error, "%.100s", why);
				failed = true;
				break;
			}
			model_add_timeline(m, (unsigned)i, rows, n);
			/* more with no row: the page's scan went through calls only */
		}
	}
	if (!failed)
		m->timeline_error[0] = '\0';
}

/* ---- held calls ---- */

/* Oldest first across engines: by when each began to wait, then engine, then id. */
static int
hold_older(const void *a, const void *b)
{
	const struct hold_view *x = a, *y = b;

	if (x->since_ms != y->since_ms)
		return x->since_ms < y->since_ms ? -1 : 1;
	if (x->engine != y->engine)
		return x->engine < y->engine ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Each engine's held calls through its link, into one list of at most
 * MODEL_PENDING_MAX. An engine that does not say has none listed, and
 * the view says why. One whose newer list is on its way (LINK_SENT)
 * stays due: the next refresh, when the answer came, takes it.
 */
static void
follow_pending(struct model *m, struct link *const *links)
{
	char why[MODEL_WHY_MAX];
	size_t i, k, n;
	int rc;

	m->n_pending = 0;
	m->pending_error[0] = '\0';
	m->pending_ms = clock_mono_ms();
	for (i = 0; i < m->n_links; i++) {
		n = 0;
		rc = link_pending(links[i], m->pending + m->n_pending,
				  MODEL_PENDING_MAX - m->n_pending, &n, why, sizeof why);
		m->pending_due[i] = rc == LINK_SENT;
		if (rc < 0) {
			snprintf(m->pending_error, sizeof m->pending_error, "%.150s", why);
			continue;
		}
		for (k = 0; k < n; k++)
			m->pending[m->n_pending + k].engine = (unsigned)i;
		m->n_pending += n;
	}
	if (m->n_links > 1)
		qsort(m->pending, m->n_pending, sizeof *m->pending, hold_older);
}

/*
 * Is a list due: an engine's hold event, an engine come up (what waits
 * there is news to this console), or the safety period passed? prev is
 * each link's state before this refresh.
 */
static bool
pending_due(struct model *m, const enum link_state *prev)
{
	bool due = clock_mono_ms() - m->pending_ms >= MODEL_PENDING_SAFETY_MS;
	size_t i;

	for (i = 0; i < m->n_links; i++) {
		if (m->link_st[i].state == LINK_UP && prev[i] != LINK_UP)
			m->pending_due[i] = true;
		due |= m->pending_due[i];
	}
	return due;
}

/* ---- what views see, and what the selection targets ---- */

void
model_ui(const struct model *m, struct ui_model *out)
{
	int64_t now = clock_wall_ms();

	*out = (struct ui_model){
		.snap = &m->snap,
		.detail = m->have_detail ? m->detail : NULL,
		.events = m->hist_flat,
		.n_events = m->hist_n,
		.audit = m->audit_rows,
		.n_audit = m->n_audit,
		.audit_error = m->tail_error[0] ? m->tail_error : NULL,
		.timeline = m->timeline,
		.n_timeline = m->timeline ? m->n_timeline : 0,
		.timeline_dropped = m->timeline_dropped,
		.timeline_error = m->timeline_error[0] ? m->timeline_error : NULL,
		.pending = m->pending,
		.n_pending = m->pending ? m->n_pending : 0,
		.pending_error = m->pending_error[0] ? m->pending_error : NULL,
		.host = &m->host,
		.marks = (const char (*)[SNAP_ID_MAX])m->marks,
		.n_marks = m->n_marks,
		.now_ms = now,
		.stale = !m->snap_ok || now - m->snap_ms > MODEL_STALE_MS,
		.engine_fresh = m->n_links > 0 ? m->link_fresh : NULL,
		.read_only = m->read_only,
		.engine_names = (const char (*)[SNAP_ENGINE_MAX])m->engine_names,
		.n_engines = m->n_links,
	};
}

void
model_target(const struct model *m, struct target *t)
{
	const struct view_ops *v = views[m->view];
	const struct view_state *vs = &m->vs[m->view];
	struct ui_model u;
	size_t n;

	memset(t, 0, sizeof *t);
	model_ui(m, &u);
	/* The view clamps its selection when it draws; rows may have gone since. */
	if (v->target && (n = v->rows(&u, vs)) > 0)
		v->target(&u, vs, vs->selected < n ? vs->selected : n - 1, t->session, t->tool);
	if (v->held && (n = v->rows(&u, vs)) > 0)
		t->hold = v->held(&u, vs, vs->selected < n ? vs->selected : n - 1, &t->hold_engine);
	if (!t->session[0] && vs->session[0])
		snprintf(t->session, sizeof t->session, "%s", vs->session);
}

unsigned
model_engine_of(const struct model *m, const char *id)
{
	const struct session_row *r = model_session(m, id);

	return r ? r->engine : 0;
}

/* The session the current view acts on gets its detail, from its engine. */
static void
refresh_detail(struct model *m, struct link *const *links)
{
	struct target t;

	m->have_detail = false;		/* the target is found without the old one */
	model_target(m, &t);
	if (t.session[0])
		m->have_detail = link_detail(links[model_engine_of(m, t.session)], t.session,
					     m->detail) == 0;
	if (m->have_detail)
		m->detail->row.engine = model_engine_of(m, t.session);
}

/* The engine-wide parts of one engine's snapshot, added into the whole. */
static void
merge_totals(struct supervisor_snapshot *all, const struct supervisor_snapshot *one)
{
	size_t i;

	all->generation += one->generation;
	all->taken_ms = one->taken_ms > all->taken_ms ? one->taken_ms : all->taken_ms;
	all->revision = one->revision > all->revision ? one->revision : all->revision;
	all->live += one->live;
	all->started_total += one->started_total;
	all->forgotten_total += one->forgotten_total;
	all->events_dropped += one->events_dropped;
	all->alerts_dropped += one->alerts_dropped;
	all->audit_backlog += one->audit_backlog;
	all->audit_failures += one->audit_failures;
	all->containers_left += one->containers_left;
	for (i = 0; i < one->n_standing && all->n_standing < SNAP_STANDING_MAX; i++) {
		size_t k = all->n_standing++;

		memcpy(all->standing[k], one->standing[i], sizeof all->standing[k]);
		all->standing_by[k] = one->standing_by[i];
		all->standing_revision[k] = one->standing_revision[i];
	}
	if (one->frozen && !all->frozen) {
		all->frozen = true;
		all->frozen_by = one->frozen_by;
		all->frozen_revision = one->frozen_revision;
	}
}

/*
 * Several engines: each one's snapshot (a lost one keeps its last), then
 * one list of every row, each marked with its engine. True when any
 * engine's is fresh: staleness is each engine's own (link_fresh), the
 * whole is stale only when none answers.
 */
static bool
merge_snapshots(struct model *m, struct link *const *links, size_t n)
{
	struct supervisor_snapshot *all = &m->snap;
	struct session_row *rows;
	size_t i, k, total = 0, cap;
	bool fresh = false;

	for (i = 0; i < n; i++) {
		m->link_fresh[i] = link_snapshot(links[i], &m->per[i]) == 0;
		fresh |= m->link_fresh[i];
		total += m->per[i].n;
	}
	if (grow(&all->rows, &all->cap, total, sizeof *all->rows, 16,
		 SIZE_MAX / sizeof *all->rows) < 0)
		return false;
	rows = all->rows;
	cap = all->cap;
	memset(all, 0, sizeof *all);
	all->rows = rows;
	all->cap = cap;
	for (i = 0; i < n; i++) {
		for (k = 0; k < m->per[i].n; k++) {
			all->rows[all->n] = m->per[i].rows[k];
			all->rows[all->n++].engine = (unsigned)i;
		}
		merge_totals(all, &m->per[i]);
	}
	return fresh;
}

bool
model_refresh(struct model *m, struct link *const *links, size_t n)
{
	enum link_state prev[MODEL_LINKS_MAX];
	bool failed;
	size_t i;

	m->n_links = n < MODEL_LINKS_MAX ? n : MODEL_LINKS_MAX;
	for (i = 0; i < m->n_links; i++) {
		prev[i] = m->link_st[i].state;
		link_status(links[i], &m->link_st[i]);
		snprintf(m->engine_names[i], sizeof m->engine_names[i], "%s", m->link_st[i].name);
	}
	if (m->n_links == 1)
		m->snap_ok = m->link_fresh[0] = link_snapshot(links[0], &m->snap) == 0;
	else
		m->snap_ok = merge_snapshots(m, links, m->n_links);
	if (m->snap_ok)
		m->snap_ms = clock_wall_ms();
	link_host(links[0], &m->host);
	failed = follow_audit(m, links);
	if (m->view == VIEW_TIMELINE)
		follow_timeline(m, links);
	if (pending_due(m, prev))
		follow_pending(m, links);
	refresh_detail(m, links);
	return failed;
}

/* ---- what is offered ---- */

enum request
model_request(const struct model *m, enum request r)
{
	const struct view_ops *v = views[m->view];
	struct view_reply reply;
	struct ui_model u;

	if (!v->request || r == REQ_NONE)
		return r;
	model_ui(m, &u);
	reply = v->request(request_name(r), &u, &m->vs[m->view]);
	if (reply.verdict == VIEW_IGNORE)
		return REQ_NONE;
	return reply.verdict == VIEW_AS ? request_by_name(reply.as) : r;
}

static bool
refuse(char *why, size_t cap, const char *text)
{
	snprintf(why, cap, "%s", text);
	return false;
}

/* The requests on the whole engine: offered by its state, not the selection. */
static bool
engine_offered(const struct model *m, enum request r, char *why, size_t cap)
{
	const struct supervisor_snapshot *s = &m->snap;

	if (r == REQ_FREEZE && s->frozen) {
		snprintf(why, cap, "frozen already since r%lld by %s: thaw lifts it",
			 (long long)s->frozen_revision, s->frozen_by.user);
		return false;
	}
	if (r == REQ_THAW && !s->frozen)
		return refuse(why, cap, "the engine is not frozen");
	if (r == REQ_STOP_ALL && s->live == 0)
		return refuse(why, cap, "no live session");
	return true;
}

/*
 * Not what the view makes nothing of (enter on the detail it shows); no
 * filter where rows do not filter; open and force-stop only with a
 * session selected; revoke and restore with a session or a tool selected.
 * Nothing of that where rows are no session's (the host checks), or
 * there are none.
 */
bool
model_offered(const struct model *m, enum request r, const struct target *t, char *why,
	      size_t cap)
{
	why[0] = '\0';
	if ((r = model_request(m, r)) == REQ_NONE)
		return false;
	if (request_destructive(r) && model_view_only(m)) {
		snprintf(why, cap, MODEL_VIEW_ONLY, request_name(r));
		return false;
	}
	if (r == REQ_FILTER && !views[m->view]->filters) {
		snprintf(why, cap, "the %s view has no filter", views[m->view]->name);
		return false;
	}
	if ((r == REQ_JUMP_PREV || r == REQ_JUMP_NEXT) && !views[m->view]->jump) {
		snprintf(why, cap, "the %s view has no jumps", views[m->view]->name);
		return false;
	}
	if ((r == REQ_APPROVE || r == REQ_APPROVE_REST || r == REQ_DENY) && !t->hold)
		return refuse(why, cap, "no held call selected");
	if (r == REQ_ENTER && !t->session[0])
		return refuse(why, cap, "no session selected");
	if ((r == REQ_FORCE_STOP || r == REQ_QUARANTINE) && !t->session[0])
		return refuse(why, cap, "no live session selected");
	if (r == REQ_FREEZE || r == REQ_THAW || r == REQ_STOP_ALL)
		return engine_offered(m, r, why, cap);
	if (request_destructive(r) && !t->session[0] && !t->tool[0])
		return refuse(why, cap, "no session or tool selected");
	return true;
}

/* ---- moving about ---- */

void
model_move(struct model *m, long delta)
{
	struct view_state *vs = &m->vs[m->view];
	struct ui_model u;
	size_t n;
	long to;

	model_ui(m, &u);
	n = views[m->view]->rows(&u, vs);
	if (n == 0)
		return;
	to = (long)vs->selected + delta;
	vs->selected = to < 0 ? 0 : (size_t)to >= n ? n - 1 : (size_t)to;
}

void
model_open(struct model *m, enum view_id v, const char *session)
{
	if (session)
		snprintf(m->vs[v].session, sizeof m->vs[v].session, "%s", session);
	if (v != m->view)
		m->vs[v].selected = m->vs[v].top = 0;
	m->view = v;
}

void
model_toggle_mark(struct model *m, const char *session)
{
	size_t i;

	for (i = 0; i < m->n_marks; i++)
		if (strcmp(m->marks[i], session) == 0) {
			memmove(m->marks[i], m->marks[i + 1], (m->n_marks - i - 1) * sizeof m->marks[0]);
			m->n_marks--;
			return;
		}
	if (m->n_marks < UI_MARKS_MAX)
		snprintf(m->marks[m->n_marks++], SNAP_ID_MAX, "%s", session);
}

/* ---- lookups ---- */

const struct session_row *
model_session(const struct model *m, const char *id)
{
	size_t i;

	for (i = 0; i < m->snap.n; i++)
		if (strcmp(m->snap.rows[i].id, id) == 0)
			return &m->snap.rows[i];
	return NULL;
}

const struct session_row *
model_session_pick(const struct model *m, const char *typed, char *why, size_t cap)
{
	struct id_pick k;
	size_t i;

	id_pick_init(&k, typed);
	for (i = 0; i < m->snap.n; i++)
		id_pick_offer(&k, m->snap.rows[i].id, i);
	return id_pick_done(&k, why, cap) == 0 ? &m->snap.rows[k.at] : NULL;
}

/* Does a row name tool (an ended one's too when ended)? */
static bool
row_has_tool(const struct session_row *r, const char *tool, bool ended)
{
	size_t j;

	if (r->state == SESSION_STATE_ENDED && !ended)
		return false;
	for (j = 0; j < r->n_tools && j < SNAP_TOOLS_MAX; j++)
		if (strcmp(r->tools[j].name, tool) == 0)
			return true;
	return false;
}

/* Does a session have tool (an ended one too when ended), or does it stand revoked? */
static bool
tool_named(const struct model *m, const char *tool, bool ended)
{
	size_t i;

	for (i = 0; i < m->snap.n; i++)
		if (row_has_tool(&m->snap.rows[i], tool, ended))
			return true;
	for (i = 0; i < m->snap.n_standing; i++)
		if (strcmp(m->snap.standing[i], tool) == 0)
			return true;
	return false;
}

bool
model_tool_held(const struct model *m, const char *tool)
{
	return tool_named(m, tool, true);
}

bool
model_view_only(const struct model *m)
{
	size_t i;

	for (i = 0; i < m->n_links; i++)
		if (strcmp(m->link_st[i].role, "view") != 0)
			return false;
	return m->n_links > 0;
}

bool
model_tool_listed(const struct model *m, const char *tool)
{
	return tool_named(m, tool, false);
}
