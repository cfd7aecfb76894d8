#!/usr/bin/env bash
# airlock doctor against the real daemon: every check passes and the JSON
# names each one; a remote endpoint is refused.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 upstream=$2
scratch_dir
out=$work/out cfg=$work/cfg
. "$here/../checks.sh"

# An image on this daemon (FROM scratch: a file is enough for /images/{id}/json).
mkdir -p "$work/img"
echo airlock-doctor-test >"$work/img/f"
printf 'FROM scratch\nCOPY f /f\n' >"$work/img/Dockerfile"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$work/iid" -t airlock-test-doctor:latest \
	"$work/img" >/dev/null
image=$(cat "$work/iid")
absent=sha256:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

rc=0; "$airlock" doctor --json >"$out" || rc=$?
check "doctor exits 0 on this host" test "$rc" = 0
check "doctor --json names every check and all pass" python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = {"os", "core_pattern", "rlimit_core", "endpoint", "daemon_ping",
        "api_version", "daemon_version", "daemon_os_type", "daemon_not_desktop",
        "kernel_version", "cgroup_version", "seccomp", "runtimes", "runtime", "runsc_threads"}
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

echo '{"profile":{"runtime":"runsc","image":"'"$image"'"}}' >"$cfg"
check "doctor with a runsc profile finds runsc" "$airlock" doctor --config "$cfg" >/dev/null
check "doctor --config reports the image on this host" \
	bash -c "'$airlock' doctor --config '$cfg' | grep -q '^PASS  image .*on this host'"

# runsc_threads: one probe container under runsc with airlock's seccomp profile,
# then the answer cached for this runsc binary and profile (a cache of this
# script's own); a cached line for another runsc is not believed.
probes() { "$DOCKER" ps -aq --filter name=airlock-probe- | grep -c .; }
XDG_CACHE_HOME=$work/cache "$airlock" doctor --config "$cfg" >"$out" 2>&1
check "doctor under runsc: clone3 answers ENOSYS with airlock's profile (probed)" \
	grep -qE '^PASS  runsc_threads +ENOSYS$' "$out" || grep runsc_threads "$out"
check "the probe left no container" test "$(probes)" = 0
check "the answer is cached" test -s "$work/cache/airlock/runsc-clone3"
XDG_CACHE_HOME=$work/cache "$airlock" doctor --config "$cfg" >"$out" 2>&1
check "a second doctor takes the cached answer" \
	grep -qE '^PASS  runsc_threads +ENOSYS \(cached for this runsc\)$' "$out"
echo "$(printf '%064d' 0)-$(printf '%064d' 0) ENOSYS" >"$work/cache/airlock/runsc-clone3"
XDG_CACHE_HOME=$work/cache "$airlock" doctor --config "$cfg" >"$out" 2>&1
check "another runsc's cached answer is not taken: probed again" \
	grep -qE '^PASS  runsc_threads +ENOSYS$' "$out"

# A config whose image is not on this host is refused up front, naming the key and the ID.
check "the generated ID is really absent" bash -c "! '$DOCKER' image inspect '$absent' >/dev/null 2>&1"
echo '{"profile":{"image":"'"$absent"'"}}' >"$cfg"
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "doctor --config with an absent image: exit 1" test "$rc" = 1
check "doctor names profile.image and the ID" grep -qE "^FAIL  image +profile.image: $absent is not on this host" "$out"
rc=0; "$airlock" doctor --config "$cfg" --json >"$out" 2>/dev/null || rc=$?
check "doctor --json: the image check fails with the ID" python3 - "$out" "$absent" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = next(c for c in d["checks"] if c["check"] == "image")
assert d["ok"] is False and c["verdict"] == "fail" and sys.argv[2] in c["observed"], c
PY
# "Created no container": no managed container that was not there before
# (one of another suite's that goes meanwhile is no evidence either way).
managed() { "$DOCKER" ps -aq --no-trunc --filter label=io.airlock.managed=1 | sort; }
new_containers() { comm -13 <(printf '%s\n' "$before") <(managed) | grep -c .; }
before=$(managed)
rc=0; "$airlock" run --config "$cfg" --audit "$work/audit.db" >"$out" 2>&1 || rc=$?
check "run with an absent image: exit 3 before any session" test "$rc" = 3
check "run names profile.image and the ID" grep -qF "airlock run: profile.image: $absent is not on this host" "$out"
check "run created no container" test "$(new_containers)" = 0
rc=0; "$airlock" run --config "$cfg" --audit "$work/audit.db" --json >"$out" 2>/dev/null || rc=$?
check "run --json: the refusal is a JSON error" python3 -c '
import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] is False and sys.argv[2] in d["error"], d' \
	"$out" "$absent"
