#ifndef AIRLOCK_DOCKER_H
#define AIRLOCK_DOCKER_H

/*
 * The Docker Engine API over the local unix socket, through libcurl.
 *
 * One struct docker owns one reusable easy handle (keep-alive) and is used
 * by one thread at a time; a worker that needs its own connection opens its
 * own. Every call has a timeout. A non-2xx answer becomes an error whose
 * message holds the method, path, HTTP status and the daemon's "message"
 * field (truncated); a 304 from start/stop is success.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"

#define DOCKER_SOCKET_DEFAULT	"/var/run/docker.sock"
#define DOCKER_API_VERSION	"v1.41"
#define DOCKER_TIMEOUT_MS	20000L
#define DOCKER_SOCKET_MAX	108	/* a unix socket path: sizeof sun_path */
#define DOCKER_ID_MAX		65	/* 64 hex + NUL */
#define DOCKER_BUILD_TIMEOUT_MS	120000L

struct docker;

/*
 * True when s may be put in a URL path as a container id or name:
 * [A-Za-z0-9][A-Za-z0-9_.-]*, at most 128 bytes. Nothing else can inject
 * a path segment or a query.
 */
bool docker_name_valid(const char *s);
/*
 * The daemon's "message" field of an error body (or the first line of a
 * plain-text one, as a refused attach sends), reduced to printable ASCII
 * and truncated to about 120 characters; "" when there is none.
 */
void docker_error_text(const unsigned char *body, size_t len, char *out, size_t outsz);

struct docker *docker_open(const char *socket_path, long timeout_ms, struct al_err *err);
/*
 * A handle without a daemon, for fuzzers and tests: every call gets the
 * same answer, HTTP status and body (borrowed; it must outlive the handle),
 * and judges it exactly as it judges a live one. Nothing is sent.
 */
struct docker *docker_open_replay(long status, const void *body, size_t len,
				  struct al_err *err);
void docker_close(struct docker *d);
const char *docker_socket_path(const struct docker *d);
/*
 * The transport every connection to the daemon shares, set on a libcurl
 * easy handle (a CURL *): plain HTTP only, over the unix socket at
 * socket_path, to url, no signals, curl's text into errbuf
 * (CURL_ERROR_SIZE). 0, or -1 when libcurl refuses an option.
 */
int docker_curl_transport(void *curl, const char *socket_path, const char *url,
			  char *errbuf);
/*
 * A streamed GET on that transport (the events stream, an export): the
 * daemon's connect timeout, and each chunk of the body to write(chunk,
 * 1, n, data) as libcurl's CURLOPT_WRITEFUNCTION. 0, or -1.
 */
int docker_curl_stream(void *curl, const char *socket_path, const char *url, char *errbuf,
		       size_t (*write)(char *, size_t, size_t, void *), void *data);

/*
 * Generic request: body may be NULL (empty POST sends Content-Length: 0).
 * On 2xx, *reply (if non-NULL) gets the parsed JSON body, or NULL when the
 * body is empty. *status gets the HTTP status. Returns 0 on 2xx (or 304),
 * -1 otherwise.
 */
int docker_request(struct docker *d, const char *method, const char *path,
		   const json_t *body, long *status, json_t **reply,
		   struct al_err *err);

int docker_ping(struct docker *d, struct al_err *err);
int docker_version(struct docker *d, json_t **out, struct al_err *err);
int docker_info(struct docker *d, json_t **out, struct al_err *err);
/*
 * True when s may name an image in a URL path: an image id
 * "sha256:<64 hex>", or a local name: docker_name_valid parts joined by
 * '/', the last with an optional ":tag" of the same characters; at most 255
 * bytes. No empty or dot-led part; no registry port, no "@digest".
 */
bool docker_image_ref_valid(const char *s);
/* GET /images/{image}/json; image must pass docker_image_ref_valid. */
int docker_image_inspect(struct docker *d, const char *image, json_t **out, struct al_err *err);

/* name may be NULL. id receives the new container's full ID. */
int docker_create(struct docker *d, const char *name, const json_t *body,
		  char id[DOCKER_ID_MAX], struct al_err *err);
int docker_inspect(struct docker *d, const char *id, json_t **out, struct al_err *err);
int docker_start(struct docker *d, const char *id, struct al_err *err);
/* POST /wait (condition "not-running"), bounded by the handle's timeout. */
int docker_wait(struct docker *d, const char *id, long *exit_code, struct al_err *err);
/* The same bounded by timeout_ms; *timed_out tells a deadline from an error. */
int docker_wait_for(struct docker *d, const char *id, long timeout_ms, long *exit_code,
		    bool *timed_out, struct al_err *err);
/* GET /containers/{id}/json: *gone is true on 404, false on 2xx; -1 on anything else. */
int docker_gone(struct docker *d, const char *id, bool *gone, struct al_err *err);
int docker_stop(struct docker *d, const char *id, int t_seconds, struct al_err *err);
int docker_kill(struct docker *d, const char *id, const char *signal, struct al_err *err);
/*
 * POST /pause, /unpause (the cgroup freezer under runc, runsc's own pause
 * under gVisor): every process of the container stops where it is. A
 * stop or kill still ends a paused container (the daemon resumes it to
 * deliver the signal).
 */
