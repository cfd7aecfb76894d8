#ifndef AIRLOCK_CONTROL_H
#define AIRLOCK_CONTROL_H

/*
 * The control protocol of `airlock serve` (docs/operations.md), pure code:
 * every message declared once. Requests: the tables of ops and keys below,
 * which the parser (server) and control_request_json (clients) both read.
 * Replies and pushed frames: a field table per structure (control_tables.c)
 * walked by one encoder and one decoder (control_codec.h). Also the role a
 * peer's credentials give, and the metrics text. No sockets, no threads:
 * a unit test and a fuzzer drive it with plain data.
 *
 * A unix stream; one JSON object per line, both ways. On connect the
 * engine sends a hello:
 *   {"airlock": 1, "engine": NAME, "role": "operate"|"view", "uid": N, "user": "..."}
 * A client sends requests {"id": N, "op": "...", ...}; each gets exactly
 * one reply {"id": N, "ok": true, ...} or {"id": N, "ok": false,
 * "error": "<fixed text>"} (id null when the request had no readable id).
 * A subscribed client also gets pushed frames {"seq": N, "event": {...}}
 * and {"seq": N, "snapshot": {...}}, seq increasing by one per frame made
 * for it; "gap": N on a frame says N frames before it were dropped.
 *
 * The parser never echoes its input: every refusal is one of the fixed
 * CONTROL_E_* texts. Every serialised field is a snapshot.h field: no
 * payload crosses the socket.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "snapshot.h"

#define CONTROL_VERSION		1
#define CONTROL_LINE_MAX	65536		/* a request line, newline excluded */
#define CONTROL_FRAME_MAX	(4u << 20)	/* a line the engine sends */
#define CONTROL_IDS_MAX		64		/* sessions named in one request */
#define CONTROL_PATH_MAX	4096
#define CONTROL_WAIT_MAX_MS	60000		/* longest a cutover reply waits for acks */
#define CONTROL_ID_MAX		((int64_t)1 << 53)	/* exact in every JSON reader */

/* Fixed error texts: the only words a refusal carries. */
#define CONTROL_E_TOO_LONG	"frame too long"
#define CONTROL_E_TRUNCATED	"truncated frame"
#define CONTROL_E_UTF8		"invalid utf-8"
#define CONTROL_E_JSON		"not json"
#define CONTROL_E_DUPLICATE	"duplicate key"
#define CONTROL_E_OBJECT	"not an object"
#define CONTROL_E_ID		"bad id"
#define CONTROL_E_OP		"unknown op"
#define CONTROL_E_KEY		"unknown key"
#define CONTROL_E_ARG		"bad argument"
#define CONTROL_E_MISSING	"missing argument"
#define CONTROL_E_VIEW		"view only"
#define CONTROL_E_SESSION	"no such session"
#define CONTROL_E_NOT_ENDED	"session not ended"
#define CONTROL_E_CONFIG	"config refused"
#define CONTROL_E_CUTOVER	"cutover refused"
#define CONTROL_E_HOLD		"hold refused"
#define CONTROL_E_QUARANTINE	"quarantine refused"
#define CONTROL_E_BUSY		"engine busy"
#define CONTROL_E_MEMORY	"out of memory"
#define CONTROL_E_PEER		"not allowed"	/* the reason frame at accept */
#define CONTROL_E_SLOW		"too slow"	/* the reason frame at a disconnect */
#define CONTROL_E_FULL		"too many clients"
#define CONTROL_E_NOFD		"engine out of descriptors"	/* at accept */
#define CONTROL_E_AUDIT		"audit log unreadable"
#define CONTROL_E_PARSER	"parser failed"	/* its connection's parser: closed */

/*
 * Every key a request may carry besides id and op: enum, JSON name, type
 * (control.c checks it), and the struct control_request field it fills.
 *   WORD    [A-Za-z0-9._:-], 1 .. sizeof field - 1 bytes
 *   PATH    an absolute path within sizeof field
 *   OBJECT  a JSON object (an inline config) at most JSON_TREE_DEPTH_MAX deep,
 *           kept as is (the digest carries it as a tree: json_tree.h)
 *   IDS     an array of at most CONTROL_IDS_MAX session ids (words)
 *   BOOL, WAIT (0 .. CONTROL_WAIT_MAX_MS), SEQ (0 .. CONTROL_ID_MAX)
 *   CLIENT  "ctl" or "console"
 *   FOR     a grant's seconds, GRANT_FOR_MIN_S .. GRANT_FOR_MAX_S (grant.h)
 *   CALLS   a grant's calls, 1 .. GRANT_CALLS_MAX
 *   HOLD    a held call's id (ctl pending), the same range as SEQ
 *   FLOW    a class flow, "CLASS>SINK": two words joined by one '>'
 *           (hold and restore name a tool or a flow, never both)
 *   (within_s, quarantine's window, is read as a FOR: 1 s .. 24 h)
 */
