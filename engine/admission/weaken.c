#include "weaken.h"
#include "mutant.h"
#include "profile.h"
#include "seccomp_profile.h"

#include <string.h>

static const struct {
	const char *name, *key, *value;
} weakenings[] = {
#define WEAKEN_ROW(n, k, v, check) { #n, k, v },
	WEAKENINGS(WEAKEN_ROW)
#undef WEAKEN_ROW
};

static json_t *
weakened_value(const char *value)
{
	if (value == WEAK_RUNSC_SECCOMP)
		return seccomp_security_opt("runsc");
	return json_loads(value, JSON_DECODE_ANY, NULL);
}

void
weaken_create_body(json_t *body)
{
	json_t *hc = json_object_get(body, "HostConfig");
	size_t i;

	if (mutant("upstream_only") &&
	    !json_object_get(json_object_get(body, "Labels"), LABEL_UPSTREAM))
		return;

	for (i = 0; hc && i < sizeof weakenings / sizeof weakenings[0]; i++) {
		const char *key = weakenings[i].key;
		json_t *in = strncmp(key, "HostConfig.", 11) == 0 ? hc : body;

		if (in == hc)
			key += 11;
		if (mutant(weakenings[i].name))
			json_object_set_new(in, key, weakened_value(weakenings[i].value));
	}
}

bool
weaken_admission_bypassed(void)
{
	return mutant("admission_bypass");
}

bool
weaken_keep_stopped(void)
{
	return mutant("keep_stopped");
}

bool
weaken_pooled_run(void)
{
	return mutant("pooled_run");
}

bool
weaken_process_unchecked(void)
{
	return mutant("process_unchecked");
}
