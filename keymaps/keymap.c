#include "keymap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Only for the KEY_* numbers: this is a UI module, and naming the keys
 * by the codes ncurses returns keeps the console free of translation.
 */
#include <curses.h>

#include "bytes.h"

#define KEY_ESC 27
#define KEY_DEL 127
#define KEY_FN_MAX 12

static const char *const section_names[KEYMAP_SECTION_COUNT] = {
#define KEYMAP_SECTION_NAME(e, name) name,
	KEYMAP_SECTION_INFO(KEYMAP_SECTION_NAME)
#undef KEYMAP_SECTION_NAME
};

/* The named keys other than <F1>… and <C-a>…, canonical spelling first. */
static const struct key_name {
	const char *name;
	int key;
} key_names[] = {
	{ "Space",	' ' },
	{ "Enter",	'\n' },
	{ "Esc",	KEY_ESC },
	{ "Tab",	'\t' },
	{ "BackTab",	KEY_BTAB },
	{ "Backspace",	KEY_BACKSPACE },
	{ "Up",		KEY_UP },
	{ "Down",	KEY_DOWN },
	{ "Left",	KEY_LEFT },
	{ "Right",	KEY_RIGHT },
	{ "PageUp",	KEY_PPAGE },
	{ "PageDown",	KEY_NPAGE },
	{ "Home",	KEY_HOME },
	{ "End",	KEY_END },
	{ "Delete",	KEY_DC },
	{ "Insert",	KEY_IC },
	{ "Lt",		'<' },
	{ "Hash",	'#' },
};

#define KEY_NAMES (sizeof key_names / sizeof key_names[0])

/* One load: where the text came from and what went wrong so far. */
struct parse {
	struct keymap *km;
	const char *source;
	size_t line;
	size_t bad;
	struct keymap_errors *errors;
};

/* ASCII only: key names must not depend on the locale. */
static int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool
ascii_eq_n(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i]))
			return false;
	return b[n] == '\0';
}

/* A cut-off path would name some other file: leave buf empty instead. */
static bool
path_done(char *buf, size_t cap, int n)
{
	if (n >= 0 && (size_t)n < cap)
		return true;
	buf[0] = '\0';
	return false;
}

