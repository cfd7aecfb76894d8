#ifndef AIRLOCK_UPSTREAM_CATALOG_H
#define AIRLOCK_UPSTREAM_CATALOG_H

/*
 * The installed upstreams: the programs a peer that is not root may have
 * the engine start (docs/operations.md, "Installed upstreams"). Root
 * installs each as DIR/KEY.json, one upstream definition (the keys of a
 * config's upstream: argv, env, cwd, timeout_ms, user, privileged,
 * unconfined_ok, paths, network; absolute paths only); a config names it
 * by key: "upstreams": {"notes": {"installed": "KEY"}}.
 *
 * The directory and the file must be root's: owned by uid 0 and not
 * group- or world-writable, else the definition is refused with why. So
 * must each directory above it (a sticky one, like /tmp, may be
 * world-writable: nobody else can rename root's entry in it), or whoever
 * could write there could put another directory in its place. The path is
 * absolute and walked one name at a time: a symlink anywhere on it is
 * refused, as is a "..".
 */

#include <stdbool.h>
#include <sys/stat.h>

#include <jansson.h>

#include "err.h"
#include "strv.h"

#define UPSTREAM_CATALOG_DIR		"/etc/airlock/upstreams.d"
#define UPSTREAM_CATALOG_KEY_MAX	63
#define UPSTREAM_CATALOG_FILE_MAX	(64 << 10)
#define UPSTREAM_CODE_ENTRIES_MAX	200000	/* beneath one directory it runs from */

/* Fixed words: why a peer's config is refused (the audit's rule ends with one). */
#define UPSTREAM_CATALOG_NOT_INSTALLED	"upstream not installed"
#define UPSTREAM_CATALOG_NAMES_FILE	"names a file"

/*
 * Why a directory (dir true) or a definition file with this stat is not
 * root's to trust: fixed text, or NULL when it is. Pure.
 */
const char *upstream_catalog_fault(const struct stat *st, bool dir);

/*
 * Why a directory above the catalog's, with this stat, is not root's to
 * trust: fixed text, or NULL when it is (root's and not group- or
 * world-writable, or world-writable with the sticky bit). Pure.
 */
const char *upstream_catalog_parent_fault(const struct stat *st);

/* A key: 1..UPSTREAM_CATALOG_KEY_MAX of [A-Za-z0-9_-], not starting with '-'. Pure. */
bool upstream_catalog_key_ok(const char *key);

/*
 * The definition installed as dir/key.json (dir NULL: UPSTREAM_CATALOG_DIR):
 * a JSON object, or NULL with err saying why and what to install where.
 */
json_t *upstream_catalog_read(const char *dir, const char *key, struct al_err *err);

/*
 * What an installed upstream (isolation "process") runs must be root's as
 * its definition is: whoever could write it would run code as the
 * upstream's user, with the data of every session that calls it. So the
 * program (argv[0], as resolved), the directory tree it is in, the
 * directory as named when that is elsewhere, the outermost node_modules
 * tree above it, and each absolute argument outside the declared paths
 * (rw, ro: data) that exists, a file with its directory's tree, a
 * directory with its own (Landlock lets the upstream read them): each
 * entry owned by root and not group- or world-writable, each symlink's
 * target too, and each directory above a tree as for the catalog (walked,
 * no symlink, sticky allowed). NULL, or fixed text with the path at fault
 * in at. Reads the file system.
 */
const char *upstream_catalog_code_fault(const struct strv *argv, const struct strv *rw,
					const struct strv *ro, char *at, size_t cap);

/*
 * A config from a peer that is not root (docs/operations.md, "Who may
 * connect: roles"): NULL when every upstream is exactly {"installed": KEY}
 * and no member names a file the engine would open (initial.file);
 * otherwise one of the fixed words above, with err saying which member and
 * what to install where (dir as for upstream_catalog_read). Pure.
 */
const char *upstream_catalog_peer_fault(const json_t *root, const char *dir,
					struct al_err *err);

#endif
