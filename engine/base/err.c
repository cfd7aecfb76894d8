#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
al_fail(struct al_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int
al_wrap(struct al_err *err, const char *fmt, ...)
{
	char prefix[AL_ERR_MAX], old[AL_ERR_MAX];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	/* Truncation is fine: the front of the message says the most. */
	if (snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old) < 0)
		err->msg[0] = '\0';
	return -1;
}
