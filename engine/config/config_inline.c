/* A config read on the caller's side and made ready to send (config_inline.h). */
#include "config_inline.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

/* v, a relative path, replaced by dir/v: 0, or -1 when out of memory. */
static int
absolute(json_t *v, const char *dir)
{
	const char *p = json_string_value(v);
	char *out;
	int rc;

	if (!p || p[0] == '/' || !p[0])
		return 0;
	if (asprintf(&out, "%s/%s", dir, p) < 0)
		return -1;
	rc = json_string_set(v, out);
	free(out);
	return rc;
}

static int
absolute_list(json_t *arr, const char *dir)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (absolute(v, dir) < 0)
			return -1;
	return 0;
}

int
config_inline_paths(json_t *root, const char *dir, struct al_err *err)
{
	json_t *u, *paths;
	const char *name;
	int rc = 0;

	json_object_foreach(json_object_get(root, "upstreams"), name, u) {
		paths = json_object_get(u, "paths");
		rc |= absolute(json_object_get(u, "cwd"), dir);
		rc |= absolute_list(json_object_get(paths, "rw"), dir);
		rc |= absolute_list(json_object_get(paths, "ro"), dir);
	}
	rc |= absolute(json_object_get(json_object_get(root, "initial"), "file"), dir);
	return rc < 0 ? al_fail(err, "out of memory") : 0;
}

json_t *
config_inline_file(const char *path, struct al_err *err)
{
	char real[PATH_MAX];
	json_t *root;

	if (access(path, R_OK) < 0 && errno == EACCES) {
		al_fail(err, "config %s: %s", path, CONFIG_INLINE_UNREADABLE);
		return NULL;
	}
	if (!(root = config_read_json(path, CONFIG_MAX_BYTES, err))) {
		al_wrap(err, "config %s", path);
		return NULL;
	}
	if (!json_is_object(root))
		al_fail(err, "config %s: not a JSON object", path);
	else if (!realpath(path, real))
		al_fail(err, "config %s: %s", path, strerror(errno));
	else if (config_inline_paths(root, dirname(real), err) == 0)
		return root;
	json_decref(root);
	return NULL;
}
