/*
 * airlock ctl, what is followed as it happens (cmd_ctl_int.h): the held
 * calls (`pending [--follow]`), an operator's `approve` or `deny` of one,
 * the engine's events (`events [--follow]`), and its host checks run again
 * (`host`). Held calls are shown by names, sizes and a hash's head, never
 * their arguments.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_ctl_int.h"
#include "clock.h"

/* ---- held calls ---- */

/* The columns of `ctl pending`, header and rows alike; a number's unit ends its column. */
enum held_width {
	W_ID = 6, W_SESSION = 24, W_TOOL = 32, W_FLOW = 28, W_REQUEST = 9, W_HASH = 12,
	W_WAITED = 7, W_EARLIER = 7,
};

static void
print_held_header(void)
{
	printf("%*s %-*s %-*s %-*s %*s %-*s %*s %*s %s\n", W_ID, "ID", W_SESSION, "SESSION",
	       W_TOOL, "TOOL", W_FLOW, "CLASS->SINK", W_REQUEST, "REQUEST", W_HASH, "HASH",
	       W_WAITED, "WAITED", W_EARLIER, "EARLIER", "HELD");
}

/* One held call: names, sizes and a hash's head; never its arguments. */
static void
print_held(const struct hold_view *h)
{
	bool aliased = strcmp(h->alias, h->tool) != 0;
	char tool[2 * SNAP_NAME_MAX + 4], flow[2 * SNAP_CLASS_MAX + 4];

	snprintf(tool, sizeof tool, "%s%s%s%s", h->tool, aliased ? " (" : "",
		 aliased ? h->alias : "", aliased ? ")" : "");
	snprintf(flow, sizeof flow, "%s->%s", h->session_class, h->sink_ceiling);
	printf("%*lld %-*s %-*s %-*s %*lldB %-*.*s %*llds %*lld %s%s\n", W_ID, (long long)h->id,
	       W_SESSION, h->session, W_TOOL, tool, W_FLOW, flow, W_REQUEST - 1,
	       (long long)h->request_bytes, W_HASH, W_HASH, h->request_hash, W_WAITED - 1,
	       (long long)(h->waited_ms / 1000), W_EARLIER, (long long)h->earlier_calls, h->held_by,
	       h->declassify ? " declassify" : "");
}

/* Is a call with this id in the list (NULL: none)? */
static bool
held_in(const struct control_pending *list, int64_t id)
{
	size_t i;

	for (i = 0; list && i < list->n; i++)
		if (list->calls[i].id == id)
			return true;
	return false;
}

/*
 * The held calls a pending answer lists, read as the protocol declares
 * them, in its order (no element is left out: none has a required
 * field); NULL when out of memory.
 */
static struct control_pending *
pending_of(const json_t *r)
{
	struct control_pending *p = calloc(1, sizeof *p);

	if (p && control_pending_from_json(r, p) < 0)
		p->n = 0;
	return p;
}

/*
 * Followed: the calls that began waiting since the last look (with
 * --json, as the engine wrote them in r), and those that no longer wait.
 */
static void
print_changes(struct ctl *c, const struct control_pending *before,
	      const struct control_pending *now, const json_t *r)
{
	size_t i;

	for (i = 0; i < now->n; i++)
		if (!held_in(before, now->calls[i].id)) {
			if (c->o.json)
				cli_print_json(json_array_get(json_object_get(r, "pending"), i));
			else
				print_held(&now->calls[i]);
		}
	for (i = 0; before && !c->o.json && i < before->n; i++)
		if (!held_in(now, before->calls[i].id))
			printf("%*lld decided\n", W_ID, (long long)before->calls[i].id);
	fflush(stdout);
}

/*
 * Followed, the list is asked for again after this without a hold event.
 * The engine pushes one for every call that begins to wait or is decided;
 * this only repairs one lost (a client that fell behind gets a gap, which
 * lists again at once), so a few seconds bound how stale a lost event
 * leaves the output, at one small request per period.
 */
#define CTL_PENDING_SAFETY_MS	5000

