/*
 * A pooled container's launch, wait and discard (engine/sandbox/warm.h). The
 * steps and their order are a session's (docs/architecture.md §2, steps
 * 1–3); only the second admission and everything after it wait for a claim.
 */

#include "warm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "doctor.h"
#include "parser.h"
#include "shim_image.h"

struct warm {
	char socket[DOCKER_SOCKET_MAX];
	char label[ID_MAX];
	struct host_facts facts;
	struct docker *docker;
	struct container *box;
	struct lease *lease;
	struct profile profile;		/* the options', with this engine's shim digest (MCP) */
	pthread_mutex_t mu;
	bool failed;			/* under mu: the lease failed */
	lease_fail_fn fwd;		/* under mu: the claiming session's handler */
	void *fwd_ctx;
	struct parser *parser;		/* its session's parser, started while pooled (or NULL) */
};

/* From the pulse thread: stop the container at once (its own connection). */
static void
on_fail(void *ctx, const char *reason)
{
	struct warm *w = ctx;
	lease_fail_fn fn;
	void *fctx;
	struct docker *d;
	struct al_err err;

	pthread_mutex_lock(&w->mu);
	w->failed = true;
	fn = w->fwd;
	fctx = w->fwd_ctx;
	pthread_mutex_unlock(&w->mu);
	if (fn) {
		fn(fctx, reason);
		return;
	}
	d = docker_open(w->socket, DOCKER_TIMEOUT_MS, &err);
	if (d && docker_stop(d, container_id(w->box), 0, &err) < 0)
		docker_kill(d, container_id(w->box), "KILL", &err);
	docker_close(d);
}

/* The session's preflight (docs/guarantees.md): the host, then the daemon. */
static int
preflight(struct warm *w, const struct warm_options *o, struct al_err *err)
{
	struct doctor_report pre = { 0 };
	const struct check_item *bad;
	bool ok = doctor_run_local(o->docker_host, &pre);

	if (ok)
		doctor_run_daemon(&pre, o->profile->runtime);
	ok = ok && pre.socket[0] && check_list_passed(&pre.checks);
	bad = check_list_first_failure(&pre.checks);
	if (ok) {
		memcpy(w->socket, pre.socket, sizeof w->socket);
		w->facts = pre.facts;
	} else {
		al_fail(err, "pool: preflight: %s", bad ? bad->id : "report");
	}
	doctor_report_free(&pre);
	return ok ? 0 : -1;
}

static int
create_admit(struct warm *w, const struct warm_options *o, struct al_err *err)
{
	struct owner_labels who;

	w->docker = docker_open(w->socket, DOCKER_TIMEOUT_MS, err);
	if (!w->docker || owner_labels_self(&who, o->label, err) < 0)
		return al_wrap(err, "pool: connect");
	if (!(w->box = container_new(w->docker, w->socket)))
		return al_fail(err, "pool: out of memory");
	if (container_create(w->box, &w->profile, &who, err) < 0)
		return al_wrap(err, "pool");
	if (container_admit_first(w->box, &w->profile, &w->facts, err) < 0)
		return al_wrap(err, "pool: first admission");
	return 0;
}

/*
 * Ready only once the lease has been acknowledged: a claim takes a
 * container whose watchdog answered within LEASE_ACK_MS (warm_lease_ok),
 * so one just armed, not pulsed yet, would be refused and thrown away.
 */
static int
first_ack(struct warm *w, struct al_err *err)
{
	int64_t end = clock_mono_ms() + LEASE_PULSE_MS + LEASE_ACK_MS;
	struct lease_status st;

	do {
		lease_get_status(w->lease, &st);
		if (st.failed)
			break;
		if (st.acks > 0)
			return 0;
		usleep(5 * 1000);
	} while (clock_mono_ms() < end);
	return al_fail(err, "pool: watchdog: no acknowledgement within %d ms",
		       LEASE_PULSE_MS + LEASE_ACK_MS);
}

