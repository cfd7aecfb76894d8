#include "session.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bridge.h"
#include "container.h"
#include "doctor.h"
#include "frame.h"
#include "mcp_session.h"
#include "ids.h"
#include "journal.h"
#include "mutant.h"
#include "policy.h"
#include "shim_image.h"
#include "warm.h"

#define INITIAL_FILE_MAX	(1 << 20)
#define POLL_TICK_MS		100
#define PUBLISH_MS		500

const char *
session_end_message(enum session_end e)
{
	switch (e) {
	case SESSION_END_INVALID_REQUEST:
		return FRAME_ERROR_INVALID;
	case SESSION_END_INITIAL_REFUSED:
	case SESSION_END_PREFLIGHT_REFUSED:
	case SESSION_END_ADMISSION_REFUSED:
	case SESSION_END_CONTAINER_FAILED:
		/* Ended before any exchange: no agent was given data, none failed. */
		return SESSION_NOT_STARTED;
	default:
		return session_end_normal(e) ? NULL : FRAME_ERROR_EXCHANGE;
	}
}

/* Everything one running session holds. */
struct session {
	const struct session_options *o;
	const struct airlock_config *cfg;
	struct profile profile;		/* cfg's, with the engine's shim digest (MCP) */
	struct session_summary *sum;
	struct docker *docker;
	char socket[DOCKER_SOCKET_MAX];
	struct host_facts facts;
	struct doctor_report pre;	/* preflight; its daemon half on pre_thread */
	pthread_t pre_thread;
	bool pre_begun, pre_running, pre_done;
	struct container *box;		/* NULL until the daemon answers */
	struct warm *warm;		/* a claimed pooled container's shell, or NULL */
	struct gateway *gw;
	struct bridge *br;		/* while the agent runs */
	int64_t t0_ms;
	int64_t deadline_ms;	/* on the monotonic clock */
	bool ended;
	struct lease *lease;
	atomic_int lease_failed;	/* set by the pulse thread */
	char lease_reason[SNAP_WORD_MAX];	/* written before lease_failed is set */
	struct session_status st;	/* what publish() hands out */
	int64_t published_ms;
	struct audit_lane lane;		/* the session's own queued entries (record_later) */
	bool lane_counted;		/* its refusal is in sum->audit_failures */
	uint64_t mcp_listed;		/* MCP sessions: the aliases the shim lists now */
};

/* The bridge counts the agent's output; the summary carries it. */
static void
take_counts(struct session *s)
{
	const struct bridge_report *r;

	if (!s->br)
		return;
	r = bridge_report(s->br);
	s->sum->stdout_bytes = r->stdout_bytes;
	s->sum->stderr_bytes = r->stderr_bytes;
}

/* Hand the observer a fresh status: names, numbers, verdicts. */
static void
publish(struct session *s)
{
	struct session_status *st = &s->st;

	take_counts(s);
	if (!s->o->hooks.publish)
		return;
	st->stdout_bytes = s->sum->stdout_bytes;
	st->stderr_bytes = s->sum->stderr_bytes;
	if (s->gw) {
		gateway_get_counters(s->gw, &st->counters);
		st->session_class = gateway_session_class(s->gw);
	}
	s->published_ms = clock_mono_ms();
	s->o->hooks.publish(s->o->hooks.ctx, st);
}

static void
set_state(struct session *s, enum session_state state)
{
	s->st.state = state;
	publish(s);
}

static bool
stop_requested(const struct session *s)
{
	return s->o->stop && atomic_load(s->o->stop);
}

/*
 * Ends an engine-side stop can cause: the container it stopped exits, its
 * stream closes, a line is cut short. When one of these follows an
 * operator stop or a failed lease, the cause is the end, not the symptom.
 */
static bool
end_is_symptom(enum session_end e)
{
	return e == SESSION_END_AGENT_EXIT || e == SESSION_END_AGENT_FAILED ||
	       e == SESSION_END_STREAM_FAILED ||
	       e == SESSION_END_INVALID_REQUEST || e == SESSION_END_FRAME_TOO_LARGE ||
	       e == SESSION_END_OOM_KILLED || e == SESSION_END_SANDBOX_DIED;
}

