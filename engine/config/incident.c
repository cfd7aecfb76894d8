#include "incident.h"
#include "canon.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config_json.h"

/*
 * One list of tool names, appended to inc as op; an absent list is none.
 * NULL, or why not (fixed words and the file's key).
 */
static const char *
incident_list(struct incident *inc, const json_t *root, const char *key, enum cutover_op op,
	      char *why, size_t cap)
{
	const json_t *list = json_object_get(root, key), *name;
	size_t i;

	if (!list)
		return NULL;
	if (!json_is_array(list))
		return snprintf(why, cap, "\"%s\" is not a list of tool names", key), why;
	json_array_foreach(list, i, name) {
		const char *s = json_string_value(name);

		if (inc->n == INCIDENT_TOOLS_MAX)
			return snprintf(why, cap, "more than %d tools", INCIDENT_TOOLS_MAX), why;
		if (!s || !s[0] || strlen(s) >= SNAP_NAME_MAX)
			return snprintf(why, cap, "\"%s\" item %zu is not a tool name (text of 1 to "
					"%d bytes)", key, i + 1, SNAP_NAME_MAX - 1), why;
		snprintf(inc->tool[inc->n], sizeof inc->tool[0], "%s", s);
		inc->op[inc->n++] = op;
	}
	return NULL;
}

/* Only "revoke", "hold", "restore" and "why" may appear: NULL, or why not. */
static const char *
incident_keys(const json_t *root, char *why, size_t cap)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)root, key, v)
		if (strcmp(key, "revoke") != 0 && strcmp(key, "hold") != 0 &&
		    strcmp(key, "restore") != 0 && strcmp(key, "why") != 0)
			return snprintf(why, cap, "a key \"%.64s\": none of revoke, hold, restore, "
					"why", key), why;
	return NULL;
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
	size_t n = json_string_length(v);

	return s && n <= INCIDENT_WHY_MAX && !canon_has_control(s, n);
}

/* "why", once the lists are read: absent, or notes on tools they name. NULL, or why not. */
static const char *
incident_why(const struct incident *inc, const json_t *notes, char *why, size_t cap)
{
	const char *tool;
	json_t *v;

	if (!notes)
		return NULL;
	if (!json_is_object(notes))
		return "\"why\" is not an object of notes";
	json_object_foreach((json_t *)notes, tool, v) {
		if (!incident_names(inc, tool))
			return snprintf(why, cap, "\"why\" has a note on %.64s, which no list names",
					tool), why;
		if (!incident_note_ok(v))
			return snprintf(why, cap, "\"why\": the note on %.64s is not text of at most "
					"%d bytes without control characters", tool,
					INCIDENT_WHY_MAX), why;
	}
	return NULL;
}

int
incident_from_json(const json_t *root, struct incident *inc, struct al_err *err)
{
	char buf[AL_ERR_MAX / 2];
	const char *why = !json_is_object(root) ? "not an object" : incident_keys(root, buf,
										  sizeof buf);

	memset(inc, 0, sizeof *inc);
	if (!why)
		why = incident_list(inc, root, "revoke", CUTOVER_REVOKE, buf, sizeof buf);
	if (!why)
		why = incident_list(inc, root, "hold", CUTOVER_HOLD, buf, sizeof buf);
	if (!why)
		why = incident_list(inc, root, "restore", CUTOVER_RESTORE, buf, sizeof buf);
	if (!why && inc->n == 0)
		why = "no tool named";
	if (!why)
		why = incident_why(inc, json_object_get(root, "why"), buf, sizeof buf);
	if (why) {
		memset(inc, 0, sizeof *inc);
		return al_fail(err, "%s: %s", INCIDENT_SHAPE_ERROR, why);
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
