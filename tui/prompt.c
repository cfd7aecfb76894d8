#include "prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>	/* the KEY_* codes keypad() delivers */

#include "complete.h"
#include "verbs.h"
#include "view.h"

#define CTRL_KEY(c)	((c) & 0x1f)

static void
set_input(struct prompt *p, const char *text)
{
	snprintf(p->input, sizeof p->input, "%s", text);
	p->len = strlen(p->input);
}

void
prompt_start(struct prompt *p, const char *text)
{
	set_input(p, text);
	p->command_at = p->n_commands;
}

/* The line entered is remembered, unless it repeats the last one. */
static void
remember(struct prompt *p)
{
	if (!p->input[0] || (p->n_commands && strcmp(p->commands[p->n_commands - 1], p->input) == 0))
		return;
	if (p->n_commands == PROMPT_HISTORY_MAX) {
		memmove(p->commands[0], p->commands[1], sizeof p->commands[0] * (PROMPT_HISTORY_MAX - 1));
		p->n_commands--;
	}
	memcpy(p->commands[p->n_commands++], p->input, sizeof p->input);
}

/* Up (-1) and Down (+1) through the commands entered; past the last, the draft again. */
static void
recall(struct prompt *p, int step)
{
	if ((step < 0 && p->command_at == 0) || (step > 0 && p->command_at >= p->n_commands))
		return;
	if (p->command_at == p->n_commands)
		snprintf(p->draft, sizeof p->draft, "%s", p->input);
	p->command_at += step;
	set_input(p, p->command_at == p->n_commands ? p->draft : p->commands[p->command_at]);
}

/* Ctrl-W: the word before the cursor (the line's end), and the blanks after it. */
static void
delete_word(struct prompt *p)
{
	while (p->len > 0 && p->input[p->len - 1] == ' ')
		p->len--;
	while (p->len > 0 && p->input[p->len - 1] != ' ')
		p->len--;
	p->input[p->len] = '\0';
}

/* Live sessions' ids as typed (without "s-"), into c from n; returns the new n. */
static size_t
live_ids(const struct supervisor_snapshot *snap, const char **c, size_t n)
{
	size_t i;

	for (i = 0; i < snap->n; i++)
		if (snap->rows[i].state != SESSION_STATE_ENDED)
			c[n++] = snap->rows[i].id + (strncmp(snap->rows[i].id, "s-", 2) == 0 ? 2 : 0);
	return n;
}

/* A tool a cutover may name: a live session's, or one that stands revoked. */
static size_t
tool_names(const struct supervisor_snapshot *snap, const char **c, size_t n)
{
	size_t i, j;

	for (i = 0; i < snap->n_standing; i++)
		c[n++] = snap->standing[i];
	for (i = 0; i < snap->n; i++)
		for (j = 0; snap->rows[i].state != SESSION_STATE_ENDED &&
		     j < snap->rows[i].n_tools && j < SNAP_TOOLS_MAX; j++)
			c[n++] = snap->rows[i].tools[j].name;
	return n;
}

/* The candidates for the word after words[0 .. nw-1], by the argument its command takes. */
static size_t
candidates(struct prompt *p, const struct supervisor_snapshot *snap, char words[][64], size_t nw,
	   const char **c)
{
	const struct verb *v = nw ? verb_find(words[0]) : NULL;
	size_t i, n = 0;

	if (nw == 0) {
		for (i = 0; i < n_verbs; i++)
			c[n++] = verbs[i].name;
	} else if (v && v->arg == VERB_ARG_TOOL_SCOPE && nw == 1) {
		n = tool_names(snap, c, n);
	} else if (v && v->arg == VERB_ARG_TOOL_SCOPE && nw == 2) {
		c[n++] = "all";
		c[n++] = "marked";
		n = live_ids(snap, c, n);
	} else if (v && v->arg == VERB_ARG_SESSION && nw == 1) {
		n = live_ids(snap, c, n);
	} else if (v && v->arg == VERB_ARG_VIEW && nw == 1) {
		for (i = 0; i < VIEW_COUNT; i++)
			c[n++] = views[i]->name;
	} else if (v && v->arg == VERB_ARG_FILE && nw == 1) {
		complete_path(p->input, sizeof p->input);
	}
	return n;
}

/*
 * Tab: the word at the line's end, from what its place takes: a command;
 * after revoke or restore a tool, then all, marked or a session; after
 * stop a session; after view a view; after run or apply a file's path.
 */
static void
complete_input(struct prompt *p, const struct supervisor_snapshot *snap)
{
	char words[2][64];
	size_t at, nw = complete_words(p->input, words, 2, &at);
	const char **c = calloc(snap->n * SNAP_TOOLS_MAX + SNAP_STANDING_MAX + n_verbs, sizeof *c);

	if (!c)
		return;
	complete_last(p->input, sizeof p->input, c, candidates(p, snap, words, nw, c));
	p->len = strlen(p->input);
	free(c);
}

static bool
is_enter(int key)
{
	return key == '\r' || key == '\n' || key == KEY_ENTER;
}

enum prompt_result
prompt_key(struct prompt *p, int key, bool command, const struct supervisor_snapshot *snap)
{
	if (key == 27)
		return PROMPT_CANCELLED;
	if (is_enter(key)) {
		if (command)
			remember(p);
		return PROMPT_ENTERED;
	}
	if ((key == KEY_UP || key == KEY_DOWN) && command)
		recall(p, key == KEY_UP ? -1 : 1);
	else if (key == '\t' && command)
		complete_input(p, snap);
	else if (key == CTRL_KEY('u'))
		set_input(p, "");
	else if (key == CTRL_KEY('w'))
		delete_word(p);
	else if ((key == KEY_BACKSPACE || key == 127 || key == 8) && p->len > 0)
		p->input[--p->len] = '\0';
	else if (key >= 32 && key < 127 && p->len + 1 < sizeof p->input) {
		p->input[p->len++] = (char)key;
		p->input[p->len] = '\0';
	}
	return PROMPT_EDITING;
}
