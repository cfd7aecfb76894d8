#include "fuzz.h"

#include <string.h>

#include "mcp.h"

/*
 * The MCP client's message handling (engine/mcp/mcp.h) through
 * mcp_start_replay: the input is everything an upstream writes on stdout
 * (initialize is request 1, tools/list 2, calls from 3 on). After the
 * start, up to three tools/call of "echo" read their answers from what is
 * left. Each result must be one of the outcomes, with text exactly when
 * the outcome is MCP_OK; errors are fixed text about the upstream.
 */

#define CALLS 3

static void
check_result(const struct mcp_call_result *res)
{
	FUZZ_CHECK(res->outcome >= MCP_OK && res->outcome <= MCP_FAULT);
	if (res->outcome != MCP_OK) {
		FUZZ_CHECK(res->text == NULL && res->text_len == 0);
		return;
	}
	FUZZ_CHECK(res->text != NULL && res->text[res->text_len] == '\0');
}

static void
check_calls(struct mcp_client *c)
{
	struct mcp_call_result res;
	struct mcp_stats st;
	struct al_err err;
	json_t *args = json_pack("{s:s}", "text", "hello");
	int i;

	FUZZ_CHECK(args != NULL);
	for (i = 0; i < CALLS; i++) {
		FUZZ_CHECK(mcp_call(c, "echo", args, 1000, &res, &err) == 0);
		check_result(&res);
		mcp_call_result_free(&res);
	}
	mcp_get_stats(c, &st);
	FUZZ_CHECK(st.calls == CALLS && st.stderr_bytes == 0);
	json_decref(args);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hash[HASH_HEX_LEN + 1];
	struct mcp_client *c = NULL;
	struct al_err err = { "" };

	if (mcp_start_replay("fuzz", data, size, &c, &err) < 0) {
		FUZZ_CHECK(c == NULL && strncmp(err.msg, "upstream fuzz", 13) == 0);
		FUZZ_CHECK(fuzz_printable(err.msg));
		return 0;
	}
	FUZZ_CHECK(strlen(mcp_negotiated_version(c)) > 0);
	if (mcp_tool_hash(c, "echo", hash) == 0)
		FUZZ_CHECK(strlen(hash) == HASH_HEX_LEN);
	check_calls(c);
	mcp_stop(c);
	return 0;
}
