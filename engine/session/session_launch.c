#include "session_int.h"
#include "clock.h"
#include "thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config_inline.h"
#include "container.h"
#include "doctor.h"
#include "frame.h"
#include "mutant.h"
#include "parser.h"
#include "warm.h"

/* Remove one top-level name or dotted path; absent is not an error. */
static void
withhold_path(json_t *obj, const char *path)
{
	char *copy = strdup(path), *part, *next, *save = NULL;

	if (!copy)
		return;
	part = strtok_r(copy, ".", &save);
	while (part && json_is_object(obj)) {
		next = strtok_r(NULL, ".", &save);
		if (!next) {
			json_object_del(obj, part);
			break;
		}
		obj = json_object_get(obj, part);
		part = next;
	}
	free(copy);
}

char *
session_initial_frame(const json_t *payload, const struct strv *withhold,
		      size_t max, size_t *len)
{
	json_t *copy;
	size_t i;
	char *s;

	if (!json_is_object(payload) || !(copy = json_deep_copy(payload)))
		return NULL;
	for (i = 0; i < withhold->n; i++)
		withhold_path(copy, withhold->v[i]);
	s = json_dumps(copy, JSON_COMPACT);
	json_decref(copy);
	return frame_line(s, max, len);
}

/* The payload of root's initial.file (none: an empty object); *why in fixed words. */
static json_t *
load_payload(const char *path, const char **why)
{
	return path ? config_payload_read(path, why) : json_object();
}

/* Why a payload that parsed makes no frame: its type, or its size. */
static const char *
payload_fault(const json_t *payload)
{
	switch (json_typeof(payload)) {
	case JSON_OBJECT:
		return "larger than a frame once withheld fields are removed (bounds.frame_bytes)";
	case JSON_ARRAY:
		return "holds a JSON array: the payload must be an object";
	case JSON_STRING:
		return "holds a JSON string: the payload must be an object";
	default:
		return "holds a number, true, false or null: the payload must be an object";
	}
}

static char *
initial_frame(struct session *s, size_t *len)
{
	const char *why = "out of memory";
	json_t *payload = s->cfg->initial.payload ? json_incref(s->cfg->initial.payload)
						  : load_payload(s->cfg->initial.file, &why);
	char *frame = payload ? session_initial_frame(payload, &s->cfg->initial.withhold,
						      s->cfg->bounds.frame_bytes, len) : NULL;

	if (payload && !frame)
		why = payload_fault(payload);
	json_decref(payload);
	if (!frame && session_preflight_end(s))	/* a refused daemon is the first end */
		session_fail(s, SESSION_END_INITIAL_REFUSED, "initial payload %.120s: %s",
			     CONFIG_INITIAL_LABEL(s->cfg), why);
	return frame;
}

/* Record the preflight verdict; a refusal ends the session. Idempotent. */
bool
session_preflight_end(struct session *s)
{
	const struct check_item *bad;
	bool ok;

	if (!s->pre_begun || s->pre_done)
		return !s->ended;
	if (s->pre_running)
		pthread_join(s->pre_thread, NULL);
	s->pre_running = false;
	s->pre_done = true;
	ok = s->pre.socket[0] && check_list_passed(&s->pre.checks);
	bad = check_list_first_failure(&s->pre.checks);
	if (ok)
		session_record_later(s, AUDIT_D_PASS, "preflight");
	else
		session_record(s, AUDIT_D_REFUSED, bad ? bad->id : "preflight", NULL);
	s->facts = s->pre.facts;
	if (!ok)
		session_fail(s, SESSION_END_PREFLIGHT_REFUSED, "preflight: %s (observed %.100s)",
			     bad ? bad->id : "report", bad ? bad->observed : "incomplete");
	doctor_report_free(&s->pre);
	return ok && !s->ended;
}

static void *
preflight_daemon_main(void *arg)
{
	struct session *s = arg;

	doctor_run_daemon(&s->pre, s->cfg->profile.runtime);
	return NULL;
}

/*
 * Local checks and the endpoint now; the daemon's checks (/version, /info)
 * on a thread of their own while the payload is read and the container is
 * created (created, never started: a refusal removes it). preflight_end
 * joins them before the first admission, which needs the daemon's facts.
 */
