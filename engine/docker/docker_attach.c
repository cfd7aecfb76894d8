#include "docker.h"
#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>

#define ATTACH_HDR_MAX		8192
#define ATTACH_BODY_MAX		4096	/* of an error answer, for its message */
#define ATTACH_CHUNK		16384
#define ATTACH_ROUNDS		16	/* one read call takes at most 256 KiB, then yields */
#define DEMUX_HDR		8

struct docker_attach {
	CURL *curl;
	curl_socket_t fd;
	struct docker_demux dm;
	bool stdin_closed;
	bool replaying;			/* docker_attach_replay: no socket */
	const unsigned char *replay;	/* what the daemon "sends", not yet taken */
	size_t replay_len, replay_chunk;
};

/* --- the demultiplexer --------------------------------------------------- */

void
docker_demux_init(struct docker_demux *dm)
{
	memset(dm, 0, sizeof *dm);
}

/* [type, 0, 0, 0, len32 big-endian]; anything else means we lost the framing. */
static int
docker_demux_header(struct docker_demux *dm)
{
	const unsigned char *h = dm->hdr;

	dm->hdr_have = 0;
	if (h[0] > DOCKER_STDERR || h[1] || h[2] || h[3]) {
		dm->bad = true;
		return -1;
	}
	dm->stream = h[0];
	dm->left = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
	return 0;
}

int
docker_demux_feed(struct docker_demux *dm, const unsigned char *buf, size_t len,
		  docker_chunk_fn on_chunk, void *ctx)
{
	size_t n;
	int rc;

	while (len > 0 && !dm->bad) {
		if (dm->left == 0) {
			n = DEMUX_HDR - dm->hdr_have < len ? DEMUX_HDR - dm->hdr_have : len;
			memcpy(dm->hdr + dm->hdr_have, buf, n);
			dm->hdr_have += n;
			buf += n;
			len -= n;
			if (dm->hdr_have == DEMUX_HDR && docker_demux_header(dm) < 0)
				return -1;
			continue;
		}
		n = dm->left < len ? dm->left : len;
		dm->left -= (uint32_t)n;
		rc = on_chunk((enum docker_stream)dm->stream, buf, n, ctx);
		if (rc)
			return rc;
		buf += n;
		len -= n;
	}
	return dm->bad ? -1 : 0;
}

/* --- socket plumbing ----------------------------------------------------- */

/* curl_easy_recv, or the next replayed piece (0 bytes once all are taken: EOF). */
static CURLcode
docker_attach_take(struct docker_attach *a, void *buf, size_t want, size_t *n)
{
	if (!a->replaying)
		return curl_easy_recv(a->curl, buf, want, n);
	*n = want < a->replay_len ? want : a->replay_len;
	if (*n > a->replay_chunk)
		*n = a->replay_chunk;
	if (*n > 0)
		memcpy(buf, a->replay, *n);
	a->replay += *n;
	a->replay_len -= *n;
	return CURLE_OK;
}

/* curl_easy_send; a replayed stream takes everything and keeps nothing. */
static CURLcode
docker_attach_give(struct docker_attach *a, const void *buf, size_t len, size_t *sent)
{
	if (!a->replaying)
		return curl_easy_send(a->curl, buf, len, sent);
	*sent = len;
	return CURLE_OK;
}

