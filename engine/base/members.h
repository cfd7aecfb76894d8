#ifndef AIRLOCK_MEMBERS_H
#define AIRLOCK_MEMBERS_H

/*
 * A named JSON object with at most so many members: the shape of a config
 * file's upstreams, tools, aliases, env and tmpfs. One walker refuses the
 * wrong type or too many members ("<path>: expected an object of at most
 * <max> <noun>"), optionally a name outside 1..name_max bytes ("<path>:
 * <name_word> must be 1..<name_max> bytes"), and hands each member to the
 * caller, whose first refusal ends the walk. Pure code.
 */

#include <stddef.h>

#include <jansson.h>

#include "err.h"

struct members_spec {
	const char *path;	/* "upstreams", "profile.env" */
	size_t max;		/* members */
	const char *noun;	/* "servers": what the error says they are */
	size_t name_max;	/* 0: the caller checks names */
	const char *name_word;	/* "a name", "an operation" */
};

typedef int (*members_fn)(void *ctx, const char *name, const json_t *value,
			  struct al_err *err);

/* 0, or -1 with err filled (by the walker or by fn). */
int members_each(const json_t *obj, const struct members_spec *s, members_fn fn, void *ctx,
		 struct al_err *err);

#endif