/* Is this pushed frame news of held calls: a hold event, or a gap (one may be lost)? */
static bool
hold_news(const json_t *f)
{
	struct supervisor_event ev;

	if (json_object_get(f, "gap"))
		return true;
	return control_event_from_json(json_object_get(f, "event"), &ev) == 0 &&
	       (ev.kind == SUPERVISOR_EVENT_HOLD_WAITING || ev.kind == SUPERVISOR_EVENT_HOLD_DECIDED);
}

/* Followed: until a hold event or a gap comes, the engine closes, or the safety period ends. */
static void
pending_wait(struct ctl *c)
{
	int64_t deadline = clock_mono_ms() + CTL_PENDING_SAFETY_MS;
	bool news = false;
	json_t *f;

	while (!news && (f = ctl_next_frame(c, deadline))) {
		news = hold_news(f);
		json_decref(f);
	}
}

/* Followed: the engine's events, before the first list, so no hold event falls between. */
static int
pending_subscribe(struct ctl *c)
{
	json_t *r;
	int rc;

	control_request_bool(ctl_request(c, CONTROL_OP_EVENTS), CONTROL_K_FOLLOW, true);
	rc = ctl_call(c, 0, &r);
	json_decref(r);
	return rc;
}

/*
 * The held calls waiting now; followed, the engine is asked again when
 * it says a call began to wait or was decided (and every
 * CTL_PENDING_SAFETY_MS), and each change printed until it closes.
 */
int
ctl_pending(struct ctl *c)
{
	struct control_pending *now = NULL, *before = NULL;
	json_t *r;
	int rc = c->o.n[OPT_FOLLOW] ? pending_subscribe(c) : -1;

	if (rc < 0)
		rc = (ctl_request(c, CONTROL_OP_PENDING), ctl_call(c, 0, &r));
	if (rc >= 0)
		return rc;
	if (c->o.json && !c->o.n[OPT_FOLLOW])
		return ctl_done(c, r, "%s", "");
	if (!c->o.json)
		print_held_header();
	for (;;) {	/* r is a pending answer here, taken by each round */
		free(before);
		before = now;
		if ((now = pending_of(r)))
			print_changes(c, before, now, r);
		json_decref(r);
		if (!now) {
			rc = cli_fail(c->o.json, "ctl", "pending: out of memory");
			break;
		}
		if (!c->o.n[OPT_FOLLOW]) {
			rc = EXIT_OK;
			break;
		}
		pending_wait(c);
		if ((rc = (ctl_request(c, CONTROL_OP_PENDING), ctl_call(c, 0, &r))) >= 0)
			break;	/* the engine went away or refused: its status */
	}
	free(before);
	free(now);
	return rc;
}

/* approve ID [--rest] or deny ID. */
int
ctl_decide(struct ctl *c)
{
	bool approve = strcmp(c->verb, "approve") == 0;
	struct control_request *req;
	char *end = NULL;
	long long id = strtoll(c->arg, &end, 10);
	json_t *r;
	int rc;

	if (!*c->arg || *end || id <= 0 || strspn(c->arg, "0123456789") != strlen(c->arg))
		return cli_usage_error("ctl", "%s wants a held call's id (ctl pending)", c->verb);
	req = ctl_verb_request(c);
	control_request_int(req, CONTROL_K_HOLD_ID, id);
	if (c->o.n[OPT_REST])
		control_request_bool(req, CONTROL_K_REST, true);
	rc = ctl_call(c, 0, &r);
	return rc >= 0 ? rc : ctl_done(c, r, !approve ? "denied %s\n" : c->o.n[OPT_REST] ?
				       "approved %s, and its tool's later calls in its session\n" :
				       "approved %s\n", c->arg);
}

/* ---- events ---- */

/* Its seq, kind, session, and what that kind says (as the protocol's table writes it). */
static void
event_line(const struct supervisor_event *ev)
{
	bool result = control_event_says_result(ev);

	printf("%6llu %-16s %-24s %s%s%s%s%s\n", (unsigned long long)ev->seq,
	       event_kind_id(ev->kind), ev->session,
	       control_event_says_state(ev) ? session_state_id(ev->state) : "",
	       control_event_says_end(ev) ? session_end_id(ev->end) : "", ev->tool,
	       result ? " " : "", result ? cutover_result_id(ev->result) : "");
}

