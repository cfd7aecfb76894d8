/* A growing array (grow.h). */

#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first, size_t max)
{
	size_t want = *cap ? *cap : (first ? first : 1);
	void *v;

	if (need <= *cap)
		return 0;
	if (need > max || max > SIZE_MAX / size)
		return -1;
	while (want < need)
		want = want > max / 2 ? max : want * 2;
	if (want > max)
		want = max;
	memcpy(&v, arrayp, sizeof v);
	if (!(v = realloc(v, want * size)))
		return -1;
	memset((char *)v + *cap * size, 0, (want - *cap) * size);
	memcpy(arrayp, &v, sizeof v);
	*cap = want;
	return 0;
}
