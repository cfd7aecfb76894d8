#include "audit.h"

#include <stddef.h>
#include <string.h>

/* The vocabulary's tables (audit.h) as arrays, indexed by their enums. */

static const char *const type_ids[] = {
#define TYPE_ID(e, id) id,
	AUDIT_TYPES(TYPE_ID)
#undef TYPE_ID
};

static const struct {
	const char *id;
	enum audit_type type;
	enum audit_tone tone;
} decisions[] = {
#define DECISION_ROW(e, id, type, tone) { id, AUDIT_T_##type, AUDIT_TONE_##tone },
	AUDIT_DECISIONS(DECISION_ROW)
#undef DECISION_ROW
};

const char *
audit_type_id(enum audit_type t)
{
	return t < AUDIT_T_COUNT ? type_ids[t] : "unknown";
}

const char *
audit_decision_id(enum audit_decision d)
{
	return d < AUDIT_D_COUNT ? decisions[d].id : "unknown";
}

enum audit_type
audit_decision_type(enum audit_decision d)
{
	return d < AUDIT_D_COUNT ? decisions[d].type : AUDIT_T_COUNT;
}

enum audit_tone
audit_decision_tone(enum audit_decision d)
{
	return d < AUDIT_D_COUNT ? decisions[d].tone : AUDIT_TONE_PLAIN;
}

enum audit_decision
audit_decision_lookup(const char *type, const char *decision)
{
	size_t i;

	for (i = 0; type && decision && i < AUDIT_D_COUNT; i++)
		if (strcmp(decisions[i].id, decision) == 0 &&
		    strcmp(type_ids[decisions[i].type], type) == 0)
			return (enum audit_decision)i;
	return AUDIT_D_COUNT;
}
