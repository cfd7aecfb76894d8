#include "fuzz.h"

#include <string.h>

#include "control.h"

/*
 * What `airlock ctl` and an attached console read of an engine's answer to
 * a change (engine/protocol/control.h): a cutover's (control_cutover) or
 * another op's (control_done). The input's first byte chooses the reading,
 * the rest is the answer line. It is read or refused, nothing else; an op
 * with no answer of that kind is refused. Read, every count is within its
 * bound, every string ends inside its field, every ack's result is one of
 * the words; and what was read, written again by the engine's encoder and
 * read back, is the same (each field, and each element up to its count: a
 * slot past the count may hold what an unreadable element left).
 */

static const enum control_op readings[] = {
	CONTROL_OP_COUNT,	/* a cutover's answer */
	CONTROL_OP_START, CONTROL_OP_STOP, CONTROL_OP_STOP_ALL, CONTROL_OP_FORGET,
	CONTROL_OP_QUARANTINE, CONTROL_OP_RELEASE,
	CONTROL_OP_SNAPSHOT,	/* no such answer: refused */
};

static struct control_cutover cut, cut_again;
static struct control_done done, done_again;

static bool
ends(const char *s, size_t cap)
{
	return strnlen(s, cap) < cap;
}

static bool
ids_end(char (*ids)[SNAP_ID_MAX], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!ends(ids[i], SNAP_ID_MAX))
			return false;
	return true;
}

static bool
same_cutover(const struct control_cutover *a, const struct control_cutover *b)
{
	return a->revision == b->revision && a->targets == b->targets &&
	       strcmp(a->tool, b->tool) == 0 && a->n_acks == b->n_acks &&
	       a->n_pending == b->n_pending && a->n_ended == b->n_ended &&
	       memcmp(a->acks, b->acks, a->n_acks * sizeof a->acks[0]) == 0 &&
	       memcmp(a->pending, b->pending, a->n_pending * SNAP_ID_MAX) == 0 &&
	       memcmp(a->ended, b->ended, a->n_ended * SNAP_ID_MAX) == 0;
}

static bool
same_done(const struct control_done *a, const struct control_done *b)
{
	return strcmp(a->session, b->session) == 0 && a->stopped == b->stopped &&
	       a->n_ids == b->n_ids && a->n_kept == b->n_kept &&
	       memcmp(a->ids, b->ids, a->n_ids * SNAP_ID_MAX) == 0 &&
	       memcmp(a->kept, b->kept, a->n_kept * SNAP_ID_MAX) == 0;
}

static void
check_cutover(const json_t *v)
{
	json_t *o;
	size_t i;

	if (control_cutover_from_json(v, &cut) < 0)
		return;
	FUZZ_CHECK(cut.n_acks <= CONTROL_SESSIONS_MAX && cut.n_pending <= CONTROL_SESSIONS_MAX &&
		   cut.n_ended <= CONTROL_SESSIONS_MAX);
	FUZZ_CHECK(ends(cut.tool, sizeof cut.tool));
	for (i = 0; i < cut.n_acks; i++) {
		FUZZ_CHECK(ends(cut.acks[i].session, SNAP_ID_MAX));
		FUZZ_CHECK(cut.acks[i].result >= CUTOVER_APPLIED &&
			   cut.acks[i].result <= CUTOVER_REJECTED);
	}
	FUZZ_CHECK(ids_end(cut.pending, cut.n_pending) && ids_end(cut.ended, cut.n_ended));
	o = json_object();
	FUZZ_CHECK(o && control_cutover_into(&cut, o) == 0);
	FUZZ_CHECK(control_cutover_from_json(o, &cut_again) == 0);
	FUZZ_CHECK(same_cutover(&cut, &cut_again));
	json_decref(o);
}

static void
check_done(enum control_op op, const json_t *v)
{
	json_t *o;
	int rc = control_done_from_json(op, v, &done);

	if (op == CONTROL_OP_SNAPSHOT)
		FUZZ_CHECK(rc == -1 && done.n_ids == 0 && done.session[0] == '\0');
	if (rc < 0)
		return;
	FUZZ_CHECK(done.n_ids <= CONTROL_SESSIONS_MAX && done.n_kept <= CONTROL_SESSIONS_MAX);
	FUZZ_CHECK(ends(done.session, sizeof done.session));
	FUZZ_CHECK(ids_end(done.ids, done.n_ids) && ids_end(done.kept, done.n_kept));
	o = json_object();
	FUZZ_CHECK(o && control_done_into(op, &done, o) == 0);
	FUZZ_CHECK(control_done_from_json(op, o, &done_again) == 0);
	FUZZ_CHECK(same_done(&done, &done_again));
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum control_op op = readings[fuzz_take(&data, &size,
						sizeof readings / sizeof readings[0]) - 1];
	json_t *v = json_loadb((const char *)data, size, 0, NULL);

	if (!json_is_object(v)) {	/* not an answer: refused either way */
		FUZZ_CHECK(op == CONTROL_OP_COUNT ? control_cutover_from_json(v, &cut) == -1
						  : control_done_from_json(op, v, &done) == -1);
		json_decref(v);
		return 0;
	}
	if (op == CONTROL_OP_COUNT)
		check_cutover(v);
	else
		check_done(op, v);
	json_decref(v);
	return 0;
}
