#include "incident.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config_json.h"

/* One list of tool names, appended to inc as op; an absent list is none. */
static int
incident_list(struct incident *inc, const json_t *list, enum cutover_op op)
{
	const json_t *name;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return -1;
	json_array_foreach(list, i, name) {
		const char *s = json_string_value(name);

		if (!s || !s[0] || strlen(s) >= SNAP_NAME_MAX || inc->n == INCIDENT_TOOLS_MAX)
			return -1;
		snprintf(inc->tool[inc->n], sizeof inc->tool[0], "%s", s);
		inc->op[inc->n++] = op;
	}
	return 0;
}

/* Only "revoke", "hold", "restore" and "why" may appear. */
static int
incident_keys(const json_t *root)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)root, key, v)
		if (strcmp(key, "revoke") != 0 && strcmp(key, "hold") != 0 &&
		    strcmp(key, "restore") != 0 && strcmp(key, "why") != 0)
			return -1;
	return 0;
}

static bool
incident_names(const struct incident *inc, const char *tool)
{
	for (size_t i = 0; i < inc->n; i++)
		if (strcmp(inc->tool[i], tool) == 0)
			return true;
	return false;
}

/* A note: a string of at most INCIDENT_WHY_MAX bytes, no control byte (NUL included). */
static bool
incident_note_ok(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t i, n = json_string_length(v);

	if (!s || n > INCIDENT_WHY_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* "why", once the lists are read: absent, or notes on tools they name. */
static int
incident_why(const struct incident *inc, const json_t *why)
{
	const char *tool;
	json_t *v;

	if (!why)
		return 0;
	if (!json_is_object(why))
		return -1;
	json_object_foreach((json_t *)why, tool, v)
		if (!incident_names(inc, tool) || !incident_note_ok(v))
			return -1;
	return 0;
}

int
incident_from_json(const json_t *root, struct incident *inc, struct al_err *err)
{
	memset(inc, 0, sizeof *inc);
	if (!json_is_object(root) || incident_keys(root) < 0 ||
	    incident_list(inc, json_object_get(root, "revoke"), CUTOVER_REVOKE) < 0 ||
	    incident_list(inc, json_object_get(root, "hold"), CUTOVER_HOLD) < 0 ||
	    incident_list(inc, json_object_get(root, "restore"), CUTOVER_RESTORE) < 0 ||
	    inc->n == 0 || incident_why(inc, json_object_get(root, "why")) < 0) {
		memset(inc, 0, sizeof *inc);
		return al_fail(err, "%s", INCIDENT_SHAPE_ERROR);
	}
	return 0;
}

int
incident_load(const char *path, struct incident *inc, struct al_err *err)
{
	json_t *root;
	int rc;

	memset(inc, 0, sizeof *inc);
	if (!(root = config_read_json(path, INCIDENT_FILE_MAX, err)))
		return -1;
	rc = incident_from_json(root, inc, err);
	json_decref(root);
	return rc;
}
