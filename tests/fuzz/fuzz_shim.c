#include "fuzz.h"

#include <string.h>

#include "shim_rpc.h"

/*
 * The shim's JSON-RPC reader (shim/shim_rpc.h). The input is one MCP
 * client line, then (after a NUL, when there is one) one engine line.
 * Promises: every request gets at most one answer, which is one line of
 * JSON-RPC 2.0; a bridge line comes only from a tools/call and is exactly
 * {"operation": <a listed alias>, "arguments": <object>} within the
 * bridge's bounds; an engine line never breaks the state; a bridge reply
 * gets the same answer from shim_engine_answer as from shim_call_result.
 */

#define FRAME "{\"payload\":{\"k\":\"v\"},\"tools\":[" \
	"{\"name\":\"save\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}}," \
	"{\"name\":\"publish\",\"description\":\"\",\"inputSchema\":{}}]}"

static void
check_line(const char *line, bool is_call)
{
	size_t n = strlen(line);
	json_t *j;

	FUZZ_CHECK(n > 1 && line[n - 1] == '\n' && !memchr(line, '\n', n - 1));
	j = json_loadb(line, n - 1, JSON_REJECT_DUPLICATES, NULL);
	FUZZ_CHECK(json_is_object(j));
	if (is_call) {
		const char *op = json_string_value(json_object_get(j, "operation"));

		FUZZ_CHECK(n <= SHIM_LINE_MAX && json_object_size(j) == 2);
		FUZZ_CHECK(op && (strcmp(op, "save") == 0 || strcmp(op, "publish") == 0));
		FUZZ_CHECK(json_is_object(json_object_get(j, "arguments")));
	} else
		FUZZ_CHECK(strcmp(json_string_value(json_object_get(j, "jsonrpc")), "2.0") == 0);
	json_decref(j);
}

/* The parent's one-parse path gives what shim_call_result gives. */
static void
same_answer(struct shim_state *s, const json_t *id, const char *line, size_t len)
{
	char *res = NULL, *again;

	if (shim_engine_answer(s, line, len, id, &res) != SHIM_ENGINE_REPLY) {
		FUZZ_CHECK(res == NULL);
		return;
	}
	again = shim_call_result(id, line, len);
	FUZZ_CHECK(res && again && strcmp(res, again) == 0);
	free(res);
	free(again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shim_state *s = shim_state_new(FRAME, strlen(FRAME));
	const char *nul = memchr(data, '\0', size);
	size_t first = nul ? (size_t)(nul - (const char *)data) : size;
	struct shim_out o;
	char *res;

	FUZZ_CHECK(s != NULL);
	if (nul)
		shim_engine(s, nul + 1, size - first - 1);
	shim_handle(s, (const char *)data, first, &o);
	if (o.action == SHIM_REPLY)
		check_line(o.reply, false);
	if (o.action == SHIM_CALL) {
		check_line(o.call, true);
		if (nul && (res = shim_call_result(o.id, nul + 1, size - first - 1))) {
			check_line(res, false);
			free(res);
		}
		if (nul)
			same_answer(s, o.id, nul + 1, size - first - 1);
	}
	FUZZ_CHECK(o.action == SHIM_CALL ? o.call && o.id && !o.reply
					 : !o.call && (o.action == SHIM_REPLY) == (o.reply != NULL));
	shim_out_free(&o);
	FUZZ_CHECK(shim_listed(s) <= 2);
	shim_state_free(s);
	return 0;
}
