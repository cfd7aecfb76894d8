#ifndef AIRLOCK_GATEWAY_H
#define AIRLOCK_GATEWAY_H

/*
 * The gateway of one session (docs/protocol.md, "Decision for one request"): each agent line is parsed,
 * mapped through the frozen alias table to a catalog tool, checked against
 * the session class and the tool's ceilings, audited, and only then sent
 * to the tool's upstream MCP server (started lazily). One reply line per
 * request. A denied sink is never contacted: no spawn, no tools/list, no
 * tools/call.
 *
 * Audit order for a call that reaches an upstream: its dispatch entry is
 * durable before the upstream is contacted; exactly one terminal call
 * entry follows. That terminal entry rides on the log's next commit
 * (audit_append_later: the session's next dispatch, its end, another
 * session's append or the log's timer), so a call waits for one fsync.
 * The reply goes to the agent once the terminal entry is queued — ordered
 * behind its dispatch and ahead of anything the session does next — and
 * before it is durable: the agent is inside the container, and anything it
 * does with the reply that reaches a sink is a later dispatch, which
 * cannot be durable unless this terminal entry is (docs/guarantees.md).
 * A denied call has only its terminal entry, durable before the reply.
 * OTLP spans are sent as entries are written or queued: telemetry, not
 * the record (a span of a terminal entry a crash lost may exist).
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "config.h"
#include "gate.h"
#include "otlp.h"
#include "policy.h"
#include "snapshot.h"	/* struct gateway_counters */
#include "upstream_box.h"

struct gateway;

enum gateway_status {
	GW_REPLY,		/* send *reply and go on */
	GW_INVALID,		/* the line was not a valid request: end the session */
	GW_FAULT,		/* the exchange failed (upstream, audit): end the session */
};

/*
 * A held call's wait (ctl hold): the supervisor's hook. wait is given what
 * the pending list shows of the call (its id and since_ms left for the
 * hook), from the session's worker, with the gate not busy; it returns
 * when the call is decided: GW_HOLD_APPROVED (the call re-enters the gate
 * with the hold waived), GW_HOLD_RECHECK (the gate changed under it: a
 * revoke, restore or freeze; the call is decided by the gate again),
 * GW_HOLD_DENIED or GW_HOLD_TIMEOUT (the call is denied hold_denied or
 * hold_timeout). Without a hook a held call is denied hold_denied at once.
 */
enum gateway_hold_answer {
	GW_HOLD_APPROVED,
	GW_HOLD_RECHECK,
	GW_HOLD_DENIED,
	GW_HOLD_TIMEOUT,
};
struct gateway_hold {
	enum gateway_hold_answer (*wait)(void *ctx, struct hold_view *call);
	void *ctx;
};

struct gateway_options {
	const struct airlock_config *config;	/* frozen for the session */
	const char *session_id;
	struct audit *audit;			/* required */
	struct otlp *otlp;			/* optional */
	struct gate *gate;			/* the live policy gate, or NULL: all
						   allowed at revision 0 */
	const struct upstream_host *host;	/* for "isolation": "container"
						   upstreams, or NULL: they are
						   unavailable (upstream_box.h) */
	struct parser *parser;			/* taken, started by the caller; or
						   NULL: one is started beside exe */
	const char *exe;			/* the airlock binary its parser is
						   found beside (NULL: this one) */
	const struct gateway_hold *hold;	/* held calls' wait, or NULL: denied */
	const atomic_bool *stop;		/* the session's stop: a call waiting at
						   its upstream gives up (RULE_STOPPED),
						   or NULL */
};

/*
 * 0; GATEWAY_NO_PARSER when its parser (engine/privsep/parser.h) did not
 * start or lock down ("parser: …"); -1 for anything else, among them no
 * keyed hash from the log's payload key (GATEWAY_ERR_KEY).
 */
#define GATEWAY_ERR_KEY	"gateway: no payload hash key from the audit log"
#define GATEWAY_NO_PARSER	(-2)
struct parser;
int gateway_open(const struct gateway_options *o, struct gateway **out, struct al_err *err);

/*
 * Handle one agent line (without its newline). On GW_REPLY, *reply is a
 * malloc'd line (with newline) to write to the agent and *rule the rule
 * that decided the call. On GW_INVALID *rule is RULE_INVALID_REQUEST; on
 * GW_FAULT it is a fatal rule (policy_rule_fatal): an upstream fault,
 * timeout or unavailable upstream, no randomness, out of memory, or
 * RULE_AUDIT_FAILED.
 */
enum gateway_status gateway_handle(struct gateway *g, const char *line, size_t len,
				   char **reply, size_t *reply_len, enum policy_rule *rule);

/*
 * MCP sessions (docs/mcp-agents.md): what the tool's upstream lists for it
 * (a copy in out, freed with mcp_tool_shown_free), when the session's class
 * may reach that upstream now (starting it, as a first call would) and the
 * definition matches its pin (or, unpinned, becomes the first one seen).
 * false otherwise: a sink above the class is never contacted. An unpinned
 * definition given out raises the session's class to the tool's data
 * class, as its answer would (a pinned one is the operator's reviewed text).
 */
bool gateway_tool_definition(struct gateway *g, int tool, struct mcp_tool_shown *out);

/* After GW_FAULT: the cause for the operator (fixed text, tool and upstream names). */
const char *gateway_fault_reason(const struct gateway *g);

int gateway_session_class(const struct gateway *g);
void gateway_get_counters(const struct gateway *g, struct gateway_counters *out);
/*
 * Each configured upstream's confinement, in the config's order: what a
 * started one got (its receipt), else its config's plan. Returns how many
 * (at most cap). From the session's worker, like every gateway call.
 */
size_t gateway_upstreams(const struct gateway *g, struct upstream_view *out, size_t cap);
/* The same before a gateway opens: every upstream's plan. */
size_t gateway_upstream_plans(const struct airlock_config *cfg, struct upstream_view *out,
			      size_t cap);
/* Sum of the upstreams' stderr bytes (never their content). */
size_t gateway_upstream_stderr(const struct gateway *g);

/*
 * Wait until the session's queued terminal entries are committed: -1 when
 * the log refused any (counted in audit_failures, once). gateway_close
 * settles too.
 */
int gateway_settle(struct gateway *g);

/*
 * Wait until the session's queued terminal entries are committed, stop
 * every upstream this session started (a container upstream's container
 * stopped, removed and seen gone); free.
 */
void gateway_close(struct gateway *g);

#endif
