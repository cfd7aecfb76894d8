#!/usr/bin/env bash
# `airlock reap` against the real daemon. Three running containers carry
# airlock's labels: (a) an owner pid that has exited, (b) a live owner
# (a sleep started here, with its real start time), (c) a live pid but
# another boot's id. The first reap removes (a) and (c) and keeps (b);
# once the sleep is killed, the second reap removes (b). Only the planted
# containers are checked by name, so leftovers from elsewhere do not matter.
#
# usage: reap.sh AIRLOCK ECHOER_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 echoer=$2
scratch_dir
boot=$(cat /proc/sys/kernel/random/boot_id)
other_boot=00000000-0000-4000-8000-000000000000

. "$here/../checks.sh"

absent() { ! "$DOCKER" inspect "$1" >/dev/null 2>&1; }

# --- the image ---------------------------------------------------------------
image=$(scratch_image "$work/image" "$echoer") || { not_ok "echoer image build"; summary; exit 1; }

# plant_labelled NAME PID START BOOT: a running echoer with airlock's labels.
plant_labelled() {
	plant "reap-test-$1-$$" "$image" --label io.airlock.managed=1 \
		--label "io.airlock.owner-pid=$2" --label "io.airlock.owner-start=$3" \
		--label "io.airlock.owner-boot=$4" --label io.airlock.session=reap-test
}

# (a): a pid that has exited, with the start time it had.
sleep 300 &
dead_pid=$!
dead_start=$(start_ticks "$dead_pid")
kill "$dead_pid"
wait "$dead_pid" 2>/dev/null
# (b): a live owner.
sleep 300 &
sleep_pid=$!
helpers+=("$sleep_pid")
alive_start=$(start_ticks "$sleep_pid")

check "plant orphan" plant_labelled orphan "$dead_pid" "$dead_start" "$boot"
check "plant alive" plant_labelled alive "$sleep_pid" "$alive_start" "$boot"
# (c): this shell is alive, but the labels name another boot.
check "plant other-boot" plant_labelled otherboot "$$" "$(start_ticks $$)" "$other_boot"
a=reap-test-orphan-$$ b=reap-test-alive-$$ c=reap-test-otherboot-$$
sleep 1
for n in "$a" "$b" "$c"; do
	check "$n keeps running with stdin open" running "$n"
done

# --- first reap: (a) and (c) go, (b) stays -------------------------------------
id_a=$("$DOCKER" inspect -f '{{.Id}}' "$a") id_b=$("$DOCKER" inspect -f '{{.Id}}' "$b")
id_c=$("$DOCKER" inspect -f '{{.Id}}' "$c")
out=$("$airlock" reap --json 2>"$work/stderr")
rc=$?
check "reap --json exits 0 (rc=$rc, stderr: $(head -c 300 "$work/stderr"))" test "$rc" -eq 0
check "reap --json prints one JSON object: $out" \
	jq -e '(.found|type) == "number" and (.reaped|type) == "number" and
		(.kept|type) == "number" and .failed == 0' <<<"$out" >/dev/null
check "reap counted the planted ones: $out" \
	jq -e '.found >= 3 and .reaped >= 2 and .kept >= 1' <<<"$out" >/dev/null
check "reap --json names the two it removed, with their session" \
	jq -e --arg a "$id_a" --arg c "$id_c" '[.reaped_containers[] | select(.session == "reap-test")
		| .container] as $r | ($r | index($a)) != null and ($r | index($c)) != null' \
	<<<"$out" >/dev/null
check "reap --json names the one it kept, not among the removed" \
	jq -e --arg b "$id_b" '([.kept_containers[].container] | index($b)) != null and
		([.reaped_containers[].container] | index($b)) == null' <<<"$out" >/dev/null
check "orphan (owner pid exited) removed" absent "$a"
check "other-boot container removed" absent "$c"
check "container with a live owner still running" running "$b"

# --- second reap, after the owner dies ----------------------------------------
kill "$sleep_pid"
wait "$sleep_pid" 2>/dev/null
out=$("$airlock" reap 2>"$work/stderr")
rc=$?
check "reap exits 0 (rc=$rc)" test "$rc" -eq 0
check "reap prints its summary: $out" grep -Eq \
	'^reap: [0-9]+ airlock containers, [0-9]+ reaped, [0-9]+ kept \(owner alive\), 0 failed$' <<<"$out"
check "container removed once its owner died" absent "$b"
check "reap's text names it: reaped ${id_b:0:12} reap-test" grep -qx "reaped ${id_b:0:12} reap-test" <<<"$out"

# --- exit statuses -----------------------------------------------------------------
"$airlock" reap --bogus >/dev/null 2>&1
check "a bad flag exits 2" test $? -eq 2
DOCKER_HOST=unix://$work/no.sock "$airlock" reap >/dev/null 2>"$work/stderr"
rc=$?
check "no daemon exits 3 (rc=$rc)" test "$rc" -eq 3
check "no daemon says why" test -s "$work/stderr"

summary
