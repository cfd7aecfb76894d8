#!/usr/bin/env bash
# The crash contract (docs/guarantees.md) with the real binary: `airlock run`
# is SIGKILLed while a call is dispatched and its upstream has not answered
# (the fixture upstream in stall_second mode: the first call is answered,
# the second never is). Afterwards:
#   - `airlock audit verify` (text and --json) says the chain is intact and
#     lists exactly one unknown outcome: that second call, under its session;
#   - the first call's terminal entry, which rode on the second dispatch's
#     commit (or the timer), is in the log;
#   - the upstream saw both calls (its sink), nothing reached it unaudited
#     (two dispatch entries), and it is gone, and so is the child it started
#     at its start, which ignores SIGTERM (the upstream dies with the
#     engine's thread; the watchdog kills its group);
#   - the watchdog stopped the container; `airlock reap` removes it.
# The crash's log is also verified from a read-only place, as it was left
# and once closed. Then the same engine under a file-size limit that its
# audit log runs
# into: a refused write, not a dead engine (below). And an engine killed
# just after an orderly session's lease ended leaves no upstream behind.
#
# usage: crash.sh AIRLOCK AGENT_BIN UPSTREAM_BIN AIRLOCK_MUTANTS
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

airlock=$1 agent=$2 upstream=$3 mutants=$4
scratch_dir

. "$here/../checks.sh"

image=$(scratch_image "$work/image" "$agent") || { not_ok "agent image build"; summary; exit 1; }
printf '{"note":"crash"}\n' >"$work/payload.json"

upstream_box "$work"
cat >"$work/config.json" <<JSON
{
  "profile": {"image": "$image", "cmd": ["loop"], "tmpfs": {"/tmp": 1048576}},
  "bounds": {"session_ms": 60000},
  "upstreams": {
    "vault": {"argv": ["$upstream", "--sink", "$work/vault.sink", "--mode", "stall_second",
                       "--child", "yes"],
              "env": {"PATH": "/usr/bin:/bin"}, "timeout_ms": 60000, "paths": {"rw": ["$work"]}}
  },
  "tools": {
    "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
              "sink_ceiling": "confidential", "response_ceiling": "confidential"}
  },
  "aliases": {"save": "store"},
  "initial": {"file": "$work/payload.json", "class": "confidential"}
}
JSON

