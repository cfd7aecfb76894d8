#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <wchar.h>

#include <curses.h>

#include "color.h"
#include "util.h"
#include "view.h"

/*
 * The views drawn from fixed snapshots into an off-screen ncurses screen
 * (newterm on /dev/null: no tty, no stdin), read back as UTF-8 text and
 * compared with tests/ui/golden/<case>.screen. Colour is off, as under
 * NO_COLOR, so attributes are the monochrome ones; a few cells are checked
 * for them directly. AIRLOCK_UPDATE_GOLDEN=1 rewrites the goldens.
 */

#ifndef GOLDEN_DIR
#define GOLDEN_DIR "tests/ui/golden"
#endif

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

/* 2024-05-01 12:04:31 UTC: every age and clock in the fixtures is from here. */
#define NOW_MS		1714565071000LL
#define ROWS_CAP	320
#define SCREEN_MAX	(64 * 1024)

struct fixture {
	struct supervisor_snapshot snap;
	struct session_row *rows;
	struct session_detail detail;
	struct supervisor_event events[16];
	struct audit_row audit[16];
	struct host_snapshot host;
	char marks[4][SNAP_ID_MAX];
	struct ui_model m;
};

/* Fixture building. */

static struct session_row *
fx_row(struct fixture *f, const char *id, enum session_state st, int64_t age_s)
{
	struct session_row *r = &f->rows[f->snap.n++];

	memset(r, 0, sizeof *r);
	snprintf(r->id, sizeof r->id, "%s", id);
	snprintf(r->container, sizeof r->container, "%.8s%s", id + 2,
		 "d41d8cd98f00b204e9800998ecf8427e0123456789abcdef01234567");
	snprintf(r->image, sizeof r->image, "sha256:%s",
		 "9e41b7c2d8a4f6e1c3b5a7d9e0f2a4c6b8d0e2f4a6c8b0d2e4f6a8c0b2d4e6f8");
	snprintf(r->runtime, sizeof r->runtime, "runc");
	snprintf(r->class_name, sizeof r->class_name, "internal");
	r->generation = 1;
	r->state = st;
	r->started_ms = NOW_MS - age_s * 1000;
	r->uptime_ms = age_s * 1000;
	r->gate_open = true;
	r->exit_code = -1;
	r->admission_first = st >= SESSION_STATE_ATTACHING ? ADMISSION_ADMITTED : ADMISSION_NOT_RUN;
	r->admission_second = st >= SESSION_STATE_RUNNING ? ADMISSION_ADMITTED : ADMISSION_NOT_RUN;
	f->snap.live += st != SESSION_STATE_ENDED;
	f->snap.started_total++;
	return r;
}

static void
fx_tool(struct session_row *r, const char *name, const char *cls, bool approved, bool allowed)
{
	struct tool_view *t = &r->tools[r->n_tools++];

	snprintf(t->name, sizeof t->name, "%s", name);
	snprintf(t->data_class, sizeof t->data_class, "%s", cls);
	t->approved = approved;
	t->allowed = allowed;
}

/* 32 acks around base_us, with every seventh one spike_us. */
static void
fx_lease(struct session_row *r, int64_t age_ms, bool late, int32_t base_us, int32_t spike_us)
{
	struct lease_view *l = &r->lease;
	size_t i;

	l->armed = true;
	l->late = late;
	l->age_ms = age_ms;
	l->pulses = 524;
	l->acks = late ? 519 : 523;
	l->n_acks = SNAP_ACKS_MAX;
	for (i = 0; i < l->n_acks; i++)
		l->ack_us[i] = i % 7 == 6 ? spike_us : base_us + (int32_t)(i % 3) * base_us / 2;
	l->last_ack_us = l->ack_us[l->n_acks - 1];
	l->max_ack_us = spike_us;
	l->watchdog_pid = 4242;
}

static void
fx_counts(struct session_row *r, uint64_t allowed, uint64_t denied, uint64_t out, uint64_t err)
{
	r->counters.calls = allowed + denied;
	r->counters.allowed = allowed;
	r->counters.denied = denied;
	r->stdout_bytes = out;
	r->stderr_bytes = err;
}

static void
fx_std_tools(struct session_row *r, bool mail_allowed)
{
	fx_tool(r, "notes.append", "confidential", true, true);
	fx_tool(r, "mail.send", "public", true, mail_allowed);
	fx_tool(r, "web.fetch", "public", true, true);
	fx_tool(r, "files.read", "internal", false, false);
}

static void
fx_sessions(struct fixture *f)
{
	struct session_row *r;

	r = fx_row(f, "s-a0c4d2117f6e5d4c", SESSION_STATE_ENDED, 300);
	r->uptime_ms = r->duration_ms = 15000;
	r->end = SESSION_END_WATCHDOG_FAILED;
	r->lease.failed = true;
	snprintf(r->lease.reason, sizeof r->lease.reason, "no ack");
	snprintf(r->reason, sizeof r->reason, "watchdog stopped the container: no ack for 2.04s");
	r->exit_code = 137;
	r->revision = 6;
	fx_counts(r, 16, 4, 20480, 3072);
	fx_std_tools(r, true);

	r = fx_row(f, "s-3f9a1c02e4d5f6a7", SESSION_STATE_RUNNING, 133);
	fx_lease(r, 210, false, 80, 900);
	fx_counts(r, 14, 3, 18432, 1229);
	r->counters.egress_denied = 1;
	r->counters.upstream_spawns = 2;
	r->revision = 8;
	snprintf(r->class_name, sizeof r->class_name, "confidential");
	fx_std_tools(r, false);

	r = fx_row(f, "s-5d3e8f1029a8b7c6", SESSION_STATE_RUNNING, 61);
	fx_lease(r, 90, false, 120, 2500);
	fx_counts(r, 5, 0, 2048, 0);
	r->revision = 7;
	r->pending = 1;
	r->pending_revision = 8;
	r->pending_age_ms = 1200;
	r->call = (struct call_view){ true, "mail.send", 7, 1250 };
	fx_std_tools(r, true);

	r = fx_row(f, "s-77e0b5a91c2d3e4f", SESSION_STATE_ENDED, 60);
	r->uptime_ms = r->duration_ms = 2000;
	r->end = SESSION_END_ADMISSION_REFUSED;
	r->admission_second = ADMISSION_REFUSED;
	snprintf(r->refused_check, sizeof r->refused_check, "no_new_privileges");
	snprintf(r->reason, sizeof r->reason, "second inspection: no_new_privileges expected true");
	fx_tool(r, "notes.append", "confidential", true, true);

	r = fx_row(f, "s-c1b2a9f0d3e4b5a6", SESSION_STATE_RUNNING, 7);
	fx_lease(r, 1400, true, 300, 40000);
	r->revision = 8;
	fx_std_tools(r, false);

	r = fx_row(f, "s-0b6f2e7d8c9a0b1c", SESSION_STATE_STARTING, 1);
	r->revision = 8;
	fx_std_tools(r, false);
}

static void
fx_event(struct fixture *f, size_t *n, int64_t ago_s, enum event_kind k, const char *session)
{
	struct supervisor_event *e = &f->events[(*n)++];

	memset(e, 0, sizeof *e);
	e->seq = *n;
	e->wall_ms = NOW_MS - ago_s * 1000;
	e->kind = k;
	e->alert = k == SUPERVISOR_EVENT_LEASE_FAILED || k == SUPERVISOR_EVENT_ADMISSION_REFUSED || k == SUPERVISOR_EVENT_CUTOVER;
	snprintf(e->session, sizeof e->session, "%s", session);
}

