#include "docker.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <curl/curl.h>

/* A JSON answer larger than this is not something the daemon sends us. */
#define DOCKER_REPLY_MAX	(32u << 20)
#define DOCKER_NAME_MAX		128
#define DOCKER_MESSAGE_MAX	120
#define DOCKER_PATH_MAX		4096
#define DOCKER_PATH_SHOWN	96	/* how much of a path an error message repeats */
#define DOCKER_BUF_FIRST	4096
#define DOCKER_BUILD_REPLY_MAX	(1u << 20)	/* progress lines; q=1 sends few */

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

/* A plain name, or an image id "sha256:<64 hex>". */
static bool
docker_image_valid(const char *s)
{
	size_t i;

	if (!s || strncmp(s, "sha256:", 7) != 0)
		return docker_name_valid(s);
	for (i = 7; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 7 + 64;
}

static void
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

static int
docker_path_len(const char *path)
{
	size_t n = strcspn(path, "?");

	return (int)(n < DOCKER_PATH_SHOWN ? n : DOCKER_PATH_SHOWN);
}

static int
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

static bool
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
	size_t n = size * nmemb, cap;
	unsigned char *data;

	if (n == 0)
		return 0;	/* nothing to keep, and no buffer yet to copy into */
	if (n > b->max - b->len) {
		b->overflow = true;
		return 0;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap : DOCKER_BUF_FIRST;
		while (cap < b->len + n)
			cap = cap > b->max / 2 ? b->max : cap * 2;
		if (!(data = realloc(b->data, cap))) {
			b->oom = true;
			return 0;
		}
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	return n;
}

static void
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
static int
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
static int
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

/* --- endpoints ----------------------------------------------------------- */

static int
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

int
docker_image_inspect(struct docker *d, const char *image, json_t **out, struct al_err *err)
{
	char path[256];

	*out = NULL;
	if (!docker_image_valid(image))
		return al_fail(err, "docker: invalid image reference");
	snprintf(path, sizeof path, "/images/%s/json", image);
	return docker_get_object(d, path, out, err);
}

/* "/containers/<id><tail>" for a checked id. */
static int
docker_container_path(char *path, size_t size, const char *id, const char *tail,
		      struct al_err *err)
{
	int n;

	if (!docker_name_valid(id))
		return al_fail(err, "docker: invalid container id or name");
	n = snprintf(path, size, "/containers/%s%s", id, tail);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: container path too long");
	return 0;
}

static bool
docker_hex_prefix(const char *s)
{
	return s && strspn(s, "0123456789abcdef") >= DOCKER_ID_MAX - 1;
}

static bool
docker_hex_id(const char *s)
{
	return docker_hex_prefix(s) && s[DOCKER_ID_MAX - 1] == '\0';
}

int
docker_create(struct docker *d, const char *name, const json_t *body,
	      char id[DOCKER_ID_MAX], struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32] = "/containers/create";
	json_t *reply = NULL;
	const char *got;
	int rc = -1;

	id[0] = '\0';
	if (!body)
		return al_fail(err, "docker: create: no body");
	if (name && !docker_name_valid(name))
		return al_fail(err, "docker: create: invalid container name");
	if (name)
		snprintf(path, sizeof path, "/containers/create?name=%s", name);
	if (docker_request(d, "POST", path, body, NULL, &reply, err) < 0)
		return -1;
	got = json_string_value(json_object_get(reply, "Id"));
	if (docker_hex_id(got)) {
		memcpy(id, got, DOCKER_ID_MAX);
		rc = 0;
	} else {
		al_fail(err, "docker: POST /containers/create: answer has no valid Id");
	}
	json_decref(reply);
	return rc;
}

int
docker_inspect(struct docker *d, const char *id, json_t **out, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];

	*out = NULL;
	if (docker_container_path(path, sizeof path, id, "/json", err) < 0)
		return -1;
	return docker_get_object(d, path, out, err);
}

int
docker_start(struct docker *d, const char *id, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];

	if (docker_container_path(path, sizeof path, id, "/start", err) < 0)
		return -1;
	return docker_request(d, "POST", path, NULL, NULL, NULL, err);
}

