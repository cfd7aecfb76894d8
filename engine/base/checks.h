#ifndef AIRLOCK_CHECKS_H
#define AIRLOCK_CHECKS_H

/*
 * An itemised list of checks: what was expected, what was observed, and the
 * verdict. Admission reports and doctor results share this shape so the
 * console, `airlock inspect`, `airlock doctor` and the audit log render one
 * thing. Values are configuration and host facts, never payload.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "snapshot.h"	/* struct check_item */

struct check_list {
	struct check_item *items;
	size_t n, cap;
	bool oom;	/* an append failed: the list is incomplete, treat as refused */
};

void check_list_init(struct check_list *l);
void check_list_free(struct check_list *l);

/* Append one item; values are truncated to fit. */
void check_add(struct check_list *l, const char *id, bool pass,
	       const char *expected, const char *observed);
void check_addf(struct check_list *l, const char *id, bool pass,
		const char *expected, const char *observed_fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Append one item listed but not run (it counts as not passed). */
void check_add_not_run(struct check_list *l, const char *id, const char *expected);

/* True when every item passed and nothing was lost. */
bool check_list_passed(const struct check_list *l);
size_t check_list_failures(const struct check_list *l);
/* The first failing item, or NULL. */
const struct check_item *check_list_first_failure(const struct check_list *l);
const struct check_item *check_list_find(const struct check_list *l, const char *id);

/* [{"check":…,"expected":…,"observed":…,"verdict":"pass"|fail_word|"not_run"}] */
json_t *check_list_to_json(const struct check_list *l, const char *fail_word);

#endif
