#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

/* One call draws at most this many columns: wider than any real terminal. */
#define DRAW_COLS_MAX	512
#define TRUNC_MARK	L'~'

static const char *const glyphs_utf8[GLYPH_COUNT] = {
#define DRAW_GLYPH_UTF8(e, utf8, ascii) [GLYPH_##e] = utf8,
	DRAW_GLYPHS(DRAW_GLYPH_UTF8)
#undef DRAW_GLYPH_UTF8
};

static const char *const glyphs_ascii[GLYPH_COUNT] = {
#define DRAW_GLYPH_ASCII(e, utf8, ascii) [GLYPH_##e] = ascii,
	DRAW_GLYPHS(DRAW_GLYPH_ASCII)
#undef DRAW_GLYPH_ASCII
};

const char *
draw_glyph(const struct ui_model *m, enum draw_glyph g)
{
	if ((unsigned)g >= GLYPH_COUNT)
		return "?";
	return m && m->ascii ? glyphs_ascii[g] : glyphs_utf8[g];
}

/* Formatters. */

/*
 * v already above the first unit's threshold, scaled by base per unit:
 * one decimal below 9.95, none below 999.5. Rounding decides the unit, so
 * 1023.9K never shows as "1024K".
 */
static const char *
fmt_scaled(char buf[DRAW_FMT_MAX], double v, double base, const char *units)
{
	size_t u, last = strlen(units) - 1;

	for (u = 0; u < last; u++) {
		v /= base;
		if (v < 9.95) {
			snprintf(buf, DRAW_FMT_MAX, "%.1f%c", v, units[u]);
			return buf;
		}
		if (v < 999.5) {
			snprintf(buf, DRAW_FMT_MAX, "%.0f%c", v, units[u]);
			return buf;
		}
	}
	snprintf(buf, DRAW_FMT_MAX, "%.0f%c", v / base, units[u]);
	return buf;
}

const char *
draw_fmt_bytes(char buf[DRAW_FMT_MAX], uint64_t bytes)
{
	if (bytes < 1000) {
		snprintf(buf, DRAW_FMT_MAX, bytes ? "%" PRIu64 "B" : "0", bytes);
		return buf;
	}
	return fmt_scaled(buf, (double)bytes, 1024.0, "KMGTPE");
}

const char *
draw_fmt_count(char buf[DRAW_FMT_MAX], uint64_t n)
{
	if (n < 10000) {
		snprintf(buf, DRAW_FMT_MAX, "%" PRIu64, n);
		return buf;
	}
	return fmt_scaled(buf, (double)n, 1000.0, "kMGTPE");
}

const char *
draw_fmt_duration(char buf[DRAW_FMT_MAX], int64_t ms)
{
	int64_t s = ms > 0 ? ms / 1000 : 0;

	if (s < 3600)
		snprintf(buf, DRAW_FMT_MAX, "%02d:%02d", (int)(s / 60), (int)(s % 60));
	else if (s < 100 * 3600)
		snprintf(buf, DRAW_FMT_MAX, "%dh%02d", (int)(s / 3600), (int)(s / 60 % 60));
	else
		snprintf(buf, DRAW_FMT_MAX, "%" PRId64 "d%02d", s / 86400, (int)(s / 3600 % 24));
	return buf;
}

/*
 * A ladder of units: v reads in the first step it is below (the last has
 * no bound), as whole units with 0, 1 or 2 decimals, truncated, not
 * rounded: a lease 0.999 s old has not reached a second.
 */
struct fmt_step {
	int64_t below, unit;
	int decimals;
	const char *suffix;
};

static const char *
fmt_ladder(char buf[DRAW_FMT_MAX], int64_t v, const struct fmt_step *s)
{
	static const int64_t tens[] = { 1, 10, 100 };

	if (v < 0)
		v = 0;
	while (s->below && v >= s->below)
		s++;
	if (s->decimals)
		snprintf(buf, DRAW_FMT_MAX, "%" PRId64 ".%0*" PRId64 "%s", v / s->unit, s->decimals,
			 v % s->unit / (s->unit / tens[s->decimals]), s->suffix);
	else
		snprintf(buf, DRAW_FMT_MAX, "%" PRId64 "%s", v / s->unit, s->suffix);
	return buf;
}

