#ifndef AIRLOCK_DOCTOR_H
#define AIRLOCK_DOCTOR_H

/*
 * Every host and daemon check a session depends on, in one list: what
 * `airlock doctor` prints, what the console's host view shows, and what a
 * session runs before it creates anything.
 */

#include <stdbool.h>
#include <stddef.h>

#include "admission.h"
#include "checks.h"
#include "config.h"
#include "docker.h"

struct doctor_report {
	struct check_list checks;
	struct host_facts facts;
	char socket[DOCKER_SOCKET_MAX];	/* the resolved endpoint; empty when refused */
	/* doctor_confine with a config: each upstream as this host would confine it. */
	size_t n_upstreams;
	struct upstream_view upstreams[SNAP_UPSTREAMS_MAX];
};

/*
 * docker_host: the DOCKER_HOST value (NULL for the default socket).
 * runtime: the runtime sessions will ask for ("runc" or "runsc").
 * Returns true when every check passed. Free with doctor_report_free.
 */
bool doctor_run(const char *docker_host, const char *runtime, struct doctor_report *r);
/*
 * doctor_run in two halves, for a caller that overlaps the daemon's round
 * trips with other work: the local checks and the endpoint (false when the
 * endpoint is refused: then there is no daemon to ask), then the daemon's
 * checks on r->socket (its own connection; r is not read meanwhile).
 */
bool doctor_run_local(const char *docker_host, struct doctor_report *r);
void doctor_run_daemon(struct doctor_report *r, const char *runtime);
/*
 * Check runsc_threads (runsc only; engine/host/doctor_probe.c): one short probe
 * container under runsc with airlock's seccomp profile, whose clone3 must
 * answer ENOSYS. Cached per runsc binary and profile. Run by `airlock
 * doctor`, never by a session's own preflight.
 */
void doctor_probe_clone3(struct doctor_report *r, const char *runtime);
/*
 * The upstreams' confinement on this host (engine/host/doctor_confine.c).
 * doctor_confine_host: checks landlock (enough for c's upstreams, or for
 * any when c is NULL), upstream_seccomp, upstream_user and parser (the
 * airlock-parser beside exe; NULL: this program).
 * doctor_confine_upstreams: one confine.<name> per upstream of c, prepared
 * as its spawn would be (mcp_confine_prepare: its user, ruleset and filter;
 * nothing started), and its view in r->upstreams (only its plan when it
 * cannot be prepared).
 */
void doctor_confine_host(struct doctor_report *r, const struct airlock_config *c,
			 const char *exe);
void doctor_confine_upstreams(struct doctor_report *r, const struct airlock_config *c);
/*
 * The installed upstreams (engine/host/doctor_confine.c): one
 * installed.<key> per KEY.json in dir (NULL: UPSTREAM_CATALOG_DIR), loaded
 * as a start from a peer that is not root loads it (its definition, the
 * directories above, what it runs: upstream_catalog.h). None when dir is
 * absent: nothing is installed.
 */
void doctor_installed(struct doctor_report *r, const char *dir);
void doctor_report_free(struct doctor_report *r);

#endif