static void
fx_events(struct fixture *f)
{
	size_t n = 0;

	fx_event(f, &n, 133, SUPERVISOR_EVENT_STATE, "s-3f9a1c02e4d5f6a7");
	f->events[n - 1].state = SESSION_STATE_RUNNING;
	fx_event(f, &n, 36, SUPERVISOR_EVENT_ADMISSION_REFUSED, "s-77e0b5a91c2d3e4f");
	snprintf(f->events[n - 1].check, CHECK_ID_MAX, "no_new_privileges");
	snprintf(f->events[n - 1].reason, SNAP_WORD_MAX, "second");
	fx_event(f, &n, 36, SUPERVISOR_EVENT_END, "s-77e0b5a91c2d3e4f");
	f->events[n - 1].end = SESSION_END_ADMISSION_REFUSED;
	f->events[n - 1].alert = true;
	fx_event(f, &n, 19, SUPERVISOR_EVENT_LEASE_FAILED, "s-a0c4d2117f6e5d4c");
	snprintf(f->events[n - 1].reason, SNAP_WORD_MAX, "no ack");
	fx_event(f, &n, 17, SUPERVISOR_EVENT_END, "s-a0c4d2117f6e5d4c");
	f->events[n - 1].end = SESSION_END_WATCHDOG_FAILED;
	f->events[n - 1].alert = true;
	fx_event(f, &n, 2, SUPERVISOR_EVENT_CUTOVER, "");
	f->events[n - 1] = (struct supervisor_event){ .seq = n, .wall_ms = NOW_MS - 2000,
		.kind = SUPERVISOR_EVENT_CUTOVER, .alert = true, .tool = "mail.send", .op = CUTOVER_REVOKE,
		.revision = 8, .count = 3 };
	fx_event(f, &n, 2, SUPERVISOR_EVENT_CUTOVER_ACK, "s-3f9a1c02e4d5f6a7");
	snprintf(f->events[n - 1].tool, SNAP_NAME_MAX, "mail.send");
	f->events[n - 1].revision = 8;
	f->events[n - 1].waited_us = 850;
	fx_event(f, &n, 2, SUPERVISOR_EVENT_CUTOVER_ACK, "s-c1b2a9f0d3e4b5a6");
	snprintf(f->events[n - 1].tool, SNAP_NAME_MAX, "mail.send");
	f->events[n - 1].revision = 8;
	f->events[n - 1].waited_us = 1200;
	fx_event(f, &n, 1, SUPERVISOR_EVENT_STATE, "s-0b6f2e7d8c9a0b1c");
	f->events[n - 1].state = SESSION_STATE_STARTING;
	f->m.events = f->events;
	f->m.n_events = n;
}

/* The tone the engine's audit tail gives these decisions (audit.h's table). */
static enum audit_tone
fx_tone(const char *decision)
{
	static const struct {
		const char *decision;
		enum audit_tone tone;
	} tones[] = {
		{ "allowed", AUDIT_TONE_GOOD }, { "applied", AUDIT_TONE_GOOD },
		{ "denied", AUDIT_TONE_BAD }, { "egress_denied", AUDIT_TONE_BAD },
		{ "refused", AUDIT_TONE_BAD }, { "error", AUDIT_TONE_ALERT },
		{ "fault", AUDIT_TONE_ALERT },
	};
	size_t i;

	for (i = 0; i < N_OF(tones); i++)
		if (strcmp(tones[i].decision, decision) == 0)
			return tones[i].tone;
	return AUDIT_TONE_PLAIN;
}

static void
fx_audit_row(struct fixture *f, const char *time, const char *session, const char *type,
	     const char *tool, const char *decision, const char *rule, int64_t rev, int64_t lat)
{
	struct audit_row *a = &f->audit[f->m.n_audit];

	memset(a, 0, sizeof *a);
	a->seq = (int64_t)++f->m.n_audit;
	snprintf(a->time, sizeof a->time, "2024-05-01T%sZ", time);
	snprintf(a->session, sizeof a->session, "%s", session);
	snprintf(a->type, sizeof a->type, "%s", type);
	snprintf(a->tool, sizeof a->tool, "%s", tool);
	snprintf(a->decision, sizeof a->decision, "%s", decision);
	snprintf(a->rule, sizeof a->rule, "%s", rule);
	a->tone = fx_tone(decision);
	a->revision = rev;
	a->latency_us = lat;
	if (strcmp(type, "call") == 0) {
		snprintf(a->request_hash, sizeof a->request_hash, "%016llx",
			 (unsigned long long)a->seq * 0x9e3779b97f4a7c15ULL);
		snprintf(a->response_hash, sizeof a->response_hash, "%016llx",
			 (unsigned long long)a->seq * 0xc2b2ae3d27d4eb4fULL);
	}
}

static void
fx_audit(struct fixture *f)
{
	const char *s1 = "s-3f9a1c02e4d5f6a7", *s3 = "s-a0c4d2117f6e5d4c";
	const char *s4 = "s-77e0b5a91c2d3e4f", *s5 = "s-5d3e8f1029a8b7c6";

	fx_audit_row(f, "12:02:18.104211", s1, "session_start", "", "ok", "", 0, 0);
	fx_audit_row(f, "12:02:18.350112", s1, "admission", "", "ok", "second", 0, 0);
	fx_audit_row(f, "12:02:40.002001", s1, "call", "notes.append", "allowed", "allowed", 7,
		     1830);
	fx_audit_row(f, "12:03:01.514000", s1, "call", "mail.send", "denied", "revoked", 8, 40);
	fx_audit_row(f, "12:03:12.900100", s3, "call", "web.fetch", "egress_denied",
		     "egress_denied", 6, 120000);
	fx_audit_row(f, "12:03:55.010000", s4, "admission", "", "refused", "no_new_privileges", 0,
		     0);
	fx_audit_row(f, "12:03:55.020000", s4, "session_end", "", "ok", "admission_refused", 0, 0);
	fx_audit_row(f, "12:04:14.200000", s3, "session_end", "", "ok", "watchdog_failed", 6, 0);
	fx_audit_row(f, "12:04:29.001000", s1, "policy", "mail.send", "applied", "cutover", 8, 850);
	fx_audit_row(f, "12:04:30.400000", s5, "dispatch", "mail.send", "dispatch", "", 7, 0);
	fx_audit_row(f, "12:04:31.050000", s5, "call", "notes.append", "error", "upstream_error", 7,
		     5200);
	f->m.audit = f->audit;
}

static void
fx_check(struct check_item *it, const char *id, const char *exp, const char *obs, bool pass,
	 bool run)
{
	snprintf(it->id, sizeof it->id, "%s", id);
	snprintf(it->expected, sizeof it->expected, "%s", exp);
	snprintf(it->observed, sizeof it->observed, "%s", obs);
	it->pass = pass;
	it->run = run;
}

static void
fx_host(struct fixture *f)
{
	struct host_snapshot *h = &f->host;

	h->generation = 2;
	h->at_ms = NOW_MS - 185000;
	snprintf(h->endpoint, sizeof h->endpoint, "unix:///var/run/docker.sock");
	snprintf(h->daemon_version, sizeof h->daemon_version, "20.10.24");
	snprintf(h->runtime, sizeof h->runtime, "runc");
	fx_check(&h->items[h->n++], "os", "linux", "linux", true, true);
	fx_check(&h->items[h->n++], "core_pattern", "not a pipe", "core", true, true);
	fx_check(&h->items[h->n++], "rlimit_core", "0/0", "0/0", true, true);
	fx_check(&h->items[h->n++], "endpoint", "a local unix socket", "/var/run/docker.sock",
		 true, true);
	fx_check(&h->items[h->n++], "daemon_os_type", "linux", "linux", true, true);
	fx_check(&h->items[h->n++], "seccomp", "seccomp in SecurityOptions", "name=apparmor",
		 false, true);
	fx_check(&h->items[h->n++], "runtime", "runc", "", false, false);
	f->m.host = h;
}