const char *
draw_fmt_secs(char buf[DRAW_FMT_MAX], int64_t ms)
{
	static const struct fmt_step secs[] = {
		{ 10000, 1000, 2, "s" }, { 100000, 1000, 1, "s" }, { 10000000, 1000, 0, "s" },
		{ 0, 3600000, 0, "h" },
	};

	return fmt_ladder(buf, ms, secs);
}

const char *
draw_fmt_us(char buf[DRAW_FMT_MAX], int64_t us)
{
	static const struct fmt_step micros[] = {
		{ 1000, 1, 0, "us" }, { 10000, 1000, 2, "ms" }, { 1000000, 1000, 0, "ms" },
		{ 10000000, 1000000, 2, "s" }, { 100000000, 1000000, 1, "s" },
		{ 10000000000, 1000000, 0, "s" }, { 0, 3600000000, 0, "h" },
	};

	return fmt_ladder(buf, us, micros);
}

const char *
draw_fmt_ago(char buf[DRAW_FMT_MAX], int64_t now_ms, int64_t then_ms)
{
	static const struct fmt_step ago[] = {
		{ 60, 1, 0, "s ago" }, { 3600, 60, 0, "m ago" }, { 86400, 3600, 0, "h ago" },
		{ 0, 86400, 0, "d ago" },
	};

	if (then_ms <= 0) {
		snprintf(buf, DRAW_FMT_MAX, "never");
		return buf;
	}
	return fmt_ladder(buf, then_ms < now_ms ? (now_ms - then_ms) / 1000 : 0, ago);
}

const char *
draw_fmt_clock(char buf[DRAW_FMT_MAX], int64_t wall_ms)
{
	time_t t = (time_t)(wall_ms / 1000);
	struct tm tm;

	if (wall_ms <= 0 || !gmtime_r(&t, &tm) || strftime(buf, DRAW_FMT_MAX, "%H:%M:%S", &tm) == 0)
		snprintf(buf, DRAW_FMT_MAX, "--:--:--");
	return buf;
}

const char *
draw_short_id(char buf[DRAW_FMT_MAX], const char *id)
{
	static const char *const prefixes[] = { "sha256:", "s-" };
	size_t i, len;

	for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		len = strlen(prefixes[i]);
		if (strncmp(id, prefixes[i], len) == 0) {
			id += len;
			break;
		}
	}
	snprintf(buf, DRAW_FMT_MAX, "%.8s", id);
	return buf;
}

/* Events. */

static void
fmt_event_cutover(char *buf, size_t n, const struct supervisor_event *e)
{
	char us[DRAW_FMT_MAX];

	size_t len;

	if (e->kind == SUPERVISOR_EVENT_CUTOVER) {
		snprintf(buf, n, "cutover %s %s r%" PRId64 " (%ld session%s)", cutover_op_id(e->op),
			 e->tool, e->revision, e->count, e->count == 1 ? "" : "s");
		len = strlen(buf);
		if (e->by.user[0])	/* who asked: from the kernel, never from a client's word */
			snprintf(buf + len, n - len, " by %s", e->by.user);
		return;
	}
	snprintf(buf, n, "cutover_ack %s %s r%" PRId64 " %s in %s%s%s", cutover_op_id(e->op),
		 e->tool, e->revision, cutover_result_id(e->result), draw_fmt_us(us, e->waited_us),
		 e->reason[0] && e->result != CUTOVER_APPLIED ? ": " : "",
		 e->result != CUTOVER_APPLIED ? e->reason : "");
}

