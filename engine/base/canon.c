#include "canon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the canonical writer -------------------------------------------------- */

void
hash_canon_init(struct hash_canon *c)
{
	c->buf = c->inline_buf;
	c->len = 0;
	c->cap = sizeof c->inline_buf;
	c->bad = false;
	c->first = true;
	c->buf[0] = '\0';
}

void
hash_canon_free(struct hash_canon *c)
{
	if (c->buf != c->inline_buf)
		free(c->buf);
	hash_canon_init(c);
}

/* Room for n more bytes and a NUL. */
static bool
reserve(struct hash_canon *c, size_t n)
{
	size_t cap = c->cap;
	char *p;

	if (c->bad)
		return false;
	if (c->len + n + 1 <= c->cap)
		return true;
	while (cap < c->len + n + 1) {
		if (cap > SIZE_MAX / 2) {
			c->bad = true;
			return false;
		}
		cap *= 2;
	}
	p = c->buf == c->inline_buf ? malloc(cap) : realloc(c->buf, cap);
	if (!p) {
		c->bad = true;
		return false;
	}
	if (c->buf == c->inline_buf)
		memcpy(p, c->buf, c->len);
	c->buf = p;
	c->cap = cap;
	return true;
}

static void
put(struct hash_canon *c, const char *s, size_t n)
{
	if (!reserve(c, n))
		return;
	memcpy(c->buf + c->len, s, n);
	c->len += n;
	c->buf[c->len] = '\0';
}

/* The comma before every array element but the first. */
static void
element(struct hash_canon *c)
{
	if (!c->first)
		put(c, ",", 1);
	c->first = false;
}

void
hash_canon_array_open(struct hash_canon *c)
{
	element(c);
	put(c, "[", 1);
	c->first = true;
}

void
hash_canon_array_close(struct hash_canon *c)
{
	put(c, "]", 1);
	c->first = false;
}

/* As "%" PRId64 writes it, without a printf per number. */
void
hash_canon_int(struct hash_canon *c, int64_t v)
{
	char num[24], *p = num + sizeof num;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	element(c);
	put(c, p, (size_t)(num + sizeof num - p));
}

/*
 * A format character of n bytes at c that a terminal shows as nothing but
 * that changes what is around it: bidirectional overrides and isolates
 * (text shown reversed), zero-width spaces and joiners, the soft hyphen,
 * the byte-order mark. The console shows them as '?' (wcwidth below 1).
 */
static bool
invisible(const unsigned char *c, size_t n)
{
	uint32_t cp = n == 2 ? (uint32_t)(c[0] & 0x1f) << 6 | (c[1] & 0x3f) :
		      n == 3 ? (uint32_t)(c[0] & 0x0f) << 12 | (uint32_t)(c[1] & 0x3f) << 6 |
				 (c[2] & 0x3f) : 0;

	return cp == 0xad || cp == 0x61c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2064) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

static void
printable(char *dst, size_t cap, const char *s, bool lines)
{
	size_t len, i, o, n;

	if (cap == 0)
		return;
	if (!s)
		s = "";
	len = strlen(s);
	if (len >= cap) {
		len = cap - 1;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
	/* in place: what is written never outruns what is read */
	for (i = o = 0; dst[i]; i += n) {
		const unsigned char *c = (const unsigned char *)dst + i;

		n = canon_utf8_len(c, len - i);
		if (n == 0 || (c[0] < 0x20 && !(lines && (c[0] == '\n' || c[0] == '\t'))) ||
		    c[0] == 0x7f || (c[0] == 0xc2 && c[1] < 0xa0) || invisible(c, n)) {
			/* a control (C0, DEL, C1), an invisible format character, or not UTF-8 */
			dst[o++] = '?';
			n = n ? n : 1;
		} else {
			memmove(dst + o, c, n);
			o += n;
		}
	}
	dst[o] = '\0';
}

void
canon_printable(char *dst, size_t cap, const char *s)
{
	printable(dst, cap, s, false);
}

void
canon_printable_lines(char *dst, size_t cap, const char *s)
{
	printable(dst, cap, s, true);
}

bool
canon_has_control(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < n; i++)
		if (u[i] < 0x20 || u[i] == 0x7f || (u[i] == 0xc2 && i + 1 < n && u[i + 1] < 0xa0))
			return true;
	return false;
}

