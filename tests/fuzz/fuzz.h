#ifndef AIRLOCK_FUZZ_H
#define AIRLOCK_FUZZ_H

/*
 * Shared by the libFuzzer targets (docs/fuzzing.md). A target feeds one
 * input to one engine parser and then checks what the parser promises in
 * its header: a broken promise aborts, and libFuzzer keeps the input as a
 * crash. Sanitizers (address, undefined) catch the rest.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A stringised condition needs a macro; everything else here is a function. */
#define FUZZ_CHECK(cond) fuzz_check((cond), #cond, __FILE__, __LINE__)

static inline void
fuzz_check(bool ok, const char *what, const char *file, int line)
{
	if (ok)
		return;
	fprintf(stderr, "%s:%d: promise broken: %s\n", file, line, what);
	abort();
}

/* Printable ASCII only: what an error message or a report may hold. */
static inline bool
fuzz_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* The first byte of an input as a small parameter in [1, max]. */
static inline size_t
fuzz_take(const uint8_t **data, size_t *size, size_t max)
{
	size_t v;

	if (*size == 0)
		return 1;
	v = 1 + (size_t)**data % max;
	(*data)++;
	(*size)--;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
