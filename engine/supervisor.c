#include "supervisor.h"
#include "clock.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ids.h"
#include "preflight.h"
#include "profile.h"

/* One session's place in the supervisor. */
struct slot {
	struct supervisor *sup;
	pthread_t thread;
	const struct airlock_config *cfg;
	struct gate gate;
	const char *names[GATE_TOOLS_MAX];
	atomic_bool stop;
	char id[40];
	/* Under sup->lock: */
	struct session_status status;
	struct session_summary summary;
	enum session_state last_state;
	bool joined;
};

struct supervisor {
	struct supervisor_options o;
	pthread_mutex_t lock;
	struct slot *slots[SUPERVISOR_SESSIONS_MAX];
	size_t n_slots;
	uint64_t generation;
	struct supervisor_event events[SUPERVISOR_EVENTS_MAX];
	size_t ev_head, ev_count;	/* a ring; the oldest is dropped when full */
	int wake;			/* eventfd */
	sem_t launch_slots;		/* containers created and started at once */
};

static void
wake(struct supervisor *s)
{
	uint64_t one = 1;

	if (write(s->wake, &one, sizeof one) < 0) {
		/* A full counter still reads as readable: nothing is lost. */
	}
}

/* Under s->lock. */
static void
push_event(struct supervisor *s, enum supervisor_event_kind kind, const char *id,
	   const char *text)
{
	struct supervisor_event *e;

	if (s->ev_count == SUPERVISOR_EVENTS_MAX) {
		s->ev_head = (s->ev_head + 1) % SUPERVISOR_EVENTS_MAX;
		s->ev_count--;
	}
	e = &s->events[(s->ev_head + s->ev_count++) % SUPERVISOR_EVENTS_MAX];
	e->kind = kind;
	snprintf(e->session_id, sizeof e->session_id, "%s", id);
	snprintf(e->text, sizeof e->text, "%s", text);
	e->mono_ms = clock_mono_ms();
}

/* Alerts for the ways a session can end badly; fixed text plus names. */
static void
end_events(struct supervisor *s, struct slot *sl)
{
	const struct session_summary *sum = &sl->summary;
	char text[128];

	if (sum->end == END_WATCHDOG_FAILED)
		push_event(s, EVENT_ALERT, sl->id, "watchdog fired: container stopped");
	else if (sum->end == END_ADMISSION_REFUSED) {
		snprintf(text, sizeof text, "admission refused: %s", sum->refused_check);
		push_event(s, EVENT_ALERT, sl->id, text);
	} else if (!session_end_normal(sum->end)) {
		snprintf(text, sizeof text, "abnormal end: %s", session_end_id(sum->end));
		push_event(s, EVENT_ALERT, sl->id, text);
	}
}

/* The session's publish hook, on its worker or pulse thread. */
static void
on_publish(void *ctx, const struct session_status *st)
{
	struct slot *sl = ctx;
	struct supervisor *s = sl->sup;
	char text[128];

	pthread_mutex_lock(&s->lock);
	sl->status = *st;
	sl->status.summary = NULL;	/* the slot keeps its own copy */
	if (st->summary)
		sl->summary = *st->summary;
	if (st->state != sl->last_state) {
		snprintf(text, sizeof text, "%s", session_state_id(st->state));
		push_event(s, EVENT_STATE, sl->id, text);
		if (st->state == STATE_ENDED)
			end_events(s, sl);
		sl->last_state = st->state;
	}
	s->generation++;
	pthread_mutex_unlock(&s->lock);
	wake(s);
}

static void *
worker_main(void *arg)
{
	struct slot *sl = arg;
	struct supervisor *s = sl->sup;
	struct session_summary sum;
	struct session_options so = {
		.config = sl->cfg,
		.docker_host = s->o.docker_host,
		.audit = s->o.audit,
		.otlp = s->o.otlp,
		.gate = &sl->gate,
		.watchdog_exe = s->o.watchdog_exe,
		.stop = &sl->stop,
		.publish = on_publish,
		.publish_ctx = sl,
		.session_id = sl->id,
		.launch_slots = &s->launch_slots,
	};

	session_run(&so, &sum);
	return NULL;
}

/* The approved set: every tool an alias reaches, frozen now. */
static int
slot_gate(struct slot *sl)
{
	bool approved[GATE_TOOLS_MAX] = { false };
	size_t i;

	for (i = 0; i < sl->cfg->n_aliases; i++)
		approved[sl->cfg->aliases[i].tool] = true;
	for (i = 0; i < sl->cfg->n_tools; i++)
		sl->names[i] = sl->cfg->tools[i].name;
	return gate_init(&sl->gate, approved, sl->cfg->n_tools);
}

