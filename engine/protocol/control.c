/*
 * Requests both ways, from the one table of ops and keys in control.h: the
 * server's parser and the clients' builder (ctl, the console's remote
 * link) read the same lines, so a request one writes the other accepts.
 * The parser never echoes its input: every refusal is a CONTROL_E_* text.
 */
#include "control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "canon.h"
#include "frame.h"
#include "grant.h"
#include "json_tree.h"

/* ---- the ops and their keys ---- */

static const struct {
	const char *name;
	enum control_role role;
	unsigned allowed, required, any_of;
} ops[CONTROL_OP_COUNT] = {
#define CONTROL_OP_ROW(e, name, role, allowed, required, any_of) \
	[CONTROL_OP_##e] = { name, CONTROL_ROLE_##role, allowed, required, any_of },
	CONTROL_OPS(CONTROL_OP_ROW)
#undef CONTROL_OP_ROW
};

enum key_type {
	T_WORD, T_PATH, T_OBJECT, T_IDS, T_BOOL, T_WAIT, T_SEQ, T_CLIENT, T_FOR, T_CALLS, T_FLOW,
	T_COUNT
};

/*
 * What a type's value is, for the parser, the digest both ways and the
 * builder alike: a string (held to text_ok), or an integer in [min, max].
 */
static const struct {
	bool text, integer;
	int64_t min, max;
} kinds[T_COUNT] = {
	[T_WORD] = { .text = true },
	[T_PATH] = { .text = true },
	[T_CLIENT] = { .text = true },
	[T_FLOW] = { .text = true },
	[T_WAIT] = { .integer = true, .min = 0, .max = CONTROL_WAIT_MAX_MS },
	[T_SEQ] = { .integer = true, .min = 0, .max = CONTROL_ID_MAX },
	[T_FOR] = { .integer = true, .min = GRANT_FOR_MIN_S, .max = GRANT_FOR_MAX_S },
	[T_CALLS] = { .integer = true, .min = 1, .max = GRANT_CALLS_MAX },
};

#define REQ_FIELD(m)	offsetof(struct control_request, m), sizeof(((struct control_request *)0)->m)

static const struct {
	const char *name;
	enum key_type type;
	size_t off, size;
} keys[CONTROL_K_COUNT] = {
#define CONTROL_KEY_ROW(e, name, type, field) [CONTROL_K_##e] = { name, T_##type, REQ_FIELD(field) },
	CONTROL_KEYS(CONTROL_KEY_ROW)
#undef CONTROL_KEY_ROW
};

#define KEYS_MAX (CONTROL_K_COUNT + 2)

const char *
control_op_name(enum control_op op)
{
	return (unsigned)op < CONTROL_OP_COUNT ? ops[op].name : "unknown";
}

int
control_op_by_name(const char *name, enum control_op *op)
{
	int i;

	for (i = 0; name && i < CONTROL_OP_COUNT; i++)
		if (strcmp(name, ops[i].name) == 0) {
			*op = (enum control_op)i;
			return 0;
		}
	return -1;
}

enum control_role
control_op_role(enum control_op op)
{
	return (unsigned)op < CONTROL_OP_COUNT ? ops[op].role : CONTROL_ROLE_OPERATE;
}

bool
control_op_changes(enum control_op op)
{
	return (unsigned)op < CONTROL_OP_COUNT && ops[op].role == CONTROL_ROLE_OPERATE;
}

void
control_audit_rule(enum control_op op, bool applied, const char *outcome, char *buf, size_t cap)
{
	bool view = outcome && strcmp(outcome, CONTROL_E_VIEW) == 0;

	snprintf(buf, cap, "%s %s%s", control_op_name(op), applied ? "by request" : "refused",
		 view ? ": " CONTROL_E_VIEW : "");
}

static int
key_by_name(const char *name)
{
	int i;

	for (i = 0; i < CONTROL_K_COUNT; i++)
		if (strcmp(name, keys[i].name) == 0)
			return i;
	return -1;
}

/* ---- value checks ---- */

/* An identifier the engine made or the operator named: [A-Za-z0-9._:-], 1..cap-1. */
static bool
word_ok(const char *s, size_t cap)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= cap)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
		    c != '.' && c != '_' && c != '-' && c != ':')
			return false;
	}
	return true;
}

