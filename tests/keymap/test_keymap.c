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

#include <curses.h>

#include "keymap.h"
#include "request.h"

/*
 * The keymap module without a terminal: the built-in defaults, the keys
 * file syntax and its errors, key names, the help listing and the user
 * file path. curses.h is here only for the KEY_* codes the console passes.
 */

static const char *const sections[KEYMAP_SECTION_COUNT] = {
#define SECTION_NAME(e, name) name,
	KEYMAP_SECTION_INFO(SECTION_NAME)
#undef SECTION_NAME
};

/* The keys a hand on the way somewhere presses; never destructive. */
static const char *const nav_keys[] = {
	"j", "k", "g", "G", "<Up>", "<Down>", "<Left>", "<Right>", "<PageUp>",
	"<PageDown>", "<Home>", "<End>", "<Enter>", "<Space>", "<Tab>", "<BackTab>",
};

/* Every named key in its canonical spelling. */
static const char *const named_keys[] = {
	"<Space>", "<Enter>", "<Esc>", "<Tab>", "<BackTab>", "<Backspace>",
	"<Up>", "<Down>", "<Left>", "<Right>", "<PageUp>", "<PageDown>",
	"<Home>", "<End>", "<Delete>", "<Insert>", "<Lt>", "<Hash>",
};

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

static void
load_defaults(struct keymap *km)
{
	struct keymap_errors errs = { 0 };

	keymap_init(km);
	assert_int_equal(keymap_load_string(km, keymap_builtin, "builtin", &errs), KEYMAP_OK);
	if (errs.count)
		fail_msg("builtin: %s", errs.msg[0]);
}

static bool
keymap_equal(const struct keymap *a, const struct keymap *b)
{
	size_t s, i;

	for (s = 0; s < KEYMAP_SECTION_COUNT; s++) {
		if (a->n[s] != b->n[s])
			return false;
		for (i = 0; i < a->n[s]; i++)
			if (a->bind[s][i].key != b->bind[s][i].key ||
			    a->bind[s][i].req != b->bind[s][i].req)
				return false;
	}
	return true;
}

static enum request
look(const struct keymap *km, const char *section, const char *key)
{
	int code = keymap_key_parse(key);

	if (code < 0)
		fail_msg("bad key name in test: %s", key);
	return keymap_lookup(km, section, code);
}

static void
apply(struct keymap *km, const char *text)
{
	struct keymap_errors errs = { 0 };

	assert_int_equal(keymap_load_string(km, text, "t", &errs), KEYMAP_OK);
	assert_int_equal(errs.count, 0);
}

/* The names keymap_keys_for gives, joined by spaces, for one comparison. */
static void
assert_keys_for(const struct keymap *km, const char *section, enum request req,
		const char *want)
{
	char out[8][KEYMAP_KEY_NAME_MAX], got[128] = "";
	size_t i, n = keymap_keys_for(km, section, req, out, 8);

	for (i = 0; i < n; i++) {
		strcat(got, i ? " " : "");
		strcat(got, out[i]);
	}
	assert_string_equal(got, want);
}

static void
test_defaults_parse(void **state)
{
	struct keymap km;

	(void)state;
	load_defaults(&km);
	assert_true(km.n[KEYMAP_GENERIC] > 30);
	assert_int_equal(km.n[KEYMAP_TOOLS], 2);
	assert_int_equal(km.n[KEYMAP_HOST], 2);
}

