#include "demo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "demo_image.h"
#include "link.h"
#include "mcp_confine.h"

#define DEMO_KNOWN		64		/* session ids remembered with their role */
#define DEMO_DIR_ENTRIES_MAX	256		/* what demo_close removes, at most */
#define DEMO_LAPSE_S_MAX	3600
#define DEMO_LAPSE_AGE_MS	3000	/* a victim has run (and called) for so long */
#define DEMO_LAPSE_GIVEUP_MS	15000	/* the engine acts within ~1 s; never leave one paused */
#define DEMO_CMDLINE_MAX	4096
#define DEMO_STEADY_MS		60000
#define DEMO_PESTER_MS		60000
#define DEMO_CHAOS_MS		20000
#define DEMO_BACKOFF_FIRST_MS	2000	/* after a failed start; doubling to 16 s */
#define DEMO_MCP_MS		90000
#define DEMO_MCP_MEMORY		(512LL << 20)	/* Node.js needs more than the defaults */
#define DEMO_MCP_PIDS		256

#ifndef AIRLOCK_THIRDPARTY_DIR
#define AIRLOCK_THIRDPARTY_DIR	""	/* meson sets it: <source>/tests/thirdparty */
#endif

enum demo_role {
	ROLE_STEADY,
	ROLE_PESTER,
	ROLE_CHAOS,
	ROLE_MCP,
};

static const char *const demo_role_names[] = { "steady", "pester", "chaos", "mcp" };

/*
 * The roles kept live; a slot is refilled once its session ended. The MCP
 * slot only when its image exists (node and the SDK installed).
 */
static const enum demo_role demo_slot_roles[] = {
	ROLE_STEADY, ROLE_STEADY, ROLE_PESTER, ROLE_CHAOS, ROLE_MCP,
};
#define DEMO_SLOTS (sizeof demo_slot_roles / sizeof demo_slot_roles[0])

struct demo_slot {
	char id[SNAP_ID_MAX];	/* empty: nothing started yet */
	int64_t started_ms;	/* wall clock, as snapshots have it */
	bool judged;		/* its end was counted as a start that failed */
	bool seen_running;
};

struct demo_known {
	char id[SNAP_ID_MAX];
	enum demo_role role;
};

/* The one watchdog the demo has paused, if any. */
struct demo_lapse {
	bool active;
	long pid;
	char session[SNAP_ID_MAX];
	char container[SNAP_CONTAINER_MAX];
	int64_t since_ms;	/* monotonic */
};

struct demo {
	char dir[PATH_MAX];	/* 0700: the audit log, the payload, the configs */
	char sinks[PATH_MAX];	/* the upstreams' only writable place */
	char audit[PATH_MAX];
	char agent[PATH_MAX];
	char upstream[PATH_MAX];
	char image[SNAP_IMAGE_MAX];
	bool built;
	char mcp_image[SNAP_IMAGE_MAX];	/* empty: no MCP session */
	bool mcp_built;
	char mcp_note[AL_ERR_MAX];	/* why there is none, for the operator */
	struct link *link;
	struct demo_slot slots[DEMO_SLOTS];
	struct demo_known known[DEMO_KNOWN];
	size_t known_next;
	unsigned long chaos_runs;
	int64_t lapse_every_ms;
	int64_t next_lapse_ms;	/* monotonic */
	struct demo_lapse lapse;
	char error[AL_ERR_MAX];
	/*
	 * Starts that came to nothing in a row (the daemon gone, say): the
	 * refills then wait, longer each time, and try one slot at a time,
	 * instead of filling the list with refusals every second.
	 */
	unsigned failed_starts;
	int64_t next_start_ms;	/* monotonic */
	size_t ended[SUPERVISOR_SESSIONS_MAX];	/* scratch for the forget step */
};

/* --- where things are ------------------------------------------------------ */

static int
demo_path(char *out, const char *dir, const char *name, struct al_err *err)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX)
		return al_fail(err, "demo: path too long under %.64s", dir);
	return 0;
}

