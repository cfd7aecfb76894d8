/*
 * The OTLP exporter (engine/audit/otlp.c): the body it builds is checked against
 * its allowlist of audit fields (a canary in a field outside it must never
 * appear), and it is sent to a collector on loopback, which also answers
 * with errors, refuses connections or stays silent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "audit.h"
#include "otlp.h"

#include "sample_entry.h"

static const char *const allowed_keys[] = {
	"airlock.session_id", "airlock.call_id", "airlock.entry_id", "airlock.type",
	"airlock.tool", "airlock.decision", "airlock.rule", "airlock.revision",
	"airlock.latency_us", "airlock.request_hash", "airlock.response_hash",
	"airlock.class_before", "airlock.class_after",
};

static bool
key_allowed(const char *k)
{
	size_t i;

	for (i = 0; i < sizeof allowed_keys / sizeof allowed_keys[0]; i++)
		if (strcmp(allowed_keys[i], k) == 0)
			return true;
	return false;
}

static json_t *
only_span(json_t *body)
{
	json_t *rs = json_array_get(json_object_get(body, "resourceSpans"), 0);
	json_t *ss = json_array_get(json_object_get(rs, "scopeSpans"), 0);

	assert_int_equal(json_array_size(json_object_get(body, "resourceSpans")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(ss, "scope"),
							       "name")), "airlock.audit");
	assert_int_equal(json_array_size(json_object_get(ss, "spans")), 1);
	return json_array_get(json_object_get(ss, "spans"), 0);
}

static const char *
attr_value(json_t *span, const char *key, const char *kind)
{
	json_t *attrs = json_object_get(span, "attributes"), *a;
	size_t i;

	json_array_foreach(attrs, i, a)
		if (strcmp(json_string_value(json_object_get(a, "key")), key) == 0)
			return json_string_value(json_object_get(json_object_get(a, "value"), kind));
	return NULL;
}

static void
test_otlp_body_allowlist(void **state)
{
	static const char canary[] = "CANARY-detail-9a8b7c";
	static const char entry_id[] = "0123456789abcdeffedcba9876543210";
	struct audit_entry e = sample_entry("sess-otlp", "sink_ceiling");
	char *s, sess_hash[HASH_HEX_LEN + 1];
	json_t *body, *span, *a;
	size_t i, n = 0;
	uint64_t start, end;

	(void)state;
	e.detail = "{\"note\":\"CANARY-detail-9a8b7c\"}";
	e.response_hash = NULL;
	s = otlp_body(&e, entry_id);
	assert_non_null(s);
	assert_null(strstr(s, canary));
	assert_null(strstr(s, "detail"));
	body = json_loads(s, 0, NULL);
	assert_non_null(body);
	span = only_span(body);

	assert_string_equal(json_string_value(json_object_get(span, "name")), "airlock.call");
	assert_int_equal(json_integer_value(json_object_get(span, "kind")), 1);
	hash_sha256_hex(e.session_id, strlen(e.session_id), sess_hash);
	assert_memory_equal(json_string_value(json_object_get(span, "traceId")), sess_hash, 32);
	assert_int_equal(strlen(json_string_value(json_object_get(span, "traceId"))), 32);
	assert_string_equal(json_string_value(json_object_get(span, "spanId")), "0123456789abcdef");
	start = strtoull(json_string_value(json_object_get(span, "startTimeUnixNano")), NULL, 10);
	end = strtoull(json_string_value(json_object_get(span, "endTimeUnixNano")), NULL, 10);
	assert_int_equal(end - start, 1234 * 1000);

	json_array_foreach(json_object_get(span, "attributes"), i, a) {
		assert_true(key_allowed(json_string_value(json_object_get(a, "key"))));
		n++;
	}
	assert_int_equal(n, 12);	/* response_hash was NULL */
	assert_null(attr_value(span, "airlock.response_hash", "stringValue"));
	assert_string_equal(attr_value(span, "airlock.revision", "intValue"), "7");
	assert_string_equal(attr_value(span, "airlock.latency_us", "intValue"), "1234");
	assert_string_equal(attr_value(span, "airlock.rule", "stringValue"), "sink_ceiling");
	assert_string_equal(attr_value(span, "airlock.entry_id", "stringValue"), entry_id);
	json_decref(body);
	free(s);

	assert_null(otlp_body(&e, NULL));
	assert_null(otlp_body(&e, "not-hex-at-all!!"));
	e.type = NULL;
	assert_null(otlp_body(&e, entry_id));
}

