/*
 * The shim benchmark's agent (bench/shim_bench.sh): a static program for a
 * FROM scratch image that times K calls to the alias "save", one at a time,
 * each from its request's write to its answer's read.
 *
 *   mcp_agent raw K   a plain bridge agent: reads the initial frame, then
 *                     K bridge requests on its own stdout
 *   mcp_agent mcp K   an MCP agent under `/airlock/shim --`: launches
 *                     `/airlock/shim --mcp` as its stdio server, initializes,
 *                     lists the tools, then K tools/call; then reads the
 *                     private memory of both shims (its parent and its
 *                     child) from /proc/PID/smaps_rollup
 *   mcp_agent socket K  the same MCP client straight on the parent shim's
 *                     abstract socket, with no --mcp child: the child hands
 *                     its stdio to the parent, so this should cost the same
 *
 * WARMUP calls come first and are not timed. The last call reports through
 * "save" itself, so the figures land in the upstream's sink:
 *
 *   {"report":"<mode> calls=K p50=US p99=US errors=N [parent_pss=KB
 *    parent_private_dirty=KB child_pss=KB child_private_dirty=KB]"}
 *
 * Each call's arguments are {"n":I}. An answer that is not a plain allowed
 * result counts as an error (the bench says so; no figure is dropped).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES	(1 << 16)
#define CALLS_MAX	4000
#define WARMUP		50

static FILE *to, *from;		/* the bridge, or the --mcp child's stdio */
static int mcp;
static long next_id = 1;
static char line[LINE_MAX_BYTES];

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
read_line(void)
{
	if (!fgets(line, sizeof line, from))
		return -1;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* An MCP answer to our request; notifications (none expected) are skipped. */
static int
read_answer(void)
{
	do {
		if (read_line() < 0)
			return -1;
	} while (!strstr(line, "\"id\""));
	return 0;
}

static int
rpc(const char *method, const char *params)
{
	fprintf(to, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n",
		next_id++, method, params);
	fflush(to);
	return read_answer();
}

/* One call to "save" with ARGS; 1 when the answer is not a plain allowed result. */
static int
call(const char *args)
{
	char params[LINE_MAX_BYTES / 2];

	if (!mcp) {
		fprintf(to, "{\"operation\":\"save\",\"arguments\":%s}\n", args);
		fflush(to);
		if (read_line() < 0)
			return -1;
		return !strstr(line, "\"allowed\":true") || strstr(line, "\"response\":null");
	}
	snprintf(params, sizeof params, "{\"name\":\"save\",\"arguments\":%s}", args);
	if (rpc("tools/call", params) < 0)
		return -1;
	return !strstr(line, "\"result\"") || strstr(line, "\"isError\":true");
}

static pid_t
start_server(void)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execl("/airlock/shim", "/airlock/shim", "--mcp", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to = fdopen(in[1], "w");
	from = fdopen(out[0], "r");
	return pid < 0 || !to || !from ? -1 : pid;
}

/* The parent shim's socket (shim/shim.c: the abstract name "airlock-shim"). */
static int
connect_shim(void)
{
	static const char name[] = "airlock-shim";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	memcpy(a.sun_path + 1, name, sizeof name - 1);
	if (s < 0 || connect(s, (struct sockaddr *)&a,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof name)) < 0)
		return -1;
	to = fdopen(s, "w");
	from = fdopen(dup(s), "r");
	return to && from ? 0 : -1;
}

static int
handshake(void)
{
	if (rpc("initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"airlock-bench\",\"version\":\"0\"}}") < 0
	    || !strstr(line, "\"result\""))
		return -1;
	fprintf(to, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	fflush(to);
	if (rpc("tools/list", "{}") < 0 || !strstr(line, "\"save\""))
		return -1;
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* KEY's value in kB from /proc/PID/smaps_rollup; -1 when unreadable. */
static long
smaps(pid_t pid, const char *key)
{
	char path[64], buf[256];
	size_t n = strlen(key);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", (long)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(buf, sizeof buf, f))
		if (strncmp(buf, key, n) == 0 && buf[n] == ':')
			kb = strtol(buf + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

int
main(int argc, char **argv)
{
	static double t[CALLS_MAX];
	char args[64], report[512];
	int k = argc > 2 ? atoi(argv[2]) : 0, i, errors = 0, rc;
	pid_t child = 0;
	double t0;

	if (argc < 3 || k < 1 || k > CALLS_MAX)
		return 64;
	mcp = strcmp(argv[1], "raw") != 0;
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "socket") == 0) {
		if (connect_shim() < 0 || handshake() < 0)
			return 1;
	} else if (mcp) {
		if ((child = start_server()) < 0 || handshake() < 0)
			return 1;
	} else {
		to = stdout;
		from = stdin;
		if (read_line() < 0)	/* the initial frame */
			return 2;
	}
	for (i = 0; i < WARMUP + k; i++) {
		snprintf(args, sizeof args, "{\"n\":%d}", i);
		t0 = now_us();
		if ((rc = call(args)) < 0)
			return 3;
		if (i >= WARMUP)
			t[i - WARMUP] = now_us() - t0;
		errors += rc;
	}
	qsort(t, (size_t)k, sizeof *t, cmp);
	i = snprintf(report, sizeof report, "{\"report\":\"%s calls=%d p50=%.1f p99=%.1f errors=%d",
		     argv[1], k, t[(k - 1) / 2], t[(int)(0.99 * (k - 1))], errors);
	if (child > 0)
		snprintf(report + i, sizeof report - (size_t)i, " parent_pss=%ld"
			 " parent_private_dirty=%ld child_pss=%ld child_private_dirty=%ld\"}",
			 smaps(getppid(), "Pss"), smaps(getppid(), "Private_Dirty"),
			 smaps(child, "Pss"), smaps(child, "Private_Dirty"));
	else
		snprintf(report + i, sizeof report - (size_t)i, "\"}");
	if (call(report) < 0)
		return 3;
	if (child > 0) {
		fclose(to);
		waitpid(child, NULL, 0);
	}
	return 0;
}
