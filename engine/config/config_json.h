#ifndef AIRLOCK_CONFIG_JSON_H
#define AIRLOCK_CONFIG_JSON_H

/*
 * An operator's JSON: a file read within a bound (a session's config, an
 * incident file, an installed upstream), and the typed reads every section
 * walker of a config makes (config.c, config_upstream.c). Each read that
 * fails says why at the member's JSON path ("upstreams.vault.argv[0]: …");
 * nothing here knows a section.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "config_limits.h"
#include "err.h"
#include "strv.h"

/*
 * An operator's JSON file of at most cap bytes: a regular file (a FIFO,
 * device or directory is refused without blocking on it), not truncated,
 * no duplicate keys. NULL with err set to the reason, without the path
 * ("cannot open: …", "not a regular file", "line L column C: …").
 */
json_t *config_read_json(const char *path, size_t cap, struct al_err *err);

/* obj is an object with no key outside keys (NULL-ended): a typo must not drop a setting. */
int config_only_keys(const json_t *obj, const char *const *keys, const char *path,
		     struct al_err *err);
/* A string without a NUL inside it. */
bool config_plain_string(const json_t *v);
/* A non-empty plain string that fits in cap bytes with its NUL, copied to dst. */
int config_get_name(const json_t *v, char *dst, size_t cap, const char *path,
		    struct al_err *err);
int config_get_int(const json_t *v, long long lo, long long hi, long long *out,
		   const char *path, struct al_err *err);
/* A number within its limit's range (config_limits.h). */
int config_get_limited(const json_t *x, enum config_limit_id id, long long *v,
		       const char *path, struct al_err *err);
/* path.key when present: true or false; absent leaves *out. */
int config_get_bool(const json_t *v, bool *out, const char *path, const char *key,
		    struct al_err *err);
/* An array of at most max plain strings, appended to dst (dst->set from here). */
int config_strings(struct strv *dst, const json_t *arr, size_t max, const char *path,
		   struct al_err *err);
/*
 * An absolute path, or one relative to base_dir (the config file's
 * directory; NULL: the working directory); NULL with err when out of
 * memory or relative where it may not be (absolute_only; what: the
 * member's JSON path).
 */
char *config_resolve_path(const char *base_dir, bool absolute_only, const char *p,
			  const char *what, struct al_err *err);

#endif
