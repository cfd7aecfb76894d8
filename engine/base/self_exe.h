#ifndef AIRLOCK_SELF_EXE_H
#define AIRLOCK_SELF_EXE_H

#include <stdbool.h>
#include <stddef.h>

/* A regular file this process may execute. */
bool self_exe_usable(const char *path);

/*
 * A program installed beside the running one (a build tree, or a package
 * that installs both in one directory): DIR/name, DIR being the directory
 * of exe when it is a path (holds a '/'), else of /proc/self/exe. 0 with
 * that path in out when it is usable, else -1.
 */
int self_exe_sibling(const char *exe, const char *name, char *out, size_t cap);

/*
 * A helper program of ours: beside the running one (self_exe_sibling),
 * else the installed copy in AIRLOCK_LIBEXECDIR. Resolved before any fork:
 * nothing here is async-signal-safe. 0 with its path in out, or -1 with
 * where it was looked for in out, for the refusal: "airlock-parser is
 * neither beside /usr/local/bin/airlock nor in /usr/local/libexec".
 */
int self_exe_program(const char *exe, const char *name, char *out, size_t cap);

#endif