/*
 * The first end wins: later faults during cleanup do not rewrite history.
 * Both engine-side causes are flagged before the container is stopped, so
 * any symptom of that stop sees its flag here and the cause is recorded.
 */
static void
end_with(struct session *s, enum session_end e, const char *reason)
{
	struct session_summary *sum = s->sum;

	if (s->ended)
		return;
	s->ended = true;
	if (end_is_symptom(e) && atomic_load(&s->lease_failed))
		e = SESSION_END_WATCHDOG_FAILED;
	else if (end_is_symptom(e) && stop_requested(s))
		e = SESSION_END_OPERATOR_STOP;
	else if (reason && !sum->reason[0])
		snprintf(sum->reason, sizeof sum->reason, "%s", reason);
	sum->end = e;
	if (e == SESSION_END_WATCHDOG_FAILED && !sum->reason[0])
		snprintf(sum->reason, sizeof sum->reason, "watchdog lease failed: %s",
			 s->lease_reason[0] ? s->lease_reason : "unknown");
	else if (e == SESSION_END_OPERATOR_STOP && !sum->reason[0])
		snprintf(sum->reason, sizeof sum->reason, "stopped by the operator");
}

static void
session_end(struct session *s, enum session_end e)
{
	end_with(s, e, NULL);
}

/* An end with its reason for the operator (fixed text and names only). */
static void
session_fail(struct session *s, enum session_end e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
session_fail(struct session *s, enum session_end e, const char *fmt, ...)
{
	char reason[SNAP_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	end_with(s, e, reason);
}

static void
session_entry(struct session *s, struct audit_entry *e, const char *rule, const char *detail)
{
	bool open;

	*e = (struct audit_entry){
		.session_id = s->sum->session_id,
		.rule = rule,
		.class_before = class_name(&s->cfg->classes, s->cfg->initial.class),
		.class_after = s->gw ? class_name(&s->cfg->classes, gateway_session_class(s->gw))
				     : class_name(&s->cfg->classes, s->cfg->initial.class),
		.detail = detail,
	};
	if (s->o->gate)
		gate_read(s->o->gate, &e->revision, &open, NULL, 0);
}

/* The log refused later entries of this session's (counted once). */
static bool
lane_refused(struct session *s)
{
	if (!audit_lane_failed(s->o->audit, &s->lane))
		return false;
	if (!s->lane_counted)
		s->sum->audit_failures++;
	s->lane_counted = true;
	return true;
}

/*
 * Durable when it returns, together with the session's entries queued
 * before it (record_later): one of those lost ends the session as the
 * entry itself failing would.
 */
static void
record(struct session *s, enum audit_decision d, const char *rule, const char *detail)
{
	struct journal j = { s->o->audit, s->o->otlp };
	struct audit_entry e;

	session_entry(s, &e, rule, detail);
	if (journal_write(&j, NULL, d, &e, NULL) < 0) {
		s->sum->audit_failures++;
		session_end(s, SESSION_END_AUDIT_FAILED);
		return;
	}
	if (lane_refused(s))
		session_end(s, SESSION_END_AUDIT_FAILED);
}

/*
 * An entry nothing acts on before the session's next durable entry: it
 * rides on that commit (or any earlier one of the log, or its timer,
 * audit.h). The start and a passed preflight are such entries: the first
 * admission report, durable before the container starts, carries them
 * (docs/guarantees.md).
 */
static void
record_later(struct session *s, enum audit_decision d, const char *rule)
{
	struct journal j = { s->o->audit, s->o->otlp };
	struct audit_entry e;

	session_entry(s, &e, rule, NULL);
	if (journal_write(&j, &s->lane, d, &e, NULL) < 0) {
		s->sum->audit_failures++;
		session_end(s, SESSION_END_AUDIT_FAILED);
	}
}

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

/*
 * Never a parser message: it could quote the payload. *why gets a fixed
 * phrase; the caller adds the path (operator configuration).
 */
static json_t *
load_payload(const char *path, const char **why)
{
	json_error_t jerr;
	struct stat st;
	json_t *v;
	FILE *f;
	char *buf;
	size_t n;
	int fd;

	if (!path)
		return json_object();
	/* Non-blocking: a FIFO must not hold the session in open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*why = errno == ENOENT ? "no such file" : "cannot be opened";
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		*why = "not a regular file";
		return NULL;
	}
	buf = malloc(INITIAL_FILE_MAX + 1);
	n = buf ? fread(buf, 1, INITIAL_FILE_MAX + 1, f) : 0;
	fclose(f);
	*why = !buf ? "out of memory" : n > INITIAL_FILE_MAX ? "larger than 1 MiB"
							      : "not valid JSON";
	v = buf && n <= INITIAL_FILE_MAX ?
		json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (buf)
		explicit_bzero(buf, n);
	free(buf);
	return v;
}

static bool preflight_end(struct session *s);

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
	json_t *payload = load_payload(s->cfg->initial.file, &why);
	char *frame = payload ? session_initial_frame(payload, &s->cfg->initial.withhold,
						      s->cfg->bounds.frame_bytes, len) : NULL;

	if (payload && !frame)
		why = payload_fault(payload);
	json_decref(payload);
	if (!frame && preflight_end(s))	/* a refused daemon is the first end */
		session_fail(s, SESSION_END_INITIAL_REFUSED, "initial payload %.120s: %s",
			     s->cfg->initial.file ? s->cfg->initial.file : "(none)", why);
	return frame;
}

/* Record the preflight verdict; a refusal ends the session. Idempotent. */
static bool
preflight_end(struct session *s)
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
		record_later(s, AUDIT_D_PASS, "preflight");
	else
		record(s, AUDIT_D_REFUSED, bad ? bad->id : "preflight", NULL);
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
	sigset_t all;

	sigfillset(&all);	/* signals belong to other threads */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
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
		return preflight_end(s);
	memcpy(s->socket, s->pre.socket, sizeof s->socket);
	s->pre_running = pthread_create(&s->pre_thread, NULL, preflight_daemon_main, s) == 0;
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
	record(s, d, bad ? bad->id : phase, detail);
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
		record(s, AUDIT_D_REFUSED, "watchdog_not_ready", NULL);
		session_fail(s, SESSION_END_WATCHDOG_FAILED, "%s", err.msg);
		return false;
	}
	return true;
}