static bool
preflight_begin(struct session *s)
{
	s->pre_begun = true;
	if (!doctor_run_local(s->o->docker_host, &s->pre))
		return session_preflight_end(s);
	memcpy(s->socket, s->pre.socket, sizeof s->socket);
	s->pre_running = thread_start(&s->pre_thread, NULL, preflight_daemon_main, s) == 0;
	if (!s->pre_running)
		doctor_run_daemon(&s->pre, s->cfg->profile.runtime);
	return true;
}

/* One audit entry per admission: verdict, first refusing check, counts. */
static void
record_admission(struct session *s, const char *phase, const struct check_list *l,
		 char verdict_out[16])
{
	const struct check_item *bad = check_list_first_failure(l);
	enum audit_decision d = check_list_passed(l) ? AUDIT_D_ADMITTED : AUDIT_D_REFUSED;
	char detail[96];

	snprintf(verdict_out, 16, "%s", audit_decision_id(d));
	if (bad && !s->sum->refused_check[0]) {
		snprintf(s->sum->refused_check, sizeof s->sum->refused_check, "%s", bad->id);
		snprintf(s->sum->reason, sizeof s->sum->reason,
			 "admission (%.6s inspection): %.31s observed %.48s, expected %.48s",
			 phase, bad->id, bad->observed, bad->expected);
	}
	if (s->o->hooks.report)
		s->o->hooks.report(s->o->hooks.ctx, strcmp(phase, "first") == 0 ? 1 : 2, l);
	snprintf(detail, sizeof detail, "{\"phase\":\"%s\",\"checks\":%zu,\"refused\":%zu}",
		 phase, l->n, check_list_failures(l));
	session_record(s, d, bad ? bad->id : phase, detail);
}

/*
 * Called from the pulse thread when the lease fails: the engine stops the
 * container itself (with its own connection: the worker may be busy on
 * its own), and the worker ends the session at its next tick.
 */
static void
on_lease_fail(void *ctx, const char *reason)
{
	struct session *s = ctx;
	struct docker *d;
	struct al_err err;

	snprintf(s->lease_reason, sizeof s->lease_reason, "%s", reason);
	atomic_store(&s->lease_failed, 1);
	if (s->o->hooks.lease_failed)
		s->o->hooks.lease_failed(s->o->hooks.ctx, reason);
	d = docker_open(s->socket, DOCKER_TIMEOUT_MS, &err);
	if (d && docker_stop(d, container_id(s->box), 0, &err) < 0)
		docker_kill(d, container_id(s->box), "KILL", &err);
	docker_close(d);
}

/*
 * The watchdog is started before the container (so its fork, exec and
 * ready overlap the start) and waited for after it: arm_lease is the
 * barrier before the second look and any data.
 */
static bool
spawn_lease(struct session *s)
{
	struct al_err err;

	if (lease_spawn(s->o->watchdog_exe, s->socket, container_id(s->box), on_lease_fail, s,
			&s->lease, &err) < 0) {
		session_record(s, AUDIT_D_REFUSED, "watchdog_not_ready", NULL);
		session_fail(s, SESSION_END_WATCHDOG_FAILED, "%s", err.msg);
		return false;
	}
	return true;
}

static bool
arm_lease(struct session *s)
{
	struct al_err err;

	session_set_state(s, SESSION_STATE_ARMING);
	if (lease_wait_ready(s->lease, &err) < 0) {
		session_record(s, AUDIT_D_REFUSED, "watchdog_not_ready", NULL);
		session_fail(s, SESSION_END_WATCHDOG_FAILED, "%s", err.msg);
		return false;
	}
	if (s->o->hooks.lease)
		s->o->hooks.lease(s->o->hooks.ctx, s->lease);
	return true;
}

/*
 * The step is a fixed word; the reason adds the daemon's status and message
 * (about the image, the container or the daemon itself: never agent bytes).
 */
static bool
container_failed(struct session *s, const char *step, const struct al_err *err)
{
	snprintf(s->sum->failed_step, sizeof s->sum->failed_step, "%s", step);
	session_fail(s, SESSION_END_CONTAINER_FAILED, "%s", err && err->msg[0] ? err->msg : step);
	return false;
}

/* Between launch steps: a stop asked for meanwhile ends the session here. */
static bool
still_wanted(struct session *s)
{
	if (session_stop_requested(s))
		session_end(s, SESSION_END_OPERATOR_STOP);
	return !s->ended;
}