#define CONTROL_KEYS(_) \
	_(SESSION,   "session",   WORD,   session)   \
	_(PATH,      "path",      PATH,   path)      \
	_(CONFIG,    "config",    OBJECT, config)    \
	_(TOOL,      "tool",      WORD,   tool)      \
	_(SESSIONS,  "sessions",  IDS,    ids)       \
	_(ALL,       "all",       BOOL,   all)       \
	_(WAIT,      "wait_ms",   WAIT,   wait_ms)   \
	_(FOLLOW,    "follow",    BOOL,   follow)    \
	_(SNAPSHOTS, "snapshots", BOOL,   snapshots) \
	_(DELTAS,    "deltas",    BOOL,   deltas)    \
	_(REFRESH,   "refresh",   BOOL,   refresh)   \
	_(RUNTIME,   "runtime",   WORD,   runtime)   \
	_(CLIENT,    "client",    CLIENT, client)    \
	_(AFTER,     "after",     SEQ,    after)     \
	_(FOR,       "for_s",     FOR,    for_s)     \
	_(CALLS,     "calls",     CALLS,  calls)     \
	_(HOLD_ID,   "hold",      SEQ,    hold_id)   \
	_(REST,      "rest",      BOOL,   rest)      \
	_(WITHIN,    "within_s",  FOR,    within_s)  \
	_(FLOW,      "flow",      FLOW,   flow)

enum control_key {
#define CONTROL_KEY_ENUM(e, name, type, field) CONTROL_K_##e,
	CONTROL_KEYS(CONTROL_KEY_ENUM)
#undef CONTROL_KEY_ENUM
	CONTROL_K_COUNT
};

/* A key's bit, in a request's has and an op's masks below. */
#define CONTROL_KEY(k)	(1u << CONTROL_K_##k)
#define CK		CONTROL_KEY

/*
 * Every op, declared once: enum, name, the role it needs (view: it only
 * reads; operate: it changes a session or the policy), the keys it allows,
 * the keys it requires, and a set it needs one of at least.
 */
#define CONTROL_OPS(_) \
	_(HELLO,    "hello",    VIEW,    CK(CLIENT), 0, 0) \
	_(SNAPSHOT, "snapshot", VIEW,    0, 0, 0) \
	_(DETAIL,   "detail",   VIEW,    CK(SESSION), CK(SESSION), 0) \
	_(EVENTS,   "events",   VIEW,    CK(FOLLOW) | CK(SNAPSHOTS) | CK(DELTAS), 0, 0) \
	_(HOST,     "host",     VIEW,    CK(REFRESH) | CK(RUNTIME), 0, 0) \
	_(METRICS,  "metrics",  VIEW,    0, 0, 0) \
	_(AUDIT,    "audit",    VIEW,    CK(AFTER), 0, 0) \
	_(TIMELINE, "timeline", VIEW,    CK(AFTER), 0, 0) \
	_(START,    "start",    OPERATE, CK(PATH) | CK(CONFIG), 0, CK(PATH) | CK(CONFIG)) \
	_(STOP,     "stop",     OPERATE, CK(SESSION), CK(SESSION), 0) \
	_(REVOKE,   "revoke",   OPERATE, CK(TOOL) | CK(SESSIONS) | CK(ALL) | CK(WAIT), CK(TOOL), \
		    CK(SESSIONS) | CK(ALL)) \
	_(RESTORE,  "restore",  OPERATE, CK(TOOL) | CK(FLOW) | CK(SESSIONS) | CK(ALL) | CK(WAIT) | \
		    CK(FOR) | CK(CALLS), 0, CK(SESSIONS) | CK(ALL)) \
	_(FORGET,   "forget",   OPERATE, CK(SESSIONS), 0, 0) \
	_(STOP_ALL, "stop-all", OPERATE, 0, 0, 0) \
	_(FREEZE,   "freeze",   OPERATE, CK(WAIT), 0, 0) \
	_(THAW,     "thaw",     OPERATE, CK(WAIT), 0, 0) \
	_(HOLD,     "hold",     OPERATE, CK(TOOL) | CK(FLOW) | CK(SESSIONS) | CK(ALL) | CK(WAIT), 0, \
		    CK(SESSIONS) | CK(ALL)) \
	_(PENDING,  "pending",  VIEW,    0, 0, 0) \
	_(APPROVE,  "approve",  OPERATE, CK(HOLD_ID) | CK(REST), CK(HOLD_ID), 0) \
	_(DENY,     "deny",     OPERATE, CK(HOLD_ID), CK(HOLD_ID), 0) \
	_(QUARANTINE, "quarantine", OPERATE, CK(SESSIONS) | CK(ALL) | CK(TOOL) | CK(WITHIN), 0, \
		    CK(SESSIONS) | CK(ALL) | CK(TOOL)) \
	_(RELEASE,  "release",  OPERATE, CK(SESSIONS) | CK(ALL), 0, CK(SESSIONS) | CK(ALL))

