/*
 * Pushed snapshots as deltas (docs/operations.md, "Snapshot deltas").
 *
 * A console far from its engine pays for every pushed snapshot: about
 * 1.1 kB a session, four times a second, though a looping session changes
 * only its counters and lease figures between two pushes. A delta carries,
 * against the previous push, a JSON merge patch (RFC 7386) of the
 * snapshot's own fields and one of each row that changed, keyed by session
 * id, and the ids in order only when the set or the order changed.
 *
 * Bodies never hold a JSON null (a snapshot has no such field), so a null
 * in a patch always means "removed"; a body that holds one is not
 * diffed (the caller sends it whole).
 */
#include "control.h"

#include <string.h>

static bool
has_null(const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t i;

	if (json_is_null(v))
		return true;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if (has_null(x))
				return true;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if (has_null(x))
				return true;
	}
	return false;
}

/* Put v (shared, not copied) at key; -1 on a null inside it or no memory. */
static int
put_whole(json_t *patch, const char *key, json_t *v)
{
	return has_null(v) ? -1 : json_object_set(patch, key, v);
}

/*
 * The merge patch that turns object from into object to, skipping the key
 * skip (NULL: none). 1 with *out set, 0 when equal (*out NULL), -1 when it
 * cannot be said (a null in to, no memory).
 */
static int
merge_diff(const json_t *from, const json_t *to, const char *skip, json_t **out)
{
	json_t *patch = json_object(), *x, *sub;
	const char *k;
	int rc = 0;

	*out = NULL;
	if (!patch)
		return -1;
	json_object_foreach((json_t *)to, k, x) {
		json_t *was = json_object_get(from, k);

		if (skip && strcmp(k, skip) == 0)
			continue;
		if (json_is_object(was) && json_is_object(x)) {
			rc = merge_diff(was, x, NULL, &sub);
			if (rc > 0)
				rc = json_object_set_new(patch, k, sub);
		} else if (!was || !json_equal(was, x))
			rc = put_whole(patch, k, x);
		if (rc < 0)
			goto fail;
	}
	json_object_foreach((json_t *)from, k, x)
		if (!(skip && strcmp(k, skip) == 0) && !json_object_get(to, k) &&
		    json_object_set_new(patch, k, json_null()) < 0)
			goto fail;
	if (json_object_size(patch) == 0) {
		json_decref(patch);
		return 0;
	}
	*out = patch;
	return 1;
fail:
	json_decref(patch);
	return -1;
}

/* RFC 7386 onto an object, in place. Patch values are shared, never mutated. */
static int
merge_apply(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *x;

	json_object_foreach((json_t *)patch, k, x) {
		json_t *t = json_object_get(target, k);

		if (json_is_null(x))
			json_object_del(target, k);
		else if (json_is_object(x)) {
			if (!json_is_object(t)) {
				t = json_object();
				if (!t || json_object_set_new(target, k, t) < 0)
					return -1;
			}
			if (merge_apply(t, x) < 0)
				return -1;
		} else if (json_object_set(target, k, x) < 0)
			return -1;
	}
	return 0;
}

/* The rows of a snapshot body by id (shared); NULL on a row without one, a twin, no memory. */
static json_t *
rows_by_id(const json_t *body)
{
	json_t *by = json_object(), *row;
	size_t i;

	json_array_foreach(json_object_get(body, "sessions"), i, row) {
		const char *id = json_string_value(json_object_get(row, "id"));

		if (!by || !id || json_object_get(by, id) || json_object_set(by, id, row) < 0) {
			json_decref(by);
			return NULL;
		}
	}
	return by;
}

static bool
same_order(const json_t *from, const json_t *to)
{
	const json_t *a = json_object_get(from, "sessions"), *b = json_object_get(to, "sessions");
	size_t i, n = json_array_size(b);

	if (json_array_size(a) != n)
		return false;
	for (i = 0; i < n; i++)
		if (!json_equal(json_object_get(json_array_get(a, i), "id"),
				json_object_get(json_array_get(b, i), "id")))
			return false;
	return true;
}

static json_t *
order_of(const json_t *body)
{
	json_t *ids = json_array(), *row;
	size_t i;

	json_array_foreach(json_object_get(body, "sessions"), i, row)
		if (!ids || json_array_append(ids, json_object_get(row, "id")) < 0) {
			json_decref(ids);
			return NULL;
		}
	return ids;
}

