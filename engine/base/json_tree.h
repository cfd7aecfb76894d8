#ifndef AIRLOCK_JSON_TREE_H
#define AIRLOCK_JSON_TREE_H

/*
 * A JSON value as a binary tree (issue 41, section 3): how the parser
 * process hands the engine a peer's inline config, so that the engine
 * builds the json_t with jansson's constructors alone and tokenizes no
 * JSON text of a peer. Pure: the parser (engine/privsep) links it alone.
 *
 * A value is a tag byte, then what its tag says:
 *   'n' 't' 'f'  null, true, false: nothing more
 *   'i'          an integer: the int64 zigzag-mapped, as an unsigned number
 *   'r'          a real: the 8 bytes of a finite double, native byte order
 *   's'          a string: its length, then its bytes
 *   'a'          an array: its count, then that many values
 *   'o'          an object: its count, then that many members, each a key
 *                (its length, then its bytes) and a value, in jansson's order
 * An unsigned number is LEB128 (7 bits a byte, low first), always in its
 * shortest form, so a value has exactly one writing: what the reader
 * accepts, the writer gives back byte for byte. Native byte order: both
 * ends are one host's programs.
 *
 * It carries what jansson's text parser gives under the control parser's
 * flags (JSON_REJECT_DUPLICATES, no JSON_ALLOW_NUL), no more: strings and
 * keys are UTF-8 without NUL (jansson refuses \u0000 in a string without
 * JSON_ALLOW_NUL, and in a key always), keys unique in their object, reals
 * finite (it refuses an overflow), at most JSON_TREE_DEPTH_MAX arrays and
 * objects deep. Smaller than the text but for reals (9 bytes each), and
 * read without a grammar: every length and count checked against the bytes
 * left before anything is built.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "canon.h"

/* Arrays and objects nested in one value; a config needs under ten. */
#define JSON_TREE_DEPTH_MAX	64

enum json_tree_tag {
	JSON_TREE_NULL = 'n',
	JSON_TREE_TRUE = 't',
	JSON_TREE_FALSE = 'f',
	JSON_TREE_INTEGER = 'i',
	JSON_TREE_REAL = 'r',
	JSON_TREE_STRING = 's',
	JSON_TREE_ARRAY = 'a',
	JSON_TREE_OBJECT = 'o',
};

/*
 * v appended to out as a tree. out->bad is set (and the bytes are not to
 * be used) when out of memory or when v is one the reader would refuse: a
 * string or key with NUL, a real not finite, deeper than the bound.
 */
void json_tree_write(struct hash_canon *out, const json_t *v);

/*
 * Whether v is at most JSON_TREE_DEPTH_MAX arrays and objects deep: what
 * the control parser asks of a config before it accepts it, so that the
 * writer then fails only when out of memory.
 */
bool json_tree_shallow(const json_t *v);

/*
 * The value of len bytes, built with jansson's constructors; NULL (nothing
 * leaked) when they are not exactly one tree as above: a length or count
 * past the end, bytes after the value, an unknown tag, a number not in its
 * shortest form, too deep, a string or key not UTF-8 or with NUL, a key
 * twice in an object, a real not finite; or when out of memory.
 */
json_t *json_tree_read(const void *buf, size_t len);

#endif
