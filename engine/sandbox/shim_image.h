#ifndef AIRLOCK_SHIM_IMAGE_H
#define AIRLOCK_SHIM_IMAGE_H

/*
 * The engine's own airlock-shim (docs/mcp-agents.md): where this engine
 * finds it, its SHA-256, and an image with it added at /airlock/shim
 * (`airlock image add-shim`). The digest is what admission's shim_digest
 * check compares /airlock/shim in an MCP session's image with.
 *
 * Where it is, the first that exists and is executable:
 *   1. $AIRLOCK_SHIM (an absolute path; tests and unusual installs),
 *   2. airlock-shim beside the airlock binary (a package installing both
 *      in one directory),
 *   3. shim/airlock-shim under the airlock binary's directory (the build
 *      tree: build/airlock and build/shim/airlock-shim),
 *   4. airlock-shim in the configured libexecdir (meson install).
 */

#include <stdbool.h>
#include <stddef.h>

#include "docker.h"
#include "err.h"
#include "hash.h"

#define SHIM_IMAGE_PATH		"/airlock/shim"
#define SHIM_IMAGE_MODE		0555
#define SHIM_FILE_MAX		(64u << 20)	/* the static shim is about 1 MiB */
#define SHIM_LABEL		"io.airlock.shim"	/* its value: the shim's SHA-256 */
#define SHIM_PATH_MAX		4096

/*
 * The shim's path for the airlock binary exe (NULL: /proc/self/exe), by
 * the order above. -1 with a fixed message naming what was tried last.
 */
int shim_image_locate(const char *exe, char *out, size_t cap, struct al_err *err);

/*
 * Read a regular file of at most SHIM_FILE_MAX bytes into a malloc'd
 * buffer and hash it. -1 with a fixed message naming the path.
 */
int shim_image_read(const char *path, unsigned char **buf, size_t *len,
		    char hex[HASH_HEX_LEN + 1], struct al_err *err);

/* shim_image_locate, then shim_image_read's digest: the engine's shim_digest. */
int shim_image_engine_digest(const char *exe, char hex[HASH_HEX_LEN + 1], struct al_err *err);

/*
 * The build context's Dockerfile for image_id ("sha256:<64 hex>"): FROM
 * that ID, then COPY of the shim to /airlock/shim (owner root: the legacy
 * builder COPYs as 0:0; the mode is the context entry's, 0555). -1 when
 * image_id is not an immutable ID or out is too small. Pure.
 */
int shim_image_dockerfile(const char *image_id, char *out, size_t cap);

/*
 * Build image_id + /airlock/shim through POST /build (an in-memory tar:
 * the Dockerfile and the shim), labelled SHIM_LABEL=<the shim's SHA-256>.
 * new_id gets the new image's 64 hex digits.
 */
int shim_image_add(struct docker *d, const char *image_id, const unsigned char *shim,
		   size_t len, char new_id[DOCKER_ID_MAX], struct al_err *err);

#endif
