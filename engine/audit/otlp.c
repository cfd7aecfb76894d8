#include "otlp.h"
#include "clock.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#define OTLP_TIMEOUT_MS		2000L
#define OTLP_QUEUE_MAX		1024	/* spans waiting; one more is dropped, counted */
#define OTLP_DRAIN_MS		5000	/* what close waits for the queue to empty */
#define OTLP_PATH		"/v1/traces"
#define OTLP_SPAN_KIND_INTERNAL	1
#define OTLP_TRACE_ID_LEN	32
#define OTLP_SPAN_ID_LEN	16

/*
 * The exporter posts from its own thread: a writer only queues a span, so
 * a collector that is slow or never answers delays no call, no session
 * and no operator's kill switch (each audit write exports one).
 */
struct otlp {
	pthread_mutex_t lock;	/* the queue, first_failure, busy, stopping */
	pthread_cond_t more;	/* a span queued, or stopping */
	pthread_cond_t idle;	/* the queue empty and nothing in flight */
	char *queue[OTLP_QUEUE_MAX];
	size_t head, n;
	bool busy, stopping;
	bool gave_up;		/* a flush ran out of time: close waits no more */
	pthread_t thread;
	bool thread_started;
	CURL *curl;		/* the exporter thread's alone */
	struct curl_slist *headers;
	char *url;
	atomic_size_t sent, failures;
	char first_failure[OTLP_FAILURE_MAX];	/* under lock; "" until one fails */
};

static void *exporter(void *arg);

/* The collector's answer is never stored, printed or parsed. */
static size_t
discard(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	(void)ptr;
	(void)userdata;
	return size * nmemb;
}

static char *
traces_url(const char *base)
{
	size_t n = strlen(base);
	char *url;

	while (n > 0 && base[n - 1] == '/')
		n--;
	url = malloc(n + sizeof OTLP_PATH);
	if (url) {
		memcpy(url, base, n);
		memcpy(url + n, OTLP_PATH, sizeof OTLP_PATH);
	}
	return url;
}

static int
setup_handle(struct otlp *o)
{
	CURL *c = o->curl;

	o->headers = curl_slist_append(NULL, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip before a larger span. */
	if (o->headers)
		o->headers = curl_slist_append(o->headers, "Expect:");
	if (!o->headers)
		return -1;
	return curl_easy_setopt(c, CURLOPT_URL, o->url) != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_HTTPHEADER, o->headers) != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, OTLP_TIMEOUT_MS) != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	       /* Spans go where the operator said, never through an ambient proxy. */
	       curl_easy_setopt(c, CURLOPT_NOPROXY, "*") != CURLE_OK ||
	       curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard) != CURLE_OK ? -1 : 0;
}

int
otlp_open(const char *url, struct otlp **out, struct al_err *err)
{
	struct otlp *o;

	*out = NULL;
	if (!url || (strncasecmp(url, "http://", 7) != 0 &&
		     strncasecmp(url, "https://", 8) != 0))
		return al_fail(err, "otlp: endpoint must be an http:// or https:// URL");
	o = calloc(1, sizeof *o);
	if (!o)
		return al_fail(err, "otlp: out of memory");
	if (pthread_mutex_init(&o->lock, NULL) != 0 || clock_cond_init(&o->idle) < 0) {
		free(o);	/* a default mutex holds nothing to release */
		return al_fail(err, "otlp: cannot initialise exporter");
	}
	pthread_cond_init(&o->more, NULL);
	o->url = traces_url(url);
	o->curl = curl_easy_init();
	if (!o->url || !o->curl || setup_handle(o) < 0 ||
	    pthread_create(&o->thread, NULL, exporter, o) != 0) {
		otlp_close(o);
		return al_fail(err, "otlp: cannot initialise exporter");
	}
	o->thread_started = true;
	*out = o;
	return 0;
}

void
otlp_flush(struct otlp *o, int timeout_ms)
{
	struct timespec until;

	if (!o)
		return;
	until = clock_deadline(CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&o->lock);
	while ((o->n > 0 || o->busy) && o->thread_started &&
	       pthread_cond_timedwait(&o->idle, &o->lock, &until) == 0)
		;
	o->gave_up = o->n > 0 || o->busy;
	pthread_mutex_unlock(&o->lock);
}

/* What waits when the exporter stops: dropped, each a failure. */
static void
drop_queued(struct otlp *o)
{
	for (; o->n > 0; o->n--, o->head = (o->head + 1) % OTLP_QUEUE_MAX) {
		free(o->queue[o->head]);
		atomic_fetch_add(&o->failures, 1);
	}
}

