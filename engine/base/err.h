#ifndef AIRLOCK_ERR_H
#define AIRLOCK_ERR_H

/*
 * Errors travel as a status code plus one formatted message, in the spirit
 * of tig's error(): a function that fails fills the caller's struct al_err
 * and returns -1. Messages are fixed text plus names and numbers the engine
 * chose or the operator configured; never bytes an agent or upstream sent.
 */

#include <stddef.h>

/* The longest fixed text with the names it carries, whole: a path of 400 bytes and its rule. */
#define AL_ERR_MAX 1024

struct al_err {
	char msg[AL_ERR_MAX];
};

/* Format into err (which may be NULL) and return -1. */
int al_fail(struct al_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefix the message already in err with "what: ". Returns -1. */
int al_wrap(struct al_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void
al_err_clear(struct al_err *err)
{
	if (err)
		err->msg[0] = '\0';
}

#endif
