#include "docker.h"
#include "docker_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <curl/curl.h>

#include "grow.h"

#define DOCKER_PATH_SHOWN	96	/* how much of a path an error message repeats */
#define DOCKER_BUF_FIRST	4096

/* --- names and messages -------------------------------------------------- */

static bool
docker_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

bool
docker_name_valid(const char *s)
{
	size_t i;

	/* A leading alnum also rules out "." and "..", which curl would fold away. */
	if (!s || !docker_name_char(s[0]) || s[0] == '_' || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 1; s[i]; i++)
		if (i >= DOCKER_NAME_MAX || !docker_name_char(s[i]))
			return false;
	return true;
}

bool
docker_hex_prefix(const char *s)
{
	return s && strspn(s, "0123456789abcdef") >= DOCKER_ID_MAX - 1;
}

void
docker_printable(const char *in, char *out, size_t outsz)
{
	size_t i, n = 0, max = outsz - 1 < DOCKER_MESSAGE_MAX ? outsz - 1 : DOCKER_MESSAGE_MAX;

	for (i = 0; in[i] && n < max; i++) {
		unsigned char c = (unsigned char)in[i];

		/* The daemon echoes request values; never pass control bytes on. */
		out[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[n] = '\0';
	if (in[i] && n >= 3)
		memcpy(out + n - 3, "...", 3);
}

/* A plain-text body's first line; JSON that lacks "message" says nothing. */
static void
docker_error_line(const unsigned char *body, size_t len, char *out, size_t outsz)
{
	char line[DOCKER_MESSAGE_MAX + 2];
	size_t n = 0;

	if (body[0] == '{' || body[0] == '[')
		return;
	while (n < len && n < sizeof line - 1 && body[n] != '\r' && body[n] != '\n') {
		line[n] = body[n] ? (char)body[n] : '?';
		n++;
	}
	line[n] = '\0';
	docker_printable(line, out, outsz);
}

void
docker_error_text(const unsigned char *body, size_t len, char *out, size_t outsz)
{
	const char *msg;
	json_t *root;

	if (!out || outsz == 0)
		return;
	out[0] = '\0';
	if (!body || len == 0)
		return;
	root = json_loadb((const char *)body, len, JSON_DISABLE_EOF_CHECK, NULL);
	msg = json_string_value(json_object_get(root, "message"));
	if (msg)
		docker_printable(msg, out, outsz);
	else if (!root)
		docker_error_line(body, len, out, outsz);
	json_decref(root);
}

int
docker_path_len(const char *path)
{
	size_t n = strcspn(path, "?");

	return (int)(n < DOCKER_PATH_SHOWN ? n : DOCKER_PATH_SHOWN);
}

int
docker_status_fail(const struct docker_call *c, long status,
		   const struct docker_buf *b, struct al_err *err)
{
	char msg[DOCKER_MESSAGE_MAX + 1];

	docker_error_text(b->data, b->len, msg, sizeof msg);
	if (!msg[0])
		return al_fail(err, "docker: %s %.*s: HTTP %ld", c->method,
			       docker_path_len(c->path), c->path, status);
	return al_fail(err, "docker: %s %.*s: HTTP %ld: %s", c->method,
		       docker_path_len(c->path), c->path, status, msg);
}

bool
docker_status_ok(long status)
{
	return (status >= 200 && status < 300) || status == 304;
}

/* --- the handle ---------------------------------------------------------- */

struct docker *
docker_open(const char *socket_path, long timeout_ms, struct al_err *err)
{
	struct sockaddr_un sun;
	struct docker *d;

	if (!socket_path)
		socket_path = DOCKER_SOCKET_DEFAULT;
	if (!socket_path[0] || strlen(socket_path) >= sizeof sun.sun_path) {
		al_fail(err, "docker: socket path is empty or too long");
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (!d || !(d->socket_path = strdup(socket_path)) || !(d->curl = curl_easy_init())) {
		docker_close(d);
		al_fail(err, "docker: out of memory");
		return NULL;
	}
	d->timeout_ms = timeout_ms > 0 ? timeout_ms : DOCKER_TIMEOUT_MS;
	return d;
}

struct docker *
docker_open_replay(long status, const void *body, size_t len, struct al_err *err)
{
	struct docker *d;

	if (status < 100 || status > 599 || (len && !body)) {
		al_fail(err, "docker: replay: bad arguments");
		return NULL;
	}
	d = docker_open("/replay", 0, err);
	if (!d)
		return NULL;
	d->replay = body;
	d->replay_len = len;
	d->replay_status = status;
	return d;
}

void
docker_close(struct docker *d)
{
	if (!d)
		return;
	if (d->curl)
		curl_easy_cleanup(d->curl);
	free(d->socket_path);
	free(d);
}

const char *
docker_socket_path(const struct docker *d)
{
	return d->socket_path;
}

/* --- one transfer -------------------------------------------------------- */

static size_t
docker_buf_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct docker_buf *b = ud;
	size_t n = size * nmemb;

	if (n == 0)
		return 0;	/* nothing to keep, and no buffer yet to copy into */
	if (n > b->max - b->len) {
		b->overflow = true;
		return 0;
	}
	if (grow(&b->data, &b->cap, b->len + n, 1, DOCKER_BUF_FIRST, b->max) < 0) {
		b->oom = true;
		return 0;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	return n;
}

void
docker_buf_free(struct docker_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

/*
 * Headers for the call, or NULL with *failed clear when none are needed.
 * curl would label an empty POST as a form; drop that Content-Type.
 */
static struct curl_slist *
docker_headers(const struct docker_call *c, bool *failed)
{
	struct curl_slist *h = NULL, *t;
	const char *lines[2] = { "Content-Type:", "Expect:" };
	char type[64];
	size_t i, n = 1;

	*failed = false;
	if (c->body) {
		snprintf(type, sizeof type, "Content-Type: %s",
			 c->content_type ? c->content_type : "application/json");
		lines[0] = type;
		n = 2;
	} else if (strcmp(c->method, "POST") != 0) {
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!(t = curl_slist_append(h, lines[i]))) {
			curl_slist_free_all(h);
			*failed = true;
			return NULL;
		}
		h = t;
	}
	return h;
}

static CURLcode
docker_set_method(CURL *h, const struct docker_call *c)
{
	bool post = strcmp(c->method, "POST") == 0;

	if (c->body || post) {
		CURLcode rc = curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);

		if (rc || (rc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body ? c->body : "")))
			return rc;
		return post ? CURLE_OK : curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
	}
	if (strcmp(c->method, "GET") == 0)
		return curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	if (strcmp(c->method, "HEAD") == 0)
		return curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	return curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
}

int
docker_curl_transport(void *curl, const char *socket_path, const char *url, char *errbuf)
{
	CURL *h = curl;

	return curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) ||
	       curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) ||
	       curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, socket_path) ||
	       curl_easy_setopt(h, CURLOPT_URL, url) ||
	       curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http") ? -1 : 0;
}

