#!/usr/bin/env bash
# The operate role is not root (docs/operations.md, "Who may connect: roles";
# docs/guarantees.md): a real non-root user in the operate group, its ctl
# run with setpriv, against a root `airlock serve` with a catalog of
# installed upstreams (--upstreams-dir, a root-owned directory here).
#   (a) its own config with `sh -c id` as an upstream is refused, audited
#       with its uid and name, and nothing ran (the file the command would
#       create is absent); the same through an old client's "path" too;
#   (b) a mode-000 config is refused on its side as unreadable: the engine
#       never saw a request (no audit row, no log line of that client);
#   (c) an installed upstream named by key starts, the agent's calls reach
#       it, and its confinement receipt in the audit shows airlock-upstream's
#       uid;
#   (d) an initial.file of the operator's own is read by its ctl and sent:
#       the agent gets it (its calls carry it to the sink), and it is in no
#       log or audit row; one it cannot read is refused on its side;
#   (e) the catalog's parent made the operator's: it swaps in a retired
#       root-owned catalog beside it whose definition would write a file;
#       the start is refused naming the parent, and the file is absent;
#   (f) an installed program in a directory the operator owns: refused
#       naming the directory; the operator puts its own program in its
#       place: refused naming it, and the file that program writes is absent;
#   (g) (before (e), while the catalog is whole) an installed upstream whose
#       tree takes long to walk: 70 starts of it at once, 64 wait their
#       turn and 6 are refused busy; one in flight when serve is told to
#       stop is refused "the engine is stopping", audited, and no session
#       starts from it.
#
# usage: operate.sh AIRLOCK AGENT_BIN UPSTREAM_BIN
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3
scratch_dir
. "$here/../checks.sh"
. "$here/serve_lib.sh"
sock=$work/engine.sock
owner_pids() { printf '%s\n' "${helpers[@]}"; }

# --- the operate group and a user of it: made here when missing, removed after ----
made_groups=() made_users=()
on_teardown() {
	local x
	for x in "${made_users[@]}"; do userdel "$x" 2>/dev/null; done
	for x in "${made_groups[@]}"; do groupdel "$x" 2>/dev/null; done
}
opuser=airlock-optest
if [ -z "$(getent group airlock)" ]; then groupadd airlock && made_groups+=(airlock); fi
if ! getent passwd "$opuser" >/dev/null; then
	useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$opuser" &&
		made_users+=("$opuser") && made_groups+=("$opuser")
fi
og=$(getent group airlock | cut -d: -f3) ou=$(id -u "$opuser") ogid=$(id -g "$opuser")
# The operator, as the kernel will see it: its own uid and gid, the operate group.
as_op() { setpriv --reuid "$ou" --regid "$ogid" --groups "$og" "$@"; }
opctl() { as_op "$airlock" ctl --socket "$sock" "$@"; }

# --- the image, the catalog (root's), the operator's own directory -----------------
image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
catalog=$work/etc/upstreams.d	# the catalog; $work/etc is root's until the last part
mkdir -p "$work/op" "$catalog" "$work/etc/retired.d" "$work/home" "$work/drop"
upstream_box "$work/op"
chmod 0755 "$work/etc" "$catalog" "$work/etc/retired.d" && chmod 1777 "$work/drop"
chown "$ou:$ogid" "$work/home" && chmod 0700 "$work/home"
install_definition() {	# KEY PROGRAM: root installs the fixture's definition, its sink in op/
	cat >"$catalog/$1.json" <<JSON
{"argv": ["$2", "--sink", "$work/op/$1.sink"],
 "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$work/op"]}}
JSON
	chmod 0644 "$catalog/$1.json"
}
install_definition vault "$upstream"