/* The admission report of the refused session: the second one stops at the refusal. */
static void
fx_report(struct admission_report *rep, bool refuse)
{
	static const char *const items[][3] = {
		{ "user", "65534:65534", "65534:65534" },
		{ "read_only_rootfs", "true", "true" },
		{ "network_mode", "none", "none" },
		{ "cap_drop", "ALL", "ALL" },
		{ "no_new_privileges", "true", "true" },
		{ "seccomp", "default", "default" },
		{ "pids_limit", "64", "64" },
	};
	size_t i;
	bool failed = false;

	rep->verdict = refuse ? ADMISSION_REFUSED : ADMISSION_ADMITTED;
	for (i = 0; i < N_OF(items); i++) {
		bool bad = refuse && strcmp(items[i][0], "no_new_privileges") == 0;

		fx_check(&rep->items[rep->n++], items[i][0], items[i][1],
			 bad ? "false" : items[i][2], !bad, !failed);
		failed |= bad;
	}
}

static void
fx_detail(struct fixture *f, const char *id)
{
	struct session_detail *d = &f->detail;
	const struct session_row *r = view_find_session(&f->m, id);
	size_t i;

	assert_non_null(r);
	memset(d, 0, sizeof *d);
	d->row = *r;
	fx_report(&d->first, false);
	if (r->admission_second != ADMISSION_NOT_RUN)
		fx_report(&d->second, r->admission_second == ADMISSION_REFUSED);
	for (i = 0; i < f->m.n_events; i++)
		if (strcmp(f->events[i].session, id) == 0)
			d->timeline[d->n_timeline++] = f->events[i];
	f->m.detail = d;
}

static void
fx_init(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	f->rows = calloc(ROWS_CAP, sizeof *f->rows);
	assert_non_null(f->rows);
	f->snap.rows = f->rows;
	f->snap.cap = ROWS_CAP;
	f->snap.revision = 8;
	f->snap.taken_ms = NOW_MS;
	f->m.snap = &f->snap;
	f->m.now_ms = NOW_MS;
	fx_sessions(f);
	fx_events(f);
	fx_audit(f);
	fx_host(f);
	snprintf(f->marks[0], SNAP_ID_MAX, "s-c1b2a9f0d3e4b5a6");
	snprintf(f->marks[1], SNAP_ID_MAX, "s-77e0b5a91c2d3e4f");
	f->m.marks = (const char (*)[SNAP_ID_MAX])f->marks;
	f->m.n_marks = 2;
}

/* 300 sessions in every state, for scrolling. */
static void
fx_many(struct fixture *f)
{
	char id[SNAP_ID_MAX];
	struct session_row *r;
	int i;

	f->snap.n = f->snap.live = 0;
	for (i = 0; i < 300; i++) {
		snprintf(id, sizeof id, "s-%04x%012x", i, (unsigned)i * 2654435761u);
		r = fx_row(f, id, (enum session_state)(i % SESSION_STATE_COUNT), 3000 - i * 10);
		if (r->state == SESSION_STATE_RUNNING)
			fx_lease(r, 100 + i, i % 3 == 0, 90, 1200);
		if (r->state == SESSION_STATE_ENDED)
			r->end = i % 2 ? SESSION_END_AGENT_EXIT : SESSION_END_SESSION_TIMEOUT;
		fx_counts(r, (uint64_t)i * 37, (uint64_t)i % 5, (uint64_t)i * 1500,
			  (uint64_t)i * 7);
		r->revision = 8;
		fx_std_tools(r, i % 4 != 0);
	}
}

/* The screen. */

static WINDOW *
screen_window(int lines, int cols)
{
	WINDOW *w;

	assert_int_equal(resizeterm(lines, cols), OK);
	w = newwin(lines, cols, 0, 0);
	assert_non_null(w);
	return w;
}

/* One line of w as UTF-8 without its trailing blanks. */
static void
screen_line(WINDOW *w, int y, char *out, size_t cap)
{
	wchar_t wbuf[1024];
	mbstate_t st;
	size_t len = 0, k;
	int i, n;

	memset(&st, 0, sizeof st);
	n = mvwinnwstr(w, y, 0, wbuf, getmaxx(w) < 1023 ? getmaxx(w) : 1023);
	for (i = 0; i < n && wbuf[i] && len + MB_LEN_MAX < cap; i++) {
		k = wcrtomb(out + len, wbuf[i], &st);
		if (k == (size_t)-1)
			out[len++] = '?';
		else
			len += k;
	}
	while (len > 0 && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
}

static void
screen_text(WINDOW *w, char *out, size_t cap)
{
	char line[4096];
	size_t len = 0;
	int y;

	out[0] = '\0';
	for (y = 0; y < getmaxy(w); y++) {
		screen_line(w, y, line, sizeof line);
		len += (size_t)snprintf(out + len, cap - len, "%s\n", line);
		assert_true(len < cap);
	}
}

static char *
read_file(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	size_t n;

	if (!fp)
		return NULL;
	buf = calloc(1, SCREEN_MAX);
	assert_non_null(buf);
	n = fread(buf, 1, SCREEN_MAX - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void
write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static const char *
golden_dir(void)
{
	const char *dir = getenv("AIRLOCK_GOLDEN_DIR");

	return dir && dir[0] ? dir : GOLDEN_DIR;
}

/* The first line where they differ, both sides, then the whole screen. */
static void
golden_report(const char *name, const char *want, const char *got)
{
	int line = 1;
	size_t i = 0;

	while (want[i] && want[i] == got[i])
		line += want[i++] == '\n';
	fprintf(stderr, "%s: screen differs from the golden at line %d\n", name, line);
	fprintf(stderr, "--- golden\n%s--- drawn\n%s---\n", want, got);
}

static void
golden_check(const char *name, const char *got)
{
	char path[4096], actual[4096];
	const char *update = getenv("AIRLOCK_UPDATE_GOLDEN");
	char *want;

	snprintf(path, sizeof path, "%s/%s.screen", golden_dir(), name);
	if (update && strcmp(update, "1") == 0) {
		mkdir(golden_dir(), 0755);
		write_file(path, got);
		return;
	}
	want = read_file(path);
	if (!want)
		fail_msg("%s: no golden (run with AIRLOCK_UPDATE_GOLDEN=1)", path);
	if (strcmp(want, got) != 0) {
		snprintf(actual, sizeof actual, "%s.screen.actual", name);
		write_file(actual, got);
		golden_report(name, want, got);
		free(want);
		fail_msg("%s: see %s", name, actual);
	}
	free(want);
}

/* Cases. */

struct render_case {
	const char *name;
	enum view_id view;
	int lines, cols;
	void (*prepare)(struct fixture *f, struct view_state *vs);
};

static void
prep_none(struct fixture *f, struct view_state *vs)
{
	(void)f;
	(void)vs;
}

static void
prep_select_2(struct fixture *f, struct view_state *vs)
{
	(void)f;
	vs->selected = 2;
}

static void
prep_empty(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	f->snap.n = f->snap.live = 0;
	f->m.n_events = 0;
	f->m.n_audit = 0;
	f->m.detail = NULL;
	memset(&f->host, 0, sizeof f->host);
}

static void
prep_stale_ascii(struct fixture *f, struct view_state *vs)
{
	f->m.stale = true;
	f->m.ascii = true;
	vs->selected = 1;
}

/* A console over two engines: the ENGINE column says whose each row is. */
static void
prep_two_engines(struct fixture *f, struct view_state *vs)
{
	static const char names[2][SNAP_ENGINE_MAX] = { "prod-eu", "lab" };
	size_t i;

	(void)vs;
	for (i = 0; i < f->snap.n; i++)
		f->rows[i].engine = (unsigned)(i % 2);
	f->m.engine_names = names;
	f->m.n_engines = 2;
}

/* The same, prod-eu lost: its rows say lost (their last known state), lab's stay as they are. */
static void
prep_engine_lost(struct fixture *f, struct view_state *vs)
{
	static const bool fresh[2] = { false, true };

	prep_two_engines(f, vs);
	f->m.engine_fresh = fresh;
}

static void
prep_filter_ended(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->filter, sizeof vs->filter, "ENDED");
}

static void
prep_filter_watchdog(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->filter, sizeof vs->filter, "watchdog");
}

static void
prep_filter_nomatch(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->filter, sizeof vs->filter, "zzz");
}

