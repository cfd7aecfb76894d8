#ifndef AIRLOCK_CANON_H
#define AIRLOCK_CANON_H

/*
 * Canonical JSON text written straight into one buffer, so a value is
 * serialised once and the same bytes serve its hash (hash.h) and whatever
 * is sent on. Pure: no libcrypto, so the parser (engine/privsep) links it
 * alone.
 *
 * Canonical means what json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENCODE_ANY) writes: no spaces, object keys sorted, strings as
 * jansson escapes them (", \, \b \f \n \r \t, other controls as \u00XX,
 * everything else as UTF-8). Audit entry hashes are computed over this
 * form, so the writer must stay byte-identical to it: the unit test
 * compares the two.
 *
 * With it, what UTF-8 text from outside may hold: a well-formed sequence,
 * a control character, and text made printable for a terminal.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * A canonical JSON writer. Values inside an array are separated by the
 * writer itself. bad is set (and stays) on out of memory or on a string
 * that is not valid UTF-8; the text is then not to be used.
 */
#define HASH_CANON_INLINE	1024

struct hash_canon {
	char *buf;		/* inline, or malloc'd once it outgrows it */
	size_t len, cap;
	bool bad;
	bool first;		/* nothing written yet in the open array */
	char inline_buf[HASH_CANON_INLINE];
};

/*
 * The length of the UTF-8 sequence at s (at most left bytes), or 0 when it
 * is not one: overlong forms, surrogates and code points past U+10FFFF are
 * refused, as jansson refuses them.
 */
size_t canon_utf8_len(const unsigned char *s, size_t left);

/*
 * Whether the n bytes at s hold a control character a terminal obeys: C0
 * (NUL included), DEL, or C1 (U+0080..U+009F, in UTF-8 C2 80..C2 9F).
 */
bool canon_has_control(const char *s, size_t n);

/*
 * s (NULL: "") into dst[cap], cut on a UTF-8 boundary; each control
 * character (as canon_has_control), each invisible format character
 * (bidirectional overrides, zero-width spaces: what a terminal shows as
 * nothing but that changes what is around it) and each byte that is not
 * well-formed UTF-8 shown as '?': for text from outside (an edited log,
 * an engine's reply) on its way to a terminal, or into JSON, which must
 * be UTF-8.
 */
void canon_printable(char *dst, size_t cap, const char *s);
/* The same with newlines and tabs kept: text of several lines (a metrics page). */
void canon_printable_lines(char *dst, size_t cap, const char *s);

/*
 * Every string in v made printable as canon_printable_lines does: an
 * engine's reply on its way to a terminal (ctl, inspect), which would obey
 * a control character in it. False when a key holds one (or memory ran
 * out): the reply is not to be believed.
 */
bool canon_printable_json(json_t *v);
/* One line of an engine's JSON (duplicate keys refused), made printable; NULL when it is not. */
json_t *canon_printable_load(const char *line, size_t len);

void hash_canon_init(struct hash_canon *c);
void hash_canon_free(struct hash_canon *c);
void hash_canon_array_open(struct hash_canon *c);
void hash_canon_array_close(struct hash_canon *c);
void hash_canon_int(struct hash_canon *c, int64_t v);
/* A string of len bytes (NUL bytes allowed), or null when s is NULL. */
void hash_canon_str(struct hash_canon *c, const char *s, size_t len);
/* Any jansson value, keys sorted (one element when inside an array). */
void hash_canon_json(struct hash_canon *c, const json_t *v);
/*
 * Text as it is, not an element: the value written next gets no comma.
 * For the members of an object whose keys the caller writes in order
 * ("{\"id\":" then the value); the caller keeps the text valid JSON.
 */
void hash_canon_raw(struct hash_canon *c, const char *s, size_t len);
/*
 * The text as a malloc'd string of *len bytes (plus a NUL), for the
 * caller to free; the writer is left empty. NULL (and the writer freed)
 * when bad or out of memory.
 */
char *hash_canon_take(struct hash_canon *c, size_t *len);

#endif
