#include "hold.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The index of id's entry, or -1. */
static int
hold_slot(const struct hold_board *b, int64_t id)
{
	int i;

	for (i = 0; id > 0 && i < HOLD_MAX; i++)
		if (b->used[i] && b->e[i].v.id == id)
			return i;
	return -1;
}

int64_t
hold_add(struct hold_board *b, const struct hold_view *v, int64_t now_ms)
{
	int i;

	for (i = 0; i < HOLD_MAX && b->used[i]; i++)
		;
	if (i == HOLD_MAX)
		return 0;
	memset(&b->e[i], 0, sizeof b->e[i]);
	b->e[i].v = *v;
	b->e[i].v.id = ++b->serial;
	b->e[i].v.waited_ms = 0;
	b->e[i].start_ms = now_ms;
	b->e[i].outcome = HOLD_WAITING;
	b->used[i] = true;
	return b->serial;
}

const struct hold_entry *
hold_find(const struct hold_board *b, int64_t id)
{
	int i = hold_slot(b, id);

	return i < 0 ? NULL : &b->e[i];
}

/* A waiver for the call's (session, tool), kept once: 0, or -1 when full. */
static int
hold_waive(struct hold_board *b, const struct hold_view *v)
{
	if (hold_waived(b, v->session, v->tool))
		return 0;
	if (b->n_waivers == HOLD_WAIVERS_MAX)
		return -1;
	/* Whole arrays of one size, each NUL-terminated where the view was made. */
	memcpy(b->waiver[b->n_waivers].session, v->session, sizeof v->session);
	memcpy(b->waiver[b->n_waivers].tool, v->tool, sizeof v->tool);
	b->n_waivers++;
	return 0;
}

static void
hold_settle(struct hold_entry *e, enum hold_outcome outcome, const struct snap_author *by,
	    int64_t now_ms)
{
	e->outcome = outcome;
	if (by)
		e->by = *by;
	e->decided_ms = now_ms;
}

int
hold_decide(struct hold_board *b, int64_t id, enum hold_outcome outcome, bool rest,
	    const struct snap_author *by, int64_t now_ms)
{
	int i = hold_slot(b, id);
	struct hold_entry *e;

	if (i < 0 || outcome == HOLD_WAITING || (rest && outcome != HOLD_APPROVED))
		return -1;
	e = &b->e[i];
	if (e->outcome != HOLD_WAITING)
		return -1;	/* settled once: a late deny cannot undo an approve */
	if (rest && hold_waive(b, &e->v) < 0)
		return -1;
	e->rest = rest;
	hold_settle(e, outcome, by, now_ms);
	return 0;
}

int
hold_take(struct hold_board *b, int64_t id, struct hold_entry *out)
{
	int i = hold_slot(b, id);

	if (i < 0)
		return -1;
	if (out)
		*out = b->e[i];
	b->used[i] = false;
	return 0;
}

size_t
hold_expire(struct hold_board *b, int64_t now_ms, int64_t timeout_ms, int64_t *next_ms)
{
	static const struct snap_author expiry = { .user = "expiry", .via = "hold" };
	size_t i, n = 0;
	int64_t due;

	for (i = 0; i < HOLD_MAX; i++) {
		if (!b->used[i] || b->e[i].outcome != HOLD_WAITING)
			continue;
		due = b->e[i].start_ms + timeout_ms;
		if (due <= now_ms) {
			hold_settle(&b->e[i], HOLD_TIMED_OUT, &expiry, now_ms);
			n++;
		} else if (next_ms && due < *next_ms)
			*next_ms = due;
	}
	return n;
}

size_t
hold_settle_all(struct hold_board *b, const char *session, enum hold_outcome outcome,
		const struct snap_author *by, int64_t now_ms)
{
	size_t i, n = 0;

	for (i = 0; i < HOLD_MAX; i++)
		if (b->used[i] && b->e[i].outcome == HOLD_WAITING &&
		    (!session || strcmp(session, b->e[i].v.session) == 0)) {
			hold_settle(&b->e[i], outcome, by, now_ms);
			n++;
		}
	return n;
}

size_t
hold_list(const struct hold_board *b, int64_t now_ms, struct hold_view *out, size_t cap)
{
	int64_t after = 0, best;
	size_t i, n = 0;
	int pick;

	/* Oldest id first: the table's order is where a free entry happened to be. */
	while (n < cap) {
		pick = -1;
		best = INT64_MAX;
		for (i = 0; i < HOLD_MAX; i++)
			if (b->used[i] && b->e[i].outcome == HOLD_WAITING &&
			    b->e[i].v.id > after && b->e[i].v.id < best) {
				best = b->e[i].v.id;
				pick = (int)i;
			}
		if (pick < 0)
			break;
		out[n] = b->e[pick].v;
		out[n++].waited_ms = now_ms - b->e[pick].start_ms;
		after = best;
	}
	return n;
}

bool
hold_waived(const struct hold_board *b, const char *session, const char *tool)
{
	size_t i;

	for (i = 0; i < b->n_waivers; i++)
		if (strcmp(b->waiver[i].session, session) == 0 &&
		    strcmp(b->waiver[i].tool, tool) == 0)
			return true;
	return false;
}

/* Drop the waivers of session (and of tool, unless NULL). */
static void
hold_drop(struct hold_board *b, const char *session, const char *tool)
{
	size_t i = 0;

	while (i < b->n_waivers)
		if (strcmp(b->waiver[i].session, session) == 0 &&
		    (!tool || strcmp(b->waiver[i].tool, tool) == 0))
			b->waiver[i] = b->waiver[--b->n_waivers];
		else
			i++;
}

void
hold_forget(struct hold_board *b, const char *session)
{
	hold_drop(b, session, NULL);
}

void
hold_unwaive(struct hold_board *b, const char *session, const char *tool)
{
	hold_drop(b, session, tool);
}

const char *
hold_outcome_text(enum hold_outcome o)
{
	switch (o) {
	case HOLD_WAITING:
		return "waiting";
	case HOLD_APPROVED:
		return "approved";
	case HOLD_DENIED:
		return "denied";
	case HOLD_TIMED_OUT:
		return "timed out";
	case HOLD_STOPPED:
		return "engine stop";
	case HOLD_LIFTED:
		break;
	}
	return "lifted";
}