static void
prep_sort_lease(struct fixture *f, struct view_state *vs)
{
	(void)f;
	vs->sort = 3;
}

static void
prep_sort_id_reverse(struct fixture *f, struct view_state *vs)
{
	(void)f;
	vs->sort = 1;
	vs->sort_reverse = true;
}

static void
prep_many(struct fixture *f, struct view_state *vs)
{
	fx_many(f);
	vs->selected = 250;
	vs->top = 0;
}

static void
prep_detail_running(struct fixture *f, struct view_state *vs)
{
	fx_detail(f, "s-3f9a1c02e4d5f6a7");
	vs->selected = 14;	/* mail.send, REVOKED r8 */
}

/*
 * Its upstreams: one started under the default user, one planned with
 * both opt-ins (loud), one started without Landlock (loud); scrolled to them.
 */
static void
prep_detail_upstreams(struct fixture *f, struct view_state *vs)
{
	struct session_detail *d = &f->detail;

	fx_detail(f, "s-3f9a1c02e4d5f6a7");
	d->n_upstreams = 3;
	d->upstreams[0] = (struct upstream_view){ .name = "vault", .started = true,
		.user = "airlock-upstream", .uid = 999, .gid = 995, .uid_changed = true,
		.landlock_abi = 7, .landlock_rules = 23, .paths_rw = 1,
		.seccomp = "3f2a9c1e4b5d6f70", .network = "none", .isolation = "process" };
	d->upstreams[1] = (struct upstream_view){ .name = "outbox", .user = "mailer",
		.paths_ro = 2, .network = "connect 443 bind - udp no", .isolation = "process",
		.privileged = true, .unconfined_ok = true };
	d->upstreams[2] = (struct upstream_view){ .name = "legacy", .started = true,
		.user = "legacy", .uid = 1001, .gid = 1001, .uid_changed = true,
		.seccomp = "0d1e2f3a4b5c6d7e", .network = "none", .isolation = "process",
		.unconfined_ok = true };
	vs->top = 10;
	vs->selected = 16;
}

static void
prep_detail_refused(struct fixture *f, struct view_state *vs)
{
	fx_detail(f, "s-77e0b5a91c2d3e4f");
	snprintf(vs->session, sizeof vs->session, "s-77e0b5a91c2d3e4f");
	vs->selected = 1000;
}

static void
prep_detail_watchdog(struct fixture *f, struct view_state *vs)
{
	fx_detail(f, "s-3f9a1c02e4d5f6a7");
	snprintf(vs->session, sizeof vs->session, "s-a0c4d2117f6e5d4c");
}

/*
 * Row only: a session the daemon's outage ended, its container not yet
 * removed and its exit unknown (it did run).
 */
static void
prep_detail_left(struct fixture *f, struct view_state *vs)
{
	size_t i;

	for (i = 0; i < f->snap.n; i++)
		if (strcmp(f->rows[i].id, "s-a0c4d2117f6e5d4c") == 0) {
			f->rows[i].end = SESSION_END_AGENT_FAILED;
			f->rows[i].lease.failed = false;
			snprintf(f->rows[i].reason, sizeof f->rows[i].reason,
				 "agent did not exit after closing its output");
			f->rows[i].exit_code = -1;
			f->rows[i].started = true;
			f->rows[i].container_left = true;
		}
	f->snap.containers_left = 1;
	snprintf(vs->session, sizeof vs->session, "s-a0c4d2117f6e5d4c");
}

/* Row only: the audit log refused the session's writes (a full disk). */
static void
prep_detail_audit(struct fixture *f, struct view_state *vs)
{
	size_t i;

	for (i = 0; i < f->snap.n; i++)
		if (strcmp(f->rows[i].id, "s-a0c4d2117f6e5d4c") == 0) {
			f->rows[i].end = SESSION_END_AUDIT_FAILED;
			f->rows[i].lease.failed = false;
			snprintf(f->rows[i].reason, sizeof f->rows[i].reason,
				 "audit log: cannot append an entry");
			f->rows[i].exit_code = 143;
			f->rows[i].started = true;
			f->rows[i].audit_failures = 2;
		}
	f->snap.audit_failures = 2;
	snprintf(vs->session, sizeof vs->session, "s-a0c4d2117f6e5d4c");
}

/* Row only (no detail snapshot): a call in flight holds a cutover back. */
static void
prep_detail_pending(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->session, sizeof vs->session, "s-5d3e8f1029a8b7c6");
}

static void
prep_detail_late(struct fixture *f, struct view_state *vs)
{
	fx_detail(f, "s-c1b2a9f0d3e4b5a6");
	vs->selected = 9;
}

static void
prep_detail_gone(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->session, sizeof vs->session, "s-ffffffffffffffff");
}

static void
prep_tools_session(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->session, sizeof vs->session, "s-5d3e8f1029a8b7c6");
	vs->selected = 1;
}

/* mail.send and web.fetch revoked on every session: later sessions start without them. */
static void
prep_tools_standing(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	snprintf(f->snap.standing[0], sizeof f->snap.standing[0], "mail.send");
	snprintf(f->snap.standing[1], sizeof f->snap.standing[1], "web.fetch");
	f->snap.n_standing = 2;
}

/* One more revoked ahead of any session that has it: it still has a row. */
static void
prep_tools_standing_unlisted(struct fixture *f, struct view_state *vs)
{
	prep_tools_standing(f, vs);
	snprintf(f->snap.standing[2], sizeof f->snap.standing[2], "db.export");
	f->snap.n_standing = 3;
}

/* No live session: what stands revoked is still listed, and selectable. */
static void
prep_tools_standing_no_session(struct fixture *f, struct view_state *vs)
{
	prep_empty(f, vs);
	prep_tools_standing(f, vs);
}

/* The same, seen from one session: its own tool states, no standing note. */
static void
prep_tools_standing_session(struct fixture *f, struct view_state *vs)
{
	prep_tools_standing(f, vs);
	prep_tools_session(f, vs);
}

/* mail.send granted back on every session: two calls or 14:59 left, whichever first. */
static void
prep_tools_grant(struct fixture *f, struct view_state *vs)
{
	size_t i;

	(void)vs;
	for (i = 0; i < f->snap.n; i++) {
		struct tool_view *t = &f->snap.rows[i].tools[1];

		t->allowed = t->granted = true;
		t->grant_calls = 2;
		t->grant_ms = 898400;
	}
}

/* The same from one session; and a grant of time only. */
static void
prep_tools_grant_session(struct fixture *f, struct view_state *vs)
{
	size_t i;

	prep_tools_grant(f, vs);
	for (i = 0; i < f->snap.n; i++)
		f->snap.rows[i].tools[1].grant_calls = -1;
	prep_tools_session(f, vs);
}

