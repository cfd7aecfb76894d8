#include "fuzz.h"

#include <string.h>

#include "control.h"
#include "supervisor.h"

/*
 * What an attached console reads from an engine (engine/protocol/control.h's
 * *_from_json): the input is one frame body, any JSON at all. Whatever it
 * holds, every decoded string ends within its field, every count is within
 * its table, every word is one of its table's; and what was decoded, sent
 * again, decodes to the same bytes (nothing is read that the engine's own
 * writer would not give back).
 */

static bool
bounded(const char *s, size_t cap)
{
	return strnlen(s, cap) < cap;
}

static void
check_row(const struct session_row *r)
{
	size_t i;

	FUZZ_CHECK(bounded(r->id, sizeof r->id) && r->id[0]);
	FUZZ_CHECK(bounded(r->reason, sizeof r->reason) && bounded(r->class_name, sizeof r->class_name));
	FUZZ_CHECK((unsigned)r->state < SESSION_STATE_COUNT && (unsigned)r->end < SESSION_END_COUNT);
	FUZZ_CHECK(r->n_tools <= SNAP_TOOLS_MAX && r->lease.n_acks <= SNAP_ACKS_MAX);
	for (i = 0; i < r->n_tools; i++)
		FUZZ_CHECK(bounded(r->tools[i].name, SNAP_NAME_MAX));
}

static void
round_trip_row(const struct session_row *r)
{
	json_t *again = control_row_json(r);
	struct session_row back;

	FUZZ_CHECK(again && control_row_from_json(again, &back) == 0);
	FUZZ_CHECK(memcmp(&back, r, sizeof back) == 0);
	json_decref(again);
}

static void
snapshot(const json_t *v)
{
	struct supervisor_snapshot s = { 0 };
	size_t i;

	if (control_snapshot_from_json(v, &s) == 0) {
		FUZZ_CHECK(s.n <= s.cap && s.n_standing <= SNAP_STANDING_MAX);
		for (i = 0; i < s.n; i++) {
			check_row(&s.rows[i]);
			if (s.rows[i].state == SESSION_STATE_ENDED || s.rows[i].end == SESSION_END_NONE)
				round_trip_row(&s.rows[i]);
		}
	}
	supervisor_snapshot_free(&s);
}

static void
event(const json_t *v)
{
	struct supervisor_event e;

	if (control_event_from_json(v, &e) < 0)
		return;
	FUZZ_CHECK((unsigned)e.kind < SUPERVISOR_EVENT_KIND_COUNT);
	FUZZ_CHECK(bounded(e.session, sizeof e.session) && bounded(e.reason, sizeof e.reason));
	FUZZ_CHECK(bounded(e.by.user, sizeof e.by.user) && bounded(e.by.via, sizeof e.by.via));
}

static void
detail_and_host(const json_t *v)
{
	static struct session_detail d;
	struct host_snapshot h;

	if (control_detail_from_json(v, &d) == 0) {
		check_row(&d.row);
		FUZZ_CHECK(d.first.n <= SNAP_CHECKS_MAX && d.second.n <= SNAP_CHECKS_MAX);
		FUZZ_CHECK(d.n_timeline <= SNAP_TIMELINE_MAX);
	}
	if (control_host_from_json(v, &h) == 0)
		FUZZ_CHECK(h.n <= SNAP_CHECKS_MAX && bounded(h.endpoint, sizeof h.endpoint));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);

	if (!v)
		return 0;
	snapshot(v);
	event(v);
	detail_and_host(v);
	json_decref(v);
	return 0;
}
