#!/usr/bin/env bash
# airlock's runsc seccomp profile (engine/admission/seccomp/runsc.json) is Docker
# 20.10.24's default as Debian ships it, but for the one clone3 rule
# (engine/admission/seccomp/README.md). The Debian file comes from the package
# golang-github-docker-docker-dev: scripts/setup leaves it at $reference;
# without it this script downloads the package itself (never installs it:
# that pulls 248 packages). No file and no package: skipped loudly, a
# failure with CI set.
#
# usage: seccomp_profile.sh SOURCE_ROOT
set -uo pipefail
top=$1
. "$top/tests/checks.sh"

reference=${AIRLOCK_DOCKER_SECCOMP:-/var/cache/airlock/docker-default-seccomp.json}
pinned=e5e91f884647e7332b3f89280777752f563df4f1372a186f14ddb7bf2f55cf61
inside=usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json

if [ ! -s "$reference" ]; then
	work=$(mktemp -d) || exit 1
	trap 'rm -rf "$work"' EXIT
	if (cd "$work" && apt-get download -qq golang-github-docker-docker-dev >/dev/null 2>&1) &&
	   dpkg-deb -x "$work"/golang-github-docker-docker-dev_*.deb "$work/x"; then
		reference=$work/x/$inside
	elif [ -n "${CI:-}" ]; then
		not_ok "CI is set but Docker's default seccomp profile is neither at $reference nor downloadable (run scripts/setup)"
		summary
		exit 1
	else
		echo "################################################################"
		echo "## SKIPPED: Docker's default seccomp profile is not at $reference"
		echo "## and the Debian package could not be downloaded: the runsc"
		echo "## profile's provenance is NOT verified (run scripts/setup)"
		echo "################################################################"
		exit 77
	fi
fi

check "the reference is Docker 20.10.24's default as Debian 12 ships it (sha256 $pinned)" \
	[ "$(sha256sum <"$reference" | cut -d' ' -f1)" = "$pinned" ]

verdict=$(python3 - "$reference" "$top/engine/admission/seccomp/runsc.json" <<'PY'
import json, sys
ref, ours = (json.load(open(p)) for p in sys.argv[1:3])
if set(ref) != set(ours) or any(ref[k] != ours[k] for k in ref if k != "syscalls"):
    print("top level differs"); sys.exit()
a, b = ref["syscalls"], ours["syscalls"]
if len(a) != len(b):
    print("rule count differs"); sys.exit()
diff = [i for i in range(len(a)) if a[i] != b[i]]
if len(diff) != 1:
    print("%d rules differ" % len(diff)); sys.exit()
r, o = a[diff[0]], b[diff[0]]
same = {k: v for k, v in r.items() if k not in ("action", "errnoRet", "comment")}
if not (r["names"] == ["clone3"] and r["action"] == "SCMP_ACT_ERRNO" and r.get("errnoRet") == 38
        and "mips64" in r["excludes"].get("arches", [])):
    print("the changed rule is not the default's non-mips clone3 rule"); sys.exit()
if {k: v for k, v in o.items() if k not in ("action", "comment")} != same or \
        o["action"] != "SCMP_ACT_ALLOW":
    print("the clone3 rule is changed otherwise than to SCMP_ACT_ALLOW"); sys.exit()
print("only clone3")
PY
)
check "the runsc profile differs from the default only in the clone3 rule, allowed (got: $verdict)" \
	[ "$verdict" = "only clone3" ]
summary
