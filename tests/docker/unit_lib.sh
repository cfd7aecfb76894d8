# Sourced by unit.sh: docs/airlock.service read as data, the engine run the
# way systemd would run it (setpriv), and what /proc and the audit say of
# the processes. Needs $unit, $airlock, $work, $run, $state, $sock.

# unit_key KEY: the [Service] section's last KEY= value (systemd: the last wins).
unit_key() {
	awk -v k="$1" '
		/^\[/ { in_s = ($0 == "[Service]") }
		in_s && index($0, k "=") == 1 { v = substr($0, length(k) + 2) }
		END { print v }' "$unit"
}

# unit_gids: the groups systemd gives User= (its group database entries)
# and SupplementaryGroups=, as sorted gids.
unit_gids() {
	local g
	{
		id -G "$(unit_key User)" | tr ' ' '\n'
		for g in $(unit_key SupplementaryGroups); do getent group "$g" | cut -d: -f3; done
	} | sort -nu | tr '\n' ' ' | sed 's/ $//'
}

# caps_arg "CAP_A CAP_B": setpriv's "-all,+a,+b".
caps_arg() {
	local c out=-all
	for c in $1; do out+=",+$(printf '%s' "${c#CAP_}" | tr 'A-Z' 'a-z')"; done
	printf '%s\n' "$out"
}

# caps_mask "CAP_A CAP_B": the /proc/PID/status hex mask of those capabilities.
caps_mask() {
	local c bit mask=0
	for c in $1; do
		bit=$(awk -v n="$c" '$1 == "#define" && $2 == n { print $3 }' /usr/include/linux/capability.h)
		[ -n "$bit" ] || { echo "unknown capability $c" >&2; return 1; }
		mask=$(( mask | (1 << bit) ))
	done
	printf '%016x\n' "$mask"
}

unit_ambient_bounded() {
	local c bset=" $(unit_key CapabilityBoundingSet) "
	for c in $(unit_key AmbientCapabilities); do
		case $bset in *" $c "*) ;; *) return 1 ;; esac
	done
}

# unit_setpriv_args AMBIENT [BOUNDING]: setpriv's options for the unit's
# user and groups, with these capabilities (the unit's, or a mutant's).
unit_setpriv_args() {
	local amb=$1 bnd=${2-$1}
	printf '%s\n' --reuid "$(unit_key User)" --regid "$(unit_key Group)" \
		--groups "$(unit_gids | tr ' ' ,)" \
		--inh-caps "$(caps_arg "$amb")" --ambient-caps "$(caps_arg "$amb")" \
		--bounding-set "$(caps_arg "$bnd")"
	[ "$(unit_key NoNewPrivileges)" = yes ] && printf '%s\n' --no-new-privs
}

