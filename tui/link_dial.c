/*
 * Reaching an engine (link_dial.h): its socket here, or ssh to its host
 * with `airlock ctl --stdio` on the far side, over a socketpair.
 */
#include "link_dial.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control_server.h"

#define SSH_ARGS_MAX	24

/* ssh://[user@]host[:port][/socket path] or a socket path. */
int
link_target_parse(const char *target, struct link_target *r, const char **why)
{
	const char *rest, *slash, *colon;
	size_t n;

	memset(r, 0, sizeof *r);
	if (strncmp(target, "ssh://", 6) != 0) {
		if (strlen(target) >= sizeof r->path) {
			*why = "the socket path is too long";
			return -1;
		}
		snprintf(r->path, sizeof r->path, "%s", target);
		return 0;
	}
	rest = target + 6;
	slash = strchr(rest, '/');
	n = slash ? (size_t)(slash - rest) : strlen(rest);
	colon = memchr(rest, ':', n);
	if (n == 0 || n >= sizeof r->ssh_dest || (colon && colon == rest) || rest[0] == '-') {
		*why = "ssh://[user@]host[:port][/socket]: no host";
		return -1;
	}
	snprintf(r->ssh_dest, sizeof r->ssh_dest, "%.*s", (int)(colon ? colon - rest : (long)n), rest);
	if (colon) {
		size_t plen = n - (size_t)(colon + 1 - rest);

		if (plen == 0 || plen >= sizeof r->ssh_port ||
		    strspn(colon + 1, "0123456789") < plen) {
			*why = "ssh://: the port is not a number";
			return -1;
		}
		snprintf(r->ssh_port, sizeof r->ssh_port, "%.*s", (int)plen, colon + 1);
	}
	if (slash && slash[1]) {
		if (strlen(slash) >= sizeof r->path) {
			*why = "the socket path is too long";
			return -1;
		}
		snprintf(r->path, sizeof r->path, "%s", slash);
	}
	return 0;
}

static void
split_words(char *s, char **argv, size_t *argc, size_t max)
{
	char *save = NULL, *w;

	for (w = strtok_r(s, " \t", &save); w && *argc < max; w = strtok_r(NULL, " \t", &save))
		argv[(*argc)++] = w;
}

/*
 * ssh -T [-p PORT] DEST airlock ctl --stdio [--socket PATH], its stdio one
 * end of a socketpair. AIRLOCK_SSH replaces "ssh" (words split at blanks:
 * "ssh -F FILE"), AIRLOCK_REMOTE the far side's "airlock".
 */
static int
spawn_ssh(const struct link_target *target, pid_t *pid)
{
	struct link_target own = *target, *r = &own;	/* argv's strings are not const */
	char ssh[512], far[256];
	char *argv[SSH_ARGS_MAX + 1];
	size_t argc = 0;
	int sv[2], devnull;

	snprintf(ssh, sizeof ssh, "%s", getenv("AIRLOCK_SSH") ? getenv("AIRLOCK_SSH") : "ssh");
	snprintf(far, sizeof far, "%s", getenv("AIRLOCK_REMOTE") ? getenv("AIRLOCK_REMOTE") : "airlock");
	split_words(ssh, argv, &argc, SSH_ARGS_MAX - 10);
	if (argc == 0)
		return -1;
	argv[argc++] = "-T";
	argv[argc++] = "-o";
	argv[argc++] = "BatchMode=yes";
	if (r->ssh_port[0]) {
		argv[argc++] = "-p";
		argv[argc++] = r->ssh_port;
	}
	argv[argc++] = "--";
	argv[argc++] = r->ssh_dest;
	argv[argc++] = far;
	argv[argc++] = "ctl";
	argv[argc++] = "--stdio";
	if (r->path[0]) {
		argv[argc++] = "--socket";
		argv[argc++] = r->path;
	}
	argv[argc] = NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	*pid = fork();
	if (*pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (*pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(sv[1], STDIN_FILENO);
		dup2(sv[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(sv[1]);
	return sv[0];
}

int
link_dial(const struct link_target *r, pid_t *pid, char *why, size_t cap)
{
	char path[SNAP_SOCKET_MAX];
	struct al_err err;
	int fd;

	*pid = -1;
	if (r->ssh_dest[0]) {
		fd = spawn_ssh(r, pid);
		if (fd < 0)
			snprintf(why, cap, "cannot start ssh");
		return fd;
	}
	if (r->path[0])
		snprintf(path, sizeof path, "%s", r->path);
	else
		control_socket_dial(path, sizeof path);
	fd = control_connect(path, &err);
	if (fd < 0)
		snprintf(why, cap, "%.150s", err.msg);
	return fd;
}
