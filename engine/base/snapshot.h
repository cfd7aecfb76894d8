#ifndef AIRLOCK_SNAPSHOT_H
#define AIRLOCK_SNAPSHOT_H

/*
 * What the console sees of the engine (docs/architecture.md §4): session rows,
 * per-session detail, typed events, audit tail rows and host checks. This
 * header includes standard headers only, and it is the only engine header
 * a file under views/ may include (a build check enforces it).
 *
 * No type here has a field that could hold payload: every string is an
 * identifier the engine generated, a name the operator configured, a fixed
 * word, a check value (configuration and host facts), or a hash prefix.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SNAP_ID_MAX		40	/* a session or call id: prefix + hex, NUL */
#define SNAP_CONTAINER_MAX	72	/* a container id: 64 hex, NUL */
#define SNAP_IMAGE_MAX		72	/* "sha256:" + 64 hex, NUL */
#define SNAP_NAME_MAX		64	/* a catalog tool name */
#define SNAP_CLASS_MAX		32	/* a data class name */
#define SNAP_WORD_MAX		48	/* a fixed word or short reason */
#define SNAP_REASON_MAX		192	/* a fixed failure reason with names */
#define SNAP_TOOLS_MAX		64
#define SNAP_CHECKS_MAX		64
#define SNAP_ACKS_MAX		32
#define SNAP_TIMELINE_MAX	32
#define SNAP_STANDING_MAX	64	/* tools revoked on every session at once */
#define SNAP_FLOWS_MAX		16	/* class flows held on every session at once (gate.h's
					   GATE_FLOWS_MAX: one session holds them all) */
#define SNAP_SOCKET_MAX		108	/* a unix socket path: sizeof sun_path */
#define SNAP_HASH_PREFIX	16	/* hex digits of a hash the console shows */
#define SNAP_ENGINE_MAX		32	/* an engine's name, as its hello gives it */
#define SNAP_POOLS_MAX		8	/* warm pools one engine keeps */
#define SNAP_UPSTREAMS_MAX	16	/* a session's MCP upstreams */
#define SNAP_NETWORK_MAX	128	/* an upstream's network: "none", or its ports */
#define CHECK_ID_MAX		32
#define CHECK_VALUE_MAX		128

/* Every way a session ends: the code, and whether that is a normal end. */
#define SESSION_ENDS(_) \
	_(NONE,                 "none",                 false) \
	_(AGENT_EXIT,           "agent_exit",           true)  \
	_(AGENT_FAILED,         "agent_failed",         false) \
	_(OOM_KILLED,           "oom_killed",           false) \
	_(SANDBOX_DIED,         "sandbox_died",         false) \
	_(INVALID_REQUEST,      "invalid_request",      false) \
	_(FRAME_TOO_LARGE,      "frame_too_large",      false) \
	_(STDOUT_BUDGET,        "stdout_budget",        false) \
	_(STDERR_BUDGET,        "stderr_budget",        false) \
	_(CALL_BUDGET,          "call_budget",          false) \
	_(SESSION_TIMEOUT,      "session_timeout",      false) \
	_(UPSTREAM_FAULT,       "upstream_fault",       false) \
	_(UPSTREAM_TIMEOUT,     "upstream_timeout",     false) \
	_(UPSTREAM_UNAVAILABLE, "upstream_unavailable", false) \
	_(AUDIT_FAILED,         "audit_failed",         false) \
	_(STREAM_FAILED,        "stream_failed",        false) \
	_(INITIAL_REFUSED,      "initial_refused",      false) \
	_(PREFLIGHT_REFUSED,    "preflight_refused",    false) \
	_(ADMISSION_REFUSED,    "admission_refused",    false) \
	_(CONTAINER_FAILED,     "container_failed",     false) \
	_(CLEANUP_FAILED,       "cleanup_failed",       false) \
	_(WATCHDOG_FAILED,      "watchdog_failed",      false) \
	_(PARSER_FAILED,        "parser_failed",        false) \
	_(OPERATOR_STOP,        "operator_stop",        false) \
	_(WORKER_FAILED,        "worker_failed",        false)