const char *
draw_fmt_event(char *buf, size_t n, const struct supervisor_event *e)
{
	const char *kind = event_kind_id(e->kind);

	switch (e->kind) {
	case SUPERVISOR_EVENT_STATE:
		snprintf(buf, n, "%s %s", kind, session_state_id(e->state));
		break;
	case SUPERVISOR_EVENT_END:
		snprintf(buf, n, "%s %s%s%s", kind, session_end_id(e->end),
			 e->check[0] ? " check " : "", e->check);
		break;
	case SUPERVISOR_EVENT_LEASE_FAILED:
		snprintf(buf, n, "%s %s", kind, e->reason);
		break;
	case SUPERVISOR_EVENT_ADMISSION_REFUSED:
		snprintf(buf, n, "%s %s: %s", kind, e->reason, e->check);
		break;
	case SUPERVISOR_EVENT_CUTOVER:
	case SUPERVISOR_EVENT_CUTOVER_ACK:
		fmt_event_cutover(buf, n, e);
		break;
	case SUPERVISOR_EVENT_REAPER:
	case SUPERVISOR_EVENT_SWEEP:
		snprintf(buf, n, "%s removed %ld%s%s", kind, e->count, e->reason[0] ? ": " : "",
			 e->reason);
		break;
	case SUPERVISOR_EVENT_AUDIT_REFUSED:
		snprintf(buf, n, "%s %ld", kind, e->count);
		break;
	default:
		snprintf(buf, n, "%s", kind);
		break;
	}
	return buf;
}

/* Text. */

/*
 * One UTF-8 sequence at s: its code point and length, or length 1 and
 * U+FFFD for a bad one (overlong, surrogate, cut short).
 */
static size_t
utf8_decode(const unsigned char *s, wchar_t *out)
{
	static const unsigned min[] = { 0, 0x80, 0x800, 0x10000 };
	unsigned c = s[0], len, i;

	len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
	      (c & 0xf8) == 0xf0 ? 4 : 0;
	*out = 0xfffd;
	if (len == 0)
		return 1;
	c &= len == 1 ? 0x7f : 0x3f >> (len - 1);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[len - 1] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 1;
	*out = (wchar_t)c;
	return len;
}

/* The next character to draw from *s and its width; '?' for what cannot be. */
static int
text_next(const char **s, wchar_t *wc)
{
	int cw;

	*s += utf8_decode((const unsigned char *)*s, wc);
	cw = *wc < 0x20 || (*wc >= 0x7f && *wc < 0xa0) || *wc == 0xfffd ? -1 : wcwidth(*wc);
	if (cw < 1) {
		*wc = L'?';
		cw = 1;
	}
	return cw;
}

/*
 * s as at most limit columns into wbuf; the columns used. A string that
 * does not fit ends in the truncation mark.
 */
static int
text_fit(const char *s, int limit, wchar_t *wbuf, int *cols)
{
	int widths[DRAW_COLS_MAX + 1], n = 0, used = 0, cw;
	bool cut = false;
	wchar_t wc;

	while (*s && !cut) {
		cw = text_next(&s, &wc);
		cut = used + cw > limit || n == DRAW_COLS_MAX;
		if (cut)
			break;
		wbuf[n] = wc;
		widths[n++] = cw;
		used += cw;
	}
	if (cut && limit > 0) {
		while (n > 0 && used + 1 > limit)
			used -= widths[--n];
		wbuf[n++] = TRUNC_MARK;
		used++;
	}
	wbuf[n] = L'\0';
	*cols = used;
	return n;
}

/* Columns left from x in w, capped by width (< 0: no cap); 0 when outside. */
static int
text_room(WINDOW *w, int y, int x, int width)
{
	int room = getmaxx(w) - x;

	if (y < 0 || y >= getmaxy(w) || x < 0 || room <= 0 || width == 0)
		return 0;
	if (width > 0 && width < room)
		room = width;
	return room < DRAW_COLS_MAX ? room : DRAW_COLS_MAX;
}

static void
text_put(WINDOW *w, int y, int x, attr_t a, const wchar_t *wbuf, int n)
{
	wattrset(w, a);
	mvwaddnwstr(w, y, x, wbuf, n);
	wattrset(w, A_NORMAL);
}

