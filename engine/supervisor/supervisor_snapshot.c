/*
 * Snapshots and detail for the console: rows copied when their generation
 * moved, and the live parts (lease, uptime, gate, call in flight) read
 * at every snapshot.
 */

#include "supervisor_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "audit_timeline.h"
#include "clock.h"
#include "gate.h"
#include "grow.h"
#include "watchdog.h"

/* Under s->lock: the parts of a row read now, not when the worker published. */
static void
row_live(struct slot *sl, struct session_row *r, int64_t now_mono)
{
	struct gate_state g;
	struct lease_status ls;
	size_t i;

	if (sl->lease) {
		lease_get_status(sl->lease, &ls);
		sup_lease_view_fill(&r->lease, &ls, now_mono);
	} else {
		r->lease = sl->last_lease;
	}
	r->uptime_ms = (sl->ended ? sl->ended_mono_ms : now_mono) - sl->started_mono_ms;
	gate_state(sl->gate, &g);
	r->revision = g.revision;
	r->gate_open = g.open;
	r->frozen = g.frozen;
	sup_quarantine_row(sl, r);
	r->pending = g.pending;
	r->pending_revision = g.pending_revision;
	r->pending_age_ms = g.pending ? (clock_mono_us() - g.pending_since_us) / 1000 : 0;
	r->flows_held = (unsigned)g.n_flows;
	for (i = 0; i < r->n_tools && i < GATE_TOOLS_MAX; i++) {
		r->tools[i].allowed = g.allowed[i];
		r->tools[i].held = g.held[i];
	}
	sup_grant_row(sl->sup, sl, r, now_mono);
	memset(&r->call, 0, sizeof r->call);
	if (g.busy && g.busy_tool >= 0 && (size_t)g.busy_tool < sl->cfg->n_tools) {
		r->call.active = true;
		sup_copy_word(r->call.tool, sizeof r->call.tool, sl->cfg->tools[g.busy_tool].name);
		r->call.revision = g.busy_revision;
		r->call.age_ms = (clock_mono_us() - g.busy_since_us) / 1000;
	}
}

/* Under s->lock: copy one row unless the caller's copy is already current. */
static bool
snapshot_row(struct slot *sl, struct session_row *out, int64_t now_mono)
{
	bool copy = out->generation != sl->row.generation || strcmp(out->id, sl->id) != 0;

	if (copy)
		*out = sl->row;
	row_live(sl, out, now_mono);
	return copy;
}

static void
snapshot_counts(struct supervisor *s, struct supervisor_snapshot *snap)
{
	size_t i;

	snap->live = 0;
	for (i = 0; i < s->n_slots; i++)
		snap->live += !s->slots[i]->ended;
	snap->generation = s->generation;
	snap->taken_ms = clock_wall_ms();
	snap->revision = s->revision;
	snap->n_standing_flow = s->n_standing_flow;
	memcpy(snap->standing_flow, s->standing_flow,
	       s->n_standing_flow * sizeof s->standing_flow[0]);
	snap->n_standing_hold = s->n_standing_hold;
	memcpy(snap->standing_hold, s->standing_hold,
	       s->n_standing_hold * sizeof s->standing_hold[0]);
	snap->n_standing = s->n_standing;
	memcpy(snap->standing, s->standing, s->n_standing * sizeof s->standing[0]);
	memcpy(snap->standing_by, s->standing_by, s->n_standing * sizeof s->standing_by[0]);
	memcpy(snap->standing_revision, s->standing_revision,
	       s->n_standing * sizeof s->standing_revision[0]);
	snap->frozen = s->frozen;
	snap->frozen_by = s->frozen_by;
	snap->frozen_revision = s->frozen_revision;
	snap->started_total = s->started_total;
	snap->forgotten_total = s->forgotten_total;
	snap->events_dropped = s->events.dropped;
	snap->alerts_dropped = s->alerts.dropped;
	snap->audit_backlog = s->q_n;
	snap->audit_failures = s->audit_failures;
	snap->containers_left = s->containers_left;
}

