#!/usr/bin/env python3
"""The console's timeline view read back from a captured screen (tmux).

  timeline_order.py CLI_JSON SCREEN
      The rows on SCREEN, as (time to the second, KIND), are the last events
      `airlock audit timeline --json` printed into CLI_JSON, in its order
      (at least three of them).
  timeline_order.py --only-by TEXT SCREEN
      Every row on SCREEN has TEXT in its BY column (at least one row).
  timeline_order.py --width N SCREEN
      No line of SCREEN is wider than N characters.
"""
import json
import re
import sys

ROW = re.compile(r"^.?\s*\d\d:\d\d:\d\d\s")
LABELS = {"session_start": "start", "session_end": "end",
          "admission_refused": "refused", "reap": "reap"}


def rows(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if re.search(r"\bTIME\s+KIND\s+BY\s+WHAT\b", line):
            break
    else:
        sys.exit("no TIME KIND BY WHAT header on the screen")
    head = lines[i]
    kind, by, what = head.index("KIND"), head.index("BY"), head.index("WHAT")
    out = []
    for line in lines[i + 1:]:
        if not ROW.match(line):
            break
        out.append({"time": line[2:10], "kind": line[kind:by].strip(),
                    "by": line[by:what].strip(), "line": line})
    return out


def label(e):
    if e["event"] in LABELS:
        return LABELS[e["event"]]
    if e["event"] == "policy_at_start":
        return e["op"] + " at start"
    if e["event"] in ("policy", "request"):
        return e["op"]
    return e["event"]


def order(cli, screen):
    events = [json.loads(l) for l in open(cli, encoding="utf-8") if l.strip()]
    want = [(e["time"][11:19], label(e)) for e in events]
    got = [(r["time"], r["kind"]) for r in rows(screen)]
    if len(got) < 3:
        sys.exit(f"only {len(got)} rows on the screen")
    if want[-len(got):] != got:
        sys.exit(f"screen {got}\n  is not the tail of the CLI's {want[-len(got):]}")


def main(argv):
    if argv[1] == "--only-by":
        shown = rows(argv[3])
        bad = [r["line"] for r in shown if argv[2] not in r["by"]]
        if not shown or bad:
            sys.exit(f"rows {len(shown)}, not by {argv[2]!r}: {bad}")
    elif argv[1] == "--width":
        wide = [l for l in open(argv[3], encoding="utf-8").read().split("\n")
                if len(l) > int(argv[2])]
        if wide:
            sys.exit(f"wider than {argv[2]}: {wide}")
    else:
        order(argv[1], argv[2])


if __name__ == "__main__":
    main(sys.argv)
