#ifndef AIRLOCK_PARSER_LOCKDOWN_H
#define AIRLOCK_PARSER_LOCKDOWN_H

/*
 * The parser's own second layer (parser.h), applied by the parser to
 * itself after it is loaded and before it reads the first byte: on top of
 * what it was spawned with (an upstream's confinement, mcp_confine.h:
 * its own user, no capabilities, no_new_privs, a Landlock ruleset that
 * still lets the loader read /usr), a Landlock layer that grants no file
 * at all, no TCP and no signal or abstract socket outside itself, and a
 * seccomp allow-list of what moving bytes between two pipes needs. An
 * mmap or mprotect asking for executable memory is refused too.
 *
 * Each layer is proven before the next one covers the same calls, as an
 * upstream's spawn proves its own: after the Landlock layer an open must
 * fail EACCES, after the filter a socket and a call not on the list must
 * fail EPERM. Any step that does not hold is a refusal: the parser exits
 * before it reads anything.
 */

#include <stdbool.h>

struct parser_lockdown {
	int landlock_abi;		/* the layer's ABI; 0: the kernel has none */
	unsigned allowed_calls;		/* system calls the allow-list names */
	const char *failed;		/* NULL, or the step: "landlock", "seccomp", "proof: open", … */
};

/* Leave a part out: a test build's mutants only, to show what each holds. */
enum {
	LOCKDOWN_NO_LANDLOCK = 1 << 0,
	LOCKDOWN_NO_SECCOMP = 1 << 1,
	LOCKDOWN_NO_PROOF = 1 << 2,	/* run even when a check did not hold */
};

/* Everything or nothing: 0, or -1 with out->failed naming the step. */
int parser_lockdown(struct parser_lockdown *out, unsigned without);

#endif
