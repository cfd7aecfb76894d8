#include "shim_rpc.h"

#include <stdlib.h>
#include <string.h>

/* Newest first: an unknown request gets the first. */
static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};

struct shim_state {
	json_t *tools;		/* the frame's tool array, in its order */
	bool listed[SHIM_TOOLS_MAX];
	int64_t revision;
	char *payload;		/* compact JSON text */
};

/* --- the initial frame --------------------------------------------------- */

static bool
tool_ok(const json_t *t, const json_t *tools, size_t upto)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	size_t i;

	if (!json_is_object(t) || !name || !name[0] ||
	    !json_is_string(json_object_get(t, "description")) ||
	    !json_is_object(json_object_get(t, "inputSchema")))
		return false;
	for (i = 0; i < upto; i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
			   name) == 0)
			return false;
	return true;
}

static void tools_changed(struct shim_state *s, int64_t rev, const json_t *names);

/*
 * The frame; "listed" {"revision", "tools"} is there when the session
 * started with some aliases revoked (a standing revoke): only those are
 * listed until the next tools_changed.
 */
struct shim_state *
shim_state_new(const char *frame, size_t len)
{
	json_t *f = json_loadb(frame, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *tools = json_object_get(f, "tools"), *payload = json_object_get(f, "payload");
	json_t *listed = json_object_get(f, "listed");
	struct shim_state *s = NULL;
	size_t i;

	if (!json_is_object(payload) || !json_is_array(tools) ||
	    json_array_size(tools) > SHIM_TOOLS_MAX ||
	    json_object_size(f) != (listed ? 3u : 2u) ||
	    (listed && (!json_is_integer(json_object_get(listed, "revision")) ||
			!json_is_array(json_object_get(listed, "tools")))))
		goto out;
	for (i = 0; i < json_array_size(tools); i++)
		if (!tool_ok(json_array_get(tools, i), tools, i))
			goto out;
	if (!(s = calloc(1, sizeof *s)) ||
	    !(s->payload = json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY))) {
		shim_state_free(s);
		s = NULL;
		goto out;
	}
	s->tools = json_incref(tools);
	for (i = 0; i < json_array_size(tools); i++)
		s->listed[i] = true;
	if (listed)
		tools_changed(s, json_integer_value(json_object_get(listed, "revision")),
			      json_object_get(listed, "tools"));
out:
	json_decref(f);
	return s;
}

void
shim_state_free(struct shim_state *s)
{
	if (!s)
		return;
	json_decref(s->tools);
	if (s->payload) {
		memset(s->payload, 0, strlen(s->payload));
		free(s->payload);
	}
	free(s);
}

const char *
shim_payload_text(const struct shim_state *s)
{
	return s->payload;
}

size_t
shim_listed(const struct shim_state *s)
{
	size_t i, n = 0;

	for (i = 0; i < json_array_size(s->tools); i++)
		n += s->listed[i];
	return n;
}

/* Index of the tool named name, or -1. */
static int
tool_index(const struct shim_state *s, const char *name)
{
	size_t i;

	for (i = 0; name && i < json_array_size(s->tools); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(s->tools, i),
							      "name")), name) == 0)
			return (int)i;
	return -1;
}

/* --- lines out ------------------------------------------------------------ */

/* Compact text plus a newline; takes o. NULL when out of memory or too long. */
static char *
line_of(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t n = text ? strlen(text) : 0;
	char *line = NULL;

	json_decref(o);
	if (text && n + 1 <= SHIM_LINE_MAX * 64 && (line = realloc(text, n + 2))) {
		line[n] = '\n';
		line[n + 1] = '\0';
		return line;
	}
	free(text);
	return NULL;
}

/* The compact text of a JSON value (a string, a number, null…); NULL when out of memory. */
static char *
text_of(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
}

/*
 * The NULL-terminated parts joined, in one allocation: a line composed from
 * pieces already printed costs no object built and printed again per call.
 * NULL when a part is NULL (out of memory before) or out of memory now.
 */
static char *
joined(const char *const *parts)
{
	size_t n = 0, i, k;
	char *out, *p;

	for (i = 0; parts[i]; i++)
		n += strlen(parts[i]);
	if (!(p = out = malloc(n + 1)))
		return NULL;
	for (i = 0; parts[i]; i++) {
		k = strlen(parts[i]);
		memcpy(p, parts[i], k);
		p += k;
	}
	*p = '\0';
	return out;
}

static const char *
error_message(int code)
{
	switch (code) {
	case RPC_PARSE_ERROR:
		return "Parse error";
	case RPC_INVALID_REQUEST:
		return "Invalid Request";
	case RPC_METHOD_NOT_FOUND:
		return "Method not found";
	case RPC_INVALID_PARAMS:
		return "Invalid params";
	case RPC_RESOURCE_NOT_FOUND:
		return "Resource not found";
	default:
		return "Internal error";
	}
}