/* A class flow: two words joined by one '>' ("confidential>public"). */
static bool
flow_ok(const char *s, size_t cap)
{
	const char *gt = strchr(s, '>');
	char left[SNAP_NAME_MAX];
	size_t n = gt ? (size_t)(gt - s) : 0;

	if (!gt || n == 0 || n >= sizeof left || strlen(s) >= cap)
		return false;
	memcpy(left, s, n);
	left[n] = '\0';
	return word_ok(left, sizeof left) && word_ok(gt + 1, cap);
}

/* A string key's value as its type holds it: a word, a flow, an absolute path, a client. */
static bool
text_ok(enum key_type t, const char *s, size_t cap)
{
	switch (t) {
	case T_WORD:
		return word_ok(s, cap);
	case T_FLOW:
		return flow_ok(s, cap);
	case T_PATH:
		return s[0] == '/';
	case T_CLIENT:	/* informational: the uid is the identity */
		return strcmp(s, "ctl") == 0 || strcmp(s, "console") == 0;
	default:
		return false;
	}
}

/* A string within cap, without NUL (the parser refuses \u0000), that its type holds good. */
static int
copy_text(const json_t *v, enum key_type t, char *out, size_t cap)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	if (!s || n >= cap || strlen(s) != n || !text_ok(t, s, cap))
		return -1;
	memcpy(out, s, n + 1);
	return 0;
}

static int
copy_ids(const json_t *v, struct control_request *r)
{
	size_t i;

	if (!json_is_array(v) || json_array_size(v) > CONTROL_IDS_MAX)
		return -1;
	for (i = 0; i < json_array_size(v); i++)
		if (copy_text(json_array_get(v, i), T_WORD, r->ids[i], SNAP_ID_MAX) < 0)
			return -1;
	r->n_ids = json_array_size(v);
	return 0;
}