int docker_pause(struct docker *d, const char *id, struct al_err *err);
int docker_unpause(struct docker *d, const char *id, struct al_err *err);
/* DELETE ?force=1&v=1; a 404 is success when missing_ok. */
int docker_remove(struct docker *d, const char *id, bool missing_ok, struct al_err *err);
/* GET /containers/json?all=1 filtered by label "key=value" (or "key" alone). */
int docker_list_by_label(struct docker *d, const char *label, json_t **out, struct al_err *err);

/*
 * POST /build?q=1&rm=1&forcerm=1 with a tar context (tar.h writes one) and
 * one image label key=value (key: [a-z0-9.-]; value: printable ASCII, at
 * most 128 bytes each). id receives the new image's 64 hex digits, without
 * the "sha256:" prefix. A failed build is an error whose message repeats
 * the daemon's error line, bounded and printable. Bounded by
 * DOCKER_BUILD_TIMEOUT_MS, not the handle's timeout.
 */
int docker_build(struct docker *d, const void *tar, size_t len, const char *label_key,
		 const char *label_value, char id[DOCKER_ID_MAX], struct al_err *err);
/*
 * GET /images/json filtered by label "key=value" (or "key"): 0 with id set
 * to the newest match's 64 hex digits (no "sha256:" prefix), 1 when none
 * matches, -1 on error.
 */
int docker_image_by_label(struct docker *d, const char *label, char id[DOCKER_ID_MAX],
			  struct al_err *err);

/*
 * GET /containers/{id}/archive?path=…: the tar stream into a malloc'd
 * buffer of at most max bytes (larger is an error). Works on stopped
 * containers.
 */
int docker_archive_get(struct docker *d, const char *id, const char *path,
		       size_t max, unsigned char **buf, size_t *len,
		       struct al_err *err);

/*
 * GET /events filtered by a JSON filters string (e.g.
 * {"type":["container"],"label":["io.airlock.managed=1"]}). Calls on_event
 * for each event object; returns when on_event returns non-zero, when
 * *stop becomes true (checked about once a second), or on error. Uses its
 * own connection (no timeout on the stream itself).
 */
typedef int (*docker_event_fn)(const json_t *event, void *ctx);
int docker_events(const char *socket_path, const char *filters_json,
		  docker_event_fn on_event, void *ctx, const atomic_bool *stop,
		  struct al_err *err);

/*
 * docker_events without a daemon, for fuzzers and tests: body is the
 * answer of that HTTP status, handed to the stream parser in pieces of at
 * most chunk bytes, then the daemon "closes" it. Same events, same errors.
 */
int docker_events_replay(long status, const char *body, size_t len, size_t chunk,
			 docker_event_fn on_event, void *ctx, struct al_err *err);

/* --- attach: the hijacked stdio stream ---------------------------------- */

enum docker_stream {
	DOCKER_STDIN = 0,
	DOCKER_STDOUT = 1,
	DOCKER_STDERR = 2,
};

/* Frame demultiplexer (8-byte headers, Tty false). Pure; unit-tested. */
struct docker_demux {
	unsigned char hdr[8];
	size_t hdr_have;
	uint32_t left;		/* payload bytes left in the current frame */
	int stream;
	bool bad;		/* a header with an unknown stream type was seen */
};

typedef int (*docker_chunk_fn)(enum docker_stream stream, const unsigned char *data,
			       size_t len, void *ctx);

void docker_demux_init(struct docker_demux *dm);
/*
 * Feed raw bytes; each payload piece is handed to on_chunk as it arrives
 * (a frame may be split across feeds; a chunk is never a whole line by
 * promise). Returns 0, -1 on a malformed header (and dm->bad), or the
 * callback's non-zero value.
 */
int docker_demux_feed(struct docker_demux *dm, const unsigned char *buf, size_t len,
		      docker_chunk_fn on_chunk, void *ctx);

struct docker_attach;

/* Open the stream (before start). Uses its own connection. */
int docker_attach_open(const char *socket_path, const char *id, long timeout_ms,
		       struct docker_attach **out, struct al_err *err);
/* The socket for poll(); readable means docker_attach_read has bytes. */
int docker_attach_fd(const struct docker_attach *a);

enum attach_io {
	ATTACH_OK = 0,
	ATTACH_AGAIN = 1,	/* nothing now (non-blocking) */
	ATTACH_EOF = 2,
	ATTACH_ERROR = -1,
};

/*
 * Read what is available (non-blocking) and demultiplex it into on_chunk.
 * Returns ATTACH_OK when bytes were consumed, ATTACH_AGAIN, ATTACH_EOF or
 * ATTACH_ERROR (malformed stream, socket error, or a non-zero callback).
 */
enum attach_io docker_attach_read(struct docker_attach *a, docker_chunk_fn on_chunk,
				  void *ctx, struct al_err *err);
/* Write all of buf to the container's stdin within timeout_ms. */
int docker_attach_write(struct docker_attach *a, const void *buf, size_t len,
			int timeout_ms, struct al_err *err);
/* Half-close: the container sees EOF on stdin; output keeps flowing. */
int docker_attach_close_stdin(struct docker_attach *a);
void docker_attach_close(struct docker_attach *a);

/*
 * docker_attach_open, then docker_attach_read to the end, without a
 * socket, for fuzzers and tests: bytes is all the daemon answers on the
 * connection (the upgrade answer, then the multiplexed stream), received
 * at most chunk bytes at a time; what we send goes nowhere. Same checks,
 * same errors. 0 at a clean EOF; -1 with err set otherwise.
 */
int docker_attach_replay(const unsigned char *bytes, size_t len, size_t chunk,
			 docker_chunk_fn on_chunk, void *ctx, struct al_err *err);

#endif
