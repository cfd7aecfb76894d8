/* The frame every list view shares (list.h): its items, title, header, empty text and rows. */

#include "list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_COLS_MAX	16

void
list_view_list(const struct list_view *lv, const struct ui_model *m,
	       const struct view_state *vs, struct view_list *l)
{
	size_t i, n = lv->items(m).n;

	memset(l, 0, sizeof *l);
	if (n == 0)
		return;
	l->rows = calloc(n, sizeof *l->rows);
	l->failed = !l->rows;
	for (i = 0; l->rows && i < n; i++)
		if (lv->match(m, i, vs->filter))
			l->rows[l->n++] = i;
}

size_t
list_view_rows(const struct list_view *lv, const struct ui_model *m, const struct view_state *vs)
{
	struct view_list l;

	list_view_list(lv, m, vs, &l);
	free(l.rows);
	return l.n;
}

bool
list_view_item(const struct list_view *lv, const struct ui_model *m,
	       const struct view_state *vs, size_t i, size_t *item)
{
	struct view_list l;
	bool found;

	list_view_list(lv, m, vs, &l);
	found = i < l.n;
	if (found)
		*item = l.rows[i];
	free(l.rows);
	return found;
}

/* The count, following or not, a failing source, the view's own tags, the filter. */
static void
list_title(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
	   const struct list_view *lv, const struct view_list *l, bool follow)
{
	const struct list_words *wd = &lv->words;
	struct list_items items = lv->items(m);
	int end = getmaxx(w), x = draw_view_title(w, m, lv->title);
	char buf[UI_FILTER_MAX + 48];

	if (vs->filter[0])
		snprintf(buf, sizeof buf, "%zu of %zu%s", l->n, items.n, wd->of);
	else
		snprintf(buf, sizeof buf, "%zu %s", l->n, l->n == 1 ? wd->one : wd->many);
	x = draw_title_tag(w, 0, x, end, m, lv->count_color ? lv->count_color(l) : UI_COLOR_TITLE,
			   buf);
	if (lv->follows && l->n && !items.error)
		x = draw_title_tag(w, 0, x, end, m, follow ? UI_COLOR_TITLE : UI_COLOR_PENDING,
				   follow ? "following" : "scrolled back");
	if (items.error && lv->error_tag)
		x = draw_title_tag(w, 0, x, end, m, UI_COLOR_ALERT, lv->error_tag);
	if (lv->tags)
		x = lv->tags(w, x, end, m, l);
	draw_filter_tag(w, x, end, m, vs);
}

/* Why there is no row: no memory, an unreadable source, the filter, or nothing yet. */
static void
list_empty(WINDOW *w, const struct ui_model *m, const struct view_state *vs,
	   const struct list_view *lv, const struct view_list *l)
{
	const struct list_words *wd = &lv->words;
	struct list_items items = lv->items(m);
	char buf[UI_FILTER_MAX + 160];

	if (l->failed)
		snprintf(buf, sizeof buf, "out of memory: %s cannot be listed", wd->things);
	else if (items.error && items.n == 0)
		snprintf(buf, sizeof buf, "%s: %.100s", wd->unreadable, items.error);
	else if (items.n > 0)
		snprintf(buf, sizeof buf, "no %s matches \"%s\"", wd->thing, vs->filter);
	else
		snprintf(buf, sizeof buf, "%s", wd->none);
	draw_empty(w, 2, 2, -1, buf);
}

static void
list_row(WINDOW *w, int y, const struct ui_model *m, const struct list_view *lv,
	 const struct draw_col *cols, size_t item, bool sel)
{
	attr_t plain = color_attr_sel(UI_COLOR_DEFAULT, sel);

	if (sel) {
		draw_fill(w, y, 0, -1, plain);
		draw_text(w, y, 0, 1, plain, draw_glyph(m, GLYPH_CURSOR));
	}
	lv->row(w, y, m, cols, item, sel);
}

void
list_view_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs,
	       const struct list_view *lv)
{
	struct draw_col cols[LIST_COLS_MAX];
	size_t n_cols = lv->n_cols < LIST_COLS_MAX ? lv->n_cols : LIST_COLS_MAX;
	struct view_list l;
	int h = getmaxy(w), y;
	bool follow = false;
	size_t i;

	werase(w);
	list_view_list(lv, m, vs, &l);
	if (lv->keep)
		lv->keep(m, vs, &l);
	if (lv->follows)
		follow = view_follow(vs, l.n);
	view_clamp(vs, l.n, h > 2 ? (size_t)h - 2 : 1);
	list_title(w, m, vs, lv, &l, follow);
	memcpy(cols, lv->cols, n_cols * sizeof *cols);
	if (lv->fit)
		lv->fit(cols, m, &l);
	draw_cols_fit(cols, n_cols, 2, getmaxx(w) - 2);
	if (h >= 2)
		draw_cols_header(w, 1, cols, n_cols);
	if (l.n == 0)
		list_empty(w, m, vs, lv, &l);
	for (y = 2, i = vs->top; i < l.n && y < h; y++, i++)
		list_row(w, y, m, lv, cols, l.rows[i], i == vs->selected);
	free(l.rows);
}
