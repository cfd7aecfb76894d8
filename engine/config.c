#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
config_init(struct airlock_config *c)
{
	memset(c, 0, sizeof *c);
	profile_defaults(&c->profile);
}

void
config_free(struct airlock_config *c)
{
	profile_free(&c->profile);
}

int
config_load_json(struct airlock_config *c, const json_t *root, int host_cores,
		 struct al_err *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(root))
		return al_fail(err, "config: expected an object");
	json_object_foreach((json_t *)root, key, v) {
		if (strcmp(key, "profile") == 0) {
			if (profile_apply_json(&c->profile, v, host_cores, err) < 0)
				return -1;
		} else {
			return al_fail(err, "%.64s: unknown key", key);
		}
	}
	return 0;
}

/* Read at most CONFIG_MAX_BYTES; a larger file is refused, not truncated. */
static json_t *
load_bounded(const char *path, json_error_t *jerr, struct al_err *err)
{
	static const size_t cap = CONFIG_MAX_BYTES;
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;
	json_t *root = NULL;

	if (!f) {
		al_fail(err, "config %s: cannot open", path);
		return NULL;
	}
	buf = malloc(cap + 1);
	n = buf ? fread(buf, 1, cap + 1, f) : 0;
	fclose(f);
	if (!buf)
		al_fail(err, "config %s: out of memory", path);
	else if (n > cap)
		al_fail(err, "config %s: larger than %zu bytes", path, cap);
	else if (!(root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, jerr)))
		al_fail(err, "config %s: line %d column %d: %s", path,
			jerr->line, jerr->column, jerr->text);
	free(buf);
	return root;
}

int
config_load_file(struct airlock_config *c, const char *path, int host_cores,
		 struct al_err *err)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	root = load_bounded(path, &jerr, err);
	if (!root)
		return -1;
	rc = config_load_json(c, root, host_cores, err);
	json_decref(root);
	if (rc < 0)
		return al_wrap(err, "config %s", path);
	return 0;
}