size_t
canon_utf8_len(const unsigned char *s, size_t left)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n > left)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* jansson's escapes: the two-letter ones, then \u00XX in upper case. */
static void
put_escape(struct hash_canon *c, unsigned char ch)
{
	static const char two[] = "\"\"\\\\\bb\ff\nn\rr\tt";
	char seq[8];
	size_t i;

	for (i = 0; i < sizeof two - 1; i += 2)
		if ((unsigned char)two[i] == ch) {
			seq[0] = '\\';
			seq[1] = two[i + 1];
			put(c, seq, 2);
			return;
		}
	snprintf(seq, sizeof seq, "\\u%04X", ch);
	put(c, seq, 6);
}

/* Bytes written as they are: printable ASCII but for " and \. */
static bool
plain(unsigned char ch)
{
	static const uint64_t bits[4] = {
		0xfffffffb00000000ull,	/* 0x20-0x3f, without '"' (0x22) */
		0xffffffffefffffffull,	/* 0x40-0x7f, without '\\' (0x5c); 0x7f stays plain */
		0, 0,
	};

	return bits[ch >> 6] >> (ch & 63) & 1;
}

/*
 * Whether any of the 8 bytes in w is not plain: a control byte, '"', '\\'
 * or a byte of a multi-byte sequence. Exact as a yes or no (the classic
 * "has a zero byte" and "has a byte below n" tests), which is all the
 * scan needs: a word that says yes is walked byte by byte.
 */
static const uint64_t ONES = 0x0101010101010101ull, HIGHS = 0x8080808080808080ull;

static bool
word_plain(uint64_t w)
{
	uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');

	return !((w | ((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) |
		  ((b - ONES) & ~b)) & HIGHS);
}

/* The first byte at or after i that is not plain, or len. */
static size_t
plain_run(const unsigned char *p, size_t i, size_t len)
{
	uint64_t w;

	/* Eight at a time: the strings of an entry are mostly plain (ids, hashes). */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		if (!word_plain(w))
			break;
	}
	while (i < len && plain(p[i]))
		i++;
	return i;
}

