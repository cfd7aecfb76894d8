# Sourced after common.sh and checks.sh by the suites that drive one
# `airlock serve` with `airlock ctl`: $airlock the binary, $work the
# scratch dir, $sock the engine's socket; its audit is $work/audit.db.

# serve_start [ARGS...]: the engine, its log in $work/serve.err, $engine
# its pid (stopped by the teardown); checked "serve listens", and the
# script ends there when it does not.
serve_start() {
	"$airlock" serve --socket "$sock" --audit "$work/audit.db" "$@" 2>"$work/serve.err" </dev/null &
	engine=$!
	helpers+=("$engine")
	check "serve listens" serve_ready "$work/serve.err" "$engine" ||
		{ cat "$work/serve.err"; summary; exit 1; }
}

# ctl NAME ARGS...: ctl's stdout and stderr kept as $work/NAME.out and .err; rc in $rc.
ctl() {
	local name=$1
	shift
	rc=0
	"$airlock" ctl --socket "$sock" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
}

audit_q() { sqlite3 "file:$work/audit.db?mode=ro" "$1" 2>/dev/null; }

# audit_has SQL-COUNT: until it is > 0 within 10 s (the writer thread is asynchronous).
audit_has() {
	local i
	for i in $(seq 100); do [ "$(audit_q "$1")" -gt 0 ] 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

# pending_id SESSION [NOT-ID]: the id of a call of SESSION waiting now (not
# NOT-ID), from `ctl pending --json`, within 15 s.
pending_id() {
	local i id
	for i in $(seq 150); do
		"$airlock" ctl --socket "$sock" pending --json >"$work/pending.json" 2>/dev/null
		id=$(python3 -c '
import json, sys
p = [h["id"] for h in json.load(open(sys.argv[1]))["pending"]
     if h["session"] == sys.argv[2] and str(h["id"]) != sys.argv[3]]
print(p[0] if p else "")' "$work/pending.json" "$1" "${2:-0}" 2>/dev/null)
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.1
	done
	return 1
}