static void
test_defaults_resolve(void **state)
{
	static const struct {
		const char *section, *key;
		enum request req;
	} want[] = {
		{ "sessions", "k", REQ_MOVE_UP }, { "sessions", "<Up>", REQ_MOVE_UP },
		{ "sessions", "j", REQ_MOVE_DOWN }, { "detail", "<Down>", REQ_MOVE_DOWN },
		{ "sessions", "<PageUp>", REQ_PAGE_UP }, { "audit", "<C-b>", REQ_PAGE_UP },
		{ "sessions", "<PageDown>", REQ_PAGE_DOWN }, { "audit", "<C-f>", REQ_PAGE_DOWN },
		{ "tools", "g", REQ_MOVE_FIRST }, { "tools", "<Home>", REQ_MOVE_FIRST },
		{ "tools", "G", REQ_MOVE_LAST }, { "tools", "<End>", REQ_MOVE_LAST },
		{ "sessions", "<Enter>", REQ_ENTER }, { "help", "<Esc>", REQ_BACK },
		{ "sessions", "1", REQ_VIEW_SESSIONS }, { "sessions", "2", REQ_VIEW_DETAIL },
		{ "sessions", "3", REQ_VIEW_TOOLS }, { "sessions", "4", REQ_VIEW_AUDIT },
		{ "sessions", "5", REQ_VIEW_HOST }, { "host", "<Tab>", REQ_VIEW_NEXT },
		{ "sessions", "?", REQ_HELP }, { "sessions", "s", REQ_SORT_NEXT },
		{ "sessions", "S", REQ_SORT_REVERSE }, { "audit", "/", REQ_FILTER },
		{ "sessions", "<Space>", REQ_MARK }, { "sessions", "u", REQ_MARK_CLEAR },
		{ "sessions", ":", REQ_PROMPT }, { "sessions", "d", REQ_DISMISS },
		{ "sessions", "M", REQ_MOUSE }, { "sessions", "<C-l>", REQ_REDRAW },
		{ "sessions", "q", REQ_QUIT }, { "generic", "q", REQ_QUIT },
		{ "sessions", "r", REQ_REVOKE }, { "detail", "r", REQ_REVOKE },
		{ "sessions", "R", REQ_RESTORE }, { "sessions", "X", REQ_FORCE_STOP },
		{ "tools", "r", REQ_REVOKE_ALL }, { "tools", "R", REQ_RESTORE_ALL },
		{ "tools", "X", REQ_FORCE_STOP },
		{ "host", "h", REQ_HOST_REFRESH }, { "host", "<F5>", REQ_HOST_REFRESH },
		{ "sessions", "h", REQ_NONE }, { "sessions", "<F5>", REQ_NONE },
		{ "generic", "r", REQ_REVOKE }, { "sessions", "x", REQ_NONE },
		{ "nowhere", "j", REQ_MOVE_DOWN }, { NULL, "j", REQ_MOVE_DOWN },
	};
	struct keymap km;
	size_t i;

	(void)state;
	load_defaults(&km);
	for (i = 0; i < N_OF(want); i++)
		if (look(&km, want[i].section, want[i].key) != want[i].req)
			fail_msg("%s %s: got %s, want %s", want[i].section, want[i].key,
				 request_name(look(&km, want[i].section, want[i].key)),
				 request_name(want[i].req));
}

/* Every default binding answers a lookup in its own section. */
static void
test_defaults_all_resolve(void **state)
{
	struct keymap km;
	size_t s, i;

	(void)state;
	load_defaults(&km);
	for (s = 0; s < KEYMAP_SECTION_COUNT; s++)
		for (i = 0; i < km.n[s]; i++) {
			const struct keymap_binding *b = &km.bind[s][i];

			assert_int_not_equal(b->req, REQ_NONE);
			assert_int_equal(keymap_lookup(&km, sections[s], b->key), b->req);
		}
}

/* The terminal's many spellings of Enter and Backspace find one binding. */
static void
test_lookup_normalises(void **state)
{
	struct keymap km;

	(void)state;
	load_defaults(&km);
	apply(&km, "bind generic <Backspace> back\n");
	assert_int_equal(keymap_lookup(&km, "sessions", '\n'), REQ_ENTER);
	assert_int_equal(keymap_lookup(&km, "sessions", '\r'), REQ_ENTER);
	assert_int_equal(keymap_lookup(&km, "sessions", KEY_ENTER), REQ_ENTER);
	assert_int_equal(keymap_lookup(&km, "sessions", KEY_BACKSPACE), REQ_BACK);
	assert_int_equal(keymap_lookup(&km, "sessions", 127), REQ_BACK);
	assert_int_equal(keymap_lookup(&km, "sessions", 8), REQ_BACK);
	assert_int_equal(keymap_lookup(&km, "sessions", ERR), REQ_NONE);
	assert_int_equal(keymap_lookup(&km, "sessions", KEY_RESIZE), REQ_NONE);
}

static void
test_bind_overrides(void **state)
{
	struct keymap km;
	size_t n;

	(void)state;
	load_defaults(&km);
	n = km.n[KEYMAP_GENERIC];
	apply(&km, "bind generic j move-up\nbind sessions j page-down\n");
	assert_int_equal(km.n[KEYMAP_GENERIC], n);	/* replaced, not added */
	assert_int_equal(look(&km, "sessions", "j"), REQ_PAGE_DOWN);
	assert_int_equal(look(&km, "detail", "j"), REQ_MOVE_UP);
	assert_int_equal(look(&km, "generic", "j"), REQ_MOVE_UP);
	apply(&km, "bind sessions j move-last\n");
	assert_int_equal(km.n[KEYMAP_SESSIONS], 1);
	assert_int_equal(look(&km, "sessions", "j"), REQ_MOVE_LAST);
}

