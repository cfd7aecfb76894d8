/*
 * Starts whose config is read off the loop (control_server_int.h). Reading
 * a config can take long: an installed upstream's code is walked at every
 * start, 10 ms for an npm tree and about 0.4 s at the walk's cap. Each
 * start waits in a queue (CONTROL_STARTS_MAX) for one of a few threads
 * (CONTROL_START_THREADS) that only reads and checks its config into
 * memory of its own, then says so on an eventfd; the loop starts the
 * session, audits and answers (control_ops.c), in the order the starts
 * came. The threads touch nothing else: not the supervisor, not a client.
 */
#include "control_server_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "thread.h"

static void *
start_read(void *arg)
{
	struct start_job *j = arg;
	struct airlock_config *cfg = &j->o->cfg;

	j->rc = j->config ? config_load_json(cfg, j->config, config_host_cores(), &j->err)
			  : config_load_file(cfg, j->req.path, config_host_cores(), &j->err);
	pthread_mutex_lock(&j->cs->starts_lock);
	j->done = true;
	pthread_mutex_unlock(&j->cs->starts_lock);
	(void)eventfd_write(j->cs->starts_wake, 1);	/* a wake; the loop also looks each round */
	return NULL;
}

int
cs_starts_open(struct control_server *cs, struct al_err *err)
{
	cs->starts_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cs->starts_wake < 0)
		return al_fail(err, "control: eventfd: %s", strerror(errno));
	if (pthread_mutex_init(&cs->starts_lock, NULL) != 0) {
		close(cs->starts_wake);
		cs->starts_wake = -1;
		return al_fail(err, "control: cannot make a lock");
	}
	return 0;
}

/* Its config, its owned slot back (nothing started from it), and itself. */
static void
job_free(struct control_server *cs, struct start_job *j)
{
	if (j->o && cs->owned[j->slot] == j->o) {
		config_free(&j->o->cfg);
		free(j->o);
		cs->owned[j->slot] = NULL;
	}
	json_decref(j->config);
	free(j);
}

/* A free owned slot, or OWNED_MAX. */
static size_t
owned_free(const struct control_server *cs)
{
	size_t i;

	for (i = 0; i < OWNED_MAX && cs->owned[i]; i++)
		;
	return i;
}

/* Under nothing (the loop): the job's thread started, or it is done, refused. */
static void
launch_one(struct control_server *cs, struct start_job *j)
{
	j->running = thread_start(&j->thread, NULL, start_read, j) == 0;
	if (j->running)
		return;
	j->rc = al_fail(&j->err, "cannot start a thread to read the config");
	pthread_mutex_lock(&cs->starts_lock);
	j->done = true;
	pthread_mutex_unlock(&cs->starts_lock);
	(void)eventfd_write(cs->starts_wake, 1);
}

/* The oldest waiting starts get a thread each, CONTROL_START_THREADS at most. */
static void
launch(struct control_server *cs)
{
	struct start_job *next;
	size_t k, running;

	for (;;) {
		next = NULL;
		running = 0;
		for (k = 0; k < CONTROL_STARTS_MAX; k++) {
			struct start_job *j = cs->starts[k];

			if (j && j->running)
				running++;
			else if (j && !j->done && (!next || j->seq < next->seq))
				next = j;
		}
		if (!next || running >= CONTROL_START_THREADS)
			return;
		launch_one(cs, next);
	}
}

int
cs_start_begin(struct control_server *cs, const struct client *c, const struct control_request *r,
	       bool installed_only, struct al_err *err)
{
	struct start_job *j;
	size_t k;

	for (k = 0; k < CONTROL_STARTS_MAX && cs->starts[k]; k++)
		;
	if (k == CONTROL_STARTS_MAX)
		return al_fail(err, "%d starts wait already", CONTROL_STARTS_MAX);
	if (!(j = calloc(1, sizeof *j)))
		return al_fail(err, "out of memory");
	j->cs = cs;
	j->seq = ++cs->starts_seq;
	j->slot = owned_free(cs);
	if (j->slot == OWNED_MAX) {
		free(j);
		return al_fail(err, "too many inline configs held");
	}
	j->who = (struct client){ .fd = -1, .serial = c->serial, .pid = c->pid, .uid = c->uid,
				  .role = c->role };
	memcpy(j->who.user, c->user, sizeof j->who.user);
	memcpy(j->who.via, c->via, sizeof j->who.via);
	j->req = *r;
	j->req.config = NULL;
	j->req.config_tree = NULL;
	j->req.config_tree_len = 0;
	if ((r->config && !(j->config = json_deep_copy(r->config))) ||
	    !(j->o = calloc(1, sizeof *j->o))) {
		job_free(cs, j);
		return al_fail(err, "out of memory");
	}
	config_init(&j->o->cfg);
	j->o->cfg.upstreams_dir = supervisor_upstreams_dir(cs->o.sup);
	j->o->cfg.installed_only = installed_only;
	j->o->cfg.absolute_only = r->config != NULL;	/* no file to be relative to: ctl resolved them */
	j->o->loading = true;
	cs->owned[j->slot] = j->o;
	cs->starts[k] = j;
	launch(cs);
	return 0;
}

/* In the order the starts came: the oldest, once it is done, off the list. */
struct start_job *
cs_start_next_done(struct control_server *cs)
{
	struct start_job *j = NULL;
	eventfd_t n;
	size_t k, at = 0;
	bool done;

	(void)eventfd_read(cs->starts_wake, &n);
	for (k = 0; k < CONTROL_STARTS_MAX; k++)
		if (cs->starts[k] && (!j || cs->starts[k]->seq < j->seq))
			j = cs->starts[at = k];
	if (!j)
		return NULL;
	pthread_mutex_lock(&cs->starts_lock);
	done = j->done;
	pthread_mutex_unlock(&cs->starts_lock);
	if (!done)
		return NULL;
	cs->starts[at] = NULL;
	if (j->running)
		pthread_join(j->thread, NULL);
	launch(cs);	/* its thread's place is free */
	return j;
}

void
cs_start_end(struct control_server *cs, struct start_job *j, const char *session)
{
	if (session) {	/* the supervisor borrows the config until the session is forgotten */
		snprintf(j->o->id, sizeof j->o->id, "%s", session);
		j->o->loading = false;
		j->o = NULL;
	}
	job_free(cs, j);
}

bool
cs_starts_busy(const struct control_server *cs)
{
	size_t k;

	for (k = 0; k < CONTROL_STARTS_MAX && cs->starts[k]; k++)
		;
	return k == CONTROL_STARTS_MAX;
}

bool
cs_starts_any(const struct control_server *cs)
{
	size_t k;

	for (k = 0; k < CONTROL_STARTS_MAX; k++)
		if (cs->starts[k])
			return true;
	return false;
}

bool
cs_start_waits_for(const struct control_server *cs, unsigned serial)
{
	size_t k;

	for (k = 0; k < CONTROL_STARTS_MAX; k++)
		if (cs->starts[k] && cs->starts[k]->who.serial == serial)
			return true;
	return false;
}

void
cs_starts_close(struct control_server *cs)
{
	size_t k;

	if (cs->starts_wake < 0)
		return;
	for (k = 0; k < CONTROL_STARTS_MAX; k++)
		if (cs->starts[k]) {
			if (cs->starts[k]->running)
				pthread_join(cs->starts[k]->thread, NULL);
			job_free(cs, cs->starts[k]);
			cs->starts[k] = NULL;
		}
	pthread_mutex_destroy(&cs->starts_lock);
	close(cs->starts_wake);
	cs->starts_wake = -1;
}
