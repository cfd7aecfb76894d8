#include "members.h"
#include "canon.h"

#include <string.h>

int
members_each(const json_t *obj, const struct members_spec *s, members_fn fn, void *ctx,
	     struct al_err *err)
{
	const char *name;
	json_t *v;
	size_t n;

	if (!json_is_object(obj) || json_object_size(obj) > s->max)
		return al_fail(err, "%s: expected an object of at most %zu %s", s->path, s->max,
			       s->noun);
	json_object_foreach((json_t *)obj, name, v) {
		n = strlen(name);
		if (s->name_max && (n == 0 || n > s->name_max))
			return al_fail(err, "%s: %s must be 1..%zu bytes", s->path, s->name_word,
				       s->name_max);
		/* names reach every screen, reply and log line: none may drive a terminal */
		if (s->name_max && canon_has_control(name, n))
			return al_fail(err, "%s: %s must hold no control character", s->path,
				       s->name_word);
		if (fn(ctx, name, v, err) < 0)
			return -1;
	}
	return 0;
}