enum control_op {
#define CONTROL_OP_ENUM(e, name, role, allowed, required, any_of) CONTROL_OP_##e,
	CONTROL_OPS(CONTROL_OP_ENUM)
#undef CONTROL_OP_ENUM
	CONTROL_OP_COUNT
};

/* ---- who is on the other end ---- */

enum control_role {
	CONTROL_ROLE_NONE,
	CONTROL_ROLE_VIEW,
	CONTROL_ROLE_OPERATE,
};

const char *control_op_name(enum control_op op);
/* The op by name: 0, or -1 when there is none. */
int control_op_by_name(const char *name, enum control_op *op);
/* The role an op needs; a client with less is refused (CONTROL_E_VIEW). */
enum control_role control_op_role(enum control_op op);
/* True for the ops a view client is refused: they need operate. */
bool control_op_changes(enum control_op op);
/*
 * The rule of the policy entry a request's outcome leaves in the audit
 * (docs/operations.md, "The audit"): "stop by request", "freeze refused",
 * and for a peer without the role "revoke refused: view only", so the entry
 * says which operation was refused. Fixed text and the op's name only.
 */
void control_audit_rule(enum control_op op, bool applied, const char *outcome, char *buf,
			size_t cap);

#define CONTROL_AUDIT_ROWS	64	/* audit rows in one answer */
#define CONTROL_TIMELINE_ROWS	64	/* timeline events in one answer */

/*
 * One request. Which fields mean something depends on op:
 *   detail, stop   session
 *   start          config (an inline object: what ctl sends), or path (a
 *                  file the engine reads: only for a root or the engine's
 *                  own uid; docs/operations.md, "Who may connect: roles")
 *   revoke/restore/hold tool, and ids[0..n_ids) or all; wait_ms for the acks;
 *                  hold/restore may name a class flow instead of a tool;
 *                  a restore's for_s and/or calls make it a time-boxed grant
 *   freeze/thaw    wait_ms for the acks (the kill switch: every live session)
 *   quarantine     ids[0..n_ids), or all (every live session), or tool: the
 *                  live sessions that called it within within_s (default
 *                  QUARANTINE_WITHIN_DEFAULT_S); the reply lists the ids held
 *   release        ids[0..n_ids) or all
 *   forget         ids[0..n_ids) (none: every ended session)
 *   events         follow (push events), snapshots (push snapshots), deltas
 *                  (push them as deltas after the first)
 *   host           refresh (re-run the checks), runtime
 *   hello          client ("ctl" or "console": the kind in the audit's "via")
 *   audit          after (rows with a greater seq; none: the newest rows)
 *   pending        nothing: the held calls waiting now (struct control_pending)
 *   approve/deny   hold_id (a pending call's id); approve's rest: and the
 *                  tool's later calls in its session, without a wait
 *   timeline       after (the events of entries with a greater seq; none: 0)
 * has says which keys it carries (CONTROL_KEY bits): what the parser saw,
 * what control_request_json writes.
 */