static void
test_unbind_section_shadows_generic(void **state)
{
	struct keymap km;

	(void)state;
	load_defaults(&km);
	apply(&km, "unbind sessions q\n");
	assert_int_equal(look(&km, "sessions", "q"), REQ_NONE);
	assert_int_equal(look(&km, "detail", "q"), REQ_QUIT);
	assert_int_equal(look(&km, "generic", "q"), REQ_QUIT);
	assert_keys_for(&km, "sessions", REQ_QUIT, "");
	assert_keys_for(&km, "detail", REQ_QUIT, "q");
	/* A later bind in the section replaces the unbind. */
	apply(&km, "bind sessions q help\n");
	assert_int_equal(look(&km, "sessions", "q"), REQ_HELP);
}

static void
test_unbind_generic(void **state)
{
	struct keymap km;
	size_t n, s;

	(void)state;
	load_defaults(&km);
	n = km.n[KEYMAP_GENERIC];
	apply(&km, "unbind generic q\n");
	assert_int_equal(km.n[KEYMAP_GENERIC], n - 1);
	for (s = 0; s < KEYMAP_SECTION_COUNT; s++)
		assert_int_equal(look(&km, sections[s], "q"), REQ_NONE);
	/* Unbinding what is not bound is fine and changes nothing. */
	apply(&km, "unbind generic q\nunbind generic x\n");
	assert_int_equal(km.n[KEYMAP_GENERIC], n - 1);
	apply(&km, "bind tools q quit\n");
	assert_int_equal(look(&km, "tools", "q"), REQ_QUIT);
	assert_int_equal(look(&km, "sessions", "q"), REQ_NONE);
}

static void
test_bind_none(void **state)
{
	struct keymap km;

	(void)state;
	load_defaults(&km);
	apply(&km, "bind tools r none\nbind generic d none\n");
	assert_int_equal(look(&km, "tools", "r"), REQ_NONE);
	assert_int_equal(look(&km, "sessions", "r"), REQ_REVOKE);
	assert_int_equal(look(&km, "sessions", "d"), REQ_NONE);
	assert_keys_for(&km, "tools", REQ_REVOKE_ALL, "");
}

/* Each bad line alone, after some filler, so the line number varies. */
static void
test_bad_lines(void **state)
{
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "bind generic j revok", "unknown request 'revok'" },
		{ "bind generic j Move-Up", "unknown request 'Move-Up'" },
		{ "bind nowhere j quit", "unknown section 'nowhere'" },
		{ "bind prompt j quit", "unknown section 'prompt'" },
		{ "unbind Generic j", "unknown section 'Generic'" },
		{ "bind generic <Foo> quit", "bad key name '<Foo>'" },
		{ "bind generic ab quit", "bad key name 'ab'" },
		{ "bind generic <F13> quit", "bad key name '<F13>'" },
		{ "bind generic <F0> quit", "bad key name '<F0>'" },
		{ "bind generic <F01> quit", "bad key name '<F01>'" },
		{ "bind generic <C-1> quit", "bad key name '<C-1>'" },
		{ "bind generic <C-ab> quit", "bad key name '<C-ab>'" },
		{ "bind generic <> quit", "bad key name '<>'" },
		{ "bind generic <Up quit", "bad key name '<Up'" },
		{ "bind generic \xc3\xa9 quit", "bad key name '\?\?'" },
		{ "bind generic \x1b[2J quit", "bad key name '?[2J'" },
		{ "bind generic j", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "bind generic", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "bind", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "bind generic # quit", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "bind generic j quit now", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "bind generic j none x", "wrong number of words (want: bind SECTION KEY REQUEST)" },
		{ "unbind generic", "wrong number of words (want: unbind SECTION KEY)" },
		{ "unbind generic j k", "wrong number of words (want: unbind SECTION KEY)" },
		{ "frob generic j quit", "unknown command 'frob'" },
		{ "Bind generic j quit", "unknown command 'Bind'" },
	};
	struct keymap km, before;
	char text[512], want[256];
	size_t i, j;

	(void)state;
	load_defaults(&before);
	for (i = 0; i < N_OF(bad); i++) {
		struct keymap_errors errs = { 0 };

		km = before;
		text[0] = '\0';
		for (j = 0; j < i % 4; j++)
			strcat(text, j % 2 ? "\n" : "# filler\n");
		strcat(text, bad[i].line);
		strcat(text, "\n");
		assert_int_equal(keymap_load_string(&km, text, "keys", &errs), KEYMAP_BAD_LINES);
		assert_int_equal(errs.count, 1);
		snprintf(want, sizeof want, "keys:%zu: %s", i % 4 + 1, bad[i].msg);
		assert_string_equal(errs.msg[0], want);
		assert_true(keymap_equal(&km, &before));
	}
}

