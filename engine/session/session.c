#include "session_int.h"
#include "clock.h"

#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "container.h"
#include "frame.h"
#include "mcp_session.h"
#include "ids.h"
#include "journal.h"
#include "mutant.h"
#include "parser.h"
#include "policy.h"
#include "shim_image.h"
#include "warm.h"

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
		st->n_upstreams = gateway_upstreams(s->gw, st->upstreams, SNAP_UPSTREAMS_MAX);
	}
	s->published_ms = clock_mono_ms();
	s->o->hooks.publish(s->o->hooks.ctx, st);
}

void
session_set_state(struct session *s, enum session_state state)
{
	s->st.state = state;
	publish(s);
}

bool
session_stop_requested(const struct session *s)
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
	else if (end_is_symptom(e) && session_stop_requested(s))
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

void
session_end(struct session *s, enum session_end e)
{
	end_with(s, e, NULL);
}

void
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
void
session_record(struct session *s, enum audit_decision d, const char *rule, const char *detail)
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
 * The end, as session_record; refused, it goes to the end_unsaved hook to
 * be written again (the test build's mutant drops it, as before).
 */
static void
record_end(struct session *s, enum audit_decision d, const char *rule, const char *detail)
{
	struct journal j = { s->o->audit, s->o->otlp };
	struct session_end_entry *k;
	struct audit_entry e;

	session_entry(s, &e, rule, detail);
	if (journal_write(&j, NULL, d, &e, NULL) == 0) {
		if (lane_refused(s))
			session_end(s, SESSION_END_AUDIT_FAILED);
		return;
	}
	s->sum->audit_failures++;
	session_end(s, SESSION_END_AUDIT_FAILED);
	if (!s->o->hooks.end_unsaved || mutant("session_end_dropped") ||
	    !(k = calloc(1, sizeof *k)))
		return;
	snprintf(k->session_id, sizeof k->session_id, "%s", e.session_id);
	k->decision = d;
	k->rule = rule;
	snprintf(k->class_before, sizeof k->class_before, "%s", e.class_before ? e.class_before : "");
	snprintf(k->class_after, sizeof k->class_after, "%s", e.class_after ? e.class_after : "");
	k->revision = e.revision;
	if (detail && !(k->detail = strdup(detail))) {
		free(k);
		return;
	}
	s->o->hooks.end_unsaved(s->o->hooks.ctx, k);
}

int
session_end_write(const struct session_end_entry *k, struct audit *a, struct otlp *otlp)
{
	struct journal j = { a, otlp };
	struct audit_entry e = {
		.session_id = k->session_id,
		.rule = k->rule,
		.revision = k->revision,
		.class_before = k->class_before[0] ? k->class_before : NULL,
		.class_after = k->class_after[0] ? k->class_after : NULL,
		.detail = k->detail,
	};

	return journal_write(&j, NULL, k->decision, &e, NULL);
}

void
session_end_entry_free(struct session_end_entry *k)
{
	if (!k)
		return;
	free(k->detail);
	free(k);
}

/*
 * An entry nothing acts on before the session's next durable entry: it
 * rides on that commit (or any earlier one of the log, or its timer,
 * audit.h). The start and a passed preflight are such entries: the first
 * admission report, durable before the container starts, carries them
 * (docs/guarantees.md).
 */
static void
record_later(struct session *s, enum audit_decision d, const char *rule, const char *detail)
{
	struct journal j = { s->o->audit, s->o->otlp };
	struct audit_entry e;

	session_entry(s, &e, rule, detail);
	if (journal_write(&j, &s->lane, d, &e, NULL) < 0) {
		s->sum->audit_failures++;
		session_end(s, SESSION_END_AUDIT_FAILED);
	}
}

void
session_record_later(struct session *s, enum audit_decision d, const char *rule)
{
	record_later(s, d, rule, NULL);
}

/*
 * The start names its owner as the session's containers' labels do (this
 * engine's pid, its start ticks, the boot): a later engine on the log
 * ends the session engine_lost once that owner is gone, whatever became
 * of its containers. Without them (no /proc, no boot id), no detail: its
 * container's reap ends it then.
 */
static void
record_start(struct session *s)
{
	struct owner_labels who;
	struct al_err err;
	char detail[256];

	if (owner_labels_self(&who, NULL, &err) < 0) {
		record_later(s, AUDIT_D_START, NULL, NULL);
		return;
	}
	snprintf(detail, sizeof detail, "{\"%s\":\"%ld\",\"%s\":\"%llu\",\"%s\":\"%s\"}",
		 LABEL_OWNER_PID, who.pid, LABEL_OWNER_START, who.start_ticks, LABEL_OWNER_BOOT,
		 who.boot_id);
	record_later(s, AUDIT_D_START, NULL, detail);
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
	else if (session_stop_requested(s))
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

/*
 * A quarantined session's clock stops (issue 43, item 3): the time it is
 * held is added to its deadline, tick by tick, so neither the session
 * timeout nor a write's bound ends it while an operator holds it.
 */
static void
hold_clock(struct session *s)
{
	int64_t now = clock_mono_ms();

	if (s->o->gate && gate_quarantined(s->o->gate)) {
		s->deadline_ms += now - s->tick_ms;
		bridge_set_deadline(s->br, s->deadline_ms);
	}
	s->tick_ms = now;
}

static void
bridge_tick(struct session *s)
{
	int64_t left;
	const struct bridge_report *r = bridge_report(s->br);

	hold_clock(s);
	left = s->deadline_ms - clock_mono_ms();

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

	s->tick_ms = clock_mono_ms();
	s->deadline_ms = bo.deadline_ms = s->tick_ms + s->cfg->bounds.session_ms;
	s->br = bridge_open(&bo);
	if (!s->br || bridge_write(s->br, frame, frame_len) < 0) {
		session_end(s, SESSION_END_STREAM_FAILED);
		return;
	}
	session_set_state(s, SESSION_STATE_RUNNING);
	while (!s->ended)
		bridge_tick(s);
}
static bool
tool_definition(void *ctx, int tool, struct mcp_tool_shown *out)
{
	return gateway_tool_definition(ctx, tool, out);
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
			     CONFIG_INITIAL_LABEL(s->cfg),
			     "larger than a frame with the MCP tool list (bounds.frame_bytes)");
	return f != NULL;
}

/*
 * Container upstreams get the session's daemon, profile, host facts and
 * watchdog (engine/gateway/upstream_box.h); they live in s->up, which
 * outlives the gateway.
 */
/*
 * A cold session's parser starts beside its launch (its spawn, its own
 * lockdown); a pooled one's was started while its container was pooled.
 * open_gateway takes it.
 */
static void *
parser_main(void *arg)
{
	struct session *s = arg;

	s->parser_rc = parser_start_beside(s->o->watchdog_exe, s->cfg->bounds.frame_bytes,
					   &s->parser, &s->parser_err);
	return NULL;
}

bool
session_parser_begin(struct session *s)
{
	s->parser_begun = pthread_create(&s->parser_thread, NULL, parser_main, s) == 0;
	if (!s->parser_begun)
		s->parser_rc = al_fail(&s->parser_err, "parser: cannot start its thread");
	return true;	/* a failure ends the session when its gateway opens */
}

struct parser *
session_parser_take(struct session *s)
{
	struct parser *p;

	if (s->parser_begun)
		pthread_join(s->parser_thread, NULL);
	s->parser_begun = false;
	p = s->parser;
	s->parser = NULL;
	return p;
}

/*
 * A held call waits for an operator (gateway.h): the session's own time
 * (bounds.session_ms) stands still meanwhile, so that no one's slowness
 * to decide ends the session; the wait itself is bounded by the config's
 * bounds.hold_timeout.
 */
static enum gateway_hold_answer
held_wait(void *ctx, struct hold_view *call)
{
	struct session *s = ctx;
	int64_t t0 = clock_mono_ms(), waited;
	enum gateway_hold_answer a = s->o->hold->wait(s->o->hold->ctx, call);

	waited = clock_mono_ms() - t0;
	s->deadline_ms += waited;
	if (s->br)
		bridge_extend(s->br, waited);
	return a;
}

/* An upstream's group, killed by the session's watchdog if the engine dies (watchdog.h). */
static void
guard_upstream(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	lease_guard(s->lease, pid);
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
		.host = &s->up,
		.exe = s->o->watchdog_exe,
		.hold = s->o->hold && s->o->hold->wait ? &s->hold : NULL,
		.stop = s->o->stop,
	};

	s->up = (struct upstream_host){
		.socket = s->socket,
		.profile = &s->profile,
		.facts = &s->facts,
		.watchdog_exe = s->o->watchdog_exe,
		.session_id = s->sum->session_id,
		.spawned = guard_upstream,
		.spawned_ctx = s,
	};
	struct al_err err;
	int rc;

	s->hold = (struct gateway_hold){ .wait = held_wait, .ctx = s };
	go.parser = session_parser_take(s);
	if (!go.parser) {
		session_fail(s, SESSION_END_PARSER_FAILED, "%s", s->parser_err.msg);
		return false;
	}
	rc = gateway_open(&go, &s->gw, &err);
	if (rc < 0) {
		session_fail(s, rc == GATEWAY_NO_PARSER ? SESSION_END_PARSER_FAILED :
			     SESSION_END_AUDIT_FAILED, "%s", err.msg);
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

/*
 * The lease ends with the container: seen gone, the watchdog need not ask
 * the daemon; else EOF: it stops it.
 */
static void
release_lease(struct session *s)
{
	if (!s->lease)
		return;
	if (s->o->hooks.lease)
		s->o->hooks.lease(s->o->hooks.ctx, NULL);
	if (container_is(s->box, CONTAINER_REMOVED))
		lease_done(s->lease);
	else
		lease_close(s->lease);
	s->lease = NULL;
}

/*
 * The lease ends after the upstreams' stop (their groups killed): until
 * its "d" the watchdog kills them itself should this engine die. The
 * test build's engine may die right after it, to show nothing is left.
 */
static void
end_lease(struct session *s)
{
	release_lease(s);
	if (mutant("session_dies_after_lease"))
		raise(SIGKILL);
}

/*
 * The gateway's last counts into the summary; it closes after the
 * container: the agent is gone first.
 */
static void
close_gateway(struct session *s, struct session_summary *sum)
{
	if (!s->gw)
		return;
	gateway_settle(s->gw);
	gateway_get_counters(s->gw, &sum->counters);
	sum->audit_failures += (unsigned)sum->counters.audit_failures;
	snprintf(sum->session_class, sizeof sum->session_class, "%s",
		 class_name(&s->cfg->classes, gateway_session_class(s->gw)));
	sum->upstream_stderr_bytes = gateway_upstream_stderr(s->gw);
	gateway_close(s->gw);
	s->gw = NULL;
}

static void
finish(struct session *s)
{
	struct session_summary *sum = s->sum;
	struct al_err err;
	json_t *detail;
	char *text;

	session_set_state(s, SESSION_STATE_STOPPING);
	session_preflight_end(s);	/* every session records its preflight, whatever ended it */
	if (container_is(s->box, CONTAINER_CREATED) && cleanup_bounded(s, &err) < 0) {
		session_end(s, SESSION_END_CLEANUP_FAILED);
		sum->container_left = true;
	}
	if (mutant("session_lease_first"))
		end_lease(s);	/* the order before: "d" while the upstreams ran */
	warm_release(s->warm);	/* its parts are ours and closed below */
	s->warm = NULL;
	sum->exit_code = container_exit_code(s->box);
	sum->container_started = container_is(s->box, CONTAINER_STARTED);
	sum->oom_killed = container_is(s->box, CONTAINER_OOM_KILLED);
	close_gateway(s, sum);
	end_lease(s);
	parser_stop(session_parser_take(s));	/* a session that ended before its gateway opened */
	sum->duration_ms = clock_mono_ms() - s->t0_ms;
	detail = session_summary_json(sum);
	text = detail ? json_dumps(detail, JSON_COMPACT) : NULL;
	record_end(s, session_end_normal(sum->end) ? AUDIT_D_NORMAL : AUDIT_D_ABNORMAL,
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
	session_set_state(s, SESSION_STATE_ENDED);
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
	session_set_state(&s, SESSION_STATE_PREFLIGHT);
	record_start(&s);
	if (!s.ended && session_launched(&s, &frame, &frame_len) && open_gateway(&s) &&
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
