#ifndef AIRLOCK_VIEWS_PENDING_H
#define AIRLOCK_VIEWS_PENDING_H

/*
 * The pending view's formatters (views/pending.c), pure: a held call's
 * fields as its columns show them. Names and numbers the engine listed,
 * never a payload (a held call has none to show).
 */

#include <stdbool.h>
#include <stdint.h>

#include "snapshot.h"
#include "util.h"

/* "internal→public": the session's data class, then the tool's sink ceiling ("?" for none). */
const char *pending_fmt_flow(char buf[DRAW_FMT_MAX], const struct hold_view *h, bool ascii);
/* The request hash's first 8 hex digits ("-" for none). */
const char *pending_fmt_hash(char buf[DRAW_FMT_MAX], const struct hold_view *h);
/*
 * How long the call has waited at now_ms (wall clock): since it began, or
 * what the engine counted when that is more (a clock behind the engine's).
 */
int64_t pending_age_ms(const struct hold_view *h, int64_t now_ms);

#endif