/* Good lines around a bad one still apply. */
static void
test_bad_line_does_not_stop_parse(void **state)
{
	struct keymap_errors errs = { 0 };
	struct keymap km;

	(void)state;
	keymap_init(&km);
	assert_int_equal(keymap_load_string(&km,
		"bind generic j move-down\n"
		"bind generic k revok\n"
		"bind generic\n"
		"bind sessions x quit\n", "keys", &errs), KEYMAP_BAD_LINES);
	assert_int_equal(errs.count, 2);
	assert_string_equal(errs.msg[0], "keys:2: unknown request 'revok'");
	assert_string_equal(errs.msg[1],
		"keys:3: wrong number of words (want: bind SECTION KEY REQUEST)");
	assert_int_equal(look(&km, "sessions", "j"), REQ_MOVE_DOWN);
	assert_int_equal(look(&km, "sessions", "k"), REQ_NONE);
	assert_int_equal(look(&km, "sessions", "x"), REQ_QUIT);
}

static void
test_errors_bounded(void **state)
{
	struct keymap_errors errs = { 0 };
	struct keymap km;
	char text[512] = "";
	int i;

	(void)state;
	keymap_init(&km);
	for (i = 0; i < KEYMAP_ERRORS_MAX + 3; i++)
		strcat(text, "nope\n");
	assert_int_equal(keymap_load_string(&km, text, "k", &errs), KEYMAP_BAD_LINES);
	assert_int_equal(errs.count, KEYMAP_ERRORS_MAX + 3);
	assert_string_equal(errs.msg[KEYMAP_ERRORS_MAX - 1], "k:8: unknown command 'nope'");
	/* No error list at all is allowed too. */
	assert_int_equal(keymap_load_string(&km, text, "k", NULL), KEYMAP_BAD_LINES);
}

static void
test_long_line(void **state)
{
	struct keymap_errors errs = { 0 };
	struct keymap km, before;
	char text[KEYMAP_LINE_MAX + 64];

	(void)state;
	load_defaults(&km);
	before = km;
	memset(text, ' ', sizeof text);
	memcpy(text, "bind generic x quit", 19);
	strcpy(text + KEYMAP_LINE_MAX, "#\nbind generic x help\n");
	assert_int_equal(keymap_load_string(&km, text, "k", &errs), KEYMAP_BAD_LINES);
	assert_int_equal(errs.count, 1);
	assert_string_equal(errs.msg[0], "k:1: line too long");
	assert_int_equal(look(&km, "sessions", "x"), REQ_HELP);
	apply(&before, "bind generic x help\n");
	assert_true(keymap_equal(&km, &before));
}

static void
test_syntax_details(void **state)
{
	struct keymap km;

	(void)state;
	keymap_init(&km);
	apply(&km,
		"   \t\n"
		"# a comment\n"
		"\tbind\tsessions   x  quit   # trailing comment\r\n"
		"bind generic <Hash> help\n"
		"bind generic <Lt> sort-reverse\n"
		"bind generic < sort-next\n"
		"bind generic <c-L> redraw\n"
		"bind generic <pagedown> page-down");	/* no final newline */
	assert_int_equal(look(&km, "sessions", "x"), REQ_QUIT);
	assert_int_equal(look(&km, "detail", "x"), REQ_NONE);
	assert_int_equal(keymap_lookup(&km, "sessions", '#'), REQ_HELP);
	assert_int_equal(keymap_lookup(&km, "sessions", '<'), REQ_SORT_NEXT);
	assert_int_equal(keymap_lookup(&km, "sessions", 12), REQ_REDRAW);
	assert_int_equal(keymap_lookup(&km, "sessions", KEY_NPAGE), REQ_PAGE_DOWN);
	assert_int_equal(km.n[KEYMAP_GENERIC], 4);
}

static void
check_round_trip(const char *name)
{
	char canon[KEYMAP_KEY_NAME_MAX];
	int key = keymap_key_parse(name);

	if (key < 0)
		fail_msg("%s does not parse", name);
	keymap_key_name(key, canon, sizeof canon);
	if (keymap_key_parse(canon) != key)
		fail_msg("%s -> %s does not parse back", name, canon);
}