/* mail.send held (ctl hold) where it is allowed: its calls wait for an operator. */
static void
prep_tools_held(struct fixture *f, struct view_state *vs)
{
	size_t i;

	(void)vs;
	for (i = 0; i < f->snap.n; i++) {
		struct tool_view *t = &f->snap.rows[i].tools[1];

		t->held = t->allowed;
	}
}

/* The same, from a session that allows mail.send: its status says held, not allowed. */
static void
prep_tools_held_session(struct fixture *f, struct view_state *vs)
{
	prep_tools_held(f, vs);
	prep_tools_session(f, vs);
}

static void
prep_tools_sort_revoked(struct fixture *f, struct view_state *vs)
{
	(void)f;
	vs->sort = 1;
}

static void
prep_audit_filter(struct fixture *f, struct view_state *vs)
{
	(void)f;
	snprintf(vs->filter, sizeof vs->filter, "denied");
}

/* The operator moved up from the newest entry before this draw. */
static void
prep_audit_scrolled(struct fixture *f, struct view_state *vs)
{
	vs->rows_seen = f->m.n_audit;
	vs->selected = 3;
}

/* The tail could not be read: the rows drawn before stay, marked as not followed. */
static void
prep_audit_unreadable(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	f->m.audit_error = "audit tail: cannot read entries";
}

/* ... and with nothing read yet, the view says why it is empty. */
static void
prep_audit_unreadable_empty(struct fixture *f, struct view_state *vs)
{
	prep_audit_unreadable(f, vs);
	f->m.n_audit = 0;
}

/* s-3f9a1c02 quarantined by ana via console (issue 43, item 3): paused, held since NOW - 65 s. */
static void
fx_quarantine(struct fixture *f)
{
	struct session_row *r = (struct session_row *)view_find_session(&f->m, "s-3f9a1c02e4d5f6a7");

	assert_non_null(r);
	r->quarantine = (struct quarantine_view){ .on = true, .since_ms = NOW_MS - 65000,
						  .by = { .uid = 1000, .user = "ana", .via = "console" },
						  .pause = "paused" };
}

static void
prep_quarantined(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	fx_quarantine(f);
}

static void
prep_detail_quarantined(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	fx_quarantine(f);
	fx_detail(f, "s-3f9a1c02e4d5f6a7");
}

/* Two class flows held on s-3f9a1c02 (ctl hold --flow): its detail says so, never which call. */
static void
prep_detail_flows(struct fixture *f, struct view_state *vs)
{
	struct session_row *r = (struct session_row *)view_find_session(&f->m, "s-3f9a1c02e4d5f6a7");

	(void)vs;
	assert_non_null(r);
	r->flows_held = 2;
	fx_detail(f, "s-3f9a1c02e4d5f6a7");
}

static void
prep_host_running(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	f->host.running = true;
}

static void
prep_host_never_running(struct fixture *f, struct view_state *vs)
{
	(void)vs;
	memset(&f->host, 0, sizeof f->host);
	f->host.running = true;
}

static const struct render_case cases[] = {
	{ "sessions-100x30", VIEW_SESSIONS, 30, 100, prep_select_2 },
	{ "sessions-80x24", VIEW_SESSIONS, 24, 80, prep_none },
	{ "sessions-60x18", VIEW_SESSIONS, 18, 60, prep_none },
	{ "sessions-40x12", VIEW_SESSIONS, 12, 40, prep_none },
	{ "sessions-20x5", VIEW_SESSIONS, 5, 20, prep_none },
	{ "sessions-1x1", VIEW_SESSIONS, 1, 1, prep_none },
	{ "sessions-empty-80x24", VIEW_SESSIONS, 24, 80, prep_empty },
	{ "sessions-stale-ascii-100x30", VIEW_SESSIONS, 30, 100, prep_stale_ascii },
	{ "sessions-filter-ended-100x12", VIEW_SESSIONS, 12, 100, prep_filter_ended },
	{ "sessions-filter-watchdog-100x12", VIEW_SESSIONS, 12, 100, prep_filter_watchdog },
	{ "sessions-filter-nomatch-80x8", VIEW_SESSIONS, 8, 80, prep_filter_nomatch },
	{ "sessions-sort-lease-100x12", VIEW_SESSIONS, 12, 100, prep_sort_lease },
	{ "sessions-sort-id-reverse-100x12", VIEW_SESSIONS, 12, 100, prep_sort_id_reverse },
	{ "sessions-300-scrolled-100x30", VIEW_SESSIONS, 30, 100, prep_many },
	{ "sessions-two-engines-100x12", VIEW_SESSIONS, 12, 100, prep_two_engines },
	{ "sessions-engine-lost-100x12", VIEW_SESSIONS, 12, 100, prep_engine_lost },
	{ "sessions-quarantined-80x24", VIEW_SESSIONS, 24, 80, prep_quarantined },
	{ "sessions-quarantined-50x12", VIEW_SESSIONS, 12, 50, prep_quarantined },
	{ "detail-running-100x30", VIEW_DETAIL, 30, 100, prep_detail_running },
	{ "detail-quarantined-100x24", VIEW_DETAIL, 24, 100, prep_detail_quarantined },
	{ "detail-flows-100x8", VIEW_DETAIL, 8, 100, prep_detail_flows },
	{ "detail-upstreams-100x24", VIEW_DETAIL, 24, 100, prep_detail_upstreams },
	{ "detail-refused-end-100x30", VIEW_DETAIL, 30, 100, prep_detail_refused },
	{ "detail-watchdog-row-only-80x24", VIEW_DETAIL, 24, 80, prep_detail_watchdog },
	{ "detail-container-left-100x24", VIEW_DETAIL, 24, 100, prep_detail_left },
	{ "detail-audit-incomplete-100x24", VIEW_DETAIL, 24, 100, prep_detail_audit },
	{ "detail-refused-40x12", VIEW_DETAIL, 12, 40, prep_detail_refused },
	{ "detail-pending-100x16", VIEW_DETAIL, 16, 100, prep_detail_pending },
	{ "detail-late-100x16", VIEW_DETAIL, 16, 100, prep_detail_late },
	{ "detail-none-80x24", VIEW_DETAIL, 24, 80, prep_none },
	{ "detail-gone-80x6", VIEW_DETAIL, 6, 80, prep_detail_gone },
	{ "tools-100x30", VIEW_TOOLS, 30, 100, prep_none },
	{ "tools-80x24", VIEW_TOOLS, 24, 80, prep_none },
	{ "tools-40x12", VIEW_TOOLS, 12, 40, prep_none },
	{ "tools-sort-revoked-100x12", VIEW_TOOLS, 12, 100, prep_tools_sort_revoked },
	{ "tools-standing-100x12", VIEW_TOOLS, 12, 100, prep_tools_standing },
	{ "tools-standing-session-100x12", VIEW_TOOLS, 12, 100, prep_tools_standing_session },
	{ "tools-standing-unlisted-100x12", VIEW_TOOLS, 12, 100, prep_tools_standing_unlisted },
	{ "tools-standing-no-session-80x8", VIEW_TOOLS, 8, 80, prep_tools_standing_no_session },
	{ "tools-session-100x12", VIEW_TOOLS, 12, 100, prep_tools_session },
	{ "tools-empty-80x6", VIEW_TOOLS, 6, 80, prep_empty },
	{ "tools-grant-80x24", VIEW_TOOLS, 24, 80, prep_tools_grant },
	{ "tools-grant-session-80x24", VIEW_TOOLS, 24, 80, prep_tools_grant_session },
	{ "tools-held-80x24", VIEW_TOOLS, 24, 80, prep_tools_held },
	{ "tools-held-50x12", VIEW_TOOLS, 12, 50, prep_tools_held },
	{ "tools-held-session-80x24", VIEW_TOOLS, 24, 80, prep_tools_held_session },
	{ "tools-held-session-50x12", VIEW_TOOLS, 12, 50, prep_tools_held_session },
	{ "audit-100x30", VIEW_AUDIT, 30, 100, prep_none },
	{ "audit-80x24", VIEW_AUDIT, 24, 80, prep_none },
	{ "audit-follow-100x8", VIEW_AUDIT, 8, 100, prep_none },
	{ "audit-scrolled-100x8", VIEW_AUDIT, 8, 100, prep_audit_scrolled },
	{ "audit-filter-denied-100x12", VIEW_AUDIT, 12, 100, prep_audit_filter },
	{ "audit-40x12", VIEW_AUDIT, 12, 40, prep_none },
	{ "audit-empty-80x6", VIEW_AUDIT, 6, 80, prep_empty },
	{ "audit-unreadable-100x8", VIEW_AUDIT, 8, 100, prep_audit_unreadable },
	{ "audit-unreadable-empty-100x6", VIEW_AUDIT, 6, 100, prep_audit_unreadable_empty },
	{ "host-100x30", VIEW_HOST, 30, 100, prep_select_2 },
	{ "host-80x24", VIEW_HOST, 24, 80, prep_none },
	{ "host-running-80x24", VIEW_HOST, 24, 80, prep_host_running },
	{ "host-40x12", VIEW_HOST, 12, 40, prep_none },
	{ "host-never-80x6", VIEW_HOST, 6, 80, prep_empty },
	{ "host-never-running-80x6", VIEW_HOST, 6, 80, prep_host_never_running },
};

