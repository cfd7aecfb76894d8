#ifndef AIRLOCK_AUDIT_VERIFY_H
#define AIRLOCK_AUDIT_VERIFY_H

/*
 * `airlock audit verify`: re-check a log's hash chain from its file,
 * opened read-only beside (or without) the engine that writes it; count
 * its entries by the vocabulary of audit.h, list the calls without an
 * outcome, and hold the log to an anchor recorded outside it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"	/* AUDIT_D_COUNT */
#include "err.h"
#include "hash.h"
#include "ids.h"

/*
 * A call whose dispatch is in the log and whose terminal entry is not. The
 * names are as stored, bounded, with control bytes shown as '?'.
 */
struct audit_unknown {
	int64_t seq;		/* of the dispatch entry */
	char session_id[64];
	char call_id[ID_MAX];
	char tool[64];
};

struct audit_verify {
	int64_t entries;	/* entries checked */
	bool ok;
	int64_t first_bad_seq;	/* the first sequence that fails, when !ok;
				   0 when the damage is in the file, not an entry */
	char reason[96];	/* fixed text: "hash mismatch", "sequence gap", … */
	int64_t decisions[AUDIT_D_COUNT];	/* entries per decision */
	int64_t unrecognised;	/* entries whose (type, decision) is not in the table */
	/*
	 * Unknown outcomes, by session then sequence (malloc'd; free with
	 * audit_verify_free). After a crash these are the calls whose terminal
	 * entry had not been committed; while an engine is still running on
	 * the file they include its calls in flight.
	 */
	struct audit_unknown *unknown;
	size_t n_unknown;
	/*
	 * Sessions whose session_start is in the log and whose session_end
	 * is not, oldest first (call_id and tool empty; malloc'd, freed with
	 * the rest): still running under an engine that writes the file, or
	 * left by an engine that died.
	 */
	struct audit_unknown *unended;
	size_t n_unended;
	/*
	 * The newest entry read (0 and "" for an empty log): recorded
	 * outside the log, it is an anchor for a later verify.
	 */
	int64_t head_seq;
	char head_hash[HASH_HEX_LEN + 1];
	bool anchored;		/* an anchor was given and its entry matched */
	/*
	 * The engine's newest standing entry (session "engine", a policy
	 * entry whose rule starts "standing"): what stood on every session as
	 * of it, and what the next engine on this log takes up
	 * (docs/guarantees.md, "What stands outlives the engine"). Its rule
	 * says what, e.g. "standing: 1 revoked, frozen" (printable, cut to
	 * fit); an engine's "standing restored" is told by the sets of its
	 * detail, as a saved entry's rule is. seq 0 when the log has none.
	 */
	int64_t standing_seq;
	int64_t standing_revision;
	char standing_rule[48];
};

/*
 * An entry as recorded outside the log: its sequence and entry hash. The
 * chain proves everything up to an entry it reaches; an anchor makes a
 * cut tail (entries deleted from the newest back) or a tail rewritten
 * with recomputed hashes show, from the anchor's entry back.
 */
struct audit_anchor {
	int64_t seq;
	char hash[HASH_HEX_LEN + 1];
};

/* "SEQ:HASH" (SEQ > 0, HASH 64 hex digits, either case: kept lowercase, as the log writes it). -1 when it is not. */
int audit_anchor_parse(const char *text, struct audit_anchor *out);

/*
 * Re-check the whole chain of the database at path (opened read-only).
 * Unknown outcomes do not make the chain bad: they are what a crash is
 * allowed to leave (docs/guarantees.md).
 */
int audit_verify_file(const char *path, struct audit_verify *out, struct al_err *err);
/* The same, and the log must hold the anchor's entry with its hash (NULL: none). */
int audit_verify_anchored(const char *path, const struct audit_anchor *anchor,
			  struct audit_verify *out, struct al_err *err);
void audit_verify_free(struct audit_verify *v);

/*
 * The rule a standing entry's sets are saved under, of its detail's
 * {"revoked": [...], "held": [...], "flows": [...], "frozen": {...}}:
 * "standing: 2 revoked, 1 flows, frozen" (the parts there are, "nothing"
 * when none is), cut to cap.
 */
void audit_standing_rule(char *rule, size_t cap, const json_t *sets);

#endif