enum session_end {
#define SESSION_END_ENUM(e, id, normal) SESSION_END_##e,
	SESSION_ENDS(SESSION_END_ENUM)
#undef SESSION_END_ENUM
	SESSION_END_COUNT
};

/* One row of SESSION_ENDS. */
struct session_end_info {
	const char *id;
	bool normal;
};

static inline const struct session_end_info *
session_end_info(enum session_end e)
{
	static const struct session_end_info rows[] = {
#define SESSION_END_INFO(e, id, normal) { id, normal },
		SESSION_ENDS(SESSION_END_INFO)
#undef SESSION_END_INFO
	};
	static const struct session_end_info unknown = { "unknown", false };

	return (unsigned)e < SESSION_END_COUNT ? &rows[e] : &unknown;
}

static inline const char *
session_end_id(enum session_end e)
{
	return session_end_info(e)->id;
}

static inline bool
session_end_normal(enum session_end e)
{
	return session_end_info(e)->normal;
}

/* Where a session is in its life (docs/architecture.md §2). */
#define SESSION_STATES(_) \
	_(QUEUED,      "queued")       \
	_(PREFLIGHT,   "preflight")    \
	_(CREATING,    "creating")     \
	_(ADMITTING,   "admitting")    \
	_(ATTACHING,   "attaching")    \
	_(STARTING,    "starting")     \
	_(ARMING,      "arming")       \
	_(READMITTING, "re-admitting") \
	_(RUNNING,     "running")      \
	_(STOPPING,    "stopping")     \
	_(ENDED,       "ended")

enum session_state {
#define SESSION_STATE_ENUM(e, id) SESSION_STATE_##e,
	SESSION_STATES(SESSION_STATE_ENUM)
#undef SESSION_STATE_ENUM
	SESSION_STATE_COUNT
};

static inline const char *
session_state_id(enum session_state s)
{
	static const char *const ids[] = {
#define SESSION_STATE_ID(e, id) id,
		SESSION_STATES(SESSION_STATE_ID)
#undef SESSION_STATE_ID
	};

	return (unsigned)s < SESSION_STATE_COUNT ? ids[s] : "unknown";
}

/* One item of an admission report or of the host checks. */
struct check_item {
	char id[CHECK_ID_MAX];
	char expected[CHECK_VALUE_MAX];
	char observed[CHECK_VALUE_MAX];
	bool pass;
	bool run;		/* false: listed but not run (an earlier check failed) */
};

enum admission_verdict {
	ADMISSION_NOT_RUN,
	ADMISSION_ADMITTED,
	ADMISSION_REFUSED,
};

static inline const char *
admission_verdict_id(enum admission_verdict v)
{
	return v == ADMISSION_ADMITTED ? "admitted" : v == ADMISSION_REFUSED ? "refused"
									     : "not_run";
}

/* One inspection of the container, item by item. */
struct admission_report {
	enum admission_verdict verdict;
	size_t n;
	struct check_item items[SNAP_CHECKS_MAX];
};

/* Call counters of one session's gateway. */
#define SNAP_RULES_MAX 24	/* the gateway's rules (policy.h) fit */

struct gateway_counters {
	uint64_t calls;		/* requests that named a known operation */
	uint64_t allowed;	/* answered with allowed:true */
	uint64_t denied;	/* answered with allowed:false (any reason) */
	uint64_t denied_by[SNAP_RULES_MAX];	/* of which, by the rule that decided (policy.h) */
	uint64_t egress_denied;	/* of which the response was withheld */
	uint64_t upstream_errors;
	uint64_t upstream_spawns;
	uint64_t non_text_items;	/* content items not forwarded */
	uint64_t audit_failures;	/* times the log refused a call's entry */
	/*
	 * Per catalog tool: the monotonic ms of the latest call of it the
	 * gateway decided (0: none). Engine-side only, for `ctl quarantine
	 * --called` (quarantine.h); never on the wire.
	 */
	int64_t last_call_ms[SNAP_TOOLS_MAX];
};