int
docker_curl_stream(void *curl, const char *socket_path, const char *url, char *errbuf,
		   size_t (*write)(char *, size_t, size_t, void *), void *data)
{
	CURL *h = curl;

	return docker_curl_transport(h, socket_path, url, errbuf) < 0 ||
	       curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, DOCKER_TIMEOUT_MS) ||
	       curl_easy_setopt(h, CURLOPT_HTTPGET, 1L) ||
	       curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write) ||
	       curl_easy_setopt(h, CURLOPT_WRITEDATA, data) ? -1 : 0;
}

/* Reset keeps the live connection, so every call starts from known options. */
static CURLcode
docker_setup(struct docker *d, const struct docker_call *c, const char *url,
	     struct curl_slist *hdrs, struct docker_buf *resp, char *errbuf)
{
	CURL *h = d->curl;
	long connect_ms = c->timeout_ms < d->timeout_ms ? c->timeout_ms : d->timeout_ms;

	curl_easy_reset(h);
	errbuf[0] = '\0';
	return docker_curl_transport(h, d->socket_path, url, errbuf) < 0 ||
	       curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms) ||
	       curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) ||
	       curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) ||
	       curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, docker_buf_write) ||
	       curl_easy_setopt(h, CURLOPT_WRITEDATA, resp) ||
	       docker_set_method(h, c) ? CURLE_FAILED_INIT : CURLE_OK;
}

