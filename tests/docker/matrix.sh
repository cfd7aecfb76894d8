#!/usr/bin/env bash
# The confinement matrix: every attack of tests/fixtures/attacks.c in a real
# session (`airlock run`, real upstream recorders, real daemon), under runc
# and under runsc, judged only by observers outside the agent:
#   net      TCP on 127.0.0.1 and ::1, UDP DNS on both (never answered), an
#            abstract unix socket in the host's network namespace
#   sink     the permitted and the denied upstream's call recorders
#   archive  the stopped container's whole filesystem (archive API)
#   logs     the container's logs; state: OOMKilled and exit code
#   procs    host processes (an orphaned grandchild must not survive)
#   shm      the host's view of the container's /dev/shm
# Then the mutation proofs: each Docker-level protection removed alone
# (engine/admission/weaken.h, in airlock-mutants only) is first refused by admission,
# then, with admission bypassed, leaks at its observer; the raised sink
# ceiling delivers to the denied tool's recorder. The permitted tool works
# in every run that got past admission.
#
# The sessions run airlock-mutants with AIRLOCK_MUTANT=keep_stopped (cleanup
# stops the container but leaves it for the archive, log and state
# observers; this script removes it): that switch changes no protection.
#
# Writes one JSON line per judged case to EVIDENCE (names, booleans and
# counters only, plus kernel, Docker and runtime versions first) and ends
# with "N passed, N failed".
#
# usage: matrix.sh AIRLOCK_MUTANTS AGENT_BIN UPSTREAM_BIN EVIDENCE
# MATRIX_CASES=REGEX runs only the cases whose name matches (for debugging;
# the suite as registered runs them all).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
require_daemon

mutants=$1 agent=$2 upstream=$3 evidence=$4
KEEP=${KEEP:-${MATRIX_KEEP:-}}
scratch_dir
owner_pids() { cat "$work/engines" 2>/dev/null; }	# every session's engine

. "$here/../checks.sh"

