#ifndef AIRLOCK_DISPATCH_H
#define AIRLOCK_DISPATCH_H

struct app;

/*
 * One key from the terminal: to the overlay that has it (question, help,
 * prompt), else through the keymap (the view's section, then generic) to
 * a named request and its handler. Returns the APP_* flags for the loop.
 */
int dispatch_key(struct app *a, int key);

#endif
