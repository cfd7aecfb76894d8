#ifndef AIRLOCK_VERB_GRANT_H
#define AIRLOCK_VERB_GRANT_H

/*
 * A ':' line's grant terms (`:restore TOOL [SCOPE] --for 15m --calls 2`),
 * pure: read with grant.h's parsers, the same bounds and the same words
 * as `airlock ctl restore`, so a unit test drives it without a console.
 */

#include <stddef.h>

#include "link.h"

/*
 * Takes --for DURATION and --calls N out of words[0 .. *n-1] (the rest
 * keep their order; *n shrinks) into *g (zeros for a term not given):
 * 0, or -1 with why (fixed text) for a value missing, out of bounds or
 * given twice.
 */
int verb_grant_words(char **words, size_t *n, struct link_grant *g, char *why, size_t cap);

#endif
