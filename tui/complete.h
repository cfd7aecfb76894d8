/*
 * Tab on the console's ':' line: the word being typed at the line's end,
 * completed as far as every candidate that starts with it agrees. Pure:
 * the console says which candidates the word's place takes.
 */
#ifndef AIRLOCK_COMPLETE_H
#define AIRLOCK_COMPLETE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The words before the last one, and where the last one starts. A line
 * that ends in a blank is about to begin a new word: *last_at is its end,
 * and the word is empty.
 */
size_t complete_words(const char *line, char words[][64], size_t max, size_t *last_at);

/*
 * Complete line's last word against cands (n of them): to the one match
 * and a blank after it, or to the longest prefix every match shares.
 * Returns how many matched; the line is left as it was when none did, or
 * when it does not fit in cap.
 */
size_t complete_last(char *line, size_t cap, const char *const *cands, size_t n);

/*
 * Complete line's last word as a path: against the entries of the
 * directory it names so far (hidden ones only when the name typed starts
 * with a dot). A directory is completed with its slash and no blank, so
 * the next name can follow. Returns how many entries matched.
 */
size_t complete_path(char *line, size_t cap);

#endif