/* The watchdog lease, read at snapshot time (never a worker's old copy). */
struct lease_view {
	bool armed;
	bool failed;
	bool late;		/* no ack for longer than a pulse and a half */
	char reason[SNAP_WORD_MAX];	/* fixed: "no ack", "watchdog gone", … */
	uint64_t pulses, acks;
	int64_t age_ms;		/* since the latest ack; 0 when not armed */
	int64_t last_ack_us, max_ack_us;
	size_t n_acks;		/* ack_us[0..n_acks): round trips, oldest first */
	int32_t ack_us[SNAP_ACKS_MAX];
	long watchdog_pid;
};

/* One catalog tool as the policy gate of one session has it. */
struct tool_view {
	char name[SNAP_NAME_MAX];
	char data_class[SNAP_CLASS_MAX];
	bool approved;		/* an alias reaches it: frozen at start */
	bool allowed;		/* allowed now */
	bool held;		/* allowed, its calls waiting for an operator (ctl hold) */
	/* Allowed under a time-boxed grant that lapses by itself: what remains of it. */
	bool granted;
	int64_t grant_calls;	/* calls left, shared by the sessions it covers; -1: no budget */
	int64_t grant_ms;	/* time left; -1: no deadline */
};

/*
 * One call held for an operator (ctl pending): who, what, how big, since
 * when. Never its payload: the request is named by its size and hash.
 */
#define SNAP_HOLDS_MAX		1024	/* one a session at most (a bridge waits for its call) */
#define SNAP_HASH_MAX		65	/* a SHA-256 in hex, NUL */
struct hold_view {
	int64_t id;			/* never reused while the engine runs */
	char session[SNAP_ID_MAX];
	char tool[SNAP_NAME_MAX];	/* the catalog tool */
	char alias[SNAP_NAME_MAX];	/* the name the agent used */
	char session_class[SNAP_CLASS_MAX];	/* the session's data class now */
	char sink_ceiling[SNAP_CLASS_MAX];	/* the tool's */
	int64_t request_bytes;
	char request_hash[SNAP_HASH_MAX];
	int64_t since_ms;		/* wall clock, ms since the epoch: it began waiting */
	int64_t waited_ms;		/* at listing time */
	int64_t earlier_calls;		/* calls of this tool in the session before it */
	char held_by[8];		/* "tool", "flow" (a class flow hold) or "both" */
	bool declassify;		/* approving it lets it past its sink ceiling */
	unsigned engine;		/* the console's: which of its engines holds it */
};

/* The call the session's gateway is waiting on, if any. */
struct call_view {
	bool active;
	char tool[SNAP_NAME_MAX];
	int64_t revision;	/* the revision that admitted it */
	int64_t age_ms;		/* in flight for so long, at snapshot time */
};

#define SNAP_USER_MAX 33

/*
 * Who asked for a change to the policy: the uid the kernel gave the
 * requesting process (never what a client says of itself), its name, and
 * the kind of client it came through.
 */
struct snap_author {
	uint32_t uid;
	char user[SNAP_USER_MAX];	/* the uid's name, or the uid in decimal */
	char via[16];			/* "console", "ctl", "engine" */
};

/*
 * A session's quarantine (quarantine.h): held by an operator, every call
 * denied `quarantined`, its container paused and kept until a release or
 * a stop. since_ms is wall-clock ms; pause a quarantine_pause_word.
 */
struct quarantine_view {
	bool on;
	int64_t since_ms;
	struct snap_author by;
	char pause[16];
};

