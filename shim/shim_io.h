#ifndef AIRLOCK_SHIM_IO_H
#define AIRLOCK_SHIM_IO_H

/*
 * What both modes of airlock-shim share (shim.c serves, shim_mcp.c is the
 * --mcp child): their exit statuses, the socket they meet on and its
 * hand-over byte, and small I/O helpers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define SHIM_SOCKET_NAME	"airlock-shim"

#define EXIT_USAGE		64
#define EXIT_FRAME		65
#define EXIT_NO_SHIM		69
#define EXIT_ENGINE		70
#define EXIT_EXEC		127

/*
 * The child hands its stdin and stdout to the parent (SCM_RIGHTS) and then
 * only waits: the parent reads the MCP client's requests and writes its
 * answers itself, one hop fewer a call than a relay (docs/performance.md,
 * issue #29). On the socket, the hand-over is one NUL byte carrying the two
 * descriptors; the parent answers one byte once it serves them, and closes
 * the socket when it is done with the client (its EOF, or the shim's end):
 * the child then exits 0, so the MCP client, which waits on the child's exit,
 * sees its server end when the parent stops serving it. A connection that
 * starts with anything else is a plain byte stream (a relay, or a client on
 * the socket itself).
 */
#define HANDOVER_BYTE	'\0'

/* Fixed text to stderr: never a byte read from the bridge or a client. */
void shim_say(const char *fixed);
/* All n bytes to fd (through EINTR); -1 when not. */
int shim_write_all(int fd, const char *p, size_t n);
/* The socket's abstract address in a, and its length. */
socklen_t shim_socket_address(struct sockaddr_un *a);
/* A pipe or a socket: what the parent may poll and make non-blocking. */
bool shim_passable(int fd);

#endif
