/* A config read on the caller's side and made ready to send (config_inline.h). */
#include "config_inline.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
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
config_payload_read(const char *path, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	enum bytes_read r;
	char *buf = NULL;
	json_t *v = NULL;
	struct stat st;
	size_t n = 0;

	*why = fd < 0 ? (errno == EACCES ? CONFIG_PAYLOAD_EACCES
					 : errno == ENOENT ? "no such file" : "cannot be opened")
	     : fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
	if (!*why) {
		r = bytes_read_fd(fd, CONFIG_PAYLOAD_MAX, &buf, &n);
		*why = r == BYTES_READ_NOMEM ? "out of memory" : r == BYTES_READ_ERROR ?
		       "cannot be read" : r == BYTES_READ_TOO_LARGE ? "larger than 1 MiB" :
		       !(v = json_loadb(buf, n, JSON_REJECT_DUPLICATES, NULL)) ? "not valid JSON" : NULL;
	}
	if (buf)
		explicit_bzero(buf, n);
	free(buf);
	if (fd >= 0)
		close(fd);
	return v;
}

int
config_inline_payload(json_t *root, struct al_err *err)
{
	json_t *initial = json_object_get(root, "initial"), *payload;
	const char *path = json_string_value(json_object_get(initial, "file")), *why;

	if (!path)
		return 0;	/* none, or not a string: the engine refuses it */
	if (!(payload = config_payload_read(path, &why)))
		return al_fail(err, "initial.file %.200s: %s", path,
			       strcmp(why, CONFIG_PAYLOAD_EACCES) == 0 ?
			       CONFIG_INLINE_PAYLOAD_UNREADABLE : why);
	if (json_object_set_new(initial, "payload", payload) < 0 ||
	    json_object_del(initial, "file") < 0)
		return al_fail(err, "out of memory");
	return 0;
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
	else if (config_inline_paths(root, dirname(real), err) == 0 &&
		 (geteuid() == 0 || config_inline_payload(root, err) == 0))
		return root;
	json_decref(root);
	return NULL;
}
