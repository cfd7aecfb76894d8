#include "fuzz.h"

#include <string.h>

#include "canon.h"
#include "control.h"
#include "frame.h"

/*
 * The control socket's request parser (engine/protocol/control.h). The input is one
 * client line. An accepted request names a known op and an id within
 * 2^53, its words are non-empty identifiers, and the same bytes are one
 * JSON object without duplicate keys. A refused one gets one of the fixed
 * texts, and the reply line built from it holds nothing of the input.
 * The digest its connection's parser writes of the line (control_digest)
 * is one the engine reads, to the same verdict: the same request (op,
 * keys, id, an inline config equal once built from its tree) or the same
 * refusal.
 */

static const char *const fixed[] = {
	CONTROL_E_TOO_LONG, CONTROL_E_UTF8, CONTROL_E_JSON, CONTROL_E_DUPLICATE,
	CONTROL_E_OBJECT, CONTROL_E_ID, CONTROL_E_OP, CONTROL_E_KEY, CONTROL_E_ARG,
	CONTROL_E_MISSING, CONTROL_E_MEMORY,
};

static bool
is_fixed(const char *e)
{
	size_t i;

	for (i = 0; e && i < sizeof fixed / sizeof fixed[0]; i++)
		if (e == fixed[i] || strcmp(e, fixed[i]) == 0)
			return true;
	return false;
}

static bool
word(const char *s, size_t cap, bool may_be_empty)
{
	size_t n = strnlen(s, cap);

	return n < cap && (may_be_empty || n > 0) && fuzz_printable(s) && !strchr(s, ' ') &&
	       !strchr(s, '"') && !strchr(s, '\\');
}

static void
check_accepted(const uint8_t *data, size_t size, const struct control_request *r)
{
	json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	size_t i;

	FUZZ_CHECK(json_is_object(o));
	json_decref(o);
	FUZZ_CHECK(size <= CONTROL_LINE_MAX && frame_utf8_valid(data, size));
	FUZZ_CHECK(r->id >= 0 && r->id <= CONTROL_ID_MAX);
	FUZZ_CHECK((unsigned)r->op < CONTROL_OP_COUNT);
	FUZZ_CHECK(word(r->session, sizeof r->session, true) && word(r->tool, sizeof r->tool, true));
	FUZZ_CHECK(r->n_ids <= CONTROL_IDS_MAX);
	for (i = 0; i < r->n_ids; i++)
		FUZZ_CHECK(word(r->ids[i], SNAP_ID_MAX, false));
	FUZZ_CHECK(r->path[0] == '\0' || r->path[0] == '/');
	FUZZ_CHECK(!(r->path[0] && r->config));
	FUZZ_CHECK(r->wait_ms >= 0 && r->wait_ms <= CONTROL_WAIT_MAX_MS);
	if (r->op == CONTROL_OP_REVOKE || r->op == CONTROL_OP_RESTORE)
		FUZZ_CHECK(r->tool[0] && r->all != (r->n_ids > 0));
}

static void
check_refused(int64_t id, const char *error)
{
	json_t *reply = control_error(id, error, NULL);
	size_t n = 0;
	char *line = control_line(reply, CONTROL_FRAME_MAX, &n);
	char want[128];

	FUZZ_CHECK(is_fixed(error));
	FUZZ_CHECK(id >= -1 && id <= CONTROL_ID_MAX);
	if (id < 0)
		snprintf(want, sizeof want, "{\"id\":null,\"ok\":false,\"error\":\"%s\"}\n", error);
	else
		snprintf(want, sizeof want, "{\"id\":%lld,\"ok\":false,\"error\":\"%s\"}\n",
			 (long long)id, error);
	FUZZ_CHECK(line && strcmp(line, want) == 0);
	free(line);
	json_decref(reply);
}

static void
check_digest(const uint8_t *data, size_t size, int parsed, const struct control_request *r,
	     const char *error)
{
	struct control_request d;
	struct hash_canon c;
	const char *derror;
	int rc;

	hash_canon_init(&c);
	FUZZ_CHECK(control_digest((const char *)data, size, &c) == 0);
	rc = control_digest_read(c.buf, c.len, &d, &derror);
	FUZZ_CHECK(rc == (parsed == 0 ? 0 : 1));
	FUZZ_CHECK(d.id == r->id);
	if (rc == 0) {
		FUZZ_CHECK(d.op == r->op && d.has == r->has && d.n_ids == r->n_ids);
		FUZZ_CHECK(strcmp(d.session, r->session) == 0 && strcmp(d.tool, r->tool) == 0);
		FUZZ_CHECK(!r->config == !d.config_tree);
		FUZZ_CHECK(!d.config_tree || control_request_load_config(&d) == 0);
		FUZZ_CHECK(!r->config || json_equal(r->config, d.config));
	} else
		FUZZ_CHECK(strcmp(derror, error) == 0);
	control_request_free(&d);
	hash_canon_free(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_request r;
	const char *error;
	int parsed = control_parse((const char *)data, size, &r, &error);

	if (parsed == 0)
		check_accepted(data, size, &r);
	else
		check_refused(r.id, error);
	check_digest(data, size, parsed, &r, error);
	control_request_free(&r);
	FUZZ_CHECK(r.config == NULL);
	return 0;
}
