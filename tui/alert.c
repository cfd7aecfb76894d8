#include "alert.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ALERT_ID_HEX 8		/* hex digits of a session id the line shows */
#define ALERT_ID_MAX 20		/* the hex, or the words for an id of another shape */

/*
 * The fixed words the engine writes into `reason`, per kind (watchdog.c,
 * gate.c, supervisor.c). Only these ever reach the line, and always as our
 * own copy: the event's bytes are compared, never printed.
 */
static const char *const lease_words[] = {
	"no ack", "watchdog gone", "wrong byte", NULL
};
static const char *const phase_words[] = {
	"first", "second", NULL
};
static const char *const ack_words[] = {
	"applied", "stale revision", "tool not approved", "unknown tool",
	"malformed update", "tool not in this session", "too many pending deltas",
	NULL
};
static const char *const hold_words[] = {
	"approved", "approved_rest", "denied", "timeout", "stopped", "lifted", NULL
};
static const char *const pause_words[] = {
	"pause", "unpause", NULL
};

/* The names of one event, already in their safe form. */
struct alert_names {
	char id[ALERT_ID_MAX];
	char tool[SNAP_NAME_MAX];
	char check[CHECK_ID_MAX];
	char by[SNAP_USER_MAX];
};

typedef void (*alert_fn)(const struct supervisor_event *e, const struct alert_names *nm,
			 char *buf, size_t cap);

/* Bounded by the field's size: a field without its NUL is still read safely. */
static const char *
alert_word(const char *const *words, const char *s, size_t cap)
{
	size_t i;

	for (i = 0; words[i]; i++)
		if (strncmp(s, words[i], cap) == 0)
			return words[i];
	return "other";
}

static bool
alert_is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* ASCII by hand: what is safe must not depend on the locale. */
static bool
alert_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("._:/@+-", c) != NULL);
}

/*
 * A name cut to out_cap, each byte outside the safe set written as \xHH
 * (never a placeholder: the line says which byte it was); an empty name
 * stays empty (the caller decides). An escape that does not fit whole is
 * left out.
 */
static void
alert_safe_name(char *out, size_t out_cap, const char *in, size_t in_cap)
{
	size_t i, n = 0;

	for (i = 0; i < in_cap && in[i] && n + 1 < out_cap; i++) {
		if (alert_name_char(in[i]))
			out[n++] = in[i];
		else if (n + 5 <= out_cap)
			n += (size_t)snprintf(out + n, 5, "\\x%02x", (unsigned char)in[i]);
		else
			break;
	}
	out[n] = '\0';
}

/*
 * "s-3f9a1c02…" → "3f9a1c02" (what follows the hex is never shown); none
 * and an id of another shape are said in words, not echoed.
 */
static void
alert_short_id(char out[ALERT_ID_MAX], const char *id, size_t cap)
{
	size_t n = 0;

	if (cap > 2 && id[0] == 's' && id[1] == '-')
		while (n < ALERT_ID_HEX && n + 2 < cap && alert_is_hex(id[n + 2])) {
			out[n] = id[n + 2];
			n++;
		}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, ALERT_ID_MAX, "%s", cap > 0 && id[0] ? "(odd session id)"
								   : "(no session)");
}

/* What an empty name stands for, in words: never a placeholder. */
static const char *
alert_or(const char *name, const char *words)
{
	return name[0] ? name : words;
}

static const char *
alert_plural(long n)
{
	return n == 1 ? "" : "s";
}

/* Anything but applied or not applicable is a rejection: garbage fails loud. */
static bool
alert_ack_rejected(const struct supervisor_event *e)
{
	return e->result != CUTOVER_APPLIED && e->result != CUTOVER_NOT_APPLICABLE;
}