/* The directory holding the fixtures: $AIRLOCK_DEMO_DIR, or <dir of exe>/tests. */
static int
demo_fixture_dir(const char *exe, char *out, struct al_err *err)
{
	const char *env = getenv("AIRLOCK_DEMO_DIR");
	char real[PATH_MAX], *slash;

	if (env && env[0]) {
		if (strlen(env) >= PATH_MAX)
			return al_fail(err, "demo: AIRLOCK_DEMO_DIR is too long");
		memcpy(out, env, strlen(env) + 1);
		return 0;
	}
	/* A bare name came from PATH: only the kernel knows where it is. */
	if (!exe || !strchr(exe, '/'))
		exe = "/proc/self/exe";
	if (!realpath(exe, real))
		return al_fail(err, "demo: cannot resolve the airlock binary %.128s", exe);
	slash = strrchr(real, '/');
	*slash = '\0';
	return demo_path(out, real[0] ? real : "/", "tests", err);
}

static int
demo_find_fixtures(struct demo *d, const char *exe, struct al_err *err)
{
	char dir[PATH_MAX];

	if (demo_fixture_dir(exe, dir, err) < 0 || demo_path(d->agent, dir, "agent", err) < 0 ||
	    demo_path(d->upstream, dir, "upstream", err) < 0)
		return -1;
	if (access(d->agent, X_OK) != 0)
		return al_fail(err, "demo: no fixture agent at %.160s (build the tests, or set "
			       "AIRLOCK_DEMO_DIR)", d->agent);
	if (access(d->upstream, X_OK) != 0)
		return al_fail(err, "demo: no fixture upstream at %.160s (build the tests, or "
			       "set AIRLOCK_DEMO_DIR)", d->upstream);
	return 0;
}

static int
demo_make_dir(struct demo *d, struct al_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	if (!tmp || !tmp[0] || strlen(tmp) > PATH_MAX - 64)
		tmp = "/tmp";
	snprintf(tmpl, sizeof tmpl, "%s/airlock-demo-XXXXXX", tmp);
	/* mkdtemp creates it 0700: the audit log and the payload stay private. */
	if (!mkdtemp(tmpl))
		return al_fail(err, "demo: cannot create a private directory under %.128s", tmp);
	memcpy(d->dir, tmpl, strlen(tmpl) + 1);
	/*
	 * The upstreams' drop box, the one path in their paths.rw. An engine
	 * that can change uid runs them as airlock-upstream (mcp_confine.h,
	 * mcp_confine_can_change_ids): they may
	 * create their sinks here, not list it nor remove what is not theirs
	 * (sticky), and never reach the audit log beside it. Its parent is
	 * 0711 then: they may pass through it, not read it.
	 */
	if (demo_path(d->sinks, d->dir, "sinks", err) < 0)
		return -1;
	if (mkdir(d->sinks, 0700) != 0 ||
	    (mcp_confine_can_change_ids() && (chmod(d->sinks, 01733) != 0 || chmod(d->dir, 0711) != 0)))
		return al_fail(err, "demo: cannot create the sinks directory under %.128s", tmp);
	return demo_path(d->audit, d->dir, "audit.db", err);
}

/* --- the MCP agent's image -------------------------------------------------------- */

/* Where demo_image.sh and the SDK are: $AIRLOCK_DEMO_MCP_DIR, or the source tree's. */
static const char *
demo_thirdparty_dir(void)
{
	const char *env = getenv("AIRLOCK_DEMO_MCP_DIR");

	return env && env[0] ? env : AIRLOCK_THIRDPARTY_DIR;
}

/*
 * The MCP session's image, by tests/thirdparty/demo_image.sh (Node.js, its
 * libraries, the SDK, the agent and <dir of exe>/shim/airlock-shim). It
 * never fails the demo: without node, the SDK or the shim there is no MCP
 * session, and mcp_note says why.
 */
static void
demo_mcp_setup(struct demo *d, const char *exe)
{
	char script[PATH_MAX], shim[PATH_MAX], real[PATH_MAX], *slash;
	const char *dir = demo_thirdparty_dir();
	int rc;

	if (!exe || !strchr(exe, '/'))
		exe = "/proc/self/exe";
	if (!dir[0] || demo_path(script, dir, "demo_image.sh", NULL) < 0 ||
	    access(script, X_OK) != 0 || !realpath(exe, real) || !(slash = strrchr(real, '/'))) {
		snprintf(d->mcp_note, sizeof d->mcp_note,
			 "demo: no MCP session (tests/thirdparty/demo_image.sh not found)");
		return;
	}
	*slash = '\0';
	if (demo_path(shim, real[0] ? real : "/", "shim/airlock-shim", NULL) < 0 ||
	    access(shim, R_OK) != 0) {
		snprintf(d->mcp_note, sizeof d->mcp_note,
			 "demo: no MCP session (no airlock-shim beside the binary)");
		return;
	}
	rc = demo_image_script(script, shim, d->mcp_image, &d->mcp_built);
	if (rc == 0)
		return;
	snprintf(d->mcp_note, sizeof d->mcp_note, rc == 77 ?
		 "demo: no MCP session (node or the MCP SDK is not installed: scripts/setup)" :
		 "demo: no MCP session (its image could not be built)");
}

