#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "docker.h"
#include "mcp.h"

/*
 * The replay seams the fuzzers drive (mcp_start_replay, docker_open_replay,
 * docker_attach_replay, docker_events_replay) behave as the live calls do
 * on the same bytes, and the inputs that once broke the engine under
 * clang's UBSan (arithmetic on a NULL buffer) now get their fixed errors.
 */

#define IMG_HEX "0c88912505e2c6cbb2108b07acd6e30665b153e491259ab2ee8babe6578e567c"
#define INIT "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n"
#define LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\"}]}}\n"
#define UPGRADED "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n" \
		 "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"

static int
mcp_replay(const char *out, struct mcp_client **c, struct al_err *err)
{
	return mcp_start_replay("replay", out, strlen(out), c, err);
}

/* A fresh client has no buffer yet: this once computed NULL + 0 (clang UBSan). */
static void
test_mcp_silent_server(void **state)
{
	struct mcp_client *c = (struct mcp_client *)&c;
	struct al_err err;

	(void)state;
	assert_int_equal(mcp_start_replay("replay", NULL, 0, &c, &err), -1);
	assert_null(c);
	assert_string_equal(err.msg, "upstream replay: initialize failed");
}

static void
test_mcp_session(void **state)
{
	static const char out[] = INIT LIST
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hel\"},"
		"{\"type\":\"image\",\"data\":\"AA==\"},{\"type\":\"text\",\"text\":\"lo\"}]}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":\"secret echo\"}}\n";
	struct mcp_call_result res;
	struct mcp_client *c;
	struct mcp_stats st;
	struct al_err err;
	char hash[HASH_HEX_LEN + 1];

	(void)state;
	assert_int_equal(mcp_replay(out, &c, &err), 0);
	assert_string_equal(mcp_negotiated_version(c), "2025-06-18");
	assert_int_equal(mcp_tool_hash(c, "echo", hash), 0);
	assert_int_equal(mcp_tool_hash(c, "other", hash), -1);
	assert_int_equal(mcp_call(c, "echo", NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, MCP_OK);
	assert_string_equal(res.text, "hello");
	assert_int_equal(res.other_items, 1);
	mcp_call_result_free(&res);
	assert_int_equal(mcp_call(c, "echo", NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, MCP_RPC_ERROR);
	assert_int_equal(res.error_code, -32602);
	assert_null(res.text);
	/* Everything is used up: the stream is lost, not waited for. */
	assert_int_equal(mcp_call(c, "echo", NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, MCP_FAULT);
	mcp_get_stats(c, &st);
	assert_int_equal(st.server_requests, 1);
	assert_int_equal(st.calls, 3);
	assert_int_equal(mcp_pid(c), 0);
	mcp_stop(c);
}

static void
test_mcp_refusals(void **state)
{
	struct mcp_client *c;
	struct al_err err;

	(void)state;
	assert_int_equal(mcp_replay("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600}}\n",
				    &c, &err), -1);
	assert_string_equal(err.msg, "upstream replay: initialize refused (code -32600)");
	assert_int_equal(mcp_replay("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"
				    "{\"protocolVersion\":\"1999-01-01\"}}\n", &c, &err), -1);
	assert_string_equal(err.msg, "upstream replay: unsupported protocol version");
	assert_int_equal(mcp_replay(INIT, &c, &err), -1);
	assert_string_equal(err.msg, "upstream replay: tools/list failed");
}

/* An empty 200 answer to /build once computed NULL + 0 (clang UBSan). */
static void
test_docker_build_empty_answer(void **state)
{
	static const unsigned char tar[512];
	char id[DOCKER_ID_MAX] = "x";
	struct al_err err;
	struct docker *d = docker_open_replay(200, NULL, 0, &err);

	(void)state;
	assert_non_null(d);
	assert_int_equal(docker_build(d, tar, sizeof tar, "io.airlock.test", "1", id, &err), -1);
	assert_string_equal(err.msg, "docker: POST /build: answer has no image ID");
	assert_string_equal(id, "");
	docker_close(d);
}

static void
test_docker_answers(void **state)
{
	static const char created[] = "{\"Id\":\"" IMG_HEX "\",\"Warnings\":[]}";
	static const char missing[] = "{\"message\":\"No such container: airlock-x\"}";
	static const char built[] = "{\"stream\":\"sha256:" IMG_HEX "\\n\"}\r\n";
	static const unsigned char tar[512];
	char id[DOCKER_ID_MAX];
	struct al_err err;
	struct docker *d;
	json_t *body = json_object();

	(void)state;
	d = docker_open_replay(201, created, strlen(created), &err);
	assert_int_equal(docker_create(d, "airlock-x", body, id, &err), 0);
	assert_string_equal(id, IMG_HEX);
	docker_close(d);
	d = docker_open_replay(404, missing, strlen(missing), &err);
	assert_int_equal(docker_start(d, "airlock-x", &err), -1);
	assert_string_equal(err.msg, "docker: POST /containers/airlock-x/start: HTTP 404: "
			    "No such container: airlock-x");
	docker_close(d);
	d = docker_open_replay(200, built, strlen(built), &err);
	assert_int_equal(docker_build(d, tar, sizeof tar, "io.airlock.test", "1", id, &err), 0);
	assert_string_equal(id, IMG_HEX);
	docker_close(d);
	assert_null(docker_open_replay(0, NULL, 0, &err));
	json_decref(body);
}

struct seen {
	char out[64];
	size_t len, err_bytes;
};

static int
on_chunk(enum docker_stream stream, const unsigned char *data, size_t len, void *ctx)
{
	struct seen *s = ctx;

	if (stream == DOCKER_STDERR) {
		s->err_bytes += len;
		return 0;
	}
	assert_true(s->len + len < sizeof s->out);
	memcpy(s->out + s->len, data, len);
	s->len += len;
	return 0;
}

static void
test_attach_replay(void **state)
{
	static const unsigned char stream[] = UPGRADED
		"\1\0\0\0\0\0\0\3hi\n" "\2\0\0\0\0\0\0\4oops" "\1\0\0\0\0\0\0\2ok";
	static const char refused[] = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n"
				      "{\"message\":\"No such container: airlock-x\"}\n";
	static const unsigned char bad[] = UPGRADED "\5\0\0\0\0\0\0\1x";
	struct seen s = { "", 0, 0 };
	struct al_err err;

	(void)state;
	/* One byte per receive: the header is read byte-exact, frames torn everywhere. */
	assert_int_equal(docker_attach_replay(stream, sizeof stream - 1, 1, on_chunk, &s, &err), 0);
	assert_int_equal(s.len, 5);
	assert_memory_equal(s.out, "hi\nok", 5);
	assert_int_equal(s.err_bytes, 4);
	assert_int_equal(docker_attach_replay((const unsigned char *)refused, sizeof refused - 1,
					      16384, on_chunk, &s, &err), -1);
	assert_string_equal(err.msg, "docker: POST /containers/attach: HTTP 404: "
			    "No such container: airlock-x");
	assert_int_equal(docker_attach_replay(bad, sizeof bad - 1, 7, on_chunk, &s, &err), -1);
	assert_string_equal(err.msg, "docker: attach: malformed stream frame");
	assert_int_equal(docker_attach_replay((const unsigned char *)"HTTP/1.1 101", 12, 3,
					      on_chunk, &s, &err), -1);
	assert_string_equal(err.msg, "docker: attach: the daemon closed the connection");
}

static int
on_event(const json_t *event, void *ctx)
{
	int *n = ctx;

	assert_true(json_is_object(event));
	return ++*n == 2;
}

static void
test_events_replay(void **state)
{
	static const char stream[] = "{\"Action\":\"start\"}\r\n\n{\"Action\":\"die\"}\n{\"Action\":\"destroy\"}\n";
	struct al_err err;
	int n = 0;

	(void)state;
	assert_int_equal(docker_events_replay(200, stream, sizeof stream - 1, 3, on_event, &n, &err), 0);
	assert_int_equal(n, 2);
	n = -10;
	assert_int_equal(docker_events_replay(200, stream, sizeof stream - 1, 5, on_event, &n, &err), -1);
	assert_string_equal(err.msg, "docker: GET /events: the daemon closed the stream");
	assert_int_equal(docker_events_replay(200, "[1]\n", 4, 64, on_event, &n, &err), -1);
	assert_string_equal(err.msg, "docker: events: an event is not a JSON object");
	assert_int_equal(docker_events_replay(400, "{\"message\":\"bad filter\"}", 24, 4, on_event,
					      &n, &err), -1);
	assert_string_equal(err.msg, "docker: GET /events: HTTP 400: bad filter");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcp_silent_server),
		cmocka_unit_test(test_mcp_session),
		cmocka_unit_test(test_mcp_refusals),
		cmocka_unit_test(test_docker_build_empty_answer),
		cmocka_unit_test(test_docker_answers),
		cmocka_unit_test(test_attach_replay),
		cmocka_unit_test(test_events_replay),
	};

	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
