#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "incident.h"
#include "scratch.h"

/*
 * The incident file the console's :apply reads: the one shape it takes,
 * every shape it refuses with the same fixed message, its optional notes, the reader's own
 * refusals (no file, not a regular file, too large, bad JSON, a key twice)
 * and the bound on the number of cutovers.
 */

static char dir[256];

static int
setup(void **state)
{
	(void)state;
	scratch_make(dir, sizeof dir, "incident");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	scratch_remove(dir);
	return 0;
}

/* Write text to dir/name; returns the path (static). */
static const char *
file_with(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Load text as a file; returns the error message, "" when it loaded. */
static const char *
load(const char *text, struct incident *inc)
{
	static struct al_err err;

	err.msg[0] = '\0';
	if (incident_load(file_with("incident.json", text), inc, &err) == 0)
		assert_string_equal(err.msg, "");
	else
		assert_string_not_equal(err.msg, "");
	return err.msg;
}

static void
refused(const char *text, const char *part)
{
	struct incident inc;
	const char *msg = load(text, &inc);

	if (!strstr(msg, part))
		fail_msg("%s: expected an error containing '%s', got '%s'", text, part, msg);
	assert_int_equal(inc.n, 0);
}

/* text loads as the cutovers in want: "-tool" a revoke, "~tool" a hold, "+tool" a restore, in order. */
static void
loads_as(const char *text, const char *want)
{
	struct incident inc;
	char got[INCIDENT_TOOLS_MAX * (SNAP_NAME_MAX + 2)] = "";
	size_t i;

	assert_string_equal(load(text, &inc), "");
	for (i = 0; i < inc.n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%c%s", i ? " " : "",
			 inc.op[i] == CUTOVER_REVOKE ? '-' : inc.op[i] == CUTOVER_HOLD ? '~' : '+',
			 inc.tool[i]);
	assert_string_equal(got, want);
}

static void
test_valid(void **state)
{
	(void)state;
	/* Revokes first, each list in file order. */
	loads_as("{\"restore\": [\"mail.send\"], \"revoke\": [\"store\", \"fetch\"]}",
		 "-store -fetch +mail.send");
	loads_as("{\"revoke\": [\"store\"]}", "-store");
	loads_as("{\"restore\": [\"store\"], \"revoke\": []}", "+store");
	/* Holds between the revokes and the restores, whatever the file's key order. */
	loads_as("{\"restore\": [\"a\"], \"hold\": [\"b\", \"c\"], \"revoke\": [\"d\"]}",
		 "-d ~b ~c +a");
	loads_as("{\"hold\": [\"mail.send\"]}", "~mail.send");
	loads_as("{\"hold\": [\"store\"], \"why\": {\"store\": \"under review\"}}", "~store");
}

/* Each shape the console refused before the parser moved here, same words. */
static void
test_malformed(void **state)
{
	static const char *const bad[] = {
		"[\"store\"]",					/* not an object */
		"{}",						/* nothing to do */
		"{\"revoke\": []}",
		"{\"revoke\": [], \"restore\": []}",
		"{\"revoke\": [\"store\"], \"stop\": [\"s-1\"]}",	/* another key */
		"{\"Revoke\": [\"store\"]}",
		"{\"revoke\": \"store\"}",			/* not a list */
		"{\"revoke\": {\"store\": true}}",
		"{\"revoke\": null}",
		"{\"revoke\": [\"store\", 7]}",			/* not a string */
		"{\"restore\": [null]}",
		"{\"revoke\": [\"\"]}",				/* empty */
		"{\"hold\": []}",
		"{\"hold\": \"store\"}",
		"{\"hold\": [7]}",
		"{\"Hold\": [\"store\"]}",
	};
	size_t i;

	(void)state;
	assert_string_equal(INCIDENT_SHAPE_ERROR,
			    "expected {\"revoke\", \"hold\", \"restore\": [tools]}");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refused(bad[i], INCIDENT_SHAPE_ERROR);
	/* Then what is wrong, in the file's own words. */
	refused("{\"revoke\": \"post\"}", ": \"revoke\" is not a list of tool names");
	refused("{\"revok\": [\"post\"]}", ": a key \"revok\": none of revoke, hold, restore, why");
	refused("{}", ": no tool named");
	refused("{\"hold\": [\"a\", 7]}", ": \"hold\" item 2 is not a tool name");
	refused("[\"store\"]", ": not an object");
}

/* A name as long as a tool name may be is taken; one longer is refused. */
static void
test_name_length(void **state)
{
	char text[SNAP_NAME_MAX + 32], name[SNAP_NAME_MAX + 1];
	struct incident inc;

	(void)state;
	memset(name, 'a', SNAP_NAME_MAX - 1);
	name[SNAP_NAME_MAX - 1] = '\0';
	snprintf(text, sizeof text, "{\"revoke\": [\"%s\"]}", name);
	assert_string_equal(load(text, &inc), "");
	assert_string_equal(inc.tool[0], name);
	strcat(name, "a");
	snprintf(text, sizeof text, "{\"revoke\": [\"%s\"]}", name);
	refused(text, INCIDENT_SHAPE_ERROR);
}

/* INCIDENT_TOOLS_MAX cutovers in all, across both lists; one more is refused. */
static void
test_bound(void **state)
{
	char text[INCIDENT_TOOLS_MAX * 16 + 64];
	struct incident inc;
	size_t i, n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof text - n, "{\"revoke\": [");
	for (i = 0; i < INCIDENT_TOOLS_MAX - 1; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s\"t%zu\"", i ? ", " : "", i);
	n += (size_t)snprintf(text + n, sizeof text - n, "], \"restore\": [\"last\"]}");
	assert_string_equal(load(text, &inc), "");
	assert_int_equal(inc.n, INCIDENT_TOOLS_MAX);
	assert_string_equal(inc.tool[INCIDENT_TOOLS_MAX - 1], "last");
	assert_int_equal(inc.op[INCIDENT_TOOLS_MAX - 1], CUTOVER_RESTORE);
	snprintf(text + n - 2, sizeof text - (n - 2), ", \"one.more\"]}");
	refused(text, INCIDENT_SHAPE_ERROR);
}

