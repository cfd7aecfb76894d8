#!/usr/bin/env bash
# A hostile upstream in real sessions (issue 41, section 5): the agent's one
# permitted call reaches tests/fixtures/hostile_upstream, which tries every
# power an upstream must not have. Judged by observers outside it: a TCP
# and a UDP listener on 127.0.0.1 (observers.py), a root-only unix socket
# standing in for the Docker socket, a file its uid could write but that is
# outside its paths (only Landlock guards it), and /etc; the session's own
# audit log sits in a root-only directory. Its own report (what each attempt
# returned) is read too. Protected, under runc and under runsc: nothing
# arrives anywhere, and the audit receipt says airlock-upstream. Then each
# protection removed alone (airlock-mutants): the start is refused first
# (the child's proof), and with the proof also removed the power comes back
# at its observer.
#
# usage: hostile.sh AIRLOCK AIRLOCK_MUTANTS AGENT_BIN HOSTILE_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 mutants_exe=$2 agent=$3 hostile=$4
scratch_dir
. "$here/../checks.sh"

if [ "$(id -u)" != 0 ] || ! id airlock-upstream >/dev/null 2>&1; then
	# The protected side switches to airlock-upstream: only a root engine can.
	echo "not ok: hostile.sh needs root and the airlock-upstream user (scripts/setup)"
	echo "0 passed, 1 failed"
	exit 1
fi

image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
token="HOSTILE$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '{"note":"%s"}\n' "$token" >"$work/payload.json"

# --- observers ---------------------------------------------------------------------
mkdir -p "$work/obs" "$work/priv" "$work/open"
chmod 0700 "$work/priv" && chmod 0711 "$work"
python3 "$here/observers.py" "$work/obs" "$token" &
helpers+=($!)
# The Docker socket's stand-in: root's, in a root-only directory; counts connections.
python3 - "$work/priv/docker.sock" "$work/obs/unix" <<'PY' &
import os, socket, sys
path, out = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); os.chmod(path, 0o600); s.listen(8)
open(out + ".tmp", "w").write("0\n"); os.replace(out + ".tmp", out)
n = 0
while True:
    c, _ = s.accept(); c.close(); n += 1
    open(out + ".tmp", "w").write("%d\n" % n); os.replace(out + ".tmp", out)
PY
helpers+=($!)
for _ in $(seq 100); do [ -s "$work/obs/port" ] && [ -s "$work/obs/unix" ] && break; sleep 0.05; done
port=$(cat "$work/obs/port" 2>/dev/null)
if [ -z "$port" ] || [ ! -s "$work/obs/unix" ]; then
	echo "not ok: observers did not start"; echo "0 passed, 1 failed"; exit 1
fi
events() {	# tcp4|dns4 -> connections or datagrams seen so far
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["events"])' \
		"$work/obs/counts.json" "$1" 2>/dev/null || echo 0
}

# --- one session --------------------------------------------------------------------
# The agent's "normal" run: a "save" (permitted: the attempt) and a "publish"
# (a public sink: denied, the session being confidential).
# session CASE RUNTIME BINARY [MUTANTS]: CASE/{rc,stderr,report,audit.db}; the
# observers' counts before it in CASE/before.
session() {
	local dir=$work/$1 rt=$2 bin=$3 muts=${4:-}
	mkdir -p "$dir/box" && upstream_box "$dir/box"
	: >"$work/open/$1.db" && chmod 0666 "$work/open/$1.db"
	echo "$(events tcp4) $(events dns4) $(cat "$work/obs/unix")" >"$dir/before"
	cat >"$dir/config.json" <<JSON
{
  "profile": {"image": "$image", "runtime": "$rt", "cmd": ["normal"]},
  "bounds": {"session_ms": 20000},
  "upstreams": {
    "hostile": {"argv": ["$hostile", "--unix", "$work/priv/docker.sock", "--tcp", "$port",
                         "--udp", "$port", "--db", "$work/open/$1.db", "--report", "$dir/box/report"],
                "paths": {"rw": ["$dir/box"]}}
  },
  "tools": {
    "attempt": {"upstream": "hostile", "remote": "attempt", "data_class": "confidential",
                "sink_ceiling": "confidential", "response_ceiling": "confidential"},
    "post": {"upstream": "hostile", "remote": "attempt", "data_class": "public",
             "sink_ceiling": "public", "response_ceiling": "public"}
  },
  "aliases": {"save": "attempt", "publish": "post"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON
	AIRLOCK_MUTANT=$muts "$bin" run --config "$dir/config.json" --audit "$work/priv/$1.audit.db" \
		--json >"$dir/summary.json" 2>"$dir/stderr" </dev/null
	echo $? >"$dir/rc"
	sleep 0.2	# a datagram or connection in flight reaches its observer
}

got() {	# CASE ATTEMPT -> what the upstream's report says it got ("" without a report)
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' \
		"$work/$1/box/report" "$2" 2>/dev/null
}
seen() {	# CASE tcp|udp|unix -> how many arrived during CASE
	local t u x
	read -r t u x <"$work/$1/before"
	case $2 in
	tcp) echo $(($(events tcp4) - t)) ;;
	udp) echo $(($(events dns4) - u)) ;;
	unix) echo $(($(cat "$work/obs/unix") - x)) ;;
	esac
}
sid() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("session", ""))' \
	"$work/$1/summary.json" 2>/dev/null; }