static void
test_key_round_trip(void **state)
{
	char name[KEYMAP_KEY_NAME_MAX], canon[KEYMAP_KEY_NAME_MAX];
	size_t i;
	int c;

	(void)state;
	for (i = 0; i < N_OF(named_keys); i++) {
		check_round_trip(named_keys[i]);
		keymap_key_name(keymap_key_parse(named_keys[i]), canon, sizeof canon);
		assert_string_equal(canon, named_keys[i]);
	}
	for (c = 1; c <= 12; c++) {
		snprintf(name, sizeof name, "<F%d>", c);
		check_round_trip(name);
		assert_int_equal(keymap_key_parse(name), KEY_F(c));
	}
	for (c = 'a'; c <= 'z'; c++) {
		snprintf(name, sizeof name, "<C-%c>", c);
		check_round_trip(name);
	}
	for (c = '!'; c <= '~'; c++) {
		snprintf(name, sizeof name, "%c", c);
		check_round_trip(name);
	}
}

static void
test_key_names(void **state)
{
	static const struct {
		const char *name;
		int key;
	} want[] = {
		{ "j", 'j' }, { "J", 'J' }, { "?", '?' }, { "/", '/' }, { ":", ':' },
		{ "<Space>", ' ' }, { "<Enter>", '\n' }, { "<Esc>", 27 }, { "<Tab>", '\t' },
		{ "<BackTab>", KEY_BTAB }, { "<Backspace>", KEY_BACKSPACE },
		{ "<Up>", KEY_UP }, { "<Down>", KEY_DOWN }, { "<Left>", KEY_LEFT },
		{ "<Right>", KEY_RIGHT }, { "<PageUp>", KEY_PPAGE }, { "<PageDown>", KEY_NPAGE },
		{ "<Home>", KEY_HOME }, { "<End>", KEY_END }, { "<Delete>", KEY_DC },
		{ "<Insert>", KEY_IC }, { "<F1>", KEY_F(1) }, { "<F12>", KEY_F(12) },
		{ "<C-a>", 1 }, { "<C-z>", 26 }, { "<Lt>", '<' }, { "<Hash>", '#' },
		/* any case inside <> */
		{ "<enter>", '\n' }, { "<PAGEUP>", KEY_PPAGE }, { "<c-A>", 1 }, { "<f5>", KEY_F(5) },
		/* the control keys that are other keys */
		{ "<C-i>", '\t' }, { "<C-j>", '\n' }, { "<C-m>", '\n' }, { "<C-h>", KEY_BACKSPACE },
		/* bad */
		{ "", -1 }, { " ", -1 }, { "jj", -1 }, { "<Foo>", -1 }, { "<>", -1 },
		{ "<F13>", -1 }, { "<C-1>", -1 }, { "Up", -1 }, { "<Up", -1 }, { "\x7f", -1 },
	};
	char buf[KEYMAP_KEY_NAME_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < N_OF(want); i++)
		if (keymap_key_parse(want[i].name) != want[i].key)
			fail_msg("'%s': got %d, want %d", want[i].name,
				 keymap_key_parse(want[i].name), want[i].key);
	assert_int_equal(keymap_key_parse(NULL), -1);
	keymap_key_name('\r', buf, sizeof buf);
	assert_string_equal(buf, "<Enter>");
	keymap_key_name(KEY_ENTER, buf, sizeof buf);
	assert_string_equal(buf, "<Enter>");
	keymap_key_name(127, buf, sizeof buf);
	assert_string_equal(buf, "<Backspace>");
	keymap_key_name(12, buf, sizeof buf);
	assert_string_equal(buf, "<C-l>");
	keymap_key_name(0, buf, sizeof buf);
	assert_string_equal(buf, "<?>");
	keymap_key_name(KEY_MOUSE, buf, sizeof buf);
	assert_string_equal(buf, "<?>");
	keymap_key_name(KEY_BACKSPACE, buf, 4);	/* cut short, still terminated */
	assert_string_equal(buf, "<Ba");
}

