#ifndef AIRLOCK_CMD_CTL_INT_H
#define AIRLOCK_CMD_CTL_INT_H

/*
 * airlock ctl's insides, shared by its four files: cmd_ctl.c
 * (connecting, one request and its reply, the commands that change
 * things), cmd_ctl_show.c (what the engine holds now: status, sessions,
 * tools), cmd_ctl_watch.c (what is followed as it happens: held calls,
 * events, the operator's approve or deny of a held call, the host
 * checks' run) and cmd_ctl_log.c (what the engine's audit log tells:
 * its entries, its policy story).
 */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cli.h"
#include "control.h"
#include "frame.h"

#define CTL_TIMEOUT_MS	10000	/* for a reply, beyond what the request waits */
#define CTL_WAIT_MS	5000	/* revoke/restore/freeze/thaw: acks, by default */

struct ctl {
	struct cli_opts o;
	const char *verb, *arg;
	int fd;
	struct linebuf in;
	int64_t next_id;
	json_t *hello;
	struct control_request req;	/* the one being built and sent */
	int64_t for_s, calls;		/* restore --for, --calls: a grant (0: not given) */
	int64_t within_s;		/* quarantine --called --within (0: not given) */
	char since[CLI_SINCE_MAX];	/* timeline --since, stored form ("": not given) */
};

/* The next JSON object from the engine; NULL at EOF, timeout or garbage. */
json_t *ctl_next_frame(struct ctl *c, int64_t deadline);
/*
 * Send c->req and read its reply (waiting wait_ms more than usual): -1
 * with *out the reply when it says ok (the caller goes on), else the exit
 * status, its reason printed.
 */
int ctl_call(struct ctl *c, int64_t wait_ms, json_t **out);
/* A fresh request for op, or for the verb ctl was given. */
struct control_request *ctl_request(struct ctl *c, enum control_op op);
struct control_request *ctl_verb_request(struct ctl *c);
/* A reply's member as text ("" when absent) or as a number (0). */
const char *ctl_str_of(const json_t *o, const char *key);
long long ctl_int_of(const json_t *o, const char *key);
/* Print a reply as fmt says (with word), or as JSON with --json; exit 0. */
int ctl_done(struct ctl *c, json_t *r, const char *fmt, const char *word);

/* cmd_ctl_show.c: status; sessions and tools (the verb says which). */
int ctl_status(struct ctl *c);
int ctl_sessions(struct ctl *c);

/* cmd_ctl_watch.c: pending [--follow], approve and deny, events [--follow], host. */
int ctl_pending(struct ctl *c);
int ctl_decide(struct ctl *c);
int ctl_events(struct ctl *c);
int ctl_host(struct ctl *c);

/* cmd_ctl_log.c: audit [--follow], timeline [--since TIME] [--follow]. */
int ctl_audit(struct ctl *c);
int ctl_timeline(struct ctl *c);

#endif
