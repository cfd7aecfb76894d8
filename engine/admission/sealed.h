#ifndef AIRLOCK_SEALED_H
#define AIRLOCK_SEALED_H

/*
 * Sealed material: paths inside the image that the agent's uid must not
 * read (profile.sealed). Pure code: the image's file metadata (owner,
 * group, mode and type of each entry, layer by layer, as the image's tar
 * export carries them) and the container's uid and groups in, a verdict
 * out. engine/sandbox/sealed_image.h reads the export; admission reports the
 * verdict under the check id "sealed".
 *
 * The rules, as the kernel applies them to a process without capabilities
 * (no CAP_DAC_OVERRIDE, no CAP_DAC_READ_SEARCH: admission checks CapDrop):
 *
 * - Layers apply bottom first. A whiteout ".wh.NAME" removes NAME (and all
 *   under it) from the layers below; ".wh..wh..opq" hides everything the
 *   layers below have under its directory; a non-directory hides what the
 *   layers below have under its path. A later entry for the same path in
 *   one layer wins, as on extraction.
 * - Docker's init layer sits on top of the image and holds "/", /etc, /dev,
 *   /dev/pts, /dev/shm, /proc and /sys as directories 0755 owned by root;
 *   whether the container shows those or the image's modes depends on the
 *   storage driver, so they count as 0755 root and never protect. A
 *   directory the image does not list is made 0755 root by the daemon.
 * - One permission class applies: the owner's bits when the uid owns the
 *   entry, else the group's when the entry's gid is the primary gid or a
 *   supplementary group, else the other bits.
 * - A sealed path is reachable when every directory above it grants search
 *   (x); it is then refused if it grants read (r; for a directory: its
 *   names can be listed). Under a sealed directory the same holds for every
 *   entry, judged through the directories between.
 * - Refused outright, because they cannot be judged from modes alone: a
 *   sealed path that is not in the image, that is a symlink or whose parent
 *   is one; a reachable symlink under a sealed directory; an entry owned by
 *   the agent's uid (its owner could change the mode); a POSIX ACL, or any
 *   other system.* or security.* extended attribute but security.capability,
 *   on any entry judged or any image directory above a sealed path (an ACL
 *   grants what the mode does not, an LSM label is policy this does not
 *   read); a hard link joining a name inside a sealed path to one outside it.
 * - File capabilities (security.capability) act only on exec, where
 *   no-new-privileges and CapDrop ALL (both admission checks) void them;
 *   user.* and other trusted.* attributes grant no access. overlayfs's own
 *   attributes (trusted.overlay.*, user.overlay.*) change what the layers
 *   show: any entry of any layer carrying one fails the read
 *   (sealed_layer_add).
 *
 * Reports name the sealed path (operator configuration) and the reason,
 * never a name found under a sealed directory and never file content.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "strv.h"
#include "tar_stream.h"

#define SEALED_PATHS_MAX	16
#define SEALED_PATH_LEN_MAX	255
#define SEALED_GROUPS_MAX	32
#define SEALED_ENTRIES_MAX	(1u << 20)	/* kept entries over all layers */
#define SEALED_TEXT_MAX		200

enum sealed_kind {
	SEALED_ENTRY,		/* a file, directory, link, device, fifo */
	SEALED_WHITEOUT,	/* ".wh.NAME": path is the NAME it removes */
	SEALED_OPAQUE,		/* ".wh..wh..opq": path is its directory */
};

/* One entry of one layer, kept because it bears on a sealed path. */
struct sealed_entry {
	char *path;		/* normalised, relative ("etc/key"); the root is "" */
	char *link;		/* a hard link's target (normalised), else NULL */
	enum sealed_kind kind;
	char type;		/* tar type: '0' file, '1' hard link, '2' symlink, '5' dir, … */
	unsigned mode;		/* permission bits (07777) */
	uint64_t uid, gid;
	bool acl;
	unsigned xattrs;	/* enum tar_xattr bits */
	char *digest;		/* the watched file's SHA-256 hex (sealed_image.h), else NULL */
};

struct sealed_layer {
	char *name;		/* its name in the export */
	struct sealed_entry *v;
	size_t n, cap;
};

/* Who the agent is: uid, the primary gid first, then supplementary groups. */
struct sealed_who {
	uint64_t uid;
	uint64_t gids[SEALED_GROUPS_MAX];
	size_t n_gids;
};

/*
 * One path of the image as the container shows it, with the SHA-256 of its
 * content when it is a regular file (admission's shim_digest: /airlock/shim).
 */
struct sealed_file {
	bool read;		/* the export was read and the layers applied */
	bool present;		/* a visible entry at the path */
	char type;		/* its tar type: '0' or '7' a regular file */
	unsigned mode;
	uint64_t uid, gid;
	char digest[65];	/* a regular file's SHA-256 hex, else "" */
	char text[SEALED_TEXT_MAX];	/* when not read: why */
};

struct sealed_verdict {
	bool pass;
	char text[SEALED_TEXT_MAX];	/* the first refusal, or a one-line summary */
	char image[72];			/* the image ID judged (set by the reader) */
	char user[32];			/* the Config.User judged (likewise) */
	struct sealed_file shim;	/* SHIM_IMAGE_PATH, when the reader was asked for it */
};

/*
 * profile.sealed: an array of at most SEALED_PATHS_MAX absolute, normalised
 * paths ([A-Za-z0-9._+@=,~-] between slashes, at most SEALED_PATH_LEN_MAX
 * bytes, no duplicates; not "/", not under /proc, /sys or /dev, not one of
 * the files Docker puts in every container). Errors name the key.
 */
int sealed_paths_parse(struct strv *dst, const json_t *v, struct al_err *err);

/* True when rel (normalised, relative) is above, at or under a sealed path. */
bool sealed_relevant(const struct strv *sealed, const char *rel);

/*
 * Keep e in l when it bears on a sealed path: normalises its name, turns
 * whiteouts into their kind. -1 (err set) on a ".." name, a hard link
 * whose target does not normalise, an overlayfs attribute on any entry, a
 * kept entry's uid or gid of 2^32 - 1 or more (Docker's chown would keep
 * only its low 32 bits), or when SEALED_ENTRIES_MAX would be passed
 * (*budget counts down).
 */
int sealed_layer_add(struct sealed_layer *l, const struct tar_entry *e,
		     const struct strv *sealed, size_t *budget, struct al_err *err);
void sealed_layer_free(struct sealed_layer *l);

/*
 * The container's uid and groups: user is Config.User ("uid:gid", numeric),
 * group_add is HostConfig.GroupAdd (null or an array of numeric strings).
 * -1 with a fixed reason otherwise (a group name would be resolved through
 * the image's /etc/group, which this does not read).
 */
int sealed_who_parse(const char *user, const json_t *group_add, struct sealed_who *w,
		     struct al_err *err);

/*
 * What the container shows at rel (normalised, relative: "airlock/shim")
 * after layers[0..n) are applied, the bottom first: the visible entry, its
 * type, mode, owner and digest (when its layer's reader hashed it), or
 * absent. Whiteouts, opaque directories and non-directories above it hide
 * it as in sealed_judge. Only entries the layers kept count: rel must have
 * been among the paths they kept entries for.
 */
void sealed_file_of(const struct sealed_layer *const *layers, size_t n, const char *rel,
		    struct sealed_file *out);

/* Judge every sealed path against layers[0..n), the bottom layer first. */
void sealed_judge(const struct sealed_layer *const *layers, size_t n,
		  const struct strv *sealed, const struct sealed_who *who,
		  struct sealed_verdict *out);

#endif
