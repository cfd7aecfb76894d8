# Consoles in tmux, read back as text: sourced by the scripts that drive
# `airlock console` (attach.sh, docker/drill.sh). Each console has a tmux
# server of its own, $tmux_sock-NAME; the script kills them in its teardown.
# Uses $work, $airlock and $tmux_sock. Every screen read is kept in
# $work/shot-NAME-*.screen for the canary search, the last in $work/last.screen.
#
#   console NAME ARGS...   airlock console ARGS in a 120x30 pane, pinned TERM,
#                          TZ, locale, HOME and no keymap file. Set for one
#                          call: console_env (more env), console_as (a prefix
#                          such as a setpriv command: another uid),
#                          console_bin (a program that uid can reach) and
#                          console_size (another pane: "80 24").
#   screen NAME            the screen now
#   wait_for NAME TEXT [S] / wait_re NAME REGEX [S]   until shown (20 s)
#   gone_from NAME TEXT [S]                           until no longer shown (10 s)
#   keys NAME KEYS... / command_line NAME LINE        type into it
#   tm_close NAME          its tmux server killed and its socket file removed
#
# The waits' deadlines are wall-clock seconds (a loaded machine reads a
# screen slower; the deadline does not stretch with it), at least one look.

tm() { local s=$1; shift; tmux -L "$tmux_sock-$s" -f /dev/null "$@"; }
tm_close() {
	tm "$1" kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_sock-$1"
}

console() {	# NAME ARGS...
	local name=$1 size=(${console_size:-120 30}); shift
	tm "$name" new-session -d -s ui -x "${size[0]}" -y "${size[1]}" \
		"${console_as:-} env TERM=tmux-256color NO_COLOR=1 TZ=UTC LANG=C.UTF-8 HOME=$work/home \
		 AIRLOCK_KEYS=$work/no-keys ${console_env:-} ${console_bin:-$airlock} console $*; \
		 echo \"exit status \$?\"; sleep 60"
	tm "$name" set-option -t ui remain-on-exit on >/dev/null
}

screen() {	# NAME
	local f
	f="$work/shot-$1-$(date +%s%N).screen"
	tm "$1" capture-pane -p -t ui >"$f" 2>/dev/null
	cp "$f" "$work/last.screen"
	cat "$f"
}

wait_for() {	# NAME TEXT [SECONDS]
	local end=$((SECONDS + ${3:-20}))
	[ -n "$2" ] || return 1
	until screen "$1" | grep -qF -- "$2"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

wait_re() {	# NAME REGEX [SECONDS]
	local end=$((SECONDS + ${3:-20}))
	[ -n "$2" ] || return 1
	until screen "$1" | grep -Eq -- "$2"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

gone_from() {	# NAME TEXT [SECONDS]: the screen no longer shows TEXT
	local end=$((SECONDS + ${3:-10}))
	while screen "$1" | grep -qF -- "$2"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

keys() { local s=$1; shift; tm "$s" send-keys -t ui "$@"; }
command_line() { keys "$1" ':'; keys "$1" -l "$2"; keys "$1" Enter; }
