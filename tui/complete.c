#include "complete.h"

#include <string.h>

size_t
complete_words(const char *line, char words[][64], size_t max, size_t *last_at)
{
	size_t n = 0, i = 0, len = strlen(line), start;

	for (;;) {
		while (i < len && line[i] == ' ')
			i++;
		start = i;
		while (i < len && line[i] != ' ')
			i++;
		if (i == len) {		/* the last word (maybe empty): not counted */
			*last_at = start;
			return n;
		}
		if (n < max) {
			size_t w = i - start < 63 ? i - start : 63;

			memcpy(words[n], line + start, w);
			words[n][w] = '\0';
		}
		n++;
	}
}

size_t
complete_last(char *line, size_t cap, const char *const *cands, size_t n)
{
	size_t at, typed, i, hits = 0, common = 0, len;
	const char *first = NULL;
	bool one = true;	/* every match is the same word (one listed twice) */

	complete_words(line, NULL, 0, &at);
	typed = strlen(line) - at;
	for (i = 0; i < n; i++) {
		size_t k = typed;

		if (strncmp(cands[i], line + at, typed) != 0)
			continue;
		if (!first) {
			first = cands[i];
			common = strlen(first);
		}
		one = one && strcmp(cands[i], first) == 0;
		while (k < common && cands[i][k] == first[k])
			k++;
		common = k;
		hits++;
	}
	if (!hits || at + common + 2 > cap)
		return hits;
	memcpy(line + at + typed, first + typed, common - typed);
	len = at + common;
	if (one)
		line[len++] = ' ';
	line[len] = '\0';
	return one ? 1 : hits;
}
