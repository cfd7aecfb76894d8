#include "mcp_int.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>

#define MCP_PAGES_MAX		(MCP_TOOLS_MAX + 1)

/* --- tools/list ------------------------------------------------------------ */

void
mcp_listing_free(struct mcp_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		json_decref(l->v[i].def);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static const struct mcp_tool *
mcp_listing_find(const struct mcp_listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

static int
mcp_listing_add(struct mcp_client *c, struct mcp_listing *l, const json_t *tool,
		struct al_err *err)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	struct mcp_tool *t;

	if (!json_is_object(tool) || !name || !name[0])
		return al_fail(err, "upstream %s: tools/list: invalid tool entry", c->name);
	if (mcp_listing_find(l, name))
		return al_fail(err, "upstream %s: tools/list: duplicate tool", c->name);
	if (l->n >= MCP_TOOLS_MAX)
		return al_fail(err, "upstream %s: tools/list: more than %d tools", c->name,
			       MCP_TOOLS_MAX);
	if (!l->v && !(l->v = calloc(MCP_TOOLS_MAX, sizeof *l->v)))
		return al_fail(err, "upstream %s: out of memory", c->name);
	t = &l->v[l->n];
	if (hash_json_canonical(tool, t->hash) < 0 || !(t->name = strdup(name)))
		return al_fail(err, "upstream %s: out of memory", c->name);
	t->def = json_deep_copy(tool);
	l->n++;
	if (!t->def)
		return al_fail(err, "upstream %s: out of memory", c->name);
	return 0;
}

/* Take one page's tools; *cursor becomes its nextCursor (NULL on the last page). */
static int
mcp_list_take(struct mcp_client *c, struct mcp_listing *l, json_t *result, char **cursor,
	      struct al_err *err)
{
	json_t *tools = json_object_get(result, "tools"), *tool;
	json_t *next = json_object_get(result, "nextCursor");
	size_t i;

	free(*cursor);
	*cursor = NULL;
	if (!json_is_array(tools) || (next && !json_is_string(next) && !json_is_null(next)))
		return al_fail(err, "upstream %s: tools/list failed", c->name);
	json_array_foreach(tools, i, tool)
		if (mcp_listing_add(c, l, tool, err) < 0)
			return -1;
	if (json_is_string(next) && !(*cursor = strdup(json_string_value(next))))
		return al_fail(err, "upstream %s: out of memory", c->name);
	return 0;
}

static int
mcp_list_page(struct mcp_client *c, struct mcp_listing *l, char **cursor,
	      long long deadline, struct al_err *err)
{
	json_t *params, *answer, *result;
	int rc = -1;

	params = *cursor ? json_pack("{s:s}", "cursor", *cursor) : json_object();
	if (!(answer = mcp_ask(c, "tools/list", params, deadline, err)))
		return -1;
	result = mcp_result(c, answer, "tools/list", err);
	if (result)
		rc = mcp_list_take(c, l, result, cursor, err);
	json_decref(answer);
	return rc;
}

/*
 * A fresh listing replaces the old one only when complete. A list_changed
 * that arrives while listing leaves the listing stale: the change may have
 * raced the answer.
 */
int
mcp_list_tools(struct mcp_client *c, long long deadline, struct al_err *err)
{
	struct mcp_listing fresh = { 0 };
	char *cursor = NULL;
	int page, rc = 0;

	c->stale = false;
	for (page = 0; page < MCP_PAGES_MAX && rc == 0; page++)
		if ((rc = mcp_list_page(c, &fresh, &cursor, deadline, err)) == 0 && !cursor)
			break;
	if (rc == 0 && cursor)
		rc = al_fail(err, "upstream %s: tools/list: more than %d pages", c->name,
			     MCP_PAGES_MAX);
	free(cursor);
	if (rc < 0) {
		mcp_listing_free(&fresh);
		c->stale = true;
		return -1;
	}
	mcp_listing_free(&c->tools);
	c->tools = fresh;
	return 0;
}

int
mcp_tool_hash(struct mcp_client *c, const char *tool, char out[HASH_HEX_LEN + 1])
{
	const struct mcp_tool *t;

	if (!c || !tool)
		return -1;
	mcp_drain(c);
	if (c->stale && (c->broken || mcp_list_tools(c, clock_mono_ms() + c->init_ms, NULL) < 0))
		return -1;
	t = mcp_listing_find(&c->tools, tool);
	if (!t)
		return -1;
	memcpy(out, t->hash, HASH_HEX_LEN + 1);
	return 0;
}

int
mcp_tool_definition(struct mcp_client *c, const char *tool, char hash[HASH_HEX_LEN + 1],
		    json_t **def)
{
	const struct mcp_tool *t;

	*def = NULL;
	if (mcp_tool_hash(c, tool, hash) < 0 || !(t = mcp_listing_find(&c->tools, tool)) ||
	    !(*def = json_deep_copy(t->def)))
		return -1;
	return 0;
}
