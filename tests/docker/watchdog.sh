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