int
draw_text(WINDOW *w, int y, int x, int width, attr_t a, const char *s)
{
	wchar_t wbuf[DRAW_COLS_MAX + 2];
	int room = text_room(w, y, x, width), cols, n;

	if (room == 0 || !s)
		return 0;
	n = text_fit(s, room, wbuf, &cols);
	if (n > 0)
		text_put(w, y, x, a, wbuf, n);
	return cols;
}

int
draw_right(WINDOW *w, int y, int x, int width, attr_t a, const char *s)
{
	wchar_t wbuf[DRAW_COLS_MAX + 2];
	int cols;

	if (width <= 0 || !s)
		return 0;
	if (width > DRAW_COLS_MAX)
		width = DRAW_COLS_MAX;
	text_fit(s, width, wbuf, &cols);
	/* Through draw_text again so the window's edge still clips it. */
	return draw_text(w, y, x + width - cols, cols, a, s);
}

int
draw_number(WINDOW *w, int y, int x, int width, attr_t a, int64_t v)
{
	char buf[DRAW_FMT_MAX];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	return draw_right(w, y, x, width, a, buf);
}

void
draw_fill(WINDOW *w, int y, int x, int width, attr_t a)
{
	int room = text_room(w, y, x, width), i;

	wattrset(w, a);
	for (i = 0; i < room; i++)
		mvwaddch(w, y, x + i, ' ');
	wattrset(w, A_NORMAL);
}

void
draw_hline(WINDOW *w, int y, int x, int width, attr_t a, const struct ui_model *m)
{
	const char *g = draw_glyph(m, GLYPH_HLINE);
	int room = text_room(w, y, x, width), i;

	for (i = 0; i < room; i++)
		draw_text(w, y, x + i, 1, a, g);
}

/* Titles. */

int
draw_title(WINDOW *w, int y, int x, int width, const struct ui_model *m, const char *title)
{
	attr_t a = color_attr(UI_COLOR_TITLE);
	int room = text_room(w, y, x, width), end = x + room, at = x;

	if (room == 0)
		return x;
	draw_fill(w, y, x, 1, a);
	draw_hline(w, y, x + 1, room - 1, a, m);
	at += 2;
	if (at + 1 < end) {
		at += draw_text(w, y, at, 1, a, " ");
		at += draw_text(w, y, at, end - at, a, title);
		at += draw_text(w, y, at, end - at, a, " ");
	}
	return at;
}

int
draw_view_title(WINDOW *w, const struct ui_model *m, const char *title)
{
	int end = getmaxx(w), x = draw_title(w, 0, 0, end, m, title);

	if (m->stale)
		x = draw_title_tag(w, 0, x, end, m, UI_COLOR_STALE, "STALE");
	return x;
}

int
draw_title_tag(WINDOW *w, int y, int x, int end, const struct ui_model *m, enum ui_color c,
	       const char *text)
{
	attr_t a = color_attr(UI_COLOR_TITLE);

	/* A tag that would not fit whole is left out, not cut. */
	if (x + 3 + (int)strlen(text) > end)
		return x;
	x += draw_text(w, y, x, 1, a, draw_glyph(m, GLYPH_HLINE));
	x += draw_text(w, y, x, 1, a, " ");
	x += draw_text(w, y, x, end - x, color_attr(c), text);
	x += draw_text(w, y, x, 1, a, " ");
	return x;
}

int
draw_sort_key(const struct view_state *vs, int n)
{
	return vs->sort >= 0 && vs->sort < n ? vs->sort : 0;
}

int
draw_sort_tag(WINDOW *w, int x, int end, const struct ui_model *m,
	      const struct view_state *vs, const struct sort_spec *sorts, int n)
{
	const struct sort_spec *s = &sorts[draw_sort_key(vs, n)];
	char buf[64];

	snprintf(buf, sizeof buf, "sort: %s %s", s->name,
		 draw_glyph(m, s->desc != vs->sort_reverse ? GLYPH_DOWN : GLYPH_UP));
	return draw_title_tag(w, 0, x, end, m, UI_COLOR_TITLE, buf);
}

