#include "verb_grant.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "grant.h"

/* One term's value, its flag already matched: 0, or -1 with why. */
static int
term(const char *flag, const char *value, int64_t *out, char *why, size_t cap)
{
	bool dur = strcmp(flag, "--for") == 0;

	if (*out) {
		snprintf(why, cap, "%s given twice", flag);
		return -1;
	}
	if (value && (dur ? grant_duration_parse(value, out) : grant_calls_parse(value, out)) == 0)
		return 0;
	*out = 0;
	if (dur)	/* ctl's words (cmd/cmd_ctl.c, grant_terms) */
		snprintf(why, cap, "--for wants 90s, 15m or 2h: %d s to %d h", GRANT_FOR_MIN_S,
			 GRANT_FOR_MAX_S / 3600);
	else
		snprintf(why, cap, "--calls wants a number from 1 to %d", GRANT_CALLS_MAX);
	return -1;
}

int
verb_grant_words(char **words, size_t *n, struct link_grant *g, char *why, size_t cap)
{
	size_t i, kept = 0;

	*g = (struct link_grant){ 0 };
	for (i = 0; i < *n; i++) {
		bool dur = strcmp(words[i], "--for") == 0;

		if (strcmp(words[i], "--flow") == 0) {	/* a flag: the TOOL word is the flow */
			g->flow = true;
			continue;
		}
		if (!dur && strcmp(words[i], "--calls") != 0) {
			words[kept++] = words[i];
			continue;
		}
		if (term(words[i], i + 1 < *n ? words[i + 1] : NULL, dur ? &g->for_s : &g->calls,
			 why, cap) < 0)
			return -1;
		i++;
	}
	*n = kept;
	return 0;
}
