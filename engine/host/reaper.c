#include "reaper.h"

#include <errno.h>
#include <signal.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"

/* /proc/<pid>/stat is a few hundred bytes; field 22 sits well inside this. */
#define REAPER_STAT_MAX	1024

/*
 * Unsigned decimal digits only: no sign, no blanks, no base prefix, at
 * most max. *end gets the first byte after the digits. Labels are written
 * by whoever created the container, so nothing here trusts strtoul's
 * leniency (leading blanks, '+', '-' wrapping around).
 */
static bool
reaper_decimal(const char *s, unsigned long long max, unsigned long long *out,
	       const char **end)
{
	unsigned long long v = 0;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return p != s;
}

/* A label value that is exactly a decimal number no larger than max. */
static bool
reaper_label_number(const json_t *labels, const char *key, unsigned long long max,
		    unsigned long long *out)
{
	const char *s = json_string_value(json_object_get(labels, key));
	const char *end;

	return s && reaper_decimal(s, max, out, &end) && *end == '\0';
}

static bool
reaper_read_stat(long pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0;
}

/*
 * The state (field 3) and start time (field 22) of a stat line. The
 * command name (field 2) is in parentheses and may hold spaces and ')',
 * so fields are counted from the last ')'.
 */
static bool
reaper_parse_stat(const char *buf, char *state, unsigned long long *start)
{
	const char *p = strrchr(buf, ')');
	const char *end;
	int field;

	if (!p || p[1] != ' ' || !p[2])
		return false;
	*state = p[2];
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || !reaper_decimal(p + 1, ULLONG_MAX, start, &end))
		return false;
	return *end == ' ' || *end == '\n' || *end == '\0';
}

/*
 * Is pid a live process that started at start? A zombie counts as dead:
 * its pid cannot be reused until it is reaped, so its start time keeps
 * matching while the engine is already gone.
 */
static bool
reaper_pid_alive(long pid, unsigned long long start)
{
	char buf[REAPER_STAT_MAX], state;
	unsigned long long ticks;

	/*
	 * Unreadable but present (/proc mounted with hidepid, another pid
	 * namespace): the owner may well be alive. Keeping its container is the
	 * safe mistake; killing another operator's live session is not.
	 */
	if (!reaper_read_stat(pid, buf, sizeof buf))
		return kill((pid_t)pid, 0) == -1 && errno == EPERM;
	if (!reaper_parse_stat(buf, &state, &ticks))
		return false;
	if (state == 'Z' || state == 'X' || state == 'x')
		return false;
	return ticks == start;
}

bool
reaper_owner_gone(const json_t *labels, const char *this_boot_id)
{
	const char *boot = json_string_value(json_object_get(labels, LABEL_OWNER_BOOT));
	unsigned long long pid, start;

	/* Another boot's pids and clock ticks mean nothing on this one. */
	if (!boot || !this_boot_id || !this_boot_id[0] || strcmp(boot, this_boot_id) != 0)
		return true;
	if (!reaper_label_number(labels, LABEL_OWNER_PID, INT_MAX, &pid) || pid == 0)
		return true;
	if (!reaper_label_number(labels, LABEL_OWNER_START, ULLONG_MAX, &start))
		return true;
	return !reaper_pid_alive((long)pid, start);
}

/* Stop at once (kill if stop fails), then remove with its anonymous volumes. */
static int
reaper_remove(struct docker *d, const char *id, struct al_err *err)
{
	struct al_err stop_err;

	if (docker_stop(d, id, 0, &stop_err) < 0)
		docker_kill(d, id, "KILL", &stop_err);
	if (docker_remove(d, id, true, err) < 0)
		return al_wrap(err, "reap %.12s", id);
	return 0;
}

/*
 * The list was filtered by the daemon; the label is checked again so that
 * a filter that was ignored (an old daemon, a proxy) can never make us
 * touch a container that is not ours.
 */
static bool
reaper_is_ours(const json_t *labels)
{
	const char *managed = json_string_value(json_object_get(labels, LABEL_MANAGED));

	return managed && strcmp(managed, "1") == 0;
}

/* Do the owner labels name this process itself? */
static bool
reaper_owner_is(const json_t *labels, const struct owner_labels *me)
{
	const char *boot = json_string_value(json_object_get(labels, LABEL_OWNER_BOOT));
	unsigned long long pid, start;

	return boot && strcmp(boot, me->boot_id) == 0 &&
	       reaper_label_number(labels, LABEL_OWNER_PID, INT_MAX, &pid) &&
	       (long)pid == me->pid &&
	       reaper_label_number(labels, LABEL_OWNER_START, ULLONG_MAX, &start) &&
	       start == me->start_ticks;
}

