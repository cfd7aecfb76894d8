#ifndef AIRLOCK_SECCOMP_PROFILE_H
#define AIRLOCK_SECCOMP_PROFILE_H

/*
 * The seccomp profile each runtime gets (issue #33; docs/guarantees.md).
 *
 * runc sessions keep the daemon's default profile: the create body names
 * none. runsc sessions get airlock's runsc profile (engine/admission/seccomp/runsc.json,
 * embedded at build): Docker 20.10.24's default with clone3 allowed. Debian's
 * runsc with --oci-seccomp ignores errnoRet, so the default's "clone3 →
 * ENOSYS" becomes EPERM and glibc never falls back to clone: no thread
 * starts. gVisor answers clone3 with ENOSYS itself.
 *
 * Docker takes a custom profile as the SecurityOpt entry "seccomp=<JSON
 * text>" and reports the entry back verbatim in /containers/{id}/json, so
 * admission compares the exact bytes.
 */

#include <stdbool.h>

#include <jansson.h>

/* The SecurityOpt entry that carries a profile: "seccomp=" and its JSON text. */
#define SECCOMP_OPT_PREFIX "seccomp="

/* airlock's runsc profile, its exact JSON text. */
const char *seccomp_runsc_profile(void);

/* The profile's SHA-256 as lowercase hex, for reports (never the text). */
const char *seccomp_runsc_digest(void);

/* Whether runtime runs under airlock's runsc profile (else the daemon's default). */
bool seccomp_runtime_has_profile(const char *runtime);

/* Whether opt is exactly "seccomp=" followed by airlock's runsc profile. */
bool seccomp_is_runsc_entry(const char *opt);

/* Whether opt is a seccomp entry of any spelling ("seccomp=" or "seccomp:"). */
bool seccomp_is_entry(const char *opt);

/* The create body's HostConfig.SecurityOpt for runtime; NULL without memory. */
json_t *seccomp_security_opt(const char *runtime);

#endif
