#ifndef AIRLOCK_CONFIG_H
#define AIRLOCK_CONFIG_H

/*
 * The operator's configuration file (JSON). Unknown keys, wrong types and
 * dangling references are refused with the JSON path of the fault; nothing
 * in it may loosen the hardened profile past its clamps.
 */

#include <jansson.h>

#include "err.h"
#include "profile.h"

#define CONFIG_MAX_BYTES (1 << 20)

struct airlock_config {
	struct profile profile;
};

void config_init(struct airlock_config *c);
void config_free(struct airlock_config *c);
int config_load_json(struct airlock_config *c, const json_t *root, int host_cores,
		     struct al_err *err);
int config_load_file(struct airlock_config *c, const char *path, int host_cores,
		     struct al_err *err);

#endif
