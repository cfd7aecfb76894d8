#include "parser_lockdown.h"
#include "landlock_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every file access the ABI knows, handled, and not one granted. */
static uint64_t
fs_all(int abi)
{
	if (abi >= 5)
		return (LANDLOCK_ACCESS_FS_IOCTL_DEV << 1) - 1;
	if (abi >= 3)
		return (LANDLOCK_ACCESS_FS_TRUNCATE << 1) - 1;
	if (abi == 2)
		return (LANDLOCK_ACCESS_FS_REFER << 1) - 1;
	return (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;
}

static int
landlock_layer(int *abi_out)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	struct ll_ruleset_attr a = { 0 };
	size_t size = sizeof a.handled_access_fs;
	int fd, rc;

	*abi_out = abi < 0 ? 0 : (int)abi;
	if (abi < 1)
		return -1;
	a.handled_access_fs = fs_all((int)abi);
	if (abi >= 4) {
		a.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof a;
	}
	fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0U);
	if (fd < 0)
		return -1;
	rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -1 :
	     (int)syscall(SYS_landlock_restrict_self, fd, 0U);
	close(fd);
	return rc;
}

/*
 * What the parser does after this: read and write its pipes, poll, take
 * and give back memory (never executable), tell the time, end. The
 * sanitizer builds' runtimes need a few more of the same harmless kind.
 */
static const int allowed[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(close), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(brk),
	SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(futex),
	SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(exit),
	SCMP_SYS(exit_group), SCMP_SYS(getpid), SCMP_SYS(gettid),
	SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(restart_syscall),
	SCMP_SYS(sched_yield), SCMP_SYS(sigaltstack),
};

/* mmap and mprotect, but never PROT_EXEC: no new code in this process. */
static int
no_exec_memory(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);

	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, no_exec) < 0)
		return -1;
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, no_exec);
}

static int
seccomp_layer(unsigned *n_out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	size_t i;
	int rc = -1;

	if (!ctx)
		return -1;
	for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0) < 0)
			goto out;
	*n_out = (unsigned)i + 2;
	if (no_exec_memory(ctx) == 0 && seccomp_load(ctx) == 0)
		rc = 0;
out:
	seccomp_release(ctx);
	return rc;
}

/* Each layer proven on its own, before the next covers the same calls. */
static const char *
prove_landlock(void)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EACCES ? "proof: open" : NULL;
}

static const char *
prove_seccomp(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		close(fd);
	if (fd >= 0 || errno != EPERM)
		return "proof: socket";
	return syscall(SYS_getppid) >= 0 || errno != EPERM ? "proof: filtered call" : NULL;
}

int
parser_lockdown(struct parser_lockdown *out, unsigned without)
{
	bool prove = !(without & LOCKDOWN_NO_PROOF);

	*out = (struct parser_lockdown){ .failed = NULL };
	if (!(without & LOCKDOWN_NO_LANDLOCK) && landlock_layer(&out->landlock_abi) < 0)
		out->failed = "landlock";
	else if (prove && (out->failed = prove_landlock()))
		return -1;
	else if (!(without & LOCKDOWN_NO_SECCOMP) && seccomp_layer(&out->allowed_calls) < 0)
		out->failed = "seccomp";
	else if (prove)
		out->failed = prove_seccomp();
	return out->failed ? -1 : 0;
}