static int
docker_wait_result(const json_t *reply, long *exit_code, struct al_err *err)
{
	const json_t *code = json_object_get(reply, "StatusCode");
	const char *msg = json_string_value(json_object_get(json_object_get(reply, "Error"), "Message"));
	char text[DOCKER_MESSAGE_MAX + 1];

	if (msg && msg[0]) {
		docker_printable(msg, text, sizeof text);
		return al_fail(err, "docker: wait: %s", text);
	}
	if (!json_is_integer(code))
		return al_fail(err, "docker: wait: answer has no StatusCode");
	*exit_code = (long)json_integer_value(code);
	return 0;
}

int
docker_wait_for(struct docker *d, const char *id, long timeout_ms, long *exit_code,
		bool *timed_out, struct al_err *err)
{
	struct docker_call c = { "POST", NULL, NULL, 0, timeout_ms, DOCKER_REPLY_MAX, NULL };
	char path[DOCKER_NAME_MAX + 64];
	json_t *reply = NULL;
	int64_t t0 = clock_mono_ms();
	int rc;

	*exit_code = -1;
	*timed_out = false;
	if (docker_container_path(path, sizeof path, id, "/wait?condition=not-running", err) < 0)
		return -1;
	c.path = path;
	if (docker_call_json(d, &c, NULL, &reply, err) < 0) {
		*timed_out = clock_mono_ms() - t0 >= timeout_ms;
		return -1;
	}
	rc = docker_wait_result(reply, exit_code, err);
	json_decref(reply);
	return rc;
}

int
docker_wait(struct docker *d, const char *id, long *exit_code, struct al_err *err)
{
	bool timed_out;

	return docker_wait_for(d, id, d->timeout_ms, exit_code, &timed_out, err);
}

int
docker_gone(struct docker *d, const char *id, bool *gone, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 32];
	long status = 0;

	*gone = false;
	if (docker_container_path(path, sizeof path, id, "/json", err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, &status, NULL, err) == 0)
		return 0;
	if (status != 404)
		return -1;
	al_err_clear(err);
	*gone = true;
	return 0;
}

int
docker_stop(struct docker *d, const char *id, int t_seconds, struct al_err *err)
{
	struct docker_call c = { "POST", NULL, NULL, 0, d->timeout_ms, DOCKER_REPLY_MAX, NULL };
	char path[DOCKER_NAME_MAX + 64], tail[32];

	if (t_seconds < 0)
		t_seconds = 0;
	snprintf(tail, sizeof tail, "/stop?t=%d", t_seconds);
	if (docker_container_path(path, sizeof path, id, tail, err) < 0)
		return -1;
	/* The daemon waits t seconds before it kills; our deadline must outlast it. */
	c.path = path;
	c.timeout_ms += (long)t_seconds * 1000;
	return docker_call_json(d, &c, NULL, NULL, err);
}

static bool
docker_signal_valid(const char *s)
{
	size_t n = s ? strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") : 0;

	return n > 0 && n <= 16 && s[n] == '\0';
}

int
docker_kill(struct docker *d, const char *id, const char *signal, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 64], tail[40];

	if (!docker_signal_valid(signal))
		return al_fail(err, "docker: kill: invalid signal name");
	snprintf(tail, sizeof tail, "/kill?signal=%s", signal);
	if (docker_container_path(path, sizeof path, id, tail, err) < 0)
		return -1;
	return docker_request(d, "POST", path, NULL, NULL, NULL, err);
}

int
docker_remove(struct docker *d, const char *id, bool missing_ok, struct al_err *err)
{
	char path[DOCKER_NAME_MAX + 64];
	long status;

	if (docker_container_path(path, sizeof path, id, "?force=1&v=1", err) < 0)
		return -1;
	if (docker_request(d, "DELETE", path, NULL, &status, NULL, err) == 0)
		return 0;
	if (status == 404 && missing_ok) {
		al_err_clear(err);
		return 0;
	}
	return -1;
}

/* "<head>filters=<urlencoded {"label":[label]}>"; head ends in '?' or '&'. */
static int
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

