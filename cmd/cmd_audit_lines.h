#ifndef AIRLOCK_CMD_AUDIT_LINES_H
#define AIRLOCK_CMD_AUDIT_LINES_H

/*
 * The lines an audit log's reader prints, one an entry or one an event,
 * as text or a JSON object: `airlock audit tail` and `audit timeline`
 * from the log's file, `airlock ctl audit` and `ctl timeline` from the
 * engine's answers, so both print the same for the same log. Names, ids,
 * counts, times and hash prefixes only (snapshot.h's rows): never payload.
 */

#include <stdbool.h>

#include "snapshot.h"

/* One entry: "SEQ TIME SESSION TYPE TOOL DECISION RULE rREV LATus HASH". 0, or EXIT_ERROR. */
int audit_line_entry(bool json, const struct audit_row *r);

/* One event of the policy story: "SEQ TIME KIND ...", as its kind says. 0, or EXIT_ERROR. */
int audit_line_event(bool json, const struct timeline_row *r);

#endif