static void
test_otlp_open_refuses(void **state)
{
	const char *bad[] = { "ftp://127.0.0.1:4318", "file:///etc/passwd", "127.0.0.1:4318",
			      "gopher://x", "", "unix:///run/otel.sock" };
	struct otlp *o = (struct otlp *)1;
	struct al_err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(otlp_open(bad[i], &o, &err), -1);
		assert_null(o);
		assert_string_equal(err.msg, "otlp: endpoint must be an http:// or https:// URL");
	}
	assert_int_equal(otlp_open(NULL, &o, &err), -1);
	assert_int_equal(otlp_open("https://collector.example:4318/", &o, &err), 0);
	otlp_close(o);
}

/* A collector on loopback: answers each request, keeps the bodies. */

#define MAX_BODIES 4

struct collector {
	int fd;
	int port;
	int want;		/* requests to serve before stopping */
	const char *answer;
	int got;
	char *bodies[MAX_BODIES];
	char heads[MAX_BODIES][1024];
};

static bool
wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

static size_t
content_length(const char *head)
{
	const char *p = head;

	while ((p = strchr(p, '\n')) != NULL) {
		p++;
		if (strncasecmp(p, "Content-Length:", 15) == 0)
			return strtoul(p + 15, NULL, 10);
	}
	return 0;
}

