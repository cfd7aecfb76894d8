#include "complete.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

#define PATH_CANDS_MAX	512	/* entries of one directory looked at */
#define PATH_WORD_MAX	256

size_t
complete_path(char *line, size_t cap)
{
	char dir[PATH_WORD_MAX], (*words)[PATH_WORD_MAX];
	const char *cands[PATH_CANDS_MAX], *word, *slash, *base;
	size_t at, n = 0, hits, len;
	struct dirent *e;
	DIR *d;

	complete_words(line, NULL, 0, &at);
	word = line + at;
	slash = strrchr(word, '/');
	base = slash ? slash + 1 : word;
	if (strlen(word) >= sizeof dir)
		return 0;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - word + 1) : 0, word);
	if (!(d = opendir(dir[0] ? dir : ".")))
		return 0;
	words = malloc(sizeof *words * PATH_CANDS_MAX);
	while (words && n < PATH_CANDS_MAX && (e = readdir(d))) {
		struct stat st;
		char full[PATH_WORD_MAX * 2];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (e->d_name[0] == '.' && base[0] != '.') ||
		    strncmp(e->d_name, base, strlen(base)) != 0)
			continue;
		snprintf(full, sizeof full, "%s%s", dir[0] ? dir : "./", e->d_name);
		if (snprintf(words[n], sizeof words[n], "%s%s%s", dir, e->d_name,
			     stat(full, &st) == 0 && S_ISDIR(st.st_mode) ? "/" : "")
		    >= (int)sizeof words[n])
			continue;
		cands[n] = words[n];
		n++;
	}
	closedir(d);
	hits = words ? complete_last(line, cap, cands, n) : 0;
	free(words);
	len = strlen(line);
	/* A directory takes the next name: no blank after its slash. */
	if (hits == 1 && len >= 2 && line[len - 1] == ' ' && line[len - 2] == '/')
		line[len - 1] = '\0';
	return hits;
}
