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
work=$(mktemp -d)
sleep_pid=
planted=()
cleanup() {
	[ -n "$sleep_pid" ] && kill "$sleep_pid" 2>/dev/null
	for c in "${planted[@]}"; do
		"$DOCKER" rm -f -v "$c" >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap cleanup EXIT

passed=0 failed=0
check() {	# description, command...
	local what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok: $what"
	else failed=$((failed + 1)); echo "not ok: $what"; fi
}
running() { [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }
stopped() { [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = false ]; }

mkdir -p "$work/image"
cp "$echoer" "$work/image/echoer"
printf 'FROM scratch\nCOPY echoer /echoer\nENTRYPOINT ["/echoer"]\n' >"$work/image/Dockerfile"
DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$work/image/iid" -t airlock-test-echoer:latest \
	"$work/image" >/dev/null || { echo "not ok: echoer image build"; exit 1; }
image=$(cat "$work/image/iid")

# A live owner, so no reaper elsewhere takes the labelled one meanwhile.
sleep 300 &
sleep_pid=$!
start=$(s=$(cat "/proc/$sleep_pid/stat"); s=${s##*)}; set -- $s; echo "${20}")
boot=$(cat /proc/sys/kernel/random/boot_id)

# plant NAME LABEL-ARGS...: a running echoer (stdin open, never attached).
plant() {
	local name=watchdog-test-$1-$$; shift
	"$DOCKER" rm -f -v "$name" >/dev/null 2>&1
	planted+=("$name")
	"$DOCKER" create -i --name "$name" --network none --cap-drop ALL \
		--security-opt no-new-privileges --user 65534:65534 --read-only \
		"$@" "$image" >/dev/null && "$DOCKER" start "$name" >/dev/null
	"$DOCKER" inspect -f '{{.Id}}' "$name"
}
foreign=$(plant foreign)
partial=$(plant partial --label io.airlock.managed=1)
ours=$(plant ours --label io.airlock.managed=1 --label io.airlock.session=watchdog-test \
	--label "io.airlock.owner-pid=$sleep_pid" --label "io.airlock.owner-start=$start" \
	--label "io.airlock.owner-boot=$boot")
check "three containers planted and running" \
	bash -c '[ -n "$1" ] && [ -n "$2" ] && [ -n "$3" ]' _ "$foreign" "$partial" "$ours"
for c in "$foreign" "$partial" "$ours"; do check "running before: ${c:0:12}" running "$c"; done

# stdin /dev/null: EOF at once, which makes a guarding watchdog stop its container.
for c in foreign partial; do
	id=${!c}
	rc=0; timeout 30 "$airlock" watchdog "$sock" "$id" </dev/null >"$work/out" 2>"$work/err" || rc=$?
	check "$c: refused with exit 1" [ "$rc" = 1 ]
	check "$c: the refusal names the labels" grep -qF "does not carry airlock's labels (io.airlock.managed); refused" "$work/err"
	check "$c: never said ready" [ ! -s "$work/out" ]
	check "$c: still running" running "$id"
done
rc=0; timeout 30 "$airlock" watchdog "$sock" "$ours" </dev/null >"$work/out" 2>"$work/err" || rc=$?
check "airlock's container: the watchdog stopped it on EOF (exit 0)" [ "$rc" = 0 ]
check "airlock's container: stopped" stopped "$ours"
rc=0; timeout 30 "$airlock" watchdog "$sock" "no-such-container-$$" </dev/null >/dev/null 2>"$work/err" || rc=$?
check "an unknown ID: refused with exit 1, the daemon's answer named" \
	bash -c '[ "$1" = 1 ] && grep -q "404" "$2"' _ "$rc" "$work/err"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
