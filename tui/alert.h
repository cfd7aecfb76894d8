#ifndef AIRLOCK_ALERT_H
#define AIRLOCK_ALERT_H

/*
 * One line of fixed text for a supervisor event: for the status line, the
 * event log and desktop notifications. Nothing in the line comes from an
 * agent. It is built from fixed words, numbers, and the names the event
 * carries, each reduced to a safe form:
 *
 *  - a session id "s-<hex>" is shown as its first 8 hex digits; an id of
 *    another shape reads "(odd session id)", none "(no session)";
 *  - tool names and check ids keep [A-Za-z0-9._:/@+-] and
 *    write any other byte as \xHH (no control bytes for the terminal, no
 *    markup for a notification server, no spaces that could fake a second
 *    field), never as a placeholder;
 *  - a name the event lacks is said in words: a freeze or thaw is about
 *    "all calls", a cutover without a tool says "no tool named";
 *  - the event's `reason` is never copied: it is looked up in the table of
 *    fixed words the engine uses for that kind (gate verdicts, lease
 *    failures, inspection phases). A word the table lacks shows as
 *    "other", so a new engine reason can cost precision but never leak.
 *
 * The line is cut to fit cap (always NUL-terminated when cap > 0); every
 * byte in it is printable ASCII, so a cut never splits a character.
 */

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

#define ALERT_TEXT_MAX 160	/* every line fits; a smaller cap cuts it */

void alert_format(const struct supervisor_event *e, char *buf, size_t cap);

/*
 * True for events the operator must see: they stick on the status line and
 * go to the desktop. The engine's rule, applied again here so that an event
 * built without the flag is judged the same: e->alert, or a watchdog that
 * fired, a refused admission, an abnormal end, a cutover, a reaper that
 * acted, a cutover ack that was rejected.
 */
bool alert_wanted(const struct supervisor_event *e);

/*
 * A call began waiting for an operator (airlock ctl hold): "hold 7:
 * session 3f9a1c02, fs.write waits for approve or deny". Its id, session
 * and catalog tool only, each in its safe form as above: nothing of its
 * alias, classes, size, hash or payload.
 */
void alert_hold(const struct hold_view *h, char *buf, size_t cap);
/* More began waiting at once than are said one by one: how many more. */
void alert_holds_more(size_t more, char *buf, size_t cap);

#endif
