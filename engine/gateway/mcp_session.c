#include "mcp_session.h"
#include "frame.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CONFIG_ALIASES_MAX <= 64, "listed aliases fit a 64-bit set");

/*
 * One alias as the agent sees it: its name, the operator's description,
 * else the upstream's, else "", and the upstream's input schema, else
 * {"type":"object"}. The upstream's texts come as its session's parser
 * wrote them (a string's bytes, a schema's canonical text), embedded here
 * and never parsed (mcp.h, mcp_tool_shown).
 */
static void
tool_entry(struct hash_canon *out, const struct config_alias *a, const struct mcp_tool_shown *up)
{
	static const char object[] = "{\"type\":\"object\"}";
	const char *desc = a->description ? a->description : up->desc ? up->desc : "";
	size_t desc_len = a->description ? strlen(desc) : up->desc ? up->desc_len : 0;

	hash_canon_raw(out, "{\"name\":", 8);
	hash_canon_str(out, a->operation, strlen(a->operation));
	hash_canon_raw(out, ",\"description\":", 15);
	hash_canon_str(out, desc, desc_len);
	hash_canon_raw(out, ",\"inputSchema\":", 15);
	if (up->schema)
		hash_canon_raw(out, up->schema, up->schema_len);
	else
		hash_canon_raw(out, object, sizeof object - 1);
	hash_canon_raw(out, "}", 1);
}

static void
tool_list(struct hash_canon *out, const struct airlock_config *c, mcp_session_def_fn def,
	  void *ctx)
{
	struct mcp_tool_shown up;
	bool first = true;
	size_t i;

	hash_canon_raw(out, "[", 1);
	for (i = 0; i < c->n_aliases; i++) {
		if (c->aliases[i].hidden)
			continue;
		memset(&up, 0, sizeof up);
		if (def)
			def(ctx, c->aliases[i].tool, &up);
		if (!first)
			hash_canon_raw(out, ",", 1);
		first = false;
		tool_entry(out, &c->aliases[i], &up);
		mcp_tool_shown_free(&up);
	}
	hash_canon_raw(out, "]", 1);
}

/*
 * {key: N, "tools": [aliases listed]}, key "revision" in the frame and
 * "tools_changed" in a change line; NULL when out of memory.
 */
static json_t *
listed_json(const struct airlock_config *c, const char *key, int64_t revision,
	    uint64_t listed)
{
	json_t *names = json_array();
	size_t i;

	for (i = 0; names && i < c->n_aliases; i++)
		if ((listed >> i & 1) &&
		    json_array_append_new(names, json_string(c->aliases[i].operation)) < 0) {
			json_decref(names);
			return NULL;
		}
	return names ? json_pack("{s:I, s:o}", key, (json_int_t)revision, "tools", names) : NULL;
}

/* A jansson value's compact text into out; false when it has none. */
static bool
raw_json(struct hash_canon *out, const json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;

	if (!text)
		return false;
	hash_canon_raw(out, text, strlen(text));
	free(text);
	return true;
}

char *
mcp_session_frame(const struct airlock_config *c, const char *payload, size_t payload_len,
		  mcp_session_def_fn def, void *ctx, int64_t revision, uint64_t listed,
		  size_t max, size_t *len)
{
	bool all[CONFIG_TOOLS_MAX], ok;
	json_t *p = json_loadb(payload, payload_len, 0, NULL), *l = NULL;
	struct hash_canon out;
	char *text;
	size_t n;

	memset(all, 1, sizeof all);
	hash_canon_init(&out);
	hash_canon_raw(&out, "{\"payload\":", 11);
	ok = raw_json(&out, p);
	hash_canon_raw(&out, ",\"tools\":", 9);
	tool_list(&out, c, def, ctx);
	if (ok && listed != mcp_session_listed(c, all, c->n_tools)) {
		l = listed_json(c, "revision", revision, listed);
		hash_canon_raw(&out, ",\"listed\":", 10);
		ok = raw_json(&out, l);
	}
	hash_canon_raw(&out, "}", 1);
	json_decref(p);
	json_decref(l);
	if (!ok) {
		hash_canon_free(&out);
		return NULL;
	}
	text = hash_canon_take(&out, &n);
	return text ? frame_line(text, max, len) : NULL;
}

uint64_t
mcp_session_listed(const struct airlock_config *c, const bool *allowed, size_t n)
{
	uint64_t set = 0;
	size_t i;
	int t;

	for (i = 0; i < c->n_aliases; i++) {
		t = c->aliases[i].tool;
		if (!c->aliases[i].hidden && t >= 0 && (size_t)t < n && allowed[t])
			set |= (uint64_t)1 << i;
	}
	return set;
}

char *
mcp_session_changed(const struct airlock_config *c, int64_t revision, uint64_t listed,
		    size_t *len)
{
	json_t *m = listed_json(c, "tools_changed", revision, listed);
	char *text;

	text = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	return text ? frame_line(text, (size_t)BOUND_FRAME_MAX, len) : NULL;
}
