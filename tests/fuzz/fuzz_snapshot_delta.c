#include "fuzz.h"

#include <string.h>

#include "control.h"
#include "supervisor.h"

/*
 * A console applying what an engine pushes (engine/protocol/control.h,
 * control_snapshot_apply): the input is a base snapshot body, a NUL, and a
 * delta (without a NUL, the delta alone onto a fixed base). It applies or
 * is refused; applied, every row is an object under its own id, once.
 * Then both directions agree: the delta the engine would say from the base
 * to what was applied, applied to the base, gives the same snapshot.
 */

static const char fixed_base[] =
	"{\"taken_ms\":1700000001000,\"generation\":3,\"live\":2,\"frozen\":false,"
	"\"sessions\":[{\"id\":\"s-1\",\"state\":\"running\",\"counters\":{\"calls\":4},"
	"\"lease\":{\"ack_us\":[300,310]}},{\"id\":\"s-2\",\"state\":\"ended\",\"end\":\"exit\"}]}";

static bool
has_null(const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_null(v))
		return true;
	json_object_foreach((json_t *)v, k, x)
		if (has_null(x))
			return true;
	json_array_foreach(v, i, x)
		if (has_null(x))
			return true;
	return false;
}

static void
check_rows(const json_t *snap)
{
	json_t *seen = json_object(), *row;
	size_t i;

	FUZZ_CHECK(seen != NULL);
	FUZZ_CHECK(json_is_array(json_object_get(snap, "sessions")));
	json_array_foreach(json_object_get(snap, "sessions"), i, row) {
		const char *id = json_string_value(json_object_get(row, "id"));

		FUZZ_CHECK(json_is_object(row) && id);
		FUZZ_CHECK(!json_object_get(seen, id));
		json_object_set(seen, id, json_true());
	}
	json_decref(seen);
}

/* The engine's delta from base to after, applied to base, gives after. */
static void
check_round_trip(const json_t *base, const json_t *after)
{
	json_t *d, *copy;

	if (has_null(after) || !json_is_integer(json_object_get(base, "taken_ms")))
		return;		/* the engine sends such a body whole */
	d = control_snapshot_delta(base, after);
	FUZZ_CHECK(d != NULL);
	copy = json_deep_copy(base);
	FUZZ_CHECK(control_snapshot_apply(copy, d) == 0);
	FUZZ_CHECK(json_equal(copy, after));
	json_decref(copy);
	json_decref(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	json_t *base, *orig, *delta;
	struct supervisor_snapshot s = { 0 };
	int rc;

	if (nul) {
		base = json_loadb((const char *)data, (size_t)(nul - data), 0, NULL);
		size -= (size_t)(nul - data) + 1;
		data = nul + 1;
	} else
		base = json_loads(fixed_base, 0, NULL);
	delta = json_loadb((const char *)data, size, 0, NULL);
	orig = json_deep_copy(base);
	if (base && delta) {
		rc = control_snapshot_apply(base, delta);
		FUZZ_CHECK(rc == 0 || rc == -1);
		if (rc == 0) {
			check_rows(base);
			check_round_trip(orig, base);
			FUZZ_CHECK(control_snapshot_from_json(base, &s) == 0);
			supervisor_snapshot_free(&s);
		}
	}
	json_decref(orig);
	json_decref(delta);
	json_decref(base);
	return 0;
}
