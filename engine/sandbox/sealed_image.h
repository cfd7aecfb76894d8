#ifndef AIRLOCK_SEALED_IMAGE_H
#define AIRLOCK_SEALED_IMAGE_H

/*
 * The image's file metadata for the sealed check (engine/admission/sealed.h), read
 * from GET /images/{id}/get: the daemon's tar export (`docker save`
 * format: manifest.json, the image config, one uncompressed tar per layer).
 * Streamed: each layer tar is parsed as it passes and only the entries that
 * bear on a sealed path are kept (names, owners, modes; file data is never
 * kept), so memory does not grow with the image.
 *
 * The export is tied to the image: the config's SHA-256 must be the image
 * ID, each layer's SHA-256 the config's rootfs.diff_ids entry in order, and
 * manifest.json must name exactly that config and those layers. Anything
 * else (a compressed or truncated layer, a missing manifest, a second
 * image) is an error with a fixed message.
 *
 * sealed_export_feed/_finish are pure (the unit tests drive them with
 * archives they build); sealed_image_read does the one Docker call.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hash.h"
#include "sealed.h"
#include "tar_stream.h"

#define SEALED_EXPORT_TIMEOUT_MS	120000L
#define SEALED_EXPORT_MAX		(16ULL << 30)	/* bytes of export */
#define SEALED_BLOBS_MAX		4096		/* entries of the export */
#define SEALED_JSON_MAX			(1u << 20)	/* manifest.json and the config */

struct sealed_blob;	/* one entry of the export */

struct sealed_export {
	const struct strv *sealed;	/* borrowed: the sealed paths */
	struct strv keep;		/* the paths whose entries the layers keep */
	const char *watch;		/* normalised relative path to hash, or NULL */
	void *watch_sha;		/* its running SHA-256 (EVP_MD_CTX) */
	bool watching;			/* inside the watched entry's data */
	size_t watch_index;		/* that entry's index in the current layer */
	struct tar_stream outer, inner;
	struct sealed_blob *blobs;	/* grown as entries come, up to SEALED_BLOBS_MAX */
	size_t n_blobs, cap_blobs, budget;
	struct sealed_blob *cur;	/* the outer entry being read, or NULL */
	void *sha;			/* its running SHA-256 (EVP_MD_CTX) */
	uint64_t bytes;
	struct al_err *err;
	/* After finish: the layers, bottom first. */
	const struct sealed_layer **order;
	size_t n_order;
};

int sealed_export_init(struct sealed_export *x, const struct strv *sealed, struct al_err *err);
/*
 * Also keep the entries bearing on abs (an absolute normalised path, e.g.
 * SHIM_IMAGE_PATH) and hash the content of each regular file at it, layer
 * by layer (sealed_entry.digest); after finish, sealed_file_of tells what
 * the container shows there. Call before the first feed.
 */
int sealed_export_watch(struct sealed_export *x, const char *abs);
void sealed_export_free(struct sealed_export *x);
/* Feed bytes of the export as they arrive. -1 with err set on any fault. */
int sealed_export_feed(struct sealed_export *x, const unsigned char *p, size_t n);
/*
 * The stream ended: check the manifest, the config and the layer digests
 * against image_id ("sha256:<64 hex>"), then fill x->order.
 */
int sealed_export_finish(struct sealed_export *x, const char *image_id);

/*
 * Read image_id's export from the daemon at socket_path into x (already
 * initialised) and finish it. Bounded by SEALED_EXPORT_TIMEOUT_MS and
 * SEALED_EXPORT_MAX.
 */
int sealed_image_read(const char *socket_path, const char *image_id, struct sealed_export *x,
		      struct al_err *err);

/*
 * The whole check for one container: read its image's export, take the
 * uid and groups from its inspect JSON (Config.User, HostConfig.GroupAdd),
 * judge. Always fills out (image, user, verdict); a read or parse fault is
 * a refusal whose text says why (fixed text and names only). With shim,
 * out->shim is what the container shows at SHIM_IMAGE_PATH, read from the
 * same export (out->shim.read false, with the reason, when it was not).
 */
void sealed_image_judge(const char *socket_path, const json_t *inspect,
			const struct strv *sealed, bool shim, struct sealed_verdict *out);

#endif
