#!/usr/bin/env bash
# `airlock watchdog SOCKET ID` run by hand: it guards (and so stops) only a
# container that carries airlock's labels. A foreign container, and one
# with only io.airlock.managed=1, are refused and keep running; a fully
# labelled one is stopped when the lease ends (the positive control).
#
# usage: watchdog.sh AIRLOCK ECHOER_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 echoer=$2
scratch_dir

. "$here/../checks.sh"

image=$(scratch_image "$work/image" "$echoer") || { not_ok "echoer image build"; summary; exit 1; }

# A live owner, so no reaper elsewhere takes the labelled one meanwhile.
sleep 300 &
sleep_pid=$!
helpers+=("$sleep_pid")
start=$(start_ticks "$sleep_pid")
boot=$(cat /proc/sys/kernel/random/boot_id)

# plant_as VAR LABEL-ARGS...: a running echoer; its ID in VAR. In this shell,
# not a $(…): teardown must know every name.
plant_as() {
	local name=watchdog-test-$1-$$ var=$1; shift
	plant "$name" "$image" "$@"
	printf -v "$var" '%s' "$("$DOCKER" inspect -f '{{.Id}}' "$name" 2>/dev/null)"
}
plant_as foreign
plant_as partial --label io.airlock.managed=1
plant_as ours --label io.airlock.managed=1 --label io.airlock.session=watchdog-test \
	--label "io.airlock.owner-pid=$sleep_pid" --label "io.airlock.owner-start=$start" \
	--label "io.airlock.owner-boot=$boot"
check "three containers planted and running" \
	bash -c '[ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ]' _ "$foreign" "$partial" "$ours"
for c in "$foreign" "$partial" "$ours"; do check "running before: ${c:0:12}" running "$c"; done

# stdin /dev/null: EOF at once, which makes a guarding watchdog stop its container.
for c in foreign partial; do
	id=${!c}
	rc=0; timeout 30 "$airlock" watchdog "$sock" "$id" </dev/null >"$work/out" 2>"$work/err" || rc=$?
	check "$c: refused with exit 1" [ "$rc" = 1 ]
	check "$c: the refusal names the labels" grep -qF "does not carry airlock's labels (io.airlock.managed=1, session and owner); refused" "$work/err"
	check "$c: never said ready" [ ! -s "$work/out" ]
	check "$c: still running" running "$id"
done
rc=0; timeout 30 "$airlock" watchdog "$sock" "$ours" </dev/null >"$work/out" 2>"$work/err" || rc=$?
check "airlock's container: the watchdog stopped it on EOF (exit 0)" [ "$rc" = 0 ]
check "airlock's container: stopped" stopped "$ours"
unknown=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# The groups it guards ("g<pid>;", watchdog.h): a group an upstream would
# lead, with a child that ignores SIGTERM. On a socketpair as the engine
# runs it (above, stdout is no socket: its "ready" fails and it stops the
# container at once), its engine gone (EOF), the watchdog kills the group
# before it stops the container; the mutant that spares the groups (the
# -mutants program) leaves it running.
# group_alive PGID: a member that is not a zombie (a killed leader stays
# one until this shell reaps it).
group_alive() { ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'; }
# lease MESSAGE CMD...: CMD (a watchdog) on a socketpair, as the engine runs
# it: after its "ready", MESSAGE, then EOF (its engine gone). Its exit status.
lease() {
	python3 - "$@" <<'PY'
import socket, subprocess, sys
ours, theirs = socket.socketpair()
p = subprocess.Popen(sys.argv[2:], stdin=theirs, stdout=theirs)
theirs.close()
ours.settimeout(20)
ready = ours.recv(6)
if ready == b"ready\n":
    ours.sendall(sys.argv[1].encode())
ours.close()
sys.exit(p.wait(timeout=60))
PY
}
guarded() {	# VAR: a new group of two sleeps, its leader's pid in VAR
	python3 -c 'import os, signal, time
os.setsid(); signal.signal(signal.SIGTERM, signal.SIG_IGN); os.fork(); time.sleep(300)' \
		</dev/null >/dev/null 2>&1 &
	local p=$! i
	helpers+=("$p")
	for i in $(seq 50); do [ "$(pgrep -g "$p" | wc -l)" = 2 ] && break; sleep 0.1; done
	printf -v "$1" '%s' "$p"
}
plant_as ours2 --label io.airlock.managed=1 --label io.airlock.session=watchdog-test \
	--label "io.airlock.owner-pid=$sleep_pid" --label "io.airlock.owner-start=$start" \
	--label "io.airlock.owner-boot=$boot"
guarded g1
check "a group of two to guard (leader $g1)" bash -c '[ "$(pgrep -g "$1" | wc -l)" = 2 ]' _ "$g1"
rc=0; lease "g$g1;" "$airlock" watchdog "$sock" "$ours2" 2>/dev/null || rc=$?
check "a guarded group: gone when its engine is (exit $rc)" bash -c '[ "$1" = 0 ]' _ "$rc"
group_gone() { local i; for i in $(seq 20); do group_alive "$1" || return 0; sleep 0.1; done; return 1; }
check "  (no member of $g1 runs)" group_gone "$g1"
check "and the container stopped" stopped "$ours2"
"$DOCKER" start "$ours2" >/dev/null
guarded g2
rc=0; AIRLOCK_MUTANT=watchdog_spare_groups lease "g$g2;" \
	"$(dirname "$airlock")/airlock-watchdog-mutants" watchdog "$sock" "$ours2" 2>/dev/null || rc=$?
check "mutant watchdog_spare_groups: the container stopped (exit $rc)" bash -c '[ "$1" = 0 ]' _ "$rc"
check "  the group still runs" group_alive "$g2"
kill -KILL -- "-$g2" 2>/dev/null
"$DOCKER" start "$ours2" >/dev/null
guarded g3
rc=0; lease "g${g3}x" "$airlock" watchdog "$sock" "$ours2" 2>/dev/null || rc=$?
check "a malformed guard message: a wrong byte, the container stopped (exit $rc)" bash -c '[ "$1" = 0 ]' _ "$rc"
check "  nothing killed" group_alive "$g3"
check "  (stopped)" stopped "$ours2"
kill -KILL -- "-$g3" 2>/dev/null

rc=0; timeout 30 "$airlock" watchdog "$sock" "$unknown" </dev/null >/dev/null 2>"$work/err" || rc=$?
check "an unknown ID: refused with exit 1, the daemon's answer named" \
	bash -c '[ "$1" = 1 ] && grep -q "HTTP 404" "$2"' _ "$rc" "$work/err"
rc=0; timeout 30 "$airlock" watchdog "$sock" "no-such-container-$$" </dev/null >/dev/null 2>"$work/err" || rc=$?
check "a name, not a full ID: a usage error (exit 2), nothing asked" [ "$rc" = 2 ]
# The program the engine runs refuses the same way.
rc=0; timeout 30 "$(dirname "$airlock")/airlock-watchdog" watchdog "$sock" "$foreign" </dev/null \
	>"$work/out" 2>"$work/err" || rc=$?
check "airlock-watchdog: a foreign container refused with exit 1, never ready" \
	bash -c '[ "$1" = 1 ] && [ ! -s "$2" ]' _ "$rc" "$work/out"
check "airlock-watchdog: the foreign container still running" running "$foreign"
teardown
left=$("$DOCKER" ps -aq --filter "name=watchdog-test-.*-$$")
check "no planted container left after cleanup" [ -z "$left" ]

summary
