#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"

void
status_flash(struct status *s, bool error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->flash, sizeof s->flash, fmt, ap);
	va_end(ap);
	s->flash_error = error;
	s->flash_until = clock_mono_ms() + STATUS_FLASH_MS;
}

void
status_alert(struct status *s, const char *text)
{
	if (s->n_alerts == STATUS_ALERTS_MAX) {
		memmove(s->alerts[0], s->alerts[1], (STATUS_ALERTS_MAX - 1) * sizeof s->alerts[0]);
		s->n_alerts--;
	}
	snprintf(s->alerts[s->n_alerts++], sizeof s->alerts[0], "%s", text);
}

void
status_dismiss(struct status *s)
{
	if (s->n_alerts == 0)
		return;
	memmove(s->alerts[0], s->alerts[1], (s->n_alerts - 1) * sizeof s->alerts[0]);
	s->n_alerts--;
}

void
status_dismiss_all(struct status *s)
{
	s->n_alerts = 0;
}

bool
status_flashing(const struct status *s)
{
	return s->flash[0] && clock_mono_ms() < s->flash_until;
}