static void
draw_case(const struct render_case *c, struct fixture *f, struct view_state *vs, WINDOW **out)
{
	fx_init(f);
	memset(vs, 0, sizeof *vs);
	c->prepare(f, vs);
	*out = screen_window(c->lines, c->cols);
	views[c->view]->draw(*out, &f->m, vs);
}

static void
test_render_case(void **state)
{
	const struct render_case *c = *state;
	static char text[SCREEN_MAX];
	struct view_state vs;
	struct fixture f;
	WINDOW *w;

	draw_case(c, &f, &vs, &w);
	screen_text(w, text, sizeof text);
	golden_check(c->name, text);
	delwin(w);
	free(f.rows);
}

/* Attributes: the monochrome ones, since colour is off. */

/* The column of the first occurrence of s on line y, or -1. */
static int
screen_find(WINDOW *w, int y, const char *s)
{
	char line[4096];
	char *at;

	screen_line(w, y, line, sizeof line);
	at = strstr(line, s);
	if (!at)
		return -1;
	*at = '\0';
	return (int)mbstowcs(NULL, line, 0);
}

/* The line where s first appears, and its column. */
static int
screen_find_line(WINDOW *w, const char *s, int *x)
{
	int y;

	for (y = 0; y < getmaxy(w); y++)
		if ((*x = screen_find(w, y, s)) >= 0)
			return y;
	fail_msg("\"%s\" is not on the screen", s);
	return -1;
}

/* Through the wide-character call: winch() garbles a cell holding "▶". */
static attr_t
cell_attr(WINDOW *w, int y, int x)
{
	wchar_t wch[CCHARW_MAX + 1];
	cchar_t cc;
	attr_t a = 0;
	short pair = 0;

	if (mvwin_wch(w, y, x, &cc) == ERR || getcchar(&cc, wch, &a, &pair, NULL) == ERR)
		fail_msg("cannot read the cell at %d,%d", y, x);
	return (a & A_ATTRIBUTES & ~A_COLOR) | (attr_t)COLOR_PAIR(pair);
}

static void
assert_cell(WINDOW *w, const char *s, attr_t want)
{
	int x = 0, y = screen_find_line(w, s, &x);

	if (cell_attr(w, y, x) != want)
		fail_msg("\"%s\" at %d,%d: attributes %#lx, want %#lx", s, y, x,
			 (unsigned long)cell_attr(w, y, x), (unsigned long)want);
}

static void
test_attrs_sessions(void **state)
{
	struct view_state vs;
	struct fixture f;
	WINDOW *w;
	int x, y;

	(void)state;
	draw_case(&cases[0], &f, &vs, &w);
	assert_cell(w, "LATE", color_attr(UI_COLOR_LEASE_LATE));
	assert_cell(w, "1.40s", color_attr(UI_COLOR_LEASE_LATE));
	assert_cell(w, "watchdog_failed", color_attr(UI_COLOR_ALERT));
	assert_cell(w, "admission_refused", color_attr(UI_COLOR_ALERT));
	assert_cell(w, "failed: no ack", color_attr(UI_COLOR_ALERT));
	assert_cell(w, "pending 1", color_attr_sel(UI_COLOR_PENDING, true));
	assert_cell(w, "not approved", color_attr(UI_COLOR_DIM));
	/* Row 2 (s-5d3e…) is selected: the whole line, gaps too, in the cursor. */
	y = screen_find_line(w, "5d3e8f10", &x);
	assert_int_equal(cell_attr(w, y, 0), color_attr(UI_COLOR_CURSOR));
	assert_int_equal(cell_attr(w, y, getmaxx(w) - 1), color_attr(UI_COLOR_CURSOR));
	/* The marked rows carry '*' in column 1, in MARKED. */
	y = screen_find_line(w, "c1b2a9f0", &x);
	assert_int_equal(mvwinch(w, y, 1) & A_CHARTEXT, '*');
	assert_int_equal(cell_attr(w, y, 1), color_attr(UI_COLOR_MARKED));
	assert_true(color_attr(UI_COLOR_ALERT) != color_attr(UI_COLOR_DEFAULT));
	assert_true(color_attr(UI_COLOR_LEASE_LATE) != color_attr(UI_COLOR_LEASE_OK));
	delwin(w);
	free(f.rows);
}

/* A held tool: "held" in the pending colour, in its status and its cutover cell, never "allowed". */
static void
test_attrs_held(void)
{
	const struct render_case one = { "", VIEW_TOOLS, 24, 80, prep_tools_held_session };
	const struct render_case all = { "", VIEW_TOOLS, 12, 50, prep_tools_held };
	static char text[SCREEN_MAX];
	struct view_state vs;
	struct fixture f;
	WINDOW *w;

	draw_case(&one, &f, &vs, &w);
	assert_cell(w, "held ", color_attr_sel(UI_COLOR_PENDING, true));	/* mail.send, selected */
	screen_text(w, text, sizeof text);
	assert_null(strstr(text, "mail.send    public       allowed"));
	delwin(w);
	free(f.rows);
	draw_case(&all, &f, &vs, &w);
	assert_cell(w, "held in ", color_attr(UI_COLOR_PENDING));
	delwin(w);
	free(f.rows);
}

