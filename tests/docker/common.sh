# Shared by the Docker suite's scripts: find the daemon or decide loudly.
sock=/var/run/docker.sock
case "${DOCKER_HOST:-}" in unix://*) sock=${DOCKER_HOST#unix://} ;; esac
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker || echo docker)

daemon_answers() {
	curl -fsS --max-time 5 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1
}

# Exit 77 (meson: skipped) with a banner when no daemon answers and CI is
# unset; fail when CI is set.
require_daemon() {
	daemon_answers && return 0
	if [ -n "${CI:-}" ]; then
		echo "FAIL: CI is set but no Docker daemon answers on $sock (run scripts/setup)" >&2
		exit 1
	fi
	{
		echo "################################################################"
		echo "## SKIPPED: no Docker daemon answers on $sock; confinement NOT verified"
		echo "## (run scripts/setup; with CI set this is a failure)"
		echo "################################################################"
	} | tee /dev/stderr
	exit 77
}

# scratch_image DIR BINARY [DOCKERFILE_LINES]: build a FROM scratch image
# holding BINARY as /NAME (its entrypoint), plus any extra Dockerfile lines
# (before the ENTRYPOINT), in build context DIR; print its image ID. Fails,
# printing nothing, when the build fails.
scratch_image() {
	local dir=$1 bin=$2 extra=${3:-} name
	name=$(basename "$bin")
	mkdir -p "$dir" || return 1
	cp "$bin" "$dir/$name" || return 1
	printf 'FROM scratch\nCOPY %s /%s\n%bENTRYPOINT ["/%s"]\n' "$name" "$name" \
		"${extra:+$extra\n}" "$name" >"$dir/Dockerfile"
	DOCKER_BUILDKIT=0 "$DOCKER" build -q --iidfile "$dir/iid" "$dir" >/dev/null || return 1
	cat "$dir/iid"
}

# node_root ROOT: this machine's Node.js at ROOT/usr/bin/node with the shared
# libraries ldd names (FROM scratch images hold nothing else), and the pinned
# npm packages of tests/thirdparty at ROOT/app/node_modules.
node_root() {
	local root=$1 node lib
	node=$(readlink -f "$(command -v node)") || return 1
	mkdir -p "$root/usr/bin" "$root/app" || return 1
	cp "$node" "$root/usr/bin/node" || return 1
	for lib in $(ldd "$node" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }'); do
		cp -L --parents "$lib" "$root" || return 1
	done
	cp -a "$(dirname "${BASH_SOURCE[0]}")/../thirdparty/node_modules" "$root/app/"
}

# --- a script's scratch dir, and taking down what it started -------------------
# scratch_dir: $work, a new directory, and an EXIT trap (teardown) that takes
# down what this script registered and nothing else (other suites and the
# engine's own sessions may share the daemon). In this order:
#   helpers[]     its background processes, those still jobs of this shell:
#                 SIGCONT (a stopped one must go too), SIGKILL, and reaped
#   on_teardown   run when the script defines it
#   planted[]     containers it created, by name (with their volumes)
#   owner_pids    when the script defines it: for each pid it prints, the
#                 managed containers labelled io.airlock.owner-pid=PID
#   images[]      images it built for itself alone
#   $work         unless KEEP is set (then its path is printed)
# A script may call teardown before the end, to check that nothing is left;
# the trap is then disarmed.
helpers=() planted=() images=()

scratch_dir() {
	work=$(mktemp -d) || exit 1
	trap teardown EXIT
}

