#ifndef AIRLOCK_CONFIG_CHECK_H
#define AIRLOCK_CONFIG_CHECK_H

/*
 * What a loaded session config needs from this host, checked before any
 * session starts and before any data flows: the image is on the daemon
 * (GET /images/{id}/json answers with that Id), and every catalog tool's
 * remote name is in its upstream's first tools/list. `airlock run` and the
 * console refuse a config whose image is missing; `airlock doctor
 * --config` runs both and lists them as checks ("image", "catalog.<tool>").
 * Messages name the config key and the configured value, never payload.
 */

#include "checks.h"
#include "config.h"
#include "docker.h"
#include "err.h"

/* 0, or -1: "profile.image: sha256:… is not on this host" (or the daemon's error). */
int config_check_image(struct docker *d, const struct profile *p, struct al_err *err);

/*
 * Connect through docker_host (DOCKER_HOST; NULL: the default) and check
 * the image: 0, -1 as above, or -2 when the daemon could not be asked (a
 * refused endpoint, no answer): then the session's own preflight reports it.
 */
int config_check_image_at(const char *docker_host, const struct profile *p, struct al_err *err);

/*
 * Start each upstream a tool names (initialize + tools/list, no call),
 * add "catalog.<tool>" per catalog tool, stop it. An upstream that
 * cannot start fails each of its tools.
 */
void config_check_catalog(const struct airlock_config *c, struct check_list *l);

#endif
