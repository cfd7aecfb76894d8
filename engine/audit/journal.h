#ifndef AIRLOCK_JOURNAL_H
#define AIRLOCK_JOURNAL_H

/*
 * The journal: the one way the engine writes an audit entry
 * (docs/architecture.md). A writer — a session's start, admissions and end,
 * the gateway's dispatch and call entries, the supervisor's policy entries —
 * names its entry by a typed decision; the journal takes the entry's type
 * and decision strings from audit.h's table, appends the entry to the log
 * and hands it to the OTLP exporter when one is configured. So a row can
 * carry no word outside the table, and no writer can forget its span.
 */

#include "audit.h"
#include "err.h"
#include "otlp.h"

struct journal {
	struct audit *audit;	/* required */
	struct otlp *otlp;	/* NULL: no export */
};

/*
 * Write e as decision d (e's own type and decision are ignored).
 * With lane NULL the entry is durable when this returns 0 (audit_append).
 * With a lane it rides on the log's next commit (audit_append_later): 0
 * once its place in the sequence is fixed; the lane says later whether it
 * was committed. An entry without an id gets one drawn here, so its span
 * and its row name the same entry. An export failure is counted by the
 * exporter and never fails the write. -1 with fixed text in err.
 */
int journal_write(const struct journal *j, struct audit_lane *lane, enum audit_decision d,
		  const struct audit_entry *e, struct al_err *err);

#endif
