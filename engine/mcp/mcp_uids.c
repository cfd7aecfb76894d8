/* A uid of its own for each session's upstreams: the delegated range, the locks, the sweep. */
#include "mcp_uids.h"
#include "mcp_confine_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shadow/subid.h>

#include "mutant.h"

#define SWEEP_ROUNDS	100	/* kill(-1) rounds before a uid is called stuck */
#define SWEEP_REST_US	10000	/* between them: the killed exit */
#define TAKE_TRIES	4096	/* uids tried for a free lock */
#define LOCK_PATH_MAX	(sizeof MCP_UIDS_DIR + 16)
/*
 * A lock file's one byte, written under its lock: MARK_HELD while a
 * session has the uid (left so by an engine that died: the next taker
 * sweeps), MARK_SWEPT once it was given back swept, just before the
 * file is removed (still so when the removal failed). A missing file is
 * a uid given back swept, or one that has run nothing since the
 * directory was made.
 */
#define MARK_SWEPT	'0'
#define MARK_HELD	'1'

static struct {
	pthread_once_t once;
	unsigned long start, count;	/* the sessions'; count 0: none delegated, or refused */
	uid_t sweeper;			/* the range's first: no session's (sweep) */
	char refused[160];		/* why one delegated is not used; "" none */
	atomic_ulong next;		/* where the next take starts looking */
} range = { .once = PTHREAD_ONCE_INIT };

/*
 * A range the sweep may kill in holds no account's uid, nor this
 * engine's: refused, with why, when one does (a mistyped /etc/subuid).
 */
static bool
range_clear(unsigned long start, unsigned long count)
{
	struct passwd *p;
	bool clear = geteuid() < start || geteuid() >= start + count;

	if (!clear)
		snprintf(range.refused, sizeof range.refused, "the uids delegated to %s hold "
			 "this engine's own (%u)", MCP_UIDS_OWNER, (unsigned)geteuid());
	setpwent();
	while (clear && (p = getpwent()))
		if (p->pw_uid >= start && p->pw_uid < start + count) {
			snprintf(range.refused, sizeof range.refused, "the uids delegated to %s "
				 "hold user %.32s's (%u)", MCP_UIDS_OWNER, p->pw_name,
				 (unsigned)p->pw_uid);
			clear = false;
		}
	endpwent();
	return clear;
}

/* Where this process starts looking: random, so that engines (and their pids) meet rarely. */
static unsigned long
first_pick(void)
{
	unsigned long v;

	if (mutant("uids_start_at_pid"))	/* the test build's: a test knows where */
		return (unsigned long)getpid();
	return getrandom(&v, sizeof v, 0) == sizeof v ? v : (unsigned long)getpid();
}

/*
 * The first range /etc/subuid delegates to MCP_UIDS_OWNER, read once a
 * process: its first uid the sweeps', the rest the sessions'.
 */
static void
read_range(void)
{
	struct subid_range *r = NULL;

	subid_init("airlock", NULL);	/* its complaints to /dev/null: ours say it */
	if (subid_get_uid_ranges(MCP_UIDS_OWNER, &r) > 0 && r[0].start > 0 && r[0].count >= 2 &&
	    r[0].start + r[0].count <= (unsigned long)INT32_MAX &&
	    range_clear(r[0].start, r[0].count)) {
		range.sweeper = (uid_t)r[0].start;
		range.start = r[0].start + 1;
		range.count = r[0].count - 1;
		atomic_store(&range.next, first_pick() % range.count);
	}
	free(r);
}

/* MCP_UIDS_DIR and its parent, 0700 and 0755 as made; -1 when neither is there. */
static int
lock_dir(struct al_err *err)
{
	char parent[] = MCP_UIDS_DIR;

	*strrchr(parent, '/') = '\0';
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return al_fail(err, "upstream uids: %s: %s", parent, strerror(errno));
	if (mkdir(MCP_UIDS_DIR, 0700) < 0 && errno != EEXIST)
		return al_fail(err, "upstream uids: %s: %s", MCP_UIDS_DIR, strerror(errno));
	return 0;
}

static void
lock_path(uid_t uid, char path[LOCK_PATH_MAX])
{
	snprintf(path, LOCK_PATH_MAX, "%s/%u", MCP_UIDS_DIR, (unsigned)uid);
}