/* One session, as the sessions list shows it. */
struct session_row {
	uint64_t generation;	/* changes whenever the worker published */
	char id[SNAP_ID_MAX];
	char container[SNAP_CONTAINER_MAX];	/* empty until created */
	char image[SNAP_IMAGE_MAX];
	char runtime[16];
	enum session_state state;
	int64_t started_ms;	/* wall clock, ms since the epoch */
	int64_t uptime_ms;	/* at snapshot time; frozen once ended */
	struct lease_view lease;
	struct gateway_counters counters;
	uint64_t stdout_bytes, stderr_bytes;
	char class_name[SNAP_CLASS_MAX];
	/* The policy gate. */
	int64_t revision;
	bool gate_open;
	bool frozen;			/* its gate denies every call (the kill switch) */
	struct quarantine_view quarantine;
	unsigned pending;		/* cutover deltas waiting for the in-flight call */
	int64_t pending_revision;	/* the newest of them */
	int64_t pending_age_ms;		/* the oldest waits for so long */
	unsigned flows_held;		/* class flows its gate holds (ctl hold --flow) */
	struct call_view call;
	size_t n_tools;
	struct tool_view tools[SNAP_TOOLS_MAX];
	enum admission_verdict admission_first, admission_second;
	/* The end, once state is SESSION_STATE_ENDED. */
	enum session_end end;
	char refused_check[CHECK_ID_MAX];	/* the first refusing check, if any */
	char failed_step[16];			/* connect, create, attach, start, … */
	char reason[SNAP_REASON_MAX];		/* fixed text, names, the daemon's message */
	long exit_code;				/* -1 when the container never ran */
	bool started;				/* it ran: -1 then means unknown */
	bool container_left;			/* not removed yet (the daemon did not answer) */
	unsigned audit_failures;		/* its entries the log refused: incomplete */
	bool oom_killed;
	int64_t duration_ms;
	/* The console's, not the engine's: which of its engines holds the row (0 when one). */
	unsigned engine;
};

enum cutover_op {
	CUTOVER_REVOKE,
	CUTOVER_RESTORE,
	CUTOVER_FREEZE,		/* the kill switch: every call denied `frozen` */
	CUTOVER_THAW,		/* the freeze lifted */
	CUTOVER_HOLD,		/* the tool's calls wait for an operator's approve or deny */
};

static inline const char *
cutover_op_id(enum cutover_op op)
{
	switch (op) {
	case CUTOVER_REVOKE:
		return "revoke";
	case CUTOVER_HOLD:
		return "hold";
	case CUTOVER_RESTORE:
		return "restore";
	case CUTOVER_FREEZE:
		return "freeze";
	case CUTOVER_THAW:
		break;
	}
	return "thaw";
}


enum cutover_result {
	CUTOVER_APPLIED,	/* the tool is now revoked / allowed */
	CUTOVER_NOT_APPLICABLE,	/* the session never had the tool: nothing changed */
	CUTOVER_REJECTED,	/* stale or invalid: admission is closed */
};

static inline const char *
cutover_result_id(enum cutover_result r)
{
	return r == CUTOVER_APPLIED ? "applied" : r == CUTOVER_NOT_APPLICABLE ? "not_applicable"
									    : "rejected";
}

/* Every kind of event: the identifier, and whether it is always an alert. */
#define SUPERVISOR_EVENT_KINDS(_) \
	_(STATE,             "state",             false) \
	_(END,               "end",               false) \
	_(LEASE_FAILED,      "lease_failed",      true)  \
	_(ADMISSION_REFUSED, "admission_refused", true)  \
	_(CUTOVER,           "cutover",           true)  \
	_(CUTOVER_ACK,       "cutover_ack",       false) \
	_(STOP_REQUESTED,    "stop_requested",    false) \
	_(REAPER,            "reaper",            true)  \
	_(SWEEP,             "sweep",             true)  \
	_(AUDIT_REFUSED,     "audit_refused",     true)  \
	_(HOLD_WAITING,      "hold_waiting",      true)  \
	_(HOLD_DECIDED,      "hold_decided",      false) \
	_(QUARANTINE,        "quarantine",        true)  \
	_(RELEASE,           "release",           true)  \
	_(PAUSE_FAILED,      "pause_failed",      true)  \
	_(UNPAUSED,          "unpaused",          true)

enum event_kind {
#define SUPERVISOR_EVENT_KIND_ENUM(e, id, alert) SUPERVISOR_EVENT_##e,
	SUPERVISOR_EVENT_KINDS(SUPERVISOR_EVENT_KIND_ENUM)
#undef SUPERVISOR_EVENT_KIND_ENUM
	SUPERVISOR_EVENT_KIND_COUNT
};

static inline const char *
event_kind_id(enum event_kind k)
{
	static const char *const ids[] = {
#define SUPERVISOR_EVENT_KIND_ID(e, id, alert) id,
		SUPERVISOR_EVENT_KINDS(SUPERVISOR_EVENT_KIND_ID)
#undef SUPERVISOR_EVENT_KIND_ID
	};

	return (unsigned)k < SUPERVISOR_EVENT_KIND_COUNT ? ids[k] : "unknown";
}

