#include "mcp_digest.h"

#include <string.h>

#include <jansson.h>

/* --- what both sides hold to --------------------------------------------------- */

static bool
printable(const struct mcp_span *s)
{
	size_t i;

	for (i = 0; i < s->len; i++)
		if ((unsigned char)s->p[i] < 0x20 || s->p[i] == 0x7f)
			return false;
	return true;
}

/* Canonical text of an integer or of a string, nothing that could end it early. */
static bool
id_text(const struct mcp_span *s)
{
	size_t i = 0;

	if (!s->len || !printable(s))
		return false;
	if (s->p[0] != '"') {
		i = s->p[0] == '-';
		if (i == s->len || s->len > 20)
			return false;
		for (; i < s->len; i++)
			if (s->p[i] < '0' || s->p[i] > '9')
				return false;
		return true;
	}
	for (i = 1; i + 1 < s->len; i++) {
		if (s->p[i] == '\\')
			i++;
		else if (s->p[i] == '"')
			return false;
	}
	return s->len >= 2 && i == s->len - 1 && s->p[i] == '"';
}

/* --- writing: the parser's side ---------------------------------------------- */

struct digest {
	struct hash_canon *out;
	struct mcp_digest_head head;
};

static void
field(struct digest *d, enum mcp_digest_tag tag, const char *s, size_t len)
{
	struct mcp_digest_field f = { (uint32_t)tag, (uint32_t)len };

	if (len > UINT32_MAX) {
		d->out->bad = true;
		return;
	}
	hash_canon_raw(d->out, (const char *)&f, sizeof f);
	hash_canon_raw(d->out, s, len);
	d->head.n_fields++;
}

/* A value as canonical text, as one field. */
static void
field_json(struct digest *d, enum mcp_digest_tag tag, const json_t *v)
{
	struct hash_canon c;

	hash_canon_init(&c);
	hash_canon_json(&c, v);
	if (c.bad)
		d->out->bad = true;
	else
		field(d, tag, c.buf, c.len);
	hash_canon_free(&c);
}

static void
field_str(struct digest *d, enum mcp_digest_tag tag, const json_t *s)
{
	field(d, tag, json_string_value(s), json_string_length(s));
}

/* Every item has a string type; a text item has a string text. */
static bool
content_valid(const json_t *content, uint64_t *others)
{
	const json_t *item, *type;
	size_t i;

	if (!json_is_array(content))
		return false;
	json_array_foreach(content, i, item) {
		type = json_object_get(item, "type");
		if (!json_is_string(type))
			return false;
		if (strcmp(json_string_value(type), "text") != 0)
			(*others)++;
		else if (!json_is_string(json_object_get(item, "text")))
			return false;
	}
	return true;
}

static void
digest_content(struct digest *d, const json_t *content)
{
	struct mcp_digest_field f = { MCP_F_TEXT, 0 };
	const json_t *item;
	uint64_t others = 0;
	size_t i, at;

	if (!content_valid(content, &others))
		return;	/* counted only for valid content */
	d->head.flags |= MCP_D_CONTENT;
	d->head.other_items = others;
	at = d->out->len;
	hash_canon_raw(d->out, (const char *)&f, sizeof f);
	json_array_foreach(content, i, item) {
		if (strcmp(json_string_value(json_object_get(item, "type")), "text") != 0)
			continue;
		hash_canon_raw(d->out, json_string_value(json_object_get(item, "text")),
			       json_string_length(json_object_get(item, "text")));
	}
	if (d->out->bad || d->out->len - at - sizeof f > UINT32_MAX) {
		d->out->bad = true;
		return;
	}
	f.len = (uint32_t)(d->out->len - at - sizeof f);
	memcpy(d->out->buf + at, &f, sizeof f);
	d->head.n_fields++;
}