# The console too, on a terminal (script gives it one): refused before any session.
rc=0; script -qec "'$airlock' console --config '$cfg' --audit '$work/console.db'" /dev/null \
	</dev/null >"$out" 2>&1 || rc=$?
check "console with an absent image: exit 3, profile.image and the ID named" \
	bash -c "[ $rc = 3 ] && grep -qF 'airlock console: profile.image: $absent is not on this host' '$out'"
check "console created no container" test "$(new_containers)" = 0
echo '{"profile":{"runtime":"runc"}}' >"$cfg"
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "doctor --config without profile.image: exit 3, the key named" \
	bash -c "[ $rc = 3 ] && grep -qF 'profile.image: required' '$out'"

# A mistyped remote tool name: doctor lists it against the upstream's tools/list.
cat >"$cfg" <<JSON
{"profile": {"image": "$image"},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/vault.sink"]}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "public",
                     "sink_ceiling": "public", "response_ceiling": "public"},
           "typo": {"upstream": "vault", "remote": "remote", "data_class": "public",
                    "sink_ceiling": "public", "response_ceiling": "public"}}}
JSON
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "doctor --config with a mistyped remote: exit 1" test "$rc" = 1
check "the listed tool passes" grep -q '^PASS  catalog.store .*listed by upstream vault' "$out"
check "the mistyped tool fails by name, once" grep -qE "^FAIL  catalog.typo +not among upstream vault's tools \(expected remote\)$" "$out"
check "doctor called no tool (the sink saw nothing)" test ! -e "$work/vault.sink"

