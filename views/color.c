#include "color.h"

#include <string.h>

struct color_spec {
	const char *name;
	short fg, bg;
	attr_t attr, mono;
};

static const struct color_spec color_specs[UI_COLOR_COUNT] = {
#define UI_COLOR_SPEC(e, id, fg, bg, attr, mono) \
	[UI_COLOR_##e] = { id, fg, bg, attr, mono },
	UI_COLORS(UI_COLOR_SPEC)
#undef UI_COLOR_SPEC
};

/*
 * What each colour draws with. Written once by color_init() before the
 * first frame and only read after that; until then the monochrome
 * attributes, so a view drawn without color_init (a test) still tells
 * the meanings apart.
 */
static attr_t color_attrs[UI_COLOR_COUNT] = {
#define UI_COLOR_MONO(e, id, fg, bg, attr, mono) [UI_COLOR_##e] = (mono),
	UI_COLORS(UI_COLOR_MONO)
#undef UI_COLOR_MONO
};

static void
color_init_mono(void)
{
	int i;

	for (i = 0; i < UI_COLOR_COUNT; i++)
		color_attrs[i] = color_specs[i].mono;
}

/*
 * Without default-colour support, -1 cannot be asked for: fall back to the
 * classic white on black, which is what such terminals show anyway.
 */
static void
color_init_pairs(bool defaults)
{
	const struct color_spec *s;
	short fg, bg;
	int i;

	for (i = 0; i < UI_COLOR_COUNT; i++) {
		s = &color_specs[i];
		fg = s->fg < 0 && !defaults ? COLOR_WHITE : s->fg;
		bg = s->bg < 0 && !defaults ? COLOR_BLACK : s->bg;
		if (i + 1 >= COLOR_PAIRS || init_pair((short)(i + 1), fg, bg) == ERR) {
			color_attrs[i] = s->mono;
			continue;
		}
		color_attrs[i] = COLOR_PAIR(i + 1) | s->attr;
	}
}

void
color_init(bool use_color)
{
	if (!use_color || !has_colors() || start_color() == ERR) {
		color_init_mono();
		return;
	}
	color_init_pairs(use_default_colors() == OK);
}

attr_t
color_attr(enum ui_color c)
{
	return (unsigned)c < UI_COLOR_COUNT ? color_attrs[c] : A_NORMAL;
}

/*
 * The cursor's pair replaces c's pair (two pairs ORed together would be a
 * third, unrelated one); bold, dim or underline of c survive.
 */
attr_t
color_attr_sel(enum ui_color c, bool selected)
{
	attr_t a = color_attr(c);

	if (!selected)
		return a;
	return (a & ~A_COLOR) | color_attr(UI_COLOR_CURSOR);
}

const char *
color_name(enum ui_color c)
{
	return (unsigned)c < UI_COLOR_COUNT ? color_specs[c].name : "unknown";
}

enum ui_color
color_by_name(const char *name)
{
	int i;

	for (i = 0; i < UI_COLOR_COUNT; i++)
		if (strcmp(color_specs[i].name, name) == 0)
			return (enum ui_color)i;
	return UI_COLOR_COUNT;
}
