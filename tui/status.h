#ifndef AIRLOCK_STATUS_H
#define AIRLOCK_STATUS_H

/*
 * What the status line says: the answer to the operator's last key (a
 * flash, gone after a while) over the alerts (sticky until dismissed,
 * oldest first). Only text; display.c draws it. No curses.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATUS_TEXT_MAX		192
#define STATUS_ALERTS_MAX	32	/* alerts waiting to be dismissed */
#define STATUS_FLASH_MS		5000	/* informational messages expire; alerts stick */

struct status {
	char alerts[STATUS_ALERTS_MAX][STATUS_TEXT_MAX];	/* oldest first */
	size_t n_alerts;
	char flash[STATUS_TEXT_MAX];
	bool flash_error;
	int64_t flash_until;	/* monotonic ms */
};

void status_flash(struct status *s, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Past STATUS_ALERTS_MAX the oldest goes. */
void status_alert(struct status *s, const char *text);

/* The oldest alert goes. */
void status_dismiss(struct status *s);
/* Every alert goes. */
void status_dismiss_all(struct status *s);

/* Is the flash still to be shown? */
bool status_flashing(const struct status *s);

#endif