char *
shim_error_line(const json_t *id, int code)
{
	return line_of(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
				 "id", id ? id : json_null(),
				 "error", "code", code, "message", error_message(code)));
}

/* {"jsonrpc":"2.0","id":id,"result":result}; takes result. */
static char *
result_line(const json_t *id, json_t *result)
{
	if (!result)
		return NULL;
	return line_of(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

const char *
shim_list_changed_line(void)
{
	return "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n";
}

/* --- the methods ---------------------------------------------------------- */

static json_t *
on_initialize(const json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = versions[0];
	size_t i;

	for (i = 0; want && i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(want, versions[i]) == 0)
			v = versions[i];
	return json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}}",
			 "protocolVersion", v,
			 "capabilities", "tools", "listChanged", 1, "resources",
			 "serverInfo", "name", SHIM_SERVER_NAME, "version", "0.1.0");
}

static json_t *
on_tools_list(const struct shim_state *s)
{
	json_t *list = json_array(), *t;
	size_t i;

	for (i = 0; list && i < json_array_size(s->tools); i++) {
		t = json_array_get(s->tools, i);
		if (s->listed[i] && json_array_append(list, t) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list ? json_pack("{s:o}", "tools", list) : NULL;
}

static json_t *
on_resources_list(void)
{
	return json_pack("{s:[{s:s, s:s, s:s}]}", "resources", "uri", SHIM_PAYLOAD_URI,
			 "name", "payload", "mimeType", "application/json");
}

/* Nesting of arrays and objects; stops counting past limit. */
static int
depth(const json_t *j, int limit)
{
	const char *k;
	json_t *v;
	size_t i;
	int d, most = 0;

	if (limit <= 0 || !(json_is_object(j) || json_is_array(j)))
		return json_is_object(j) || json_is_array(j);
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if ((d = depth(v, limit - 1)) > most)
				most = d;
	} else {
		json_array_foreach(j, i, v)
			if ((d = depth(v, limit - 1)) > most)
				most = d;
	}
	return most + 1;
}

/*
 * The bridge line for a tools/call, {"operation":NAME,"arguments":ARGS}, or
 * an error code in *code. Its nesting is one more than the arguments'.
 */
static char *
bridge_call(const struct shim_state *s, const json_t *params, int *code)
{
	const json_t *name = json_object_get(params, "name");
	const json_t *args = json_object_get(params, "arguments");
	char *op = NULL, *a = NULL, *line = NULL;

	*code = RPC_INVALID_PARAMS;
	if (!json_is_object(params) || tool_index(s, json_string_value(name)) < 0 ||
	    (args && !json_is_object(args)) ||
	    (args && 1 + depth(args, SHIM_DEPTH_MAX) > SHIM_DEPTH_MAX))
		return NULL;
	*code = RPC_INTERNAL_ERROR;
	if ((op = text_of(name)) && (a = args ? text_of(args) : strdup("{}")))
		line = joined((const char *const[]){ "{\"operation\":", op, ",\"arguments\":", a,
						     "}\n", NULL });
	free(op);
	if (a) {
		memset(a, 0, strlen(a));
		free(a);
	}
	if (line && strlen(line) > SHIM_LINE_MAX) {
		*code = RPC_INVALID_PARAMS;
		memset(line, 0, strlen(line));
		free(line);
		return NULL;
	}
	return line;
}

static char *
on_resources_read(const struct shim_state *s, const json_t *id, const json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));

	if (!uri || strcmp(uri, SHIM_PAYLOAD_URI) != 0)
		return shim_error_line(id, uri ? RPC_RESOURCE_NOT_FOUND : RPC_INVALID_PARAMS);
	return result_line(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents",
					 "uri", SHIM_PAYLOAD_URI, "mimeType", "application/json",
					 "text", s->payload));
}

/* A request (it has an id): its answer, or a bridge call. */
static void
on_request(struct shim_state *s, const char *method, const json_t *id, const json_t *params,
	   struct shim_out *out)
{
	int code;

	out->action = SHIM_REPLY;
	if (params && !json_is_object(params) && !json_is_array(params))
		out->reply = shim_error_line(id, RPC_INVALID_REQUEST);
	else if (strcmp(method, "initialize") == 0) {
		out->initialized = true;
		out->reply = result_line(id, on_initialize(params));
	} else if (strcmp(method, "ping") == 0)
		out->reply = result_line(id, json_object());
	else if (strcmp(method, "tools/list") == 0)
		out->reply = result_line(id, on_tools_list(s));
	else if (strcmp(method, "resources/list") == 0)
		out->reply = result_line(id, on_resources_list());
	else if (strcmp(method, "resources/templates/list") == 0)
		out->reply = result_line(id, json_pack("{s:[]}", "resourceTemplates"));
	else if (strcmp(method, "resources/read") == 0)
		out->reply = on_resources_read(s, id, params);
	else if (strcmp(method, "tools/call") == 0) {
		if ((out->call = bridge_call(s, params, &code))) {
			out->action = SHIM_CALL;
			out->id = json_deep_copy(id);
		} else
			out->reply = shim_error_line(id, code);
	} else
		out->reply = shim_error_line(id, RPC_METHOD_NOT_FOUND);
	if (out->action == SHIM_CALL && !out->id) {
		free(out->call);
		out->call = NULL;
		out->action = SHIM_NONE;
	}
}

