#!/usr/bin/env bash
# airlock doctor against the real daemon: every check passes and the JSON
# names each one; a remote endpoint is refused.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1
out=$(mktemp); cfg=$(mktemp)
trap 'rm -f "$out" "$cfg"' EXIT
. "$here/../checks.sh"

rc=0; "$airlock" doctor --json >"$out" || rc=$?
check "doctor exits 0 on this host" test "$rc" = 0
check "doctor --json names every check and all pass" python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = {"os", "core_pattern", "rlimit_core", "endpoint", "daemon_ping",
        "api_version", "daemon_version", "daemon_os_type", "daemon_not_desktop",
        "kernel_version", "cgroup_version", "seccomp", "runtimes", "runtime"}
got = {c["check"] for c in d["checks"]}
assert d["ok"] is True, d
assert want <= got, want - got
assert all(c["verdict"] == "pass" for c in d["checks"]), d
api = next(c for c in d["checks"] if c["check"] == "api_version")
assert api["observed"].startswith("1."), api
PY

# A command takes only the options its usage names; anything else is a usage error.
for bad in "reap --audit x" "doctor --audit x" "doctor --otlp http://127.0.0.1:9" "inspect --audit x c"; do
	rc=0; "$airlock" $bad >"$out" 2>&1 || rc=$?
	check "airlock $bad: exit 2, the option named" \
		bash -c "[ $rc = 2 ] && grep -q 'is not an option of this command' '$out'"
done

echo '{"profile":{"runtime":"runsc"}}' >"$cfg"
check "doctor with a runsc profile finds runsc" "$airlock" doctor --config "$cfg" >/dev/null

rc=0; DOCKER_HOST=tcp://127.0.0.1:2375 "$airlock" doctor >"$out" 2>&1 || rc=$?
check "a tcp:// endpoint is refused with exit 1" test "$rc" = 1
check "the refusal names the endpoint check" grep -q '^FAIL  endpoint .*not a local unix socket' "$out"

rc=0; "$airlock" doctor --bogus >/dev/null 2>&1 || rc=$?
check "an unknown flag is a usage error" test "$rc" = 2

summary
