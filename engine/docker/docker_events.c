#include "docker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

/* One event is a few hundred bytes; a longer line is not the daemon talking. */
#define EVENTS_LINE_MAX		(64u << 10)
#define EVENTS_MESSAGE_MAX	128

struct docker_events_ctx {
	CURL *curl;
	docker_event_fn on_event;
	void *ctx;
	const atomic_bool *stop;
	char *line;
	size_t len;
	long status;
	bool stopped;		/* on_event asked to stop */
	bool failed;		/* the stream broke the rules; err says how */
	struct al_err *err;
};

static int
docker_events_line(struct docker_events_ctx *ec)
{
	size_t len = ec->len;
	json_error_t jerr;
	json_t *event;
	int rc;

	ec->len = 0;
	while (len > 0 && (ec->line[len - 1] == '\r' || ec->line[len - 1] == ' '))
		len--;
	if (len == 0)
		return 0;
	event = json_loadb(ec->line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(event)) {
		json_decref(event);
		ec->failed = true;
		return al_fail(ec->err, "docker: events: an event is not a JSON object");
	}
	rc = ec->on_event(event, ec->ctx);
	json_decref(event);
	if (rc)
		ec->stopped = true;
	return 0;
}

/* Append to the line buffer; an over-long line is an error. */
static int
docker_events_append(struct docker_events_ctx *ec, const char *p, size_t n)
{
	if (n > EVENTS_LINE_MAX - ec->len) {
		ec->failed = true;
		return al_fail(ec->err, "docker: events: an event is longer than %u bytes",
			       EVENTS_LINE_MAX);
	}
	memcpy(ec->line + ec->len, p, n);
	ec->len += n;
	return 0;
}

/* Chunks do not follow event boundaries: split on newlines ourselves. */
static int
docker_events_split(struct docker_events_ctx *ec, const char *p, size_t n)
{
	const char *nl;
	size_t seg;

	while (n > 0 && !ec->stopped) {
		nl = memchr(p, '\n', n);
		seg = nl ? (size_t)(nl - p) : n;
		if (docker_events_append(ec, p, seg) < 0)
			return -1;
		p += seg;
		n -= seg;
		if (!nl)
			break;
		p++;
		n--;
		if (docker_events_line(ec) < 0)
			return -1;
	}
	return 0;
}

/* A refusal's body is kept (bounded) only for its "message". */
static void
docker_events_keep(struct docker_events_ctx *ec, const char *p, size_t n)
{
	size_t room = EVENTS_LINE_MAX - ec->len;

	if (n > room)
		n = room;
	memcpy(ec->line + ec->len, p, n);
	ec->len += n;
}

static size_t
docker_events_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct docker_events_ctx *ec = ud;
	size_t n = size * nmemb;

	if (ec->status == 0)
		curl_easy_getinfo(ec->curl, CURLINFO_RESPONSE_CODE, &ec->status);
	if (ec->status != 200) {
		docker_events_keep(ec, p, n);
		return n;
	}
	/* Returning short aborts the transfer at once, before another event. */
	if (docker_events_split(ec, p, n) < 0 || ec->stopped)
		return 0;
	return n;
}

static int
docker_events_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct docker_events_ctx *ec = ud;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return ec->stopped || (ec->stop && atomic_load(ec->stop));
}

static int
docker_events_setup(struct docker_events_ctx *ec, const char *socket_path,
		    const char *url, char *errbuf)
{
	CURL *h = ec->curl;

	return docker_curl_stream(h, socket_path, url, errbuf, docker_events_write, ec) < 0 ||
	       curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) ||
	       curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, docker_events_progress) ||
	       curl_easy_setopt(h, CURLOPT_XFERINFODATA, ec) ? -1 : 0;
}

static int
docker_events_url(CURL *h, const char *filters_json, char **url)
{
	static const char base[] = "http://localhost/" DOCKER_API_VERSION "/events";
	char *esc = NULL;
	int n;

	if (filters_json && !(esc = curl_easy_escape(h, filters_json, 0)))
		return -1;
	n = esc ? asprintf(url, "%s?filters=%s", base, esc) : asprintf(url, "%s", base);
	curl_free(esc);
	if (n < 0)
		*url = NULL;
	return n < 0 ? -1 : 0;
}

/* Why the stream ended: a stop we asked for is success, anything else is not. */
static int
docker_events_result(struct docker_events_ctx *ec, CURLcode rc, const char *errbuf,
		     const char *socket_path)
{
	char msg[EVENTS_MESSAGE_MAX];

	if (ec->failed)
		return -1;
	if (ec->stopped || (ec->stop && atomic_load(ec->stop)))
		return 0;
	if (rc == CURLE_COULDNT_CONNECT)
		return al_fail(ec->err, "docker: GET /events: cannot connect to %s", socket_path);
	if (rc != CURLE_OK)
		return al_fail(ec->err, "docker: GET /events: %s",
			       errbuf[0] ? errbuf : curl_easy_strerror(rc));
	if (ec->status != 200) {
		docker_error_text((const unsigned char *)ec->line, ec->len, msg, sizeof msg);
		return al_fail(ec->err, "docker: GET /events: HTTP %ld%s%s", ec->status,
			       msg[0] ? ": " : "", msg);
	}
	return al_fail(ec->err, "docker: GET /events: the daemon closed the stream");
}

int
docker_events(const char *socket_path, const char *filters_json,
	      docker_event_fn on_event, void *ctx, const atomic_bool *stop,
	      struct al_err *err)
{
	struct docker_events_ctx ec = { .on_event = on_event, .ctx = ctx, .stop = stop, .err = err };
	char errbuf[CURL_ERROR_SIZE] = "", *url = NULL;
	CURLcode rc = CURLE_FAILED_INIT;
	int ret = -1;

	if (!socket_path)
		socket_path = DOCKER_SOCKET_DEFAULT;
	if (!(ec.curl = curl_easy_init()) || !(ec.line = malloc(EVENTS_LINE_MAX)) ||
	    docker_events_url(ec.curl, filters_json, &url) < 0) {
		al_fail(err, "docker: events: out of memory");
		goto out;
	}
	if (docker_events_setup(&ec, socket_path, url, errbuf) < 0) {
		al_fail(err, "docker: events: cannot set up the request");
		goto out;
	}
	rc = curl_easy_perform(ec.curl);
	ret = docker_events_result(&ec, rc, errbuf, socket_path);
out:
	if (ec.curl)
		curl_easy_cleanup(ec.curl);
	free(url);
	free(ec.line);
	return ret;
}

int
docker_events_replay(long status, const char *body, size_t len, size_t chunk,
		     docker_event_fn on_event, void *ctx, struct al_err *err)
{
	struct docker_events_ctx ec = { .on_event = on_event, .ctx = ctx, .err = err };
	CURLcode rc = CURLE_OK;
	size_t off = 0, n;
	int ret;

	if (status < 100 || status > 599 || (len && !body) || chunk == 0 || !on_event)
		return al_fail(err, "docker: events: replay: bad arguments");
	if (!(ec.line = malloc(EVENTS_LINE_MAX)))
		return al_fail(err, "docker: events: out of memory");
	ec.status = status;
	/* As curl would: pieces into the write callback, a short return aborts. */
	while (off < len && rc == CURLE_OK) {
		n = len - off < chunk ? len - off : chunk;
		if (docker_events_write((char *)(body + off), 1, n, &ec) != n)
			rc = CURLE_WRITE_ERROR;
		off += n;
	}
	ret = docker_events_result(&ec, rc, "", "replay");
	free(ec.line);
	return ret;
}