/* --- the configuration ------------------------------------------------------- */

/* The payload: demo data of the confidential class, in a 0600 file. */
static int
demo_write_payload(const struct demo *d, struct al_err *err)
{
	static const char text[] =
		"{\"customer\": \"Demo Customer Ltd\", \"card\": \"" DEMO_CANARY "\"}\n";
	char path[PATH_MAX];
	int fd;
	bool ok;

	if (demo_path(path, d->dir, "payload.json", err) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return al_fail(err, "demo: cannot create %.160s", path);
	ok = write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1);
	ok = close(fd) == 0 && ok;
	return ok ? 0 : al_fail(err, "demo: cannot write %.160s", path);
}

static json_t *
demo_upstream(const struct demo *d, const char *sink_name)
{
	char sink[PATH_MAX];

	if (demo_path(sink, d->sinks, sink_name, NULL) < 0)
		return NULL;
	return json_pack("{s:[s,s,s], s:{s:[s]}}", "argv", d->upstream, "--sink", sink,
			 "paths", "rw", d->sinks);
}

static json_t *
demo_tools(void)
{
	return json_pack("{s:{s:s,s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s}}",
			 "notes.append", "upstream", "notes", "remote", "store",
			 "data_class", "confidential", "sink_ceiling", "confidential",
			 "response_ceiling", "confidential",
			 "mail.send", "upstream", "mail", "remote", "publish",
			 "data_class", "public", "sink_ceiling", "public",
			 "response_ceiling", "public");
}

static json_t *
demo_profile(const struct demo *d, enum demo_role role, unsigned long seed)
{
	char arg[24];

	if (role == ROLE_MCP)
		return json_pack("{s:s,s:s,s:[s,s],s:[s,s],s:{s:s},s:{s:i},s:I,s:i}",
				 "image", d->mcp_image, "runtime", "runc",
				 "entrypoint", "/airlock/shim", "--",
				 "cmd", "/usr/bin/node", "/app/agent.mjs",
				 "env", "HOME", "/tmp", "tmpfs", "/tmp", 4 << 20,
				 "memory", (json_int_t)DEMO_MCP_MEMORY, "pids_limit", DEMO_MCP_PIDS);
	if (role != ROLE_CHAOS)
		return json_pack("{s:s,s:s,s:[s]}", "image", d->image, "runtime", "runc",
				 "cmd", demo_role_names[role]);
	snprintf(arg, sizeof arg, "%lu", seed);
	return json_pack("{s:s,s:s,s:[s,s]}", "image", d->image, "runtime", "runc",
			 "cmd", "chaos", arg);
}

static json_t *
demo_config(const struct demo *d, enum demo_role role, unsigned long seed)
{
	long ms = role == ROLE_CHAOS ? DEMO_CHAOS_MS : role == ROLE_MCP ? DEMO_MCP_MS :
		  role == ROLE_PESTER ? DEMO_PESTER_MS : DEMO_STEADY_MS;
	char payload[PATH_MAX];

	if (demo_path(payload, d->dir, "payload.json", NULL) < 0)
		return NULL;
	/* "o" steals each reference, also the NULL of a failed part (pack fails). */
	return json_pack("{s:o,s:{s:b},s:{s:i,s:i,s:i},s:{s:o,s:o},s:o,s:{s:s,s:s},s:{s:s,s:s}}",
			 "profile", demo_profile(d, role, seed),
			 "agent", "mcp", role == ROLE_MCP,
			 "bounds", "session_ms", (int)ms, "calls", 4096,
			 "stdout_bytes", 4 << 20,
			 "upstreams", "notes", demo_upstream(d, "notes.sink"),
			 "mail", demo_upstream(d, "mail.sink"),
			 "tools", demo_tools(),
			 "aliases", "save", "notes.append", "publish", "mail.send",
			 "initial", "file", payload, "class", "confidential");
}

