#ifndef AIRLOCK_STRV_H
#define AIRLOCK_STRV_H

/*
 * An owned list of strings: an argv, or an env of "NAME=value" entries.
 * `set` tells "configured, possibly empty" from "not configured" (then the
 * image's own value applies).
 */

#include <stdbool.h>
#include <stddef.h>

struct strv {
	char **v;
	size_t n;
	bool set;
};

/* Free every string and the list; leaves an empty, unset list. */
void strv_free(struct strv *s);

/* Append a copy of str and mark the list set; -1 when out of memory. */
int strv_push(struct strv *s, const char *str);

#endif