static int
copy_range(const json_t *v, int64_t min, int64_t max, int64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/* One argument, by its key's type. */
static int
take_arg(int k, const json_t *v, struct control_request *r)
{
	enum key_type t = keys[k].type;
	char *p = (char *)r + keys[k].off;

	if (kinds[t].text)
		return copy_text(v, t, p, keys[k].size);
	if (kinds[t].integer)
		return copy_range(v, kinds[t].min, kinds[t].max, (int64_t *)p);
	switch (t) {
	case T_OBJECT:	/* as deep as the tree form carries (json_tree.h) */
		if (!json_is_object(v) || !json_tree_shallow(v))
			return -1;
		*(json_t **)p = json_incref((json_t *)v);
		return 0;
	case T_IDS:
		return copy_ids(v, r);
	case T_BOOL:
		if (!json_is_boolean(v))
			return -1;
		*(bool *)p = json_is_true(v);
		return 0;
	default:
		return -1;
	}
}

/* ---- the parser ---- */

static json_t *
load(const char *line, size_t len, const char **error)
{
	json_error_t e;
	json_t *v;

	if (len > CONTROL_LINE_MAX) {
		*error = CONTROL_E_TOO_LONG;
		return NULL;
	}
	if (memchr(line, '\0', len) || !frame_utf8_valid((const unsigned char *)line, len)) {
		*error = memchr(line, '\0', len) ? CONTROL_E_JSON : CONTROL_E_UTF8;
		return NULL;
	}
	v = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
	if (!v)
		*error = json_error_code(&e) == json_error_duplicate_key ? CONTROL_E_DUPLICATE
		       : json_error_code(&e) == json_error_out_of_memory ? CONTROL_E_MEMORY
									  : CONTROL_E_JSON;
	else if (!json_is_object(v)) {
		*error = CONTROL_E_OBJECT;
		json_decref(v);
		v = NULL;
	}
	return v;
}

static int
read_id(const json_t *o, struct control_request *r)
{
	return copy_range(json_object_get(o, "id"), 0, CONTROL_ID_MAX, &r->id);
}

/*
 * What the table cannot say: a cutover names its sessions (at least one)
 * or all of them; one target only, a path or a config, named sessions or
 * all (and "all": false alone names none).
 */
static const char *
cross_check(const struct control_request *r)
{
	unsigned seen = r->has;

	if ((r->op == CONTROL_OP_REVOKE || r->op == CONTROL_OP_RESTORE ||
	     r->op == CONTROL_OP_HOLD || r->op == CONTROL_OP_QUARANTINE ||
	     r->op == CONTROL_OP_RELEASE) && (seen & CK(SESSIONS)) && r->n_ids == 0)
		return CONTROL_E_ARG;
	/* hold and restore name a tool or a class flow: one of the two */
	if ((r->op == CONTROL_OP_HOLD || r->op == CONTROL_OP_RESTORE) &&
	    !(seen & (CK(TOOL) | CK(FLOW))))
		return CONTROL_E_MISSING;
	if ((seen & CK(FLOW)) && (seen & (CK(TOOL) | CK(FOR) | CK(CALLS))))
		return CONTROL_E_ARG;
	/* quarantine picks by names, all, or a tool called: one of the three */
	if (r->op == CONTROL_OP_QUARANTINE &&
	    (((seen & CK(TOOL)) && (seen & (CK(SESSIONS) | CK(ALL)))) ||
	     ((seen & CK(WITHIN)) && !(seen & CK(TOOL)))))
		return CONTROL_E_ARG;
	if ((seen & (CK(PATH) | CK(CONFIG))) == (CK(PATH) | CK(CONFIG)) ||
	    ((seen & CK(SESSIONS)) && r->all) ||
	    ((seen & CK(ALL)) && !r->all && !(seen & CK(SESSIONS))))
		return CONTROL_E_ARG;
	return NULL;
}

/* Once every key is read: the required ones there, and what the table cannot say. */
static const char *
judge(const struct control_request *r)
{
	if ((r->has & ops[r->op].required) != ops[r->op].required)
		return CONTROL_E_MISSING;
	if (ops[r->op].any_of && !(r->has & ops[r->op].any_of))
		return CONTROL_E_MISSING;
	return cross_check(r);
}

/* Every key known to the op and of its type; the required ones there. */
static const char *
read_args(const json_t *o, struct control_request *r)
{
	unsigned allowed = ops[r->op].allowed;
	const char *key;
	json_t *v;

	if (json_object_size(o) > KEYS_MAX)
		return CONTROL_E_KEY;
	json_object_foreach((json_t *)o, key, v) {
		int k = key_by_name(key);

		if (strcmp(key, "id") == 0 || strcmp(key, "op") == 0)
			continue;
		if (k < 0 || !((1u << k) & allowed))
			return CONTROL_E_KEY;
		if (take_arg(k, v, r) < 0)
			return CONTROL_E_ARG;
		r->has |= 1u << k;
	}
	return judge(r);
}

int
control_parse(const char *line, size_t len, struct control_request *req, const char **error)
{
	json_t *o;

	memset(req, 0, sizeof *req);
	req->id = -1;
	*error = NULL;
	o = load(line, len, error);
	if (!o)
		return -1;
	if (read_id(o, req) < 0)
		*error = CONTROL_E_ID;
	else if (control_op_by_name(json_string_value(json_object_get(o, "op")), &req->op) < 0)
		*error = json_is_string(json_object_get(o, "op")) ? CONTROL_E_OP : CONTROL_E_MISSING;
	else
		*error = read_args(o, req);
	json_decref(o);
	return *error ? -1 : 0;
}

void
control_request_free(struct control_request *req)
{
	json_decref(req->config);
	req->config = NULL;
	free(req->config_tree);
	req->config_tree = NULL;
	req->config_tree_len = 0;
}

/* ---- the digest: a request as the engine takes it from its parser ---- */

/* The refusals a parse can end in, by index (0: none). */
static const char *const parse_errors[] = {
	NULL, CONTROL_E_TOO_LONG, CONTROL_E_UTF8, CONTROL_E_JSON, CONTROL_E_DUPLICATE,
	CONTROL_E_OBJECT, CONTROL_E_ID, CONTROL_E_OP, CONTROL_E_KEY, CONTROL_E_ARG,
	CONTROL_E_MISSING, CONTROL_E_MEMORY,
};
#define PARSE_ERRORS	(sizeof parse_errors / sizeof parse_errors[0])

struct digest_head {
	int64_t id;
	uint32_t op, has, error, n_fields;
};

struct digest_field {
	uint32_t key, len;
};

static uint32_t
error_index(const char *e)
{
	uint32_t i;

	for (i = 1; i < PARSE_ERRORS; i++)
		if (strcmp(e, parse_errors[i]) == 0)
			return i;
	return PARSE_ERRORS - 1;	/* none other: out of memory */
}

static void
put_field(struct hash_canon *out, int k, const void *p, size_t n, struct digest_head *h)
{
	struct digest_field f = { (uint32_t)k, (uint32_t)n };

	hash_canon_raw(out, (const char *)&f, sizeof f);
	hash_canon_raw(out, p, n);
	h->n_fields++;
}

/*
 * A config as its tree form (json_tree.h), written in place after its
 * field's head, whose length is filled in once the tree is written.
 */
static void
put_tree(struct hash_canon *out, int k, const json_t *config, struct digest_head *h)
{
	struct digest_field f = { (uint32_t)k, 0 };
	size_t at = out->len;

	hash_canon_raw(out, (const char *)&f, sizeof f);
	json_tree_write(out, config);
	if (out->bad || out->len - at - sizeof f > UINT32_MAX) {
		out->bad = true;
		return;
	}
	f.len = (uint32_t)(out->len - at - sizeof f);
	memcpy(out->buf + at, &f, sizeof f);
	h->n_fields++;
}

/* One key's value as bytes: strings as they are, ids each ended by a NUL, a config as a tree. */
static void
put_value(struct hash_canon *out, int k, const struct control_request *r,
	  struct digest_head *h)
{
	enum key_type t = keys[k].type;
	const char *p = (const char *)r + keys[k].off;
	struct hash_canon c;
	uint8_t b;
	size_t i;

	if (kinds[t].text || kinds[t].integer) {
		put_field(out, k, p, kinds[t].text ? strlen(p) : sizeof(int64_t), h);
		return;
	}
	switch (t) {
	case T_OBJECT:
		put_tree(out, k, r->config, h);
		return;
	case T_IDS:
		hash_canon_init(&c);
		for (i = 0; i < r->n_ids; i++)
			hash_canon_raw(&c, r->ids[i], strlen(r->ids[i]) + 1);
		out->bad |= c.bad;
		put_field(out, k, c.buf, c.len, h);
		hash_canon_free(&c);
		return;
	case T_BOOL:
		b = *(const bool *)p;
		put_field(out, k, &b, 1, h);
		return;
	default:
		return;
	}
}

int
control_digest(const char *line, size_t len, struct hash_canon *out)
{
	struct digest_head h = { 0 };
	struct control_request r;
	const char *error;
	int k;

	out->len = 0;
	out->bad = false;
	hash_canon_raw(out, (const char *)&h, sizeof h);	/* its place */
	if (control_parse(line, len, &r, &error) < 0)
		h.error = error_index(error);
	else {
		h.op = (uint32_t)r.op;
		h.has = r.has;
		for (k = 0; k < CONTROL_K_COUNT; k++)
			if (r.has >> k & 1)
				put_value(out, k, &r, &h);
	}
	h.id = r.id;
	control_request_free(&r);
	if (out->bad)
		return -1;
	memcpy(out->buf, &h, sizeof h);
	return 0;
}

static int
take_ids(const char *p, size_t n, struct control_request *r)
{
	const char *end = p + n, *nul;

	if (n && p[n - 1] != '\0')
		return -1;
	for (r->n_ids = 0; p < end; p = nul + 1) {
		nul = memchr(p, '\0', (size_t)(end - p));
		if (r->n_ids == CONTROL_IDS_MAX ||
		    bytes_str(r->ids[r->n_ids], SNAP_ID_MAX, p, (size_t)(nul - p)) < 0 ||
		    !word_ok(r->ids[r->n_ids], SNAP_ID_MAX))
			return -1;
		r->n_ids++;
	}
	return 0;
}

static int
take_range(const char *p, size_t n, int64_t min, int64_t max, int64_t *out)
{
	if (n != sizeof *out)
		return -1;
	memcpy(out, p, sizeof *out);
	return *out < min || *out > max ? -1 : 0;
}

/* One value, held to what the parser holds a JSON value to (take_arg). */
static int
take_value(int k, const char *p, size_t n, struct control_request *r)
{
	enum key_type t = keys[k].type;
	char *at = (char *)r + keys[k].off;

	if (kinds[t].text)
		return bytes_str(at, keys[k].size, p, n) < 0 || !text_ok(t, at, keys[k].size) ? -1 : 0;
	if (kinds[t].integer)
		return take_range(p, n, kinds[t].min, kinds[t].max, (int64_t *)at);
	switch (t) {
	case T_OBJECT:	/* kept as a tree: built once the peer's role allows it */
		if (n < 2 || (uint8_t)p[0] != JSON_TREE_OBJECT || !(r->config_tree = malloc(n)))
			return -1;
		memcpy(r->config_tree, p, n);
		r->config_tree_len = n;
		return 0;
	case T_IDS:
		return take_ids(p, n, r);
	case T_BOOL:
		if (n != 1 || (uint8_t)p[0] > 1)
			return -1;
		*(bool *)at = p[0] == 1;
		return 0;
	default:
		return -1;
	}
}

static int
read_fields(const char *p, const char *end, uint32_t n, struct control_request *r)
{
	struct digest_field f;
	unsigned seen = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if ((size_t)(end - p) < sizeof f)
			return -1;
		memcpy(&f, p, sizeof f);
		p += sizeof f;
		if (f.key >= CONTROL_K_COUNT || !(r->has >> f.key & 1) || (seen >> f.key & 1) ||
		    f.len > (size_t)(end - p) || take_value((int)f.key, p, f.len, r) < 0)
			return -1;
		seen |= 1u << f.key;
		p += f.len;
	}
	return p == end && seen == r->has ? 0 : -1;
}