int
docker_list_by_label(struct docker *d, const char *label, json_t **out, struct al_err *err)
{
	char path[DOCKER_PATH_MAX];

	*out = NULL;
	if (!label || !label[0])
		return al_fail(err, "docker: list: empty label");
	if (docker_label_path(d, "/containers/json?all=1&", label, path, sizeof path, err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, NULL, out, err) < 0)
		return -1;
	if (!json_is_array(*out)) {
		json_decref(*out);
		*out = NULL;
		return al_fail(err, "docker: GET /containers/json: answer is not a list");
	}
	return 0;
}

/* --- images: build and find by label -------------------------------------- */

/* "sha256:<64 hex>" (optionally followed by one newline) into 64 hex. */
static bool
docker_image_hex(const char *s, char id[DOCKER_ID_MAX])
{
	if (!s || strncmp(s, "sha256:", 7) != 0 || !docker_hex_prefix(s + 7))
		return false;
	if (s[7 + DOCKER_ID_MAX - 1] != '\0' && strcmp(s + 7 + DOCKER_ID_MAX - 1, "\n") != 0)
		return false;
	memcpy(id, s + 7, DOCKER_ID_MAX - 1);
	id[DOCKER_ID_MAX - 1] = '\0';
	return true;
}

/* The newest image of a /images/json list; 1 when the list is empty. */
static int
docker_newest_image(const json_t *list, char id[DOCKER_ID_MAX], struct al_err *err)
{
	json_int_t best = -1;
	const json_t *img;
	size_t i;

	json_array_foreach(list, i, img) {
		json_int_t created = json_integer_value(json_object_get(img, "Created"));
		char hex[DOCKER_ID_MAX];

		if (!docker_image_hex(json_string_value(json_object_get(img, "Id")), hex))
			return al_fail(err, "docker: GET /images/json: an entry has no valid Id");
		if (created > best) {
			best = created;
			memcpy(id, hex, DOCKER_ID_MAX);
		}
	}
	return json_array_size(list) == 0 ? 1 : 0;
}

int
docker_image_by_label(struct docker *d, const char *label, char id[DOCKER_ID_MAX],
		      struct al_err *err)
{
	char path[DOCKER_PATH_MAX];
	json_t *list = NULL;
	int rc;

	id[0] = '\0';
	if (!label || !label[0])
		return al_fail(err, "docker: images: empty label");
	if (docker_label_path(d, "/images/json?", label, path, sizeof path, err) < 0)
		return -1;
	if (docker_request(d, "GET", path, NULL, NULL, &list, err) < 0)
		return -1;
	if (!json_is_array(list))
		rc = al_fail(err, "docker: GET /images/json: answer is not a list");
	else
		rc = docker_newest_image(list, id, err);
	json_decref(list);
	return rc;
}