sink_lines() { [ -f "$work/vault.sink" ] && wc -l <"$work/vault.sink" || echo 0; }
wait_for() {	# TENTHS COMMAND...: poll until it holds
	local n=$1; shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
two_calls() { [ "$(sink_lines)" -ge 2 ]; }
session_id() { sqlite3 "$work/audit.db" "select session_id from audit_entries where type='session_start' limit 1"; }
count() { sqlite3 "$work/audit.db" "select count(*) from audit_entries where $1"; }

"$airlock" run --config "$work/config.json" --audit "$work/audit.db" --json \
	>"$work/summary.json" 2>"$work/stderr" </dev/null &
engine_pid=$!
helpers+=("$engine_pid")

check "the second call reached the upstream (stalled there)" wait_for 300 two_calls
kill -9 "$engine_pid"
wait "$engine_pid" 2>/dev/null
# The files as the crash left them, before anything opens the log again
# (for the read-only reads below): with the WAL's index, and without it.
mkdir "$work/crashed" "$work/nowalindex"
cp "$work/audit.db" "$work/audit.db-wal" "$work/audit.db-shm" "$work/crashed/"
cp "$work/audit.db" "$work/audit.db-wal" "$work/nowalindex/"
sid=$(session_id)
check "the session is in the log" test -n "$sid"
check "the engine died before ending the session (no session_end)" \
	test "$(count "type='session_end'")" = 0
check "both calls were dispatched before the upstream saw them" \
	test "$(count "type='dispatch'")" = 2
check "the first call's terminal entry is durable (allowed)" \
	test "$(count "type='call' and decision='allowed'")" = 1
check "the second call has no terminal entry" test "$(count "type='call'")" = 1

"$airlock" audit verify "$work/audit.db" >"$work/verify.txt"
rc=$?
"$airlock" audit verify "$work/audit.db" --json >"$work/verify.json"
second=$(sqlite3 "$work/audit.db" "select call_id from audit_entries where type='dispatch' order by seq desc limit 1")
check "verify: the chain is intact (exit 0)" test "$rc" = 0
check "verify: the text names the unknown outcome, its session and call" \
	grep -qF "unknown outcome: session $sid call $second (tool store" "$work/verify.txt"
check "verify: the text counts exactly one" \
	grep -qF ": 1 call dispatched without a terminal entry (unknown outcome)" "$work/verify.txt"
check "verify --json: exactly that call, under its session" python3 - "$work/verify.json" "$sid" "$second" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
u = v["unknown_outcomes"]
sys.exit(0 if v["ok"] and len(u) == 1 and u[0]["session"] == sys.argv[2]
         and [c["call_id"] for c in u[0]["calls"]] == [sys.argv[3]]
         and u[0]["calls"][0]["tool"] == "store"
         and v["decisions"]["dispatch"] == 2 and v["decisions"]["allowed"] == 1
         and v["unrecognised"] == 0 else 1)
PY
check "verify: the text names the session that never ended" \
	grep -qF "never ended: session $sid (session_start entry " "$work/verify.txt"
check "verify: and counts it (still running, or its engine died)" \
	grep -qF ": 1 session started without a session_end (still running, or its engine died)" \
	"$work/verify.txt"
check "verify --json: unended_sessions is exactly that session" python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["unended_sessions"]
sys.exit(0 if [x["session"] for x in u] == [sys.argv[2]] and u[0]["start_seq"] >= 1 else 1)' \
	"$work/verify.json" "$sid"

# The same log read from a read-only place (an archive, evidence media):
# the same verdict. Copied there with its WAL but not the WAL's index, it
# cannot be read, and verify says so instead of judging the file alone.
# ro DIR CMD...: CMD with DIR read-only, in a mount namespace of its own.
ro() { unshare --mount --propagation private sh -c \
	'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"' "$@"; }
check "the crash left the log's WAL and its index (the fixtures here)" \
	test -s "$work/crashed/audit.db-wal" -a -s "$work/crashed/audit.db-shm"
ro "$work" "$airlock" audit verify "$work/audit.db" >"$work/verify-ro.txt"
rc=$?
check "read-only, the log closed since (one file): the same verdict and text (exit $rc)" \
	bash -c '[ "$1" = 0 ] && [ ! -e "$2/audit.db-wal" ] && cmp -s "$2/verify.txt" "$2/verify-ro.txt"' \
	_ "$rc" "$work"
ro "$work/crashed" "$airlock" audit verify "$work/crashed/audit.db" --json >"$work/verify-ro.json"
rc=$?
check "read-only, as the crash left it (WAL and index): the same verdict (exit $rc)" \
	bash -c '[ "$1" = 0 ] && cmp -s "$2/verify.json" "$2/verify-ro.json"' _ "$rc" "$work"
ro "$work/nowalindex" "$airlock" audit verify "$work/nowalindex/audit.db" \
	>"$work/verify-nowal.txt" 2>&1
rc=$?
check "read-only, WAL without its index: exit 3, and says why (not 'chain ok')" \
	bash -c '[ "$1" = 3 ] && grep -qF "its WAL file cannot be read where it is (read-only)" "$2" &&
		 ! grep -qF "chain ok" "$2"' _ "$rc" "$work/verify-nowal.txt"

# A copy where its reader may not write (uid 65534, a 0555 directory, no
# mount): SQLite answers READONLY there, not CANTOPEN; it printed an empty
# reason and exit 3 before. The same verdict as the log's.
mkdir "$work/ro555" "$work/ro555-bin" && cp "$work/audit.db" "$work/ro555/" &&
	chmod 0644 "$work/ro555/audit.db" && chmod 0555 "$work/ro555" && chmod o+x "$work" &&
	install -m 0755 "$airlock" "$work/ro555-bin/airlock"	# the clone may be 0700
setpriv --reuid 65534 --regid 65534 --clear-groups "$work/ro555-bin/airlock" audit verify "$work/ro555/audit.db" \
	>"$work/verify-555.txt" 2>&1
rc=$?
check "a copy in a 0555 directory, read by uid 65534: the same verdict and text (exit $rc)" \
	bash -c '[ "$1" = 0 ] && [ ! -e "$2/ro555/audit.db-shm" ] &&
		 cmp -s <(sed "s|$2/audit.db|LOG|" "$2/verify.txt") <(sed "s|$2/ro555/audit.db|LOG|" "$2/verify-555.txt")' \
	_ "$rc" "$work"

# An anchor: the head verify printed, recorded outside the log. The log's
# tail cut off afterwards verifies from the file alone (the chain cannot
# tell), and is refused against the anchor; an anchor further back holds.
head=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["head"]; print("%d:%s" % (h["seq"], h["hash"]))' \
	"$work/verify.json")
check "verify prints the same head in its text ($head)" grep -qxF "audit $work/audit.db: head $head" "$work/verify.txt"
"$airlock" audit verify "$work/audit.db" --anchor "$head" >"$work/anchor-ok.txt"
check "verify --anchor of the head: exit 0, the anchor matches" \
	bash -c '[ "$1" = 0 ] && grep -qF ": anchor ${2%%:*} matches" "$3"' _ "$?" "$head" "$work/anchor-ok.txt"
cp "$work/audit.db" "$work/cut.db"
back=$(sqlite3 "$work/cut.db" "select seq || ':' || entry_hash from audit_entries where seq = 2")
# A careful hand puts the trigger back as it was (one left out is itself
# reported: the writer's triggers are part of what verify judges).
sqlite3 "$work/cut.db" "drop trigger audit_entries_no_delete;
	delete from audit_entries where seq > (select max(seq) - 2 from audit_entries)"
"$airlock" audit verify "$work/cut.db" >"$work/cut-bare.txt"
rc=$?
check "a cut tail, its trigger left out: exit 1, altered by hand (exit $rc)" \
	bash -c '[ "$1" = 1 ] && grep -qF "altered by hand: its triggers or views are not the writer'"'"'s" "$2"' \
	_ "$rc" "$work/cut-bare.txt"
sqlite3 "$work/cut.db" "CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END"
"$airlock" audit verify "$work/cut.db" >/dev/null
check "a cut tail, its trigger put back: the file alone still verifies (the documented limit)" test "$?" = 0
"$airlock" audit verify "$work/cut.db" --anchor "$head" --json >"$work/cut.json"
rc=$?
check "a cut tail, against the anchor: exit 1, the anchor's entry is missing (exit $rc)" python3 - "$rc" "$head" "$work/cut.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[3]))
seq = int(sys.argv[2].split(":")[0])
sys.exit(0 if sys.argv[1] == "1" and not v["ok"] and v["first_bad_seq"] == seq
         and v["reason"].startswith("the anchor's entry is missing")
         and v["anchor"] == {"seq": seq, "ok": False} else 1)
PY
"$airlock" audit verify "$work/cut.db" --anchor "$back" >/dev/null
check "a cut tail, against an anchor before the cut: exit 0" test "$?" = 0

# [-]: the pattern must not match a command line that merely quotes it.
upstream_gone() { [ -s "$work/vault.sink" ] && ! pgrep -f "[-]-sink $work/vault.sink" >/dev/null; }
check "the upstream and its child exited once the engine was gone" wait_for 100 upstream_gone
check "the watchdog stopped the container" wait_for 150 session_stopped "$sid"
"$airlock" reap >/dev/null 2>&1
check "reap removed it" wait_for 100 session_gone "$sid"

# ---- a file-size limit: a refused write, not a dead engine ----
# Past `ulimit -f` a write raises SIGXFSZ, whose default kills the process;
# airlock ignores it, so the audit log's write fails (EFBIG) and the
# session ends audit_failed in order: its container removed, exit 1, and
# the upstream saw no call the log does not hold as dispatched.
python3 - "$work" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/config.json"))
c["bounds"]["calls"] = 4096		# the log fills up first
argv = c["upstreams"]["vault"]["argv"]
argv[argv.index("stall_second")] = "echo"
argv[argv.index(sys.argv[1] + "/vault.sink")] = sys.argv[1] + "/fsize.sink"
json.dump(c, open(sys.argv[1] + "/fsize.json", "w"))
PY
(ulimit -f 160 && exec "$airlock" run --config "$work/fsize.json" --audit "$work/fsize.db" --json \
	>"$work/fsize.summary" 2>"$work/fsize.stderr" </dev/null)
rc=$?
check "file-size limit: the engine ended the session itself (exit 1, not a signal: $rc)" test "$rc" = 1
check "file-size limit: the summary says audit_failed, with refused writes" \
	python3 - "$work/fsize.summary" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["ended"] == "audit_failed" and s["audit_failures"] >= 1 and s["calls"] >= 1
         and not s["container_left"] else 1)
