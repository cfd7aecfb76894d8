#ifndef AIRLOCK_DOCKER_INT_H
#define AIRLOCK_DOCKER_INT_H

/*
 * What docker.c (the handle, one transfer, the generic request) shares
 * with the endpoints in docker_container.c and docker_image.c. Not for
 * other callers: docker.h is the interface.
 */

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>
#include <jansson.h>

#include "docker.h"
#include "err.h"

/* A JSON answer larger than this is not something the daemon sends us. */
#define DOCKER_REPLY_MAX	(32u << 20)
#define DOCKER_NAME_MAX		128
#define DOCKER_MESSAGE_MAX	120
#define DOCKER_PATH_MAX		4096

struct docker {
	CURL *curl;
	char *socket_path;
	long timeout_ms;
	const unsigned char *replay;	/* docker_open_replay: every answer's body */
	size_t replay_len;
	long replay_status;		/* non-zero: no daemon, this answer */
};

/* A response body, grown on demand up to max bytes. */
struct docker_buf {
	unsigned char *data;
	size_t len;
	size_t cap;
	size_t max;
	bool overflow;
	bool oom;
};

/* One transfer: the body is already serialized. */
struct docker_call {
	const char *method;
	const char *path;
	const char *body;	/* NULL: no body */
	size_t body_len;
	long timeout_ms;
	size_t max;
	const char *content_type;	/* of the body; NULL: JSON */
};

/* At least 64 lowercase hex digits at s (an image or container id). */
bool docker_hex_prefix(const char *s);
/* in reduced to printable ASCII and about DOCKER_MESSAGE_MAX characters. */
void docker_printable(const char *in, char *out, size_t outsz);
/* How much of path an error message repeats (no query, bounded): a %.*s length. */
int docker_path_len(const char *path);

void docker_buf_free(struct docker_buf *b);
int docker_perform(struct docker *d, const struct docker_call *c, struct docker_buf *resp,
		   long *status, struct al_err *err);
/* 2xx, or a 304 from start/stop. */
bool docker_status_ok(long status);
/* The error for a status that is not ok, with the daemon's message. Returns -1. */
int docker_status_fail(const struct docker_call *c, long status, const struct docker_buf *b,
		       struct al_err *err);
int docker_call_json(struct docker *d, const struct docker_call *c, long *status,
		     json_t **reply, struct al_err *err);

int docker_label_path(struct docker *d, const char *head, const char *label, char *path,
		      size_t size, struct al_err *err);
/* GET path, whose answer must be a JSON object. */
int docker_get_object(struct docker *d, const char *path, json_t **out, struct al_err *err);

#endif
