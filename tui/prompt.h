#ifndef AIRLOCK_PROMPT_H
#define AIRLOCK_PROMPT_H

/*
 * The console's one-line editor, for the ':' command line and the '/'
 * filter: printable text, Backspace, Ctrl-U, Ctrl-W, Enter and Esc; on
 * the ':' line also Up and Down through the commands entered (this run
 * only, never written down). It edits text only: Tab is handed back to
 * the caller (verbs.c knows what each word's place takes), and what an
 * entered line does is verbs.c's.
 */

#include <stdbool.h>
#include <stddef.h>

#define PROMPT_INPUT_MAX	256
#define PROMPT_HISTORY_MAX	32	/* ':' commands Up and Down recall */

struct prompt {
	char input[PROMPT_INPUT_MAX];
	size_t len;
	char commands[PROMPT_HISTORY_MAX][PROMPT_INPUT_MAX];	/* entered, oldest first */
	size_t n_commands;
	size_t command_at;		/* the entry Up/Down show; n_commands: the draft */
	char draft[PROMPT_INPUT_MAX];	/* the line being typed, kept while browsing */
};

enum prompt_result {
	PROMPT_EDITING,
	PROMPT_ENTERED,		/* Enter: the line is in input (and remembered) */
	PROMPT_CANCELLED,	/* Esc */
	PROMPT_COMPLETE,	/* Tab on the ':' line: the caller completes input, then prompt_edited */
};

/* Edit text from its end; Up starts from the newest command. */
void prompt_start(struct prompt *p, const char *text);

/*
 * One key on the line. command: the ':' line, whose entered lines are
 * remembered and whose Tab is the caller's (verbs_complete).
 */
enum prompt_result prompt_key(struct prompt *p, int key, bool command);

/* input was changed from outside (completed). */
void prompt_edited(struct prompt *p);

#endif