int
control_digest_read(const void *body, size_t len, struct control_request *r,
		    const char **error)
{
	const char *p = body;
	struct digest_head h;

	memset(r, 0, sizeof *r);
	r->id = -1;
	*error = NULL;
	if (!body || len < sizeof h)
		return -1;
	memcpy(&h, p, sizeof h);
	if (h.id < -1 || h.id > CONTROL_ID_MAX)
		return -1;
	if (h.error) {
		if (h.error >= PARSE_ERRORS || h.op || h.has || h.n_fields || len != sizeof h)
			return -1;
		r->id = h.id;
		*error = parse_errors[h.error];
		return 1;
	}
	if (h.id < 0 || h.op >= CONTROL_OP_COUNT || (h.has & ~ops[h.op].allowed))
		return -1;
	r->id = h.id;
	r->op = (enum control_op)h.op;
	r->has = h.has;
	/* the parser said yes: a request it should have refused is a lie */
	if (read_fields(p + sizeof h, p + len, h.n_fields, r) < 0 || judge(r)) {
		control_request_free(r);
		memset(r, 0, sizeof *r);
		r->id = -1;
		return -1;
	}
	return 0;
}

int
control_request_load_config(struct control_request *r)
{
	if (!r->config_tree)
		return 0;
	json_decref(r->config);
	r->config = json_tree_read(r->config_tree, r->config_tree_len);
	if (json_is_object(r->config))
		return 0;
	json_decref(r->config);
	r->config = NULL;
	return -1;
}

