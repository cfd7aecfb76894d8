#include "mcp_confine_int.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * A default-allow filter that returns EPERM for what an MCP server never
 * needs and what would let it reach past its uid and ruleset (issue #41).
 * libseccomp builds it in the parent; the child only hands the exported
 * BPF to PR_SET_SECCOMP (seccomp_load allocates: not async-signal-safe).
 * Non-native architectures (i386 via int 0x80, x32) are killed by
 * libseccomp's default bad-arch action.
 */

#define SOCK_TYPE_MASK		0xf	/* the kernel's: type bits below the flags */
#define FAMILY_LIMIT		64	/* families at or above: refused in one rule */
#define IOPRIO_WHO_PROCESS	1	/* linux/ioprio.h, not in every libc's headers */

/* libseccomp's SCMP_A* macros leave datum_b out (-Wmissing-field-initializers). */
static struct scmp_arg_cmp
cmp(unsigned int arg, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
	"mount", "umount2", "pivot_root", "unshare", "setns",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
	"bpf", "perf_event_open", "keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
	"acct", "swapon", "swapoff", "reboot",
	/* SysV IPC: one namespace for every uid's objects, outliving their maker */
	"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
	"semget", "semop", "semtimedop", "semctl",
	NULL,
};

/*
 * Calls that take another process by pid, which the uid's permission
 * alone decides: every upstream shares it (another session's upstream,
 * its limits, priority, CPUs, pages). Pid 0, the caller, only.
 */
static const char *const self_only[] = {
	"prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam",
	"sched_setattr", "migrate_pages", "move_pages",
	NULL,
};

/* Each call named refused; with others_only, only when its first argument (a pid) is not 0. */
static int
deny_each(scmp_filter_ctx ctx, const char *const *names, bool others_only)
{
	const struct scmp_arg_cmp other = cmp(0, SCMP_CMP_NE, 0, 0);
	size_t i;
	int nr;

	for (i = 0; names[i]; i++) {
		nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR ||
		    seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, others_only ? 1 : 0,
					   &other) < 0)
			return -1;
	}
	return 0;
}

static int
deny_others(scmp_filter_ctx ctx)
{
	if (deny_each(ctx, self_only, true) < 0)
		return -1;
	/* Its own process only: a pgrp, a uid (0: the caller's) or a pid reach others. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpriority), 1,
			     cmp(0, SCMP_CMP_NE, PRIO_PROCESS, 0)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpriority), 1,
			     cmp(1, SCMP_CMP_NE, 0, 0)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioprio_set), 1,
			     cmp(0, SCMP_CMP_NE, IOPRIO_WHO_PROCESS, 0)) < 0)
		return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioprio_set), 1,
				cmp(1, SCMP_CMP_NE, 0, 0));
}

/*
 * New user namespaces: clone with CLONE_NEWUSER is refused (flags are
 * arg0 on x86-64); clone3 passes its flags in memory a filter cannot read,
 * so it is ENOSYS and libc falls back to clone.
 */
static int
deny_userns(scmp_filter_ctx ctx)
{
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
			     cmp(0, SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) < 0)
		return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}

/* Only AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK for NETLINK_ROUTE. */
static int
deny_families(scmp_filter_ctx ctx)
{
	int f;

	for (f = 0; f < FAMILY_LIMIT; f++) {
		if (f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				     cmp(0, SCMP_CMP_EQ, (scmp_datum_t)f, 0)) < 0)
			return -1;
	}
	/* Unsigned 64-bit: also catches high garbage above a real family. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     cmp(0, SCMP_CMP_GE, FAMILY_LIMIT, 0)) < 0)
		return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
				cmp(0, SCMP_CMP_EQ, AF_NETLINK, 0),
				cmp(2, SCMP_CMP_NE, NETLINK_ROUTE, 0));
}

/* One family: every type but SOCK_STREAM (and SOCK_DGRAM when udp) refused. */
static int
deny_inet_types(scmp_filter_ctx ctx, int family, bool udp)
{
	int t;

	for (t = 0; t <= SOCK_TYPE_MASK; t++) {
		if (t == SOCK_STREAM || (udp && t == SOCK_DGRAM))
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
				     cmp(0, SCMP_CMP_EQ, (scmp_datum_t)family, 0),
				     cmp(1, SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK,
					     (scmp_datum_t)t)) < 0)
			return -1;
	}
	return 0;
}

