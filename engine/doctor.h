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
#include "docker.h"

struct doctor_report {
	struct check_list checks;
	struct host_facts facts;
	char socket[DOCKER_SOCKET_MAX];	/* the resolved endpoint; empty when refused */
};

/*
 * docker_host: the DOCKER_HOST value (NULL for the default socket).
 * runtime: the runtime sessions will ask for ("runc" or "runsc").
 * Returns true when every check passed. Free with doctor_report_free.
 */
bool doctor_run(const char *docker_host, const char *runtime, struct doctor_report *r);
void doctor_report_free(struct doctor_report *r);

#endif
