#ifndef AIRLOCK_TEST_SCRATCH_H
#define AIRLOCK_TEST_SCRATCH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * A private scratch directory for one unit test: made fresh under /tmp
 * (mkdtemp, so mode 0700 and a name no one else holds), and removed with
 * every file in it. Scratch directories are flat: removal that leaves
 * anything behind (a subdirectory, a file it cannot unlink, the directory
 * itself) fails the running test with the path and the reason, never
 * silently. Both fail the test on any error, so they return nothing.
 */

/* Makes /tmp/airlock-<tag>-XXXXXX and writes its path into dir[cap]. */
void scratch_make(char *dir, size_t cap, const char *tag);

/* Writes text to dir/name (made or emptied) and gives it mode. */
void scratch_put(const char *dir, const char *name, const char *text, mode_t mode);

/* Unlinks every entry of dir (dot files too), then removes dir. */
void scratch_remove(const char *dir);

#endif