/* At most so many sessions create and start containers at once. */
static bool
launch_slot_take(struct session *s)
{
	struct timespec ts;

	if (!s->o->launch_slots)
		return false;
	for (;;) {
		ts = clock_deadline(CLOCK_REALTIME, 100);	/* sem_timedwait's clock */
		if (sem_timedwait(s->o->launch_slots, &ts) == 0)
			return true;
		if (session_stop_requested(s))
			return false;	/* launch() sees the stop before it creates */
	}
}

static bool
create_admit(struct session *s)
{
	const struct check_list *first;
	struct owner_labels who;
	struct al_err err;
	int rc;

	if (!still_wanted(s))
		return false;	/* stopped before launch: no container at all */
	s->docker = docker_open(s->socket, DOCKER_TIMEOUT_MS, &err);
	if (!s->docker || owner_labels_self(&who, s->sum->session_id, &err) < 0)
		return container_failed(s, "connect", &err);
	s->box = container_new(s->docker, s->socket);
	if (!s->box)
		return container_failed(s, "create", NULL);
	first = container_report(s->box, 1);
	session_set_state(s, SESSION_STATE_CREATING);
	rc = container_create(s->box, &s->profile, &who, &err);
	snprintf(s->st.container_id, sizeof s->st.container_id, "%s", container_id(s->box));
	/* A refused daemon wins over a failed create: the create may fail for it. */
	if (!session_preflight_end(s))
		return false;
	if (rc == 0)
		rc = container_admit_first(s->box, &s->profile, &s->facts, &err);
	if (first->n > 0) {
		record_admission(s, "first", first, s->sum->admission_first);
		session_set_state(s, SESSION_STATE_ADMITTING);
	}
	if (rc < 0 && first->n > 0)
		session_end(s, SESSION_END_ADMISSION_REFUSED);
	else if (rc < 0)
		container_failed(s, "create", &err);
	return rc == 0 && still_wanted(s);
}

/*
 * The profile the second inspection compares with. The test-only mutant
 * "readmit_strict" expects one pid less than the container got, so a test
 * can see a refusing second inspection reach the report and the console.
 */
static const struct profile *
readmit_profile(const struct session *s, struct profile *strict)
{
	if (!mutant("readmit_strict"))
		return &s->profile;
	*strict = s->profile;
	strict->pids_limit--;
	return strict;
}

static bool
launch(struct session *s)
{
	const struct check_list *second;
	struct profile strict;
	struct al_err err;

	if (!create_admit(s) || !spawn_lease(s))
		return false;
	session_set_state(s, SESSION_STATE_ATTACHING);
	if (container_attach_start(s->box, &err) < 0)
		return still_wanted(s) &&
		       container_failed(s, container_stream(s->box) ? "start" : "attach", &err);
	session_set_state(s, SESSION_STATE_STARTING);
	/* Ready after attach and start, before the second look and any data. */
	if (!still_wanted(s) || !arm_lease(s))
		return false;
	session_set_state(s, SESSION_STATE_READMITTING);
	second = container_report(s->box, 2);
	if (container_readmit(s->box, readmit_profile(s, &strict), &s->facts, &err) < 0) {
		if (second->n == 0)
			return still_wanted(s) && container_failed(s, "inspect", &err);
		record_admission(s, "second", second, s->sum->admission_second);
		session_end(s, SESSION_END_ADMISSION_REFUSED);
		return false;
	}
	record_admission(s, "second", second, s->sum->admission_second);
	return still_wanted(s);
}

/*
 * A refused claim (docs/guarantees.md, "Pooled sessions"): one admission
 * entry with phase "claim", and nothing in the summary: the session goes
 * on with another pooled container, or a cold one.
 */
static void
record_claim_refused(struct session *s, const struct check_list *l, const char *why)
{
	const struct check_item *bad = check_list_first_failure(l);
	char detail[96];

	snprintf(detail, sizeof detail, "{\"phase\":\"claim\",\"checks\":%zu,\"refused\":%zu}",
		 l->n, check_list_failures(l));
	session_record(s, AUDIT_D_REFUSED, bad ? bad->id : why, detail);
}