PY
fsid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$work/fsize.summary" 2>/dev/null)
check "file-size limit: its container is gone, with no reap" session_gone "$fsid"
dispatched=$(sqlite3 "$work/fsize.db" "select count(*) from audit_entries where type='dispatch'" 2>/dev/null || echo 0)
fsink=$([ -f "$work/fsize.sink" ] && wc -l <"$work/fsize.sink" || echo 0)
check "file-size limit: every call the upstream saw was dispatched first ($fsink <= $dispatched)" \
	test "$fsink" -ge 1 -a "$fsink" -le "$dispatched"

# ---- the log deleted under the running engine: refused, never written into the void ----
# A log unlinked while open takes every later entry with it when it is
# closed: the engine must not count such a commit as durable. The next
# dispatch fails, the session ends audit_failed in order, and at most the
# call already dispatched (durable in the log while it had its name)
# reaches the upstream after the deletion.
python3 - "$work" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/fsize.json"))
argv = c["upstreams"]["vault"]["argv"]
argv[argv.index(sys.argv[1] + "/fsize.sink")] = sys.argv[1] + "/gone.sink"
json.dump(c, open(sys.argv[1] + "/gone.json", "w"))
PY
gone_lines() { [ -f "$work/gone.sink" ] && wc -l <"$work/gone.sink" || echo 0; }
some_calls() { [ "$(gone_lines)" -ge 3 ]; }
"$airlock" run --config "$work/gone.json" --audit "$work/gone.db" --json \
	>"$work/gone.summary" 2>"$work/gone.stderr" </dev/null &
