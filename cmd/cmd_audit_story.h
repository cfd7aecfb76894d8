#ifndef AIRLOCK_CMD_AUDIT_STORY_H
#define AIRLOCK_CMD_AUDIT_STORY_H

/*
 * `airlock audit timeline` and `airlock audit propose`: what an incident
 * review reads from a log (engine/audit/audit_timeline.h,
 * audit_propose.h). cmd_audit.c parses the command line and calls these.
 */

#include <stdbool.h>

struct audit_story_args {
	const char *db;
	const char *since;	/* a stored UTC time to compare with, or NULL */
	const char *session;	/* propose: one session's whole id, or NULL */
	bool json;		/* timeline: JSON lines */
};

/* One line an event (JSON lines with json); EXIT_OK, or EXIT_ERROR. */
int cmd_audit_timeline(const struct audit_story_args *a);

/*
 * The proposed incident file on stdout and a line on stderr for each
 * denial it cannot express: EXIT_OK when a file was printed, EXIT_REFUSED
 * when there was nothing to propose, EXIT_ERROR when the log is unread.
 */
int cmd_audit_propose(const struct audit_story_args *a);

#endif