/*
 * One event. Which fields mean something depends on kind:
 *   STATE              state
 *   END                end, check (refused check), alert when abnormal
 *   LEASE_FAILED       reason (fixed lease reason)
 *   ADMISSION_REFUSED  check, reason ("first" or "second" inspection)
 *   CUTOVER            tool, op, revision, count (sessions targeted), by
 *   CUTOVER_ACK        tool, op, revision, result, waited_us, reason, by
 *                      (a freeze or thaw: op says which, tool is empty)
 *   STOP_REQUESTED     —
 *   REAPER             count (containers removed), reason
 *   SWEEP              count (containers of ended sessions removed once
 *                      the daemon answered again), reason
 *   HOLD_WAITING       hold (the call's id), tool (its catalog name)
 *   HOLD_DECIDED       hold, tool, by, waited_us, reason: approved,
 *                      approved_rest, denied, timeout, stopped or lifted
 *   QUARANTINE,        by (who quarantined or released the session)
 *   RELEASE
 *   PAUSE_FAILED       reason ("pause" or "unpause": what the daemon refused)
 *   UNPAUSED           — (a quarantined session's container was found
 *                      running unpaused: unpaused outside airlock; paused again)
 * A held call's events name it and its tool, never its arguments.
 */
struct supervisor_event {
	uint64_t seq;		/* 1, 2, 3 … in the order the engine made them */
	int64_t wall_ms;	/* wall clock, ms since the epoch */
	enum event_kind kind;
	bool alert;
	char session[SNAP_ID_MAX];	/* empty when for no one session */
	enum session_state state;
	enum session_end end;
	char check[CHECK_ID_MAX];
	char tool[SNAP_NAME_MAX];
	enum cutover_op op;
	int64_t revision;
	enum cutover_result result;
	int64_t waited_us;
	long count;
	char reason[SNAP_WORD_MAX];
	struct snap_author by;		/* a cutover's: who asked for it */
	int64_t hold;			/* a held call's id (ctl pending) */
	unsigned engine;		/* the console's: which of its engines said it */
	bool replayed;			/* the console's: history an engine sent on attach, not news */
};

/* The supervisor's list of sessions; rows are owned and reused across calls. */
/* One warm pool: containers kept ready for one profile key. */
struct snap_pool {
	char key[SNAP_HASH_PREFIX + 1];	/* the profile key's prefix */
	char image[SNAP_IMAGE_MAX];
	char runtime[16];
	uint32_t size;			/* kept ready, as configured */
	uint32_t ready, warming;	/* now */
	uint64_t claimed;		/* taken by sessions */
	uint64_t discarded;		/* aged, lease failed, exited, or refused at a claim */
	uint64_t failed;		/* launches that did not get ready */
};

struct supervisor_snapshot {
	uint64_t generation;	/* of the whole list */
	int64_t taken_ms;	/* wall clock */
	int64_t revision;	/* the latest policy revision the engine assigned */
	size_t n, cap;
	struct session_row *rows;
	size_t live;		/* not ended */
	uint64_t started_total;	/* sessions started since the supervisor opened */
	uint64_t forgotten_total;	/* ended sessions whose slot was reused */
	uint64_t events_dropped;	/* state events lost to a full queue */
	uint64_t alerts_dropped;	/* alerts lost to a full alert queue */
	uint64_t audit_backlog;		/* cutover entries not yet written */
	uint64_t audit_failures;	/* times the log refused an entry: policy, sessions' */
	/*
	 * Containers of ended sessions that could not be removed (the daemon
	 * did not answer); the engine retries until they are gone.
	 */
	size_t containers_left;
	/* Tools revoked on every session: later sessions start without them. */
	size_t n_standing;
	char standing[SNAP_STANDING_MAX][SNAP_NAME_MAX];
	struct snap_author standing_by[SNAP_STANDING_MAX];	/* who revoked each */
	int64_t standing_revision[SNAP_STANDING_MAX];		/* and at which revision */
	/* The kill switch: every session frozen, and later ones start frozen. */
	bool frozen;
	struct snap_author frozen_by;
	int64_t frozen_revision;
	/* Class flows held on every session ("class>sink"): later sessions start with them. */
	size_t n_standing_flow;
	char standing_flow[SNAP_FLOWS_MAX][SNAP_NAME_MAX];
	/* Tools held on every session: later sessions start with them held. */
	size_t n_standing_hold;
	char standing_hold[SNAP_STANDING_MAX][SNAP_NAME_MAX];
	/* The warm pools (docs/console.md). */
	size_t n_pools;
	struct snap_pool pools[SNAP_POOLS_MAX];
};