/* From the first byte that needs more than a copy: escapes and UTF-8 checks. */
static void
put_slow(struct hash_canon *c, const char *s, size_t i, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run, n;

	while (i < len && !c->bad) {
		run = plain_run(p, i, len);
		put(c, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if (p[i] < 0x80) {
			put_escape(c, p[i++]);
			continue;
		}
		n = canon_utf8_len(p + i, len - i);
		if (n == 0) {
			c->bad = true;
			return;
		}
		put(c, s + i, n);
		i += n;
	}
}

void
hash_canon_str(struct hash_canon *c, const char *s, size_t len)
{
	size_t plain_len;
	char *q;

	if (!s) {
		element(c);
		put(c, "null", 4);
		return;
	}
	/* The common case, nothing to escape: comma, quotes and bytes in one go. */
	if (!reserve(c, len + 3))
		return;
	q = c->buf + c->len;
	if (!c->first)
		*q++ = ',';
	c->first = false;
	*q++ = '"';
	plain_len = plain_run((const unsigned char *)s, 0, len);
	memcpy(q, s, plain_len);
	c->len = (size_t)(q - c->buf) + plain_len;
	if (plain_len < len)
		put_slow(c, s, plain_len, len);
	put(c, "\"", 1);
}

void
hash_canon_raw(struct hash_canon *c, const char *s, size_t len)
{
	put(c, s, len);
	c->first = true;
}

char *
hash_canon_take(struct hash_canon *c, size_t *len)
{
	char *s = NULL;

	if (!c->bad && c->buf != c->inline_buf) {
		s = c->buf;		/* already on the heap: handed over */
		c->buf = c->inline_buf;
	} else if (!c->bad && (s = malloc(c->len + 1)) != NULL) {
		memcpy(s, c->buf, c->len + 1);
	}
	if (s)
		*len = c->len;
	hash_canon_free(c);
	return s;
}

/* A real as jansson writes it (its precision and ".0" rules): rare enough to ask it. */
static void
put_real(struct hash_canon *c, const json_t *v)
{
	char s[64];	/* %.17g and ".0": never near this */
	size_t n = json_dumpb(v, s, sizeof s, JSON_COMPACT | JSON_ENCODE_ANY);

	element(c);
	if (n == 0 || n > sizeof s) {
		c->bad = true;
		return;
	}
	put(c, s, n);
}

static void
literal(struct hash_canon *c, const char *word)
{
	element(c);
	put(c, word, strlen(word));
}

struct canon_key {
	const char *s;
	size_t len;
	const json_t *v;
};

/* jansson's key order: bytes compared, a prefix first. */
static int
key_cmp(const void *x, const void *y)
{
	const struct canon_key *a = x, *b = y;
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

#define CANON_KEYS_INLINE	16

static void canon_value(struct hash_canon *c, const json_t *v);

static void
canon_object(struct hash_canon *c, const json_t *v)
{
	struct canon_key inline_keys[CANON_KEYS_INLINE], *keys = inline_keys;
	size_t n = json_object_size(v), i = 0, len;
	const char *k;
	json_t *val;

	if (n > CANON_KEYS_INLINE && !(keys = malloc(n * sizeof *keys))) {
		c->bad = true;
		return;
	}
	json_object_keylen_foreach((json_t *)v, k, len, val) {
		if (i < n)
			keys[i++] = (struct canon_key){ k, len, val };
	}
	qsort(keys, i, sizeof *keys, key_cmp);
	element(c);
	hash_canon_raw(c, "{", 1);
	for (n = 0; n < i && !c->bad; n++) {
		hash_canon_str(c, keys[n].s, keys[n].len);
		hash_canon_raw(c, ":", 1);
		canon_value(c, keys[n].v);
	}
	put(c, "}", 1);
	c->first = false;
	if (keys != inline_keys)
		free(keys);
}

static void
canon_value(struct hash_canon *c, const json_t *v)
{
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		canon_object(c, v);
		break;
	case JSON_ARRAY:
		hash_canon_array_open(c);
		for (i = 0; i < json_array_size(v) && !c->bad; i++)
			canon_value(c, json_array_get(v, i));
		hash_canon_array_close(c);
		break;
	case JSON_STRING:
		hash_canon_str(c, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		hash_canon_int(c, json_integer_value(v));
		break;
	case JSON_REAL:
		put_real(c, v);
		break;
	case JSON_TRUE:
		literal(c, "true");
		break;
	case JSON_FALSE:
		literal(c, "false");
		break;
	case JSON_NULL:
		literal(c, "null");
		break;
	}
}

/* Walked here, not through json_dump_callback: its sorted dump allocated per object. */
void
hash_canon_json(struct hash_canon *c, const json_t *v)
{
	if (!v) {
		element(c);
		c->bad = true;
		return;
	}
	canon_value(c, v);
}

bool
canon_printable_json(json_t *v)
{
	const char *key;
	json_t *item;
	size_t i, cap;
	char *clean;
	int rc;

	json_array_foreach(v, i, item)
		if (!canon_printable_json(item))
			return false;
	json_object_foreach(v, key, item)
		if (canon_has_control(key, strlen(key)) || !canon_printable_json(item))
			return false;
	if (!json_is_string(v))
		return true;
	cap = json_string_length(v) + 1;
	if (!(clean = malloc(cap)))
		return false;
	canon_printable_lines(clean, cap, json_string_value(v));
	rc = strcmp(clean, json_string_value(v)) == 0 ? 0 : json_string_set(v, clean);
	free(clean);
	return rc == 0;
}

json_t *
canon_printable_load(const char *line, size_t len)
{
	json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);

	if (v && !canon_printable_json(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}