int
draw_filter_tag(WINDOW *w, int x, int end, const struct ui_model *m,
		const struct view_state *vs)
{
	char buf[UI_FILTER_MAX + 16];

	if (!vs->filter[0])
		return x;
	snprintf(buf, sizeof buf, "filter: %s", vs->filter);
	return draw_title_tag(w, 0, x, end, m, UI_COLOR_PENDING, buf);
}

/* Sparkline. */

/* Upper bounds of the bars, in microseconds: half a decade each. */
static const int32_t spark_steps[] = { 32, 100, 316, 1000, 3162, 10000, 31623 };
#define SPARK_LEVELS ((int)(sizeof spark_steps / sizeof spark_steps[0]) + 1)

static int
spark_level(int32_t us)
{
	int i;

	for (i = 0; i < SPARK_LEVELS - 1; i++)
		if (us <= spark_steps[i])
			return i;
	return SPARK_LEVELS - 1;
}

static const char *
spark_glyph(int level, bool ascii)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char *const ascii_bars[] = { "_", ".", "-", "=", "#" };

	if (ascii)
		return ascii_bars[level * 5 / SPARK_LEVELS];
	return bars[level];
}

int
draw_sparkline(WINDOW *w, int y, int x, int width, attr_t a, const struct lease_view *l,
	       const struct ui_model *m)
{
	size_t n = l->n_acks < SNAP_ACKS_MAX ? l->n_acks : SNAP_ACKS_MAX, i, first;
	int room = text_room(w, y, x, width), pad;

	if (room == 0)
		return 0;
	first = n > (size_t)room ? n - (size_t)room : 0;
	pad = room - (int)(n - first);
	for (i = first; i < n; i++)
		draw_text(w, y, x + pad + (int)(i - first), 1, a,
			  spark_glyph(spark_level(l->ack_us[i]), m && m->ascii));
	return room;
}

/* Colours of states, ends and tools. */

const char *
draw_fmt_grant(char buf[DRAW_FMT_MAX], const struct tool_view *t)
{
	char calls[32] = "", time[DRAW_FMT_MAX] = "";

	buf[0] = '\0';
	if (!t || !t->granted)
		return buf;
	if (t->grant_calls >= 0)
		snprintf(calls, sizeof calls, "%" PRId64 " call%s", t->grant_calls,
			 t->grant_calls == 1 ? "" : "s");
	if (t->grant_ms >= 0)
		draw_fmt_duration(time, t->grant_ms + 999);	/* a second left until none is */
	/* At most "grant: 1000000 calls, 3d23 left": the cut never happens. */
	snprintf(buf, DRAW_FMT_MAX, "grant: %.16s%s%.12s left", calls,
		 calls[0] && time[0] ? ", " : "", time);
	return buf;
}

enum ui_color
draw_tool_status(char buf[DRAW_FMT_MAX], const struct session_row *r, const struct tool_view *t)
{
	if (!t->approved) {
		snprintf(buf, DRAW_FMT_MAX, "not approved");
		return UI_COLOR_DIM;
	}
	if (t->allowed && t->held) {	/* allowed, but each call waits for an operator */
		snprintf(buf, DRAW_FMT_MAX, "held");
		return UI_COLOR_PENDING;
	}
	if (t->allowed) {
		snprintf(buf, DRAW_FMT_MAX, "allowed");
		return UI_COLOR_ALLOWED;
	}
	snprintf(buf, DRAW_FMT_MAX, "REVOKED r%" PRId64, r->revision);
	return UI_COLOR_REVOKED;
}

enum ui_color
draw_state_color(enum session_state s)
{
	if (s == SESSION_STATE_RUNNING)
		return UI_COLOR_STATE_RUNNING;
	if (s == SESSION_STATE_ENDED)
		return UI_COLOR_STATE_ENDED;
	return UI_COLOR_STATE_STARTING;
}

enum ui_color
draw_end_color(enum session_end e)
{
	return e == SESSION_END_NONE || session_end_normal(e) ? UI_COLOR_DEFAULT : UI_COLOR_ALERT;
}

/* Columns. */