static void
add_error(struct keymap_errors *errors, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
add_error(struct keymap_errors *errors, const char *fmt, ...)
{
	va_list ap;

	if (!errors)
		return;
	if (errors->count < KEYMAP_ERRORS_MAX) {
		va_start(ap, fmt);
		vsnprintf(errors->msg[errors->count], KEYMAP_ERROR_LEN, fmt, ap);
		va_end(ap);
	}
	errors->count++;
}

/*
 * The operator's text goes onto the status line: cut it short and keep
 * control bytes out, so a stray escape cannot drive the terminal.
 */
static void
quote_word(char *dst, size_t cap, const char *word)
{
	size_t i;

	for (i = 0; word[i] && i + 1 < cap; i++) {
		unsigned char c = (unsigned char)word[i];

		dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[i] = '\0';
}

/* Report "source:line: what 'word'"; false, so callers can return it. */
static bool
bad_word(struct parse *p, const char *what, const char *word)
{
	char q[48];

	quote_word(q, sizeof q, word);
	add_error(p->errors, "%s:%zu: %s '%s'", p->source, p->line, what, q);
	return false;
}

static bool
bad_line(struct parse *p, const char *what)
{
	add_error(p->errors, "%s:%zu: %s", p->source, p->line, what);
	return false;
}

int
keymap_section_by_name(const char *name)
{
	int i;

	for (i = 0; name && i < KEYMAP_SECTION_COUNT; i++)
		if (strcmp(section_names[i], name) == 0)
			return i;
	return -1;
}

int
keymap_key_normalize(int key)
{
	switch (key) {
	case '\r':
	case KEY_ENTER:
		return '\n';
	case '\b':
	case KEY_DEL:
		return KEY_BACKSPACE;
	default:
		return key;
	}
}

/* "F1" … "F12", no leading zero. */
static int
parse_fn(const char *s, size_t n)
{
	int num = 0;
	size_t i;

	if (n < 2 || n > 3 || ascii_lower((unsigned char)s[0]) != 'f' || s[1] == '0')
		return -1;
	for (i = 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		num = num * 10 + (s[i] - '0');
	}
	return num >= 1 && num <= KEY_FN_MAX ? KEY_F(num) : -1;
}

/* "C-a" … "C-z": the control characters 1 … 26. */
static int
parse_ctrl(const char *s, size_t n)
{
	int c;

	if (n != 3 || ascii_lower((unsigned char)s[0]) != 'c' || s[1] != '-')
		return -1;
	c = ascii_lower((unsigned char)s[2]);
	return c >= 'a' && c <= 'z' ? keymap_key_normalize(c - 'a' + 1) : -1;
}

/* The inside of "<…>", any case. */
static int
parse_named(const char *s, size_t n)
{
	size_t i;
	int key;

	for (i = 0; i < KEY_NAMES; i++)
		if (strlen(key_names[i].name) == n && ascii_eq_n(s, key_names[i].name, n))
			return key_names[i].key;
	key = parse_fn(s, n);
	return key >= 0 ? key : parse_ctrl(s, n);
}

int
keymap_key_parse(const char *name)
{
	size_t n;

	if (!name)
		return -1;
	n = strlen(name);
	/* A lone "<" or "#" is clear here; in a keys file "#" starts a comment. */
	if (n == 1)
		return name[0] > ' ' && name[0] < 0x7f ? name[0] : -1;
	if (n < 3 || name[0] != '<' || name[n - 1] != '>')
		return -1;
	return parse_named(name + 1, n - 2);
}

void
keymap_key_name(int key, char *buf, size_t cap)
{
	size_t i;

	if (cap == 0)
		return;
	key = keymap_key_normalize(key);
	for (i = 0; i < KEY_NAMES; i++)
		if (key_names[i].key == key) {
			snprintf(buf, cap, "<%s>", key_names[i].name);
			return;
		}
	if (key >= KEY_F(1) && key <= KEY_F(KEY_FN_MAX))
		snprintf(buf, cap, "<F%d>", key - KEY_F(0));
	else if (key >= 1 && key <= 26)
		snprintf(buf, cap, "<C-%c>", 'a' + key - 1);
	else if (key > ' ' && key < 0x7f)
		snprintf(buf, cap, "%c", key);
	else
		snprintf(buf, cap, "<?>");
}

void
keymap_init(struct keymap *km)
{
	memset(km, 0, sizeof *km);
}

static int
find_binding(const struct keymap *km, int sec, int key)
{
	size_t i;

	for (i = 0; i < km->n[sec]; i++)
		if (km->bind[sec][i].key == key)
			return (int)i;
	return -1;
}

static void
remove_binding(struct keymap *km, int sec, size_t i)
{
	struct keymap_binding *b = km->bind[sec];

	memmove(&b[i], &b[i + 1], (km->n[sec] - i - 1) * sizeof *b);
	km->n[sec]--;
}

/*
 * A view section keeps an unbind as a REQ_NONE entry so it hides the
 * generic binding; generic has nothing under it, so there it is removed.
 * False (and km unchanged) when the section is full.
 */
static bool
set_binding(struct keymap *km, int sec, int key, enum request req)
{
	int i = find_binding(km, sec, key);
	bool drop = sec == KEYMAP_GENERIC && req == REQ_NONE;

	if (i >= 0 && drop)
		remove_binding(km, sec, (size_t)i);
	else if (i >= 0)
		km->bind[sec][i].req = req;
	else if (drop)
		return true;
	else if (km->n[sec] >= KEYMAP_BINDINGS_MAX)
		return false;
	else
		km->bind[sec][km->n[sec]++] = (struct keymap_binding){ key, req };
	return true;
}

/* bind SECTION KEY REQUEST | unbind SECTION KEY: check every word, then apply. */
static bool
run_bind(struct parse *p, char *const *w, size_t n)
{
	bool unbind = strcmp(w[0], "unbind") == 0;
	enum request req = REQ_NONE;
	int sec, key;

	if (unbind && n != 3)
		return bad_line(p, "wrong number of words (want: unbind SECTION KEY)");
	if (!unbind && n != 4)
		return bad_line(p, "wrong number of words (want: bind SECTION KEY REQUEST)");
	sec = keymap_section_by_name(w[1]);
	if (sec < 0)
		return bad_word(p, "unknown section", w[1]);
	key = keymap_key_parse(w[2]);
	if (key < 0)
		return bad_word(p, "bad key name", w[2]);
	if (!unbind && strcmp(w[3], "none") != 0) {
		req = request_by_name(w[3]);
		if (req == REQ_NONE)
			return bad_word(p, "unknown request", w[3]);
	}
	if (!set_binding(p->km, sec, key, req))
		return bad_word(p, "too many bindings in section", w[1]);
	return true;
}

/* Cut off the comment and split on blanks; counts every word, keeps cap. */
static size_t
split_words(char *s, char **w, size_t cap)
{
	size_t n = 0;
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	for (;;) {
		s += strspn(s, " \t\r\v\f");
		if (!*s)
			return n;
		if (n < cap)
			w[n] = s;
		n++;
		s += strcspn(s, " \t\r\v\f");
		if (*s)
			*s++ = '\0';
	}
}

static bool
run_line(struct parse *p, const char *text, size_t len)
{
	char buf[KEYMAP_LINE_MAX], *w[4];
	size_t n;

	if (len >= sizeof buf)
		return bad_line(p, "line too long");
	if (memchr(text, '\0', len))
		return bad_line(p, "NUL byte in line");
	memcpy(buf, text, len);
	buf[len] = '\0';
	n = split_words(buf, w, 4);
	if (n == 0)
		return true;
	if (strcmp(w[0], "bind") == 0 || strcmp(w[0], "unbind") == 0)
		return run_bind(p, w, n);
	return bad_word(p, "unknown command", w[0]);
}

/* The text need not end in a newline nor be NUL-terminated. */
static enum keymap_status
load_buffer(struct parse *p, const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		p->line++;
		if (!run_line(p, text + pos, end - pos))
			p->bad++;
		pos = end + 1;
	}
	return p->bad ? KEYMAP_BAD_LINES : KEYMAP_OK;
}

enum keymap_status
keymap_load_string(struct keymap *km, const char *text, const char *source,
		   struct keymap_errors *errors)
{
	struct parse p = { km, source ? source : "keys", 0, 0, errors };

	return load_buffer(&p, text, strlen(text));
}

static enum keymap_status
file_error(struct keymap_errors *errors, const char *path, const char *what, int err)
{
	char ebuf[128];

	add_error(errors, "%s: %s: %s", path, what, strerror_r(err, ebuf, sizeof ebuf));
	return KEYMAP_UNREADABLE;
}

/* Only regular files: a directory or a device is a mistake worth reporting. */
static enum keymap_status
check_regular(int fd, const char *path, struct keymap_errors *errors)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return file_error(errors, path, "cannot stat", errno);
	if (!S_ISREG(st.st_mode))
		return file_error(errors, path, "cannot read",
				  S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
	return KEYMAP_OK;
}

/*
 * The whole file, at most KEYMAP_FILE_MAX bytes, in *buf (malloc'd: the
 * caller frees it, set or NULL whatever is returned). O_NONBLOCK so that a
 * FIFO at the path cannot hang the console's start.
 */
static enum keymap_status
slurp(const char *path, char **buf, size_t *len, struct keymap_errors *errors)
{
	enum keymap_status st;
	enum bytes_read r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), saved;

	*buf = NULL;
	if (fd < 0 && errno == ENOENT)
		return KEYMAP_NO_FILE;
	if (fd < 0)
		return file_error(errors, path, "cannot open", errno);
	st = check_regular(fd, path, errors);
	if (st != KEYMAP_OK) {
		close(fd);
		return st;
	}
	r = bytes_read_fd(fd, KEYMAP_FILE_MAX, buf, len);
	saved = errno;
	close(fd);
	switch (r) {
	case BYTES_READ_OK:
		return KEYMAP_OK;
	case BYTES_READ_NOMEM:
		return file_error(errors, path, "cannot read", ENOMEM);
	case BYTES_READ_ERROR:
		return file_error(errors, path, "cannot read", saved);
	case BYTES_READ_TOO_LARGE:
		break;
	}
	add_error(errors, "%s: larger than %d bytes", path, KEYMAP_FILE_MAX);
	return KEYMAP_UNREADABLE;
}