/* The session takes the pooled container's parts; its lease's failures become ours. */
static void
adopt(struct session *s, struct warm *w)
{
	struct warm_parts p;

	warm_parts(w, &p);
	s->warm = w;
	s->parser = warm_take_parser(w);	/* started while pooled: no wait for one */
	if (!s->parser)
		session_parser_begin(s);
	s->docker = p.docker;
	s->box = p.box;
	s->lease = p.lease;
	s->facts = *p.facts;
	memcpy(s->socket, p.socket, sizeof s->socket);
	snprintf(s->st.container_id, sizeof s->st.container_id, "%s", container_id(s->box));
	warm_forward(w, on_lease_fail, s);
}

/* Hand a refused one back to be stopped and removed; the session is as before. */
static void
disown(struct session *s)
{
	struct warm *w = s->warm;

	parser_stop(session_parser_take(s));	/* the next claim brings its own */
	s->warm = NULL;
	s->docker = NULL;
	s->box = NULL;
	s->lease = NULL;
	s->st.container_id[0] = '\0';
	s->o->pool.discard(s->o->pool.ctx, w);
	atomic_store(&s->lease_failed, 0);
	s->lease_reason[0] = '\0';
}

/*
 * The claimed container's story so far, in a cold session's order: the
 * preflight and first admission it passed while pooled, then this
 * second admission (docs/guarantees.md).
 */
static void
record_claim(struct session *s)
{
	session_record_later(s, AUDIT_D_PASS, "preflight");
	record_admission(s, "first", container_report(s->box, 1), s->sum->admission_first);
	record_admission(s, "second", container_report(s->box, 2), s->sum->admission_second);
	s->sum->pooled = true;
	if (s->o->hooks.lease)
		s->o->hooks.lease(s->o->hooks.ctx, s->lease);
}

enum claim_result { CLAIM_NONE, CLAIM_REFUSED, CLAIM_OK };

/* One claim: the second admission on the claim's path, before any data. */
static enum claim_result
claim_one(struct session *s)
{
	struct warm *w = s->o->pool.claim(s->o->pool.ctx);
	const struct check_list *second;
	struct profile strict;
	struct al_err err;

	if (!w)
		return CLAIM_NONE;
	adopt(s, w);
	session_set_state(s, SESSION_STATE_READMITTING);
	second = container_report(s->box, 2);
	if (container_readmit(s->box, readmit_profile(s, &strict), &s->facts, &err) < 0) {
		record_claim_refused(s, second, "pool_inspect");
	} else if (!warm_lease_ok(w) || atomic_load(&s->lease_failed)) {
		record_claim_refused(s, second, "pool_lease");
	} else {
		record_claim(s);
		return CLAIM_OK;
	}
	disown(s);
	return CLAIM_REFUSED;
}

/*
 * Claim from the pool: true with a container admitted twice, false to
 * start cold (the pool had none that passed) or when the session ended.
 * Bounded: each refusal takes one container out of a pool of at most
 * POOL_SIZE_MAX ready ones, and a few more may have warmed meanwhile.
 */
static bool
claim(struct session *s)
{
	int tries;

	if (!s->o->pool.claim)
		return false;
	for (tries = 0; tries < 2 * POOL_SIZE_MAX && still_wanted(s); tries++) {
		switch (claim_one(s)) {
		case CLAIM_OK:
			return !s->ended;
		case CLAIM_NONE:
			return false;
		case CLAIM_REFUSED:
			break;
		}
	}
	return false;
}

static bool
launch_bounded(struct session *s)
{
	bool taken = launch_slot_take(s), ok = launch(s);

	if (taken)
		sem_post(s->o->launch_slots);
	return ok;
}

/*
 * A pooled session reads its payload, then claims (its preflight ran when
 * the container was warmed); a cold one starts its preflight first so the
 * daemon's checks overlap the payload and the create.
 */
bool
session_launched(struct session *s, char **frame, size_t *len)
{
	bool ok;

	if (s->o->pool.claim) {
		if (!(*frame = initial_frame(s, len)))
			return false;
		ok = claim(s) || (!s->ended && session_parser_begin(s) && preflight_begin(s) &&
				  launch_bounded(s));
	} else {
		ok = session_parser_begin(s) && preflight_begin(s) &&
		     (*frame = initial_frame(s, len)) && launch_bounded(s);
	}
	/*
	 * Both reports are in the audit, the summary and the console's copy
	 * by now: the container's are not kept for the session's life (about
	 * 37 kB a session).
	 */
	if (ok)
		container_reports_drop(s->box);
	return ok;
}