receipt() {	# CASE -> the confinement receipt's user, from the audit
	sqlite3 "$work/priv/$1.audit.db" \
		"select json_extract(detail, '\$.confinement.user') from audit_entries
		 where detail like '%confinement%' limit 1" 2>/dev/null
}
nothing_arrived() {	# CASE: no observer saw anything, the stand-in file is empty
	[ "$(seen "$1" tcp)" = 0 ] && [ "$(seen "$1" udp)" = 0 ] &&
		[ "$(seen "$1" unix)" = 0 ] && [ ! -s "$work/open/$1.db" ] &&
		[ ! -e /etc/airlock-hostile-probe ]
}
refused_all() {	# CASE: every attempt in the report failed
	python3 - "$work/$1/box/report" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
bad = [k for k, v in got.items() if v == "ok"]
if len(got) < 15 or bad:
    print("report: %d attempts, got: %s" % (len(got), bad), file=sys.stderr)
    sys.exit(1)
PY
}

# --- protected: under runc and under runsc -------------------------------------------
for rt in runc runsc; do
	session "$rt" "$rt" "$airlock"
	check "$rt: the session ran (exit 0)" test "$(cat "$work/$rt/rc")" = 0
	check "$rt: the hostile upstream answered the call (its report exists)" test -s "$work/$rt/box/report"
	check "$rt: every power refused (docker socket, audit log, /proc, /etc, signals, ptrace, net, io_uring, mount, userns)" \
		refused_all "$rt"
	check "$rt: no observer saw anything, the file outside its paths untouched" nothing_arrived "$rt"
	check "$rt: the real Docker socket refused it ($(got "$rt" docker_sock))" \
		test "$(got "$rt" docker_sock)" = EACCES
	check "$rt: the audit receipt names airlock-upstream ($(receipt "$rt"))" \
		test "$(receipt "$rt")" = airlock-upstream
	check "$rt: the audit chain verifies" "$airlock" audit verify "$work/priv/$rt.audit.db"
	check "$rt: no container of the session left" session_gone "$(sid "$rt")"
	check "$rt: no token in stderr or summary" \
		bash -c "! grep -qF '$token' '$work/$rt/stderr' '$work/$rt/summary.json'"
done

# --- each protection removed: refused at start, then leaks at its observer ----------
# mutant NAME STEP OBSERVER [ALSO]: NAME alone is refused ("confinement not
# enforced (STEP)") with nothing arriving; NAME with upstream_no_proof (and
# ALSO, a second layer over the same observer) reaches OBSERVER.
mutant() {
	local name=$1 step=$2 observer=$3 also=${4:+,$4} c
	c=${name#upstream_}
	session "$c-refused" runc "$mutants_exe" "$name"
	check "mutant $name: refused at start (exit $(cat "$work/$c-refused/rc"))" \
		test "$(cat "$work/$c-refused/rc")" != 0
	check "mutant $name: says why (confinement not enforced ($step))" \
		grep -qF "upstream hostile: confinement not enforced ($step)" "$work/$c-refused/summary.json"
	check "mutant $name: nothing arrived" nothing_arrived "$c-refused"
	session "$c" runc "$mutants_exe" "$name$also,upstream_no_proof"
	case $observer in
	unix|tcp) check "mutant $name without the proof: the $observer observer saw it ($(seen "$c" "$observer"))" \
			test "$(seen "$c" "$observer")" -gt 0 ;;
	file) check "mutant $name without the proof: the file outside its paths was written" \
			test -s "$work/open/$c.db" ;;
	esac
	check "mutant $name: no container of the session left" session_gone "$(sid "$c")"
}
# Root kept: the upstream keeps the engine's uid, so it also makes no unix
# socket (the engine's own would take it for the engine) unless that goes too.
mutant upstream_keep_root uid unix upstream_same_uid_unix
mutant upstream_no_landlock_net "landlock net" tcp
mutant upstream_no_landlock_fs "landlock fs" file
rm -f /etc/airlock-hostile-probe	# a mutant that ran as root may have made it

summary