/* 1 when fd is ready for events before the deadline, 0 on timeout, -1 on error. */
static int
docker_attach_poll(curl_socket_t fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left;
	int rc;

	for (;;) {
		left = deadline - clock_mono_ms();
		if (left <= 0)
			return 0;
		rc = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

static int
docker_attach_send(struct docker_attach *a, const unsigned char *buf, size_t len,
		   long long deadline, struct al_err *err)
{
	size_t sent;
	CURLcode rc;
	int ready;

	while (len > 0) {
		sent = 0;
		rc = docker_attach_give(a, buf, len, &sent);
		if (rc == CURLE_OK) {
			buf += sent;
			len -= sent;
			continue;
		}
		if (rc != CURLE_AGAIN)
			return al_fail(err, "docker: attach: send failed: %s", curl_easy_strerror(rc));
		ready = docker_attach_poll(a->fd, POLLOUT, deadline);
		if (ready <= 0)
			return al_fail(err, "docker: attach: %s", ready ? "poll failed" : "send timed out");
	}
	return 0;
}

/*
 * How many bytes may be read without passing the end of "\r\n\r\n": the
 * stream starts right after it, and bytes kept here would be invisible to a
 * caller that polls the socket.
 */
static size_t
docker_attach_want(const char *buf, size_t have)
{
	static const char end[] = "\r\n\r\n";
	size_t k;

	for (k = 3; k > 0; k--)
		if (have >= k && memcmp(buf + have - k, end, k) == 0)
			break;
	return 4 - k;
}

/*
 * Receive into buf: for a header, byte-exact up to its blank line; otherwise
 * whatever one successful receive brings.
 */
static int
docker_attach_recv(struct docker_attach *a, char *buf, size_t cap, size_t *have,
		   long long deadline, bool header, struct al_err *err)
{
	size_t n, want;
	CURLcode rc;
	int ready;

	while (*have < cap) {
		want = header ? docker_attach_want(buf, *have) : cap - *have;
		if (want > cap - *have)
			return al_fail(err, "docker: attach: answer header larger than %d bytes",
				       ATTACH_HDR_MAX);
		n = 0;
		rc = docker_attach_take(a, buf + *have, want, &n);
		if (rc == CURLE_AGAIN) {
			ready = docker_attach_poll(a->fd, POLLIN, deadline);
			if (ready <= 0)
				return al_fail(err, "docker: attach: %s", ready ? "poll failed" : "answer timed out");
			continue;
		}
		if (rc != CURLE_OK)
			return al_fail(err, "docker: attach: receive failed: %s", curl_easy_strerror(rc));
		if (n == 0)
			return al_fail(err, "docker: attach: the daemon closed the connection");
		*have += n;
		if (header && *have >= 4 && memcmp(buf + *have - 4, "\r\n\r\n", 4) == 0)
			return 0;
		if (!header)
			return 0;
	}
	return header ? al_fail(err, "docker: attach: answer header larger than %d bytes",
				ATTACH_HDR_MAX) : 0;
}

/*
 * A refused attach still says why, in one line: JSON before the hijack,
 * plain text after it. Fetch that line, within the deadline.
 */
static int
docker_attach_refused(struct docker_attach *a, long status, long long deadline,
		      struct al_err *err)
{
	char body[ATTACH_BODY_MAX] = "", msg[128];
	struct al_err ignored;
	size_t have = 0;

	while (have < sizeof body && !memchr(body, '\n', have))
		if (docker_attach_recv(a, body, sizeof body, &have, deadline, false, &ignored) < 0)
			break;
	docker_error_text((const unsigned char *)body, have, msg, sizeof msg);
	if (!msg[0])
		return al_fail(err, "docker: POST /containers/attach: HTTP %ld", status);
	return al_fail(err, "docker: POST /containers/attach: HTTP %ld: %s", status, msg);
}

static int
docker_attach_status(const char *hdr, long *status)
{
	if (strncmp(hdr, "HTTP/1.", 7) != 0 || hdr[8] != ' ' ||
	    hdr[9] < '1' || hdr[9] > '5' || hdr[10] < '0' || hdr[10] > '9' ||
	    hdr[11] < '0' || hdr[11] > '9')
		return -1;
	*status = (hdr[9] - '0') * 100 + (hdr[10] - '0') * 10 + (hdr[11] - '0');
	return 0;
}

/* Send the upgrade request and consume exactly the answer's header. */
static int
docker_attach_handshake(struct docker_attach *a, const char *id, long timeout_ms,
			struct al_err *err)
{
	long long deadline = clock_mono_ms() + timeout_ms;
	char req[512], hdr[ATTACH_HDR_MAX + 1];
	size_t have = 0;
	long status;
	int n;

	n = snprintf(req, sizeof req,
		     "POST /%s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
		     "Host: localhost\r\nContent-Length: 0\r\n"
		     "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n", DOCKER_API_VERSION, id);
	if (n < 0 || (size_t)n >= sizeof req)
		return al_fail(err, "docker: attach: request too long");
	if (docker_attach_send(a, (const unsigned char *)req, (size_t)n, deadline, err) < 0 ||
	    docker_attach_recv(a, hdr, ATTACH_HDR_MAX, &have, deadline, true, err) < 0)
		return -1;
	hdr[have] = '\0';
	if (docker_attach_status(hdr, &status) < 0)
		return al_fail(err, "docker: attach: malformed answer from the daemon");
	if (status != 101 && status != 200)
		return docker_attach_refused(a, status, deadline, err);
	return 0;
}

static int
docker_attach_connect(struct docker_attach *a, const char *socket_path, long timeout_ms,
		      struct al_err *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_socket_t fd = CURL_SOCKET_BAD;
	CURLcode rc;

	if (docker_curl_transport(a->curl, socket_path, "http://localhost/", errbuf) < 0 ||
	    curl_easy_setopt(a->curl, CURLOPT_CONNECT_ONLY, 1L) ||
	    curl_easy_setopt(a->curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms))
		return al_fail(err, "docker: attach: cannot set up the connection");
	rc = curl_easy_perform(a->curl);
	/* errbuf lives on this stack frame; curl must not keep it. */
	curl_easy_setopt(a->curl, CURLOPT_ERRORBUFFER, NULL);
	if (rc == CURLE_COULDNT_CONNECT)
		return al_fail(err, "docker: attach: cannot connect to %s", socket_path);
	if (rc != CURLE_OK)
		return al_fail(err, "docker: attach: connect: %s",
			       errbuf[0] ? errbuf : curl_easy_strerror(rc));
	if (curl_easy_getinfo(a->curl, CURLINFO_ACTIVESOCKET, &fd) || fd == CURL_SOCKET_BAD)
		return al_fail(err, "docker: attach: no socket after connect");
	a->fd = fd;
	return 0;
}

/* --- the public stream --------------------------------------------------- */

int
docker_attach_open(const char *socket_path, const char *id, long timeout_ms,
		   struct docker_attach **out, struct al_err *err)
{
	struct docker_attach *a;

	*out = NULL;
	if (!docker_name_valid(id))
		return al_fail(err, "docker: attach: invalid container id or name");
	if (!socket_path)
		socket_path = DOCKER_SOCKET_DEFAULT;
	if (timeout_ms <= 0)
		timeout_ms = DOCKER_TIMEOUT_MS;
	a = calloc(1, sizeof *a);
	if (!a || !(a->curl = curl_easy_init())) {
		free(a);
		return al_fail(err, "docker: attach: out of memory");
	}
	a->fd = CURL_SOCKET_BAD;
	docker_demux_init(&a->dm);
	if (docker_attach_connect(a, socket_path, timeout_ms, err) < 0 ||
	    docker_attach_handshake(a, id, timeout_ms, err) < 0) {
		docker_attach_close(a);
		return -1;
	}
	*out = a;
	return 0;
}

int
docker_attach_fd(const struct docker_attach *a)
{
	return (int)a->fd;
}

static enum attach_io
docker_attach_feed(struct docker_attach *a, const unsigned char *buf, size_t n,
		   docker_chunk_fn on_chunk, void *ctx, struct al_err *err)
{
	int rc = docker_demux_feed(&a->dm, buf, n, on_chunk, ctx);

	if (rc == 0)
		return ATTACH_OK;
	if (a->dm.bad)
		al_fail(err, "docker: attach: malformed stream frame");
	else
		al_fail(err, "docker: attach: the reader stopped the stream");
	return ATTACH_ERROR;
}

enum attach_io
docker_attach_read(struct docker_attach *a, docker_chunk_fn on_chunk,
		   void *ctx, struct al_err *err)
{
	unsigned char buf[ATTACH_CHUNK];
	bool got = false;
	size_t n;
	CURLcode rc;
	int i;

	for (i = 0; i < ATTACH_ROUNDS; i++) {
		n = 0;
		rc = docker_attach_take(a, buf, sizeof buf, &n);
		if (rc == CURLE_AGAIN)
			return got ? ATTACH_OK : ATTACH_AGAIN;
		if (rc != CURLE_OK) {
			al_fail(err, "docker: attach: receive failed: %s", curl_easy_strerror(rc));
			return ATTACH_ERROR;
		}
		/* At EOF recv keeps answering 0, so the next call reports it. */
		if (n == 0)
			return got ? ATTACH_OK : ATTACH_EOF;
		got = true;
		if (docker_attach_feed(a, buf, n, on_chunk, ctx, err) == ATTACH_ERROR)
			return ATTACH_ERROR;
	}
	return ATTACH_OK;
}

int
docker_attach_write(struct docker_attach *a, const void *buf, size_t len,
		    int timeout_ms, struct al_err *err)
{
	if (a->stdin_closed)
		return al_fail(err, "docker: attach: stdin already closed");
	return docker_attach_send(a, buf, len, clock_mono_ms() + timeout_ms, err);
}

int
docker_attach_close_stdin(struct docker_attach *a)
{
	if (a->stdin_closed)
		return 0;
	if (shutdown(a->fd, SHUT_WR) < 0)
		return -1;
	a->stdin_closed = true;
	return 0;
}

void
docker_attach_close(struct docker_attach *a)
{
	if (!a)
		return;
	if (a->curl)
		curl_easy_cleanup(a->curl);
	free(a);
}

int
docker_attach_replay(const unsigned char *bytes, size_t len, size_t chunk,
		     docker_chunk_fn on_chunk, void *ctx, struct al_err *err)
{
	struct docker_attach a = { .fd = CURL_SOCKET_BAD, .replaying = true, .replay = bytes,
				   .replay_len = len, .replay_chunk = chunk };
	enum attach_io io = ATTACH_OK;
	size_t i;

	if ((len && !bytes) || chunk == 0 || !on_chunk)
		return al_fail(err, "docker: attach: replay: bad arguments");
	docker_demux_init(&a.dm);
	if (docker_attach_handshake(&a, "replay", DOCKER_TIMEOUT_MS, err) < 0)
		return -1;
	/* Every ATTACH_OK took at least one byte. */
	for (i = 0; i <= len && io == ATTACH_OK; i++)
		io = docker_attach_read(&a, on_chunk, ctx, err);
	return io == ATTACH_EOF ? 0 : -1;
}