/* One event, read as the protocol declares it. */
static void
print_event(struct ctl *c, json_t *e)
{
	struct supervisor_event ev;

	if (c->o.json)
		cli_print_json(e);
	else if (control_event_from_json(e, &ev) < 0)
		printf("%6s an event this ctl cannot read (a newer engine's kind?)\n", "?");
	else
		event_line(&ev);
	fflush(stdout);
}

static int
follow(struct ctl *c)
{
	json_t *f;

	while ((f = ctl_next_frame(c, -1))) {
		json_t *e = json_object_get(f, "event");

		if (json_object_get(f, "gap"))
			fprintf(stderr, "airlock ctl: %lld events dropped (this client fell behind)\n",
				ctl_int_of(f, "gap"));
		if (e)
			print_event(c, e);
		json_decref(f);
	}
	return EXIT_OK;
}

int
ctl_events(struct ctl *c)
{
	bool more = c->o.n[OPT_FOLLOW] > 0;
	json_t *r, *e;
	size_t i;
	int rc;

	control_request_bool(ctl_request(c, CONTROL_OP_EVENTS), CONTROL_K_FOLLOW, more);
	rc = ctl_call(c, 0, &r);
	if (rc >= 0)
		return rc;
	json_array_foreach(json_object_get(r, "events"), i, e)
		print_event(c, e);
	json_decref(r);
	return more ? follow(c) : EXIT_OK;
}

/* ---- the engine's host checks ---- */

#define CTL_HOST_POLL_MS	100

/*
 * The engine's host snapshot once no run is under way and, with after >= 0,
 * its generation is past after: 0, or the exit status (*h undecoded).
 */
static int
host_settled(struct ctl *c, int64_t after, struct host_snapshot *h, json_t **out)
{
	int64_t deadline = clock_mono_ms() + CTL_TIMEOUT_MS;
	json_t *r;
	int rc;

	for (;;) {
		if ((rc = (ctl_request(c, CONTROL_OP_HOST), ctl_call(c, 0, &r))) >= 0)
			return rc;
		if (control_host_from_json(json_object_get(r, "host"), h) < 0) {
			json_decref(r);
			return cli_fail(c->o.json, "ctl", "host: the engine's answer cannot be read");
		}
		if (!h->running && (int64_t)h->generation > after)
			break;
		json_decref(r);
		if (clock_mono_ms() >= deadline)
			return cli_fail(c->o.json, "ctl", "host: no run of the checks ended in %d s",
					CTL_TIMEOUT_MS / 1000);
		poll(NULL, 0, CTL_HOST_POLL_MS);
	}
	*out = r;
	return 0;
}

/*
 * The engine's host checks (doctor's, and one per installed upstream) from
 * a run begun after this request: a run under way is let finish first.
 * PASS/FAIL a line, as doctor prints them; exit 1 when one failed.
 */
int
ctl_host(struct ctl *c)
{
	struct host_snapshot *h = calloc(1, sizeof *h);
	struct check_list l = { 0 };
	json_t *r = NULL;
	int rc = h ? host_settled(c, -1, h, &r) : cli_fail(c->o.json, "ctl", "out of memory");

	if (rc == 0) {
		json_decref(r);
		control_request_bool(ctl_request(c, CONTROL_OP_HOST), CONTROL_K_REFRESH, true);
		rc = ctl_call(c, 0, &r);
	}
	if (rc < 0) {
		json_decref(r);
		rc = host_settled(c, (int64_t)h->generation, h, &r);
	}
	if (rc == 0 && c->o.json) {
		rc = cli_print_json(json_object_get(r, "host"));
		if (rc == EXIT_OK && !h->passed)
			rc = EXIT_REFUSED;
	} else if (rc == 0) {
		printf("engine host checks (run %llu, endpoint %s, runtime %s):\n",
		       (unsigned long long)h->generation, h->endpoint, h->runtime);
		l.items = h->items;
		l.n = h->n;
		cli_print_checks(stdout, &l, "FAIL");
		rc = h->passed ? EXIT_OK : EXIT_REFUSED;
	}
	json_decref(r);
	free(h);
	return rc;
}