/* Each row of to that differs from its namesake in from (or is new): its patch. */
static json_t *
rows_diff(const json_t *from, const json_t *to)
{
	json_t *by = rows_by_id(from), *rows = json_object(), *empty = json_object(), *row, *p;
	size_t i;
	int rc = by && rows && empty ? 0 : -1;

	json_array_foreach(json_object_get(to, "sessions"), i, row) {
		const char *id = json_string_value(json_object_get(row, "id"));
		json_t *was = id ? json_object_get(by, id) : NULL;

		if (rc < 0 || !id || !json_is_object(row) || json_object_get(rows, id)) {
			rc = -1;
			break;
		}
		rc = merge_diff(was ? was : empty, row, NULL, &p);
		if (rc > 0)
			rc = json_object_set_new(rows, id, p);
	}
	json_decref(by);
	json_decref(empty);
	if (rc < 0) {
		json_decref(rows);
		return NULL;
	}
	return rows;
}

json_t *
control_snapshot_delta(const json_t *from, const json_t *to)
{
	json_t *d, *patch, *rows;
	int rc;

	if (!json_is_object(from) || !json_is_object(to) ||
	    !json_is_integer(json_object_get(from, "taken_ms")))
		return NULL;
	d = json_pack("{s:O}", "base", json_object_get(from, "taken_ms"));
	rows = rows_diff(from, to);
	rc = d && rows ? merge_diff(from, to, "sessions", &patch) : -1;
	if (rc > 0)
		rc = json_object_set_new(d, "patch", patch);
	if (rc >= 0 && json_object_size(rows) > 0)
		rc = json_object_set(d, "rows", rows);
	if (rc >= 0 && !same_order(from, to))
		rc = json_object_set_new(d, "order", order_of(to));
	json_decref(rows);
	if (rc < 0) {
		json_decref(d);
		return NULL;
	}
	return d;
}

/* The ids the new snapshot has, in order: the delta's, or the base's. */
static json_t *
ids_after(const json_t *base, const json_t *delta)
{
	const json_t *order = json_object_get(delta, "order"), *id;
	json_t *seen;
	size_t i;

	if (!order)
		return order_of(base);
	if (!json_is_array(order) || !(seen = json_object()))
		return NULL;
	json_array_foreach(order, i, id)	/* bounded by the frame's size */
		if (!json_is_string(id) || json_object_get(seen, json_string_value(id)) ||
		    json_object_set(seen, json_string_value(id), json_true()) < 0)
			break;
	json_decref(seen);
	return i == json_array_size(order) ? json_incref((json_t *)order) : NULL;
}

/* The base's rows, patched and ordered: a new "sessions" array, or NULL. */
static json_t *
rows_after(const json_t *base, const json_t *delta)
{
	const json_t *patches = json_object_get(delta, "rows");
	json_t *by = rows_by_id(base), *ids = ids_after(base, delta), *rows = json_array(), *id;
	size_t i, used = 0;
	int rc = by && ids && rows && (!patches || json_is_object(patches)) ? 0 : -1;

	json_array_foreach(ids, i, id) {
		const char *key = json_string_value(id);
		json_t *row = json_object_get(by, key), *p = json_object_get(patches, key);

		if (rc < 0 || (!row && !json_is_object(p)) || (p && !json_is_object(p)))
			break;
		if (!row)
			rc = json_array_append_new(rows, row = json_object());
		else
			rc = json_array_append(rows, row);
		if (rc == 0 && p) {
			rc = merge_apply(row, p);
			used++;
		}
		if (rc == 0 && !json_equal(json_object_get(row, "id"), id))
			rc = -1;	/* a row is its id's, before and after */
	}
	/* Every row the delta names is in the new set, and every id had a row. */
	if (rc < 0 || i < json_array_size(ids) || used != json_object_size(patches)) {
		json_decref(rows);
		rows = NULL;
	}
	json_decref(by);
	json_decref(ids);
	return rows;
}

int
control_snapshot_apply(json_t *base, const json_t *delta)
{
	const json_t *patch = json_object_get(delta, "patch");
	json_t *rows;

	if (!json_is_object(base) || !json_is_object(delta) ||
	    !json_is_integer(json_object_get(delta, "base")) ||
	    !json_equal(json_object_get(delta, "base"), json_object_get(base, "taken_ms")))
		return -1;
	if (patch && (!json_is_object(patch) || json_object_get(patch, "sessions")))
		return -1;
	rows = rows_after(base, delta);
	if (!rows)
		return -1;
	if ((patch && merge_apply(base, patch) < 0) ||
	    json_object_set_new(base, "sessions", rows) < 0)
		return -1;
	return 0;
}
