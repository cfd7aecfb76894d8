/*
 * The clone3 probe of `airlock doctor` (check runsc_threads; engine/host/doctor.h):
 * a freestanding x86-64 program, a few hundred bytes, for a FROM scratch
 * image the doctor builds. It calls clone3 once, without flags; a child
 * exits at once. Its exit status is the errno clone3 returned (38 ENOSYS,
 * 1 EPERM), or 100 when a child was created.
 */
#define SYS_clone3	435
#define SYS_exit	60
#define SYS_exit_group	231
#define SIGCHLD		17
#define MADE_A_CHILD	100

static long
sys2(long n, long a, long b)
{
	long r;

	__asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return r;
}

/* struct clone_args, version 0 (64 bytes): flags, pidfd, child_tid, parent_tid, exit_signal, … */
__attribute__((force_align_arg_pointer, noreturn)) void
_start(void)
{
	volatile unsigned long long args[8] = { 0, 0, 0, 0, SIGCHLD, 0, 0, 0 };
	long r = sys2(SYS_clone3, (long)args, sizeof args);

	if (r == 0)
		sys2(SYS_exit, 0, 0);
	sys2(SYS_exit_group, r > 0 ? MADE_A_CHILD : -r, 0);
	for (;;)
		;
}