/* Label keys as Docker recommends them: lowercase, digits, '.', '-'. */
static bool
docker_label_ok(const char *key, const char *value)
{
	size_t i;

	if (!key || !key[0] || strlen(key) > DOCKER_NAME_MAX ||
	    strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789.-") != strlen(key))
		return false;
	for (i = 0; value && value[i]; i++)
		if (i >= DOCKER_NAME_MAX || value[i] < 0x20 || value[i] >= 0x7f)
			return false;
	return value != NULL;
}

/* "/build?q=1&rm=1&forcerm=1&labels=<urlencoded {key: value}>" */
static int
docker_build_path(struct docker *d, const char *key, const char *value, char *path,
		  size_t size, struct al_err *err)
{
	json_t *labels = json_pack("{s:s}", key, value);
	char *text = labels ? json_dumps(labels, JSON_COMPACT) : NULL;
	char *esc = text ? curl_easy_escape(d->curl, text, 0) : NULL;
	int n = esc ? snprintf(path, size, "/build?q=1&rm=1&forcerm=1&labels=%s", esc) : -1;

	curl_free(esc);
	free(text);
	json_decref(labels);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: build: cannot encode the label");
	return 0;
}

/*
 * One line of the build's progress stream. An error line is the daemon's
 * own text about our Dockerfile, so it may be repeated (bounded, printable).
 */
static int
docker_build_line(const char *line, size_t n, char id[DOCKER_ID_MAX], struct al_err *err)
{
	json_t *o = json_loadb(line, n, 0, NULL);
	const json_t *detail;
	const char *msg;
	char text[DOCKER_MESSAGE_MAX + 1];
	int rc = 0;

	if (!json_is_object(o)) {
		json_decref(o);
		return al_fail(err, "docker: POST /build: answer is not JSON lines");
	}
	detail = json_object_get(o, "errorDetail");
	msg = json_string_value(json_object_get(detail, "message"));
	if (!msg)
		msg = json_string_value(json_object_get(o, "error"));
	if (msg || detail) {
		docker_printable(msg ? msg : "", text, sizeof text);
		rc = al_fail(err, "docker: POST /build: build failed: %s", text);
	} else if (!docker_image_hex(json_string_value(json_object_get(
			   json_object_get(o, "aux"), "ID")), id)) {
		/* With q=1 some daemons send the ID only as a stream line. */
		docker_image_hex(json_string_value(json_object_get(o, "stream")), id);
	}
	json_decref(o);
	return rc;
}

static bool
docker_blank(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\r' && p[i] != '\t')
			return false;
	return true;
}

static int
docker_build_answer(const struct docker_buf *b, char id[DOCKER_ID_MAX], struct al_err *err)
{
	/* An empty answer has no buffer at all: no arithmetic on NULL. */
	const char *p = (const char *)b->data, *end = p ? p + b->len : NULL;

	/* Bounded: the answer itself is at most DOCKER_BUILD_REPLY_MAX bytes. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (!docker_blank(p, n) && docker_build_line(p, n, id, err) < 0)
			return -1;
		p += n + 1;
	}
	if (!id[0])
		return al_fail(err, "docker: POST /build: answer has no image ID");
	return 0;
}

int
docker_build(struct docker *d, const void *tar, size_t len, const char *label_key,
	     const char *label_value, char id[DOCKER_ID_MAX], struct al_err *err)
{
	struct docker_call c = { "POST", NULL, tar, len, DOCKER_BUILD_TIMEOUT_MS,
				 DOCKER_BUILD_REPLY_MAX, "application/x-tar" };
	char path[DOCKER_PATH_MAX];
	struct docker_buf resp;
	long st;
	int rc;

	id[0] = '\0';
	if (!tar || len == 0)
		return al_fail(err, "docker: build: empty context");
	if (!docker_label_ok(label_key, label_value))
		return al_fail(err, "docker: build: invalid label");
	if (docker_build_path(d, label_key, label_value, path, sizeof path, err) < 0)
		return -1;
	c.path = path;
	if (docker_perform(d, &c, &resp, &st, err) < 0)
		return -1;
	if (!docker_status_ok(st))
		rc = docker_status_fail(&c, st, &resp, err);
	else
		rc = docker_build_answer(&resp, id, err);
	if (rc < 0)
		id[0] = '\0';
	docker_buf_free(&resp);
	return rc;
}

static int
docker_archive_path(struct docker *d, const char *id, const char *path, char *out,
		    size_t size, struct al_err *err)
{
	char *esc;
	int n;

	if (!docker_name_valid(id))
		return al_fail(err, "docker: invalid container id or name");
	if (!(esc = curl_easy_escape(d->curl, path, 0)))
		return al_fail(err, "docker: archive: out of memory");
	n = snprintf(out, size, "/containers/%s/archive?path=%s", id, esc);
	curl_free(esc);
	if (n < 0 || (size_t)n >= size)
		return al_fail(err, "docker: archive: path too long");
	return 0;
}

int
docker_archive_get(struct docker *d, const char *id, const char *path,
		   size_t max, unsigned char **buf, size_t *len,
		   struct al_err *err)
{
	struct docker_call c = { "GET", NULL, NULL, 0, d->timeout_ms, max, NULL };
	char url_path[DOCKER_PATH_MAX];
	struct docker_buf resp;
	long st;

	*buf = NULL;
	*len = 0;
	if (!path || !path[0] || max == 0)
		return al_fail(err, "docker: archive: empty path or zero limit");
	if (docker_archive_path(d, id, path, url_path, sizeof url_path, err) < 0)
		return -1;
	c.path = url_path;
	if (docker_perform(d, &c, &resp, &st, err) < 0)
		return -1;
	if (st != 200) {
		docker_status_fail(&c, st, &resp, err);
		docker_buf_free(&resp);
		return -1;
	}
	*buf = resp.data;
	*len = resp.len;
	return 0;
}