struct control_request {
	int64_t id;		/* -1: none readable */
	enum control_op op;
	unsigned has;
	char session[SNAP_ID_MAX];
	char path[CONTROL_PATH_MAX];
	json_t *config;		/* owned; NULL unless an inline config */
	void *config_tree;	/* owned: the config as the parser wrote it (control_digest_read) */
	size_t config_tree_len;
	char tool[SNAP_NAME_MAX];
	size_t n_ids;
	char ids[CONTROL_IDS_MAX][SNAP_ID_MAX];
	bool all;
	int64_t wait_ms;
	bool follow, snapshots, deltas;
	bool refresh;
	char runtime[16];
	char client[16];	/* "" unless a hello names it */
	int64_t after;
	int64_t for_s, calls;	/* a grant's terms (0: not given) */
	int64_t hold_id;	/* approve, deny: the held call */
	bool rest;		/* approve: for the rest of its session */
	int64_t within_s;	/* quarantine --called's window (0: not given) */
	char flow[SNAP_NAME_MAX];	/* hold, restore: a class flow instead of a tool */
};

/*
 * The request as one JSON object, from the same table the parser reads:
 * {"id": N (when >= 0), "op": ..., and each key in has}. NULL when out of
 * memory or a key in has is not the op's. A config is shared, not copied.
 */
json_t *control_request_json(const struct control_request *req);

/*
 * Filling one for control_request_json, each setting the key's bit in has:
 * a string key (WORD, PATH, CLIENT) or one more session id: -1 when it
 * does not fit (the engine would refuse it: CONTROL_E_ARG), never cut.
 */
void control_request_init(struct control_request *r, enum control_op op);
int control_request_str(struct control_request *r, enum control_key k, const char *s);
int control_request_add_id(struct control_request *r, const char *id);
void control_request_bool(struct control_request *r, enum control_key k, bool v);
void control_request_int(struct control_request *r, enum control_key k, int64_t v);
/* An inline config (start): r takes the reference (control_request_free drops it). */
void control_request_config(struct control_request *r, json_t *config);

/*
 * Parse one line (without its newline). 0, or -1 with *error one of the
 * CONTROL_E_* texts; req->id is set whenever the id could be read, so the
 * refusal can name it. Free with control_request_free either way.
 */
int control_parse(const char *line, size_t len, struct control_request *req,
		  const char **error);
void control_request_free(struct control_request *req);

/*
 * Privilege separation (issue 41, section 3): a peer's line is parsed by
 * its connection's airlock-parser (engine/privsep/parser.h), never by the
 * engine. control_digest is the parser's side: the line parsed as above
 * and written as a digest into out (hash_canon_init'd by the caller): a
 * head (id, op, the keys it has, or the refusal's index) and each key's
 * value as bytes, an inline config as its tree form (json_tree.h), never
 * as JSON text. 0; -1 when out of memory.
 *
 * control_digest_read is the engine's: each value held to what the parser
 * holds a JSON value to (a word's characters, a path's slash, a bool's 0
 * or 1, an integer's range, the ids' count), the op's keys, the required
 * ones and the cross-checks again. 0: a request in r; 1: a refusal, its
 * text in *error and r->id set when readable; -1: not a digest the parser
 * could have written (the parser is lost). An inline config stays bytes
 * (config_tree) until control_request_load_config, called only once the
 * peer's role allows the op, builds it with json_tree_read: jansson's
 * constructors, no text parser. The engine tokenizes no JSON of a peer,
 * and a view peer's bytes reach no reader of a config at all. Free r with
 * control_request_free either way.
 */
struct hash_canon;
int control_digest(const char *line, size_t len, struct hash_canon *out);
int control_digest_read(const void *body, size_t len, struct control_request *r,
			const char **error);
/* config_tree into config (an object, json_tree_read): 0, or -1. No tree: 0, nothing done. */
int control_request_load_config(struct control_request *r);

const char *control_role_name(enum control_role r);

/* A group the engine grants a role to; present false when it does not exist. */
struct control_group {
	bool present;
	gid_t gid;
};

/* The kernel's word on a peer (SO_PEERCRED, SO_PEERGROUPS). */
struct control_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	const gid_t *groups;
};

/*
 * Operate: root, the engine's own uid, or a member of the operate group
 * (primary or supplementary); view: a member of the view group; else none.
 */
enum control_role control_role_of(const struct control_peer *p, uid_t self,
				  struct control_group operate, struct control_group view);

/*
 * What a peer with no role is told (the bye's error): fixed text, its uid
 * and the groups that would let it in, so that it needs no one's log:
 * "not allowed: uid 1001 is in neither 'airlock' (operate) nor
 * 'airlock-view' (view)". A name is cut at CONTROL_GROUP_NAME_MAX bytes.
 * The length written, as snprintf's.
 */