/* "12 ms" under a second, "8.8 s" above (tenths, truncated). */
static void
alert_duration(char *out, size_t cap, int64_t us)
{
	if (us < 0)
		us = 0;
	if (us < 1000000)
		snprintf(out, cap, "%" PRId64 " ms", us / 1000);
	else
		snprintf(out, cap, "%" PRId64 ".%" PRId64 " s", us / 1000000,
			 us / 100000 % 10);
}

static void
alert_state(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	    size_t cap)
{
	snprintf(buf, cap, "%s %s", nm->id, session_state_id(e->state));
}

static void
alert_end(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	  size_t cap)
{
	if (nm->check[0])
		snprintf(buf, cap, "session %s ended: %s (check %s)", nm->id,
			 session_end_id(e->end), nm->check);
	else
		snprintf(buf, cap, "session %s ended: %s", nm->id, session_end_id(e->end));
}

static void
alert_lease_failed(const struct supervisor_event *e, const struct alert_names *nm,
		   char *buf, size_t cap)
{
	snprintf(buf, cap, "watchdog: lease of %s failed (%s), container stopped", nm->id,
		 alert_word(lease_words, e->reason, sizeof e->reason));
}

static void
alert_admission_refused(const struct supervisor_event *e, const struct alert_names *nm,
			char *buf, size_t cap)
{
	snprintf(buf, cap, "admission refused %s: %s (%s inspection)", nm->id,
		 alert_or(nm->check, "no check named"),
		 alert_word(phase_words, e->reason, sizeof e->reason));
}

/* What a cutover is about: its tool; a freeze or thaw is about every call. */
static const char *
alert_about(const struct supervisor_event *e, const struct alert_names *nm)
{
	if (e->op == CUTOVER_FREEZE || e->op == CUTOVER_THAW)
		return "all calls";
	return alert_or(nm->tool, "no tool named");
}

static void
alert_cutover(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	      size_t cap)
{
	snprintf(buf, cap, "cutover r%" PRId64 ": %s %s on %ld session%s", e->revision,
		 cutover_op_id(e->op), alert_about(e, nm), e->count, alert_plural(e->count));
}

/* What happened in the session: "applied after 8.8 s", "rejected: stale revision". */
static void
alert_ack_outcome(const struct supervisor_event *e, char *out, size_t cap)
{
	char waited[48];

	if (e->result == CUTOVER_APPLIED) {
		alert_duration(waited, sizeof waited, e->waited_us);
		snprintf(out, cap, "applied after %s", waited);
	} else if (e->result == CUTOVER_NOT_APPLICABLE) {
		snprintf(out, cap, "not applicable");
	} else {
		snprintf(out, cap, "rejected: %s",
			 alert_word(ack_words, e->reason, sizeof e->reason));
	}
}

/* A whole policy update (no tool, no op) reads "r7 update". */
static void
alert_cutover_ack(const struct supervisor_event *e, const struct alert_names *nm,
		  char *buf, size_t cap)
{
	char outcome[64];

	alert_ack_outcome(e, outcome, sizeof outcome);
	if (nm->tool[0] || e->op == CUTOVER_FREEZE || e->op == CUTOVER_THAW)
		snprintf(buf, cap, "r%" PRId64 " %s %s: %s %s", e->revision,
			 cutover_op_id(e->op), alert_about(e, nm), nm->id, outcome);
	else
		snprintf(buf, cap, "r%" PRId64 " update: %s %s", e->revision, nm->id, outcome);
}

static void
alert_stop_requested(const struct supervisor_event *e, const struct alert_names *nm,
		     char *buf, size_t cap)
{
	(void)e;
	snprintf(buf, cap, "force-stop %s requested", nm->id);
}

/*
 * The failed count travels only in reason ("3 removed, 1 failed"): it is
 * taken as a number when the whole field has exactly that shape.
 */
