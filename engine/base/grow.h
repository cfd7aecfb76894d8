#ifndef AIRLOCK_GROW_H
#define AIRLOCK_GROW_H

/*
 * A growing array: room for need items of size bytes in the array whose
 * address is at arrayp (a T **, as &l->v) and which holds *cap. The room
 * starts at first, doubles until need fits and never passes max; the new
 * items are zeroed. 0 with the array and *cap updated; -1 when need is
 * past max or there is no memory, the array and *cap as they were.
 */

#include <stddef.h>

int grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first, size_t max);

#endif
