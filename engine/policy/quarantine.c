#include "quarantine.h"

const char *
quarantine_pause_word(enum quarantine_pause p)
{
	static const char *const words[QUARANTINE_PAUSE_COUNT] = {
		"", "waiting", "pausing", "paused", "pause failed",
	};

	return (unsigned)p < QUARANTINE_PAUSE_COUNT ? words[p] : "";
}

bool
quarantine_called_within(int64_t last_ms, int64_t now_ms, int64_t within_ms)
{
	if (last_ms <= 0 || within_ms <= 0)
		return false;
	/* A time ahead of now (another clock's) counts as now, never as never. */
	return now_ms - last_ms <= within_ms;
}