/*
 * One MCP upstream's confinement (engine/mcp/mcp_confine.h): what its
 * process got at spawn, or, before its first call starts it, what its
 * config plans. Names, numbers, fixed words and a hash prefix.
 */
struct upstream_view {
	char name[SNAP_NAME_MAX];	/* the operator's name for it */
	bool started;			/* false: not started yet: the plan only, no uid, ruleset or filter */
	char user[SNAP_USER_MAX];	/* started: the user switched to ("" the engine's own
					   uid); else the configured one */
	uint32_t uid, gid;
	bool uid_changed;		/* false: the engine is not root: the uid is its own */
	int32_t landlock_abi;		/* 0: no Landlock */
	uint32_t landlock_rules;	/* path and port rules in its ruleset */
	uint32_t paths_ro, paths_rw;	/* the operator's lists */
	char seccomp[SNAP_HASH_PREFIX + 1];	/* its filter's SHA-256, a prefix */
	char network[SNAP_NETWORK_MAX];	/* "none", or "connect 443 bind - udp no" */
	char isolation[16];		/* "process" */
	bool privileged;		/* opt-in: its user may be root or in the docker group */
	bool unconfined_ok;		/* opt-in: it may start without Landlock */
};

/*
 * The Landlock ABI an upstream's confinement needs whole (TCP rules from 4,
 * scopes from 6): one started with less was opted in (unconfined_ok).
 */
#define UPSTREAM_LANDLOCK_FULL	6

/*
 * The loud words an upstream earns, or NULL: every screen and command that
 * shows one marks its opt-ins with the same words.
 */
static inline const char *
upstream_view_marks(const struct upstream_view *u)
{
	bool unconfined = u->started ? u->landlock_abi < UPSTREAM_LANDLOCK_FULL : u->unconfined_ok;

	if (u->privileged && unconfined)
		return u->started ? "PRIVILEGED UNCONFINED" : "PRIVILEGED UNCONFINED-OK";
	if (u->privileged)
		return "PRIVILEGED";
	if (unconfined)
		return u->started ? "UNCONFINED" : "UNCONFINED-OK";
	return NULL;
}

/*
 * Who an upstream runs as, in buf: "uid 999 (airlock-upstream)", "uid 0
 * (the engine's own)", or before its start "not started (user mailer)".
 * Every screen and command says it in these words. Returns buf.
 */
static inline const char *
upstream_view_who(const struct upstream_view *u, char *buf, size_t cap)
{
	if (!u->started)
		snprintf(buf, cap, "not started (user %s)", u->user);
	else if (!u->uid_changed)
		snprintf(buf, cap, "uid %u (the engine's own)", u->uid);
	else
		snprintf(buf, cap, "uid %u (%s)", u->uid, u->user);
	return buf;
}

/* One session in depth, asked for by id. */
struct session_detail {
	struct session_row row;
	struct admission_report first, second;
	size_t n_timeline;	/* timeline[0..n): this session's latest events, oldest first */
	struct supervisor_event timeline[SNAP_TIMELINE_MAX];
	size_t n_upstreams;	/* upstreams[0..n): its config's, in its order */
	struct upstream_view upstreams[SNAP_UPSTREAMS_MAX];
};

/* How an audit decision reads to an operator (audit.h's table gives each one). */
enum audit_tone {
	AUDIT_TONE_PLAIN,
	AUDIT_TONE_GOOD,
	AUDIT_TONE_BAD,		/* refused or denied by a rule */
	AUDIT_TONE_ALERT,	/* something failed */
};

