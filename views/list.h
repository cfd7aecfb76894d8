#ifndef AIRLOCK_VIEWS_LIST_H
#define AIRLOCK_VIEWS_LIST_H

/*
 * A list view (audit, timeline, pending): one row an item of one of the
 * model's arrays, the items the filter lets through, a title line, a
 * column header, an empty text that says why there is no row, and the
 * cursor's row filled and marked. A view names its parts once in a
 * struct list_view and draws with list_view_draw; what differs (its
 * columns, its row, the tags its title adds) stays in the view's file.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* Indexes into the model's array of the items the filter lets through. */
struct view_list {
	size_t *rows;
	size_t n;
	bool failed;	/* no memory for the indexes: the view says so */
};

/* The model's items for a list: how many, and why they cannot be read (or NULL). */
struct list_items {
	size_t n;
	const char *error;
};

/* What a list view says of its items, in its title and when it has no row. */
struct list_words {
	const char *one, *many;	/* the count: "1 entry", "3 entries" */
	const char *of;		/* after "2 of 5" when filtered: "" or " waiting" */
	const char *things;	/* "out of memory: <things> cannot be listed" */
	const char *unreadable;	/* "<unreadable>: <the model's error>" */
	const char *thing;	/* "no <thing> matches \"filter\"" */
	const char *none;	/* the text of a list with no item at all */
};

struct list_view {
	const char *title;
	size_t n_cols;
	const struct draw_col *cols;	/* n_cols, the widths before fitting */
	struct list_words words;
	bool follows;		/* keeps to its newest row while the cursor is on it */
	/* The model's items, and whether one matches a filter. */
	struct list_items (*items)(const struct ui_model *m);
	bool (*match)(const struct ui_model *m, size_t i, const char *filter);
	/* A failing list's title tag; NULL: only the empty text says it. */
	const char *error_tag;
	/* Optional: the cursor on the item it was on (rows come and go). */
	void (*keep)(const struct ui_model *m, struct view_state *vs, const struct view_list *l);
	/* Optional: widths from the visible items (cols is a copy of .cols). */
	void (*fit)(struct draw_col *cols, const struct ui_model *m, const struct view_list *l);
	/* Optional: the view's own title tags, from x; returns the next x. */
	int (*tags)(WINDOW *w, int x, int end, const struct ui_model *m, const struct view_list *l);
	/* The count tag's colour; NULL: the title's. */
	enum ui_color (*count_color)(const struct view_list *l);
	/* Item i (an index into the model's array) on row y; the cursor is drawn. */
	void (*row)(WINDOW *w, int y, const struct ui_model *m, const struct draw_col *cols,
		    size_t i, bool sel);
};

/* The visible items; free l->rows. */
void list_view_list(const struct list_view *lv, const struct ui_model *m,
		    const struct view_state *vs, struct view_list *l);
void list_view_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs,
		    const struct list_view *lv);
size_t list_view_rows(const struct list_view *lv, const struct ui_model *m,
		      const struct view_state *vs);
/* The model's index of visible row i, or false when there is none. */
bool list_view_item(const struct list_view *lv, const struct ui_model *m,
		    const struct view_state *vs, size_t i, size_t *item);

/*
 * The two hooks VIEW_OPS_HEAD(E, v) names, v_draw and v_rows, for a view
 * that is the list lv and nothing more.
 */
#define LIST_VIEW_HOOKS(v, lv) \
	static void \
	v##_draw(WINDOW *w, const struct ui_model *m, struct view_state *vs) \
	{ \
		list_view_draw(w, m, vs, &(lv)); \
	} \
	static size_t \
	v##_rows(const struct ui_model *m, const struct view_state *vs) \
	{ \
		return list_view_rows(&(lv), m, vs); \
	}

#endif