/* Every key there is fits in one section: the bound is never in the way. */
static void
test_every_key_binds(void **state)
{
	struct keymap_errors errs = { 0 };
	struct keymap km;
	char text[8192] = "", line[64];
	size_t i;
	int c;

	(void)state;
	for (c = '!'; c <= '~'; c++) {
		snprintf(line, sizeof line, "bind sessions %s quit\n",
			 c == '#' ? "<Hash>" : (char[]){ (char)c, 0 });
		strcat(text, line);
	}
	for (i = 0; i < N_OF(named_keys); i++) {
		snprintf(line, sizeof line, "bind sessions %s quit\n", named_keys[i]);
		strcat(text, line);
	}
	for (c = 1; c <= 26; c++) {
		snprintf(line, sizeof line, "bind sessions <C-%c> quit\nbind sessions <F%d> quit\n",
			 'a' + c - 1, c % 12 + 1);
		strcat(text, line);
	}
	keymap_init(&km);
	assert_int_equal(keymap_load_string(&km, text, "k", &errs), KEYMAP_OK);
	assert_int_equal(errs.count, 0);
	/* 94 printable, 16 other names (<Lt>, <Hash> are printable), 12 F, 22 C- */
	assert_int_equal(km.n[KEYMAP_SESSIONS], 94 + 16 + 12 + 22);
}

static void
test_keys_for(void **state)
{
	char out[4][KEYMAP_KEY_NAME_MAX];
	struct keymap km;

	(void)state;
	load_defaults(&km);
	assert_keys_for(&km, "sessions", REQ_MOVE_UP, "k <Up>");
	assert_keys_for(&km, "generic", REQ_PAGE_DOWN, "<PageDown> <C-f>");
	assert_keys_for(&km, "sessions", REQ_REVOKE, "r");
	assert_keys_for(&km, "tools", REQ_REVOKE, "");
	assert_keys_for(&km, "tools", REQ_REVOKE_ALL, "r");
	assert_keys_for(&km, "sessions", REQ_REVOKE_ALL, "");
	assert_keys_for(&km, "host", REQ_HOST_REFRESH, "h <F5>");
	assert_keys_for(&km, "sessions", REQ_HOST_REFRESH, "");
	assert_keys_for(&km, "sessions", REQ_MARK, "<Space>");
	assert_keys_for(&km, "sessions", REQ_NONE, "");
	/* The section's own keys first, then the generic ones it leaves. */
	apply(&km, "bind sessions K move-up\n");
	assert_keys_for(&km, "sessions", REQ_MOVE_UP, "K k <Up>");
	apply(&km, "bind sessions k page-up\n");
	assert_keys_for(&km, "sessions", REQ_MOVE_UP, "K <Up>");
	assert_keys_for(&km, "sessions", REQ_PAGE_UP, "k <PageUp> <C-b>");
	assert_keys_for(&km, "detail", REQ_MOVE_UP, "k <Up>");
	assert_int_equal(keymap_keys_for(&km, "sessions", REQ_PAGE_UP, out, 1), 1);
	assert_string_equal(out[0], "k");
	assert_int_equal(keymap_keys_for(&km, "sessions", REQ_PAGE_UP, out, 0), 0);
}

/* A scratch directory for the file tests, removed by teardown. */
static char tmpdir[64];

static int
make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/airlock-keymap-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int
remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
tmp_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void
write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
test_user_file(void **state)
{
	static const char user[] =
		"# mine\n"
		"bind generic x force-stop\n"
		"unbind sessions q\n"
		"bind bogus x quit\n"
		"bind tools <F2> revoke-all\n";
	struct keymap_errors errs = { 0 };
	struct keymap km;
	char path[128], want[256];

	(void)state;
	tmp_path(path, sizeof path, "keys");
	write_file(path, user, sizeof user - 1);
	load_defaults(&km);
	assert_int_equal(keymap_load_file(&km, path, &errs), KEYMAP_BAD_LINES);
	assert_int_equal(errs.count, 1);
	snprintf(want, sizeof want, "%s:4: unknown section 'bogus'", path);
	assert_string_equal(errs.msg[0], want);
	assert_int_equal(look(&km, "detail", "x"), REQ_FORCE_STOP);
	assert_int_equal(look(&km, "sessions", "q"), REQ_NONE);
	assert_int_equal(look(&km, "detail", "q"), REQ_QUIT);
	assert_int_equal(look(&km, "tools", "<F2>"), REQ_REVOKE_ALL);
	assert_int_equal(look(&km, "sessions", "j"), REQ_MOVE_DOWN);
	assert_keys_for(&km, "sessions", REQ_FORCE_STOP, "X x");
}

static void
test_user_file_missing(void **state)
{
	struct keymap_errors errs = { 0 };
	struct keymap km, before;
	char path[128];

	(void)state;
	load_defaults(&km);
	before = km;
	tmp_path(path, sizeof path, "nope/keys");
	assert_int_equal(keymap_load_file(&km, path, &errs), KEYMAP_NO_FILE);
	tmp_path(path, sizeof path, "nope");
	assert_int_equal(keymap_load_file(&km, path, &errs), KEYMAP_NO_FILE);
	assert_int_equal(errs.count, 0);
	assert_true(keymap_equal(&km, &before));
}