gone_pid=$!
helpers+=("$gone_pid")
check "deleted log: the session's calls reach the upstream" wait_for 300 some_calls
rm -f "$work/gone.db"
after=$(gone_lines)
wait "$gone_pid"
rc=$?
end=$(gone_lines)
check "deleted log: the engine ends the session itself (exit 1: $rc)" test "$rc" = 1
check "deleted log: the summary says audit_failed, with refused writes, and no head" \
	python3 - "$work/gone.summary" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["ended"] == "audit_failed" and s["audit_failures"] >= 1
         and s["audit_head"] is None and not s["container_left"] else 1)
PY
check "deleted log: stderr says the head cannot be read" grep -qF "the audit log's head cannot be read" "$work/gone.stderr"
check "deleted log: at most the call in flight reached the upstream after it ($end <= $after + 1)" \
	test "$end" -le $((after + 1))
gsid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$work/gone.summary" 2>/dev/null)
check "deleted log: its container is gone, with no reap" session_gone "$gsid"

# ---- out of file descriptors: each step that cannot get one fails closed ----
# Under ever larger `ulimit -n` the session gets further (preflight, create,
# the watchdog, the upstream) and fails at a different step each time. Every
# run must end the session itself (exit 1, never a signal), say why in its
# summary, and leave no container; where the step is airlock's own, the
# reason names the errno.
emfile=0
for n in 8 10 12 14 16 18 20 22 24; do
	# Only stdin, stdout and stderr: an inherited descriptor would count against the limit.
	(for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
	 ulimit -n "$n" && exec "$airlock" run --config "$work/gone.json" --audit "$work/fd-$n.db" --json \
		>"$work/fd-$n.summary" 2>/dev/null </dev/null)
	rc=$?
	fsid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$work/fd-$n.summary" 2>/dev/null)
	reason=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reason"] or "")' "$work/fd-$n.summary" 2>/dev/null)
	check "ulimit -n $n: exit 1 with a reason ($rc: $reason)" test "$rc" = 1 -a -n "$reason"
	check "ulimit -n $n: no container left, with no reap" session_gone "$fsid"
	case $reason in *"Too many open files"*) emfile=$((emfile + 1)) ;; esac