/*
 * The watchdog before the start (their start-ups overlap), ready after it.
 * The process the start made is recorded at once, off the claim's path:
 * the claim's second admission refuses any other (one started since).
 */
static int
start_leased(struct warm *w, const struct warm_options *o, struct al_err *err)
{
	if (lease_spawn(o->watchdog_exe, w->socket, container_id(w->box), on_fail, w, &w->lease, err) < 0)
		return al_wrap(err, "pool: watchdog");
	if (container_attach_start(w->box, err) < 0 || container_record_start(w->box, err) < 0)
		return al_wrap(err, "pool");
	if (lease_wait_ready(w->lease, err) < 0)
		return al_wrap(err, "pool: watchdog");
	return first_ack(w, err);
}

int
warm_launch(const struct warm_options *o, struct warm **out, struct al_err *err)
{
	struct warm *w = calloc(1, sizeof *w);

	*out = NULL;
	if (!w)
		return al_fail(err, "pool: out of memory");
	pthread_mutex_init(&w->mu, NULL);
	snprintf(w->label, sizeof w->label, "%s", o->label);
	/* As a session does (engine/session/session.c): read now; unreadable stays "" and shim_digest refuses. */
	w->profile = *o->profile;
	if (w->profile.shim_required &&
	    shim_image_engine_digest(o->watchdog_exe, w->profile.shim_sha256, err) < 0)
		w->profile.shim_sha256[0] = '\0';
	if (preflight(w, o, err) < 0 || create_admit(w, o, err) < 0 ||
	    start_leased(w, o, err) < 0) {
		warm_discard(w);
		return -1;
	}
	/* Not a refusal when it fails: the claiming session starts its own and says why. */
	if (parser_start_beside(o->watchdog_exe, BOUND_FRAME_MAX, &w->parser, NULL) < 0)
		w->parser = NULL;
	*out = w;
	return 0;
}

struct parser *
warm_take_parser(struct warm *w)
{
	struct parser *p = w->parser;

	w->parser = NULL;
	return p;
}

bool
warm_lease_ok(struct warm *w)
{
	struct lease_status st;
	bool failed;

	pthread_mutex_lock(&w->mu);
	failed = w->failed;
	pthread_mutex_unlock(&w->mu);
	if (failed || !w->lease)
		return false;
	lease_get_status(w->lease, &st);
	return st.armed && !st.failed && st.acks > 0 &&
	       clock_mono_ms() - st.last_ack_mono_ms <= LEASE_ACK_MS;
}

const char *
warm_container_id(const struct warm *w)
{
	return container_id(w->box);
}

const char *
warm_label(const struct warm *w)
{
	return w->label;
}

void
warm_parts(struct warm *w, struct warm_parts *out)
{
	out->docker = w->docker;
	out->box = w->box;
	out->lease = w->lease;
	out->facts = &w->facts;
	out->socket = w->socket;
}

void
warm_forward(struct warm *w, lease_fail_fn fn, void *ctx)
{
	bool failed;

	pthread_mutex_lock(&w->mu);
	w->fwd = fn;
	w->fwd_ctx = ctx;
	failed = w->failed;
	pthread_mutex_unlock(&w->mu);
	if (fn && failed)
		fn(ctx, "failed while pooled");
}

void
warm_release(struct warm *w)
{
	if (!w)
		return;
	parser_stop(w->parser);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void
warm_discard(struct warm *w)
{
	struct al_err err;

	if (!w)
		return;
	warm_forward(w, NULL, NULL);
	if (w->box && container_is(w->box, CONTAINER_CREATED))
		container_cleanup(w->box, &err);
	/* Seen gone: the watchdog need not ask the daemon. Else EOF: it stops it. */
	if (container_is(w->box, CONTAINER_REMOVED))
		lease_done(w->lease);
	else
		lease_close(w->lease);
	container_free(w->box);
	docker_close(w->docker);
	warm_release(w);
}