# --- environment ---------------------------------------------------------------
info=$(curl -fsS --max-time 10 --unix-socket "$sock" http://localhost/v1.41/info)
version=$(curl -fsS --max-time 10 --unix-socket "$sock" http://localhost/v1.41/version)
runtimes=(runc)
if python3 -c 'import json,sys; sys.exit(0 if "runsc" in json.loads(sys.argv[1]).get("Runtimes", {}) else 1)' "$info"; then
	runtimes+=(runsc)
elif [ -n "${CI:-}" ]; then
	not_ok "CI is set but the daemon has no runsc runtime (scripts/setup registers it)"
else
	echo "#### SKIPPED: runsc is not a runtime of this daemon; the matrix runs under runc only"
fi
core_pattern=$(cat /proc/sys/kernel/core_pattern)
mkdir -p "$(dirname "$evidence")"
python3 - "$info" "$version" "$core_pattern" "${runtimes[*]}" >"$evidence" <<'PY'
import json, subprocess, sys
info, ver = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def first_line(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.splitlines()[0]
    except Exception:
        return None
print(json.dumps({"kind": "environment", "kernel": info.get("KernelVersion"),
                  "docker": ver.get("Version"), "api": ver.get("ApiVersion"),
                  "cgroup": info.get("CgroupVersion"),
                  "runc": first_line(["runc", "--version"]),
                  "runsc": first_line(["runsc", "--version"]),
                  "runsc_args": info.get("Runtimes", {}).get("runsc", {}).get("runtimeArgs"),
                  "core_pattern_is_pipe": sys.argv[3].lstrip().startswith("|"),
                  "runtimes": sys.argv[4].split()}))
PY

# --- the agent image: /work belongs to the agent's uid (only the read-only
# root keeps it from being written) -------------------------------------------
mkdir -p "$work/image/work"
image=$(scratch_image "$work/image" "$agent" 'COPY --chown=10001:10001 work /work') ||
	{ not_ok "agent image build"; summary; exit 1; }

token="MXCANARY$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
mkdir -p "$work/obs"
python3 "$here/observers.py" "$work/obs" "$token" &
helpers+=($!)
for _ in $(seq 100); do [ -s "$work/obs/port" ] && break; sleep 0.05; done
port=$(cat "$work/obs/port" 2>/dev/null)
abstract=$(cat "$work/obs/abstract" 2>/dev/null)
if [ -z "$port" ] || [ -z "$abstract" ]; then
	echo "not ok: observers did not start"; echo "0 passed, 1 failed"; exit 1
fi

# --- one session -------------------------------------------------------------------
n=0
# session RT CASE MUTANTS BOARD_CEILING SESSION_MS CMD...: runs it, observes, sets dir
session() {
	local rt=$1 name=$2 muts=$3 ceiling=$4 ms=$5; shift 5
	local argv cid sid
	n=$((n + 1))
	dir=$work/$rt-$n-$name
	mkdir -p "$dir"
	canary="$token-$n"
	mark="mark-$$-$n"
	printf '{"canary":"%s"}\n' "$canary" >"$dir/payload.json"
	argv=$(printf '"%s",' "${@//MARK/$mark}"); argv=${argv%,}
	upstream_box "$dir"
	cat >"$dir/config.json" <<JSON
{"profile": {"image": "$image", "runtime": "$rt", "cmd": [$argv]},
 "bounds": {"session_ms": $ms},
 "upstreams": {
   "vault": {"argv": ["$upstream", "--sink", "$dir/vault.sink"], "timeout_ms": 5000,
             "paths": {"rw": ["$dir"]}},
   "board": {"argv": ["$upstream", "--sink", "$dir/board.sink"], "paths": {"rw": ["$dir"]}}},
 "tools": {
   "store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
             "sink_ceiling": "confidential", "response_ceiling": "confidential"},
   "post": {"upstream": "board", "remote": "publish", "data_class": "public",
            "sink_ceiling": "$ceiling", "response_ceiling": "public"}},
 "aliases": {"save": "store", "publish": "post"},
 "initial": {"file": "$dir/payload.json", "class": "confidential"}}
JSON
	cp "$work/obs/counts.json" "$dir/counts.before"
	AIRLOCK_MUTANT="keep_stopped${muts:+,$muts}${POOLED:+,pooled_run}" "$mutants" run \
		--config "$dir/config.json" --audit "$dir/audit.db" --json \
		>"$dir/summary.json" 2>"$dir/stderr" </dev/null &
	engine=$!
	echo "$engine" >>"$work/engines"
	[ -n "${SHM_WATCH:-}" ] && shm_watch "$dir" "$engine"
	wait "$engine"
	sleep 0.2	# a datagram or connection in flight reaches its observer
	cp "$work/obs/counts.json" "$dir/counts.after"
	cid=$("$DOCKER" ps -aq --no-trunc --filter "label=io.airlock.owner-pid=$engine" | head -n 1)
	python3 "$here/matrix_observe.py" "$sock" "$dir" "$canary" "$mark" \
		"$dir/counts.before" "$dir/counts.after" $cid
	[ -n "$cid" ] && "$DOCKER" rm -f "$cid" >/dev/null 2>&1
	procs_after_rm "$dir" "$mark"
	if [ -n "${CORE_WATCH:-}" ]; then host_cores "$dir"; fi
	return 0
}

# A file core pattern names a place on the host too when it is absolute:
# count core files there newer than this case (a relative pattern lands in
# the crashing process's cwd, inside the container: the archive sees it).
host_cores() {
	local new=0 where
	case $core_pattern in
	/*)	where=$(dirname "$core_pattern")
		new=$(find "$where" -maxdepth 1 -newer "$1/payload.json" -name "$(basename "${core_pattern%%%*}")*" 2>/dev/null | wc -l) ;;
	esac
	set_obs "$1" host_core_new "$new"
}

# After the container is gone, no process may still carry the case's mark.
procs_after_rm() {
	local left=0 p
	for p in /proc/[0-9]*; do
		{ tr "\0" "\n" <"$p/cmdline"; } 2>/dev/null | grep -qx "$2" && left=$((left + 1))
	done
	set_obs "$1" procs_left "$left"
}

# While the session runs: read the container's /dev/shm from the host side.
shm_watch() {
	local dir=$1 engine=$2 cid= i hit=false
	for i in $(seq 100); do
		cid=$("$DOCKER" ps -q --no-trunc --filter "label=io.airlock.owner-pid=$engine" | head -n 1)
		[ -n "$cid" ] && grep -qaF "$canary" "/var/lib/docker/containers/$cid/mounts/shm/leak" 2>/dev/null &&
			{ hit=true; break; }
		sleep 0.05
	done
	echo "$hit" >"$dir/shm_hit"
}

set_obs() {	# DIR KEY VALUE(JSON)
	python3 - "$1/obs.json" "$2" "$3" <<'PY'
import json, sys
p = sys.argv[1]
try:
    o = json.load(open(p))
except (OSError, ValueError):
    o = {}
o[sys.argv[2]] = json.loads(sys.argv[3])
json.dump(o, open(p, "w"))
PY
}

# Any observer but the permitted sink saw the agent: any connection, datagram,
# file, log line, denied-sink call or surviving process counts, canary or not.
LEAK_ANY='(not net_read) or net_tcp4_events + net_tcp6_events + net_dns4_events + net_dns6_events + net_unix_events > 0 or files_with_canary > 0 or logs_canary or board_calls > 0 or core_files > 0 or procs_left > 0 or shm_hit'

# judge RT CASE VARIANT OBSERVER LEAK_EXPR EXPECT_EXPR: one evidence line, ok/not ok
judge() {
	local rt=$1 name=$2 variant=$3 observer=$4 leak=$5 expect=$6 line
	[ -f "$dir/shm_hit" ] && set_obs "$dir" shm_hit "$(cat "$dir/shm_hit")"
	line=$(python3 - "$dir/obs.json" "$rt" "$name" "$variant" "$observer" "$leak" "$expect" <<'PY'
import json, sys
obs_path, rt, name, variant, observer, leak, expect = sys.argv[1:8]
try:
    o = json.load(open(obs_path))
except (OSError, ValueError):
    o = {}
env = dict(o)
for k in ("net_read", "archive_read", "state_read", "summary_read", "report", "outcome_done",
          "logs_canary", "shm_hit", "container_found", "pooled"):
    env.setdefault(k, False)
for k in ("files_with_canary", "core_files", "board_calls", "board_canary", "vault_canary",
          "procs_left", "procs_with_mark", "count", "errno", "allowed", "calls"):
    env.setdefault(k, 0)
for k in ("tcp4", "tcp6", "dns4", "dns6", "unix"):
    env.setdefault("net_%s_events" % k, 0)
    env.setdefault("net_%s_canary" % k, 0)
def ev(expr):
    try:
        return bool(eval(expr, {}, env))
    except Exception:
        return False
leaked = ev(leak)
refused = env.get("admission_first") == "refused"
tool_ok = env["vault_canary"] > 0
ok = ev(expect) and env["summary_read"]
line = {"kind": "case", "runtime": rt, "case": name, "variant": variant, "observer": observer,
        "leaked": leaked, "refused_by_admission": refused, "permitted_tool_ok": tool_ok,
        "ended": env.get("ended"), "refused_check": env.get("refused_check"),
        "exit_code": env.get("exit_code"), "oom_killed": env.get("oom_killed", False),
        "outcome_done": env["outcome_done"], "errno": env["errno"], "count": env["count"],
        "net_events": sum(env["net_%s_events" % k] for k in ("tcp4", "tcp6", "dns4", "dns6", "unix")),
        "net_canary": sum(env["net_%s_canary" % k] for k in ("tcp4", "tcp6", "dns4", "dns6", "unix")),
        "files_with_canary": env["files_with_canary"], "core_files": env["core_files"],
        "logs_canary": env["logs_canary"], "board_canary": env["board_canary"],
        "procs_left": env["procs_left"], "shm_hit": env["shm_hit"], "pooled": env["pooled"],
        "pass": ok}
print(json.dumps(line))
PY
)
	echo "$line" >>"$evidence"
	if echo "$line" | grep -q '"pass": true'; then
		ok "$rt $variant $name ($observer)"
	else
		not_ok "$rt $variant $name ($observer): $line"
	fi
}

want() { [ -z "${MATRIX_CASES:-}" ] || [[ $1 =~ $MATRIX_CASES ]]; }

# protected RT CASE OBSERVER EXPECT ATTACK [ARG]: nothing at any observer, the
# permitted tool works, and EXPECT holds.
protected() {
	local rt=$1 name=$2 observer=$3 expect=$4; shift 4
	want "$name" || return 0
	session "$rt" "$name" "" public 15000 attack "$@"
	judge "$rt" "$name" protected "$observer" "$LEAK_ANY" \
		"container_found and archive_read and state_read and not ($LEAK_ANY) and vault_canary > 0 and ($expect)"
}

# mutant RT CASE WEAKENING CHECK OBSERVER LEAK ATTACK [ARG]: admission refuses
# the weakened container (the agent never runs); bypassed, it leaks at OBSERVER.
mutant_proof() {
	local rt=$1 name=$2 weak=$3 check=$4 observer=$5 leak=$6; shift 6
	want "$name" || return 0
	session "$rt" "$name" "$weak" public 15000 attack "$@"
	judge "$rt" "$name" admission "$observer" "$leak" \
		"ended == 'admission_refused' and refused_check == '$check' and vault_calls == 0 and not ($leak)"
	session "$rt" "$name" "$weak,admission_bypass" public "${MUTANT_MS:-15000}" attack "$@"
	judge "$rt" "$name" mutant "$observer" "$leak" \
		"container_found and admission_first == 'refused' and refused_check == '$check' and vault_canary > 0 and ($leak)"
}

# second_layer RT CASE WEAKENINGS CHECK ATTACK [ARG]: admission refuses it
# (CHECK); bypassed, the attack still reaches no network observer (the
# permitted tool works): another layer holds.
second_layer() {
	local rt=$1 name=$2 weak=$3 check=$4; shift 4
	want "$name" || return 0
	session "$rt" "$name" "$weak,admission_bypass" public 15000 attack "$@"
	judge "$rt" "$name" mutant_second_layer net "$NET_LEAK" \
		"container_found and admission_first == 'refused' and refused_check == '$check' and vault_canary > 0 and net_read and not ($NET_ANY) and $BLOCKED"
}

# runc: 5 routes + 5 writes + 4 limits + 11 calls + 17 frames + the network's
# 2 second-layer cases and 4x2 mutants + 4x2 other mutants + 2 ceiling + 6
# pooled = 68; runsc: the network is 7 second-layer cases and 3x2 mutants,
# plus the nproc mutant's 2, so 73.
CASES_PER_RUNTIME_RUNC=68
CASES_PER_RUNTIME_RUNSC=73
NET_ANY='net_tcp4_events + net_tcp6_events + net_dns4_events + net_dns6_events + net_unix_events > 0'
NET_LEAK='net_tcp4_canary + net_tcp6_canary + net_dns4_canary + net_dns6_canary + net_unix_canary > 0'
BLOCKED='report and not outcome_done'
FRAME_INVALID="ended == 'invalid_request' and allowed == 1"

for rt in "${runtimes[@]}"; do
	echo "# --- $rt: routes out"
	protected "$rt" tcp4 net "$BLOCKED" tcp4 "$port"
	protected "$rt" tcp6 net "$BLOCKED" tcp6 "$port"
	protected "$rt" tcp_child net "$BLOCKED" tcp_child "$port"
	# sendto on the container's own loopback succeeds; only the observers judge.
	protected "$rt" dns net "report" dns "$port"
	protected "$rt" abstract_unix net "$BLOCKED" abstract "$abstract"
	for path in /leak /work/leak /tmp/leak /dev/shm/leak /etc/hosts; do
		protected "$rt" "write_${path//\//_}" archive "$BLOCKED" write "$path"
	done

	echo "# --- $rt: limits"
	CORE_WATCH=1 protected "$rt" crash archive "ended == 'agent_failed' and exit_code == 134 and core_files == 0 and archive_read and host_core_new == 0" crash
	# runc: the pids limit; runsc: the nproc ulimit inside the sandbox (the
	# pids limit counts gVisor's threads there). Either way fork gets EAGAIN.
	protected "$rt" forkbomb state "$BLOCKED and errno == 11 and count < 32 and ended == 'agent_exit'" forkbomb
	protected "$rt" membomb state "ended == 'oom_killed' and oom_killed and state_oom_killed and not report" membomb
	protected "$rt" orphan procs "ended == 'agent_exit' and report and procs_with_mark == 0" orphan MARK

	echo "# --- $rt: privileged calls"
	for call in setuid caps raw packet mount unshare_user unshare_ns bpf keyctl; do
		protected "$rt" "$call" sink_report "$BLOCKED" "$call"
	done
	# ptrace of the agent's own init (same uid, inside the container): Docker's
	# seccomp allows ptrace on kernels >= 4.8, so runc permits it and gVisor
	# does not. Recorded as an observation, not judged: it reaches nothing
	# the agent does not already hold.
	if want ptrace; then
		session "$rt" ptrace "" public 15000 attack ptrace
		python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))
print(json.dumps({"kind": "observation", "runtime": sys.argv[2], "case": "ptrace_init",
      "outcome_done": o.get("outcome_done", False), "errno": o.get("errno", 0)}))' \
			"$dir/obs.json" "$rt" >>"$evidence"
		echo "info: $rt ptrace of pid 1: $(tail -n 1 "$evidence")"
	fi
	protected "$rt" mknod sink_report "$BLOCKED" mknod /tmp/node
	protected "$rt" mknod_root sink_report "$BLOCKED" mknod /node

	echo "# --- $rt: crafted frames"
	for kind in bad_utf8 raw_nul escaped_nul dup_escaped deep bigint bigreal array op_number \
		args_array bom trailing empty; do
		protected "$rt" "frame_$kind" summary "$FRAME_INVALID" frame "$kind"
	done
	protected "$rt" frame_over_max summary "ended == 'frame_too_large' and allowed == 1" frame over_max
	# Accepted at the bound and delivered; its echo is too long for a reply
	# frame, so the response is withheld (egress), not the request.
	protected "$rt" frame_exact_max summary "ended == 'agent_exit' and vault_calls == 2 and calls == 2" frame exact_max
	protected "$rt" frame_torn summary "ended == 'agent_exit' and allowed == 2" frame torn
	protected "$rt" frame_pipelined summary "ended == 'agent_exit' and allowed == 3" frame pipelined

	echo "# --- $rt: mutation proofs"
	# Layers: Docker's NetworkDisabled (a namespace of its own, NetworkMode
	# ignored) and NetworkMode none; under runsc also runsc's own
	# --network=none (preflight requires it). Removed one at a time, and
	# all but one, another layer holds; removed together (under runsc with
	# runsc-mutant-hostnet, scripts/daemon.json), the canary leaks.
	if [ "$rt" = runc ]; then
		second_layer "$rt" network_tcp4 weak_network network_mode tcp4 "$port"
		second_layer "$rt" network_netns_tcp4 weak_netns network_disabled tcp4 "$port"
		all=weak_network,weak_netns
		mutant_proof "$rt" network_tcp4 "$all" network_mode net 'net_tcp4_canary > 0' tcp4 "$port"
		mutant_proof "$rt" network_tcp6 "$all" network_mode net 'net_tcp6_canary > 0' tcp6 "$port"
		mutant_proof "$rt" network_dns "$all" network_mode net 'net_dns4_canary + net_dns6_canary > 0' dns "$port"
		mutant_proof "$rt" network_abstract "$all" network_mode net 'net_unix_canary > 0' abstract "$abstract"
	else
		second_layer "$rt" network_tcp4 weak_network network_mode tcp4 "$port"
		second_layer "$rt" network_runsc_tcp4 weak_runsc_net runtime tcp4 "$port"
		second_layer "$rt" network_netns_tcp4 weak_netns network_disabled tcp4 "$port"
		# Each layer alone.
		second_layer "$rt" network_only_netns_tcp4 weak_network,weak_runsc_net network_mode tcp4 "$port"
		second_layer "$rt" network_only_runsc_tcp4 weak_network,weak_netns network_mode tcp4 "$port"
		second_layer "$rt" network_only_mode_tcp4 weak_netns,weak_runsc_net network_disabled tcp4 "$port"
		all=weak_network,weak_netns,weak_runsc_net
		mutant_proof "$rt" network_tcp4 "$all" network_mode net 'net_tcp4_canary > 0' tcp4 "$port"
		mutant_proof "$rt" network_tcp6 "$all" network_mode net 'net_tcp6_canary > 0' tcp6 "$port"
		mutant_proof "$rt" network_dns "$all" network_mode net 'net_dns4_canary + net_dns6_canary > 0' dns "$port"
		# gVisor's unix sockets are its own, even on the host's network.
		second_layer "$rt" network_abstract "$all" network_mode abstract "$abstract"
		# Without the nproc bound the fork bomb runs into the pids limit
		# (gVisor's threads: the sandbox dies) or the memory limit first
		# (OOM): either way fork never fails inside and the session is over.
		mutant_proof "$rt" forkbomb_nproc weak_nproc ulimit_nproc state \
			"ended in ('sandbox_died', 'oom_killed') and not report" forkbomb
	fi
	mutant_proof "$rt" rootfs weak_rootfs readonly_rootfs archive 'files_with_canary > 0' write /work/leak
	mutant_proof "$rt" logs weak_logs log_config logs 'logs_canary' setuid
	mutant_proof "$rt" seccomp weak_seccomp security_opt sink_report 'report and outcome_done' unshare_user
	SHM_WATCH=1 MUTANT_MS=3000 mutant_proof "$rt" ipc weak_ipc ipc_mode shm 'shm_hit' write_hold /dev/shm/leak
	# Sealed material has its own suite and mutant: tests/docker/sealed.sh.

	# One case a family from a pooled container (docs/guarantees.md, "Pooled
	# sessions"): airlock-mutants' pooled_run warms the container first, as a
	# pool does, and the session claims it; "pooled" says the claim's second
	# admission passed and the session ran in it.
	echo "# --- $rt: from a pooled container, one case a family"
	POOLED=1 protected "$rt" pooled_tcp4 net "$BLOCKED and pooled" tcp4 "$port"
	POOLED=1 protected "$rt" pooled_write_work archive "$BLOCKED and pooled" write /work/leak
	POOLED=1 protected "$rt" pooled_forkbomb state \
		"$BLOCKED and errno == 11 and count < 32 and ended == 'agent_exit' and pooled" forkbomb
	POOLED=1 protected "$rt" pooled_setuid sink_report "$BLOCKED and pooled" setuid
	POOLED=1 protected "$rt" pooled_frame_bad_utf8 summary "$FRAME_INVALID and pooled" frame bad_utf8
	if want pooled_ceiling; then
		POOLED=1 session "$rt" pooled_ceiling "" public 15000 normal
		judge "$rt" pooled_ceiling protected board "board_calls > 0" \
			"container_found and archive_read and board_calls == 0 and vault_canary > 0 and denied == 1 and pooled and not ($LEAK_ANY)"
	fi

	echo "# --- $rt: the public sink ceiling"
	want ceiling || continue
	session "$rt" ceiling "" public 15000 normal
	judge "$rt" ceiling protected board "board_calls > 0" \
		"container_found and archive_read and board_calls == 0 and vault_canary > 0 and denied == 1 and not ($LEAK_ANY)"
	session "$rt" ceiling "" confidential 15000 normal
	judge "$rt" ceiling mutant board "board_canary > 0" "board_canary > 0 and vault_canary > 0"
done

# Every judged case leaves one line: a case skipped by a shell slip is a failure.
judged=$(grep -c '"kind": "case"' "$evidence")
expected_cases=$CASES_PER_RUNTIME_RUNC
[ "${#runtimes[@]}" = 2 ] && expected_cases=$((expected_cases + CASES_PER_RUNTIME_RUNSC))
if [ -n "${MATRIX_CASES:-}" ] || [ "$judged" = "$expected_cases" ]; then
	ok "$judged cases judged"
else
	not_ok "$judged cases judged, $expected_cases expected"
fi
left=0
for p in $(cat "$work/engines"); do
	[ -n "$("$DOCKER" ps -aq --filter "label=io.airlock.owner-pid=$p")" ] && left=$((left + 1))
done
if [ "$left" = 0 ]; then ok "no matrix container left on the daemon"; else not_ok "$left matrix containers left"; fi
if grep -qF "$token" "$evidence"; then not_ok "the evidence file holds a canary"; else ok "no canary in the evidence file"; fi
summary
