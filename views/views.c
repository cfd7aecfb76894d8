#include "view.h"

#include <string.h>

const struct view_name view_names[VIEW_COUNT] = {
#define VIEW_NAME(e, name, title) [VIEW_##e] = { #name, title },
	VIEW_INFO(VIEW_NAME)
#undef VIEW_NAME
};

const struct view_ops *const views[VIEW_COUNT] = {
#define VIEW_REGISTER(e, name, title) [VIEW_##e] = &name##_view,
	VIEW_INFO(VIEW_REGISTER)
#undef VIEW_REGISTER
};

void
view_clamp(struct view_state *vs, size_t rows, size_t height)
{
	if (rows == 0) {
		vs->selected = vs->top = 0;
		return;
	}
	if (height == 0)
		height = 1;
	if (vs->selected >= rows)
		vs->selected = rows - 1;
	if (vs->top + height > rows)
		vs->top = rows > height ? rows - height : 0;
	if (vs->selected < vs->top)
		vs->top = vs->selected;
	else if (vs->selected >= vs->top + height)
		vs->top = vs->selected - height + 1;
}

bool
view_follow(struct view_state *vs, size_t n)
{
	bool follow = vs->rows_seen == 0 || vs->selected + 1 >= vs->rows_seen;

	if (follow && n > 0)
		vs->selected = n - 1;
	vs->rows_seen = n;
	return follow;
}

void
view_keep(struct view_state *vs, const void *rows, size_t n,
	  const char *(*key)(const void *rows, size_t i))
{
	size_t i;

	if (vs->kept_key[0] && vs->selected == vs->kept_at)
		for (i = 0; i < n; i++)
			if (strcmp(key(rows, i), vs->kept_key) == 0) {
				vs->selected = i;
				break;
			}
	if (n == 0) {
		vs->kept_key[0] = '\0';
		return;
	}
	if (vs->selected >= n)
		vs->selected = n - 1;
	snprintf(vs->kept_key, sizeof vs->kept_key, "%s", key(rows, vs->selected));
	vs->kept_at = vs->selected;
}

bool
view_marked(const struct ui_model *m, const char *id)
{
	size_t i;

	for (i = 0; m->marks && i < m->n_marks; i++)
		if (strncmp(m->marks[i], id, SNAP_ID_MAX) == 0)
			return true;
	return false;
}

bool
view_row_lost(const struct ui_model *m, const struct session_row *r)
{
	return m->engine_fresh && r->engine < m->n_engines && !m->engine_fresh[r->engine] &&
	       r->state != SESSION_STATE_ENDED;
}

const struct session_row *
view_find_session(const struct ui_model *m, const char *id)
{
	size_t i;

	if (!m->snap || !id[0])
		return NULL;
	for (i = 0; i < m->snap->n; i++)
		if (strcmp(m->snap->rows[i].id, id) == 0)
			return &m->snap->rows[i];
	return NULL;
}

bool
view_match(const char *filter, const char *s)
{
	return !filter[0] || (s && strcasestr(s, filter));
}