# unit_exec_args: ExecStart=, its program this build's and its directories
# the test's (/run/airlock -> $run, /var/lib/airlock -> $state).
unit_exec_args() {
	local w
	set -f
	for w in $(unit_key ExecStart); do
		case $w in
		*/airlock) w=$airlock ;;
		/run/airlock/*) w=$run/${w#/run/airlock/} ;;
		/var/lib/airlock/*) w=$state/${w#/var/lib/airlock/} ;;
		esac
		printf '%s\n' "$w"
	done
	set +f
}

# unit_serve LOG AMBIENT BOUNDING: the engine in the background, as the unit runs it
# (umask, user, groups, capabilities, no_new_privs, a clean environment);
# sets engine. Waits for its socket.
unit_serve() {
	local log=$1 user i opts=() cmd=() envs=()
	user=$(unit_key User)
	mapfile -t opts < <(unit_setpriv_args "$2" "$3")
	mapfile -t cmd < <(unit_exec_args)
	envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	      HOME=/nonexistent USER="$user" LOGNAME="$user" SHELL=/usr/sbin/nologin)
	for i in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -n "${!i:-}" ] && envs+=("$i=${!i}")
	done
	( umask "$(unit_key UMask)" && exec setpriv "${opts[@]}" -- env -i "${envs[@]}" "${cmd[@]}" ) \
		2>"$work/$log" </dev/null &
	engine=$!
	helpers+=("$engine")
	serve_ready "$work/$log" "$engine"
}

status_field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }

# proc_ids_are PID USER "GID ...": every uid USER's, every gid USER's
# primary group, the supplementary groups exactly these.
proc_ids_are() {
	local pid=$1 u g groups
	[ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
	u=$(id -u "$2") g=$(id -g "$2")
	groups=$(status_field "$pid" Groups | tr ' ' '\n' | sed '/^$/d' | sort -n | tr '\n' ' ' | sed 's/ $//')
	echo "   pid $pid: Uid $(status_field "$pid" Uid), Gid $(status_field "$pid" Gid), Groups '$groups'"
	[ "$(status_field "$pid" Uid)" = "$u $u $u $u" ] &&
		[ "$(status_field "$pid" Gid)" = "$g $g $g $g" ] && [ "$groups" = "$3" ]
}

# proc_session_ids PID: every uid one of a session's own (delegated_uid),
# every gid airlock-upstream's group, no supplementary group.
proc_session_ids() {
	local pid=$1 u g
	[ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
	u=$(status_field "$pid" Uid | awk '{ print $1 }') g=$(id -g airlock-upstream)
	echo "   pid $pid: Uid $(status_field "$pid" Uid), Gid $(status_field "$pid" Gid), Groups '$(status_field "$pid" Groups)'"
	delegated_uid "$u" && [ "$(status_field "$pid" Uid)" = "$u $u $u $u" ] &&
		[ "$(status_field "$pid" Gid)" = "$g $g $g $g" ] && [ -z "$(status_field "$pid" Groups)" ]
}

# proc_caps_are PID "CAPS" "BOUNDING" NNP: inheritable, permitted, effective
# and ambient exactly CAPS (systemd gives ambient ones all four), bounding
# exactly BOUNDING, NoNewPrivs NNP.
proc_caps_are() {
	local pid=$1 want bnd f
	[ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
	want=$(caps_mask "$2") bnd=$(caps_mask "$3") || return 1
	echo "   pid $pid: CapEff $(status_field "$pid" CapEff) CapAmb $(status_field "$pid" CapAmb)" \
		"CapBnd $(status_field "$pid" CapBnd) NoNewPrivs $(status_field "$pid" NoNewPrivs)"
	for f in CapInh CapPrm CapEff CapAmb; do
		[ "$(status_field "$pid" "$f")" = "$want" ] || return 1
	done
	[ "$(status_field "$pid" CapBnd)" = "$bnd" ] && [ "$(status_field "$pid" NoNewPrivs)" = "$4" ]
}

# proc_holds_only PID CAPS: exactly CAPS (names; "" for none) permitted,
# effective and ambient (an inheritable set alone grants nothing without
# file capabilities).
proc_holds_only() {
	local f want
	[ -n "$1" ] && [ -r "/proc/$1/status" ] || return 1
	want=$(caps_mask "$2") || return 1
	for f in CapPrm CapEff CapAmb; do
		echo "   pid $1: $f $(status_field "$1" "$f")"
		[ "$(status_field "$1" "$f")" = "$want" ] || return 1
	done
}

# upstream_pid ENGINE: its child running the fixture upstream.
upstream_pid() { exe_child "$1" "$upstream"; }
# exe_child PID PROGRAM: the child of PID running PROGRAM.
exe_child() {
	local p
	for p in $(pgrep -P "$1"); do
		[ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$2")" ] && { echo "$p"; return 0; }
	done
	return 1
}

sink_has() {
	local i
	for i in $(seq 600); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

# The confinement receipts of the audit (gateway.c: the first dispatch's detail).
receipts() {
	python3 - "$1" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
for (d,) in db.execute("select detail from audit_entries where detail like '%confinement%'"):
    c = json.loads(d)["confinement"]
    print(c["user"] or "-", c["uid"], c["uid_changed"])
PY
}
receipt_is() {	# DB USER UID CHANGED: until such a receipt is there (10 s)
	local i
	for i in $(seq 100); do
		receipts "$1" 2>/dev/null | grep -qx "$2 $3 $4" && return 0
		sleep 0.1
	done
	receipts "$1"
	return 1
}
# receipt_session_uid DB: a receipt of user airlock-upstream, uid changed, to
# a session's own uid (10 s)
receipt_session_uid() {
	local i u
	for i in $(seq 100); do
		for u in $(receipts "$1" 2>/dev/null | awk '$1 == "airlock-upstream" && $3 == "True" { print $2 }'); do
			delegated_uid "$u" && return 0
		done
		sleep 0.1
	done
	receipts "$1"
	return 1
}
receipt_count() { receipts "$1" 2>/dev/null | awk -v u="$2" '$2 == u' | wc -l; }

# upstream_not_run_as USER: no process of USER runs the upstream program.
upstream_not_run_as() { not_run_as "$1" "$upstream"; }
# not_run_as USER PROGRAM: no process of USER runs PROGRAM (by /proc/PID/exe).
not_run_as() {
	local p
	for p in $(pgrep -u "$1"); do
		[ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$2")" ] && return 1
	done
	return 0
}