done
check "out of descriptors: some reasons name the errno ($emfile of 9)" test "$emfile" -ge 1

# ---- killed just after an orderly session's lease ended ----
# The lease's end ("d": the container is gone) lets the watchdog go, so it
# comes after the upstreams' stop: an engine killed right then (mutant
# session_dies_after_lease) leaves neither the upstream nor the child it
# started, which ignores SIGTERM. With the order before (mutant
# session_lease_first: "d" while the upstreams ran) that child lives on.
end_killed() {	# NAME MUTANTS: one call, an orderly end, the engine SIGKILLed after "d"
	sed -e 's|"loop"|"echo_initial"|' -e 's|"stall_second"|"echo"|' \
		-e "s|vault.sink|$1.sink|" "$work/config.json" >"$work/$1.json"
	AIRLOCK_MUTANT=$2 "$mutants" run --config "$work/$1.json" --audit "$work/$1.db" --json \
		>"$work/$1.out" 2>"$work/$1.err" </dev/null
	echo $? >"$work/$1.rc"
}
sink_upstreams() { pgrep -f "[-]-sink $work/$1.sink" | wc -l; }
end_killed endkill session_dies_after_lease
check "an engine killed after its lease ended (exit $(cat "$work/endkill.rc")): its call reached the upstream" \
	bash -c '[ "$1" = 137 ] && [ -s "$2" ]' _ "$(cat "$work/endkill.rc")" "$work/endkill.sink"
endkill_gone() { [ "$(sink_upstreams endkill)" = 0 ]; }
check "…and neither the upstream nor its child runs" wait_for 50 endkill_gone
end_killed leasefirst session_dies_after_lease,session_lease_first
sleep 2	# the upstream's parent-death signal has come and gone
left=$(sink_upstreams leasefirst)
check "mutant session_lease_first (exit $(cat "$work/leasefirst.rc")): the upstream's child outlives that engine ($left left)" \
	bash -c '[ "$1" = 137 ] && [ -s "$2" ] && [ "$3" = 1 ]' _ "$(cat "$work/leasefirst.rc")" \
	"$work/leasefirst.sink" "$left"
pkill -KILL -f "[-]-sink $work/leasefirst.sink"

# ---- what stands is never lost to a full log ----
# serve's log on a 3 MiB tmpfs, filled: a freeze still takes effect, but
# the standing entry is refused, so ctl says it is not saved (exit 1; the
# old engine said exit 0 and a restart dropped the freeze). Space freed,
# the engine writes it again by itself; SIGKILLed then, the next engine on
# the log starts frozen.
mnt=$work/mnt sock=$work/durable.sock
mkdir -p "$mnt" && mount -t tmpfs -o size=3m tmpfs "$mnt" ||
	{ not_ok "a tmpfs for the log"; summary; exit 1; }
on_teardown() { umount "$mnt" 2>/dev/null || umount -l "$mnt"; }
durable_serve() {	# LOG [DB]
	"$airlock" serve --socket "$sock" --audit "${2:-$mnt/audit.db}" 2>"$work/$1" </dev/null &
	engine=$!
	helpers+=("$engine")
	serve_ready "$work/$1" "$engine"
}
check "serve on a log in a 3 MiB tmpfs" durable_serve durable1.err
dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
rc=0
"$airlock" ctl --socket "$sock" freeze >"$work/dfreeze.out" 2>"$work/dfreeze.err" || rc=$?
check "the log full: ctl freeze exits 1, saying the standing entry was not saved" \
	bash -c '[ "$1" = 1 ] && grep -qF "freeze: not saved: the audit log refused the entry of what stands" "$2"' \
	_ "$rc" "$work/dfreeze.err"
check "…serve's log says so in words (it printed an empty 'audit_refused' before)" \
	grep -qE "^airlock serve: audit log refused [1-9][0-9]* writes? \(the first; all are counted: airlock_audit_failures_total\)$" \
	"$work/durable1.err"
check "…and the freeze took effect all the same" \
	bash -c '"$1" ctl --socket "$2" status | grep -q "^frozen   yes"' _ "$airlock" "$sock"
