#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mcp_session.h"

/*
 * What an MCP session sends the shim besides replies (engine/gateway/mcp_session.h):
 * the initial frame with the aliases as tools (hidden ones left out, the
 * operator's description first), the aliases listed at the start, and the
 * tools_changed line.
 */

#define CONFIG \
	"{\"upstreams\": {\"u\": {\"argv\": [\"/usr/bin/true\"]}}," \
	" \"tools\": {\"store\": {\"upstream\": \"u\", \"remote\": \"store\", \"data_class\": \"public\"," \
	"                       \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}," \
	"            \"mail\": {\"upstream\": \"u\", \"remote\": \"mail\", \"data_class\": \"public\"," \
	"                      \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}," \
	"            \"admin\": {\"upstream\": \"u\", \"remote\": \"admin\", \"data_class\": \"public\"," \
	"                       \"sink_ceiling\": \"public\", \"response_ceiling\": \"public\"}}," \
	" \"aliases\": {\"save\": {\"tool\": \"store\", \"description\": \"Keep a note.\"}," \
	"              \"send\": \"mail\", \"root\": {\"tool\": \"admin\", \"hidden\": true}}," \
	" \"agent\": {\"mcp\": true}}"

/* As the parser digests a listing: the description's bytes, the schema's canonical text. */
static bool
upstream_definition(void *ctx, int tool, struct mcp_tool_shown *out)
{
	const char *desc = tool == 1 ? "Send mail." : "Upstream's.";

	(void)ctx;
	out->desc = strdup(desc);
	out->desc_len = strlen(desc);
	out->schema = strdup("{\"properties\":{\"to\":{\"type\":\"string\"}},\"type\":\"object\"}");
	out->schema_len = strlen(out->schema);
	return true;
}

static void
load(struct airlock_config *c)
{
	json_t *root = json_loads(CONFIG, 0, NULL);
	struct al_err err = { "" };

	assert_non_null(root);
	config_init(c);
	assert_int_equal(config_load_json(c, root, 2, &err), 0);
	json_decref(root);
	assert_true(c->agent.mcp);
}

static json_t *
frame(const struct airlock_config *c, int64_t rev, uint64_t listed)
{
	static const char payload[] = "{\"k\":\"v\"}\n";
	size_t len = 0;
	char *text = mcp_session_frame(c, payload, sizeof payload - 1, upstream_definition, NULL,
				       rev, listed, 65536, &len);
	json_t *f;

	assert_non_null(text);
	assert_int_equal(text[len - 1], '\n');
	f = json_loadb(text, len, 0, NULL);
	free(text);
	assert_non_null(f);
	return f;
}

static void
test_frame(void **unused)
{
	struct airlock_config c;
	bool all[CONFIG_TOOLS_MAX], some[CONFIG_TOOLS_MAX] = { false };
	json_t *f, *tools, *listed;
	uint64_t every;

	(void)unused;
	load(&c);
	memset(all, 1, sizeof all);
	every = mcp_session_listed(&c, all, c.n_tools);
	f = frame(&c, 0, every);
	tools = json_object_get(f, "tools");
	assert_int_equal(json_array_size(tools), 2);	/* root is hidden */
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")), "save");
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "description")),
			    "Keep a note.");
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 1), "description")),
			    "Send mail.");
	/* the upstream's schema, embedded as the parser wrote it */
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
		json_object_get(json_array_get(tools, 1), "inputSchema"), "properties"), "to"), "type")),
		"string");
	assert_null(json_object_get(f, "listed"));	/* every alias listed: nothing to say */
	assert_string_equal(json_string_value(json_object_get(json_object_get(f, "payload"), "k")), "v");
	json_decref(f);

	/* mail stands revoked at the start (revision 7): only save is listed */
	some[config_tool_index(&c, "store")] = true;
	f = frame(&c, 7, mcp_session_listed(&c, some, c.n_tools));
	listed = json_object_get(f, "listed");
	assert_int_equal(json_integer_value(json_object_get(listed, "revision")), 7);
	assert_int_equal(json_array_size(json_object_get(listed, "tools")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(listed, "tools"), 0)),
			    "save");
	assert_int_equal(json_array_size(json_object_get(f, "tools")), 2);	/* both defined */
	json_decref(f);
	config_free(&c);
}

static void
test_changed(void **unused)
{
	struct airlock_config c;
	bool allowed[CONFIG_TOOLS_MAX] = { false };
	size_t len = 0;
	char *line;

	(void)unused;
	load(&c);
	allowed[config_tool_index(&c, "mail")] = true;
	allowed[config_tool_index(&c, "admin")] = true;	/* hidden: never listed */
	line = mcp_session_changed(&c, 9, mcp_session_listed(&c, allowed, c.n_tools), &len);
	assert_non_null(line);
	assert_string_equal(line, "{\"tools_changed\":9,\"tools\":[\"send\"]}\n");
	assert_int_equal(len, strlen(line));
	free(line);
	config_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_changed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