/* One audit entry as the console shows it: never the payload. */
struct audit_row {
	int64_t seq;
	char time[32];			/* UTC, as stored */
	char session[SNAP_ID_MAX];
	char call[SNAP_ID_MAX];		/* empty when not a call */
	char type[16];
	char tool[SNAP_NAME_MAX];
	char decision[16];
	char rule[32];
	int64_t revision;
	int64_t latency_us;
	char request_hash[SNAP_HASH_PREFIX + 1];	/* prefixes; empty when none */
	char response_hash[SNAP_HASH_PREFIX + 1];
	char entry_hash[SNAP_HASH_PREFIX + 1];
	enum audit_tone tone;		/* of its decision; PLAIN when not in the vocabulary */
	bool unknown_outcome;		/* a dispatch whose terminal entry is not in the log */
};

/*
 * One event of the audit log's policy story (audit_timeline.h) as the
 * console shows it: names, ids, counts and times, never payload. kind is
 * the timeline's word ("session_start", "policy", "request", …): a
 * console that does not know a newer engine's kind still lists it.
 */
#define SNAP_TIMELINE_KIND_MAX	24

struct timeline_row {
	int64_t seq;			/* its first entry's */
	char time[32];			/* UTC, as stored */
	char kind[SNAP_TIMELINE_KIND_MAX];
	char session[SNAP_ID_MAX];	/* empty for a change that names its acks */
	char op[16];			/* revoke, restore, freeze, thaw, update; a request's word */
	char tool[SNAP_NAME_MAX];
	char rule[SNAP_WORD_MAX];
	int64_t revision;
	bool normal;			/* session_end: a normal end */
	bool has_author;
	struct snap_author by;
	int64_t applied, not_applicable, rejected;	/* the acks (a request's decision) */
	unsigned engine;		/* set by the console: the engine it came from */
};

/* The host and daemon checks (airlock doctor), run off the UI thread. */
/*
 * The host checks, in the order they run (airlock doctor, the preflight
 * before each session, the console's host view): id, the stage it needs,
 * and what it asks of the host. A check whose stage cannot be reached (no
 * local endpoint, no answer, no version or info) is still listed, as not
 * run.
 */
#define HOST_CHECKS(_) \
	_(OS,                 "os",                 LOCAL,    "the engine runs on Linux") \
	_(CORE_PATTERN,       "core_pattern",       LOCAL,    "kernel.core_pattern is not blank and not a |pipe: a piped handler ignores RLIMIT_CORE and runs in the host's namespaces") \
	_(RLIMIT_CORE,        "rlimit_core",        LOCAL,    "this process's RLIMIT_CORE is 0/0, so nothing it starts dumps core") \
	_(ENDPOINT,           "endpoint",           ENDPOINT, "DOCKER_HOST names a local unix socket: a remote or VM-backed daemon cannot be checked") \
	_(DAEMON_PING,        "daemon_ping",        PING,     "the daemon answers /_ping on that socket") \
	_(DAEMON_INFO,        "daemon_info",        INFO,     "the daemon reports /version and /info") \
	_(API_VERSION,        "api_version",        DAEMON,   "Engine API 1.41 or newer") \
	_(DAEMON_VERSION,     "daemon_version",     DAEMON,   "the daemon reports its version") \
	_(DAEMON_OS_TYPE,     "daemon_os_type",     DAEMON,   "the daemon runs Linux containers") \
	_(DAEMON_NOT_DESKTOP, "daemon_not_desktop", DAEMON,   "a native Linux daemon, not Docker Desktop's VM (its checks would describe the VM)") \
	_(KERNEL_VERSION,     "kernel_version",     DAEMON,   "the daemon reports its kernel") \
	_(CGROUP_VERSION,     "cgroup_version",     DAEMON,   "the daemon reports its cgroup version: the memory, pids and CPU limits need cgroups") \
	_(SECCOMP,            "seccomp",            DAEMON,   "the daemon applies seccomp, and its default profile is not unconfined") \
	_(RUNTIMES,           "runtimes",           DAEMON,   "the daemon lists its OCI runtimes") \
	_(RUNTIME,            "runtime",            DAEMON,   "the session's runtime (runc or runsc) is registered with the daemon") \
	_(RUNSC_ARGS,         "runsc_args",         DAEMON,   "runsc is registered with --network=none and --oci-seccomp (without it, Docker's seccomp is not applied in gVisor)") \
	_(RUNSC_THREADS,      "runsc_threads",      CONFIG,   "under runsc, clone3 answers ENOSYS with airlock's seccomp profile, so glibc starts threads (a probe container)") \
	_(LANDLOCK,           "landlock",           CONFIG,   "the kernel's Landlock ABI is 6 or newer, as upstream confinement needs (or every upstream has unconfined_ok)") \
	_(UPSTREAM_SECCOMP,   "upstream_seccomp",   CONFIG,   "the kernel loads seccomp filters: every upstream runs under one") \
	_(UPSTREAM_USER,      "upstream_user",      CONFIG,   "a root engine's upstream user airlock-upstream exists, not root nor in docker, with uids for its sessions") \
	_(PARSER,             "parser",             CONFIG,   "a session's parser of agent lines (airlock-parser) starts as airlock-parse and locks itself down here") \
	_(IMAGE,              "image",              CONFIG,   "with a config: its profile.image ID is an image on this daemon") \
	_(CATALOG,            "catalog",            CONFIG,   "with a config: each catalog tool (catalog.<tool>) is in its upstream's first tools/list, as pinned") \
	_(CONFINE,            "confine",            CONFIG,   "with a config: each upstream (confine.<name>) is confined here as its spawn would be") \
	_(INSTALLED,          "installed",          CONFIG,   "each installed upstream (installed.<key>) would start: its definition and what it runs are root's")

