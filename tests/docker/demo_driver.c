/*
 * Drives the console's demo (tui/demo.c) without the console: prepares it,
 * opens the supervisor on the demo's audit log (reaping at start), ticks
 * once a second as the console would, and prints what it saw — one line
 * per event kind and per end reason, the largest number of live sessions,
 * call counters — then shuts down and prints how many containers were
 * left. Before the shutdown it copies the demo's sinks to OUTDIR (the
 * temp dir goes with demo_close) and writes every container id it saw to
 * OUTDIR/containers. It never prints a payload byte: the test searches
 * this output for the demo canary. For the MCP session (when the demo has
 * one) it prints its ids and, each second, its calls ("role_calls"); with
 * DEMO_DRIVER_REVOKE=A:B it revokes notes.append on every session at second
 * A and restores it at B; after the shutdown it copies the audit log to
 * OUTDIR/audit.db.
 *
 * usage: demo_driver AIRLOCK SECONDS OUTDIR
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "clock.h"
#include "demo.h"
#include "link.h"
#include "supervisor.h"

#define SEEN_MAX	512	/* container ids remembered */
#define EVENTS_BATCH	256
#define ROLES		5	/* steady, pester, chaos, mcp, other */

static const char *const roles[ROLES] = { "steady", "pester", "chaos", "mcp", "other" };

struct tally {
	unsigned long kinds[SUPERVISOR_EVENT_KIND_COUNT];
	unsigned long ends[SESSION_END_COUNT][ROLES];	/* [end][role] */
	size_t max_live, max_rows;
	uint64_t allowed, denied;
	uint64_t role_allowed[ROLES], role_denied[ROLES];	/* over the rows of the last snapshot */
	size_t role_running[ROLES];	/* the most running at once */
	char seen[SEEN_MAX][SNAP_CONTAINER_MAX];
	size_t n_seen;
	char mcp_ids[SEEN_MAX][SNAP_ID_MAX];	/* the MCP sessions, for the audit */
	size_t n_mcp;
};


static int
role_index(const char *role)
{
	int i;

	for (i = 0; role && i < ROLES - 1; i++)
		if (strcmp(role, roles[i]) == 0)
			return i;
	return ROLES - 1;
}

static void
drain_events(struct supervisor *s, const struct demo *d, struct tally *t)
{
	static struct supervisor_event ev[EVENTS_BATCH];
	size_t n, i;
	int rounds;

	for (rounds = 0; rounds < 16 && (n = supervisor_events(s, ev, EVENTS_BATCH)) > 0; rounds++)
		for (i = 0; i < n; i++) {
			if ((unsigned)ev[i].kind < SUPERVISOR_EVENT_KIND_COUNT)
				t->kinds[ev[i].kind]++;
			if (ev[i].kind == SUPERVISOR_EVENT_END && (unsigned)ev[i].end < SESSION_END_COUNT)
				t->ends[ev[i].end][role_index(demo_session_role(d, ev[i].session))]++;
		}
}

static void
note_container(struct tally *t, const char *id)
{
	size_t i;

	if (!id[0])
		return;
	for (i = 0; i < t->n_seen; i++)
		if (strcmp(t->seen[i], id) == 0)
			return;
	if (t->n_seen < SEEN_MAX)
		memcpy(t->seen[t->n_seen++], id, SNAP_CONTAINER_MAX);
}

static void
note_mcp(struct tally *t, const char *id)
{
	size_t i;

	for (i = 0; i < t->n_mcp; i++)
		if (strcmp(t->mcp_ids[i], id) == 0)
			return;
	if (t->n_mcp < SEEN_MAX) {
		memcpy(t->mcp_ids[t->n_mcp++], id, SNAP_ID_MAX);
		printf("mcp_session %s\n", id);
	}
}