static void
test_attrs_other_views(void **state)
{
	const struct render_case audit = { "", VIEW_AUDIT, 30, 100, prep_none };
	const struct render_case host = { "", VIEW_HOST, 30, 100, prep_none };
	const struct render_case det = { "", VIEW_DETAIL, 30, 100, prep_detail_refused };
	static char text[SCREEN_MAX];
	struct view_state vs;
	struct fixture f;
	size_t i, n;
	WINDOW *w;

	(void)state;
	draw_case(&audit, &f, &vs, &w);
	assert_cell(w, "egress_denied", color_attr(UI_COLOR_DENIED));
	assert_cell(w, "refused", color_attr(UI_COLOR_DENIED));
	delwin(w);
	free(f.rows);
	/* A dispatch the log has no outcome for (a crash): "unknown", as an alert. */
	draw_case(&audit, &f, &vs, &w);
	screen_text(w, text, sizeof text);
	assert_null(strstr(text, "unknown"));
	for (i = 0, n = 0; i < f.m.n_audit; i++)
		if (strcmp(f.audit[i].type, "dispatch") == 0) {
			f.audit[i].unknown_outcome = true;
			n++;
		}
	assert_int_equal(n, 1);
	werase(w);
	views[VIEW_AUDIT]->draw(w, &f.m, &vs);
	assert_cell(w, "unknown  ", color_attr(UI_COLOR_ALERT));	/* the row, not the title */
	assert_cell(w, "1 unknown outcome (no terminal entry)", color_attr(UI_COLOR_ALERT));
	delwin(w);
	free(f.rows);
	draw_case(&host, &f, &vs, &w);
	assert_cell(w, "FAIL ", color_attr(UI_COLOR_FAIL));
	assert_cell(w, "name=apparmor", color_attr(UI_COLOR_FAIL));
	delwin(w);
	free(f.rows);
	draw_case(&det, &f, &vs, &w);
	assert_cell(w, "REFUSE", color_attr(UI_COLOR_FAIL));
	delwin(w);
	free(f.rows);
	test_attrs_held();
}

/* The views with no golden: every size down to 1x1, and nothing past the window. */
static void
test_tiny_sizes(void **state)
{
	static const int sizes[][2] = { { 1, 1 }, { 2, 3 }, { 3, 10 }, { 5, 20 }, { 12, 40 },
					{ 19, 30 }, { 20, 30 }, { 24, 80 } };
	const struct render_case *c;
	struct view_state vs;
	struct fixture f;
	size_t i, s;
	WINDOW *w;

	(void)state;
	for (i = 0; i < N_OF(cases); i++) {
		for (s = 0; s < N_OF(sizes); s++) {
			c = &cases[i];
			draw_case(&(struct render_case){ c->name, c->view, sizes[s][0], sizes[s][1],
							 c->prepare }, &f, &vs, &w);
			delwin(w);
			free(f.rows);
		}
	}
}

/* Rows and targets follow the order and filter on screen. */
static void
test_targets(void **state)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];
	struct view_state vs = { 0 };
	struct fixture f;

	(void)state;
	fx_init(&f);
	assert_int_equal(views[VIEW_SESSIONS]->rows(&f.m, &vs), 6);
	views[VIEW_SESSIONS]->target(&f.m, &vs, 0, session, tool);
	assert_string_equal(session, "s-a0c4d2117f6e5d4c");
	assert_string_equal(tool, "");
	vs.sort = 3;	/* lease, oldest ack first */
	views[VIEW_SESSIONS]->target(&f.m, &vs, 0, session, tool);
	assert_string_equal(session, "s-c1b2a9f0d3e4b5a6");
	snprintf(vs.filter, sizeof vs.filter, "Watchdog");
	assert_int_equal(views[VIEW_SESSIONS]->rows(&f.m, &vs), 1);
	views[VIEW_SESSIONS]->target(&f.m, &vs, 5, session, tool);
	assert_string_equal(session, "");
	memset(&vs, 0, sizeof vs);
	assert_int_equal(views[VIEW_TOOLS]->rows(&f.m, &vs), 4);
	views[VIEW_TOOLS]->target(&f.m, &vs, 1, session, tool);
	assert_string_equal(tool, "mail.send");
	assert_string_equal(session, "");
	snprintf(vs.session, sizeof vs.session, "s-5d3e8f1029a8b7c6");
	views[VIEW_TOOLS]->target(&f.m, &vs, 0, session, tool);
	assert_string_equal(tool, "files.read");
	assert_string_equal(session, "s-5d3e8f1029a8b7c6");
	free(f.rows);
}

/* The session id leaves the snapshot, as a forgotten ended one does. */
static void
forget(struct fixture *f, const char *id)
{
	size_t i;

	for (i = 0; i < f->snap.n && strcmp(f->rows[i].id, id) != 0; i++)
		;
	assert_true(i < f->snap.n);
	memmove(&f->rows[i], &f->rows[i + 1], (f->snap.n - i - 1) * sizeof f->rows[0]);
	f->snap.n--;
}

/* The tool or session the cursor is on after a draw, as a key acts on it. */
static void
target_after_draw(struct fixture *f, struct view_state *vs, enum view_id v, char *session,
		  char *tool)
{
	WINDOW *w = screen_window(24, 100);

	views[v]->draw(w, &f->m, vs);
	views[v]->target(&f->m, vs, vs->selected, session, tool);
	delwin(w);
}

/*
 * The cursor stays on its tool, and on its session, when a row comes or
 * goes above it between two draws (a session starts with a tool that sorts
 * first, an ended one is forgotten): a key then acts on what was selected,
 * not on the row that took its place. A move by the operator still moves it.
 */
static void
test_cursor_kept(void **state)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX], was[SNAP_ID_MAX];
	struct view_state vs = { 0 };
	struct fixture f;

	(void)state;
	fx_init(&f);
	vs.selected = 2;	/* files.read, mail.send, notes.append, web.fetch */
	target_after_draw(&f, &vs, VIEW_TOOLS, session, tool);
	assert_string_equal(tool, "notes.append");
	for (size_t i = 0; i < f.snap.n; i++)	/* a tool that sorts first, on every session */
		fx_tool(&f.rows[i], "archive.put", "internal", true, true);
	target_after_draw(&f, &vs, VIEW_TOOLS, session, tool);
	assert_string_equal(tool, "notes.append");
	assert_int_equal(vs.selected, 3);
	vs.selected = 4;	/* the operator moves down */
	target_after_draw(&f, &vs, VIEW_TOOLS, session, tool);
	assert_string_equal(tool, "web.fetch");

	memset(&vs, 0, sizeof vs);
	vs.selected = 3;
	target_after_draw(&f, &vs, VIEW_SESSIONS, was, tool);
	forget(&f, "s-a0c4d2117f6e5d4c");	/* the first listed, as in test_targets */
	target_after_draw(&f, &vs, VIEW_SESSIONS, session, tool);
	assert_string_equal(session, was);
	assert_int_equal(vs.selected, 2);
	free(f.rows);
}

static void
test_detail_target(void **state)
{
	char session[SNAP_ID_MAX], tool[SNAP_NAME_MAX];
	struct view_state vs = { 0 };
	struct fixture f;
	size_t i, n;
	int tools = 0;

	(void)state;
	fx_init(&f);
	fx_detail(&f, "s-3f9a1c02e4d5f6a7");
	n = views[VIEW_DETAIL]->rows(&f.m, &vs);
	assert_true(n > 30);
	for (i = 0; i < n; i++) {
		views[VIEW_DETAIL]->target(&f.m, &vs, i, session, tool);
		assert_string_equal(session, "s-3f9a1c02e4d5f6a7");
		tools += tool[0] != '\0';
	}
	assert_int_equal(tools, 4);
	free(f.rows);
}

/* The audit view follows new entries only while the cursor is on the last row. */
static void
test_audit_follow(void **state)
{
	struct view_state vs = { 0 };
	struct fixture f;
	WINDOW *w;

	(void)state;
	fx_init(&f);
	w = screen_window(8, 100);
	f.m.n_audit = 5;
	views[VIEW_AUDIT]->draw(w, &f.m, &vs);
	assert_int_equal(vs.selected, 4);
	f.m.n_audit = 8;
	views[VIEW_AUDIT]->draw(w, &f.m, &vs);
	assert_int_equal(vs.selected, 7);
	vs.selected = 5;
	f.m.n_audit = 11;
	views[VIEW_AUDIT]->draw(w, &f.m, &vs);
	assert_int_equal(vs.selected, 5);
	vs.selected = 10;
	views[VIEW_AUDIT]->draw(w, &f.m, &vs);
	assert_int_equal(vs.selected, 10);
	delwin(w);
	free(f.rows);
}