static void
digest_tools(struct digest *d, const json_t *tools)
{
	const json_t *tool, *name, *v;
	size_t i;

	d->head.flags |= MCP_D_TOOLS;
	json_array_foreach(tools, i, tool) {
		name = json_object_get(tool, "name");
		if (!json_is_object(tool) || !json_is_string(name) || !json_string_length(name)) {
			d->head.flags |= MCP_D_TOOL_BAD;
			return;
		}
		if (d->head.n_tools == MCP_DIGEST_TOOLS_MAX)
			return;
		d->head.n_tools++;
		field_str(d, MCP_F_TOOL_NAME, name);
		field_json(d, MCP_F_TOOL_DEF, tool);
		if (json_is_string(v = json_object_get(tool, "description")))
			field_str(d, MCP_F_TOOL_DESC, v);
		if (json_is_object(v = json_object_get(tool, "inputSchema")))
			field_json(d, MCP_F_TOOL_SCHEMA, v);
	}
}

static void
digest_result(struct digest *d, const json_t *result)
{
	const json_t *v;

	if (!json_is_object(result))
		return;
	d->head.flags |= MCP_D_RESULT_OBJECT;
	if (json_is_true(json_object_get(result, "isError")))
		d->head.flags |= MCP_D_IS_ERROR;
	if ((v = json_object_get(result, "content")))
		digest_content(d, v);
	v = json_object_get(result, "protocolVersion");
	if (json_is_string(v) && json_string_length(v) < MCP_DIGEST_VERSION_MAX)
		field_str(d, MCP_F_VERSION, v);
	if (json_is_array(v = json_object_get(result, "tools")))
		digest_tools(d, v);
	v = json_object_get(result, "nextCursor");
	if (json_is_string(v)) {
		d->head.flags |= MCP_D_CURSOR;
		field_str(d, MCP_F_CURSOR, v);
	} else if (v && !json_is_null(v))
		d->head.flags |= MCP_D_CURSOR_BAD;
}

static void
digest_answer(struct digest *d, const json_t *msg)
{
	const json_t *result = json_object_get(msg, "result");
	const json_t *error = json_object_get(msg, "error");
	const json_t *code = json_object_get(error, "code");

	d->head.id = json_integer_value(json_object_get(msg, "id"));
	if (error)
		d->head.flags |= MCP_D_ERROR;
	if (json_is_integer(code)) {
		d->head.flags |= MCP_D_CODE_INT;
		d->head.code = json_integer_value(code);
	}
	if (result) {
		d->head.flags |= MCP_D_RESULT;
		digest_result(d, result);
	}
}

/* An id the engine may echo in its refusal: an integer or a short string. */
static void
digest_request_id(struct digest *d, const json_t *id)
{
	struct hash_canon c;

	if (!json_is_integer(id) && !json_is_string(id))
		return;
	hash_canon_init(&c);
	hash_canon_json(&c, id);
	if (!c.bad && c.len <= MCP_DIGEST_ID_MAX &&
	    id_text(&(struct mcp_span){ c.buf, c.len }))
		field(d, MCP_F_REQUEST_ID, c.buf, c.len);
	hash_canon_free(&c);
}

static enum mcp_msg_kind
digest_message(struct digest *d, const json_t *msg)
{
	const json_t *method = json_object_get(msg, "method"), *id = json_object_get(msg, "id");
	const char *v = json_string_value(json_object_get(msg, "jsonrpc"));

	if (!json_is_object(msg) || !v || strcmp(v, "2.0") != 0 || (!method && !id))
		return MCP_MSG_BAD;
	if (!method) {
		if (!json_is_integer(id))
			return MCP_MSG_STRAY;
		digest_answer(d, msg);
		return MCP_MSG_ANSWER;
	}
	/* A method it could not name is no method it knows: left out. */
	if (json_is_string(method) && json_string_length(method) <= MCP_DIGEST_METHOD_MAX &&
	    printable(&(struct mcp_span){ json_string_value(method), json_string_length(method) }))
		field_str(d, MCP_F_METHOD, method);
	if (!id)
		return MCP_MSG_NOTE;
	digest_request_id(d, id);
	return MCP_MSG_REQUEST;
}

