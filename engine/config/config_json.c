#include "config_json.h"
#include "canon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"

json_t *
config_read_json(const char *path, size_t cap, struct al_err *err)
{
	/* Non-blocking: a FIFO must not hold the caller (the console's) in open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	enum bytes_read r;
	json_error_t jerr;
	json_t *root = NULL;
	struct stat st;
	char *buf;
	size_t n;
	int read_errno;

	if (fd < 0) {
		al_fail(err, "cannot open: %s", strerror(errno));
		return NULL;
	}
	/* A directory opens, then reads as nothing: name it, not "empty". */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		al_fail(err, "not a regular file");
		return NULL;
	}
	r = bytes_read_fd(fd, cap, &buf, &n);
	read_errno = errno;
	close(fd);
	if (r == BYTES_READ_NOMEM)
		al_fail(err, "out of memory");
	else if (r == BYTES_READ_ERROR)
		al_fail(err, "cannot read: %s", strerror(read_errno));
	else if (r == BYTES_READ_TOO_LARGE)
		al_fail(err, "larger than %zu bytes", cap);
	else if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		al_fail(err, "starts with a UTF-8 byte order mark (BOM): save it without one");
	else if (!(root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &jerr)))
		al_fail(err, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	free(buf);
	return root;
}

static bool
known_key(const char *key, const char *const *keys)
{
	for (; *keys; keys++)
		if (strcmp(key, *keys) == 0)
			return true;
	return false;
}

/* Refuse keys outside the list: a typo must not silently drop a setting. */
int
config_only_keys(const json_t *obj, const char *const *keys, const char *path, struct al_err *err)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return al_fail(err, "%s: expected an object", path[0] ? path : "the top level");
	json_object_foreach((json_t *)obj, key, v)
		if (!known_key(key, keys))
			return al_fail(err, "%s%s%.64s: unknown key", path, path[0] ? "." : "", key);
	return 0;
}

bool
config_plain_string(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

int
config_get_name(const json_t *v, char *dst, size_t cap, const char *path, struct al_err *err)
{
	if (!config_plain_string(v) || json_string_length(v) == 0 || json_string_length(v) >= cap)
		return al_fail(err, "%s: expected a non-empty string of at most %zu bytes",
			       path, cap - 1);
	if (canon_has_control(json_string_value(v), json_string_length(v)))
		return al_fail(err, "%s: a name must hold no control character", path);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int
config_get_int(const json_t *v, long long lo, long long hi, long long *out,
	const char *path, struct al_err *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return al_fail(err, "%s: expected an integer in %lld..%lld", path, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

/*
 * An absolute path, or one relative to the config file's directory; NULL
 * with err when out of memory or relative where it may not be (what: the
 * member's JSON path).
 */
char *
config_resolve_path(const char *base_dir, bool absolute_only, const char *p, const char *what,
		    struct al_err *err)
{
	char *out = NULL;

	if (p[0] != '/' && absolute_only) {
		al_fail(err, "%s: expected an absolute path (ctl resolves a relative one against "
			"the config file's directory; an installed definition has none)", what);
		return NULL;
	}
	if (p[0] == '/' || !base_dir)
		out = strdup(p);
	else if (asprintf(&out, "%s/%s", base_dir, p) < 0)
		out = NULL;
	if (!out)
		al_fail(err, "%s: out of memory", what);
	return out;
}

/* A number within its limit's range (config_limits.h). */
int
config_get_limited(const json_t *x, enum config_limit_id id, long long *v, const char *path,
	    struct al_err *err)
{
	const struct config_limit *l = config_limit(id);

	return config_get_int(x, l->min == CONFIG_LIMIT_NONE ? 0 : l->min, l->max, v, path, err);
}

int
config_strings(struct strv *dst, const json_t *arr, size_t max, const char *path,
	      struct al_err *err)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr) || json_array_size(arr) > max)
		return al_fail(err, "%s: expected an array of at most %zu strings", path, max);
	dst->set = true;
	json_array_foreach(arr, i, v) {
		if (!config_plain_string(v))
			return al_fail(err, "%s[%zu]: expected a string", path, i);
		if (strv_push(dst, json_string_value(v)) < 0)
			return al_fail(err, "%s: out of memory", path);
	}
	return 0;
}

int
config_get_bool(const json_t *v, bool *out, const char *path, const char *key, struct al_err *err)
{
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return al_fail(err, "%s.%s: expected true or false", path, key);
	*out = json_is_true(v);
	return 0;
}