session_json() {	# UPSTREAM-OBJECT: a looping session's config with that upstream
	cat <<JSON
{"profile": {"image": "$image", "cmd": ["loop"]},
 "bounds": {"session_ms": 300000, "calls": 4096},
 "upstreams": {"vault": $1},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store"}}
JSON
}
# Its own upstream may write the drop box: were it started, the file would appear.
as_op tee "$work/home/own.json" >/dev/null <<<"$(session_json "{\"argv\": [\"/bin/sh\", \"-c\", \"id > $work/drop/ran\"], \"paths\": {\"rw\": [\"$work/drop\"]}}")"
as_op tee "$work/home/installed.json" >/dev/null <<<"$(session_json '{"installed": "vault"}')"
session_json '{"installed": "vault"}' >"$work/home/secret.json"
chmod 0000 "$work/home/secret.json"

# A definition root left behind, whose program is gone: serve says so at start.
install_definition stale /nonexistent/airlock-stale
serve_start --upstreams-dir "$catalog"
check "serve's log at start: each installed upstream, the root one passing" \
	grep -qF "airlock serve: installed.vault: vault.json: root's, as what it runs" "$work/serve.err"
check "serve's log at start: the stale one failing with why" \
	grep -qxF "airlock serve: installed.stale: FAIL: /nonexistent/airlock-stale: no such file" \
	"$work/serve.err"
chmod 0711 "$work"	# the operator passes through to the socket and its home

by_op="detail like '%\"by\":\"$opuser\",\"uid\":$ou,%'"
sessions() { "$airlock" ctl --socket "$sock" sessions --json | python3 -c '
import json,sys; print(len(json.load(sys.stdin)["snapshot"]["sessions"]))'; }

opctl status >"$work/status.out" 2>&1
check "the operator's role is operate" grep -q 'role operate' "$work/status.out"

# --- (a) its own argv: refused, audited with its author, nothing ran --------------------
rc=0; opctl start "$work/home/own.json" >"$work/own.out" 2>"$work/own.err" || rc=$?
check "(a) ctl start with its own argv: exit 1, 'config refused', and what to install where" \
	bash -c '[ "$1" = 1 ] && grep -qF "start: config refused: upstreams.vault: only root gives argv, env or cwd: root installs $2/vault.json" "$3"' \
	_ "$rc" "$catalog" "$work/own.err"
check "(a) the refusal is audited: rule 'start refused: upstream not installed', by $opuser (uid $ou)" \
	audit_has "select count(*) from audit_entries where type='policy' and decision='rejected'
	 and rule='start refused: upstream not installed' and $by_op"
check "(a) serve logged the refusal with the uid" grep -q "(uid $ou $opuser): start: upstreams.vault" "$work/serve.err"
# An old client's "path" to the mode-000 config: the engine would open it with its own rights.
rc=0; as_op /usr/bin/python3 - "$sock" "$work/home/secret.json" >"$work/path.out" 2>&1 <<'PY' || rc=$?
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rwb")
f.readline()	# the hello
f.write((json.dumps({"id": 1, "op": "start", "path": sys.argv[2]}) + "\n").encode()); f.flush()
r = json.loads(f.readline()); print(r.get("error"), "|", r.get("reason"))
sys.exit(0 if r.get("ok") is False else 1)
PY
check "(a) an old client's path from the operator: refused, 'use a current airlock ctl'" \
	bash -c '[ "$1" = 0 ] && grep -qF "config refused | the engine opens no config file for a peer that is not root: use a current airlock ctl" "$2"' \
	_ "$rc" "$work/path.out"
check "(a) that refusal is audited too: 'start refused: path from a peer', by $opuser" \
	audit_has "select count(*) from audit_entries where type='policy' and decision='rejected'
	 and rule='start refused: path from a peer' and $by_op"
for _ in $(seq 50); do [ -e "$work/drop/ran" ] && break; sleep 0.1; done	# 5 s: a started one writes it in about 1
check "(a) nothing ran: the file its command would create is absent" [ ! -e "$work/drop/ran" ]
check "(a) no session was started" [ "$(sessions)" = 0 ]

# --- (b) a mode-000 config: refused on the operator's side --------------------------
rows0=$(audit_q "select count(*) from audit_entries")
rc=0; opctl start "$work/home/secret.json" >"$work/secret.out" 2>"$work/secret.err" || rc=$?
check "(b) ctl start of a mode-000 config: exit 1, 'you cannot read it'" \
	bash -c '[ "$1" = 1 ] && grep -qF "start: config $2: you cannot read it (ctl reads a config with your rights; the engine opens no file for you)" "$3"' \
	_ "$rc" "$work/home/secret.json" "$work/secret.err"
printf '{"revoke": ["store"]}\n' >"$work/home/incident.json"
chmod 0000 "$work/home/incident.json"
rc=0; opctl apply "$work/home/incident.json" >/dev/null 2>"$work/incident.err" || rc=$?
check "(b) ctl apply of a mode-000 incident file: exit 1, 'you cannot read it'" \
	bash -c '[ "$1" = 1 ] && grep -qF "apply: $2: you cannot read it (ctl reads a config with your rights" "$3"' \
	_ "$rc" "$work/home/incident.json" "$work/incident.err"
sleep 1
check "(b) the engine never saw a request: no new audit row" [ "$(audit_q "select count(*) from audit_entries")" = "$rows0" ]
check "(b) and no log line of a start or revoke for it" \
	[ "$(grep -c "(uid $ou $opuser): start" "$work/serve.err"):$(grep -c "(uid $ou $opuser): revoke" "$work/serve.err")" = 2:0 ]
check "(b) no session was started" [ "$(sessions)" = 0 ]

# --- (c) the installed upstream, by key: starts, runs confined ---------------------------
rc=0; opctl start "$work/home/installed.json" >"$work/installed.out" 2>"$work/installed.err" || rc=$?
check "(c) ctl start naming the installed upstream: exit 0, a session id" \
	bash -c '[ "$1" = 0 ] && grep -qE "^s-[0-9a-f]+$" "$2"' _ "$rc" "$work/installed.out" ||
	cat "$work/installed.err"
sid=$(cat "$work/installed.out")
for _ in $(seq 600); do [ -s "$work/op/vault.sink" ] && break; sleep 0.1; done
check "(c) the agent's calls reach the installed upstream (its sink grows)" [ -s "$work/op/vault.sink" ]
check "(c) the start is audited with its author: 'start by request', by $opuser" \
	audit_has "select count(*) from audit_entries where type='policy' and decision='applied'
	 and rule='start by request' and session_id='$sid' and $by_op"
check "(c) its confinement receipt: user airlock-upstream, uid changed" \
	audit_has "select count(*) from audit_entries where session_id='$sid' and type='dispatch'
	 and detail like '%\"uid_changed\":true%' and detail like '%\"user\":\"airlock-upstream\"%'"
upuid=$(audit_q "select json_extract(detail, '$.confinement.uid') from audit_entries where
	session_id='$sid' and type='dispatch' and detail like '%confinement%' limit 1")
check "(c) …to its session's own uid (${upuid:-none})" delegated_uid "$upuid"
check "(c) the upstream process runs as that uid" \
	bash -c 'for p in $(pgrep -f -- "--sink $1"); do [ "$(awk "/^Uid:/ { print \$2 }" /proc/$p/status)" = "$2" ] || exit 1; done; [ -n "$(pgrep -f -- "--sink $1")" ]' \
	_ "$work/op/vault.sink" "$upuid"

# --- (d) an initial payload of the operator's: ctl reads it, the agent gets it -----------
canary="airlock-op-canary-$$-$RANDOM$RANDOM"
as_op tee "$work/home/payload.json" >/dev/null <<<"{\"note\": \"$canary\"}"
as_op chmod 0600 "$work/home/payload.json"
with_initial() {	# FILE: the looping session's config with that initial.file
	session_json '{"installed": "vault"}' | python3 -c 'import json, sys
d = json.load(sys.stdin); d["initial"] = {"file": sys.argv[1], "class": "confidential"}
print(json.dumps(d))' "$1"
}
with_initial "$work/home/payload.json" | as_op tee "$work/home/with_payload.json" >/dev/null
rc=0; opctl start "$work/home/with_payload.json" >"$work/payload.out" 2>"$work/payload.err" || rc=$?
check "(d) ctl start with an initial.file of its own: exit 0, a session id" \
	bash -c '[ "$1" = 0 ] && grep -qE "^s-[0-9a-f]+$" "$2"' _ "$rc" "$work/payload.out" ||
	cat "$work/payload.err"
for _ in $(seq 600); do grep -qF "$canary" "$work/op/vault.sink" && break; sleep 0.1; done
check "(d) the agent got the payload ctl read for it: its calls carry it to the sink" \
	grep -qF "$canary" "$work/op/vault.sink"
check "(d) the payload is in no log line, audit row or ctl output" \
	bash -c '! grep -qF "$1" "$2/serve.err" "$2/payload.out" "$2/payload.err" &&
		! sqlite3 "$2/audit.db" .dump | grep -qF "$1"' _ "$canary" "$work"
# One the operator cannot read (root's, 0600): refused on its side, nothing sent.
echo '{"note": "root only"}' >"$work/root_payload.json" && chmod 0600 "$work/root_payload.json"
with_initial "$work/root_payload.json" | as_op tee "$work/home/root_payload_cfg.json" >/dev/null
rows0=$(audit_q "select count(*) from audit_entries where type='policy' and $by_op")
rc=0; opctl start "$work/home/root_payload_cfg.json" >/dev/null 2>"$work/root_payload.err" || rc=$?
check "(d) an initial.file it cannot read: exit 1, 'you cannot read it', on its side" \
	bash -c '[ "$1" = 1 ] && grep -qF "start: initial.file $2: you cannot read it (ctl reads it with your rights" "$3"' \
	_ "$rc" "$work/root_payload.json" "$work/root_payload.err"
check "(d) the engine saw no request for it: no new audit row by $opuser" \
	[ "$(audit_q "select count(*) from audit_entries where type='policy' and $by_op")" = "$rows0" ]

# --- the catalog must be root's: a group-writable definition is refused ------------------
chmod 0664 "$catalog/vault.json"
rc=0; opctl start "$work/home/installed.json" >/dev/null 2>"$work/loose.err" || rc=$?
check "a group-writable definition: refused with why" \
	bash -c '[ "$1" = 1 ] && grep -qF "installed upstream vault: $2/vault.json: group- or world-writable" "$3"' \
	_ "$rc" "$catalog" "$work/loose.err"
chmod 0644 "$catalog/vault.json"

# --- (f) what an installed upstream runs must be root's too ------------------------------
# Root installs "tool" whose program (root's) lies in a directory the operator
# owns: the operator can put its own program in its place, which writes a file
# where the upstream may write (paths.rw) were it run.
mkdir -p "$work/opbin" && cp "$upstream" "$work/opbin/server" && chmod 0755 "$work/opbin/server"
chown "$ou:$ogid" "$work/opbin" && chmod 0755 "$work/opbin"
install_definition tool "$work/opbin/server"
as_op tee "$work/home/tool.json" >/dev/null <<<"$(session_json '{"installed": "tool"}')"
sessions >"$work/sessions.before_f"
refused_q="select count(*) from audit_entries where type='policy' and decision='rejected'
 and rule='start refused' and $by_op"
refused0=$(audit_q "$refused_q")
rc=0; opctl start "$work/home/tool.json" >/dev/null 2>"$work/tooldir.err" || rc=$?
check "(f) a program in a directory the operator owns: refused, naming the directory" \
	bash -c '[ "$1" = 1 ] && grep -qF "installed upstream tool: $2: not owned by root (what it runs must be root'"'"'s" "$3"' \
	_ "$rc" "$work/opbin" "$work/tooldir.err" || cat "$work/tooldir.err"
as_op sh -c 'printf "#!/bin/sh\nid > %s\n" "$1/op/swapped" >"$2.new" && chmod 0755 "$2.new" &&
	mv "$2.new" "$2"' _ "$work" "$work/opbin/server"
check "(f) the operator put its own program in the installed one's place" \
	bash -c '[ "$(stat -c %u "$1")" = "$2" ] && grep -qF swapped "$1"' _ "$work/opbin/server" "$ou"
rc=0; opctl start "$work/home/tool.json" >/dev/null 2>"$work/toolswap.err" || rc=$?
check "(f) the operator's program in its place: refused, naming it" \
	bash -c '[ "$1" = 1 ] && grep -qF "installed upstream tool: $2: not owned by root (what it runs must be root'"'"'s" "$3"' \
	_ "$rc" "$work/opbin/server" "$work/toolswap.err" || cat "$work/toolswap.err"
for _ in $(seq 50); do [ -e "$work/op/swapped" ] && break; sleep 0.1; done	# as in (a)
check "(f) nothing ran: the operator's program wrote no file" [ ! -e "$work/op/swapped" ]
check "(f) neither start left a session" [ "$(sessions)" = "$(cat "$work/sessions.before_f")" ]
check "(f) both refusals are audited: rule 'start refused', by $opuser (uid $ou)" \
	[ "$(audit_q "$refused_q")" = "$((refused0 + 2))" ]
# The engine's host checks (the console's host view), as the operator reads them
# with ctl: one per installed upstream, run again for the asking.
rc=0; opctl host >"$work/host.out" 2>&1 || rc=$?
check "(f) ctl host, as the operator: exit 1, the installed tool failing, its program named" \
	bash -c '[ "$1" = 1 ] && grep -qxF "$2" "$3"' _ "$rc" "$(printf 'FAIL  %-20s %s' installed.tool \
	"$work/opbin/server: not owned by root (expected root's, as what it runs)")" "$work/host.out" ||
	cat "$work/host.out"
check "(f) and the installed vault passing" grep -qxF \
	"$(printf 'PASS  %-20s %s' installed.vault "vault.json: root's, as what it runs")" "$work/host.out"
rc=0; opctl host --json >"$work/host.json" 2>&1 || rc=$?
check "(f) ctl host --json: exit 1, the engine's snapshot, not passed, the two rows" \
	python3 - "$rc" "$work/host.json" "$work/opbin/server" <<'PY'
import json, sys
rc, path, prog = sys.argv[1], sys.argv[2], sys.argv[3]
h = json.load(open(path))
rows = {c["id"]: c for c in h["checks"] if c["id"].startswith("installed.")}
assert rc == "1" and h["passed"] is False and not h["running"], (rc, h["passed"])
assert rows["installed.tool"]["pass"] is False, rows
assert rows["installed.tool"]["observed"] == prog + ": not owned by root", rows
assert rows["installed.vault"]["pass"] is True, rows
PY

# --- (g) a start being read when the engine stops: refused, audited, nothing started ---
# Its program's directory holds 100,000 files: the walk every start makes takes
# about 0.2 s, off the loop. A snapshot sent after the start in one write is
# answered once the start's thread runs; the engine is told to stop then.
mkdir -p "$work/big/files" && cp /bin/true "$work/big/true" && chmod 0755 "$work/big" "$work/big/files"
python3 -c 'import os, sys
for i in range(100000): os.close(os.open("%s/f%d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY, 0o644))' \
	"$work/big/files"
printf '{"argv": ["%s"], "env": {"PATH": "/usr/bin:/bin"}}\n' "$work/big/true" >"$catalog/big.json"
chmod 0644 "$catalog/big.json"
session_json '{"installed": "big"}' >"$work/big.json"
# 70 starts in one write, each refused once walked (its tool moved to an upstream
# the config lacks): 64 wait their turn, 4 walked at once; the last 6 find no room.
python3 "$here/serve_client.py" crowd "$sock" 70 "$work/crowd.frames" "$work/big.json" >"$work/crowd.json"
cat "$work/crowd.json"
check "(g) 70 slow starts in one write: 64 wait, each walked then refused, in order; 6 refused 'engine busy'" \
	[ "$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print((d["refused"], d["busy"], d["other"], d["refused_ids"] == list(range(1, 65))))' "$work/crowd.json")" = \
	"(64, 6, 0, True)" ]
stopped_q="select count(*) from audit_entries where type='policy' and rule='start refused'"
started_q="select count(*) from audit_entries where type='policy' and rule='start by request'"
stopped0=$(audit_q "$stopped_q") started0=$(audit_q "$started_q")
rc=0; python3 - "$sock" "$work/big.json" "$engine" >"$work/stopping.json" 2>&1 <<'PY' || rc=$?
import json, os, signal, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1]); f = s.makefile("rwb")
f.readline()	# the hello
start = {"id": 1, "op": "start", "config": json.load(open(sys.argv[2]))}
f.write((json.dumps(start) + "\n" + '{"id": 2, "op": "snapshot"}\n').encode()); f.flush()
while json.loads(f.readline()).get("id") != 2:
    pass
os.kill(int(sys.argv[3]), signal.SIGTERM)	# the start's walk is under way
while True:
    r = json.loads(f.readline())
    if r.get("id") == 1:
        print(json.dumps({"error": r.get("error"), "reason": r.get("reason")}))
        break
PY
wait "$engine"; rc_serve=$?
cat "$work/stopping.json"
check "(g) a start read while serve stops: refused 'the engine is stopping'; serve exits 0" \
	bash -c '[ "$1" = 0 ] && [ "$2" = 0 ] && grep -qxF "{\"error\": \"config refused\", \"reason\": \"the engine is stopping\"}" "$3"' \
	_ "$rc" "$rc_serve" "$work/stopping.json"
check "(g) …audited as refused" [ "$(audit_q "$stopped_q")" = "$((stopped0 + 1))" ]
check "(g) …and no session started from it: none audited, none logged" \
	bash -c '[ "$1" = "$2" ] && ! sed -n "/SIGTERM: stopping/,\$p" "$3" | grep -q "started by client"' \
	_ "$(audit_q "$started_q")" "$started0" "$work/serve.err"
rm -rf "$work/big/files" "$catalog/big.json"
serve_start --upstreams-dir "$catalog"

# --- (e) each directory above the catalog must be root's too --------------------------
# A retired definition root kept beside the catalog, as root's as the catalog:
# were it started, the file would appear. The parent is then the operator's.
cat >"$work/etc/retired.d/vault.json" <<JSON
{"argv": ["/bin/sh", "-c", "id > $work/drop/retired"], "paths": {"rw": ["$work/drop"]}}
JSON
chmod 0644 "$work/etc/retired.d/vault.json"
chown "$ou:$ogid" "$work/etc"
as_op mv "$catalog" "$work/etc/current.d" && as_op mv "$work/etc/retired.d" "$catalog"
check "(e) the operator swapped the retired catalog in (the parent is its own)" \
	grep -qF "$work/drop/retired" "$catalog/vault.json"
rc=0; opctl start "$work/home/installed.json" >/dev/null 2>"$work/parent.err" || rc=$?
check "(e) a catalog under the operator's directory: refused, naming the parent" \
	bash -c '[ "$1" = 1 ] && grep -qF "installed upstream vault: directory $2: $3: not owned by root" "$4"' \
	_ "$rc" "$catalog" "$work/etc" "$work/parent.err"
for _ in $(seq 50); do [ -e "$work/drop/retired" ] && break; sleep 0.1; done	# as in (a)
check "(e) nothing ran: the retired definition's file is absent" [ ! -e "$work/drop/retired" ]

# --- ctl naming no socket: the operator's own engine's, else the system engine's ---
mkdir -p "$work/xdg/airlock" && ln "$sock" "$work/xdg/airlock/engine.sock"	# the same socket
# (No env between setpriv and airlock: setpriv's own exec reaches a build
# in a 0700 directory, as CI's is; a program it runs after would not.)
rc=0; XDG_RUNTIME_DIR="$work/xdg" as_op "$airlock" ctl status >"$work/dial.out" 2>&1 || rc=$?
check "ctl with no --socket: the engine under the operator's XDG_RUNTIME_DIR answers, role operate" \
	bash -c '[ "$1" = 0 ] && grep -q "role operate" "$2"' _ "$rc" "$work/dial.out"
# Without one of its own it dials /run/airlock/engine.sock; a namespace of
# its own with an empty /run/airlock, so an engine this machine runs is not it.
rc=0; unshare -m sh -c '[ ! -d /run/airlock ] || mount -t tmpfs tmpfs /run/airlock || exit 99
	exec "$@"' _ env -u XDG_RUNTIME_DIR setpriv --reuid "$ou" --regid "$ogid" --groups "$og" \
	"$airlock" ctl status >"$work/dial_sys.out" 2>&1 || rc=$?
check "ctl with no --socket and no XDG_RUNTIME_DIR: the system engine's socket dialled" \
	bash -c '[ "$1" = 3 ] && grep -qxF "airlock ctl: /run/airlock/engine.sock: does not exist" "$2"' \
	_ "$rc" "$work/dial_sys.out"

kill -TERM "$engine"
rc=0; wait "$engine" || rc=$?
check "SIGTERM: serve exits 0, nothing left" [ "$rc" = 0 ]
summary
