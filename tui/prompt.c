#include "prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>	/* the KEY_* codes keypad() delivers */


#define CTRL_KEY(c)	((c) & 0x1f)

static void
set_input(struct prompt *p, const char *text)
{
	snprintf(p->input, sizeof p->input, "%s", text);
	p->len = strlen(p->input);
}

void
prompt_edited(struct prompt *p)
{
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

static bool
is_enter(int key)
{
	return key == '\r' || key == '\n' || key == KEY_ENTER;
}

enum prompt_result
prompt_key(struct prompt *p, int key, bool command)
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
		return PROMPT_COMPLETE;
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
