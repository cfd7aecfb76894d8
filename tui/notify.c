#include "notify.h"

#include <stdlib.h>

#include "airlock-config.h"

#if HAVE_LIBNOTIFY

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <libnotify/notify.h>

#include "clock.h"
#include "thread.h"

#define NOTIFY_SUMMARY		"airlock"
#define NOTIFY_APP_MAX		64
#define NOTIFY_DISPATCH_MAX	64	/* bus signals handled after one show */

struct notifier {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* the thread waits here for a text or close */
	pthread_cond_t done;	/* close waits here for the thread (monotonic) */
	pthread_t thread;
	bool started;
	/* Under lock. */
	bool closing;		/* show what is queued, then stop */
	bool finished;		/* the thread will not touch n again */
	bool orphaned;		/* close gave up on it: the thread frees n */
	size_t head, count;
	char queue[NOTIFY_QUEUE_MAX][NOTIFY_TEXT_MAX];
	/* Read by the console without the lock. */
	atomic_bool active;
	atomic_ulong dropped;
	char app[NOTIFY_APP_MAX];
};

/* Printable ASCII only, and no markup: see notify.h. */
static void
notifier_clean(char *out, size_t cap, const char *in)
{
	size_t i;

	for (i = 0; i + 1 < cap && in[i]; i++) {
		unsigned char c = (unsigned char)in[i];

		out[i] = c < 0x20 || c > 0x7e || c == '<' || c == '>' || c == '&' ? '?' : (char)c;
	}
	out[i] = '\0';
}

static struct notifier *
notifier_new(const char *app_name)
{
	struct notifier *n = calloc(1, sizeof *n);

	if (!n)
		return NULL;
	notifier_clean(n->app, sizeof n->app, app_name && app_name[0] ? app_name : "airlock");
	atomic_init(&n->active, false);
	atomic_init(&n->dropped, 0);
	return n;
}

static void
notifier_free(struct notifier *n)
{
	if (n->started) {
		pthread_cond_destroy(&n->done);
		pthread_cond_destroy(&n->work);
		pthread_mutex_destroy(&n->lock);
	}
	free(n);
}

/* The next text to show; false once closing (or abandoned) and nothing is left. */
static bool
notifier_next(struct notifier *n, char *text)
{
	bool have;

	pthread_mutex_lock(&n->lock);
	while (n->count == 0 && !n->closing)
		pthread_cond_wait(&n->work, &n->lock);
	have = n->count > 0 && !n->orphaned;
	if (have) {
		memcpy(text, n->queue[n->head], NOTIFY_TEXT_MAX);
		n->head = (n->head + 1) % NOTIFY_QUEUE_MAX;
		n->count--;
	}
	pthread_mutex_unlock(&n->lock);
	return have;
}

/*
 * NotificationClosed and owner changes land on our context, and so do
 * GDBus's deferred frees of a dropped proxy's subscriptions: unhandled,
 * they pile up (or leak when the context goes).
 */
static void
notifier_dispatch(GMainContext *ctx)
{
	int i;

	for (i = 0; i < NOTIFY_DISPATCH_MAX && g_main_context_iteration(ctx, FALSE); i++)
		;
}

/*
 * One Notify call. It fails when no server owns the name (libnotify asks
 * GetServerInformation first and gets ServiceUnknown): nothing to do then,
 * the status line has the alert anyway.
 */
static void
notifier_show(GMainContext *ctx, const char *text)
{
	NotifyNotification *nn = notify_notification_new(NOTIFY_SUMMARY, text, NULL);
	GError *err = NULL;

	if (!nn)
		return;
	notify_notification_set_timeout(nn, NOTIFY_EXPIRES_DEFAULT);
	if (!notify_notification_show(nn, &err))
		g_clear_error(&err);
	g_object_unref(nn);
	notifier_dispatch(ctx);
}

/* libnotify warns on stderr, which is the console's screen. */
static void
notifier_quiet(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer data)
{
	(void)domain;
	(void)level;
	(void)msg;
	(void)data;
}

static void
notifier_run(struct notifier *n)
{
	char text[NOTIFY_TEXT_MAX];
	guint quiet = g_log_set_handler("libnotify", G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL |
					G_LOG_FLAG_RECURSION, notifier_quiet, NULL);
	/* Our own context: libnotify's bus signals must not go to the default one. */
	GMainContext *ctx = g_main_context_new();

	g_main_context_push_thread_default(ctx);
	if (notify_init(n->app)) {
		while (notifier_next(n, text))
			notifier_show(ctx, text);
		notify_uninit();
		notifier_dispatch(ctx);
	}
	atomic_store(&n->active, false);
	g_main_context_pop_thread_default(ctx);
	g_main_context_unref(ctx);
	g_log_remove_handler("libnotify", quiet);
}

