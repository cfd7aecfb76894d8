#ifndef AIRLOCK_LINK_LOCAL_H
#define AIRLOCK_LINK_LOCAL_H

/*
 * The engine in this process (link.h), and what only it has: its creation
 * (the supervisor and the audit log it writes, owned by the link), the
 * check of the configurations it is to start, and its shutdown, whose
 * count of containers left the console reports. The calls below take only
 * a link from link_local_open.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "hash.h"
#include "link.h"

struct link_local_options {
	const char *audit_path;	/* the log the engine writes (created when missing) */
	size_t sessions_max;	/* 0: the host's default */
	const char *via;	/* who the link's requests are from: this uid, via this */
};

#define LINK_LOCAL_NO_AUDIT	(-2)	/* link_local_open: err is the audit log's */

/*
 * The supervisor on worker threads (orphans reaped first) and its audit
 * log: 0, or -1 (LINK_LOCAL_NO_AUDIT when the log would not open) and err.
 * link_close shuts it down, if link_local_shutdown did not.
 */
int link_local_open(const struct link_local_options *o, struct link **out, struct al_err *err);

/*
 * Before any starts: each file loads and names an image this daemon has.
 * The first one's runtime into runtime[cap] (left as it is when n is 0).
 */
int link_local_check(const char *const *paths, size_t n, char *runtime, size_t cap,
		     struct al_err *err);

/* Sessions live now. */
size_t link_local_live(struct link *l);

/*
 * Stop every session and wait for them: the containers left (-1: the daemon
 * did not answer); *refused (if non-NULL): the entries the audit log
 * refused. Again after the first: the count again.
 */
int link_local_shutdown(struct link *l, uint64_t *refused);

/* The audit log's head (seq 0: empty); -1 when it cannot be read. */
int link_local_audit_head(struct link *l, int64_t *seq, char hash[HASH_HEX_LEN + 1]);

#endif