static int
docker_transport_fail(struct docker *d, const struct docker_call *c, CURLcode rc,
		      const char *errbuf, struct al_err *err)
{
	/* curl's own text would name "localhost port 80", not the socket. */
	if (rc == CURLE_COULDNT_CONNECT)
		return al_fail(err, "docker: %s %.*s: cannot connect to %s", c->method,
			       docker_path_len(c->path), c->path, d->socket_path);
	return al_fail(err, "docker: %s %.*s: %s", c->method, docker_path_len(c->path),
		       c->path, errbuf[0] ? errbuf : curl_easy_strerror(rc));
}

/* An over-long error body still reports its status; the caller does that. */
static int
docker_perform_result(struct docker *d, const struct docker_call *c, CURLcode rc,
		      const struct docker_buf *resp, long status, const char *errbuf,
		      struct al_err *err)
{
	if (resp->overflow && docker_status_ok(status))
		return al_fail(err, "docker: %s %.*s: answer larger than %zu bytes", c->method,
			       docker_path_len(c->path), c->path, c->max);
	if (resp->oom)
		return al_fail(err, "docker: %s %.*s: out of memory", c->method,
			       docker_path_len(c->path), c->path);
	if (rc != CURLE_OK && !resp->overflow)
		return docker_transport_fail(d, c, rc, errbuf, err);
	return 0;
}

/* The replayed answer, delivered as curl would: in pieces, through the same sink. */
static CURLcode
docker_replay_transfer(const struct docker *d, struct docker_buf *resp, long *status)
{
	size_t off = 0, n;

	*status = d->replay_status;
	while (off < d->replay_len) {
		n = d->replay_len - off < CURL_MAX_WRITE_SIZE ? d->replay_len - off
							      : CURL_MAX_WRITE_SIZE;
		if (docker_buf_write((char *)(d->replay + off), 1, n, resp) != n)
			return CURLE_WRITE_ERROR;
		off += n;
	}
	return CURLE_OK;
}

/*
 * Run the call; any HTTP status is a completed transfer. On failure resp
 * is already freed.
 */
int
docker_perform(struct docker *d, const struct docker_call *c, struct docker_buf *resp,
	       long *status, struct al_err *err)
{
	char url[DOCKER_PATH_MAX + 64], errbuf[CURL_ERROR_SIZE];
	struct curl_slist *hdrs;
	bool failed;
	CURLcode rc;
	int n;

	*status = 0;
	memset(resp, 0, sizeof *resp);
	resp->max = c->max;
	n = snprintf(url, sizeof url, "http://localhost/%s%s", DOCKER_API_VERSION, c->path);
	if (n < 0 || (size_t)n >= sizeof url)
		return al_fail(err, "docker: %s: path too long", c->method);
	if (d->replay_status) {
		errbuf[0] = '\0';
		rc = docker_replay_transfer(d, resp, status);
		if (docker_perform_result(d, c, rc, resp, *status, errbuf, err) < 0) {
			docker_buf_free(resp);
			return -1;
		}
		return 0;
	}
	hdrs = docker_headers(c, &failed);
	if (failed || docker_setup(d, c, url, hdrs, resp, errbuf) != CURLE_OK) {
		curl_easy_reset(d->curl);
		curl_slist_free_all(hdrs);
		return al_fail(err, "docker: %s %.*s: cannot set up the request", c->method,
			       docker_path_len(c->path), c->path);
	}
	rc = curl_easy_perform(d->curl);
	curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, status);
	/* Drop the pointers to this stack frame; the connection stays cached. */
	curl_easy_reset(d->curl);
	curl_slist_free_all(hdrs);
	if (docker_perform_result(d, c, rc, resp, *status, errbuf, err) < 0) {
		docker_buf_free(resp);
		return -1;
	}
	return 0;
}

