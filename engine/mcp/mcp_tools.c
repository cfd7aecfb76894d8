#include "mcp_int.h"
#include "clock.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define MCP_PAGES_MAX		(MCP_TOOLS_MAX + 1)

/* --- tools/list ------------------------------------------------------------ */

void
mcp_tool_shown_free(struct mcp_tool_shown *s)
{
	free(s->desc);
	free(s->schema);
	memset(s, 0, sizeof *s);
}

void
mcp_listing_free(struct mcp_listing *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		mcp_tool_shown_free(&l->v[i].shown);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
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

/* A copy of a span as a string (NULL for an absent one); false when out of memory. */
static bool
span_dup(const struct mcp_span *s, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!s->p)
		return true;
	if (!(*out = malloc(s->len + 1)))
		return false;
	memcpy(*out, s->p, s->len);
	(*out)[s->len] = '\0';
	*len = s->len;
	return true;
}

static bool
shown_from(const struct mcp_digest_tool *tool, struct mcp_tool_shown *to)
{
	return span_dup(&tool->desc, &to->desc, &to->desc_len) &&
	       span_dup(&tool->schema, &to->schema, &to->schema_len);
}

static bool
shown_dup(const struct mcp_tool_shown *from, struct mcp_tool_shown *to)
{
	struct mcp_span d = { from->desc, from->desc_len }, s = { from->schema, from->schema_len };

	if (span_dup(&d, &to->desc, &to->desc_len) && span_dup(&s, &to->schema, &to->schema_len))
		return true;
	mcp_tool_shown_free(to);
	return false;
}

static bool
mcp_listing_has(const struct mcp_listing *l, const struct mcp_span *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strlen(l->v[i].name) == name->len && memcmp(l->v[i].name, name->p, name->len) == 0)
			return true;
	return false;
}

/* A name the engine compares as a C string: no NUL inside. */
static int
mcp_listing_add(struct mcp_client *c, struct mcp_listing *l, const struct mcp_digest_tool *tool,
		struct al_err *err)
{
	struct mcp_tool *t;
	size_t n;

	if (!tool->name.len || memchr(tool->name.p, '\0', tool->name.len))
		return al_fail(err, "upstream %s: tools/list: invalid tool entry", c->name);
	if (mcp_listing_has(l, &tool->name))
		return al_fail(err, "upstream %s: tools/list: duplicate tool", c->name);
	if (l->n >= MCP_TOOLS_MAX)
		return al_fail(err, "upstream %s: tools/list: more than %d tools", c->name,
			       MCP_TOOLS_MAX);
	/* Most upstreams list a few tools; a session keeps them all. */
	if (grow(&l->v, &l->cap, l->n + 1, sizeof *l->v, 8, MCP_TOOLS_MAX) < 0)
		return al_fail(err, "upstream %s: out of memory", c->name);
	t = &l->v[l->n];
	if (!span_dup(&tool->name, &t->name, &n))
		return al_fail(err, "upstream %s: out of memory", c->name);
	hash_sha256_hex(tool->def.p, tool->def.len, t->hash);
	l->n++;
	if (!shown_from(tool, &t->shown))
		return al_fail(err, "upstream %s: out of memory", c->name);
	return 0;
}

/* Take one page's tools; *cursor becomes its nextCursor (NULL on the last page). */
static int
mcp_list_take(struct mcp_client *c, struct mcp_listing *l, const struct mcp_msg *result,
	      char **cursor, struct al_err *err)
{
	struct mcp_digest_tool tool;
	const char *at = NULL;
	size_t n;

	free(*cursor);
	*cursor = NULL;
	if (!(result->flags & MCP_D_TOOLS) || (result->flags & MCP_D_CURSOR_BAD))
		return al_fail(err, "upstream %s: tools/list failed", c->name);
	while (mcp_msg_tool(result, &at, &tool))
		if (mcp_listing_add(c, l, &tool, err) < 0)
			return -1;
	if (result->flags & MCP_D_TOOL_BAD)
		return al_fail(err, "upstream %s: tools/list: invalid tool entry", c->name);
	if (!span_dup(&result->cursor, cursor, &n))
		return al_fail(err, "upstream %s: out of memory", c->name);
	return 0;
}

static int
mcp_list_page(struct mcp_client *c, struct mcp_listing *l, char **cursor,
	      long long deadline, struct al_err *err)
{
	struct mcp_msg answer;
	json_t *params;

	params = *cursor ? json_pack("{s:s}", "cursor", *cursor) : json_object();
	if (mcp_ask(c, "tools/list", params, deadline, &answer, err) < 0 ||
	    mcp_result(c, &answer, "tools/list", err) < 0)
		return -1;
	return mcp_list_take(c, l, &answer, cursor, err);
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
		    struct mcp_tool_shown *shown)
{
	const struct mcp_tool *t;

	memset(shown, 0, sizeof *shown);
	if (mcp_tool_hash(c, tool, hash) < 0 || !(t = mcp_listing_find(&c->tools, tool)) ||
	    !shown_dup(&t->shown, shown))
		return -1;
	return 0;
}
