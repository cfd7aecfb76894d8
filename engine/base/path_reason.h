#ifndef AIRLOCK_PATH_REASON_H
#define AIRLOCK_PATH_REASON_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Why path cannot be read (or, with create, created or written): strerror
 * text, "is a directory", "not a regular file", or "" when nothing is wrong
 * that the file system shows. The text may be in buf[cap].
 */
const char *path_reason(const char *path, bool create, char *buf, size_t cap);

/*
 * "WHAT PATH: MSG: REASON" for a file that would not open: msg is the
 * open's error (its leading "WHAT: " dropped), the reason path_reason's.
 */
void path_failure(char *out, size_t cap, const char *what, const char *path, bool create,
		  const char *msg);

/*
 * Is path top itself or a name beneath it? Both are plain paths, absolute
 * ("/a/b") or relative ("a/b"), compared as text: "/a/bc" is not beneath
 * "/a/b", and everything absolute is beneath "/".
 */
bool path_within(const char *path, const char *top);

#endif