/* Perform, insist on 2xx/304, and parse a non-empty body as JSON. */
int
docker_call_json(struct docker *d, const struct docker_call *c, long *status,
		 json_t **reply, struct al_err *err)
{
	struct docker_buf resp;
	json_error_t jerr;
	long st;
	int rc = -1;

	if (docker_perform(d, c, &resp, &st, err) < 0)
		goto out;
	if (!docker_status_ok(st)) {
		docker_status_fail(c, st, &resp, err);
		goto out;
	}
	rc = 0;
	if (reply && resp.len > 0 &&
	    !(*reply = json_loadb((const char *)resp.data, resp.len, JSON_REJECT_DUPLICATES, &jerr)))
		rc = al_fail(err, "docker: %s %.*s: answer is not JSON (line %d)", c->method,
			     docker_path_len(c->path), c->path, jerr.line);
out:
	if (status)
		*status = st;
	docker_buf_free(&resp);
	return rc;
}

static bool
docker_path_ok(const char *path)
{
	size_t i;

	if (!path || path[0] != '/')
		return false;
	for (i = 0; path[i]; i++)
		if (path[i] <= 0x20 || path[i] >= 0x7f || path[i] == '#' || i >= DOCKER_PATH_MAX)
			return false;
	return true;
}

int
docker_request(struct docker *d, const char *method, const char *path,
	       const json_t *body, long *status, json_t **reply,
	       struct al_err *err)
{
	struct docker_call c = { method, path, NULL, 0, d->timeout_ms, DOCKER_REPLY_MAX, NULL };
	char *text = NULL;
	int rc;

	if (status)
		*status = 0;
	if (reply)
		*reply = NULL;
	if (!method || !method[0] || strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(method))
		return al_fail(err, "docker: invalid request method");
	if (!docker_path_ok(path))
		return al_fail(err, "docker: %s: invalid request path", method);
	if (body && !(text = json_dumps(body, JSON_COMPACT)))
		return al_fail(err, "docker: %s %.*s: cannot serialize the request body",
			       method, docker_path_len(path), path);
	c.body = text;
	c.body_len = text ? strlen(text) : 0;
	rc = docker_call_json(d, &c, status, reply, err);
	free(text);
	return rc;
}

/* "<head>filters=<urlencoded {"label":[label]}>"; head ends in '?' or '&'. */
int
docker_label_path(struct docker *d, const char *head, const char *label, char *path,
		  size_t size, struct al_err *err)
{
	json_t *filters = json_pack("{s:[s]}", "label", label);
	char *text = filters ? json_dumps(filters, JSON_COMPACT) : NULL;
	char *esc = text ? curl_easy_escape(d->curl, text, 0) : NULL;
	int n = esc ? snprintf(path, size, "%sfilters=%s", head, esc) : -1;

	curl_free(esc);
	free(text);
	json_decref(filters);
	if (n < 0)
		return al_fail(err, "docker: list: cannot encode the label filter");
	if ((size_t)n >= size)
		return al_fail(err, "docker: list: label filter too long");
	return 0;
}

/* --- endpoints ----------------------------------------------------------- */

int
docker_get_object(struct docker *d, const char *path, json_t **out, struct al_err *err)
{
	*out = NULL;
	if (docker_request(d, "GET", path, NULL, NULL, out, err) < 0)
		return -1;
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return al_fail(err, "docker: GET %.*s: answer is not an object",
			       docker_path_len(path), path);
	}
	return 0;
}

int
docker_ping(struct docker *d, struct al_err *err)
{
	struct docker_call c = { "GET", "/_ping", NULL, 0, d->timeout_ms, 4096, NULL };
	struct docker_buf resp;
	long st;
	int rc = 0;

	if (docker_perform(d, &c, &resp, &st, err) < 0)
		return -1;
	if (st != 200)
		rc = docker_status_fail(&c, st, &resp, err);
	docker_buf_free(&resp);
	return rc;
}

int
docker_version(struct docker *d, json_t **out, struct al_err *err)
{
	return docker_get_object(d, "/version", out, err);
}

int
docker_info(struct docker *d, json_t **out, struct al_err *err)
{
	return docker_get_object(d, "/info", out, err);
}
