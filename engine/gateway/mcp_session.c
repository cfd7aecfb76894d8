#include "mcp_session.h"
#include "frame.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CONFIG_ALIASES_MAX <= 64, "listed aliases fit a 64-bit set");

/* One alias as the agent sees it; NULL when out of memory. */
static json_t *
tool_entry(const struct config_alias *a, json_t *def)
{
	const json_t *d = json_object_get(def, "description");
	const json_t *schema = json_object_get(def, "inputSchema");
	const char *text = a->description ? a->description
					  : json_is_string(d) ? json_string_value(d) : "";

	if (json_is_object(schema))
		return json_pack("{s:s, s:s, s:O}", "name", a->operation, "description", text,
				 "inputSchema", schema);
	return json_pack("{s:s, s:s, s:{s:s}}", "name", a->operation, "description", text,
			 "inputSchema", "type", "object");
}

static json_t *
tool_list(const struct airlock_config *c, mcp_session_def_fn def, void *ctx)
{
	json_t *list = json_array(), *d, *e;
	size_t i;

	for (i = 0; list && i < c->n_aliases; i++) {
		if (c->aliases[i].hidden)
			continue;
		d = def ? def(ctx, c->aliases[i].tool) : NULL;
		e = tool_entry(&c->aliases[i], d);
		json_decref(d);
		if (json_array_append_new(list, e) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
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

char *
mcp_session_frame(const struct airlock_config *c, const char *payload, size_t payload_len,
		  mcp_session_def_fn def, void *ctx, int64_t revision, uint64_t listed,
		  size_t max, size_t *len)
{
	bool all[CONFIG_TOOLS_MAX];
	json_t *p = json_loadb(payload, payload_len, 0, NULL);
	json_t *f = p ? json_pack("{s:o, s:o*}", "payload", p, "tools", tool_list(c, def, ctx))
		      : NULL;
	size_t want = 2;
	char *text;

	memset(all, 1, sizeof all);
	if (f && listed != mcp_session_listed(c, all, c->n_tools)) {
		want = 3;
		json_object_set_new(f, "listed", listed_json(c, "revision", revision, listed));
	}
	text = json_object_size(f) == want ? json_dumps(f, JSON_COMPACT) : NULL;
	json_decref(f);
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
