#!/bin/sh
# Fails when a file under engine/ includes curses (or any of its family) or
# a console header from tui/ or views/: the engine is a library the console
# uses, never the other way round (docs/architecture.md). The console's
# headers are listed afresh each run, so a new one is covered without
# editing this script. Usage: engine_include.sh ROOT
root=${1:-.}
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
found=0

report() {	# hits, what they include
	[ -n "$1" ] || return 0
	printf '%s\n' "$1" | sed "s|^$root/||; s|\$|  ($2)|"
	found=1
}

report "$(grep -nE "$inc(ncursesw?/)?(n?curses|term|panel|menu|form|cursesw)\.h[>\"]" \
	"$root"/engine/*/*.c "$root"/engine/*/*.h)" curses
for h in "$root"/tui/*.h "$root"/cmd/*.h "$root"/views/*.h; do
	name=$(basename "$h")
	ls "$root"/engine/*/"$name" >/dev/null 2>&1 && continue	# the engine's own header of that name
	report "$(grep -nE "$inc([^\">]*/)?$name[\">]" "$root"/engine/*/*.c "$root"/engine/*/*.h)" \
		"$(basename "$(dirname "$h")")/$name"
done
if [ "$found" -ne 0 ]; then
	echo "engine-include: engine/ may include neither curses nor a console header"
	exit 1
fi
echo "engine-include: engine/ includes no curses and no console header" \
	"($(ls "$root"/engine/*/*.c "$root"/engine/*/*.h | wc -l) engine files checked)"