/* Keep the first failure: later ones are usually the same cause. */
static void
reaper_failed(struct reap_report *out, struct al_err *err, const struct al_err *one)
{
	out->failed++;
	if (err && !err->msg[0])
		*err = *one;
}

/* One walk over the daemon's list: where it counts and whom it tells. */
struct reap_walk {
	struct docker *d;
	struct reap_report *out;
	struct al_err *err;
	reap_seen_fn seen;
	void *ctx;
};

const char *
reap_fate_name(enum reap_fate f)
{
	static const char *const names[] = { "reaped", "kept", "failed" };

	return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static enum reap_fate
reaper_settle_one(struct reap_walk *w, const char *id, bool keep, const char *no_id)
{
	struct al_err one;

	w->out->found++;
	if (keep) {
		w->out->kept++;
		return REAP_KEPT;
	}
	if (id && reaper_remove(w->d, id, &one) == 0) {
		w->out->reaped++;
		return REAP_REAPED;
	}
	if (!id)
		al_fail(&one, "%s", no_id);
	reaper_failed(w->out, w->err, &one);
	return REAP_FAILED;
}

/*
 * One of ours, found: kept, or removed and counted as reaped or failed;
 * the walk's listener is told. no_id is the whole message for a listed
 * container without an Id.
 */
static void
reaper_settle(struct reap_walk *w, const json_t *item, bool keep, const char *no_id)
{
	const char *id = json_string_value(json_object_get(item, "Id"));
	const char *session = json_string_value(json_object_get(json_object_get(item, "Labels"),
								 LABEL_SESSION));
	enum reap_fate fate = reaper_settle_one(w, id, keep, no_id);

	if (w->seen)
		w->seen(w->ctx, id ? id : "", session ? session : "", fate);
}

static void
reaper_one(struct reap_walk *w, const json_t *item, const char *boot_id)
{
	const json_t *labels = json_object_get(item, "Labels");

	if (!reaper_is_ours(labels))
		return;
	reaper_settle(w, item, !reaper_owner_gone(labels, boot_id),
		      "reap: a listed container has no Id");
}

static void
reaper_own_one(struct reap_walk *w, const json_t *item, const struct owner_labels *me,
	       reaper_live_fn live, void *ctx)
{
	const json_t *labels = json_object_get(item, "Labels");
	const char *session = json_string_value(json_object_get(labels, LABEL_SESSION));

	if (!reaper_is_ours(labels) || !reaper_owner_is(labels, me))
		return;
	/* No session label: not one of ours to judge (create always sets it). */
	reaper_settle(w, item, !session || live(session, ctx), "sweep: a listed container has no Id");
}

int
reaper_sweep_own(struct docker *d, reaper_live_fn live, void *ctx,
		 struct reap_report *out, struct al_err *err)
{
	struct reap_walk w = { d, out, err, NULL, NULL };
	struct owner_labels me;
	json_t *list = NULL, *item;
	char label[64];
	size_t i;

	memset(out, 0, sizeof *out);
	if (owner_labels_self(&me, NULL, err) < 0)
		return al_wrap(err, "sweep");
	snprintf(label, sizeof label, "%s=%ld", LABEL_OWNER_PID, me.pid);
	if (docker_list_by_label(d, label, &list, err) < 0)
		return al_wrap(err, "sweep: list");
	al_err_clear(err);
	json_array_foreach(list, i, item)
		reaper_own_one(&w, item, &me, live, ctx);
	json_decref(list);
	return 0;
}

/*
 * Returns -1 only when the job could not be done (no boot id, the daemon
 * did not answer the list). Per-container failures are counted in
 * out->failed and the first one's message is left in err.
 */
int
reaper_run_seen(struct docker *d, struct reap_report *out, reap_seen_fn seen, void *ctx,
		struct al_err *err)
{
	struct reap_walk w = { d, out, err, seen, ctx };
	struct owner_labels me;
	json_t *list = NULL, *item;
	size_t i;

	memset(out, 0, sizeof *out);
	/* Without this boot's id every container would look orphaned: refuse. */
	if (owner_labels_self(&me, NULL, err) < 0)
		return al_wrap(err, "reap");
	if (docker_list_by_label(d, LABEL_MANAGED "=1", &list, err) < 0)
		return al_wrap(err, "reap: list");
	al_err_clear(err);
	json_array_foreach(list, i, item)
		reaper_one(&w, item, me.boot_id);
	json_decref(list);
	return 0;
}

int
reaper_run(struct docker *d, struct reap_report *out, struct al_err *err)
{
	return reaper_run_seen(d, out, NULL, NULL, err);
}