/* ---- the builder ---- */

static json_t *
ids_json(const struct control_request *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < r->n_ids && i < CONTROL_IDS_MAX; i++)
		if (json_array_append_new(a, json_string(r->ids[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
arg_json(int k, const struct control_request *r)
{
	enum key_type t = keys[k].type;
	const char *p = (const char *)r + keys[k].off;

	if (kinds[t].text)
		return json_string(p);
	if (kinds[t].integer)
		return json_integer(*(const int64_t *)p);
	switch (t) {
	case T_OBJECT:
		return json_incref(*(json_t *const *)p);
	case T_IDS:
		return ids_json(r);
	case T_BOOL:
		return json_boolean(*(const bool *)p);
	default:
		return NULL;
	}
}

json_t *
control_request_json(const struct control_request *req)
{
	json_t *o;
	int k;

	if ((unsigned)req->op >= CONTROL_OP_COUNT || (req->has & ~ops[req->op].allowed))
		return NULL;
	o = json_object();
	if (o && req->id >= 0 && json_object_set_new(o, "id", json_integer(req->id)) < 0)
		goto fail;
	if (o && json_object_set_new(o, "op", json_string(ops[req->op].name)) < 0)
		goto fail;
	for (k = 0; o && k < CONTROL_K_COUNT; k++)
		if ((req->has & (1u << k)) && json_object_set_new(o, keys[k].name, arg_json(k, req)) < 0)
			goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

void
control_request_init(struct control_request *r, enum control_op op)
{
	memset(r, 0, sizeof *r);
	r->id = -1;
	r->op = op;
}

void
control_request_config(struct control_request *r, json_t *config)
{
	json_decref(r->config);
	r->config = config;
	r->has |= CONTROL_KEY(CONFIG);
}

int
control_request_str(struct control_request *r, enum control_key k, const char *s)
{
	char *p = (char *)r + keys[k].off;

	if (!kinds[keys[k].type].text || !s || strlen(s) >= keys[k].size)
		return -1;
	memcpy(p, s, strlen(s) + 1);
	r->has |= 1u << k;
	return 0;
}

int
control_request_add_id(struct control_request *r, const char *id)
{
	if (r->n_ids >= CONTROL_IDS_MAX || !id || strlen(id) >= SNAP_ID_MAX)
		return -1;
	memcpy(r->ids[r->n_ids++], id, strlen(id) + 1);
	r->has |= CK(SESSIONS);
	return 0;
}

void
control_request_bool(struct control_request *r, enum control_key k, bool v)
{
	if (keys[k].type == T_BOOL) {
		*(bool *)((char *)r + keys[k].off) = v;
		r->has |= 1u << k;
	}
}

void
control_request_int(struct control_request *r, enum control_key k, int64_t v)
{
	if (kinds[keys[k].type].integer) {
		*(int64_t *)((char *)r + keys[k].off) = v;
		r->has |= 1u << k;
	}
}

/* ---- roles ---- */

const char *
control_role_name(enum control_role r)
{
	return r == CONTROL_ROLE_OPERATE ? "operate" : r == CONTROL_ROLE_VIEW ? "view" : "none";
}

static bool
member(const struct control_peer *p, struct control_group g)
{
	size_t i;

	if (!g.present)
		return false;
	if (p->gid == g.gid)
		return true;
	for (i = 0; i < p->n_groups; i++)
		if (p->groups[i] == g.gid)
			return true;
	return false;
}

enum control_role
control_role_of(const struct control_peer *p, uid_t self, struct control_group operate,
		struct control_group view)
{
	if (p->uid == 0 || p->uid == self || member(p, operate))
		return CONTROL_ROLE_OPERATE;
	return member(p, view) ? CONTROL_ROLE_VIEW : CONTROL_ROLE_NONE;
}

int
control_not_allowed(char *buf, size_t cap, uid_t uid, const char *operate, const char *view)
{
	return snprintf(buf, cap, CONTROL_E_PEER ": uid %u is in neither '%.*s' (operate) nor "
			"'%.*s' (view)", (unsigned)uid, CONTROL_GROUP_NAME_MAX,
			operate ? operate : "none", CONTROL_GROUP_NAME_MAX, view ? view : "none");
}

/* ---- lines ---- */

char *
control_line(const json_t *v, size_t max, size_t *len)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;

	return text ? frame_line(text, max, len) : NULL;
}