enum keymap_status
keymap_load_file(struct keymap *km, const char *path, struct keymap_errors *errors)
{
	struct parse p = { km, path, 0, 0, errors };
	enum keymap_status st;
	size_t len = 0;
	char *buf;

	st = slurp(path, &buf, &len, errors);
	if (st == KEYMAP_OK)
		st = load_buffer(&p, buf, len);
	free(buf);
	return st;
}

enum request
keymap_lookup(const struct keymap *km, const char *section, int key)
{
	int sec = keymap_section_by_name(section);
	int i;

	key = keymap_key_normalize(key);
	if (sec > KEYMAP_GENERIC && (i = find_binding(km, sec, key)) >= 0)
		return km->bind[sec][i].req;
	i = find_binding(km, KEYMAP_GENERIC, key);
	return i >= 0 ? km->bind[KEYMAP_GENERIC][i].req : REQ_NONE;
}

size_t
keymap_keys_for(const struct keymap *km, const char *section, enum request req,
		char out[][KEYMAP_KEY_NAME_MAX], size_t cap)
{
	int sec = keymap_section_by_name(section);
	const struct keymap_binding *b;
	size_t i, n = 0;

	if (req == REQ_NONE)
		return 0;
	for (i = 0; sec > KEYMAP_GENERIC && i < km->n[sec] && n < cap; i++)
		if (km->bind[sec][i].req == req)
			keymap_key_name(km->bind[sec][i].key, out[n++], KEYMAP_KEY_NAME_MAX);
	for (i = 0; i < km->n[KEYMAP_GENERIC] && n < cap; i++) {
		b = &km->bind[KEYMAP_GENERIC][i];
		if (b->req == req && (sec <= KEYMAP_GENERIC || find_binding(km, sec, b->key) < 0))
			keymap_key_name(b->key, out[n++], KEYMAP_KEY_NAME_MAX);
	}
	return n;
}

bool
keymap_user_path(char *buf, size_t cap)
{
	const char *env;

	if (cap == 0)
		return false;
	buf[0] = '\0';
	env = getenv("AIRLOCK_KEYS");
	if (env && *env)
		return path_done(buf, cap, snprintf(buf, cap, "%s", env));
	/* The XDG spec says a relative value is invalid and to be ignored. */
	env = getenv("XDG_CONFIG_HOME");
	if (env && env[0] == '/')
		return path_done(buf, cap, snprintf(buf, cap, "%s/airlock/keys", env));
	env = getenv("HOME");
	if (env && *env)
		return path_done(buf, cap, snprintf(buf, cap, "%s/.config/airlock/keys", env));
	return false;
}
