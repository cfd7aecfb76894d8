#ifndef AIRLOCK_VERBS_H
#define AIRLOCK_VERBS_H

/*
 * The console's ':' commands, one table as commands.c is for the command
 * line: each name, the argument it takes (which also says what Tab
 * completes after it), whether read-only mode refuses it, its usage for
 * the help screen, and its handler. (Called verbs so that no name here
 * meets a subcommand's cmd_*.)
 */

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

struct app;

enum verb_arg {
	VERB_ARG_NONE,
	VERB_ARG_FILE,		/* a path; without it the word is no command */
	VERB_ARG_TOOL_SCOPE,	/* TOOL [all|marked|SESSION] */
	VERB_ARG_SESSION,	/* a live session, by a prefix of its id */
	VERB_ARG_VIEW,		/* a view's name */
	VERB_ARG_TEXT,		/* any word */
};

struct verb {
	const char *name;
	const char *alias;	/* or NULL */
	enum verb_arg arg;
	bool destructive;	/* read-only mode refuses it (in dispatch.c) */
	const char *usage;	/* after the name on the help screen ("FILE"), or NULL */
	/* The handler: arg and arg2 are the words after the name, or NULL. */
	int (*run)(struct app *a, const char *name, const char *arg, const char *arg2);
};

extern const struct verb verbs[];
extern const size_t n_verbs;

/*
 * The commands for the help screen, on one line: "Commands: run FILE, …".
 * Neighbours with the same usage share it ("revoke|restore TOOL …"); a
 * command without usage (help itself) is left out.
 */
void verbs_summary(char *buf, size_t cap);

/* The command called name (or by its alias), or NULL. */
const struct verb *verb_find(const char *name);

/* The command line names (its first word, into word[cap]), or NULL. */
const struct verb *verb_of_line(const char *line, char *word, size_t cap);

/*
 * Carry out one ':' line; returns the APP_* flags for the loop. Read-only
 * mode is the dispatcher's to enforce, before this.
 */
int verbs_run(struct app *a, const char *line);

/*
 * Tab on the ':' line (line[cap]): its last word, from what its place
 * takes: a command; after revoke or restore a tool, then all, marked or a
 * session; after stop a session; after view a view; after run or apply a
 * file's path.
 */
void verbs_complete(char *line, size_t cap, const struct supervisor_snapshot *snap);

#endif
