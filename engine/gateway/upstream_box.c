#include "upstream_box.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "docker.h"
#include "upstream_relay.h"
#include "watchdog.h"

struct upstream_box {
	const char *name;		/* the config's, borrowed */
	char socket[DOCKER_SOCKET_MAX];
	struct docker *d;
	struct container *box;
	struct lease *lease;
	struct upstream_relay *relay;
	struct profile profile;		/* the session's, for this upstream */
};

/* Every entry of src, in order; the copy is set. */
static int
argv_copy(struct strv *dst, const struct strv *src)
{
	size_t i;

	strv_free(dst);
	for (i = 0; i < src->n; i++)
		if (strv_push(dst, src->v[i]) < 0)
			return -1;
	dst->set = true;
	return 0;
}

/*
 * The session's profile (runtime, user, limits, tmpfs) with the upstream's
 * image, its argv as the Entrypoint (so the image's Cmd is dropped), its
 * env as the allowlist; no sealed paths and no shim: those judge the
 * agent's image.
 */
static int
box_profile(struct profile *p, const struct profile *session, const struct upstream_config *u)
{
	if (profile_copy(p, session) < 0)
		return -1;
	snprintf(p->image, sizeof p->image, "%s", u->image);
	strv_free(&p->cmd);
	strv_free(&p->sealed);
	p->shim_required = false;
	p->shim_sha256[0] = '\0';
	if (argv_copy(&p->entrypoint, &u->argv) < 0 || argv_copy(&p->env, &u->env) < 0)
		return -1;
	return 0;
}

/* The pulse thread: the watchdog is lost, so the engine stops the container itself. */
static void
on_lease_fail(void *ctx, const char *reason)
{
	struct upstream_box *b = ctx;
	struct docker *d;
	struct al_err err;

	(void)reason;
	d = docker_open(b->socket, DOCKER_TIMEOUT_MS, &err);
	if (d && docker_stop(d, container_id(b->box), 0, &err) < 0)
		docker_kill(d, container_id(b->box), "KILL", &err);
	docker_close(d);
}

static void
box_report(struct upstream_box *b, int phase, upstream_report_fn report, void *ctx)
{
	const struct check_list *l = container_report(b->box, phase);

	if (report && l->n > 0)
		report(ctx, b->name, container_id(b->box), phase == 1 ? "first" : "second", l);
}

/* Create with the profile, then the first admission: nothing has started. */
static int
box_create(struct upstream_box *b, const struct upstream_host *h, upstream_report_fn report,
	   void *ctx, struct al_err *err)
{
	struct owner_labels who;
	int rc;

	b->d = docker_open(b->socket, DOCKER_TIMEOUT_MS, err);
	if (!b->d || owner_labels_self(&who, h->session_id, err) < 0)
		return -1;
	snprintf(who.upstream, sizeof who.upstream, "%s", b->name);
	b->box = container_new(b->d, b->socket);
	if (!b->box)
		return al_fail(err, "out of memory");
	if (container_create(b->box, &b->profile, &who, err) < 0)
		return -1;
	rc = container_admit_first(b->box, &b->profile, h->facts, err);
	box_report(b, 1, report, ctx);
	return rc;
}

/* As the agent's: the lease before the start, ready before the second look. */
static int
box_run(struct upstream_box *b, const struct upstream_host *h, upstream_report_fn report,
	void *ctx, struct al_err *err)
{
	int rc;

	if (lease_spawn(h->watchdog_exe, b->socket, container_id(b->box), on_lease_fail, b,
			&b->lease, err) < 0)
		return -1;
	if (container_attach_start(b->box, err) < 0 || lease_wait_ready(b->lease, err) < 0)
		return -1;
	rc = container_readmit(b->box, &b->profile, h->facts, err);
	box_report(b, 2, report, ctx);
	return rc;
}

int
upstream_box_start(const struct upstream_host *h, const struct upstream_config *u,
		   upstream_report_fn report, void *ctx, struct upstream_box **out,
		   int fds[3], struct al_err *err)
{
	struct upstream_box *b;

	*out = NULL;
	fds[0] = fds[1] = fds[2] = -1;
	if (!h || !h->socket || !h->socket[0] || !h->profile || !h->facts)
		return al_fail(err, "upstream %s: isolation container needs the session's"
			       " Docker daemon", u->name);
	b = calloc(1, sizeof *b);
	if (!b)
		return al_fail(err, "upstream %s: out of memory", u->name);
	b->name = u->name;
	snprintf(b->socket, sizeof b->socket, "%s", h->socket);
	if (box_profile(&b->profile, h->profile, u) < 0) {
		al_fail(err, "out of memory");
	} else if (box_create(b, h, report, ctx, err) == 0 && box_run(b, h, report, ctx, err) == 0 &&
		   upstream_relay_start(container_stream(b->box), &b->relay, fds, err) == 0) {
		*out = b;
		return 0;
	}
	al_wrap(err, "upstream %s: container", u->name);
	upstream_box_stop(b, NULL);
	return -1;
}

const char *
upstream_box_id(const struct upstream_box *b)
{
	return container_id(b->box);
}

const struct profile *
upstream_box_profile(const struct upstream_box *b)
{
	return &b->profile;
}

/* Seen gone, the watchdog need not ask the daemon; else EOF: it stops it (again). */
static void
box_release_lease(struct upstream_box *b)
{
	if (!b->lease)
		return;
	if (container_is(b->box, CONTAINER_REMOVED))
		lease_done(b->lease);
	else
		lease_close(b->lease);
	b->lease = NULL;
}

int
upstream_box_stop(struct upstream_box *b, struct al_err *err)
{
	struct al_err ignored;
	int rc = 0;

	if (!b)
		return 0;
	upstream_relay_stop(b->relay);	/* the stream is the container's: the relay goes first */
	b->relay = NULL;
	if (container_is(b->box, CONTAINER_CREATED) &&
	    container_cleanup(b->box, err ? err : &ignored) < 0)
		rc = -1;
	box_release_lease(b);
	container_free(b->box);
	docker_close(b->d);
	profile_free(&b->profile);
	free(b);
	return rc;
}
