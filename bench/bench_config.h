/*
 * A benchmark's airlock config from JSON text it wrote itself; a bench
 * that cannot load its own config has nothing to measure, so it exits.
 */
#ifndef AIRLOCK_BENCH_CONFIG_H
#define AIRLOCK_BENCH_CONFIG_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"

static inline void
bench_config(struct airlock_config *c, const char *text)
{
	struct al_err err = { 0 };
	json_t *root = json_loads(text, 0, NULL);

	config_init(c);
	if (!root || config_load_json(c, root, 2, &err) < 0) {
		fprintf(stderr, "bench: config: %s\n", err.msg);
		exit(1);
	}
	json_decref(root);
}

#endif