# Upstreams run as airlock-upstream (docs/operations.md, "Upstreams run
# confined"), which cannot enter root's 0700 scratch directory. DIR becomes a
# drop box it may create files in (sticky: it cannot remove or rename the
# test's own files there), $work a directory it may pass through; the config
# lists DIR in the upstream's "paths": {"rw": [DIR]}.
upstream_box() {
	chmod 0711 "$work" && chmod 1733 "$1"
}
# npm_reachable DIR: a copy of DIR/node_modules in $work/npm, which
# airlock-upstream can read (the clone may sit in a directory only root
# can enter, root's home or a mktemp -d); prints the copy's parent.
npm_reachable() {
	mkdir -p "$work/npm" && chmod 0711 "$work" && chmod 0755 "$work/npm" &&
		cp -a "$1/node_modules" "$work/npm/" && echo "$work/npm"
}
# loop_config NAME [ARG...]: $work/NAME/config.json, a session of the looping
# agent fixture (image $image) storing through the fixture upstream
# ($upstream, given the ARGs too), given $work/payload.in; the upstream's
# sink is $work/NAME/vault.sink.
loop_config() {
	local a more=
	for a in "${@:2}"; do more+=", \"$a\""; done
	mkdir -p "$work/$1" && upstream_box "$work/$1" || return 1
	cat >"$work/$1/config.json" <<JSON
{"profile": {"image": "$image", "cmd": ["loop"]},
 "bounds": {"session_ms": 300000, "calls": 4096, "stdout_bytes": 4194304},
 "upstreams": {"vault": {"argv": ["$upstream", "--sink", "$work/$1/vault.sink"$more],
                         "env": {"PATH": "/usr/bin:/bin"}, "paths": {"rw": ["$work/$1"]}}},
 "tools": {"store": {"upstream": "vault", "remote": "store", "data_class": "confidential",
                     "sink_ceiling": "confidential", "response_ceiling": "confidential"}},
 "aliases": {"save": "store"},
 "initial": {"file": "$work/payload.in", "class": "confidential"}}
JSON
}
# delegated_uid UID: UID lies in the range /etc/subuid delegates to
# airlock-upstream, past its first (the sweeps' own), and is not that
# user's own (a session's own uid, engine/mcp/mcp_uids.h).
delegated_uid() {
	[ -n "$1" ] && [ "$1" != "$(id -u airlock-upstream)" ] &&
		awk -F: -v u="$1" '$1 == "airlock-upstream" && u > $2 && u < $2 + $3 { f = 1 }
			END { exit !f }' /etc/subuid
}
# DIR belongs to the upstream's group (each session's upstreams have a uid
# of their own): a server that lists its directory.
upstream_owns() {
	chmod 0711 "$work" && { [ "$(id -u)" != 0 ] || { chown airlock-upstream: "$1" && chmod 2770 "$1"; }; }
}

teardown() {
	local live p c
	trap - EXIT
	set +e	# a step that fails must not skip the ones after it
	live=" $(jobs -p | tr '\n' ' ') "
	for p in "${helpers[@]}"; do
		case $live in
		*" $p "*) kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null ;;
		esac
	done
	if declare -F on_teardown >/dev/null; then on_teardown; fi
	for c in "${planted[@]}"; do
		"$DOCKER" rm -f -v "$c" >/dev/null 2>&1
	done
	if declare -F owner_pids >/dev/null; then
		for p in $(owner_pids); do
			"$DOCKER" ps -aq --filter label=io.airlock.managed=1 \
				--filter "label=io.airlock.owner-pid=$p" | xargs -r "$DOCKER" rm -f >/dev/null 2>&1
		done
	fi
	[ ${#images[@]} -gt 0 ] && "$DOCKER" rmi -f "${images[@]}" >/dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then echo "kept: $work"; else rm -rf "$work"; fi
}

# plant NAME IMAGE [CREATE_ARGS...]: create and start a hardened container
# (no network, no capabilities, nobody, read-only root) named NAME. Its stdin
# is opened (-i) but never attached, so it never sees EOF and keeps running.
# NAME is in planted[] before the container exists, so call it in this shell,
# not inside a $(…): teardown must know every name.
plant() {
	local name=$1 image=$2
	shift 2
	"$DOCKER" rm -f -v "$name" >/dev/null 2>&1
	planted+=("$name")
	"$DOCKER" create -i --name "$name" --network none --cap-drop ALL \
		--security-opt no-new-privileges --user 65534:65534 --read-only \
		"$@" "$image" >/dev/null && "$DOCKER" start "$name" >/dev/null
}

# serve_ready LOG PID [N]: an engine PID said "listening on" in LOG (N times:
# once a start, when LOG gathers restarts) within 30 s. Fails at once when
# PID is gone (or empty), never by waiting out a dead engine.
serve_ready() {
	local log=$1 pid=$2 n=${3:-1} i
	[ -n "$pid" ] || return 1
	for i in $(seq 300); do
		[ "$(grep -c "listening on" "$log" 2>/dev/null)" -ge "$n" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# running ID / stopped ID: the daemon says the container is running / is
# not. An empty ID, or one the daemon does not know, is neither: never
# evidence either way.
running() { [ -n "$1" ] && [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }
stopped() { [ -n "$1" ] && [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = false ]; }

# session_gone SID / session_stopped SID: no container of session SID is
# left at all / is left running. An empty SID is no session: both fail.
session_gone() { [ -n "$1" ] && [ -z "$("$DOCKER" ps -aq --filter "label=io.airlock.session=$1")" ]; }
session_stopped() { [ -n "$1" ] && [ -z "$("$DOCKER" ps -q --filter "label=io.airlock.session=$1")" ]; }

# start_ticks PID: the process's start time (field 22 of /proc/PID/stat,
# counted from the last ')': the command name may hold spaces and parentheses).
start_ticks() {
	local s
	s=$(cat "/proc/$1/stat") || return 1
	s=${s##*)}
	# shellcheck disable=SC2086
	set -- $s
	echo "${20}"
}