static int
digest_begin(struct digest *d, struct hash_canon *out)
{
	memset(d, 0, sizeof *d);
	d->out = out;
	out->len = 0;
	out->bad = false;
	hash_canon_raw(out, (const char *)&d->head, sizeof d->head);
	return out->bad ? -1 : 0;
}

int
mcp_digest(const char *line, size_t len, size_t max, struct hash_canon *out)
{
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	struct digest d;

	if (digest_begin(&d, out) < 0) {
		json_decref(msg);
		return -1;
	}
	d.head.kind = msg ? digest_message(&d, msg) : MCP_MSG_BAD;
	json_decref(msg);
	if (out->bad || out->len > max) {	/* too much to tell: a line not taken */
		if (digest_begin(&d, out) < 0)
			return -1;
		d.head.kind = MCP_MSG_BAD;
	}
	memcpy(out->buf, &d.head, sizeof d.head);
	return 0;
}

/* --- reading: the engine's side ---------------------------------------------- */

/* Which fields each kind may carry, and which flags. */
#define ANSWER_TAGS	(1u << MCP_F_TEXT | 1u << MCP_F_VERSION | 1u << MCP_F_CURSOR | \
			 1u << MCP_F_TOOL_NAME | 1u << MCP_F_TOOL_DEF | \
			 1u << MCP_F_TOOL_DESC | 1u << MCP_F_TOOL_SCHEMA)
#define METHOD_TAGS	(1u << MCP_F_METHOD)

static struct mcp_span *
single(struct mcp_msg *m, uint32_t tag)
{
	switch (tag) {
	case MCP_F_METHOD:
		return &m->method;
	case MCP_F_REQUEST_ID:
		return &m->request_id;
	case MCP_F_TEXT:
		return &m->text;
	case MCP_F_VERSION:
		return &m->version;
	case MCP_F_CURSOR:
		return &m->cursor;
	default:
		return NULL;
	}
}

/*
 * Tool fields come in one run, in order per entry: a name, a definition,
 * then a description and a schema or not. prev is the tag before (0 at
 * first); *ended once another field followed the run.
 */
static bool
tool_order(uint32_t prev, uint32_t tag, size_t *tools, bool *ended)
{
	bool tool = tag >= MCP_F_TOOL_NAME, was_tool = prev >= MCP_F_TOOL_NAME;

	if (tool && *ended)
		return false;
	if (!tool) {
		*ended |= was_tool;
		return prev != MCP_F_TOOL_NAME;
	}
	switch (tag) {
	case MCP_F_TOOL_NAME:
		(*tools)++;
		return prev != MCP_F_TOOL_NAME;
	case MCP_F_TOOL_DEF:
		return prev == MCP_F_TOOL_NAME;
	case MCP_F_TOOL_DESC:
		return prev == MCP_F_TOOL_DEF;
	default:
		return prev == MCP_F_TOOL_DEF || prev == MCP_F_TOOL_DESC;
	}
}

static uint32_t
tags_allowed(const struct mcp_digest_head *h)
{
	switch (h->kind) {
	case MCP_MSG_ANSWER:
		return ANSWER_TAGS;
	case MCP_MSG_REQUEST:
		return METHOD_TAGS | 1u << MCP_F_REQUEST_ID;
	case MCP_MSG_NOTE:
		return METHOD_TAGS;
	default:
		return 0;
	}
}

static int
read_fields(struct mcp_msg *m, const char *p, const struct mcp_digest_head *h)
{
	uint32_t allowed = tags_allowed(h), prev = 0, i;
	struct mcp_digest_field f;
	struct mcp_span *s;
	size_t tools = 0;
	bool ended = false;

	for (i = 0; i < h->n_fields; i++) {
		if ((size_t)(m->end - p) < sizeof f)
			return -1;
		memcpy(&f, p, sizeof f);
		p += sizeof f;
		if (f.tag >= MCP_F_TAGS || !(allowed >> f.tag & 1) ||
		    f.len > (size_t)(m->end - p) || !tool_order(prev, f.tag, &tools, &ended))
			return -1;
		if (f.tag == MCP_F_TOOL_NAME && !m->tools)
			m->tools = p - sizeof f;
		if ((s = single(m, f.tag))) {
			if (s->p)
				return -1;	/* once at most */
			*s = (struct mcp_span){ p, f.len };
		}
		p += f.len;
		prev = f.tag;
	}
	if (p != m->end || tools != h->n_tools || prev == MCP_F_TOOL_NAME)
		return -1;
	return 0;
}

