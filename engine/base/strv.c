#include <stdlib.h>
#include <string.h>

#include "strv.h"

void
strv_free(struct strv *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

int
strv_push(struct strv *s, const char *str)
{
	char **v = realloc(s->v, (s->n + 1) * sizeof *v);
	char *dup;

	if (!v)
		return -1;
	s->v = v;
	dup = strdup(str);
	if (!dup)
		return -1;
	s->v[s->n++] = dup;
	s->set = true;
	return 0;
}