static void
note_snapshot(const struct supervisor_snapshot *snap, const struct demo *d, struct tally *t)
{
	size_t running[ROLES] = { 0 }, i;
	int r;

	if (snap->live > t->max_live)
		t->max_live = snap->live;
	if (snap->n > t->max_rows)
		t->max_rows = snap->n;
	t->allowed = t->denied = 0;
	memset(t->role_allowed, 0, sizeof t->role_allowed);
	memset(t->role_denied, 0, sizeof t->role_denied);
	for (i = 0; i < snap->n; i++) {
		note_container(t, snap->rows[i].container);
		t->allowed += snap->rows[i].counters.allowed;
		t->denied += snap->rows[i].counters.denied;
		r = role_index(demo_session_role(d, snap->rows[i].id));
		t->role_allowed[r] += snap->rows[i].counters.allowed;
		t->role_denied[r] += snap->rows[i].counters.denied;
		if (snap->rows[i].state == SESSION_STATE_RUNNING)
			running[r]++;
		if (r == 3)
			note_mcp(t, snap->rows[i].id);
	}
	for (r = 0; r < ROLES; r++)
		if (running[r] > t->role_running[r])
			t->role_running[r] = running[r];
}

/* "role_calls SECOND ROLE allowed A denied D" for the mcp role: the test's timeline. */
static void
note_role_calls(const struct tally *t, long second)
{
	printf("role_calls %ld mcp allowed %llu denied %llu\n", second,
	       (unsigned long long)t->role_allowed[3], (unsigned long long)t->role_denied[3]);
}

/*
 * DEMO_DRIVER_REVOKE=A:B: at second A revoke notes.append on every session,
 * at second B restore it (the operator's keys in the console).
 */
static void
cutover_at(struct supervisor *s, long second)
{
	const char *env = getenv("DEMO_DRIVER_REVOKE");
	long at = -1, until = -1;
	struct al_err err;
	int64_t rev;
	size_t n;

	if (!env || sscanf(env, "%ld:%ld", &at, &until) != 2 || (second != at && second != until))
		return;
	if (supervisor_cutover(s, second == at ? CUTOVER_REVOKE : CUTOVER_RESTORE, "notes.append",
			       NULL, 0, &rev, &n, &err) < 0)
		printf("cutover_failed %s\n", err.msg);
	else
		printf("cutover %s %ld\n", second == at ? "revoke" : "restore", second);
}

/* One second: wait on the wake descriptor, draining events as they come. */
static void
wait_second(struct supervisor *s, const struct demo *d, struct tally *t)
{
	int64_t end = clock_mono_ms() + 1000, left;
	struct pollfd p = { .fd = supervisor_wake_fd(s), .events = POLLIN };

	while ((left = end - clock_mono_ms()) > 0) {
		if (poll(&p, 1, (int)left) > 0)
			drain_events(s, d, t);
	}
}

static void
copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	if (!in)
		return;
	if ((out = fopen(to, "wb"))) {
		while ((n = fread(buf, 1, sizeof buf, in)) > 0)
			fwrite(buf, 1, n, out);
		fclose(out);
	}
	fclose(in);
}

static void
save_evidence(const struct demo *d, const char *outdir, const struct tally *t)
{
	char dir[PATH_MAX], from[PATH_MAX + 16], to[PATH_MAX + 16], *slash;
	const char *names[] = { "notes.sink", "mail.sink" };
	FILE *f;
	size_t i;

	snprintf(dir, sizeof dir, "%s", demo_audit_path(d));
	if ((slash = strrchr(dir, '/')))
		*slash = '\0';
	printf("dir %s\n", dir);
	for (i = 0; i < 2; i++) {
		snprintf(from, sizeof from, "%s/sinks/%s", dir, names[i]);
		snprintf(to, sizeof to, "%s/%s", outdir, names[i]);
		copy_file(from, to);
	}
	snprintf(to, sizeof to, "%s/containers", outdir);
	if ((f = fopen(to, "w"))) {
		for (i = 0; i < t->n_seen; i++)
			fprintf(f, "%s\n", t->seen[i]);
		fclose(f);
	}
}

/* After audit_close (the WAL folded in): the log, for the test's queries. */
static void
save_audit(const struct demo *d, const char *outdir)
{
	char to[PATH_MAX + 16];

	snprintf(to, sizeof to, "%s/audit.db", outdir);
	copy_file(demo_audit_path(d), to);
}