/* A NUL byte cannot hide the rest of a line from the parser. */
static void
test_user_file_nul(void **state)
{
	static const char text[] = "bind generic x quit\0junk\nbind generic y quit\n";
	struct keymap_errors errs = { 0 };
	struct keymap km;
	char path[128], want[256];

	(void)state;
	tmp_path(path, sizeof path, "nul");
	write_file(path, text, sizeof text - 1);
	keymap_init(&km);
	assert_int_equal(keymap_load_file(&km, path, &errs), KEYMAP_BAD_LINES);
	assert_int_equal(errs.count, 1);
	snprintf(want, sizeof want, "%s:1: NUL byte in line", path);
	assert_string_equal(errs.msg[0], want);
	assert_int_equal(look(&km, "sessions", "x"), REQ_NONE);
	assert_int_equal(look(&km, "sessions", "y"), REQ_QUIT);
}

static void
expect_unreadable(const char *path, const char *what)
{
	struct keymap_errors errs = { 0 };
	struct keymap km, before;
	char want[256];

	load_defaults(&km);
	before = km;
	assert_int_equal(keymap_load_file(&km, path, &errs), KEYMAP_UNREADABLE);
	assert_int_equal(errs.count, 1);
	snprintf(want, sizeof want, "%s: %s", path, what);
	assert_string_equal(errs.msg[0], want);
	assert_true(keymap_equal(&km, &before));
}