/* A tool named twice is two cutovers, as before; a key twice is refused by the reader. */
static void
test_duplicates(void **state)
{
	(void)state;
	loads_as("{\"revoke\": [\"store\", \"store\"], \"restore\": [\"store\"]}",
		 "-store -store +store");
	refused("{\"revoke\": [\"store\"], \"revoke\": [\"fetch\"]}", "duplicate object key");
}

/* The reader's refusals come through with its words, without the path. */
static void
test_reader(void **state)
{
	struct al_err err = { "" };
	struct incident inc;
	char path[512], *big;

	(void)state;
	snprintf(path, sizeof path, "%s/no-such.json", dir);
	assert_int_equal(incident_load(path, &inc, &err), -1);
	assert_string_equal(err.msg, "cannot open: No such file or directory");
	assert_int_equal(incident_load(dir, &inc, &err), -1);
	assert_string_equal(err.msg, "not a regular file");
	snprintf(path, sizeof path, "%s/incident.fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(incident_load(path, &inc, &err), -1);	/* at once: no writer is waited for */
	assert_string_equal(err.msg, "not a regular file");
	refused("{\"revoke\": [\"store\"", "line 1 column");
	refused("\"store\"", "'[' or '{' expected");	/* the reader takes no bare value */
	big = malloc(INCIDENT_FILE_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', INCIDENT_FILE_MAX + 1);
	big[INCIDENT_FILE_MAX + 1] = '\0';
	refused(big, "larger than 65536 bytes");
	free(big);
}

/*
 * "why": notes on the tools the lists name, which change nothing: the
 * cutovers are those of the file without it. Anything else in it is the
 * shape error, as is any other key still.
 */
static void
test_why(void **state)
{
	char text[INCIDENT_WHY_MAX + 128], note[INCIDENT_WHY_MAX + 2];

	(void)state;
	loads_as("{\"restore\": [\"store\"], \"why\": {\"store\": \"3 calls in 2 sessions\"}}",
		 "+store");
	loads_as("{\"revoke\": [\"fetch\"], \"restore\": [\"store\"], \"why\": {}}",
		 "-fetch +store");
	loads_as("{\"why\": {\"fetch\": \"a\", \"store\": \"b\"}, \"revoke\": [\"fetch\"],"
		 " \"restore\": [\"store\"]}", "-fetch +store");
	/* A note on a tool the lists do not name. */
	refused("{\"restore\": [\"store\"], \"why\": {\"fetch\": \"x\"}}", INCIDENT_SHAPE_ERROR);
	/* Not a string, not an object, alone. */
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": 3}}", INCIDENT_SHAPE_ERROR);
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": [\"x\"]}}", INCIDENT_SHAPE_ERROR);
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": null}}", INCIDENT_SHAPE_ERROR);
	refused("{\"restore\": [\"store\"], \"why\": \"store\"}", INCIDENT_SHAPE_ERROR);
	refused("{\"restore\": [\"store\"], \"why\": [\"store\"]}", INCIDENT_SHAPE_ERROR);
	refused("{\"why\": {}}", INCIDENT_SHAPE_ERROR);
	/* Control characters, NUL included. */
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": \"a\\nb\"}}", INCIDENT_SHAPE_ERROR);
	/* A NUL the reader refuses first; the pure half refuses it too (test_from_json). */
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": \"a\\u0000b\"}}",
		"is not allowed");
	refused("{\"restore\": [\"store\"], \"why\": {\"store\": \"a\\u001bb\"}}",
		INCIDENT_SHAPE_ERROR);
	/* INCIDENT_WHY_MAX bytes are taken, one more is refused. */
	memset(note, 'n', INCIDENT_WHY_MAX);
	note[INCIDENT_WHY_MAX] = '\0';
	snprintf(text, sizeof text, "{\"restore\": [\"store\"], \"why\": {\"store\": \"%s\"}}", note);
	loads_as(text, "+store");
	strcat(note, "n");
	snprintf(text, sizeof text, "{\"restore\": [\"store\"], \"why\": {\"store\": \"%s\"}}", note);
	refused(text, INCIDENT_SHAPE_ERROR);
	/* An unknown key is still refused, beside a valid why too. */
	refused("{\"restore\": [\"store\"], \"why\": {}, \"because\": {}}", INCIDENT_SHAPE_ERROR);
	refused("{\"restore\": [\"store\"], \"Why\": {\"store\": \"x\"}}", INCIDENT_SHAPE_ERROR);
}

/* The pure half takes a parsed document: no file needed. */
static void
test_from_json(void **state)
{
	struct al_err err = { "" };
	struct incident inc;
	json_t *root = json_pack("{s:[s]}", "restore", "store");

	(void)state;
	assert_non_null(root);
	assert_int_equal(incident_from_json(root, &inc, &err), 0);
	assert_int_equal(inc.n, 1);
	assert_int_equal(inc.op[0], CUTOVER_RESTORE);
	json_decref(root);
	/* A note with a NUL inside, which no file read can hand in. */
	root = json_pack("{s:[s], s:{s:o}}", "restore", "store", "why", "store",
			 json_stringn("a\0b", 3));
	assert_non_null(root);
	assert_int_equal(incident_from_json(root, &inc, &err), -1);
	assert_string_equal(err.msg, INCIDENT_SHAPE_ERROR ": \"why\": the note on store is not "
			    "text of at most 200 bytes without control characters");
	json_decref(root);
	assert_int_equal(incident_from_json(NULL, &inc, &err), -1);
	assert_string_equal(err.msg, INCIDENT_SHAPE_ERROR ": not an object");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_name_length),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_from_json),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
