#ifndef AIRLOCK_JPATH_H
#define AIRLOCK_JPATH_H

/*
 * Values out of a hostile JSON document by a dotted path ("HostConfig.Memory"),
 * for the admission checks. Every lookup goes through jpath_get() and the
 * typed accessors built on it, so a missing key, a parent of the wrong type
 * or a NULL document all end in a refused verdict with observed "missing" or
 * "wrong type", never in a crash. Path segments are cut at 63 bytes.
 */

#include <stdbool.h>

#include <jansson.h>

#include "verdict.h"

/* A string jansson holds may contain NUL; C comparisons would stop there. */
bool jpath_clean_string(const json_t *j);
/* The only string of a one-element array, or NULL. */
const char *jpath_single_string(const json_t *arr);

/*
 * root.a.b… by a dotted path. Returns NULL when the leaf is absent; *why is
 * set instead when a level above it is absent or not an object, since then
 * the leaf's absence proves nothing.
 */
const json_t *jpath_get(const json_t *root, const char *path, const char **why);

/* A key that must be present; its absence refuses v. */
const json_t *jpath_need(const json_t *root, const char *path, struct verdict *v);
/* A key Docker omits when empty (omitempty): absence reads as null. */
const json_t *jpath_optional(const json_t *root, const char *path, struct verdict *v);

/* A present value of the type, or v refused ("missing", "wrong type"). */
const char *jpath_need_str(const json_t *root, const char *path, struct verdict *v);
bool jpath_need_bool(const json_t *root, const char *path, struct verdict *v, bool *out);
bool jpath_need_int(const json_t *root, const char *path, struct verdict *v,
		    json_int_t *out);

#endif