static bool
id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id) || json_is_null(id);
}

void
shim_handle(struct shim_state *s, const char *line, size_t len, struct shim_out *out)
{
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *id = json_object_get(m, "id");
	const char *method = json_string_value(json_object_get(m, "method"));
	const char *v = json_string_value(json_object_get(m, "jsonrpc"));

	memset(out, 0, sizeof *out);
	out->action = SHIM_REPLY;
	if (!m)
		out->reply = shim_error_line(NULL, RPC_PARSE_ERROR);
	else if (!json_is_object(m) || !v || strcmp(v, "2.0") != 0 || (id && !id_ok(id)))
		out->reply = shim_error_line(id_ok(id) ? id : NULL, RPC_INVALID_REQUEST);
	else if (!method && (json_object_get(m, "result") || json_object_get(m, "error")))
		out->action = SHIM_NONE;	/* a response to nothing we asked */
	else if (!method)
		out->reply = shim_error_line(id, RPC_INVALID_REQUEST);
	else if (!id) {
		out->action = SHIM_NONE;	/* a notification */
		out->initialized = strcmp(method, "notifications/initialized") == 0;
	} else
		on_request(s, method, id, json_object_get(m, "params"), out);
	if (out->action == SHIM_REPLY && !out->reply)
		out->action = SHIM_NONE;	/* out of memory: the client times out */
	json_decref(m);
}

void
shim_out_free(struct shim_out *out)
{
	free(out->reply);
	if (out->call) {
		memset(out->call, 0, strlen(out->call));
		free(out->call);
	}
	json_decref(out->id);
	memset(out, 0, sizeof *out);
}

/* --- the engine's lines --------------------------------------------------- */

static void
tools_changed(struct shim_state *s, int64_t rev, const json_t *names)
{
	bool now[SHIM_TOOLS_MAX] = { false };
	json_t *n;
	size_t i;
	int t;

	if (rev <= s->revision)
		return;
	json_array_foreach(names, i, n)
		if ((t = tool_index(s, json_string_value(n))) >= 0)
			now[t] = true;
	memcpy(s->listed, now, sizeof now);
	s->revision = rev;
}

/*
 * {"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":TEXT}],
 * "isError":B}} and a newline, TEXT the reply's string or a fixed text.
 */
static char *
text_result_line(const json_t *id, const json_t *text, const char *fixed)
{
	char *i = text_of(id), *t = text ? text_of(text) : NULL, *line = NULL;

	if (i && (t || !text))
		line = joined((const char *const[]){
			"{\"jsonrpc\":\"2.0\",\"id\":", i,
			",\"result\":{\"content\":[{\"type\":\"text\",\"text\":",
			t ? t : "\"", t ? "" : fixed, t ? "" : "\"",
			"}],\"isError\":", t ? "false" : "true", "}}\n", NULL });
	free(i);
	free(t);
	return line;
}

/* The answer to the call with id from a parsed bridge reply m; NULL when m is none. */
static char *
call_result(const json_t *id, const json_t *m)
{
	const json_t *allowed = json_object_get(m, "allowed"), *resp = json_object_get(m, "response");

	if (!json_is_boolean(allowed) || !resp)
		return NULL;
	if (!json_is_true(allowed))
		return text_result_line(id, NULL, SHIM_TEXT_DENIED);
	if (json_is_string(resp))
		return text_result_line(id, resp, NULL);
	return text_result_line(id, NULL, SHIM_TEXT_TOOL_ERROR);
}

enum shim_engine_line
shim_engine_answer(struct shim_state *s, const char *line, size_t len, const json_t *id,
		   char **answer)
{
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *rev = json_object_get(m, "tools_changed"), *names = json_object_get(m, "tools");
	enum shim_engine_line r = SHIM_ENGINE_BAD;

	if (answer)
		*answer = NULL;
	if (json_is_integer(rev) && json_is_array(names) && json_object_size(m) == 2) {
		tools_changed(s, json_integer_value(rev), names);
		r = SHIM_ENGINE_CHANGED;
	} else if (json_is_boolean(json_object_get(m, "allowed")) && json_object_size(m) == 2 &&
		   json_object_get(m, "response")) {
		r = SHIM_ENGINE_REPLY;
		if (id && answer)
			*answer = call_result(id, m);
	}
	json_decref(m);
	return r;
}

enum shim_engine_line
shim_engine(struct shim_state *s, const char *line, size_t len)
{
	return shim_engine_answer(s, line, len, NULL, NULL);
}

char *
shim_call_result(const json_t *id, const char *line, size_t len)
{
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	char *out = call_result(id, m);

	json_decref(m);
	return out;
}