static void
test_registry(void **state)
{
	static const struct {
		const char *name, *title;
	} info[VIEW_COUNT] = {
#define VIEW_EXPECT(e, name, title) [VIEW_##e] = { #name, title },
		VIEW_INFO(VIEW_EXPECT)
#undef VIEW_EXPECT
	};
	int i;

	(void)state;
	for (i = 0; i < VIEW_COUNT; i++) {
		assert_non_null(views[i]);
		assert_int_equal(views[i]->id, i);
		assert_string_equal(views[i]->name, info[i].name);
		assert_string_equal(views[i]->title, info[i].title);
		assert_non_null(views[i]->draw);
		assert_non_null(views[i]->rows);
		/*
		 * Only the host view's rows are no session's, and the timeline's
		 * are the story for a review: nothing to act on.
		 */
		if (i == VIEW_HOST || i == VIEW_TIMELINE)
			assert_null(views[i]->target);
		else
			assert_non_null(views[i]->target);
		assert_int_equal(views[i]->filters,
				 i == VIEW_SESSIONS || i == VIEW_TOOLS || i == VIEW_AUDIT ||
				 i == VIEW_TIMELINE || i == VIEW_PENDING);
		/* Only the timeline jumps ([ ]: between operators' changes). */
		if (i == VIEW_TIMELINE)
			assert_non_null(views[i]->jump);
		else
			assert_null(views[i]->jump);
		/* Only the pending view's rows are held calls: approve and deny act there alone. */
		if (i == VIEW_PENDING)
			assert_non_null(views[i]->held);
		else
			assert_null(views[i]->held);
	}
}

static void
test_formats(void **state)
{
	char b[DRAW_FMT_MAX];

	(void)state;
	assert_string_equal(draw_fmt_bytes(b, 0), "0");
	assert_string_equal(draw_fmt_bytes(b, 512), "512B");
	assert_string_equal(draw_fmt_bytes(b, 1229), "1.2K");
	assert_string_equal(draw_fmt_bytes(b, 18432), "18K");
	assert_string_equal(draw_fmt_bytes(b, 1048575), "1.0M");
	assert_string_equal(draw_fmt_bytes(b, 1258291), "1.2M");
	assert_string_equal(draw_fmt_bytes(b, UINT64_MAX), "16E");
	assert_string_equal(draw_fmt_count(b, 9999), "9999");
	assert_string_equal(draw_fmt_count(b, 12345), "12k");
	assert_string_equal(draw_fmt_duration(b, 133000), "02:13");
	assert_string_equal(draw_fmt_duration(b, 3840000), "1h04");
	assert_string_equal(draw_fmt_duration(b, -5), "00:00");
	assert_string_equal(draw_fmt_secs(b, 210), "0.21s");
	assert_string_equal(draw_fmt_secs(b, 9999), "9.99s");
	assert_string_equal(draw_fmt_secs(b, 12345), "12.3s");
	assert_string_equal(draw_fmt_us(b, 850), "850us");
	assert_string_equal(draw_fmt_us(b, 1830), "1.83ms");
	assert_string_equal(draw_fmt_ago(b, NOW_MS, NOW_MS - 185000), "3m ago");
	assert_string_equal(draw_fmt_ago(b, NOW_MS, 0), "never");
	assert_string_equal(draw_fmt_clock(b, NOW_MS), "12:04:31");
	assert_string_equal(draw_short_id(b, "sha256:9e41b7c2d8a4"), "9e41b7c2");
	assert_string_equal(draw_short_id(b, "s-3f9a1c02e4d5f6a7"), "3f9a1c02");
	assert_string_equal(draw_short_id(b, "abc"), "abc");
}

/* Control bytes and broken UTF-8 never reach the terminal; cut text ends in '~'. */
static void
test_text_clip(void **state)
{
	char line[256];
	WINDOW *w;

	(void)state;
	w = screen_window(3, 12);
	assert_int_equal(draw_text(w, 0, 0, -1, A_NORMAL, "a\x1b[2Jb\xff\xc3(c"), 10);
	screen_line(w, 0, line, sizeof line);
	assert_string_equal(line, "a?[2Jb?" "?(c");
	assert_int_equal(draw_text(w, 1, 4, 5, A_NORMAL, "abcdefgh"), 5);
	screen_line(w, 1, line, sizeof line);
	assert_string_equal(line, "    abcd~");
	assert_int_equal(draw_text(w, 2, 8, -1, A_NORMAL, "──────"), 4);
	screen_line(w, 2, line, sizeof line);
	assert_string_equal(line, "        ───~");
	assert_int_equal(draw_text(w, 3, 0, -1, A_NORMAL, "x"), 0);
	assert_int_equal(draw_text(w, 0, 12, -1, A_NORMAL, "x"), 0);
	delwin(w);
}

/* With colour: one pair per meaning; the cursor's pair wins, bold stays. */
static void
test_color_table(void **state)
{
	(void)state;
	assert_int_equal(color_by_name("lease-late"), UI_COLOR_LEASE_LATE);
	assert_int_equal(color_by_name("no-such-colour"), UI_COLOR_COUNT);
	assert_string_equal(color_name(UI_COLOR_REVOKED), "revoked");
	color_init(true);
	if (has_colors()) {
		assert_true(color_attr(UI_COLOR_ALERT) & A_COLOR);
		assert_true(PAIR_NUMBER(color_attr(UI_COLOR_ALERT)) !=
			    PAIR_NUMBER(color_attr(UI_COLOR_DENIED)));
		assert_int_equal(color_attr_sel(UI_COLOR_ALERT, true) & A_COLOR,
				 color_attr(UI_COLOR_CURSOR) & A_COLOR);
		assert_true(color_attr_sel(UI_COLOR_ALERT, true) & A_BOLD);
	}
	color_init(false);
	assert_int_equal(color_attr(UI_COLOR_ALERT), A_BOLD | A_UNDERLINE);
	assert_int_equal(color_attr(UI_COLOR_ALERT) & A_COLOR, 0);
}

static int
screen_open(void **state)
{
	static const char *const terms[] = { "xterm-256color", "xterm", "vt100", "dumb" };
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = NULL;
	size_t i;

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	if (!setlocale(LC_ALL, "C.UTF-8") || !out || !in)
		return -1;
	use_env(FALSE);
	for (i = 0; i < N_OF(terms) && !scr; i++)
		scr = newterm(terms[i], out, in);
	if (!scr)
		return -1;
	set_term(scr);
	color_init(false);
	return 0;
}

static int
screen_close(void **state)
{
	(void)state;
	endwin();
	return 0;
}

int
main(void)
{
	struct CMUnitTest tests[N_OF(cases) + 11];
	size_t i, n = 0;

	for (i = 0; i < N_OF(cases); i++)
		tests[n++] = (struct CMUnitTest){ cases[i].name, test_render_case, NULL, NULL,
						  (void *)&cases[i] };
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_attrs_sessions);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_attrs_other_views);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_tiny_sizes);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_targets);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cursor_kept);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_detail_target);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_audit_follow);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_registry);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_formats);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_text_clip);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_color_table);
	return _cmocka_run_group_tests("render", tests, n, screen_open, screen_close);
}