static int
cols_total(const struct draw_col *c, size_t n)
{
	int total = 0, shown = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (c[i].x < 0)
			continue;
		total += c[i].width ? c[i].width : c[i].min;
		shown++;
	}
	return total + (shown > 1 ? shown - 1 : 0);
}

/* The shown column dropped first, or n when none can be. */
static size_t
cols_next_drop(const struct draw_col *c, size_t n)
{
	size_t i, best = n;

	for (i = 0; i < n; i++)
		if (c[i].x >= 0 && c[i].drop > 0 && (best == n || c[i].drop < c[best].drop))
			best = i;
	return best;
}

void
draw_cols_fit(struct draw_col *c, size_t n, int x0, int width)
{
	size_t i, drop;
	int x = x0, left;

	for (i = 0; i < n; i++)
		c[i].x = c[i].width < 0 ? -1 : 0;
	while (cols_total(c, n) > width && (drop = cols_next_drop(c, n)) < n)
		c[drop].x = -1;
	left = width - cols_total(c, n);
	for (i = 0; i < n; i++) {
		if (c[i].x < 0)
			continue;
		c[i].w = c[i].width ? c[i].width : c[i].min + (left > 0 ? left : 0);
		c[i].x = x;
		x += c[i].w + 1;
	}
}

int
draw_col_text(WINDOW *w, int y, const struct draw_col *c, attr_t a, const char *s)
{
	if (c->x < 0)
		return 0;
	if (c->right)
		return draw_right(w, y, c->x, c->w, a, s);
	return draw_text(w, y, c->x, c->w, a, s);
}

void
draw_cols_header(WINDOW *w, int y, const struct draw_col *c, size_t n)
{
	attr_t a = color_attr(UI_COLOR_HEADER);
	size_t i;

	draw_fill(w, y, 0, -1, a);
	for (i = 0; i < n; i++)
		draw_col_text(w, y, &c[i], a, c[i].header);
}

int
draw_widest(int have, const char *s, int cap)
{
	int len = (int)strlen(s);

	return len > have ? (len < cap ? len : cap) : have;
}

/* Checks. */

#define CHECK_ID_COL_MAX 28

static void
check_cells(WINDOW *w, int y, int x, int idw, const char *cells[4], const attr_t a[4])
{
	int vx = x + 7 + idw + 1, half = (getmaxx(w) - vx) / 2;

	draw_text(w, y, x, 6, a[0], cells[0]);
	draw_text(w, y, x + 7, idw, a[1], cells[1]);
	draw_text(w, y, vx, half - 1, a[2], cells[2]);
	draw_text(w, y, vx + half, -1, a[3], cells[3]);
}

void
draw_check_row(WINDOW *w, int y, int x, int idw, const struct check_item *it,
	       const char *fail_word, bool sel)
{
	attr_t hd = color_attr_sel(UI_COLOR_HEADER, sel);
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);
	attr_t dim = color_attr_sel(UI_COLOR_DIM, sel), fail = color_attr_sel(UI_COLOR_FAIL, sel);
	const char *cells[4] = { "", "CHECK", "EXPECTED", "OBSERVED" };
	attr_t a[4] = { hd, hd, hd, hd };

	if (it) {
		cells[0] = !it->run ? "--" : it->pass ? "PASS" : fail_word;
		cells[1] = it->id;
		cells[2] = it->expected;
		cells[3] = it->run ? it->observed : "not run";
		a[0] = !it->run ? dim : it->pass ? color_attr_sel(UI_COLOR_PASS, sel) : fail;
		a[1] = a[2] = a[3] = !it->run ? dim : it->pass ? plain : fail;
	}
	check_cells(w, y, x, idw, cells, a);
}

int
draw_check_width(const struct check_item *items, size_t n, int have)
{
	size_t i;

	for (i = 0; i < n && i < SNAP_CHECKS_MAX; i++)
		have = draw_widest(have, items[i].id, CHECK_ID_COL_MAX);
	return have;
}

void
draw_empty(WINDOW *w, int y, int x, int width, const char *text)
{
	draw_text(w, y, x, width, color_attr(UI_COLOR_DIM), text);
}