# A pin that is valid hex but not the tool's definition: refused up front,
# the tool and both hashes named (the listed one is what a PASS prints).
listed=$(sed -n 's/^PASS  catalog.store .*definition \([0-9a-f]\{64\}\)$/\1/p' "$out")
check "a passing catalog check prints the definition's hash" test ${#listed} = 64
pin=$(printf '%064d' 0)
sed -i "s/\"remote\": \"store\",/\"remote\": \"store\", \"pin\": \"$pin\",/" "$cfg"
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "doctor --config with a wrong pin: exit 1" test "$rc" = 1
check "the wrong pin names the tool and both hashes" \
	grep -qF "FAIL  catalog.store        definition $listed differs from tools.store.pin (expected $pin)" "$out"
rc=0; "$airlock" doctor --config "$cfg" --json >"$out" 2>/dev/null || rc=$?
check "doctor --json: the pin check fails with both hashes" python3 - "$out" "$listed" "$pin" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = next(c for c in d["checks"] if c["check"] == "catalog.store")
assert d["ok"] is False and c["verdict"] == "fail", c
assert sys.argv[2] in c["observed"] and c["expected"] == sys.argv[3], c
PY
check "doctor still called no tool" test ! -e "$work/vault.sink"

# Upstream confinement on this host: the kernel's Landlock and seccomp, the
# default user; with a config, each upstream prepared as its spawn would be
# (issue #41), the privileged opt-in marked loud even on a non-root user.
"$airlock" doctor >"$out" 2>&1
check "doctor: the kernel's Landlock ABI is enough" grep -qE '^PASS  landlock +ABI [0-9]+$' "$out"
check "doctor: seccomp filters for upstreams" grep -qE '^PASS  upstream_seccomp +available$' "$out"
check "doctor: the default upstream user exists, with its sessions' uids delegated" \
	grep -qE '^PASS  upstream_user +exists; its sessions. uids [0-9]+-[0-9]+ \(/etc/subuid\)$' "$out"
check "doctor: a parser starts as airlock-parse and locks itself down" \
	grep -qE "^PASS  parser +uid $(id -u airlock-parse) \(airlock-parse\), landlock [1-9][0-9]*, [0-9]+ calls allowed$" "$out"
check "doctor without a config shows no upstream" bash -c "! grep -q '^upstream confinement' '$out'"
cat >"$cfg" <<JSON
{"profile": {"image": "$image"},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/vault.sink"]},
               "outbox": {"argv": ["$upstream"], "user": "airlock-upstream", "privileged": true,
                          "network": {"connect": [443]}, "paths": {"ro": ["$work"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "public",
                     "sink_ceiling": "public", "response_ceiling": "public"}}}
JSON
uid=$(id -u airlock-upstream)
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "doctor --config with two upstreams: exit 0" test "$rc" = 0
check "each upstream's check passes, the opt-in named" bash -c "
	grep -qE '^PASS  confine.vault +uid $uid, landlock ABI [0-9]+, network none$' '$out' &&
	grep -qE '^PASS  confine.outbox +uid $uid, landlock ABI [0-9]+, network connect 443 bind - udp no, PRIVILEGED$' '$out'"
check "the default upstream's plan: its uid, Landlock, seccomp hash, network none" grep -qE \
	"^  vault +uid $uid \(airlock-upstream\)  landlock ABI [0-9]+, [0-9]+ rules \(ro 0, rw 0\)  seccomp [0-9a-f]{16}  network none  isolation process$" "$out"
check "privileged on a non-root user: its plan marked loud" grep -qE \
	"^  outbox +uid $uid \(airlock-upstream\)  landlock ABI [0-9]+, [0-9]+ rules \(ro 1, rw 0\)  .*network connect 443 bind - udp no  isolation process  PRIVILEGED$" "$out"
rc=0; "$airlock" doctor --config "$cfg" --json >"$out" 2>/dev/null || rc=$?
check "doctor --json: each upstream's view, as a session detail has it" python3 - "$out" "$uid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u = {x["name"]: x for x in d["upstreams"]}
v, o = u["vault"], u["outbox"]
assert v["uid"] == int(sys.argv[2]) and v["user"] == "airlock-upstream" and v["uid_changed"], v
assert v["landlock_abi"] >= 6 and v["network"] == "none" and v["isolation"] == "process", v
assert len(v["seccomp"]) == 16 and not v["privileged"], v
assert o["privileged"] and o["paths_ro"] == 1 and o["network"].startswith("connect 443"), o
assert next(c for c in d["checks"] if c["check"] == "confine.vault")["verdict"] == "pass"
PY
# An upstream that cannot be confined here: its check fails with the reason, its plan shown.
sed -i "s#\"paths\": {\"ro\": \[\"$work\"\]}#\"paths\": {\"ro\": [\"$work/absent\"]}#" "$cfg"
rc=0; "$airlock" doctor --config "$cfg" >"$out" 2>&1 || rc=$?
check "an upstream that cannot be confined here: exit 1" test "$rc" = 1
check "its check fails with the reason" grep -qF \
	"FAIL  confine.outbox       upstream outbox: confinement path $work/absent: No such file or directory" "$out"
check "and only its plan is shown, still marked loud" grep -qE \
	'^  outbox +not started \(user airlock-upstream\)  landlock - \(ro 1, rw 0\)  seccomp -  .*  PRIVILEGED$' "$out"
check "doctor started no upstream (the sink saw nothing)" test ! -e "$work/vault.sink"

# The installed upstreams (--upstreams-dir, root's): one whose program is root's, one
# whose program (root's) lies in another user's directory. Each is checked as an operator's
# start would load it; nothing is started.
mkdir -p "$work/installed" "$work/theirs"
chmod 0755 "$work/installed"
printf '{"argv": ["%s", "--sink", "%s"]}\n' "$upstream" "$work/good.sink" >"$work/installed/good.json"
cp "$upstream" "$work/theirs/up" && chown 65534:65534 "$work/theirs"
printf '{"argv": ["%s", "--sink", "%s"]}\n' "$work/theirs/up" "$work/bad.sink" >"$work/installed/bad.json"
chmod 0644 "$work/installed/good.json" "$work/installed/bad.json"
rc=0; "$airlock" doctor --upstreams-dir "$work/installed" >"$out" 2>&1 || rc=$?
check "an installed upstream that runs another's program: exit 1" test "$rc" = 1
check "its check fails naming the directory" grep -qF \
	"FAIL  installed.bad        $work/theirs: not owned by root (expected root's, as what it runs)" "$out"
check "the root-owned one passes" grep -qE "^PASS  installed.good +good.json: root's, as what it runs$" "$out"
rc=0; "$airlock" doctor --upstreams-dir "$work/installed" --json >"$out" 2>/dev/null || rc=$?
check "doctor --json: both installed checks, with the row's help" python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = {c["check"]: c for c in d["checks"] if c["check"].startswith("installed.")}
assert set(got) == {"installed.good", "installed.bad"}, got
assert got["installed.good"]["verdict"] == "pass" and got["installed.bad"]["verdict"] == "fail", got
assert "installed upstream" in got["installed.bad"]["help"], got
assert d["ok"] is False, d
PY
check "doctor started neither (no sink)" test ! -e "$work/good.sink" -a ! -e "$work/bad.sink"
rc=0; "$airlock" doctor --upstreams-dir "$work/absent" >"$out" 2>&1 || rc=$?
check "an absent catalog: nothing installed, no installed check" bash -c \
	'[ "$1" = 0 ] && ! grep -q "installed" "$2"' _ "$rc" "$out"

rc=0; DOCKER_HOST=tcp://127.0.0.1:2375 "$airlock" doctor >"$out" 2>&1 || rc=$?
check "a tcp:// endpoint is refused with exit 1" test "$rc" = 1
check "the refusal names the endpoint check" grep -q '^FAIL  endpoint .*not a local unix socket' "$out"

rc=0; "$airlock" doctor --bogus >/dev/null 2>&1 || rc=$?
check "an unknown flag is a usage error" test "$rc" = 2

summary