static void
report(const struct tally *t, const struct demo *d)
{
	size_t k, r;

	for (k = 0; k < SUPERVISOR_EVENT_KIND_COUNT; k++)
		if (t->kinds[k])
			printf("event %s %lu\n", event_kind_id((enum event_kind)k), t->kinds[k]);
	for (k = 0; k < SESSION_END_COUNT; k++)
		for (r = 0; r < ROLES; r++)
			if (t->ends[k][r])
				printf("end %s %s %lu\n", session_end_id((enum session_end)k),
				       roles[r], t->ends[k][r]);
	printf("max_live %zu\nmax_rows %zu\n", t->max_live, t->max_rows);
	printf("calls allowed %llu denied %llu\n", (unsigned long long)t->allowed,
	       (unsigned long long)t->denied);
	printf("containers_seen %zu\n", t->n_seen);
	for (k = 0; k < ROLES; k++)
		printf("role %s running_max %zu\n", roles[k], t->role_running[k]);
	if (demo_error(d)[0])
		printf("demo_error %s\n", demo_error(d));
}

/* The demo reaches the engine through a link, as in the console: here one that borrows s. */
static struct link *demo_link;

static int
open_all(const char *airlock, struct demo **d, struct audit **a, struct supervisor **s)
{
	struct supervisor_options o = { .watchdog_exe = airlock, .reap_at_start = true };
	struct reap_report reaped;
	struct snap_author author;
	struct al_err err;
	const char *image;
	bool built;

	if (demo_prepare(airlock, d, &err) < 0) {
		fprintf(stderr, "demo_driver: %s\n", err.msg);
		return -1;
	}
	image = demo_image(*d, &built);
	printf("image %s %s\n", image, built ? "built" : "reused");
	image = demo_mcp_image(*d, &built);
	if (image[0])
		printf("mcp_image %s %s\n", image, built ? "built" : "reused");
	else
		printf("mcp_note %s\n", demo_mcp_note(*d));
	if (audit_open(demo_audit_path(*d), a, &err) < 0)
		goto fail;
	o.audit = *a;
	if (supervisor_open(&o, s, &reaped, &err) < 0)
		goto fail;
	supervisor_author_self(&author, "demo_driver");
	if (!(demo_link = link_local_new(*s, &author, NULL)))
		snprintf(err.msg, sizeof err.msg, "out of memory");
	else if (demo_start(*d, demo_link, &err) == 0)
		return 0;
	link_close(demo_link);
	supervisor_shutdown(*s);
	supervisor_close(*s);
fail:
	fprintf(stderr, "demo_driver: %s\n", err.msg);
	if (*a)
		audit_close(*a);
	demo_close(*d);
	return -1;
}

int
main(int argc, char **argv)
{
	static struct tally t;
	struct supervisor_snapshot snap;
	struct supervisor *s = NULL;
	struct audit *a = NULL;
	struct demo *d = NULL;
	long secs, i;
	int left;

	if (argc != 4 || (secs = strtol(argv[2], NULL, 10)) <= 0 || secs > 3600) {
		fprintf(stderr, "usage: demo_driver AIRLOCK SECONDS OUTDIR\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %ld\n", (long)getpid());
	if (open_all(argv[1], &d, &a, &s) < 0)
		return 1;
	memset(&snap, 0, sizeof snap);
	for (i = 0; i < secs; i++) {
		if (supervisor_snapshot(s, &snap) >= 0) {
			note_snapshot(&snap, d, &t);
			note_role_calls(&t, i);
			demo_tick(d, &snap);
		}
		cutover_at(s, i);
		wait_second(s, d, &t);
	}
	save_evidence(d, argv[3], &t);
	left = supervisor_shutdown(s);
	drain_events(s, d, &t);
	report(&t, d);
	printf("left %d\n", left);
	supervisor_snapshot_free(&snap);
	link_close(demo_link);
	supervisor_close(s);
	audit_close(a);
	save_audit(d, argv[3]);
	demo_close(d);
	return left == 0 ? 0 : 1;
}
