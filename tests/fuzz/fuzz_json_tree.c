#include "fuzz.h"

#include <string.h>

#include "canon.h"
#include "json_tree.h"

/*
 * A JSON value's tree form (engine/base/json_tree.h), what the engine
 * builds a peer's inline config from. Every input is tried both ways:
 * as a tree, the reader refuses it or accepts a value that the writer
 * gives back as the same bytes; as JSON text parsed as the control parser
 * parses (engine/protocol/control.c), a value within the depth bound is
 * written, read back equal and written again to the same bytes, and one
 * deeper is refused by the writer.
 */

#define PARSER_FLAGS	(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

static void
check_written(const json_t *v, const uint8_t *want, size_t len)
{
	struct hash_canon c;

	hash_canon_init(&c);
	json_tree_write(&c, v);
	FUZZ_CHECK(!c.bad && c.len == len && memcmp(c.buf, want, len) == 0);
	hash_canon_free(&c);
}

static void
as_tree(const uint8_t *data, size_t size)
{
	json_t *v = json_tree_read(data, size);

	if (!v)
		return;
	FUZZ_CHECK(json_tree_shallow(v));
	check_written(v, data, size);
	json_decref(v);
}

static void
as_text(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, PARSER_FLAGS, NULL), *back;
	struct hash_canon c;

	if (!v)
		return;
	hash_canon_init(&c);
	json_tree_write(&c, v);
	FUZZ_CHECK(c.bad == !json_tree_shallow(v));
	if (!c.bad) {
		back = json_tree_read(c.buf, c.len);
		FUZZ_CHECK(back && json_equal(v, back));
		check_written(back, (const uint8_t *)c.buf, c.len);
		json_decref(back);
	}
	hash_canon_free(&c);
	json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_tree(data, size);
	as_text(data, size);
	return 0;
}
