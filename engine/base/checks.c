#include "checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
check_list_init(struct check_list *l)
{
	memset(l, 0, sizeof *l);
}

void
check_list_free(struct check_list *l)
{
	free(l->items);
	check_list_init(l);
}

static struct check_item *
check_slot(struct check_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct check_item *items = realloc(l->items, cap * sizeof *items);

		if (!items) {
			l->oom = true;
			return NULL;
		}
		l->items = items;
		l->cap = cap;
	}
	return &l->items[l->n++];
}

void
check_add(struct check_list *l, const char *id, bool pass,
	  const char *expected, const char *observed)
{
	struct check_item *it = check_slot(l);

	if (!it)
		return;
	snprintf(it->id, sizeof it->id, "%s", id);
	snprintf(it->expected, sizeof it->expected, "%s", expected ? expected : "");
	snprintf(it->observed, sizeof it->observed, "%s", observed ? observed : "");
	it->pass = pass;
	it->run = true;
}

void
check_add_not_run(struct check_list *l, const char *id, const char *expected)
{
	struct check_item *it = check_slot(l);

	if (!it)
		return;
	snprintf(it->id, sizeof it->id, "%s", id);
	snprintf(it->expected, sizeof it->expected, "%s", expected ? expected : "");
	it->observed[0] = '\0';
	it->pass = false;
	it->run = false;
}

void
check_addf(struct check_list *l, const char *id, bool pass,
	   const char *expected, const char *observed_fmt, ...)
{
	char observed[CHECK_VALUE_MAX];
	va_list ap;

	va_start(ap, observed_fmt);
	vsnprintf(observed, sizeof observed, observed_fmt, ap);
	va_end(ap);
	check_add(l, id, pass, expected, observed);
}

size_t
check_list_failures(const struct check_list *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += !l->items[i].pass;
	return n;
}

bool
check_list_passed(const struct check_list *l)
{
	return !l->oom && l->n > 0 && check_list_failures(l) == 0;
}

const struct check_item *
check_list_first_failure(const struct check_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!l->items[i].pass)
			return &l->items[i];
	return NULL;
}

const struct check_item *
check_list_find(const struct check_list *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i].id, id) == 0)
			return &l->items[i];
	return NULL;
}

json_t *
check_list_to_json(const struct check_list *l, const char *fail_word)
{
	json_t *arr = json_array();
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < l->n; i++) {
		const struct check_item *it = &l->items[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "check", it->id,
				      "expected", it->expected,
				      "observed", it->observed,
				      "verdict", !it->run ? "not_run" : it->pass ? "pass" : fail_word);

		if (!o || json_array_append_new(arr, o) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
