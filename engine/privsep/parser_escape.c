#include "parser_escape.h"
#include "parse_wire.h"

#include <stdint.h>

#ifdef AIRLOCK_MUTANTS

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *
got(int rc)
{
	if (rc >= 0)
		return "ok";
	switch (errno) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	default: return "error";
	}
}

static int
try_docker(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	rc = connect(fd, (struct sockaddr *)&a, sizeof a);
	close(fd);
	return rc;
}

/* Opened for writing, and a byte appended: what an observer can see. */
static int
try_audit(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, "!", 1) == 1 ? 0 : -1;
	close(fd);
	return rc;
}

static int
try_ptrace(pid_t pid)
{
	long rc = ptrace(PTRACE_SEIZE, pid, NULL, NULL);

	if (rc == 0)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return rc == 0 ? 0 : -1;
}

int
parser_escape(const char *body, size_t len)
{
	const char *sock = body, *end = body + len, *audit, *pid_text = NULL;
	const char *d, *a, *p, *s;
	char report[160];
	pid_t pid;
	int n;

	if (len < 6 || body[len - 1] != '\0')
		return parse_send(1, PARSE_FRAME_BAD, NULL, 0, NULL, 0, INT64_MAX);
	audit = (const char *)memchr(sock, 0, len) + 1;
	if (audit < end)
		pid_text = (const char *)memchr(audit, 0, (size_t)(end - audit)) + 1;
	if (!pid_text || pid_text >= end)
		return parse_send(1, PARSE_FRAME_BAD, NULL, 0, NULL, 0, INT64_MAX);
	pid = (pid_t)atoi(pid_text);
	d = got(try_docker(sock));
	a = got(try_audit(audit));
	p = got(try_ptrace(pid));
	s = got(kill(pid, 0));
	n = snprintf(report, sizeof report, "docker=%s audit=%s ptrace=%s signal=%s", d, a, p, s);
	return parse_send(1, PARSE_ESCAPE_REPORT, report, (size_t)n, NULL, 0, INT64_MAX);
}

#else

int
parser_escape(const char *body, size_t len)
{
	(void)body;
	(void)len;
	return parse_send(1, PARSE_FRAME_BAD, NULL, 0, NULL, 0, INT64_MAX);
}

#endif