rm -f "$mnt/fill"
standing_frozen() {	# within 10 s: the log holds a standing entry that says frozen
	local i
	for i in $(seq 100); do
		sqlite3 "file:$mnt/audit.db?mode=ro" "select 1 from audit_entries where session_id='engine'
		 and type='policy' and rule like 'standing:%frozen'" 2>/dev/null | grep -q 1 && return 0
		sleep 0.1
	done
	return 1
}
check "space freed: the engine writes what stands again by itself (standing: frozen)" standing_frozen
kill -KILL "$engine"
wait "$engine" 2>/dev/null
rm -f "$sock"
check "a new serve on the log" durable_serve durable2.err
check "…starts frozen: the freeze outlived the full log and the SIGKILL" \
	bash -c '"$1" ctl --socket "$2" status | grep -q "^frozen   yes"' _ "$airlock" "$sock"
kill -TERM "$engine"
wait "$engine" 2>/dev/null

# ---- a session's end is never lost to a full log ----
# serve on that tmpfs again, a session calling; the log filled: its calls
# are refused, it ends audit_failed, and its end entry, refused too, is
# kept. Space freed, the engine writes it by itself; SIGKILLed then, the
# next engine on the log finds the session ended, not lost. The mutant
# that drops the refused end (session_end_dropped: the engine before)
# writes none, and the next engine calls the session engine_lost.
printf '{"note":"full"}\n' >"$work/payload.in"
loop_config fulllog
full_ended() { grep -q "session $sid ended audit_failed" "$work/full_$kind.err"; }
log_q() { sqlite3 "file:$mnt/$kind.db?mode=ro" "$1" 2>/dev/null; }
end_in_log() { [ "$(log_q "select count(*) from audit_entries where session_id = '$sid'
	and type = 'session_end' and rule = 'audit_failed'")" = 1 ]; }
lost_in_log() { [ "$(log_q "select count(*) from audit_entries where session_id = '$sid'
	and rule = 'engine_lost'")" -gt 0 ] 2>/dev/null; }
end_kept() {	# KIND BINARY [MUTANT]: to the next engine's start; sets sid
	kind=$1
	rm -f "$sock" "$work/fulllog/vault.sink"
	AIRLOCK_MUTANT=${3:-} "$2" serve --socket "$sock" --audit "$mnt/$kind.db" \
		2>"$work/full_$kind.err" </dev/null &
	engine=$!
	helpers+=("$engine")
	check "$kind: serve on a log in the tmpfs" serve_ready "$work/full_$kind.err" "$engine"
	sid=$("$airlock" ctl --socket "$sock" start "$work/fulllog/config.json" 2>"$work/start_$kind.err")
	check "$kind: a session starts (${sid:-none})" [ -n "$sid" ]
	check "$kind: …and calls" wait_for 300 test -s "$work/fulllog/vault.sink"
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	check "$kind: the log full, the session ends audit_failed" wait_for 300 full_ended
	rm -f "$mnt/fill"
}
# The next engine on the log ends, at its start, every session it finds
# unended whose engine is gone (engine_lost): done once it listens.
after_kill() {	# LOG: SIGKILL, then the next serve on the same log
	kill -KILL "$engine"
	wait "$engine" 2>/dev/null
	rm -f "$sock"
	check "$kind: the next serve on the log" durable_serve "$1" "$mnt/$kind.db"
}
not_lost() {	# its start in the log, and no engine_lost
	[ "$(log_q "select count(*) from audit_entries where session_id = '$sid'
		and type = 'session_start'")" = 1 ] && ! lost_in_log
}
end_kept kept "$airlock"
check "kept: space freed, the engine writes the session's end by itself (audit_failed)" \
	wait_for 100 end_in_log
after_kill full_kept2.err
check "…which does not call the session lost" not_lost
kill -TERM "$engine"
wait "$engine" 2>/dev/null

end_kept dropped "$mutants" session_end_dropped
sleep 3
check "dropped (mutant): 3 s after space is back, no end in the log" bash -c '[ "$1" = 0 ]' _ \
	"$(log_q "select count(*) from audit_entries where session_id = '$sid' and type = 'session_end'")"
after_kill full_dropped2.err
check "…and the next serve calls the session lost (engine_lost)" lost_in_log
kill -TERM "$engine"
wait "$engine" 2>/dev/null

summary
