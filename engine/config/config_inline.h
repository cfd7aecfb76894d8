#ifndef AIRLOCK_CONFIG_INLINE_H
#define AIRLOCK_CONFIG_INLINE_H

/*
 * A session config made ready to send to `airlock serve` (ctl start, the
 * console's start on an attached engine): read on the caller's side, with
 * the caller's rights, and its relative paths made absolute against the
 * file's directory there, so the engine opens no file for its peer and
 * resolves nothing against a directory of the peer's (docs/operations.md,
 * "Who may connect: roles"). The engine refuses a relative path in a
 * config sent to it.
 */

#include <jansson.h>

#include "err.h"

/* The fixed reason a config the caller cannot read is refused with. */
#define CONFIG_INLINE_UNREADABLE \
	"you cannot read it (ctl reads a config with your rights; the engine opens no file for you)"

/* The same for its initial payload's file. */
#define CONFIG_INLINE_PAYLOAD_UNREADABLE \
	"you cannot read it (ctl reads it with your rights and sends it; the engine opens no file for you)"

/* The largest initial payload read from a file, here or by the engine. */
#define CONFIG_PAYLOAD_MAX	(1 << 20)

/* config_payload_read's word for a file the reader may not open. */
#define CONFIG_PAYLOAD_EACCES	"not readable by the engine"

/*
 * The config at path as a JSON object (config_read_json's bounds), its
 * relative paths resolved, and for a caller that is not root its
 * initial.file read here and sent as initial.payload in its place
 * (config_inline_payload): NULL with err ("config PATH: ...").
 */
json_t *config_inline_file(const char *path, struct al_err *err);

/*
 * An initial payload's file read whole (at most CONFIG_PAYLOAD_MAX bytes of
 * JSON, opened non-blocking: a FIFO holds nobody) with the caller's
 * rights: the engine's for root's configs, ctl's for a peer's. NULL with
 * *why in fixed words ("no such file", CONFIG_PAYLOAD_EACCES, "not a
 * regular file", "larger than 1 MiB", "not valid JSON", …): never a
 * parser's message, which could quote the payload. The bytes read are
 * cleared before they are freed.
 */
json_t *config_payload_read(const char *path, const char **why);

/*
 * initial.file, when it is a string, read with the caller's rights and
 * put in the config as initial.payload, the file's name taken out: the
 * engine takes a payload it did not read only from its control socket
 * (an operate peer's sessions get one so). 0, or -1 with err: the file's
 * name and config_payload_read's words.
 */
int config_inline_payload(json_t *root, struct al_err *err);

/*
 * The relative paths of a config (upstreams.*.cwd, upstreams.*.paths.rw
 * and .ro, initial.file) made absolute against dir, in place: 0, or -1
 * when out of memory. Members of the wrong type are left for the engine
 * to refuse. Pure.
 */
int config_inline_paths(json_t *root, const char *dir, struct al_err *err);

#endif
