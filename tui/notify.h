#ifndef AIRLOCK_NOTIFY_H
#define AIRLOCK_NOTIFY_H

/*
 * Desktop notifications (libnotify), off the UI thread. Every libnotify
 * call is a synchronous D-Bus round trip that a slow or hung notification
 * server can hold for D-Bus's default timeout (25 s); so they all run on
 * the notifier's own thread, and the console only ever touches a small
 * queue under a mutex. Built without libnotify, every notifier is inactive.
 * libnotify's state is global: open one notifier per process.
 *
 * The texts are meant to be alert_format() lines. The notifier still keeps
 * only printable ASCII and turns '<', '>' and '&' into '?', since a server
 * may read the body as markup.
 */

#include <stdbool.h>

#define NOTIFY_QUEUE_MAX	16	/* texts waiting; one more is dropped */
#define NOTIFY_TEXT_MAX		256	/* a longer text is cut */
#define NOTIFY_CLOSE_MS		2000	/* close waits so long for queued texts */

struct notifier;

/*
 * Starts a thread when a session bus is there (DBUS_SESSION_BUS_ADDRESS
 * set); without one, returns at once a notifier that drops everything,
 * without trying to connect. Never fails the console, never blocks it:
 * NULL only when out of memory, and every call below accepts NULL. If
 * notify_init fails on the thread, the notifier turns inactive then.
 */
struct notifier *notifier_open(const char *app_name);

/* Queue one notification (summary "airlock", body text); returns at once. */
void notifier_send(struct notifier *n, const char *text);

/* True while a thread is there to show what is sent. */
bool notifier_active(const struct notifier *n);

/* Texts lost because the queue was full (an inactive notifier counts none). */
unsigned long notifier_dropped(const struct notifier *n);

/*
 * Gives the thread up to NOTIFY_CLOSE_MS to show what is queued, then
 * joins it. A thread still stuck in a D-Bus call after that is left to
 * finish alone (it frees the notifier): close never waits longer.
 */
void notifier_close(struct notifier *n);

#endif