/*
 * The test build's: the first lock a process tries waits (5 s at most)
 * until the file it opened is no longer the one at path, as when a
 * give-back removes it between this open and this flock, and then for
 * the lock the give-back lets go.
 */
static void
wait_for_removal(int fd, const char *path)
{
	static atomic_bool waited;
	struct stat held, named;
	int i;

	if (!mutant("uids_lock_after_removal") || atomic_exchange(&waited, true))
		return;
	for (i = 0; i < 500 && fstat(fd, &held) == 0; i++) {
		if (lstat(path, &named) < 0 || named.st_ino != held.st_ino) {
			flock(fd, LOCK_EX);
			return;
		}
		usleep(10000);
	}
}

/*
 * A lock on fd holds the uid only while fd is still the file at path: a
 * give-back removes its file under its lock, so a taker that opened it
 * before and locks it after holds a file no one else will open.
 */
static bool
lock_current(int fd, const char *path)
{
	struct stat held, named;

	if (mutant("uids_unchecked_lock"))	/* the test build's: the lock before */
		return true;
	return fstat(fd, &held) == 0 && lstat(path, &named) == 0 &&
	       held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

/*
 * The lock on uid's file, held: its descriptor; -1 when another holds it
 * (or had it and removed the file meanwhile), or the file is another
 * user's (a root engine's, made before: passed over, and counted in
 * *denied); -2 with err when no file can be made there (the directory
 * another user's).
 */
static int
try_lock(uid_t uid, unsigned long *denied, struct al_err *err)
{
	char path[LOCK_PATH_MAX];
	int fd;

	lock_path(uid, path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == EACCES && access(path, F_OK) == 0) {
		(*denied)++;
		return -1;
	}
	if (fd < 0) {
		al_fail(err, "upstream uids: %s: %s", path, strerror(errno));
		return -2;
	}
	wait_for_removal(fd, path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || !lock_current(fd, path)) {
		close(fd);
		return -1;
	}
	return fd;
}

int
mcp_uids_delegated(unsigned long *first, unsigned long *count)
{
	pthread_once(&range.once, read_range);
	*first = range.start;
	*count = range.count;
	return range.count > 0 ? 0 : -1;
}

int
mcp_uid_take(struct mcp_uid *u, struct al_err *err)
{
	unsigned long i, k, denied = 0;
	char mark;
	int fd;

	u->uid = 0;
	u->lock_fd = -1;
	pthread_once(&range.once, read_range);
	if (range.count == 0 && range.refused[0])
		return al_fail(err, "%s: /etc/subuid must delegate uids no one has", range.refused);
	if (range.count == 0)
		return al_fail(err, "no uids are delegated to %s in /etc/subuid: run scripts/setup, "
			       "or usermod --add-subuids FIRST-LAST %s", MCP_UIDS_OWNER, MCP_UIDS_OWNER);
	if (lock_dir(err) < 0)
		return -1;
	for (i = 0; i < range.count && i < TAKE_TRIES; i++) {
		k = atomic_fetch_add(&range.next, 1) % range.count;
		if ((fd = try_lock((uid_t)(range.start + k), &denied, err)) == -2)
			return -1;
		if (fd < 0)
			continue;
		/*
		 * Held when its engine died: swept before it is used. A new
		 * file's uid was given back swept, or has run nothing since
		 * the directory was made (at boot: the unit keeps it across
		 * its restarts, and systemd kills what a stopped one left).
		 */
		if (pread(fd, &mark, 1, 0) == 1 && mark != MARK_SWEPT &&
		    mcp_uid_kill_all((uid_t)(range.start + k)) < 0) {
			close(fd);
			continue;
		}
		mark = MARK_HELD;
		if (pwrite(fd, &mark, 1, 0) != 1) {
			close(fd);
			continue;
		}
		u->uid = (uid_t)(range.start + k);
		u->lock_fd = fd;
		return 0;
	}
	return al_fail(err, "every upstream uid delegated to %s is in use (%lu tried, %lu of "
		       "them locked by files this engine cannot open)", MCP_UIDS_OWNER, i, denied);
}

void
mcp_uid_give_back(struct mcp_uid *u)
{
	char mark = MARK_SWEPT, path[LOCK_PATH_MAX];

	if (u->uid == 0)
		return;
	/* Still held when a process outlives the sweep: no session gets it from this engine. */
	if (mcp_uid_kill_all(u->uid) == 0) {
		lock_path(u->uid, path);
		/* Left unmarked, the next taker sweeps it again; left marked, it is as good as gone. */
		if (pwrite(u->lock_fd, &mark, 1, 0) == 1)
			unlink(path);
		close(u->lock_fd);
	}
	u->uid = 0;
	u->lock_fd = -1;
}

/*
 * A process whose real uid is uid and that is not a zombie
 * (/proc/PID/status): its State, or, when its first thread has exited
 * (State Z then too), another thread of its still running.
 */
static bool
uid_runs(uid_t uid)
{
	char path[sizeof "/proc//status" + 256], line[256];
	bool found = false, zombie, ours;
	unsigned long ruid, threads;
	struct dirent *d;
	DIR *dir = opendir("/proc");
	FILE *f;

	if (!dir)
		return true;	/* unknown: not called gone */
	while (!found && (d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", d->d_name);
		if (!(f = fopen(path, "re")))
			continue;	/* gone meanwhile */
		zombie = ours = false;
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "State:", 6) == 0)
				zombie = strchr(line, 'Z') != NULL;
			if (sscanf(line, "Uid: %lu", &ruid) == 1 && !(ours = ruid == uid))
				break;
			if (sscanf(line, "Threads: %lu", &threads) == 1) {
				found = ours && (!zombie || threads > 1);
				break;
			}
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/*
 * Every capability gone, and proven: kill(-1) then reaches the uid's
 * processes alone. Root's are cleared by the change to a uid that is not
 * 0, but an engine that is not root keeps its own across it (the unit's
 * user, with CAP_KILL ambient): its kill(-1) would reach every process on
 * the host.
 */
static int
drop_all_caps(void)
{
	return mcp_caps_drop() < 0 || mcp_caps_left() ? -1 : 0;
}

/*
 * One child that signals every process of uid (kill(-1) spares itself),
 * then takes the uid and asks the kernel whether any is left: under
 * RLIMIT_NPROC 2 a fork succeeds only while the uid holds no task but
 * this one (a killed process counts until its parent reaps it). It kills
 * with uid effective but the sweeps' uid real and saved, so the uid's
 * processes may not signal it (a review stopped it with SIGSTOP before
 * its kill, 16 runs of 20, and the engine's thread waited for good), and
 * its kill reaches nothing else: no process runs as the sweeps' uid but
 * another sweep's child, which then loses a round. One stopped or killed
 * all the same costs a round, as one left does. 1: none left; 0: some (or
 * their zombies), or the child was stopped or killed; -1: the child could
 * not be made or could not tell.
 */
static int
sweep(uid_t uid)
{
	bool keep_caps = mutant("uids_keep_caps");	/* the test build's: the engine before */
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Raw system calls: this child of a threaded engine makes no other. */
		struct rlimit two = { 2, 2 };
		long probe;

		if (setrlimit(RLIMIT_NPROC, &two) < 0 ||
		    syscall(SYS_setresuid, range.sweeper, uid, range.sweeper) < 0 ||
		    (!keep_caps && drop_all_caps() < 0))
			_exit(3);
		kill(-1, SIGKILL);
		/* Every process of uid has been sent its SIGKILL: none can signal this one now. */
		if (syscall(SYS_setresuid, uid, uid, uid) < 0)
			_exit(3);
		probe = syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
		if (probe == 0)
			_exit(0);
		if (probe > 0)
			_exit(waitpid((pid_t)probe, NULL, 0) == probe ? 0 : 3);
		_exit(errno == EAGAIN ? 1 : 3);
	}
	while (waitpid(pid, &status, WUNTRACED) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				return -1;
	}
	if (!WIFEXITED(status))
		return 0;	/* stopped or killed by what it was sent to sweep: a round lost */
	if (WEXITSTATUS(status) > 1)
		return -1;
	return WEXITSTATUS(status) == 0;
}

int
mcp_uid_kill_all(uid_t uid)
{
	int i, alone;

	pthread_once(&range.once, read_range);
	if (range.count == 0 || uid < range.start || uid - range.start >= range.count)
		return -1;	/* not a session's: root's, an account's, or the sweeps' own */
	for (i = 0; i < SWEEP_ROUNDS; i++) {
		if ((alone = sweep(uid)) < 0)
			return -1;
		/* Some left: maybe only zombies, which /proc tells (slower). */
		if (alone || !uid_runs(uid))
			return 0;
		usleep(SWEEP_REST_US);
	}
	return -1;
}
