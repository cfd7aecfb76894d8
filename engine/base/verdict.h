#ifndef AIRLOCK_VERDICT_H
#define AIRLOCK_VERDICT_H

/*
 * What one admission check found: the expected and the observed text of
 * its report item, and whether it passed. A check states what it expects,
 * then lists its conditions in order; the first verdict given stands, so
 * the first failure is what the operator reads.
 */

#include <stdbool.h>

#include <jansson.h>

#include "snapshot.h"	/* CHECK_VALUE_MAX */

struct verdict {
	bool pass, decided;
	char expected[CHECK_VALUE_MAX];
	char observed[CHECK_VALUE_MAX];
};

/* Set the expected text; a later call replaces it. */
void verdict_expect(struct verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Decide v with the observed text, unless it is decided already. */
void verdict_observe(struct verdict *v, bool pass, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, observing j rendered compactly, all ASCII, truncated with "...". */
void verdict_observe_json(struct verdict *v, bool pass, const json_t *j);

/* An empty string would vanish from the report; show it as "". */
const char *verdict_shown(const char *s);

#endif