static void *
notifier_main(void *arg)
{
	struct notifier *n = arg;
	bool orphaned;

	notifier_run(n);
	pthread_mutex_lock(&n->lock);
	orphaned = n->orphaned;
	n->finished = true;
	pthread_cond_broadcast(&n->done);
	pthread_mutex_unlock(&n->lock);
	if (orphaned)
		notifier_free(n);
	return NULL;
}

static int
notifier_sync_init(struct notifier *n)
{
	if (pthread_mutex_init(&n->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&n->work, NULL) != 0)
		goto no_work;
	if (clock_cond_init(&n->done) < 0)
		goto no_done;
	return 0;
no_done:
	pthread_cond_destroy(&n->work);
no_work:
	pthread_mutex_destroy(&n->lock);
	return -1;
}

/* Signals (SIGWINCH, SIGINT …) stay with the console's thread. */
static int
notifier_start(struct notifier *n)
{
	int rc;

	if (notifier_sync_init(n) < 0)
		return -1;
	rc = thread_start(&n->thread, NULL, notifier_main, n);
	if (rc != 0) {
		pthread_cond_destroy(&n->done);
		pthread_cond_destroy(&n->work);
		pthread_mutex_destroy(&n->lock);
		return -1;
	}
	n->started = true;
	return 0;
}

struct notifier *
notifier_open(const char *app_name)
{
	const char *bus = getenv("DBUS_SESSION_BUS_ADDRESS");
	struct notifier *n = notifier_new(app_name);

	/* No bus, no attempt: GLib would otherwise try to autolaunch one. */
	if (!n || !bus || !bus[0])
		return n;
	atomic_store(&n->active, true);
	if (notifier_start(n) < 0)
		atomic_store(&n->active, false);
	return n;
}

void
notifier_send(struct notifier *n, const char *text)
{
	char clean[NOTIFY_TEXT_MAX];

	if (!n || !text || !atomic_load(&n->active))
		return;
	notifier_clean(clean, sizeof clean, text);
	pthread_mutex_lock(&n->lock);
	if (n->closing) {
		/* Too late: close is under way. */
	} else if (n->count == NOTIFY_QUEUE_MAX) {
		atomic_fetch_add(&n->dropped, 1);
	} else {
		memcpy(n->queue[(n->head + n->count) % NOTIFY_QUEUE_MAX], clean, sizeof clean);
		n->count++;
		pthread_cond_signal(&n->work);
	}
	pthread_mutex_unlock(&n->lock);
}

bool
notifier_active(const struct notifier *n)
{
	return n && atomic_load(&n->active);
}

unsigned long
notifier_dropped(const struct notifier *n)
{
	return n ? atomic_load(&n->dropped) : 0;
}

/* Under n->lock: true when the thread finished before the deadline. */
static bool
notifier_wait_finished(struct notifier *n)
{
	struct timespec deadline = clock_deadline(CLOCK_MONOTONIC, NOTIFY_CLOSE_MS);

	while (!n->finished)
		if (pthread_cond_timedwait(&n->done, &n->lock, &deadline) == ETIMEDOUT)
			break;
	return n->finished;
}

void
notifier_close(struct notifier *n)
{
	pthread_t thread;
	bool finished;

	if (!n)
		return;
	if (!n->started) {
		notifier_free(n);
		return;
	}
	thread = n->thread;	/* an orphaned thread may free n once we unlock */
	pthread_mutex_lock(&n->lock);
	n->closing = true;
	pthread_cond_signal(&n->work);
	finished = notifier_wait_finished(n);
	if (!finished) {
		/* Stuck in a D-Bus call: drop the rest, and let it free n. */
		n->orphaned = true;
		n->count = 0;
		atomic_store(&n->active, false);
	}
	pthread_mutex_unlock(&n->lock);
	if (finished) {
		pthread_join(thread, NULL);
		notifier_free(n);
	} else {
		pthread_detach(thread);
	}
}

#else /* !HAVE_LIBNOTIFY: every notifier drops everything. */

struct notifier {
	char unused;
};

struct notifier *
notifier_open(const char *app_name)
{
	(void)app_name;
	return calloc(1, sizeof(struct notifier));
}

void
notifier_send(struct notifier *n, const char *text)
{
	(void)n;
	(void)text;
}

bool
notifier_active(const struct notifier *n)
{
	(void)n;
	return false;
}

unsigned long
notifier_dropped(const struct notifier *n)
{
	(void)n;
	return 0;
}

void
notifier_close(struct notifier *n)
{
	free(n);
}

#endif
