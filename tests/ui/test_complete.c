/*
 * Tab completion on the ':' line (tui/complete.c): the last word is
 * completed as far as its matches agree, with a blank after a single
 * match, and nothing changes without a match or without room.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "complete.h"

static const char *const words[] = { "revoke", "restore", "run", "stop" };
#define N_WORDS (sizeof words / sizeof words[0])

static void
expect(const char *line, const char *want, size_t hits)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%s", line);
	assert_int_equal(complete_last(buf, sizeof buf, words, N_WORDS), hits);
	assert_string_equal(buf, want);
}

static void
test_last_word(void **state)
{
	(void)state;
	expect("rev", "revoke ", 1);		/* one match: whole, and a blank */
	expect("re", "re", 2);			/* revoke, restore: re is all they share */
}

static void
test_common_prefix(void **state)
{
	(void)state;
	expect("r", "r", 3);			/* revoke restore run: nothing shared past r */
	expect("res", "restore ", 1);
	expect("x", "x", 0);			/* no match: as it was */
	expect("", "", 4);			/* every word, sharing nothing */
	expect("stop", "stop ", 1);		/* already whole: the blank */
}

static void
test_later_words(void **state)
{
	static const char *const tools[] = { "mail.send", "mail.sync", "notes.append", "mail.send" };
	char buf[64] = "revoke  mail.s";
	char words2[2][64];
	size_t at;

	(void)state;
	assert_int_equal(complete_words(buf, words2, 2, &at), 1);
	assert_string_equal(words2[0], "revoke");
	assert_int_equal(at, 8);
	assert_int_equal(complete_last(buf, sizeof buf, tools, 4), 3);
	assert_string_equal(buf, "revoke  mail.s");	/* send, sync: s is all they share */
	snprintf(buf, sizeof buf, "revoke mail.se");
	assert_int_equal(complete_last(buf, sizeof buf, tools, 4), 1);	/* listed twice, one tool */
	assert_string_equal(buf, "revoke mail.send ");
	snprintf(buf, sizeof buf, "revoke mail.send ");
	assert_int_equal(complete_words(buf, words2, 2, &at), 2);
	assert_string_equal(words2[1], "mail.send");
	assert_int_equal(at, strlen(buf));
}

static void
test_no_room(void **state)
{
	static const char *const long_word[] = { "a-very-long-tool-name" };
	char buf[12] = "x a-ve";

	(void)state;
	assert_int_equal(complete_last(buf, sizeof buf, long_word, 1), 1);
	assert_string_equal(buf, "x a-ve");	/* it would not fit: unchanged */
}

/* Paths: a directory's entries; a directory keeps no blank after its slash. */
static void
test_paths(void **state)
{
	char dir[] = "/tmp/airlock-complete-XXXXXX", path[128], line[256];
	static const char *const files[] = { "incident.json", "incident-old.json", ".hidden.json" };
	size_t i;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		assert_non_null(f = fopen(path, "w"));
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/configs", dir);
	assert_int_equal(mkdir(path, 0700), 0);

	snprintf(line, sizeof line, "apply %s/inc", dir);
	assert_int_equal(complete_path(line, sizeof line), 2);
	snprintf(path, sizeof path, "apply %s/incident", dir);
	assert_string_equal(line, path);		/* as far as both go */
	strcat(line, ".");
	assert_int_equal(complete_path(line, sizeof line), 1);
	snprintf(path, sizeof path, "apply %s/incident.json ", dir);
	assert_string_equal(line, path);
	snprintf(line, sizeof line, "run %s/c", dir);
	assert_int_equal(complete_path(line, sizeof line), 1);
	snprintf(path, sizeof path, "run %s/configs/", dir);
	assert_string_equal(line, path);		/* its slash, no blank */
	snprintf(line, sizeof line, "run %s/", dir);
	assert_int_equal(complete_path(line, sizeof line), 3);	/* the hidden one is not offered */
	snprintf(line, sizeof line, "run %s/.h", dir);
	assert_int_equal(complete_path(line, sizeof line), 1);
	snprintf(line, sizeof line, "run %s/nothing", dir);
	assert_int_equal(complete_path(line, sizeof line), 0);
	snprintf(path, sizeof path, "run %s/nothing", dir);
	assert_string_equal(line, path);

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/configs", dir);
	rmdir(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_word),
		cmocka_unit_test(test_common_prefix),
		cmocka_unit_test(test_later_words),
		cmocka_unit_test(test_no_room),
		cmocka_unit_test(test_paths),
	};

	return cmocka_run_group_tests_name("complete", tests, NULL, NULL);
}