/*
 * Stream sockets only as TCP (protocol 0 or IPPROTO_TCP): Landlock's port
 * rules cover TCP, not SCTP or MPTCP.
 */
static int
deny_stream_protocols(scmp_filter_ctx ctx, int family)
{
	const struct scmp_arg_cmp fam = cmp(0, SCMP_CMP_EQ, (scmp_datum_t)family, 0);
	const struct scmp_arg_cmp stream = cmp(1, SCMP_CMP_MASKED_EQ, SOCK_TYPE_MASK, SOCK_STREAM);
	int p;

	for (p = 1; p < IPPROTO_TCP; p++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 3, fam, stream,
				     cmp(2, SCMP_CMP_EQ, (scmp_datum_t)p, 0)) < 0)
			return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 3, fam, stream,
				cmp(2, SCMP_CMP_GT, IPPROTO_TCP, 0));
}

/*
 * A kernel without Landlock's TCP rules (ABI below 4, an upstream opted
 * in with unconfined_ok) cannot hold it to its ports: with no network in
 * its config it gets no inet socket at all.
 */
static int
deny_inet(scmp_filter_ctx ctx)
{
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     cmp(0, SCMP_CMP_EQ, AF_INET, 0)) < 0)
		return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				cmp(0, SCMP_CMP_EQ, AF_INET6, 0));
}

static int
deny_rules(scmp_filter_ctx ctx, struct mcp_confine *cf, const struct mcp_confine_config *cfg)
{
	bool udp = cfg->network && cfg->udp;

	if (deny_each(ctx, denied, false) < 0 || deny_others(ctx) < 0 || deny_userns(ctx) < 0 ||
	    deny_families(ctx) < 0)
		return -1;
	/*
	 * Its own group for good: the child made it (setsid, before this
	 * filter), and a stop kills the group; a descendant that left it
	 * would outlive the upstream.
	 */
	if (!confine_mutant(cf, "new_group") &&
	    (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsid), 0) < 0 ||
	     seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpgid), 0) < 0))
		return -1;
	if (cf->unix_closed && !confine_mutant(cf, "same_uid_unix") &&
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			     cmp(0, SCMP_CMP_EQ, AF_UNIX, 0)) < 0)
		return -1;
	cf->inet_closed = !cf->net_due && !cfg->network;
	if (cf->inet_closed && deny_inet(ctx) < 0)
		return -1;
	if (deny_inet_types(ctx, AF_INET, udp) < 0 || deny_inet_types(ctx, AF_INET6, udp) < 0)
		return -1;
	return deny_stream_protocols(ctx, AF_INET) < 0 ? -1 : deny_stream_protocols(ctx, AF_INET6);
}

/* libseccomp 2.5 exports only to a descriptor: a memfd, read back whole. */
static int
export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	int fd = memfd_create("airlock-seccomp", MFD_CLOEXEC);
	off_t len;
	int rc = -1;

	if (fd < 0)
		return -1;
	if (seccomp_export_bpf(ctx, fd) < 0 || (len = lseek(fd, 0, SEEK_END)) <= 0 ||
	    len % (off_t)sizeof(struct sock_filter) != 0 || len > (1 << 20))
		goto out;
	prog->filter = malloc((size_t)len);
	if (!prog->filter || pread(fd, prog->filter, (size_t)len, 0) != len)
		goto out;
	prog->len = (unsigned short)(len / (off_t)sizeof(struct sock_filter));
	rc = 0;
out:
	close(fd);
	return rc;
}

int
mcp_seccomp_prepare(struct mcp_confine *cf, const struct mcp_confine_config *cfg,
		    struct al_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = -1;

	if (!ctx)
		return al_fail(err, "upstream %s: cannot build its seccomp filter", cf->name);
	if (deny_rules(ctx, cf, cfg) == 0 && export_bpf(ctx, &cf->prog) == 0)
		rc = 0;
	seccomp_release(ctx);
	if (rc < 0)
		return al_fail(err, "upstream %s: cannot build its seccomp filter", cf->name);
	hash_sha256_hex(cf->prog.filter, (size_t)cf->prog.len * sizeof(struct sock_filter),
			cf->receipt.seccomp_sha256);
	return 0;
}

/*
 * A NULL program: a kernel with filters answers EFAULT (or EACCES without
 * no_new_privs), one without them EINVAL. Nothing is loaded either way.
 */
bool
mcp_confine_seccomp_available(void)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) == 0)
		return true;	/* cannot happen with NULL; had it, a filter is on */
	return errno == EFAULT || errno == EACCES;
}