static unsigned long
alert_reap_failed(const struct supervisor_event *e)
{
	char reason[sizeof e->reason + 1];
	unsigned long removed, failed;
	int end = -1;

	memcpy(reason, e->reason, sizeof e->reason);
	reason[sizeof e->reason] = '\0';
	if (sscanf(reason, "%lu removed, %lu failed%n", &removed, &failed, &end) != 2 ||
	    end < 0 || reason[end] != '\0')
		return 0;
	return failed;
}

/* "VERB N NOUNs AFTER[, F LEFT]": what a reap removed, and what it could not. */
static void
alert_removed(const struct supervisor_event *e, const char *verb, const char *noun,
	      const char *after, const char *left, char *buf, size_t cap)
{
	unsigned long failed = alert_reap_failed(e);
	int n = snprintf(buf, cap, "%s %ld %s%s%s", verb, e->count, noun, alert_plural(e->count),
			 after);

	if (failed && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, ", %lu %s", failed, left);
}

static void
alert_reaper(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	     size_t cap)
{
	(void)nm;
	alert_removed(e, "reaper removed", "orphaned container", "", "failed", buf, cap);
}

static void
alert_sweep(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	    size_t cap)
{
	(void)nm;
	alert_removed(e, "removed", "container", " left by ended sessions", "still left", buf, cap);
}

/* The first write the log refused: from then on the header says audit FAIL. */
static void
alert_audit_refused(const struct supervisor_event *e, const struct alert_names *nm,
		    char *buf, size_t cap)
{
	if (e->session[0])
		snprintf(buf, cap, "audit log refused %ld write%s of session %s: the log is"
			 " incomplete", e->count, alert_plural(e->count), nm->id);
	else
		snprintf(buf, cap, "audit log refused a policy entry: the log is incomplete");
}

/* The text alert_hold gives the same call from the pending list. */
static void
alert_hold_waiting(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
		   size_t cap)
{
	snprintf(buf, cap, "hold %" PRId64 ": session %s, %s waits for approve or deny", e->hold,
		 nm->id, alert_or(nm->tool, "no tool named"));
}

static void
alert_hold_decided(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
		   size_t cap)
{
	snprintf(buf, cap, "hold %" PRId64 " %s: session %s, %s (by %s)", e->hold,
		 alert_word(hold_words, e->reason, sizeof e->reason), nm->id,
		 alert_or(nm->tool, "no tool named"), alert_or(nm->by, "no one named"));
}

static void
alert_quarantine(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
		 size_t cap)
{
	snprintf(buf, cap, "session %s %s by %s", nm->id,
		 e->kind == SUPERVISOR_EVENT_RELEASE ? "released" : "quarantined",
		 alert_or(nm->by, "no one named"));
}

/* A warning: the gate denies the session's calls all the same (fail closed). */
static void
alert_pause_failed(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
		   size_t cap)
{
	const char *what = alert_word(pause_words, e->reason, sizeof e->reason);

	if (strcmp(what, "unpause") == 0)
		snprintf(buf, cap, "warning: session %s released, but its unpause failed", nm->id);
	else
		snprintf(buf, cap, "warning: session %s quarantined, but its pause failed: its calls"
			 " are denied all the same", nm->id);
}

static void
alert_unpaused(const struct supervisor_event *e, const struct alert_names *nm, char *buf,
	       size_t cap)
{
	(void)e;
	snprintf(buf, cap, "warning: session %s was unpaused outside airlock while quarantined:"
		 " paused again", nm->id);
}

