#include "jpath.h"

#include <string.h>

bool
jpath_clean_string(const json_t *j)
{
	return json_is_string(j) && strlen(json_string_value(j)) == json_string_length(j);
}

const json_t *
jpath_get(const json_t *root, const char *path, const char **why)
{
	const json_t *j = root;
	char key[64];
	const char *dot;
	size_t n;

	*why = NULL;
	for (;;) {
		if (!json_is_object(j)) {
			*why = j ? "wrong type" : "missing";
			return NULL;
		}
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof key)
			n = sizeof key - 1;
		memcpy(key, path, n);
		key[n] = '\0';
		j = json_object_get(j, key);
		if (!dot)
			return j;
		path = dot + 1;
	}
}

const json_t *
jpath_need(const json_t *root, const char *path, struct verdict *v)
{
	const char *why;
	const json_t *j = jpath_get(root, path, &why);

	if (!j)
		verdict_observe(v, false, "%s", why ? why : "missing");
	return j;
}

const json_t *
jpath_optional(const json_t *root, const char *path, struct verdict *v)
{
	const char *why;
	const json_t *j = jpath_get(root, path, &why);

	if (why) {
		verdict_observe(v, false, "%s", why);
		return NULL;
	}
	return j ? j : json_null();
}

/* The value at path when is() accepts it; NULL with v refused otherwise. */
static const json_t *
need_typed(const json_t *root, const char *path, struct verdict *v,
	   bool (*is)(const json_t *j))
{
	const json_t *j = jpath_need(root, path, v);

	if (j && !is(j)) {
		verdict_observe(v, false, "wrong type");
		return NULL;
	}
	return j;
}

static bool
is_bool(const json_t *j)
{
	return json_is_boolean(j);
}

static bool
is_int(const json_t *j)
{
	return json_is_integer(j);
}

const char *
jpath_need_str(const json_t *root, const char *path, struct verdict *v)
{
	const json_t *j = need_typed(root, path, v, jpath_clean_string);

	return j ? json_string_value(j) : NULL;
}

bool
jpath_need_bool(const json_t *root, const char *path, struct verdict *v, bool *out)
{
	const json_t *j = need_typed(root, path, v, is_bool);

	if (j)
		*out = json_is_true(j);
	return j != NULL;
}

bool
jpath_need_int(const json_t *root, const char *path, struct verdict *v, json_int_t *out)
{
	const json_t *j = need_typed(root, path, v, is_int);

	if (j)
		*out = json_integer_value(j);
	return j != NULL;
}

const char *
jpath_single_string(const json_t *arr)
{
	const json_t *s = json_array_get(arr, 0);

	if (!json_is_array(arr) || json_array_size(arr) != 1 || !jpath_clean_string(s))
		return NULL;
	return json_string_value(s);
}
