#include "policy.h"

#include <stdio.h>
#include <string.h>

void
class_list_default(struct class_list *c)
{
	static const char *names[] = { "public", "pii", "confidential", "restricted" };
	int i;

	memset(c, 0, sizeof *c);
	for (i = 0; i < 4; i++)
		snprintf(c->names[i], CLASS_NAME_MAX, "%s", names[i]);
	c->n = 4;
}

int
class_rank(const struct class_list *c, const char *name)
{
	int i;

	for (i = 0; name && i < c->n; i++)
		if (strcmp(c->names[i], name) == 0)
			return i;
	return -1;
}

const char *
class_name(const struct class_list *c, int rank)
{
	return rank >= 0 && rank < c->n ? c->names[rank] : "unknown";
}

static const struct {
	const char *id;
	bool allowed, fatal;
} rules[] = {
#define POLICY_ROW(e, id, allowed, fatal) { id, allowed, fatal },
	POLICY_RULES(POLICY_ROW)
#undef POLICY_ROW
};

const char *
policy_rule_id(enum policy_rule r)
{
	return r < RULE_COUNT ? rules[r].id : "unknown";
}

bool
policy_rule_allowed(enum policy_rule r)
{
	return r < RULE_COUNT && rules[r].allowed;
}

bool
policy_rule_fatal(enum policy_rule r)
{
	return r < RULE_COUNT && rules[r].fatal;
}

enum policy_rule
policy_check_sink(const struct catalog_tool *t, int class_at_entry, int class_now)
{
	if (class_at_entry > t->sink_ceiling || class_now > t->sink_ceiling)
		return RULE_SINK_CEILING;
	return RULE_ALLOWED;
}

enum policy_rule
policy_check_response(const struct catalog_tool *t, size_t len, size_t max)
{
	if (t->data_class > t->response_ceiling)
		return RULE_EGRESS_DENIED;
	if (len > max)
		return RULE_RESPONSE_TOO_LARGE;
	return RULE_ALLOWED;
}

int
policy_class_after(int session_class, const struct catalog_tool *t)
{
	return t->data_class > session_class ? t->data_class : session_class;
}