/* One request on a connection; false at EOF or on any trouble. */
static bool
serve_one(struct collector *c, int conn)
{
	char buf[8192], *end;
	size_t have = 0, need, head_len;
	ssize_t n;

	while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
		if (have == sizeof buf || !wait_readable(conn, 5000))
			return false;
		n = read(conn, buf + have, sizeof buf - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
	}
	head_len = (size_t)(end - buf) + 4;
	snprintf(c->heads[c->got], sizeof c->heads[0], "%.*s", (int)head_len, buf);
	need = head_len + content_length(c->heads[c->got]);
	while (have < need && have < sizeof buf && wait_readable(conn, 5000)) {
		n = read(conn, buf + have, sizeof buf - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
	}
	if (have < need)
		return false;
	c->bodies[c->got] = strndup(buf + head_len, need - head_len);
	c->got++;
	return write(conn, c->answer, strlen(c->answer)) == (ssize_t)strlen(c->answer);
}

static void *
collector_run(void *arg)
{
	struct collector *c = arg;
	int conn;

	while (c->got < c->want && wait_readable(c->fd, 5000)) {
		conn = accept(c->fd, NULL, NULL);
		if (conn < 0)
			break;
		while (c->got < c->want && serve_one(c, conn))
			;
		close(conn);
	}
	return NULL;
}

static int
listen_loopback(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static struct otlp *
open_port(int port)
{
	struct otlp *o;
	struct al_err err;
	char url[64];

	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	assert_int_equal(otlp_open(url, &o, &err), 0);
	return o;
}

/* The collector listening and serving on its thread; an exporter pointed at it. */
static struct otlp *
collector_start(struct collector *c, pthread_t *th)
{
	c->fd = listen_loopback(&c->port);
	assert_int_equal(pthread_create(th, NULL, collector_run, c), 0);
	return open_port(c->port);
}

/* The exporter closed, then the collector once it has served what it wanted. */
static void
collector_stop(struct collector *c, pthread_t th, struct otlp *o)
{
	otlp_close(o);
	pthread_join(th, NULL);
	close(c->fd);
}

static void
test_otlp_export_loopback(void **state)
{
	struct collector c = { .want = 2, .answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" };
	struct audit_entry e = sample_entry("sess-export", "sink_ceiling");
	pthread_t th;
	struct otlp *o;
	json_t *body;
	int i;

	(void)state;
	o = collector_start(&c, &th);
	e.detail = "{\"x\":\"CANARY-export-detail\"}";
	assert_int_equal(otlp_export(o, &e, "00112233445566778899aabbccddeeff"), 0);
	assert_int_equal(otlp_export(o, &e, "ffeeddccbbaa99887766554433221100"), 0);
	otlp_flush(o, 5000);
	assert_int_equal(otlp_sent(o), 2);
	assert_int_equal(otlp_failures(o), 0);
	collector_stop(&c, th, o);

	assert_int_equal(c.got, 2);
	for (i = 0; i < c.got; i++) {
		assert_int_equal(strncmp(c.heads[i], "POST /v1/traces HTTP/1.1\r\n", 26), 0);
		assert_non_null(strcasestr(c.heads[i], "\r\nContent-Type: application/json\r\n"));
		assert_null(strstr(c.bodies[i], "CANARY-export-detail"));
		body = json_loads(c.bodies[i], 0, NULL);
		assert_non_null(body);
		assert_string_equal(json_string_value(json_object_get(only_span(body), "name")),
				    "airlock.call");
		json_decref(body);
		free(c.bodies[i]);
	}
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Export with stdout and stderr captured; returns what was printed. */
static size_t
export_silently(struct otlp *o, const struct audit_entry *e, int *rc, double *secs)
{
	FILE *cap = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);
	struct stat st;
	double t0;

	assert_non_null(cap);
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(cap), 1);
	dup2(fileno(cap), 2);
	t0 = now_s();
	*rc = otlp_export(o, e, "00112233445566778899aabbccddeeff");
	*secs = now_s() - t0;
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	assert_int_equal(fstat(fileno(cap), &st), 0);
	fclose(cap);
	return (size_t)st.st_size;
}

/*
 * One export of the sample entry whose post fails: queued (0), nothing
 * printed (no answer body, no entry), then, once flushed, counted as a
 * failure and not as sent. Returns how long the export itself took (the
 * writer's wait).
 */
static double
assert_export_fails(struct otlp *o)
{
	struct audit_entry e = sample_entry("sess-export", "sink_ceiling");
	double secs;
	int rc;

	assert_int_equal(export_silently(o, &e, &rc, &secs), 0);
	assert_int_equal(rc, 0);
	otlp_flush(o, 5000);
	assert_int_equal(otlp_sent(o), 0);
	assert_int_equal(otlp_failures(o), 1);
	return secs;
}

/* The first failure's cause, as the operator is told it. */
static void
assert_failure_says(struct otlp *o, const char *want)
{
	char why[OTLP_FAILURE_MAX];

	otlp_first_failure(o, why);
	assert_string_equal(why, want);
}

static void
test_otlp_non_2xx_fails(void **state)
{
	struct collector c = { .want = 1,
		.answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops\n" };
	pthread_t th;
	struct otlp *o;

	(void)state;
	o = collector_start(&c, &th);
	assert_export_fails(o);		/* the collector's answer body is never printed */
	assert_failure_says(o, "the collector answered HTTP status 500");
	collector_stop(&c, th, o);
	assert_int_equal(c.got, 1);
	free(c.bodies[0]);
}

static void
test_otlp_closed_port(void **state)
{
	struct otlp *o;
	int port, fd;

	(void)state;
	fd = listen_loopback(&port);
	close(fd);		/* nothing listens there now */
	o = open_port(port);
	assert_export_fails(o);
	assert_failure_says(o, "Couldn't connect to server");
	otlp_close(o);
}

static void
test_otlp_silent_collector_times_out(void **state)
{
	struct otlp *o;
	double secs;
	int port, fd;

	(void)state;
	/*
	 * Listening but never accepting: the connect succeeds, no answer
	 * comes. The post gives up at its timeout, on the exporter's thread;
	 * the writer only queued (it waited the 2 s itself before, and every
	 * audit write with it: calls, the kill switch).
	 */
	fd = listen_loopback(&port);
	o = open_port(port);
	secs = assert_export_fails(o);
	assert_true(secs < 1.0);
	assert_failure_says(o, "Timeout was reached");
	otlp_close(o);
	close(fd);
}

/*
 * A collector that never answers: the queue fills (1024 spans) and what
 * comes beyond is dropped and counted, never waited for; close gives up
 * on the rest after its drain and counts them too.
 */
static void
test_otlp_silent_collector_queue_bounded(void **state)
{
	struct audit_entry e = sample_entry("sess-export", "sink_ceiling");
	struct otlp *o;
	char why[OTLP_FAILURE_MAX];
	int port, fd, i, queued = 0, dropped = 0;

	(void)state;
	fd = listen_loopback(&port);
	o = open_port(port);
	for (i = 0; i < 1100; i++) {
		if (otlp_export(o, &e, "00112233445566778899aabbccddeeff") == 0)
			queued++;
		else
			dropped++;
	}
	/* the one in flight, when the exporter took it already, leaves room for one more */
	assert_true(queued >= 1024 && queued <= 1025);
	assert_int_equal(dropped, 1100 - queued);
	otlp_first_failure(o, why);
	assert_string_equal(why, "the export queue was full (the collector is slow or silent)");
	assert_int_equal(otlp_failures(o), (size_t)dropped);
	assert_int_equal(otlp_sent(o), 0);
	otlp_close(o);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_otlp_body_allowlist),
		cmocka_unit_test(test_otlp_open_refuses),
		cmocka_unit_test(test_otlp_export_loopback),
		cmocka_unit_test(test_otlp_silent_collector_queue_bounded),
		cmocka_unit_test(test_otlp_non_2xx_fails),
		cmocka_unit_test(test_otlp_closed_port),
		cmocka_unit_test(test_otlp_silent_collector_times_out),
	};

	/* Once, before any thread exists, as main() does for the program. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return 1;
	return cmocka_run_group_tests_name("otlp", tests, NULL, NULL);
}