#define CONTROL_GROUP_NAME_MAX	64
int control_not_allowed(char *buf, size_t cap, uid_t uid, const char *operate,
			const char *view);

/* ---- frames the engine sends ---- */

/* The frames' structs, as control_tables.c declares them. */
struct control_hello_msg {
	int64_t airlock;
	char engine[256];
	enum control_role role;
	int64_t uid;
	char user[256];
	bool deltas;
};

struct control_reply {
	int64_t id;		/* -1: null */
	int64_t airlock;	/* a bye's */
	bool ok;
	const char *error;
	const char *reason;	/* an error's, fixed text with names; NULL: none */
};

struct control_push_msg {
	uint64_t seq, gap;	/* gap 0: left out */
};

/* An audit answer: rows after the asked seq, oldest first; head: the log's newest. */
struct control_audit {
	size_t n;
	struct audit_row rows[CONTROL_AUDIT_ROWS];
	int64_t head;
};

/* A pending answer: the held calls waiting now, oldest first (never their payload). */
struct control_pending {
	size_t n;
	struct hold_view calls[SNAP_HOLDS_MAX];
};

/*
 * A timeline answer (audit_timeline.h): the events of the entries after
 * the asked seq, oldest first, at most CONTROL_TIMELINE_ROWS; next: the
 * last entry read (the next ask's after); more: cut at the bound.
 */
struct control_timeline {
	size_t n;
	struct timeline_row rows[CONTROL_TIMELINE_ROWS];
	int64_t next;
	bool more;
};

#define CONTROL_SESSIONS_MAX	1024	/* sessions one answer names: every one an engine holds */

/* One session's acknowledgement of a cutover. */
struct control_ack {
	char session[SNAP_ID_MAX];
	enum cutover_result result;
	int64_t waited_us;
};

/*
 * A cutover's answer (revoke, restore, hold, a grant, freeze, thaw): its
 * revision, how many sessions it targeted, what it acted on (the catalog
 * tool, an alias resolved; a flow; empty for freeze and thaw), and for
 * each session its ack, or that it still waits, or that it ended first;
 * unsaved when the audit log refused what stands on every session now.
 */
struct control_cutover {
	int64_t revision;
	size_t targets;
	char tool[SNAP_NAME_MAX];
	size_t n_acks, n_pending, n_ended;
	struct control_ack acks[CONTROL_SESSIONS_MAX];
	char pending[CONTROL_SESSIONS_MAX][SNAP_ID_MAX];
	char ended[CONTROL_SESSIONS_MAX][SNAP_ID_MAX];
	bool unsaved;		/* the log refused what stands now: a restart would not keep it */
};

/*
 * The answers of the other changes, one struct with a table for each op:
 * start and stop (session: the one started, or the one the id or prefix
 * picked), stop-all (stopped: how many), forget (ids forgotten, kept: the
 * named ones not ended), quarantine and release (ids: the sessions acted
 * on).
 */
struct control_done {
	char session[SNAP_ID_MAX];
	size_t stopped;
	size_t n_ids, n_kept;
	char ids[CONTROL_SESSIONS_MAX][SNAP_ID_MAX];
	char kept[CONTROL_SESSIONS_MAX][SNAP_ID_MAX];
};

/* {"airlock": 1, "engine": ..., "role": ..., "uid": N, "user": ...} */
json_t *control_hello(const char *engine, enum control_role role, uid_t uid,
		      const char *user);
/* {"airlock": 1, "ok": false, "error": reason}: the last frame before a close. */
json_t *control_bye(const char *reason);
/* {"id": N, "ok": true} (id -1: null), to add fields to. */
json_t *control_ok(int64_t id);
/* {"id": N, "ok": false, "error": error[, "reason": reason]} (reason NULL: none) */
json_t *control_error(int64_t id, const char *error, const char *reason);
/* {"seq": N, ["gap": N,] key: body}; steals body. */
json_t *control_push(uint64_t seq, uint64_t gap, const char *key, json_t *body);

/*
 * One compact line plus newline, malloc'd; NULL when out of memory or
 * longer than max. Does not steal v.
 */
char *control_line(const json_t *v, size_t max, size_t *len);

/* The snapshot.h types as JSON: names, numbers and states only. */
json_t *control_row_json(const struct session_row *r);
json_t *control_snapshot_json(const struct supervisor_snapshot *s);
json_t *control_detail_json(const struct session_detail *d);
json_t *control_event_json(const struct supervisor_event *e);
json_t *control_host_json(const struct host_snapshot *h);
/* One upstream's confinement, as a detail's "upstreams" has it (doctor --json too). */
json_t *control_upstream_json(const struct upstream_view *u);

