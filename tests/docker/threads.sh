#!/usr/bin/env bash
# Threads and clone3 under both runtimes (issue #33; engine/admission/seccomp.h): the
# threads fixture (tests/fixtures/threads.c) is linked dynamically against
# the host's glibc, which starts threads with clone3 and falls back to clone
# only on ENOSYS. Its image holds the binary, the dynamic loader and libc,
# nothing else. Each case is one `airlock run`; the agent reports through
# the permitted tool, whose call recorder (the sink) is the observer.
#
#   threads    4 threads start and join, under runc and under runsc
#   clone3     the raw syscall, plain and with CLONE_NEWUSER: never a child
#   mutants    (airlock-mutants) weak_clone3: a runc session given the runsc
#              profile is refused under "seccomp"; bypassed, clone3 creates
#              a user namespace. runsc_default_seccomp: a runsc session on
#              the daemon's default profile (before the fix) is refused
#              under "seccomp"; bypassed, no thread starts.
#
# usage: threads.sh AIRLOCK AIRLOCK_MUTANTS THREADS_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 mutants=$2 threads=$3 upstream=$4
scratch_dir

. "$here/../checks.sh"
. "$here/cases.sh"

echo '{"note":"nothing secret in the frame"}' >"$work/payload.json"

# --- the image: the binary and the libraries ldd names, at their paths ---------
libs=$(ldd "$threads" | grep -o '/[^ ]*' | sort -u)
check "the threads fixture is linked dynamically against glibc" \
	grep -q '/libc\.so\.6$' <<<"$libs"
mkdir -p "$work/image"
cp "$threads" "$work/image/threads"
for lib in $libs; do
	mkdir -p "$work/image$(dirname "$lib")" && cp -L "$lib" "$work/image$lib"
done
printf 'FROM scratch\nCOPY . /\nENTRYPOINT ["/threads"]\n' >"$work/image/Dockerfile"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$work/iid" "$work/image" >/dev/null 2>&1 ||
	{ not_ok "threads image build"; summary; exit 1; }
image=$(cat "$work/iid")
images+=("$image")
echo "info: glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2), runsc $(runsc --version 2>/dev/null | head -1)"

# config CASE MODE RUNTIME
config() {
	mkdir -p "$work/$1" && upstream_box "$work/$1"
	cat >"$work/$1/config.json" <<JSON
{
  "profile": {"image": "$image", "cmd": ["$2"], "runtime": "$3"},
  "bounds": {"session_ms": 20000},
  "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/$1/vault.sink"],
                          "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$work/$1"]}}},
  "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                      "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
  "aliases": {"save": "store"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON
}

# run CASE MODE RUNTIME [MUTANT]: airlock (or airlock-mutants with MUTANT set)
run() {
	local dir=$work/$1 bin=$airlock
	config "$1" "$2" "$3"
	[ -n "${4:-}" ] && bin=$mutants
	AIRLOCK_MUTANT=${4:-} "$bin" run --config "$dir/config.json" --audit "$dir/audit.db" \
		--json >"$dir/summary.json" 2>"$dir/stderr" </dev/null
	echo $? >"$dir/rc"
}

# reported CASE KEY: the value of KEY in the agent's one report at the sink
reported() {
	python3 -c 'import json,sys
for line in open(sys.argv[1]):
    try: d = json.loads(line)
    except ValueError: continue
    def find(o):
        if isinstance(o, dict):
            if sys.argv[2] in o and "probe" in o: return o[sys.argv[2]]
            for v in o.values():
                r = find(v)
                if r is not None: return r
        elif isinstance(o, list):
            for v in o:
                r = find(v)
                if r is not None: return r
    r = find(d)
    if r is not None: print(r); break' "$work/$1/vault.sink" "$2" 2>/dev/null
}
no_child() { local v; v=$(reported "$1" "$2"); [ "$v" = ENOSYS ] || [ "$v" = EPERM ]; }

ran() {	# CASE: admitted twice, the agent ended by itself, nothing left
	check "$1: both admissions passed" is "$1" admission.second admitted
	check "$1: ended agent_exit" is "$1" ended agent_exit
	check "$1: container stopped and gone" gone "$1"
}

refused_by_seccomp() {	# CASE
	check "$1: refused at the first admission" is "$1" admission.first refused
	check "$1: the refusing check is seccomp (got $(field "$1" admission.refused_check))" \
		is "$1" admission.refused_check seccomp
	check "$1: exit status 1" [ "$(cat "$work/$1/rc")" = 1 ]
	check "$1: nothing reached the sink" no_file "$1" vault.sink
	check "$1: container stopped and gone" gone "$1"
}

runtimes=(runc)
if "$DOCKER" info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then
	runtimes+=(runsc)
elif [ -n "${CI:-}" ]; then
	not_ok "runsc is on the daemon (scripts/daemon.json registers it)"
else
	echo "#### SKIPPED: runsc is not on the daemon; the gVisor cases did not run"
fi

for rt in "${runtimes[@]}"; do
	run "threads_$rt" threads "$rt"
	ran "threads_$rt"
	check "threads_$rt: 4 threads started (got $(reported "threads_$rt" started) $(reported "threads_$rt" errno))" \
		[ "$(reported "threads_$rt" started)/$(reported "threads_$rt" errno)" = 4/OK ]

	run "clone3_$rt" clone3 "$rt"
	ran "clone3_$rt"
	echo "info: clone3 under $rt: plain $(reported "clone3_$rt" plain), CLONE_NEWUSER $(reported "clone3_$rt" newuser)"
	check "clone3_$rt: plain clone3 makes no child" no_child "clone3_$rt" plain
	check "clone3_$rt: clone3 with CLONE_NEWUSER makes no child" no_child "clone3_$rt" newuser
done

# --- a runc session given the runsc profile: refused; bypassed, a user namespace --
run clone3_runc_runsc_profile clone3 runc weak_clone3
refused_by_seccomp clone3_runc_runsc_profile
run clone3_runc_runsc_profile_bypassed clone3 runc weak_clone3,admission_bypass
check "clone3_runc_runsc_profile_bypassed (mutant weak_clone3): clone3 made a child in a new user namespace" \
	[ "$(reported clone3_runc_runsc_profile_bypassed newuser)" = child ]
check "clone3_runc_runsc_profile_bypassed: container stopped and gone" gone clone3_runc_runsc_profile_bypassed

# --- a runsc session on the daemon's default profile (before the fix) ------------
if [ "${#runtimes[@]}" = 2 ]; then
	run threads_runsc_default threads runsc runsc_default_seccomp
	refused_by_seccomp threads_runsc_default
	run threads_runsc_default_bypassed threads runsc runsc_default_seccomp,admission_bypass
	check "threads_runsc_default_bypassed (mutant runsc_default_seccomp): no thread started, EPERM" \
		[ "$(reported threads_runsc_default_bypassed started)/$(reported threads_runsc_default_bypassed errno)" = 0/EPERM ]
	check "threads_runsc_default_bypassed: container stopped and gone" gone threads_runsc_default_bypassed
fi

summary
