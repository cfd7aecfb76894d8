#ifndef AIRLOCK_POLICY_H
#define AIRLOCK_POLICY_H

/*
 * Classification and the gateway's decision rules (docs/protocol.md, "Decision for one request"), pure
 * code. Classes are an ordered list; a class is its index (rank). The
 * session class only rises.
 */

#include <stdbool.h>
#include <stddef.h>

#include "hash.h"

#define CLASS_MAX	16
#define CLASS_NAME_MAX	32

struct class_list {
	char names[CLASS_MAX][CLASS_NAME_MAX];
	int n;
};

/* public < pii < confidential < restricted */
void class_list_default(struct class_list *c);
/* The rank of name, or -1 when it is not a class. */
int class_rank(const struct class_list *c, const char *name);
const char *class_name(const struct class_list *c, int rank);

struct catalog_tool {
	char name[64];		/* the catalog name (what audit rows say) */
	char upstream[64];	/* which upstream server */
	char remote[128];	/* the tool's name on that server */
	int data_class;		/* what its responses carry */
	int sink_ceiling;	/* the highest session class it may receive */
	int response_ceiling;	/* the highest class it may return to the agent */
	bool pinned;
	char pin[HASH_HEX_LEN + 1];	/* expected definition hash */
};

/*
 * Every rule the gateway can decide by: the identifier (what audit rows
 * and summaries say), whether the agent's call was allowed, and whether
 * the session cannot go on after it (the exchange failed). The last five
 * are gateway faults, where no call outcome exists: the line was not a
 * request, or the gateway itself (or its parser, engine/privsep) could not
 * go on.
 */
#define POLICY_RULES(_) \
	_(ALLOWED,              "allowed",              true,  false) \
	_(GATE_CLOSED,          "gate_closed",          false, false) \
	_(FROZEN,               "frozen",               false, false) \
	_(REVOKED,              "revoked",              false, false) \
	_(QUARANTINED,          "quarantined",          false, false) \
	_(HOLD_DENIED,          "hold_denied",          false, false) \
	_(HOLD_TIMEOUT,         "hold_timeout",         false, false) \
	_(UNKNOWN_TOOL,         "unknown_tool",         false, false) \
	_(SINK_CEILING,         "sink_ceiling",         false, false) \
	_(CATALOG_DRIFT,        "catalog_drift",        false, false) \
	_(EGRESS_DENIED,        "egress_denied",        false, false) \
	_(RESPONSE_TOO_LARGE,   "response_too_large",   false, false) \
	_(UPSTREAM_ERROR,       "upstream_error",       true,  false) \
	_(UPSTREAM_FAULT,       "upstream_fault",       false, true)  \
	_(UPSTREAM_TIMEOUT,     "upstream_timeout",     false, true)  \
	_(UPSTREAM_UNAVAILABLE, "upstream_unavailable", false, true)  \
	_(STOPPED,              "stopped",              false, true)  \
	_(INVALID_REQUEST,      "invalid_request",      false, true)  \
	_(PARSER_LOST,          "parser_lost",          false, true)  \
	_(NO_RANDOMNESS,        "no_randomness",        false, true)  \
	_(OUT_OF_MEMORY,        "out_of_memory",        false, true)  \
	_(AUDIT_FAILED,         "audit_failed",         false, true)

enum policy_rule {
#define POLICY_ENUM(e, id, allowed, fatal) RULE_##e,
	POLICY_RULES(POLICY_ENUM)
#undef POLICY_ENUM
	RULE_COUNT
};

const char *policy_rule_id(enum policy_rule r);
bool policy_rule_allowed(enum policy_rule r);
/* Rules after which the session cannot go on (the exchange failed). */
bool policy_rule_fatal(enum policy_rule r);

/*
 * May this tool receive data from a session whose class was class_at_entry
 * when the call arrived and is class_now at dispatch? RULE_ALLOWED or
 * RULE_SINK_CEILING. A denied sink is never contacted.
 */
enum policy_rule policy_check_sink(const struct catalog_tool *t, int class_at_entry,
				   int class_now);
/* May the response go back to the agent? RULE_ALLOWED, RULE_EGRESS_DENIED or RULE_RESPONSE_TOO_LARGE. */
enum policy_rule policy_check_response(const struct catalog_tool *t, size_t len, size_t max);
/* The session class after the agent received this tool's response. */
int policy_class_after(int session_class, const struct catalog_tool *t);

#endif