enum host_check {
#define HOST_CHECK_ENUM(e, id, stage, help) HOST_CHECK_##e,
	HOST_CHECKS(HOST_CHECK_ENUM)
#undef HOST_CHECK_ENUM
	HOST_CHECK_COUNT
};

/* What a host check needs before it can run, in order. */
enum host_check_stage {
	HOST_STAGE_LOCAL,	/* nothing: this process and its kernel */
	HOST_STAGE_ENDPOINT,	/* DOCKER_HOST */
	HOST_STAGE_PING,	/* a local endpoint */
	HOST_STAGE_INFO,	/* a daemon that answers */
	HOST_STAGE_DAEMON,	/* its /version and /info */
	HOST_STAGE_CONFIG,	/* a session config (doctor --config, a session's start) */
};

/* One row of HOST_CHECKS: what the id, stage and help lookups read. */
struct host_check_info {
	const char *id;
	enum host_check_stage stage;
	const char *help;
};

static inline const struct host_check_info *
host_check_info(enum host_check c)
{
	static const struct host_check_info rows[] = {
#define HOST_CHECK_INFO(e, id, stage, help) { id, HOST_STAGE_##stage, help },
		HOST_CHECKS(HOST_CHECK_INFO)
#undef HOST_CHECK_INFO
	};
	static const struct host_check_info unknown = { "unknown", HOST_STAGE_DAEMON, "" };

	return (unsigned)c < HOST_CHECK_COUNT ? &rows[c] : &unknown;
}

static inline const char *
host_check_id(enum host_check c)
{
	return host_check_info(c)->id;
}

static inline enum host_check_stage
host_check_stage(enum host_check c)
{
	return host_check_info(c)->stage;
}

static inline const char *
host_check_help(enum host_check c)
{
	return host_check_info(c)->help;
}

/*
 * The check with this id, or HOST_CHECK_COUNT. An id of the form
 * "row.name" (one per catalog tool: "catalog.search") is its row's.
 */
static inline enum host_check
host_check_by_id(const char *id)
{
	size_t n = id ? strcspn(id, ".") : 0;
	int c;

	for (c = 0; id && c < HOST_CHECK_COUNT; c++) {
		const char *row = host_check_id((enum host_check)c);

		if (strlen(row) == n && strncmp(row, id, n) == 0)
			return (enum host_check)c;
	}
	return HOST_CHECK_COUNT;
}

struct host_snapshot {
	uint64_t generation;	/* 0: never run */
	bool running;		/* a run is under way */
	bool passed;
	int64_t at_ms;		/* wall clock of the latest finished run */
	char endpoint[SNAP_SOCKET_MAX];
	char daemon_version[32];
	char runtime[16];
	size_t n;
	struct check_item items[SNAP_CHECKS_MAX];
};

#endif
