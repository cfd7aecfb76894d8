#include "view_screen.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "color.h"

int
view_screen_open(void **state)
{
	static const char *const terms[] = { "xterm-256color", "xterm", "vt100", "dumb" };
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = NULL;

	(void)state;
	setlocale(LC_ALL, "C.UTF-8");
	for (size_t i = 0; i < sizeof terms / sizeof terms[0] && !scr && out && in; i++)
		scr = newterm(terms[i], out, in);
	if (!scr)
		return -1;
	set_term(scr);
	color_init(false);
	return 0;
}

int
view_screen_close(void **state)
{
	(void)state;
	endwin();
	return 0;
}

void
view_screen_line(WINDOW *w, int y, char *out, size_t cap)
{
	wchar_t wbuf[512];
	mbstate_t st;
	size_t len = 0, k;
	int i, n;

	memset(&st, 0, sizeof st);
	n = mvwinnwstr(w, y, 0, wbuf, getmaxx(w) < 511 ? getmaxx(w) : 511);
	for (i = 0; i < n && wbuf[i] && len + MB_LEN_MAX < cap; i++) {
		k = wcrtomb(out + len, wbuf[i], &st);
		len += k == (size_t)-1 ? 0 : k;
	}
	while (len > 0 && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
}

int
view_screen_find(WINDOW *w, const char *a, const char *b, const char *c)
{
	char line[2048];

	for (int y = 0; y < getmaxy(w); y++) {
		view_screen_line(w, y, line, sizeof line);
		if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
			return y;
	}
	return -1;
}

WINDOW *
view_screen_draw(enum view_id v, int lines, int cols, const struct ui_model *m,
		 struct view_state *vs)
{
	WINDOW *w;

	assert_int_equal(resizeterm(lines, cols), OK);
	w = newwin(lines, cols, 0, 0);
	assert_non_null(w);
	views[v]->draw(w, m, vs);
	return w;
}

void
view_screen_dump(WINDOW *w)
{
	char line[2048];

	for (int y = 0; y < getmaxy(w); y++) {
		view_screen_line(w, y, line, sizeof line);
		fprintf(stderr, "|%s\n", line);
	}
}
