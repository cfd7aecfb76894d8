#include "journal.h"

#include "ids.h"

int
journal_write(const struct journal *j, struct audit_lane *lane, enum audit_decision d,
	      const struct audit_entry *e, struct al_err *err)
{
	char entry_id[AUDIT_ENTRY_ID_MAX];
	struct audit_entry row = *e;

	if (d < 0 || d >= AUDIT_D_COUNT)
		return al_fail(err, "journal: not a decision of the audit table");
	row.type = audit_type_id(audit_decision_type(d));
	row.decision = audit_decision_id(d);
	if (!row.entry_id) {
		if (id_random(entry_id, sizeof entry_id, "", (AUDIT_ENTRY_ID_MAX - 1) / 2) < 0)
			return al_fail(err, "journal: cannot draw an entry id");
		row.entry_id = entry_id;
	}
	if (lane ? audit_append_later(j->audit, lane, &row, err) < 0
		 : audit_append(j->audit, &row, NULL, NULL, err) < 0)
		return -1;
	if (j->otlp)
		otlp_export(j->otlp, &row, row.entry_id);	/* failures are counted there */
	return 0;
}
