#ifndef AIRLOCK_LANDLOCK_ABI_H
#define AIRLOCK_LANDLOCK_ABI_H

/*
 * Landlock's kernel ABI as far as we use it (Debian 12 ships no library,
 * and its uapi header predates ABI 4): the newer access bits, the network
 * rule and the scopes, spelled with the kernel's values. Used through the
 * three system calls by the upstreams' ruleset (engine/mcp/mcp_landlock.c)
 * and the parser's lockdown (engine/privsep/parser_lockdown.c).
 */

#include <linux/landlock.h>
#include <stdint.h>

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)	/* ABI 5 */
#endif
#define LL_NET_BIND_TCP			(1ULL << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP		(1ULL << 1)
#define LL_RULE_NET_PORT		2
#define LL_SCOPE_ABSTRACT_UNIX		(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL			(1ULL << 1)

/* The kernel's struct as of ABI 6; the size passed tells it which fields. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#endif