static void
test_user_file_unreadable(void **state)
{
	char path[128], *big;
	size_t i;

	(void)state;
	expect_unreadable(tmpdir, "cannot read: Is a directory");
	/* A FIFO with no writer: refused at once, not waited on. */
	tmp_path(path, sizeof path, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_unreadable(path, "cannot read: Invalid argument");

	big = malloc(KEYMAP_FILE_MAX + 1);
	assert_non_null(big);
	/* Comment lines of 64 bytes: only the size is wrong. */
	for (i = 0; i <= KEYMAP_FILE_MAX; i++)
		big[i] = i % 64 == 63 ? '\n' : '#';
	tmp_path(path, sizeof path, "big");
	write_file(path, big, KEYMAP_FILE_MAX + 1);
	expect_unreadable(path, "larger than 65536 bytes");
	/* Exactly at the bound is fine. */
	write_file(path, big, KEYMAP_FILE_MAX);
	{
		struct keymap km;

		keymap_init(&km);
		assert_int_equal(keymap_load_file(&km, path, NULL), KEYMAP_OK);
	}
	free(big);
}

static void
expect_path(const char *want)
{
	char buf[256];

	if (!want) {
		assert_false(keymap_user_path(buf, sizeof buf));
		assert_string_equal(buf, "");
		return;
	}
	assert_true(keymap_user_path(buf, sizeof buf));
	assert_string_equal(buf, want);
}

static void
test_user_path(void **state)
{
	char small[16];

	(void)state;
	setenv("AIRLOCK_KEYS", "/etc/op/keys", 1);
	setenv("XDG_CONFIG_HOME", "/cfg", 1);
	setenv("HOME", "/home/op", 1);
	expect_path("/etc/op/keys");
	setenv("AIRLOCK_KEYS", "", 1);
	expect_path("/cfg/airlock/keys");
	unsetenv("AIRLOCK_KEYS");
	expect_path("/cfg/airlock/keys");
	setenv("XDG_CONFIG_HOME", "relative/cfg", 1);	/* invalid per XDG */
	expect_path("/home/op/.config/airlock/keys");
	setenv("XDG_CONFIG_HOME", "", 1);
	expect_path("/home/op/.config/airlock/keys");
	unsetenv("XDG_CONFIG_HOME");
	expect_path("/home/op/.config/airlock/keys");
	/* Too long for the buffer: no path rather than a cut-off one. */
	assert_false(keymap_user_path(small, sizeof small));
	assert_string_equal(small, "");
	setenv("HOME", "", 1);
	expect_path(NULL);
	unsetenv("HOME");
	expect_path(NULL);
	assert_false(keymap_user_path(small, 0));
}

static void
test_request_table(void **state)
{
	const char *group = NULL, *seen[REQ_COUNT];
	size_t n_seen = 0, i;
	int r, q;

	(void)state;
	assert_null(request_name(REQ_NONE));
	assert_null(request_help(REQ_NONE));
	assert_null(request_group(REQ_NONE));
	assert_null(request_name(REQ_COUNT));
	assert_int_equal(request_by_name("none"), REQ_NONE);
	assert_int_equal(request_by_name("nope"), REQ_NONE);
	assert_int_equal(request_by_name(NULL), REQ_NONE);
	assert_string_equal(request_group(REQ_MOVE_UP), "Navigation");
	assert_string_equal(request_group(REQ_QUIT), "Console");
	for (r = REQ_NONE + 1; r < REQ_COUNT; r++) {
		const char *name = request_name(r);

		assert_non_null(name);
		/* Names are words in a keys file: lower case and dashes. */
		assert_true(name[0] && strspn(name, "abcdefghijklmnopqrstuvwxyz-") == strlen(name));
		assert_int_equal(request_by_name(name), r);
		assert_true(request_help(r) && request_help(r)[0]);
		for (q = REQ_NONE + 1; q < r; q++)
			assert_string_not_equal(request_name(q), name);
		assert_non_null(request_group(r));
		/* Groups are contiguous: a heading never comes back. */
		if (!group || strcmp(group, request_group(r)) != 0) {
			group = request_group(r);
			for (i = 0; i < n_seen; i++)
				assert_string_not_equal(seen[i], group);
			seen[n_seen++] = group;
		}
		assert_int_equal(request_destructive(r),
				 r == REQ_REVOKE || r == REQ_RESTORE || r == REQ_REVOKE_ALL ||
				 r == REQ_RESTORE_ALL || r == REQ_FORCE_STOP || r == REQ_FREEZE ||
				 r == REQ_THAW || r == REQ_STOP_ALL || r == REQ_QUARANTINE ||
				 r == REQ_APPROVE || r == REQ_APPROVE_REST || r == REQ_DENY);
	}
	assert_int_equal(n_seen, 5);
	assert_false(request_destructive(REQ_NONE));
}

static bool
is_nav_key(const struct keymap *km, int key)
{
	char name[KEYMAP_KEY_NAME_MAX];
	size_t s, i;

	keymap_key_name(key, name, sizeof name);
	for (i = 0; i < N_OF(nav_keys); i++)
		if (strcmp(nav_keys[i], name) == 0)
			return true;
	/* Also whatever the defaults use to move, in any section. */
	for (s = 0; s < KEYMAP_SECTION_COUNT; s++)
		for (i = 0; i < km->n[s]; i++)
			if (km->bind[s][i].key == key && km->bind[s][i].req != REQ_NONE &&
			    strcmp(request_group(km->bind[s][i].req), "Navigation") == 0)
				return true;
	return false;
}

static void
test_destructive_keys_not_navigation(void **state)
{
	struct keymap km;
	bool bound[REQ_COUNT] = { false };
	size_t s, i;
	int r;

	(void)state;
	load_defaults(&km);
	for (s = 0; s < KEYMAP_SECTION_COUNT; s++)
		for (i = 0; i < km.n[s]; i++) {
			const struct keymap_binding *b = &km.bind[s][i];
			char name[KEYMAP_KEY_NAME_MAX];

			if (!request_destructive(b->req))
				continue;
			bound[b->req] = true;
			keymap_key_name(b->key, name, sizeof name);
			if (is_nav_key(&km, b->key))
				fail_msg("%s: %s is a navigation key and does %s",
					 sections[s], name, request_name(b->req));
		}
	/* And the defaults reach every destructive request somewhere. */
	for (r = REQ_NONE + 1; r < REQ_COUNT; r++)
		if (request_destructive(r) && !bound[r])
			fail_msg("%s has no default key", request_name(r));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_parse),
		cmocka_unit_test(test_defaults_resolve),
		cmocka_unit_test(test_defaults_all_resolve),
		cmocka_unit_test(test_lookup_normalises),
		cmocka_unit_test(test_bind_overrides),
		cmocka_unit_test(test_unbind_section_shadows_generic),
		cmocka_unit_test(test_unbind_generic),
		cmocka_unit_test(test_bind_none),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_bad_line_does_not_stop_parse),
		cmocka_unit_test(test_errors_bounded),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_syntax_details),
		cmocka_unit_test(test_key_round_trip),
		cmocka_unit_test(test_key_names),
		cmocka_unit_test(test_every_key_binds),
		cmocka_unit_test(test_keys_for),
		cmocka_unit_test(test_user_file),
		cmocka_unit_test(test_user_file_missing),
		cmocka_unit_test(test_user_file_nul),
		cmocka_unit_test(test_user_file_unreadable),
		cmocka_unit_test(test_user_path),
		cmocka_unit_test(test_request_table),
		cmocka_unit_test(test_destructive_keys_not_navigation),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