static const alert_fn alert_formats[SUPERVISOR_EVENT_KIND_COUNT] = {
	[SUPERVISOR_EVENT_STATE]		  = alert_state,
	[SUPERVISOR_EVENT_END]		  = alert_end,
	[SUPERVISOR_EVENT_LEASE_FAILED]	  = alert_lease_failed,
	[SUPERVISOR_EVENT_ADMISSION_REFUSED] = alert_admission_refused,
	[SUPERVISOR_EVENT_CUTOVER]		  = alert_cutover,
	[SUPERVISOR_EVENT_CUTOVER_ACK]	  = alert_cutover_ack,
	[SUPERVISOR_EVENT_STOP_REQUESTED]	  = alert_stop_requested,
	[SUPERVISOR_EVENT_REAPER]		  = alert_reaper,
	[SUPERVISOR_EVENT_SWEEP]		  = alert_sweep,
	[SUPERVISOR_EVENT_AUDIT_REFUSED]	  = alert_audit_refused,
	[SUPERVISOR_EVENT_HOLD_WAITING]	  = alert_hold_waiting,
	[SUPERVISOR_EVENT_HOLD_DECIDED]	  = alert_hold_decided,
	[SUPERVISOR_EVENT_QUARANTINE]		  = alert_quarantine,
	[SUPERVISOR_EVENT_RELEASE]		  = alert_quarantine,
	[SUPERVISOR_EVENT_PAUSE_FAILED]	  = alert_pause_failed,
	[SUPERVISOR_EVENT_UNPAUSED]		  = alert_unpaused,
};

void
alert_format(const struct supervisor_event *e, char *buf, size_t cap)
{
	struct alert_names nm;
	alert_fn fn;

	if (!buf || cap == 0)
		return;
	if (!e) {
		snprintf(buf, cap, "no event");
		return;
	}
	fn = (unsigned)e->kind < SUPERVISOR_EVENT_KIND_COUNT ? alert_formats[e->kind] : NULL;
	if (!fn) {
		snprintf(buf, cap, "event %s", event_kind_id(e->kind));
		return;
	}
	alert_short_id(nm.id, e->session, sizeof e->session);
	alert_safe_name(nm.tool, sizeof nm.tool, e->tool, sizeof e->tool);
	alert_safe_name(nm.check, sizeof nm.check, e->check, sizeof e->check);
	alert_safe_name(nm.by, sizeof nm.by, e->by.user, sizeof e->by.user);
	fn(e, &nm, buf, cap);
}

bool
alert_wanted(const struct supervisor_event *e)
{
	if (!e)
		return false;
	switch (e->kind) {
	case SUPERVISOR_EVENT_LEASE_FAILED:
	case SUPERVISOR_EVENT_ADMISSION_REFUSED:
	case SUPERVISOR_EVENT_CUTOVER:
	case SUPERVISOR_EVENT_REAPER:
	case SUPERVISOR_EVENT_SWEEP:
	case SUPERVISOR_EVENT_AUDIT_REFUSED:
	case SUPERVISOR_EVENT_HOLD_WAITING:
	case SUPERVISOR_EVENT_QUARANTINE:
	case SUPERVISOR_EVENT_RELEASE:
	case SUPERVISOR_EVENT_PAUSE_FAILED:
	case SUPERVISOR_EVENT_UNPAUSED:
		return true;
	case SUPERVISOR_EVENT_END:
		return e->alert || !session_end_normal(e->end);
	case SUPERVISOR_EVENT_CUTOVER_ACK:
		return e->alert || alert_ack_rejected(e);
	default:
		return e->alert;
	}
}

void
alert_hold(const struct hold_view *h, char *buf, size_t cap)
{
	char id[ALERT_ID_MAX], tool[SNAP_NAME_MAX];

	if (!buf || cap == 0)
		return;
	if (!h) {
		snprintf(buf, cap, "no held call");
		return;
	}
	alert_short_id(id, h->session, sizeof h->session);
	alert_safe_name(tool, sizeof tool, h->tool, sizeof h->tool);
	snprintf(buf, cap, "hold %" PRId64 ": session %s, %s waits for approve or deny", h->id, id,
		 alert_or(tool, "no tool named"));
}

void
alert_holds_more(size_t more, char *buf, size_t cap)
{
	if (buf && cap > 0)
		snprintf(buf, cap, "and %zu more held call%s waiting: see the pending view", more,
			 more == 1 ? "" : "s");
}