/* What the flags and fields say must agree with each other. */
static bool
consistent(const struct mcp_msg *m)
{
	unsigned f = m->flags;
	bool object = f & MCP_D_RESULT_OBJECT;

	if ((f & ~MCP_D_FLAGS) || (m->kind != MCP_MSG_ANSWER && (f || m->id || m->code)))
		return false;
	if (((f & MCP_D_RESULT_OBJECT) && !(f & MCP_D_RESULT)) ||
	    ((f & MCP_D_CODE_INT) && !(f & MCP_D_ERROR)) || (!(f & MCP_D_CODE_INT) && m->code))
		return false;
	if (!object && (f & (MCP_D_IS_ERROR | MCP_D_CONTENT | MCP_D_TOOLS | MCP_D_CURSOR |
			     MCP_D_CURSOR_BAD) || m->version.p))
		return false;
	if (!(f & MCP_D_CONTENT) != !m->text.p || (!(f & MCP_D_CONTENT) && m->other_items) ||
	    !(f & MCP_D_CURSOR) != !m->cursor.p || ((f & MCP_D_CURSOR) && (f & MCP_D_CURSOR_BAD)))
		return false;
	if ((!(f & MCP_D_TOOLS) && (m->n_tools || (f & MCP_D_TOOL_BAD))) ||
	    m->n_tools > MCP_DIGEST_TOOLS_MAX)
		return false;
	if (m->method.p && (m->method.len > MCP_DIGEST_METHOD_MAX || !printable(&m->method)))
		return false;
	if (m->version.p && m->version.len >= MCP_DIGEST_VERSION_MAX)
		return false;
	return !m->request_id.p || (m->request_id.len <= MCP_DIGEST_ID_MAX &&
				    id_text(&m->request_id));
}

int
mcp_digest_read(const void *body, size_t len, struct mcp_msg *m)
{
	struct mcp_digest_head h;

	memset(m, 0, sizeof *m);
	if (!body || len < sizeof h)
		return -1;
	memcpy(&h, body, sizeof h);
	if (h.kind >= MCP_MSG_KINDS)
		return -1;
	m->kind = (enum mcp_msg_kind)h.kind;
	m->flags = h.flags;
	m->id = h.id;
	m->code = h.code;
	m->other_items = (size_t)h.other_items;
	m->n_tools = h.n_tools;
	m->end = (const char *)body + len;
	if (h.other_items > SIZE_MAX || read_fields(m, (const char *)body + sizeof h, &h) < 0 ||
	    !consistent(m)) {
		memset(m, 0, sizeof *m);
		return -1;
	}
	return 0;
}

int
mcp_msg_tool(const struct mcp_msg *m, const char **at, struct mcp_digest_tool *t)
{
	struct mcp_digest_field f;
	const char *p = *at ? *at : m->tools;
	bool named = false;

	memset(t, 0, sizeof *t);
	while (p && p < m->end) {
		memcpy(&f, p, sizeof f);
		if (f.tag == MCP_F_TOOL_NAME && named)
			break;
		if (f.tag < MCP_F_TOOL_NAME)
			break;	/* the cursor or version after the tools */
		p += sizeof f;
		if (f.tag == MCP_F_TOOL_NAME) {
			named = true;
			t->name = (struct mcp_span){ p, f.len };
		} else if (f.tag == MCP_F_TOOL_DEF)
			t->def = (struct mcp_span){ p, f.len };
		else if (f.tag == MCP_F_TOOL_DESC)
			t->desc = (struct mcp_span){ p, f.len };
		else
			t->schema = (struct mcp_span){ p, f.len };
		p += f.len;
	}
	*at = p;
	return named;
}