/* Workers must not take the console's signals (SIGWINCH, SIGINT, …). */
static int
spawn_worker(struct slot *sl)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&sl->thread, NULL, worker_main, sl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int
supervisor_start(struct supervisor *s, const struct airlock_config *cfg,
		 char session_id[40], struct al_err *err)
{
	struct slot *sl;

	if (cfg->n_tools > GATE_TOOLS_MAX)
		return al_fail(err, "supervisor: too many tools for the gate");
	sl = calloc(1, sizeof *sl);
	if (!sl)
		return al_fail(err, "supervisor: out of memory");
	sl->cfg = cfg;
	if (slot_gate(sl) < 0) {
		free(sl);
		return al_fail(err, "supervisor: cannot set up the policy gate");
	}
	sl->sup = s;
	if (id_random(sl->id, sizeof sl->id, "s-", 8) < 0) {
		gate_destroy(&sl->gate);
		free(sl);
		return al_fail(err, "supervisor: no randomness for a session id");
	}
	snprintf(sl->status.session_id, sizeof sl->status.session_id, "%s", sl->id);
	sl->status.started_mono_ms = clock_mono_ms();
	pthread_mutex_lock(&s->lock);
	if (s->n_slots == SUPERVISOR_SESSIONS_MAX) {
		pthread_mutex_unlock(&s->lock);
		gate_destroy(&sl->gate);
		free(sl);
		return al_fail(err, "supervisor: at most %d sessions", SUPERVISOR_SESSIONS_MAX);
	}
	s->slots[s->n_slots++] = sl;
	pthread_mutex_unlock(&s->lock);
	if (spawn_worker(sl) != 0) {
		sl->joined = true;	/* no thread to join */
		sl->status.state = STATE_ENDED;
		return al_fail(err, "supervisor: cannot start a worker thread");
	}
	memcpy(session_id, sl->id, 40);
	return 0;
}

static struct slot *
find(struct supervisor *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (strcmp(s->slots[i]->id, id) == 0)
			return s->slots[i];
	return NULL;
}

int
supervisor_stop_session(struct supervisor *s, const char *session_id)
{
	struct slot *sl;

	pthread_mutex_lock(&s->lock);
	sl = find(s, session_id);
	if (sl)
		atomic_store(&sl->stop, true);
	pthread_mutex_unlock(&s->lock);
	return sl ? 0 : -1;
}

struct cutover_job {
	pthread_t thread;
	bool threaded;
	struct slot *slot;
	const json_t *update;
	struct gate_ack ack;
};

static void *
cutover_main(void *arg)
{
	struct cutover_job *j = arg;

	gate_update_json(&j->slot->gate, j->update, j->slot->names, j->slot->cfg->n_tools,
			 &j->ack);
	return NULL;
}

/* One policy entry per session: the decision and the revision now in force. */
static void
record_cutover(struct supervisor *s, struct cutover_job *j)
{
	struct audit_entry e = {
		.session_id = j->slot->id,
		.type = AUDIT_POLICY,
		.decision = j->ack.verdict == GATE_APPLIED ? "applied" : "rejected",
		.rule = j->ack.reason,
		.revision = j->ack.revision,
	};
	char text[128];

	audit_append(s->o.audit, &e, NULL, NULL, NULL);
	snprintf(text, sizeof text, "cutover %s: revision %lld%s", e.decision,
		 (long long)j->ack.revision, j->ack.open ? "" : ", admission closed");
	pthread_mutex_lock(&s->lock);
	push_event(s, EVENT_ALERT, j->slot->id, text);
	s->generation++;
	pthread_mutex_unlock(&s->lock);
}

static bool
targeted(const struct slot *sl, const char *const *ids, size_t n_ids)
{
	size_t i;

	if (!ids)
		return true;
	for (i = 0; i < n_ids; i++)
		if (strcmp(ids[i], sl->id) == 0)
			return true;
	return false;
}