void
otlp_close(struct otlp *o)
{
	bool gave_up;

	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	gave_up = o->gave_up;
	pthread_mutex_unlock(&o->lock);
	otlp_flush(o, gave_up ? 0 : OTLP_DRAIN_MS);
	pthread_mutex_lock(&o->lock);
	o->stopping = true;
	pthread_cond_signal(&o->more);
	pthread_mutex_unlock(&o->lock);
	if (o->thread_started)
		pthread_join(o->thread, NULL);
	drop_queued(o);
	curl_easy_cleanup(o->curl);
	curl_slist_free_all(o->headers);
	free(o->url);
	pthread_cond_destroy(&o->more);
	pthread_cond_destroy(&o->idle);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/* Under lock: why the first failed export failed, kept for the operator. */
static void
note_failure(struct otlp *o, const char *fmt, ...)
{
	va_list ap;

	if (o->first_failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(o->first_failure, sizeof o->first_failure, fmt, ap);
	va_end(ap);
}

/*
 * On the exporter thread, without the lock; the failure's cause noted
 * under it. libcurl's text for a code is fixed (curl_easy_strerror), and
 * the status is a number: neither can carry what the span or the answer
 * held.
 */
static int
post(struct otlp *o, const char *body)
{
	const char *why = NULL;
	long status = 0;
	CURLcode rc;

	if (curl_easy_setopt(o->curl, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_easy_setopt(o->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			     (curl_off_t)strlen(body)) != CURLE_OK)
		why = "cannot set up the request";
	else if ((rc = curl_easy_perform(o->curl)) != CURLE_OK ||
		 (rc = curl_easy_getinfo(o->curl, CURLINFO_RESPONSE_CODE, &status)) != CURLE_OK)
		why = curl_easy_strerror(rc);
	/* The handle must not keep a pointer to memory freed next. */
	curl_easy_setopt(o->curl, CURLOPT_POSTFIELDS, NULL);
	if (!why && status >= 200 && status <= 299)
		return 0;
	pthread_mutex_lock(&o->lock);
	if (why)
		note_failure(o, "%s", why);
	else
		note_failure(o, "the collector answered HTTP status %ld", status);
	pthread_mutex_unlock(&o->lock);
	return -1;
}

static void *
exporter(void *arg)
{
	struct otlp *o = arg;
	char *body;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		while (o->n == 0 && !o->stopping) {
			o->busy = false;
			pthread_cond_broadcast(&o->idle);
			pthread_cond_wait(&o->more, &o->lock);
		}
		if (o->stopping)
			break;
		body = o->queue[o->head];
		o->head = (o->head + 1) % OTLP_QUEUE_MAX;
		o->n--;
		o->busy = true;
		pthread_mutex_unlock(&o->lock);
		atomic_fetch_add(post(o, body) == 0 ? &o->sent : &o->failures, 1);
		free(body);
		pthread_mutex_lock(&o->lock);
	}
	o->busy = false;
	pthread_cond_broadcast(&o->idle);
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

int
otlp_export(struct otlp *o, const struct audit_entry *e, const char *entry_id)
{
	const char *why = NULL;
	char *body;

	if (!o)
		return -1;
	body = e ? otlp_body(e, entry_id) : NULL;
	pthread_mutex_lock(&o->lock);
	if (!body)
		why = "cannot encode a span";
	else if (o->n == OTLP_QUEUE_MAX)
		why = "the export queue was full (the collector is slow or silent)";
	else {
		o->queue[(o->head + o->n) % OTLP_QUEUE_MAX] = body;
		o->n++;
		pthread_cond_signal(&o->more);
	}
	if (why)
		note_failure(o, "%s", why);
	pthread_mutex_unlock(&o->lock);
	if (!why)
		return 0;
	free(body);
	atomic_fetch_add(&o->failures, 1);
	return -1;
}

void
otlp_first_failure(struct otlp *o, char out[OTLP_FAILURE_MAX])
{
	out[0] = '\0';
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	memcpy(out, o->first_failure, OTLP_FAILURE_MAX);
	pthread_mutex_unlock(&o->lock);
}

size_t
otlp_sent(const struct otlp *o)
{
	return o ? atomic_load(&o->sent) : 0;
}

size_t
otlp_failures(const struct otlp *o)
{
	return o ? atomic_load(&o->failures) : 0;
}

/*
 * Span body. Everything below draws only from the allowlist: an audit
 * field that is not named here can never reach the collector.
 */
static int
add_attr(json_t *attrs, const char *key, const char *kind, json_t *value)
{
	json_t *a;

	if (!value)
		return -1;
	a = json_pack("{s:s, s:{s:o}}", "key", key, "value", kind, value);
	return a ? json_array_append_new(attrs, a) : -1;
}

/* OTLP/JSON carries 64-bit integers as decimal strings. */
static int
add_int(json_t *attrs, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	return add_attr(attrs, key, "intValue", json_string(buf));
}

static json_t *
span_attributes(const struct audit_entry *e, const char *entry_id)
{
	const struct { const char *key, *s; const int64_t *n; } allow[] = {
		{ "airlock.session_id", e->session_id, NULL },
		{ "airlock.call_id", e->call_id, NULL },
		{ "airlock.entry_id", entry_id, NULL },
		{ "airlock.type", e->type, NULL },
		{ "airlock.tool", e->tool, NULL },
		{ "airlock.decision", e->decision, NULL },
		{ "airlock.rule", e->rule, NULL },
		{ "airlock.revision", NULL, &e->revision },
		{ "airlock.latency_us", NULL, &e->latency_us },
		{ "airlock.request_hash", e->request_hash, NULL },
		{ "airlock.response_hash", e->response_hash, NULL },
		{ "airlock.class_before", e->class_before, NULL },
		{ "airlock.class_after", e->class_after, NULL },
	};
	json_t *attrs = json_array();
	size_t i;
	int rc = attrs ? 0 : -1;

	for (i = 0; rc == 0 && i < sizeof allow / sizeof allow[0]; i++) {
		if (allow[i].n)
			rc = add_int(attrs, allow[i].key, *allow[i].n);
		else if (allow[i].s)
			rc = add_attr(attrs, allow[i].key, "stringValue",
				      json_string(allow[i].s));
	}
	if (rc < 0) {
		json_decref(attrs);
		return NULL;
	}
	return attrs;
}

static bool
is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!s[i] || !strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* Span ids: the trace from the session, the span from the entry id. */
static int
span_ids(const struct audit_entry *e, const char *entry_id,
	 char trace[OTLP_TRACE_ID_LEN + 1], char span[OTLP_SPAN_ID_LEN + 1])
{
	char h[HASH_HEX_LEN + 1];

	if (!e->session_id || !entry_id || !is_hex(entry_id, OTLP_SPAN_ID_LEN))
		return -1;
	hash_sha256_hex(e->session_id, strlen(e->session_id), h);
	memcpy(trace, h, OTLP_TRACE_ID_LEN);
	trace[OTLP_TRACE_ID_LEN] = '\0';
	memcpy(span, entry_id, OTLP_SPAN_ID_LEN);
	span[OTLP_SPAN_ID_LEN] = '\0';
	return 0;
}

static void
span_times(int64_t latency_us, char start[24], char end[24])
{
	struct timespec now;
	uint64_t t_end, lat;

	clock_gettime(CLOCK_REALTIME, &now);
	t_end = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	lat = latency_us > 0 ? (uint64_t)latency_us * 1000u : 0;
	snprintf(end, 24, "%" PRIu64, t_end);
	snprintf(start, 24, "%" PRIu64, lat < t_end ? t_end - lat : 0);
}

static json_t *
span_json(const struct audit_entry *e, const char *entry_id)
{
	char trace[OTLP_TRACE_ID_LEN + 1], span[OTLP_SPAN_ID_LEN + 1];
	char start[24], end[24], name[80];
	json_t *attrs;
	int n;

	if (!e->type || span_ids(e, entry_id, trace, span) < 0)
		return NULL;
	n = snprintf(name, sizeof name, "airlock.%s", e->type);
	if (n < 0 || (size_t)n >= sizeof name)
		return NULL;
	attrs = span_attributes(e, entry_id);
	if (!attrs)
		return NULL;
	span_times(e->latency_us, start, end);
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:o}", "traceId", trace,
			 "spanId", span, "name", name, "kind", OTLP_SPAN_KIND_INTERNAL,
			 "startTimeUnixNano", start, "endTimeUnixNano", end,
			 "attributes", attrs);
}

char *
otlp_body(const struct audit_entry *e, const char *entry_id)
{
	json_t *span, *body;
	char *s;

	if (!e)
		return NULL;
	span = span_json(e, entry_id);
	if (!span)
		return NULL;
	body = json_pack("{s:[{s:{s:[{s:s, s:{s:s}}]}, s:[{s:{s:s}, s:[o]}]}]}",
			 "resourceSpans", "resource", "attributes", "key", "service.name",
			 "value", "stringValue", "airlock", "scopeSpans", "scope", "name",
			 "airlock.audit", "spans", span);
	if (!body)
		return NULL;
	s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	return s;
}