/* The pools, under their own lock (never taken with s->lock held). */
static bool
pools_changed(struct supervisor *s, struct supervisor_snapshot *snap)
{
	struct snap_pool before[SNAP_POOLS_MAX];
	size_t n = snap->n_pools;

	memcpy(before, snap->pools, sizeof before);
	sup_pool_snapshot(s, snap);
	return n != snap->n_pools || memcmp(before, snap->pools, n * sizeof before[0]) != 0;
}

int
supervisor_snapshot(struct supervisor *s, struct supervisor_snapshot *snap)
{
	int64_t now = clock_mono_ms();
	bool changed;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (grow(&snap->rows, &snap->cap, s->n_slots, sizeof *snap->rows, 16,
		 SUPERVISOR_SESSIONS_MAX) < 0) {
		pthread_mutex_unlock(&s->lock);
		snap->n = 0;
		return -1;
	}
	changed = snap->generation != s->generation || snap->n != s->n_slots;
	snap->n = s->n_slots;
	for (i = 0; i < s->n_slots; i++)
		changed |= snapshot_row(s->slots[i], &snap->rows[i], now);
	snapshot_counts(s, snap);
	pthread_mutex_unlock(&s->lock);
	return pools_changed(s, snap) || changed ? 1 : 0;
}

void
supervisor_snapshot_free(struct supervisor_snapshot *snap)
{
	free(snap->rows);
	memset(snap, 0, sizeof *snap);
}

/* A kept report (or none yet: not run) into the detail's full-sized one. */
static void
report_out(struct admission_report *out, const struct admission_report *kept)
{
	out->verdict = kept ? kept->verdict : ADMISSION_NOT_RUN;
	out->n = kept ? kept->n : 0;
	if (kept)
		memcpy(out->items, kept->items, kept->n * sizeof kept->items[0]);
}

/* Under s->lock: the slot of session_id with its row as of now in out, or NULL. */
static struct slot *
row_of(struct supervisor *s, const char *session_id, struct session_row *out)
{
	struct slot *sl = sup_find(s, session_id);

	if (sl) {
		*out = sl->row;
		row_live(sl, out, clock_mono_ms());
	}
	return sl;
}

int
supervisor_row(struct supervisor *s, const char *session_id, struct session_row *out)
{
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = row_of(s, session_id, out);
	pthread_mutex_unlock(&s->lock);
	return sl ? 0 : -1;
}

int
supervisor_detail(struct supervisor *s, const char *session_id, struct session_detail *out)
{
	struct slot *sl;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (!(sl = row_of(s, session_id, &out->row))) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	report_out(&out->first, sl->first);
	report_out(&out->second, sl->second);
	out->n_timeline = sl->tl_n;
	for (i = 0; i < sl->tl_n; i++)
		out->timeline[i] = sl->timeline[(sl->tl_head + i) % SNAP_TIMELINE_MAX];
	out->n_upstreams = sl->n_upstreams;
	memcpy(out->upstreams, sl->upstreams, sl->n_upstreams * sizeof sl->upstreams[0]);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int
supervisor_timeline(struct supervisor *s, int64_t *after, struct timeline_row *out, size_t cap,
		    size_t *n, bool *more, struct al_err *err)
{
	struct audit_timeline tl;
	const char *path = audit_db_path(s->o.audit);

	*n = 0;
	*more = false;
	if (!path)
		return al_fail(err, "audit timeline: no audit log");
	if (cap > SUPERVISOR_TIMELINE_MAX)
		cap = SUPERVISOR_TIMELINE_MAX;
	if (audit_timeline_page(path, *after, cap, &tl, after, err) < 0)
		return -1;
	for (size_t i = 0; i < tl.n; i++)
		audit_timeline_row(&tl.v[i], &out[(*n)++]);
	*more = tl.truncated;
	audit_timeline_free(&tl);
	return 0;
}
