#!/usr/bin/env bash
# notify.sh PROBE [FAKE_NOTIFYD]: desktop notifications on a private bus.
#
# A private dbus-daemon (its own config: no service directories, so nothing
# is ever auto-started) and dbus-monitor on it. Then the probe:
#   1. with nobody owning org.freedesktop.Notifications: libnotify's
#      GetServerInformation gets ServiceUnknown back; the probe must neither
#      hang nor crash;
#   2. with a stand-in server: the monitor must see Notify calls carrying
#      the alert lines, and never the canary the events carry;
#   3. with a server that never answers Notify: close must still return
#      (the D-Bus timeout is 25 s; close gives up after 2 s), dropping
#      what the full queue could not hold;
#   4. without DBUS_SESSION_BUS_ADDRESS: inactive, exits 0 at once (the
#      time is printed, not asserted).
# Without libnotify in the build only 4 runs, and the test reports a skip.
set -u

probe=${1:?usage: notify.sh PROBE [FAKE_NOTIFYD]}
fake=${2:-}
expect='watchdog: lease of 3f9a1c02 failed (no ack), container stopped'
canary='CANARY-payload-4242'

. "$(dirname "$0")/../checks.sh"
note() { printf '# %s\n' "$*"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/airlock-notify.XXXXXX") || exit 1
addr= bus_pid= monitor_pid= fake_pid=

stop() {
	local p
	for p in "$@"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	return 0
}

cleanup() {
	stop "$fake_pid" "$monitor_pid"
	[ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_probe NAME COUNT [env args]: output in $tmp/NAME.out, status in $rc,
# wall time in $elapsed_ms. A hang ends at 60 s as status 124.
run_probe() {
	local name=$1 count=$2 t0
	shift 2
	t0=$(now_ms)
	env "$@" timeout 60 "$probe" "$count" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	elapsed_ms=$(($(now_ms) - t0))
	sed 's/^/#   /' "$tmp/$name.out"
	[ "$rc" = 0 ] || tail -n 40 "$tmp/$name.err" | sed 's/^/#   stderr: /'
}

field() { sed -n "s/^$1: //p" "$tmp/$2.out" | head -n 1; }

start_bus() {
	cat >"$tmp/bus.conf" <<-EOF
		<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
		 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
		<busconfig>
		  <type>session</type>
		  <listen>unix:dir=$tmp</listen>
		  <auth>EXTERNAL</auth>
		  <policy context="default">
		    <allow send_destination="*" eavesdrop="true"/>
		    <allow eavesdrop="true"/>
		    <allow own="*"/>
		  </policy>
		</busconfig>
	EOF
	local out
	out=$(dbus-daemon --config-file="$tmp/bus.conf" --fork --nopidfile \
		--print-address=1 --print-pid=1) || return 1
	addr=$(printf '%s\n' "$out" | sed -n 1p)
	bus_pid=$(printf '%s\n' "$out" | sed -n 2p)
	[ -n "$addr" ] && [ -n "$bus_pid" ]
}

# The monitor is live once it has seen a signal we send after starting it.
start_monitor() {
	local i
	dbus-monitor --address "$addr" "interface='org.freedesktop.Notifications'" \
		"type='error'" >"$tmp/monitor.log" 2>&1 &
	monitor_pid=$!
	for i in $(seq 1 100); do
		dbus-send --address="$addr" --type=signal /airlock/test \
			org.freedesktop.Notifications.MonitorReady 2>/dev/null
		grep -q 'member=MonitorReady' "$tmp/monitor.log" && return 0
		sleep 0.1
	done
	return 1
}

start_fake() {
	local i
	"$fake" "$addr" "$@" >"$tmp/fake.log" 2>&1 &
	fake_pid=$!
	for i in $(seq 1 100); do
		grep -q '^ready$' "$tmp/fake.log" && return 0
		kill -0 "$fake_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Lines of the monitor's log since mark (a line count).
since() { tail -n +"$(($1 + 1))" "$tmp/monitor.log"; }
lines() { wc -l <"$tmp/monitor.log"; }

# The method call, then its body argument: dbus-monitor prints the call's
# arguments on the lines after it, the body being the fifth. The monitor
# writes its log on its own time: looked for up to 5 s after the probe.
saw_notify_with() {
	local i
	for i in $(seq 1 50); do
		since "$1" | grep -A 6 'member=Notify$' | grep -qF "string \"$2\"" && return 0
		sleep 0.1
	done
	return 1
}

saw_summary() {
	since "$1" | grep -A 6 'member=Notify$' | grep -q '^ *string "airlock"$'
}

absent() { ! grep -qF -- "$1" "$2"; }

no_bus() {
	run_probe nobus 3 -u DBUS_SESSION_BUS_ADDRESS
	note "no bus: probe ran ${elapsed_ms} ms wall, open $(field open_ms nobus) ms, close $(field close_ms nobus) ms"
	check "no bus: probe exits 0" [ "$rc" = 0 ]
	check "no bus: notifier inactive" [ "$(field active nobus)" = no ]
	check "no bus: nothing counted as dropped" [ "$(field dropped nobus)" = 0 ]
}

no_server() {
	local mark
	mark=$(lines)
	run_probe noserver 3 DBUS_SESSION_BUS_ADDRESS="$addr"
	check "no server: probe exits 0 (no hang, no crash)" [ "$rc" = 0 ]
	check "no server: notifier active" [ "$(field active noserver)" = yes ]
	check "no server: the monitor saw GetServerInformation" \
		grep -q 'member=GetServerInformation$' <(since "$mark")
	check "no server: the bus answered ServiceUnknown" \
		grep -q 'error_name=org.freedesktop.DBus.Error.ServiceUnknown' <(since "$mark")
	if since "$mark" | grep -q 'member=Notify$'; then
		note "no server: Notify was sent as well"
	else
		note "no server: no Notify sent (libnotify stops when GetServerInformation fails)"
	fi
	note "no server: probe ran ${elapsed_ms} ms, close $(field close_ms noserver) ms"
}

with_server() {
	local mark text
	mark=$(lines)
	check "server: stand-in owns org.freedesktop.Notifications" start_fake
	run_probe server 3 DBUS_SESSION_BUS_ADDRESS="$addr"
	check "server: probe exits 0" [ "$rc" = 0 ]
	check "server: notifier active" [ "$(field active server)" = yes ]
	check "server: the monitor saw a Notify call with the lease alert" \
		saw_notify_with "$mark" "$expect"
	while IFS= read -r text; do
		check "server: Notify carried \"$text\"" saw_notify_with "$mark" "$text"
	done < <(sed -n 's/^sent: //p' "$tmp/server.out")
	check "server: summary is \"airlock\"" saw_summary "$mark"
	check "server: the stand-in got 3 bodies" [ "$(grep -c '^notify: ' "$tmp/fake.log")" = 3 ]
	check "server: nothing dropped" [ "$(field dropped server)" = 0 ]
	note "server: probe ran ${elapsed_ms} ms, close $(field close_ms server) ms"
	stop "$fake_pid"
	fake_pid=
}

hung_server() {
	local close_ms
	check "hung server: stand-in started with --hang" start_fake --hang
	run_probe hung 40 DBUS_SESSION_BUS_ADDRESS="$addr"
	close_ms=$(field close_ms hung)
	note "hung server: probe ran ${elapsed_ms} ms, close ${close_ms} ms"
	check "hung server: probe exits 0" [ "$rc" = 0 ]
	# 2 s of close against a 25 s D-Bus timeout: 10 s leaves room for a slow machine.
	check "hung server: close gave up instead of waiting for D-Bus" \
		[ "${close_ms%%.*}" -lt 10000 ]
	check "hung server: a full queue drops and counts" [ "$(field dropped hung)" -gt 0 ]
	stop "$fake_pid"
	fake_pid=
}

no_bus
if [ "$(field libnotify nobus)" != yes ]; then
	note "built without libnotify: the bus checks do not apply"
	summary && exit 77
	exit 1
fi

for tool in dbus-daemon dbus-monitor dbus-send; do
	check "$tool is installed (scripts/setup)" command -v "$tool" >/dev/null
done
if [ "$failed" = 0 ] && check "private session bus started" start_bus &&
	check "dbus-monitor is watching" start_monitor; then
	note "bus: $addr"
	no_server
	if [ -n "$fake" ]; then
		with_server
		hung_server
		check "no canary reached the bus" absent "$canary" "$tmp/monitor.log"
		check "no canary reached the server" absent "$canary" "$tmp/fake.log"
	else
		not_ok "no stand-in notification server was built"
	fi
fi

summary