/*
 * And back (control_codec.c), for a console attached to an engine: 0, or
 * -1 when v is not one (a missing field stays zero; an unknown word makes
 * the row or event unreadable, never guessed). The snapshot's rows array
 * grows as needed (free it with supervisor_snapshot_free); a row it cannot
 * read is left out.
 */
int control_row_from_json(const json_t *v, struct session_row *r);
int control_snapshot_from_json(const json_t *v, struct supervisor_snapshot *s);
int control_event_from_json(const json_t *v, struct supervisor_event *e);
/*
 * Whether an event of e's kind carries a state, an end, an ack's result:
 * what the event's table writes for it, so a reader shows those fields
 * only where the engine says them (a zero there is no word).
 */
bool control_event_says_state(const struct supervisor_event *e);
bool control_event_says_end(const struct supervisor_event *e);
bool control_event_says_result(const struct supervisor_event *e);

/*
 * Snapshot deltas (control_delta.c, docs/operations.md): the delta that
 * turns snapshot body from into to, NULL when it cannot be said (send to
 * whole); and applied in place: 0, or -1 when it does not apply to base
 * (another base, malformed), base then unusable.
 */
json_t *control_snapshot_delta(const json_t *from, const json_t *to);
int control_snapshot_apply(json_t *base, const json_t *delta);
int control_detail_from_json(const json_t *v, struct session_detail *d);
int control_host_from_json(const json_t *v, struct host_snapshot *h);
int control_hello_from_json(const json_t *v, struct control_hello_msg *h);
/* An audit answer's fields into a reply (0 or -1), and back. */
int control_audit_into(const struct control_audit *a, json_t *reply);
int control_audit_from_json(const json_t *v, struct control_audit *a);
/* A pending answer's "pending" array into a reply (0 or -1), and back. */
int control_pending_into(const struct control_pending *p, json_t *reply);
int control_pending_from_json(const json_t *v, struct control_pending *p);
/* A timeline answer's fields into a reply (0 or -1), and back. */
int control_timeline_into(const struct control_timeline *t, json_t *reply);
int control_timeline_from_json(const json_t *v, struct control_timeline *t);
/* A cutover's answer's fields into a reply (0 or -1), and back. */
int control_cutover_into(const struct control_cutover *a, json_t *reply);
int control_cutover_from_json(const json_t *v, struct control_cutover *a);
/*
 * The answer of op (start, stop, stop-all, forget, quarantine, release)
 * into a reply (0 or -1), and back (-1 too for another op).
 */
int control_done_into(enum control_op op, const struct control_done *d, json_t *reply);
int control_done_from_json(enum control_op op, const json_t *v, struct control_done *d);

/* The acknowledgement latency histogram's upper bounds, in µs (then +Inf). */
#define CONTROL_ACK_BUCKETS_US { 100, 1000, 10000, 100000, 1000000, 10000000 }
#define CONTROL_ACK_BUCKETS 6

/* What the engine counts beside the snapshot, for the metrics text. */
struct control_counts {
	uint64_t cutovers;	/* CUTOVER events seen */
	uint64_t acks;		/* CUTOVER_ACK events seen, and how long each waited: */
	uint64_t ack_le[CONTROL_ACK_BUCKETS];	/* at most each bound (cumulative) */
	uint64_t ack_sum_us;
	uint64_t lease_failures;	/* LEASE_FAILED events seen */
	uint64_t clients;	/* connected now */
	uint64_t refused;	/* peers refused at accept */
	uint64_t refused_view;	/* changes a view peer asked for, refused */
	uint64_t dropped;	/* pushed frames dropped for slow clients */
	uint64_t bytes_sent;	/* written to clients: replies and pushed frames */
	uint64_t pushed_whole;	/* snapshots pushed whole, a client each */
	uint64_t pushed_delta;	/* snapshots pushed as a delta on the client's last */
	uint64_t rss_bytes;	/* the engine's resident set */
};

/* One acknowledgement that waited waited_us, into the histogram. */
void control_count_ack(struct control_counts *c, int64_t waited_us);

/* OpenMetrics text ("# EOF" last), malloc'd; NULL when out of memory. */
char *control_metrics_text(const struct supervisor_snapshot *s, const struct control_counts *c);

#endif
