#ifndef AIRLOCK_KEYMAP_H
#define AIRLOCK_KEYMAP_H

/*
 * Keys → requests, per section, as in tig: a key pressed in a view is
 * looked up in that view's section, then in `generic`. The built-in
 * defaults (default.keys, compiled in as keymap_builtin) and the user's
 * file use one syntax, one statement a line, `#` starts a comment:
 *
 *	bind SECTION KEY REQUEST	# REQUEST "none" is the same as unbind
 *	unbind SECTION KEY
 *
 * An `unbind` in a view's section hides the generic binding of that key
 * in that view. A bad line is reported with its line number and changes
 * nothing; the lines after it still apply.
 *
 * Key codes are plain ints: ASCII, control characters, and the ncurses
 * KEY_* codes the console reads with keypad() on. This header does not
 * include curses.
 */

#include <stdbool.h>
#include <stddef.h>

#include "request.h"
#include "view_info.h"

/* The sections a keymap file may name: generic, one per view, help. */
#define KEYMAP_VIEW_SECTION(_, e, name, title, help) _(e, #name)
#define KEYMAP_SECTION_INFO(_) \
	_(GENERIC,  "generic")  \
	VIEW_TABLE(KEYMAP_VIEW_SECTION, _) \
	_(HELP,     "help")

enum keymap_section {
#define KEYMAP_SECTION_ENUM(e, name) KEYMAP_##e,
	KEYMAP_SECTION_INFO(KEYMAP_SECTION_ENUM)
#undef KEYMAP_SECTION_ENUM
	KEYMAP_SECTION_COUNT
};

#define KEYMAP_BINDINGS_MAX 256	/* per section */
#define KEYMAP_KEY_NAME_MAX 16	/* "<Backspace>" and a NUL fit */
#define KEYMAP_FILE_MAX 65536	/* a longer keys file is refused */
#define KEYMAP_LINE_MAX 256	/* a longer line is refused */
#define KEYMAP_ERRORS_MAX 8	/* messages kept; the count goes on */
#define KEYMAP_ERROR_LEN 256

struct keymap_binding {
	int key;		/* normalised, see keymap_key_normalize() */
	enum request req;	/* REQ_NONE: unbound here, hides generic */
};

/* Plain data: copy it, compare it, keep it in the UI's context. ~15 KiB. */
struct keymap {
	struct keymap_binding bind[KEYMAP_SECTION_COUNT][KEYMAP_BINDINGS_MAX];
	size_t n[KEYMAP_SECTION_COUNT];	/* in file order, for the help screen */
};

/* Messages of the form "keys:12: unknown request 'revok'". Zero it first. */
struct keymap_errors {
	size_t count;	/* every error seen, also those past KEYMAP_ERRORS_MAX */
	char msg[KEYMAP_ERRORS_MAX][KEYMAP_ERROR_LEN];
};

enum keymap_status {
	KEYMAP_OK,		/* every line applied */
	KEYMAP_BAD_LINES,	/* some lines refused (in errors), the others applied */
	KEYMAP_NO_FILE,		/* the file does not exist: nothing to load, not an error */
	KEYMAP_UNREADABLE,	/* exists but cannot be read, or too large (in errors) */
};

/* default.keys, compiled in. */
extern const char keymap_builtin[];

/* An empty keymap: every key does nothing. */
void keymap_init(struct keymap *km);

/*
 * Apply text on top of what km holds. source names it in messages
 * ("builtin", a path). errors may be NULL; messages are appended to it.
 */
enum keymap_status keymap_load_string(struct keymap *km, const char *text,
				      const char *source, struct keymap_errors *errors);

/* The same for a file, named by its path in messages. */
enum keymap_status keymap_load_file(struct keymap *km, const char *path,
				    struct keymap_errors *errors);

/*
 * What key does in section ("sessions", "tools", …): the section's own
 * binding, else generic's; REQ_NONE if neither binds it or the section
 * unbinds it. An unknown section name looks in generic only. The key is
 * normalised first, so '\r' and KEY_ENTER are <Enter>.
 */
enum request keymap_lookup(const struct keymap *km, const char *section, int key);

/*
 * The names of the keys that do req in section, the section's own first,
 * then the generic ones it does not hide, each in file order. Returns how
 * many were written to out (at most cap).
 */
size_t keymap_keys_for(const struct keymap *km, const char *section, enum request req,
		       char out[][KEYMAP_KEY_NAME_MAX], size_t cap);

/* The section called name, or -1. */
int keymap_section_by_name(const char *name);

/* The key code of a key name ("j", "<Enter>", "<C-l>"), normalised, or -1. */
int keymap_key_parse(const char *name);

/* The canonical name of key ("<PageUp>", "j"); "<?>" if it has none. */
void keymap_key_name(int key, char *buf, size_t cap);

/*
 * The one code each key has in a keymap: Enter arrives as '\n', '\r' or
 * KEY_ENTER, Backspace as KEY_BACKSPACE, DEL or ^H, depending on the
 * terminal and the nl() mode. Aliases <C-j>, <C-m> are <Enter>, <C-i> is
 * <Tab>, <C-h> is <Backspace>.
 */
int keymap_key_normalize(int key);

/*
 * The user's keys file: $AIRLOCK_KEYS if set and not empty, else
 * $XDG_CONFIG_HOME/airlock/keys (if absolute), else
 * $HOME/.config/airlock/keys. False if none can be formed in cap bytes.
 */
bool keymap_user_path(char *buf, size_t cap);

#endif