/* <dir>/<role>.json, rewritten before each start (the supervisor loads it at once). */
static int
demo_write_config(const struct demo *d, enum demo_role role, unsigned long seed,
		  char path[PATH_MAX], struct al_err *err)
{
	char name[32];
	json_t *cfg;
	int rc;

	snprintf(name, sizeof name, "%s.json", demo_role_names[role]);
	if (demo_path(path, d->dir, name, err) < 0)
		return -1;
	if (!(cfg = demo_config(d, role, seed)))
		return al_fail(err, "demo: cannot build the %s configuration",
			       demo_role_names[role]);
	rc = json_dump_file(cfg, path, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(cfg);
	return rc == 0 ? 0 : al_fail(err, "demo: cannot write %.160s", path);
}

/* --- setup and teardown -------------------------------------------------------- */

static int64_t
demo_lapse_interval_ms(void)
{
	const char *env = getenv("AIRLOCK_DEMO_LAPSE_S");
	char *end;
	long s;

	if (!env || !env[0])
		return DEMO_LAPSE_S_DEFAULT * 1000LL;
	errno = 0;
	s = strtol(env, &end, 10);
	if (errno || *end || s < 1 || s > DEMO_LAPSE_S_MAX)
		return DEMO_LAPSE_S_DEFAULT * 1000LL;
	return s * 1000LL;
}

int
demo_prepare(const char *exe, struct demo **out, struct al_err *err)
{
	struct demo *d = calloc(1, sizeof *d);

	*out = NULL;
	if (!d)
		return al_fail(err, "demo: out of memory");
	d->lapse_every_ms = demo_lapse_interval_ms();
	if (demo_find_fixtures(d, exe, err) < 0 || demo_make_dir(d, err) < 0 ||
	    demo_image_agent(getenv("DOCKER_HOST"), d->agent, d->image, &d->built, err) < 0 ||
	    demo_write_payload(d, err) < 0) {
		demo_close(d);
		return -1;
	}
	demo_mcp_setup(d, exe);
	*out = d;
	return 0;
}

const char *
demo_audit_path(const struct demo *d)
{
	return d->audit;
}

const char *
demo_image(const struct demo *d, bool *built)
{
	if (built)
		*built = d->built;
	return d->image;
}

const char *
demo_mcp_image(const struct demo *d, bool *built)
{
	if (built)
		*built = d->mcp_built;
	return d->mcp_image;
}

const char *
demo_mcp_note(const struct demo *d)
{
	return d->mcp_note;
}

const char *
demo_error(const struct demo *d)
{
	return d->error;
}

const char *
demo_session_role(const struct demo *d, const char *session_id)
{
	size_t i;

	for (i = 0; session_id && i < DEMO_KNOWN; i++)
		if (d->known[i].id[0] && strcmp(d->known[i].id, session_id) == 0)
			return demo_role_names[d->known[i].role];
	return NULL;
}

static void
demo_remember(struct demo *d, const char *id, enum demo_role role)
{
	struct demo_known *k = &d->known[d->known_next++ % DEMO_KNOWN];

	memcpy(k->id, id, SNAP_ID_MAX);
	k->role = role;
}

/*
 * The next chaos seed: the misbehaviour cycles oversize, stall, crash, and
 * the number of saves before it (3 + seed % 6) wanders.
 */
static unsigned long
demo_chaos_seed(struct demo *d)
{
	unsigned long k = d->chaos_runs++;

	return (k % 3) * 6 + (k * 5 + 2) % 6 + 18 * (k / 3 % 4);
}

static int
demo_start_slot(struct demo *d, size_t i, struct al_err *err)
{
	enum demo_role role = demo_slot_roles[i];
	unsigned long seed = role == ROLE_CHAOS ? demo_chaos_seed(d) : 0;
	char path[PATH_MAX];
	struct link_result r = { 0 };

	if (demo_write_config(d, role, seed, path, err) < 0)
		return -1;
	/* The local link answers at once; an answer still to come counts as a failed start. */
	if (d->link->ops->start(d->link, path, &r) != LINK_DONE || !r.ok)
		return al_fail(err, "demo: cannot start a %s session: %s", demo_role_names[role],
			       r.ok ? "no answer" : r.error);
	memcpy(d->slots[i].id, r.session, SNAP_ID_MAX);
	d->slots[i].started_ms = clock_wall_ms();
	d->slots[i].judged = false;
	d->slots[i].seen_running = false;
	demo_remember(d, r.session, role);
	return 0;
}

/* The MCP slot stays empty without its image. */
static bool
demo_slot_used(const struct demo *d, size_t i)
{
	return demo_slot_roles[i] != ROLE_MCP || d->mcp_image[0];
}

int
demo_start(struct demo *d, struct link *l, struct al_err *err)
{
	size_t i;

	d->link = l;
	d->next_lapse_ms = clock_mono_ms() + d->lapse_every_ms;
	for (i = 0; i < DEMO_SLOTS; i++)
		if (demo_slot_used(d, i) && demo_start_slot(d, i, err) < 0)
			return -1;
	return 0;
}

/* --- the paused watchdog ------------------------------------------------------- */

/*
 * True when pid is still `airlock watchdog SOCKET <container>`: a pid is
 * only signalled while it is the process the demo meant.
 */
static bool
demo_is_watchdog(long pid, const char *container)
{
	char path[64], buf[DEMO_CMDLINE_MAX];
	const char *argv[4] = { NULL, NULL, NULL, NULL };
	size_t n, off = 0, i;
	int fd;
	ssize_t got;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	got = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (got <= 0)
		return false;
	n = (size_t)got;
	buf[n] = '\0';
	for (i = 0; i < 4 && off < n; i++) {
		argv[i] = buf + off;
		off += strlen(buf + off) + 1;
	}
	return argv[3] && strcmp(argv[1], "watchdog") == 0 && strcmp(argv[3], container) == 0;
}

/* SIGKILL works on a stopped process; SIGCONT after it is only for tidiness. */
static void
demo_lapse_end(struct demo *d)
{
	if (d->lapse.active && demo_is_watchdog(d->lapse.pid, d->lapse.container)) {
		kill((pid_t)d->lapse.pid, SIGKILL);
		kill((pid_t)d->lapse.pid, SIGCONT);
	}
	memset(&d->lapse, 0, sizeof d->lapse);
}

static const struct session_row *
demo_row(const struct supervisor_snapshot *snap, const char *id)
{
	size_t i;

	for (i = 0; id[0] && i < snap->n; i++)
		if (strcmp(snap->rows[i].id, id) == 0)
			return &snap->rows[i];
	return NULL;
}

/* A steady session that has run for a while under an armed, healthy lease. */
static const struct session_row *
demo_lapse_victim(const struct demo *d, const struct supervisor_snapshot *snap)
{
	const struct session_row *r;
	size_t i;

	for (i = 0; i < DEMO_SLOTS; i++) {
		if (demo_slot_roles[i] != ROLE_STEADY || !(r = demo_row(snap, d->slots[i].id)))
			continue;
		if (r->state == SESSION_STATE_RUNNING && r->lease.armed && !r->lease.failed &&
		    r->lease.watchdog_pid > 1 && r->container[0] &&
		    r->uptime_ms >= DEMO_LAPSE_AGE_MS &&
		    demo_is_watchdog(r->lease.watchdog_pid, r->container))
			return r;
	}
	return NULL;
}

static void
demo_lapse_begin(struct demo *d, const struct session_row *r)
{
	if (kill((pid_t)r->lease.watchdog_pid, SIGSTOP) != 0)
		return;
	d->lapse.active = true;
	d->lapse.pid = r->lease.watchdog_pid;
	memcpy(d->lapse.session, r->id, SNAP_ID_MAX);
	memcpy(d->lapse.container, r->container, SNAP_CONTAINER_MAX);
	d->lapse.since_ms = clock_mono_ms();
}

static void
demo_lapse_step(struct demo *d, const struct supervisor_snapshot *snap)
{
	const struct session_row *r;
	int64_t now = clock_mono_ms();

	if (d->lapse.active) {
		r = demo_row(snap, d->lapse.session);
		if (!r || r->state == SESSION_STATE_ENDED || now - d->lapse.since_ms > DEMO_LAPSE_GIVEUP_MS)
			demo_lapse_end(d);
		return;
	}
	if (now < d->next_lapse_ms || !(r = demo_lapse_victim(d, snap)))
		return;
	demo_lapse_begin(d, r);
	d->next_lapse_ms = now + d->lapse_every_ms;
}

/* --- replacements and forgetting ------------------------------------------------- */

/* Gone: ended, or absent from a snapshot taken after it started (forgotten). */
static bool
demo_slot_done(const struct demo_slot *sl, const struct supervisor_snapshot *snap)
{
	const struct session_row *r = demo_row(snap, sl->id);

	if (!sl->id[0])
		return true;
	return r ? r->state == SESSION_STATE_ENDED : snap->taken_ms > sl->started_ms;
}

/* A start failed: the next refill waits 2, 4, 8, then 16 s. */
static void
demo_start_failed(struct demo *d, int64_t now)
{
	unsigned shift = d->failed_starts < 4 ? d->failed_starts : 3;

	d->failed_starts++;
	d->next_start_ms = now + (DEMO_BACKOFF_FIRST_MS << shift);
}

/*
 * What the slots' sessions came to: one seen running for the first time
 * ends the back-off (one that ran all along says nothing of the daemon
 * now); the ones that ended before their container was started (refused at
 * preflight, the daemon gone) make one failed start per tick.
 */
static void
demo_judge(struct demo *d, const struct supervisor_snapshot *snap, int64_t now)
{
	const struct session_row *r;
	bool failed = false;
	size_t i;

	for (i = 0; i < DEMO_SLOTS; i++) {
		if (!(r = demo_row(snap, d->slots[i].id)))
			continue;
		if (r->state == SESSION_STATE_RUNNING && !d->slots[i].seen_running) {
			d->slots[i].seen_running = true;
			d->failed_starts = 0;
			d->next_start_ms = 0;
		} else if (r->state == SESSION_STATE_ENDED && !r->started &&
			   r->end != SESSION_END_OPERATOR_STOP && !d->slots[i].judged) {
			d->slots[i].judged = true;
			failed = true;
		}
	}
	if (failed)
		demo_start_failed(d, now);
}

static void
demo_refill(struct demo *d, const struct supervisor_snapshot *snap)
{
	int64_t now = clock_mono_ms();
	struct al_err err;
	size_t i;

	demo_judge(d, snap, now);
	for (i = 0; i < DEMO_SLOTS && now >= d->next_start_ms; i++) {
		if (!demo_slot_used(d, i) || !demo_slot_done(&d->slots[i], snap))
			continue;
		if (demo_start_slot(d, i, &err) < 0) {
			memcpy(d->error, err.msg, sizeof d->error);
			d->slots[i].id[0] = '\0';	/* try again after the back-off */
			demo_start_failed(d, now);
		} else {
			d->error[0] = '\0';
		}
		if (d->failed_starts)
			break;		/* backing off: one slot tries at a time */
	}
}

static int64_t
demo_end_ms(const struct session_row *r)
{
	return r->started_ms + r->duration_ms;
}

/* Insertion sort, newest end first: at most SUPERVISOR_SESSIONS_MAX rows. */
static size_t
demo_sorted_ended(struct demo *d, const struct supervisor_snapshot *snap)
{
	size_t i, j, n = 0;

	for (i = 0; i < snap->n && n < SUPERVISOR_SESSIONS_MAX; i++) {
		if (snap->rows[i].state != SESSION_STATE_ENDED)
			continue;
		for (j = n; j > 0 && demo_end_ms(&snap->rows[d->ended[j - 1]]) <
				     demo_end_ms(&snap->rows[i]); j--)
			d->ended[j] = d->ended[j - 1];
		d->ended[j] = i;
		n++;
	}
	return n;
}

static void
demo_forget_old(struct demo *d, const struct supervisor_snapshot *snap)
{
	size_t i, n = demo_sorted_ended(d, snap);
	struct link_result r;

	for (i = DEMO_KEEP_ENDED; i < n; i++) {
		const char *id = snap->rows[d->ended[i]].id;

		/* The paused watchdog's session stays until it has been handled. */
		if (!(d->lapse.active && strcmp(id, d->lapse.session) == 0))
			d->link->ops->forget(d->link, id, &r);
	}
}

void
demo_tick(struct demo *d, const struct supervisor_snapshot *snap)
{
	if (!d || !d->link || !snap)
		return;
	demo_lapse_step(d, snap);
	demo_refill(d, snap);
	demo_forget_old(d, snap);
}

/* --- close -------------------------------------------------------------------------- */

static void
demo_remove_dir(const char *dir)
{
	struct dirent *e;
	size_t n = 0;
	DIR *dp;
	int fd;

	if (!dir[0] || !(dp = opendir(dir)))
		return;
	fd = dirfd(dp);
	/* Only files the demo and its upstreams and the audit log made: no subdirectories. */
	while (n++ < DEMO_DIR_ENTRIES_MAX && (e = readdir(dp)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(fd, e->d_name, 0);
	closedir(dp);
	rmdir(dir);
}

void
demo_close(struct demo *d)
{
	if (!d)
		return;
	demo_lapse_end(d);
	demo_remove_dir(d->sinks);
	demo_remove_dir(d->dir);
	free(d);
}
