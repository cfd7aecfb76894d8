#include "shim_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

void
shim_say(const char *fixed)
{
	ssize_t n = write(2, fixed, strlen(fixed));

	(void)n;
}

int
shim_write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The abstract name: SHIM_SOCKET_NAME, or $AIRLOCK_SHIM_SOCKET (for tests
 * that run the shim outside a container, where the network namespace is
 * shared). Too long a name falls back to the fixed one.
 */
socklen_t
shim_socket_address(struct sockaddr_un *a)
{
	const char *name = getenv("AIRLOCK_SHIM_SOCKET");
	size_t n;

	if (!name || !name[0] || strlen(name) >= sizeof a->sun_path - 1)
		name = SHIM_SOCKET_NAME;
	n = strlen(name);
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	/* sun_path[0] stays NUL: an abstract name */
	memcpy(a->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}


/* A pipe or a socket: what the parent may poll and make non-blocking. */
bool
shim_passable(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}