static bool
arm_lease(struct session *s)
{
	struct al_err err;

	set_state(s, SESSION_STATE_ARMING);
	if (lease_wait_ready(s->lease, &err) < 0) {
		record(s, AUDIT_D_REFUSED, "watchdog_not_ready", NULL);
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
	if (stop_requested(s))
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
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (sem_timedwait(s->o->launch_slots, &ts) == 0)
			return true;
		if (stop_requested(s))
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
	set_state(s, SESSION_STATE_CREATING);
	rc = container_create(s->box, &s->profile, &who, &err);
	snprintf(s->st.container_id, sizeof s->st.container_id, "%s", container_id(s->box));
	/* A refused daemon wins over a failed create: the create may fail for it. */
	if (!preflight_end(s))
		return false;
	if (rc == 0)
		rc = container_admit_first(s->box, &s->profile, &s->facts, &err);
	if (first->n > 0) {
		record_admission(s, "first", first, s->sum->admission_first);
		set_state(s, SESSION_STATE_ADMITTING);
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
	set_state(s, SESSION_STATE_ATTACHING);
	if (container_attach_start(s->box, &err) < 0)
		return still_wanted(s) &&
		       container_failed(s, container_stream(s->box) ? "start" : "attach", &err);
	set_state(s, SESSION_STATE_STARTING);
	/* Ready after attach and start, before the second look and any data. */
	if (!still_wanted(s) || !arm_lease(s))
		return false;
	set_state(s, SESSION_STATE_READMITTING);
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
	record(s, AUDIT_D_REFUSED, bad ? bad->id : why, detail);
}

/* The session takes the pooled container's parts; its lease's failures become ours. */
static void
adopt(struct session *s, struct warm *w)
{
	struct warm_parts p;

	warm_parts(w, &p);
	s->warm = w;
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
	record_later(s, AUDIT_D_PASS, "preflight");
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
	set_state(s, SESSION_STATE_READMITTING);
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

/* After each reply: the counters moved. */
static void
on_reply(void *ctx)
{
	publish(ctx);
}

/* The session's own reasons to stop the bridge, checked every tick. */
static void
tick_checks(struct session *s, int64_t left)
{
	if (left <= 0)
		session_end(s, SESSION_END_SESSION_TIMEOUT);
	else if (stop_requested(s))
		session_end(s, SESSION_END_OPERATOR_STOP);
	else if (atomic_load(&s->lease_failed))
		session_end(s, SESSION_END_WATCHDOG_FAILED);
}

/*
 * MCP sessions: a cutover that changed the listed aliases is announced to
 * the shim with one line, between replies (bridge_step has written every
 * reply it owed). Other sessions get no such line, ever.
 */
static void
mcp_announce(struct session *s)
{
	bool allowed[GATE_TOOLS_MAX];
	int64_t rev;
	uint64_t now;
	size_t n = s->cfg->n_tools, len;
	bool open;
	char *line;

	if (!s->cfg->agent.mcp || !s->o->gate || n > GATE_TOOLS_MAX)
		return;
	gate_read(s->o->gate, &rev, &open, allowed, n);
	now = mcp_session_listed(s->cfg, allowed, n);
	if (now == s->mcp_listed)
		return;
	s->mcp_listed = now;
	line = mcp_session_changed(s->cfg, rev, now, &len);
	if (!line || bridge_write(s->br, line, len) < 0)
		session_end(s, SESSION_END_STREAM_FAILED);
	free(line);
}

static void
bridge_tick(struct session *s)
{
	int64_t left = s->deadline_ms - clock_mono_ms();
	const struct bridge_report *r = bridge_report(s->br);

	tick_checks(s, left);
	if (s->ended)
		return;
	if (clock_mono_ms() - s->published_ms >= PUBLISH_MS)
		publish(s);
	if (!bridge_step(s->br, left < POLL_TICK_MS ? (int)left : POLL_TICK_MS))
		end_with(s, r->end, r->reason);
	else
		mcp_announce(s);
}

static void
bridge(struct session *s, const char *frame, size_t frame_len)
{
	struct bridge_options bo = {
		.box = s->box,
		.gw = s->gw,
		.bounds = &s->cfg->bounds,
		.runtime = s->cfg->profile.runtime,
		.replied = on_reply,
		.ctx = s,
	};

	s->deadline_ms = bo.deadline_ms = clock_mono_ms() + s->cfg->bounds.session_ms;
	s->br = bridge_open(&bo);
	if (!s->br || bridge_write(s->br, frame, frame_len) < 0) {
		session_end(s, SESSION_END_STREAM_FAILED);
		return;
	}
	set_state(s, SESSION_STATE_RUNNING);
	while (!s->ended)
		bridge_tick(s);
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
static bool
launched(struct session *s, char **frame, size_t *len)
{
	bool ok;

	if (s->o->pool.claim) {
		if (!(*frame = initial_frame(s, len)))
			return false;
		ok = claim(s) || (!s->ended && preflight_begin(s) && launch_bounded(s));
	} else {
		ok = preflight_begin(s) && (*frame = initial_frame(s, len)) && launch_bounded(s);
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

static json_t *
tool_definition(void *ctx, int tool)
{
	return gateway_tool_definition(ctx, tool);
}

/*
 * MCP sessions: the frame becomes {"payload", "tools"}, the tools'
 * definitions from their upstreams (docs/mcp-agents.md). Every alias is
 * listed at first: the gate starts with all of them allowed.
 */
static bool
mcp_frame(struct session *s, char **frame, size_t *len)
{
	bool allowed[CONFIG_TOOLS_MAX], open;
	int64_t rev = 0;
	size_t n;
	char *f;

	if (!s->cfg->agent.mcp)
		return true;
	memset(allowed, 1, sizeof allowed);
	/* A standing revoke holds from the start: what the gate allows now is listed. */
	if (s->o->gate && s->cfg->n_tools <= GATE_TOOLS_MAX)
		gate_read(s->o->gate, &rev, &open, allowed, s->cfg->n_tools);
	s->mcp_listed = mcp_session_listed(s->cfg, allowed, s->cfg->n_tools);
	f = mcp_session_frame(s->cfg, *frame, *len, tool_definition, s->gw, rev, s->mcp_listed,
			      s->cfg->bounds.frame_bytes, &n);
	explicit_bzero(*frame, *len);
	free(*frame);
	*frame = f;
	*len = f ? n : 0;
	if (!f)
		session_fail(s, SESSION_END_INITIAL_REFUSED, "initial payload %.120s: %s",
			     s->cfg->initial.file ? s->cfg->initial.file : "(none)",
			     "larger than a frame with the MCP tool list (bounds.frame_bytes)");
	return f != NULL;
}

static bool
open_gateway(struct session *s)
{
	struct gateway_options go = {
		.config = s->cfg,
		.session_id = s->sum->session_id,
		.audit = s->o->audit,
		.otlp = s->o->otlp,
		.gate = s->o->gate,
	};
	struct al_err err;

	if (gateway_open(&go, &s->gw, &err) < 0) {
		session_fail(s, SESSION_END_AUDIT_FAILED, "%s", err.msg);
		return false;
	}
	return true;
}

/* Stop and remove, at most SUPERVISOR_CLEANUP_PARALLEL at once (a wait, never a refusal). */
static int
cleanup_bounded(struct session *s, struct al_err *err)
{
	int rc;

	while (s->o->cleanup_slots && sem_wait(s->o->cleanup_slots) < 0)
		;	/* EINTR */
	rc = container_cleanup(s->box, err);
	if (s->o->cleanup_slots)
		sem_post(s->o->cleanup_slots);
	return rc;
}

static void
finish(struct session *s)
{
	struct session_summary *sum = s->sum;
	struct al_err err;
	json_t *detail;
	char *text;

	set_state(s, SESSION_STATE_STOPPING);
	preflight_end(s);	/* every session records its preflight, whatever ended it */
	if (container_is(s->box, CONTAINER_CREATED) && cleanup_bounded(s, &err) < 0) {
		session_end(s, SESSION_END_CLEANUP_FAILED);
		sum->container_left = true;
	}
	if (s->lease) {
		if (s->o->hooks.lease)
			s->o->hooks.lease(s->o->hooks.ctx, NULL);
		/* Seen gone: the watchdog need not ask the daemon. Else EOF: it stops it. */
		if (container_is(s->box, CONTAINER_REMOVED))
			lease_done(s->lease);
		else
			lease_close(s->lease);
		s->lease = NULL;
	}
	warm_release(s->warm);	/* its parts are ours and closed below */
	s->warm = NULL;
	sum->exit_code = container_exit_code(s->box);
	sum->container_started = container_is(s->box, CONTAINER_STARTED);
	sum->oom_killed = container_is(s->box, CONTAINER_OOM_KILLED);
	if (s->gw) {
		gateway_settle(s->gw);
		gateway_get_counters(s->gw, &sum->counters);
		sum->audit_failures += (unsigned)sum->counters.audit_failures;
		snprintf(sum->session_class, sizeof sum->session_class, "%s",
			 class_name(&s->cfg->classes, gateway_session_class(s->gw)));
		sum->upstream_stderr_bytes = gateway_upstream_stderr(s->gw);
		gateway_close(s->gw);	/* after the container: the agent is gone first */
		s->gw = NULL;
	}
	sum->duration_ms = clock_mono_ms() - s->t0_ms;
	detail = session_summary_json(sum);
	text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
	record(s, session_end_normal(sum->end) ? AUDIT_D_NORMAL : AUDIT_D_ABNORMAL,
	       session_end_id(sum->end), text);
	/*
	 * Carried by the end's commit; a failure there leaves them to the
	 * timer, decided here. A lane that failed before was counted then.
	 */
	if (audit_lane_settle(s->o->audit, &s->lane, NULL) < 0)
		lane_refused(s);
	free(text);
	json_decref(detail);
	take_counts(s);		/* the last counts, then the bridge goes */
	container_free(s->box);
	s->box = NULL;
	bridge_close(s->br);
	s->br = NULL;
	docker_close(s->docker);
	s->docker = NULL;
	s->st.summary = sum;
	set_state(s, SESSION_STATE_ENDED);
}

/*
 * The profile admission compares with: the config's (its lists shared,
 * read only), and for an MCP session the SHA-256 of this engine's own
 * airlock-shim, read now so a rebuilt shim counts from the next session.
 * One the engine cannot read stays "": shim_digest then refuses.
 */
static void
session_profile(struct session *s)
{
	struct al_err err;

	s->profile = s->cfg->profile;
	if (s->profile.shim_required &&
	    shim_image_engine_digest(s->o->watchdog_exe, s->profile.shim_sha256, &err) < 0)
		s->profile.shim_sha256[0] = '\0';
}

int
session_run(const struct session_options *o, struct session_summary *out)
{
	struct session s = { .o = o, .cfg = o->config, .sum = out };
	size_t frame_len = 0;
	char *frame = NULL;

	memset(out, 0, sizeof *out);
	out->exit_code = -1;
	snprintf(out->admission_first, sizeof out->admission_first, "not_run");
	snprintf(out->admission_second, sizeof out->admission_second, "not_run");
	snprintf(out->session_class, sizeof out->session_class, "%s",
		 class_name(&o->config->classes, o->config->initial.class));
	if (o->session_id)
		snprintf(out->session_id, sizeof out->session_id, "%s", o->session_id);
	else if (id_random(out->session_id, sizeof out->session_id, "s-", 8) < 0)
		snprintf(out->session_id, sizeof out->session_id, "s-unknown");
	s.t0_ms = clock_mono_ms();
	session_profile(&s);
	memcpy(s.st.session_id, out->session_id, sizeof s.st.session_id);
	memcpy(s.st.image, o->config->profile.image, sizeof s.st.image);
	s.st.session_class = o->config->initial.class;
	set_state(&s, SESSION_STATE_PREFLIGHT);
	record_later(&s, AUDIT_D_START, NULL);
	if (!s.ended && launched(&s, &frame, &frame_len) && open_gateway(&s) &&
	    mcp_frame(&s, &frame, &frame_len))
		bridge(&s, frame, frame_len);
	if (frame) {
		explicit_bzero(frame, frame_len);
		free(frame);
	}
	finish(&s);
	return session_end_normal(out->end) ? 0 : -1;
}

static json_t *summary_pack(const struct session_summary *s);

/* {"catalog_drift": 3, …}: the denials by the rule that decided them, none left out. */
static json_t *
denied_by_json(const struct gateway_counters *n)
{
	json_t *o = json_object();
	int r;

	for (r = 0; o && r < RULE_COUNT; r++)
		if (n->denied_by[r] &&
		    json_object_set_new(o, policy_rule_id((enum policy_rule)r),
					json_integer((json_int_t)n->denied_by[r])) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* Only a pooled session says so: a cold one's summary is as it always was. */
json_t *
session_summary_json(const struct session_summary *s)
{
	json_t *o = summary_pack(s);

	if (o && s->pooled && json_object_set_new(o, "pooled", json_true()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
summary_pack(const struct session_summary *s)
{
	const struct gateway_counters *n = &s->counters;

	return json_pack("{s:s, s:s, s:b, s:s?, s:I, s:b, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I,"
			 " s:I, s:I, s:I, s:{s:s, s:s, s:s?}, s:s?, s:s?, s:s, s:b, s:I}",
			 "session", s->session_id,
			 "ended", session_end_id(s->end),
			 "normal", session_end_normal(s->end),
			 "message", session_end_message(s->end),
			 "exit_code", (json_int_t)s->exit_code,
			 "oom_killed", s->oom_killed,
			 "duration_ms", (json_int_t)s->duration_ms,
			 "calls", (json_int_t)n->calls,
			 "allowed", (json_int_t)n->allowed,
			 "denied", (json_int_t)n->denied,
			 "denied_by", denied_by_json(n),
			 "egress_denied", (json_int_t)n->egress_denied,
			 "upstream_errors", (json_int_t)n->upstream_errors,
			 "upstream_spawns", (json_int_t)n->upstream_spawns,
			 "stdout_bytes", (json_int_t)s->stdout_bytes,
			 "stderr_bytes", (json_int_t)s->stderr_bytes,
			 "upstream_stderr_bytes", (json_int_t)s->upstream_stderr_bytes,
			 "admission", "first", s->admission_first, "second", s->admission_second,
			 "refused_check", s->refused_check[0] ? s->refused_check : NULL,
			 "failed_step", s->failed_step[0] ? s->failed_step : NULL,
			 "reason", s->reason[0] ? s->reason : NULL,
			 "session_class", s->session_class,
			 "container_left", s->container_left,
			 "audit_failures", (json_int_t)s->audit_failures);
}