/* Sessions to update: named (or all), not ended. */
static size_t
cutover_targets(struct supervisor *s, const char *const *ids, size_t n_ids,
		struct cutover_job *jobs, size_t cap, const json_t *update)
{
	size_t i, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots && n < cap; i++) {
		struct slot *sl = s->slots[i];

		if (sl->status.state != STATE_ENDED && targeted(sl, ids, n_ids))
			jobs[n++] = (struct cutover_job){ .slot = sl, .update = update };
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t
supervisor_cutover(struct supervisor *s, const json_t *update,
		   const char *const *ids, size_t n_ids,
		   struct cutover_ack *acks, size_t cap)
{
	struct cutover_job *jobs = calloc(SUPERVISOR_SESSIONS_MAX, sizeof *jobs);
	size_t i, n;

	if (!jobs)
		return 0;
	n = cutover_targets(s, ids, n_ids, jobs, cap < SUPERVISOR_SESSIONS_MAX ? cap :
			    SUPERVISOR_SESSIONS_MAX, update);
	/* Concurrently: one session's in-flight call must not delay another's update. */
	for (i = 0; i < n; i++) {
		jobs[i].threaded = pthread_create(&jobs[i].thread, NULL, cutover_main,
						  &jobs[i]) == 0;
		if (!jobs[i].threaded)
			cutover_main(&jobs[i]);
	}
	for (i = 0; i < n; i++) {
		if (jobs[i].threaded)
			pthread_join(jobs[i].thread, NULL);
		record_cutover(s, &jobs[i]);
		snprintf(acks[i].session_id, sizeof acks[i].session_id, "%s", jobs[i].slot->id);
		acks[i].ack = jobs[i].ack;
	}
	free(jobs);
	wake(s);
	return n;
}

static void
snapshot_one(struct slot *sl, struct session_snapshot *out)
{
	size_t i;

	out->st = sl->status;
	out->summary = sl->summary;
	out->n_tools = sl->cfg->n_tools;
	for (i = 0; i < out->n_tools; i++)
		snprintf(out->tools[i], sizeof out->tools[i], "%s", sl->cfg->tools[i].name);
	memcpy(out->approved, sl->gate.approved, sizeof out->approved);
	gate_read(&sl->gate, &out->revision, &out->gate_open, out->allowed, GATE_TOOLS_MAX);
	snprintf(out->class_name, sizeof out->class_name, "%s",
		 class_name(&sl->cfg->classes, sl->status.session_class));
}

int
supervisor_snapshot(struct supervisor *s, struct supervisor_snapshot *out)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	out->generation = s->generation;
	out->n = s->n_slots;
	out->sessions = calloc(s->n_slots ? s->n_slots : 1, sizeof *out->sessions);
	if (!out->sessions) {
		pthread_mutex_unlock(&s->lock);
		out->n = 0;
		return -1;
	}
	for (i = 0; i < s->n_slots; i++)
		snapshot_one(s->slots[i], &out->sessions[i]);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void
supervisor_snapshot_free(struct supervisor_snapshot *snap)
{
	free(snap->sessions);
	snap->sessions = NULL;
	snap->n = 0;
}

int
supervisor_wake_fd(const struct supervisor *s)
{
	return s->wake;
}

size_t
supervisor_events(struct supervisor *s, struct supervisor_event *out, size_t cap)
{
	uint64_t count;
	size_t n = 0;

	if (read(s->wake, &count, sizeof count) < 0) {
		/* Nothing pending (non-blocking): fine. */
	}
	pthread_mutex_lock(&s->lock);
	while (n < cap && s->ev_count > 0) {
		out[n++] = s->events[s->ev_head];
		s->ev_head = (s->ev_head + 1) % SUPERVISOR_EVENTS_MAX;
		s->ev_count--;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t
supervisor_live(struct supervisor *s)
{
	size_t i, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		n += s->slots[i]->status.state != STATE_ENDED;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static struct docker *
open_docker(const struct supervisor *s, struct al_err *err)
{
	char sock[108];

	if (preflight_endpoint(s->o.docker_host, sock, sizeof sock, err) < 0)
		return NULL;
	return docker_open(sock, DOCKER_TIMEOUT_MS, err);
}

static int
reap(struct supervisor *s, struct reap_report *out, struct al_err *err)
{
	struct reap_report scratch;
	struct docker *d = open_docker(s, err);
	int rc;

	if (!d)
		return -1;
	rc = reaper_run(d, out ? out : &scratch, err);
	docker_close(d);
	return rc;
}

int
supervisor_open(const struct supervisor_options *o, struct supervisor **out,
		struct reap_report *reaped, struct al_err *err)
{
	struct supervisor *s;

	*out = NULL;
	if (!o->audit)
		return al_fail(err, "supervisor: an audit log is required");
	s = calloc(1, sizeof *s);
	if (!s)
		return al_fail(err, "supervisor: out of memory");
	s->o = *o;
	pthread_mutex_init(&s->lock, NULL);
	sem_init(&s->launch_slots, 0, SUPERVISOR_LAUNCH_PARALLEL);
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake < 0) {
		supervisor_close(s);
		return al_fail(err, "supervisor: cannot create the wake descriptor");
	}
	if (o->reap_at_start && reap(s, reaped, err) < 0) {
		supervisor_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

static void
join_all(struct supervisor *s)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++) {
		if (s->slots[i]->joined)
			continue;
		pthread_join(s->slots[i]->thread, NULL);
		s->slots[i]->joined = true;
	}
}

/* Containers this process still owns, by label. */
static int
owned_left(struct supervisor *s)
{
	char label[64];
	struct al_err err;
	struct docker *d = open_docker(s, &err);
	json_t *list = NULL;
	int n;

	if (!d)
		return -1;
	snprintf(label, sizeof label, "%s=%ld", LABEL_OWNER_PID, (long)getpid());
	n = docker_list_by_label(d, label, &list, &err) < 0 ? -1 : (int)json_array_size(list);
	json_decref(list);
	docker_close(d);
	return n;
}

int
supervisor_shutdown(struct supervisor *s)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_slots; i++)
		atomic_store(&s->slots[i]->stop, true);
	pthread_mutex_unlock(&s->lock);
	join_all(s);
	return owned_left(s);
}

void
supervisor_close(struct supervisor *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_slots; i++)
		atomic_store(&s->slots[i]->stop, true);
	join_all(s);
	for (i = 0; i < s->n_slots; i++) {
		gate_destroy(&s->slots[i]->gate);
		free(s->slots[i]);
	}
	if (s->wake >= 0)
		close(s->wake);
	pthread_mutex_destroy(&s->lock);
	sem_destroy(&s->launch_slots);
	free(s);
}
