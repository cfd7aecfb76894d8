#!/usr/bin/env python3
"""The map is checked: docs/architecture.md's table of rooms against the tree.

The table (the first one under a header row `| room | layer | modules | I/O |`)
names every room (a folder of sources) with its layer, its modules and the
kinds of I/O its files may do. This script reads the real tree and fails on:

  - a source file whose module is missing from the table, or a module or
    room in the table that the tree does not have;
  - an include from one room into another whose layer is not lower;
  - a circle of includes between modules;
  - a room that includes a system header of a kind of I/O its row does
    not name (a room whose row says `none` is pure).

A module is a .c with the .h of the same stem and that stem's _int.h, as a
reader counts them. Quoted includes resolve to the including file's own
folder first, then to the one tree file of that name; `airlock-config.h` is
generated. Usage: architecture.py ROOT
"""

import os
import re
import sys

SOURCE_ROOTS = ("engine", "tui", "cmd", "views", "keymaps", "shim")
GENERATED = {"airlock-config.h"}

# What each word of the I/O column allows: system headers that do that kind
# of I/O. A header in no list is no I/O (strings, JSON, integers, errno).
IO_HEADERS = {
    "threads": {"pthread.h", "semaphore.h", "sys/eventfd.h"},
    "files": {"fcntl.h", "sys/stat.h", "unistd.h", "dirent.h"},
    "sockets": {"sys/socket.h", "sys/un.h", "poll.h"},
    "processes": {"sys/wait.h", "spawn.h", "signal.h", "sys/resource.h"},
    "libcurl": {"curl/curl.h"},
    "sqlite": {"sqlite3.h"},
    "random": {"sys/random.h"},
    "users": {"pwd.h", "grp.h"},
    "host": {"sys/utsname.h"},
    "terminal": {"curses.h", "ncurses.h", "locale.h", "langinfo.h"},
    "notify": {"libnotify/notify.h"},
    "systemd": {"systemd/sd-daemon.h"},
}
ALL_IO = set().union(*IO_HEADERS.values())
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def fail(problems, text):
    problems.append(text)


def read_table(doc):
    """{room: (layer, {modules}, {io words})} from the rooms table."""
    rows, inside = {}, False
    for line in open(doc, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not inside:
            inside = [c.lower() for c in cells[:4]] == ["room", "layer", "modules", "i/o"]
            continue
        if not line.startswith("|"):
            break
        if set(cells[0]) <= set("-: "):
            continue
        room = cells[0].strip("`").rstrip("/")
        mods = set(re.findall(r"`([^`]+)`", cells[2]))
        io = {w for w in re.split(r"[,\s]+", cells[3]) if w and w != "none"}
        rows[room] = (int(cells[1]), mods, io)
    return rows


def tree_files(root):
    out = []
    for top in SOURCE_ROOTS:
        for d, _, names in os.walk(os.path.join(root, top)):
            out += [os.path.relpath(os.path.join(d, n), root)
                    for n in names if n.endswith((".c", ".h"))]
    return sorted(out)


def module_of(path):
    stem = os.path.basename(path)[:-2]
    if path.endswith("_int.h"):
        stem = stem[:-len("_int")]
    return os.path.dirname(path), stem


def resolve(root, src, name, by_name):
    near = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.exists(os.path.join(root, near)):
        return near
    hits = by_name.get(os.path.basename(name), [])
    return hits[0] if len(hits) == 1 else None


def includes(root, files):
    """[(file, quoted target file or None, system header or None)]"""
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    out = []
    for f in files:
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for kind, name in INCLUDE.findall(text):
            if kind == "<":
                out.append((f, None, name))
            elif os.path.basename(name) not in GENERATED:
                out.append((f, resolve(root, f, name, by_name), name))
    return out


def circles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return found


def check(root):
    problems = []
    doc = os.path.join(root, "docs", "architecture.md")
    table = read_table(doc)
    files = tree_files(root)
    if not table:
        fail(problems, "docs/architecture.md: no table with the header | room | layer | modules | I/O |")
    if not files:
        fail(problems, f"{root}: no source files under {', '.join(SOURCE_ROOTS)}")
    modules = {}
    for f in files:
        modules.setdefault(module_of(f), []).append(f)
    for room, stem in sorted(modules):
        if room not in table:
            fail(problems, f"{room}/: a room the table does not name")
        elif stem not in table[room][1]:
            fail(problems, f"{room}/{stem}: a module missing from the table's row for {room}")
    for room, (_, mods, io) in sorted(table.items()):
        for m in sorted(mods - {s for r, s in modules if r == room}):
            fail(problems, f"{room}/{m}: in the table, not in the tree")
        for w in sorted(io - set(IO_HEADERS)):
            fail(problems, f"{room}: unknown I/O word '{w}' (known: {', '.join(sorted(IO_HEADERS))})")

    edges, n_inc = {}, 0
    for src, target, name in includes(root, files):
        room = module_of(src)[0]
        if target is None and name in ALL_IO:
            allowed = set().union(*(IO_HEADERS.get(w, set()) for w in table.get(room, (0, 0, set()))[2]))
            if name not in allowed and room in table:
                fail(problems, f"{src}: includes <{name}>, I/O the row for {room} does not name")
            continue
        if target is None:
            continue
        n_inc += 1
        a, b = module_of(src), module_of(target)
        if a != b:
            edges.setdefault(a, set()).add(b)
        if a[0] != b[0] and a[0] in table and b[0] in table and table[b[0]][0] >= table[a[0]][0]:
            fail(problems, f"{src} -> {target}: layer {table[a[0]][0]} ({a[0]}) includes "
                           f"layer {table[b[0]][0]} ({b[0]}), not below it")
    for comp in circles(edges):
        fail(problems, "a circle of includes: " + " -> ".join(f"{r}/{s}" for r, s in comp))
    return problems, len(modules), len(table), n_inc


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems, n_mod, n_rooms, n_inc = check(root)
    for p in problems:
        print("architecture: " + p)
    if problems:
        print(f"architecture: {len(problems)} problem(s); docs/architecture.md section 1 is the map")
        return 1
    print(f"architecture: {n_mod} modules in {n_rooms} rooms, {n_inc} includes between our files: "
          "every module in the table, no include up a layer, no circle, I/O as each row says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
