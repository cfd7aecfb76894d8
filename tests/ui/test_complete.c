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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_word),
		cmocka_unit_test(test_common_prefix),
		cmocka_unit_test(test_later_words),
		cmocka_unit_test(test_no_room),
	};

	return cmocka_run_group_tests_name("complete", tests, NULL, NULL);
}
