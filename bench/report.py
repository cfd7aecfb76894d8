#!/usr/bin/env python3
"""Turn benchmark samples into figures, and figures into docs/performance.md.

  report.py figures SAMPLES       the table for people, then one line per figure:
                                  bench: NAME baseline=X airlock=Y ratio=R unit=U
                                  (medians over the samples; the five fields come
                                  first and are fixed, then runs=N and the
                                  min/max of each side)
  report.py markdown OUTPUT MACHINE
                                  docs/performance.md from bench/run's output (its
                                  bench: lines) and a machine/versions file

A sample line is "sample: NAME baseline=X airlock=Y unit=U", one per run of a
benchmark; X may be "-" (no baseline). Nothing here asserts a figure.
"""
import re
import statistics
import sys

SAMPLE = re.compile(r"^sample: (\S+) baseline=(\S+) airlock=(\S+) unit=(\S+)\s*$")
BENCH = re.compile(r"^bench: (\S+) (.*)$")

# What each figure is, for people; the order is the table's.
LABELS = [
    ("gateway_call_p50", "gateway per call, p50 (direct MCP client)"),
    ("gateway_call_p99", "gateway per call, p99 (direct MCP client)"),
    ("gateway_added_p50", "gateway added latency per call, p50"),
    ("gateway_added_p99", "gateway added latency per call, p99"),
    ("gateway_held_approve_p50", "a held call: the approval to the reply, p50 (an unheld call)"),
    ("gateway_floor_durable_p50", "floor, p50: direct + one durable 2 KiB write a call (direct)"),
    ("gateway_floor_trip_p50", "floor, p50: one process round trip over pipes (a call makes two)"),
    ("gateway_aggregate", "20 sessions, aggregate (direct clients)"),
    ("gateway_aggregate_floor", "20 sessions, floor: direct clients with one durable write a call"),
    ("gateway_aggregate_vs_floor", "20 sessions, aggregate against the floor (durable direct clients)"),
    ("gateway_aggregate_cpu", "20 sessions, CPU per call with the upstreams (direct clients)"),
    ("gateway_aggregate_cpu_vs_floor", "20 sessions, CPU per call with the upstreams (floor)"),
    ("instructions_per_call", "user-space instructions per call, callgrind (direct client): engine + parser"),
    ("instructions_per_call_engine", "  of which the engine's gateway_handle"),
    ("instructions_per_call_parser", "  of which airlock-parser (the agent's line and the upstream's answer)"),
    ("dense_running", "500 sessions (agents calling every 5 s): running after the start"),
    ("dense_missed_leases", "500 sessions: missed leases"),
    ("dense_ended_early", "500 sessions: ended early"),
    ("dense_containers_left", "500 sessions: containers left after shutdown"),
    ("dense_private_per_session", "500 sessions: engine + watchdog + parser private memory a session"),
    ("dense_engine_private_per_session", "500 sessions: engine private memory a session"),
    ("dense_watchdog_private_per_session", "500 sessions: watchdog private memory"),
    ("dense_parser_private_per_session", "500 sessions: parser private memory"),
    ("dense_revoke_ack_p50", "500 sessions: revoke on all -> each ack, p50"),
    ("dense_revoke_ack_max", "500 sessions: revoke on all -> the last ack"),
    ("dense_revoke_acked", "500 sessions: acknowledgements of the revoke on all"),
    ("scale_revoke_ack_p50", "concurrent sessions: revoke on all -> each ack, p50"),
    ("scale_revoke_ack_max", "concurrent sessions: revoke on all -> the last ack"),
    ("scale_revoke_acked", "concurrent sessions: acknowledgements of the revoke on all"),
    ("attach_ack_socket", "revoke keystroke -> every ack on screen, console on the socket (embedded console)"),
    ("attach_ack_ssh", "revoke keystroke -> every ack on screen, console through ssh (embedded console)"),
    ("attach_socket_bytes", "bytes a second an attached console reads (200 sessions)"),
    ("attach_engine_cpu", "engine CPU per attached console, % of a core (engine with no console)"),
    ("runc_first_reply", "runc: start -> first reply (docker run --rm -i)"),
    ("runc_exit", "runc: start -> removed and ended (docker run --rm -i)"),
    ("runc_exit_after_reply", "runc: first reply -> removed and ended"),
    ("runsc_first_reply", "runsc: start -> first reply (docker run --rm -i)"),
    ("runsc_exit", "runsc: start -> removed and ended (docker run --rm -i)"),
    ("runsc_exit_after_reply", "runsc: first reply -> removed and ended"),
    ("runc_pooled_first_reply", "runc: pooled claim -> first reply (docker run --rm -i)"),
    ("runsc_pooled_first_reply", "runsc: pooled claim -> first reply (docker run --rm -i)"),
] + [("%s_phase_%s" % (rt, st), "%s: start, in state %s" % (rt, st))
     for rt in ("runc", "runsc")
     for st in ("preflight", "creating", "admitting", "attaching", "starting", "arming",
                "re-admitting", "running")] + [
    ("watchdog_stop", "engine SIGKILL -> container stopped (docker stop -t 0)"),
    ("cutover_idle", "cutover -> acknowledged, idle session (bare gate)"),
    ("cutover_in_flight", "cutover behind an in-flight 10 s call"),
    ("cutover_in_flight_beyond_call", "  of which not waiting for the call"),
    ("scale_running", "concurrent sessions: running at once (asked for)"),
    ("scale_missed_leases", "concurrent sessions: missed leases"),
    ("scale_ended_early", "concurrent sessions: ended early"),
    ("scale_containers_left", "concurrent sessions: containers left"),
    ("scale_engine_private_per_session", "engine private memory per session"),
    ("scale_watchdog_private_per_session", "watchdog private memory per session"),
    ("scale_parser_private_per_session", "parser private memory per session"),
    ("scale_private_per_session", "engine + watchdog + parser private memory per session"),
    ("shim_call_p50", "MCP agent per call through airlock-shim, p50 (raw bridge agent)"),
    ("shim_call_p99", "MCP agent per call through airlock-shim, p99 (raw bridge agent)"),
    ("shim_added_p50", "airlock-shim added latency per call, p50"),
    ("shim_added_p99", "airlock-shim added latency per call, p99"),
    ("shim_socket_call_p50", "  MCP client on the parent shim's socket, no --mcp child, p50 (raw)"),
    ("shim_parent_private_dirty", "airlock-shim memory per session: parent, Private_Dirty"),
    ("shim_parent_pss", "airlock-shim memory per session: parent, Pss"),
    ("shim_child_private_dirty", "airlock-shim memory per session: --mcp child, Private_Dirty"),
    ("shim_child_pss", "airlock-shim memory per session: --mcp child, Pss"),
    ("sealed_export_read", "sealed check: 88 MiB export read and judged (SHA-256 alone)"),
    ("upstream_start", "upstream start + one call + stop, confined (unconfined: mutants)"),
    ("parser_start", "a session's parser: start, lockdown, one line, stop (unconfined: mutants)"),
    ("control_snapshot", "control protocol: a 500-row snapshot encoded and decoded (jansson alone)"),
]


def num(text):
    return None if text == "-" else float(text)


def fmt(v):
    if v is None:
        return "-"
    if v == 0 or abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 1:
        return "%.2f" % v
    return "%.4g" % v


def read_samples(path):
    figures = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SAMPLE.match(line)
            if not m:
                continue
            name, base, air, unit = m.groups()
            fig = figures.setdefault(name, {"unit": unit, "base": [], "air": []})
            if num(base) is not None:
                fig["base"].append(num(base))
            if num(air) is not None:
                fig["air"].append(num(air))
    return figures


def label_of(name):
    for key, label in LABELS:
        if key == name:
            return label
    if name.startswith("render_"):
        view, n = name[len("render_"):].rsplit("_", 1)
        if view == "pending":	# render_bench draws it with 1,000 held calls
            return "console frame, pending, 1000 held, %s sessions (empty frame)" % n
        return "console frame, %s view, %s sessions (empty frame)" % (view, n)
    return name


def order(names):
    known = [k for k, _ in LABELS if k in names]
    return known + sorted(n for n in names if n not in known)


def figures(path):
    figs = read_samples(path)
    lines = []
    print("%-62s %22s %22s %8s  %s" % ("figure", "baseline med (min-max)",
                                        "airlock med (min-max)", "ratio", "unit"))
    for name in order(figs):
        fig = figs[name]
        b = statistics.median(fig["base"]) if fig["base"] else None
        a = statistics.median(fig["air"]) if fig["air"] else None
        ratio = a / b if a is not None and b else None
        span = lambda v: "%s (%s-%s)" % (fmt(statistics.median(v)), fmt(min(v)), fmt(max(v))) if v else "-"
        print("%-62s %22s %22s %8s  %s" % (label_of(name)[:62], span(fig["base"]), span(fig["air"]),
                                            fmt(ratio), fig["unit"]))
        extra = " runs=%d" % max(len(fig["air"]), len(fig["base"]))
        if fig["base"]:
            extra += " baseline_min=%s baseline_max=%s" % (fmt(min(fig["base"])), fmt(max(fig["base"])))
        if fig["air"]:
            extra += " airlock_min=%s airlock_max=%s" % (fmt(min(fig["air"])), fmt(max(fig["air"])))
        lines.append("bench: %s baseline=%s airlock=%s ratio=%s unit=%s%s" %
                     (name, fmt(b), fmt(a), fmt(ratio), fig["unit"], extra))
    print()
    for line in lines:
        print(line)


def parse_bench(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = BENCH.match(line.strip())
            if m:
                kv = dict(p.split("=", 1) for p in m.group(2).split() if "=" in p)
                rows.append((m.group(1), kv))
    return rows


# Where a gateway call's cost goes: what the profiles showed, kept with the figures.
WHERE = [
    "## Where a gateway call's cost goes", "",
    "- **Instructions** (callgrind, `gateway_handle`, about 118k a call): SHA-256 of",
    "  four digests (request, response, two entries of 6 and 7 blocks) near 34k,",
    "  under valgrind OpenSSL's generic code; SQLite's one commit and two inserts near",
    "  30k (the WAL frame checksums and b-tree insert); jansson parsing the agent line",
    "  and the upstream's answer near 29k; the rest is the canonical writer, the",
    "  tools/call line and the reply, written once into one buffer each. The chain head",
    "  is kept by the connection (read back only when the file's data version moved),",
    "  and new logs have no index on `entry_id`, which had doubled the pages a commit",
    "  writes.",
    "- **One call's added latency** (1 session, p50): the gateway adds, in order, a round",
    "  trip to the session's parser with the agent's line, the durable dispatch commit (one",
    "  fdatasync of the WAL; inside `gateway_handle` SQLite's commit took 127 to 132 us p50",
    "  on 2026-12-06, its inserts, lock calls and chain about 25 more), the upstream's",
    "  answer through the parser (a second round trip, about 30 us each in place), and",
    "  about 35 us of CPU (hashes, canonical text, policy, the reply). The floor rows",
    "  measure, in the same run, what nothing in the gateway can remove: a direct client",
    "  making one durable 2 KiB write a call, and a bare process round trip over pipes",
    "  (the gateway makes two). On this virtual machine every flush and every wake-up on",
    "  the other core is a VM exit (the virtio kick, `iowrite16`, was 7% of all samples):",
    "  the durable write alone added 90 to 160 us over the direct client, so the 200 us",
    "  budget leaves less than the two round trips need. Tried, measured and dropped:",
    "  each parser reply's header and body in one read, and the parser's request too,",
    "  with no read before the wait (six system calls fewer a call): interleaved over six",
    "  rounds the gateway's p50 went 449.9 -> 447.4 us, no difference; spinning up to",
    "  60 us on the reply before sleeping made the line's round trip slower (30 -> 37 us).",
    "- **20 sessions** share one log: a dispatch waits for a commit (one fsync), and the",
    "  dispatches that arrive meanwhile ride on the next one. On a disk where that fsync",
    "  takes a millisecond the aggregate is bound by it (each call waits for one and a",
    "  half on average, after its upstream's own), not by CPU; where syncs are nearly free",
    "  it is bound by CPU per call, where each commit costs SQLite's six lock calls and",
    "  two writes per WAL frame and each dispatch a sleep and a wake-up. Waiters sleep on",
    "  their own lock and are woken outside the log's, and the log's timer is woken only",
    "  when it has nothing to wait for.",
    "- **Why 20 sessions stay near 0.55x**: the fixture upstream fsyncs its sink on",
    "  every call, so the direct clients already wait for the disk, and they keep both",
    "  cores nearly busy (the CPU row counts this process and its upstreams). A durable",
    "  gateway adds one durable write to each call's path, before the upstream sees it.",
    "  The floor row measures that with no gateway at all: the same direct clients,",
    "  each overwriting 2 KiB of a file of its own and fdatasyncing it before every",
    "  call, all in parallel, which is a gateway with no CPU cost and no wait beyond",
    "  its own sync. The gateway falls short of it twice. Its CPU: two cores run at",
    "  most two seconds of it a second, so the CPU row alone caps the aggregate near",
    "  3/4 of the direct rate. And its waiting: a dispatch waits for the commit in",
    "  flight and then its own, one and a half on average, and meanwhile the cores go",
    "  idle more often (measured by hand: about a quarter of the time, against about a",
    "  seventh for the floor's clients). Tried, measured and dropped: SQLite at",
    "  synchronous=NORMAL with our own fdatasync of the WAL outside the writer lock",
    "  (unbounded, or at most two in flight: batches shrank, syncs grew 1.6 to 4",
    "  times, the aggregate did not rise), and the sessions spread over two or four",
    "  logs (0.54x and 0.53x in one run against 0.53x with one): each log still makes",
    "  its dispatches wait for the commit in flight, and a log of each session's own",
    "  is the floor's shape with the gateway's CPU on top. A looser promise would not",
    "  reach 0.7x either (measured by hand, interleaved): with no audit sync at all",
    "  (synchronous=NORMAL, no fdatasync) the aggregate comes to about 0.63x, and with",
    "  the audit append skipped altogether to about 1.0x, at the direct clients' CPU a",
    "  call. The rest is the audit's own work: about 6 us a row in the leader's",
    "  transaction, two rows a call, and the kernel's wake-ups and flushes (on this",
    "  virtual machine every flush is a VM exit). A semaphore per waiter with the lead",
    "  handed over directly halved the futex calls and moved neither figure; so did a",
    "  futex word per waiter (72k to 50k futex calls for 20k calls, context switches",
    "  -2%), an adaptive (spinning) log lock, and waiters that leave without the log's",
    "  lock. With synchronous=OFF (not even the checkpoints sync) the aggregate reached",
    "  0.70x in the same hour's runs that gave FULL 0.57x and NORMAL 0.68x: the",
    "  durable commit's wait is a fifth of the gap, the audit's CPU (about 45 us a call",
    "  over the direct clients' 80, half of it in the kernel) the rest, and the cores",
    "  ran at 148% (FULL), 159% (NORMAL) and 169% (OFF) against 174% direct.",
    "",
    "## Issue #30, the shared audit near its floor: each attempt",
    "",
    "Goal: the 20-session aggregate at 0.95x the durable floor of the same run",
    "(`20 sessions, aggregate against the floor`), added latency p99 at most",
    "1 ms. Measured on 2026-12-04 on the 2-core machine above while other",
    "engineers' builds and Docker suites ran (load average 7 to 17, at times",
    "far more): every ratio below is gateway / floor within one process run,",
    "runs interleaved A, B, A, B, and the mean of 4 to 6 runs per side. The",
    "spread between runs of one side (0.66 to 0.95) is wider than any",
    "difference between sides, so no attempt below is shown to move it.",
    "",
    "- **Where the time goes, first.** Timed inside the log (a throwaway",
    "  build): 10.7 to 10.9 rows a commit (about 5.5 calls: dispatch plus the",
    "  previous call's terminal entry), 1.6 to 1.8 ms a commit, of which 1.5",
    "  to 1.7 ms inside SQLite's COMMIT, its fdatasync of the WAL; the leader's",
    "  own work is about 0.1 ms a batch. The commits ran back to back for the",
    "  whole run: on this loaded disk the aggregate is bound by one serial",
    "  flush at a time, and each dispatch waits on average for the rest of",
    "  the commit in flight and then its own. The floor's clients flush in",
    "  parallel and each waits for its own only. perf (cpu-clock; no hardware",
    "  counters on this VM) put SQLite, libcrypto and the audit's own code",
    "  together under 6% of the gateway process's samples; the kernel's",
    "  flushes, polls, futexes and context switches are the rest.",
    "- **The leader commits for everyone queued** was already the design (no",
    "  committer thread, the first waiter leads): nothing to change there.",
    "- **Kept: the chain-independent part of each entry made on the",
    "  appender's thread** (`audit_row_body`: the entry id and the canonical",
    "  text of session_id through detail), the leader adding only the time,",
    "  the sequence and the previous hash around it and digesting",
    "  (`audit_row_seal`). The hashed bytes are the same, so every log",
    "  verifies as before and no format changed. Instructions inside `lead`",
    "  per call (callgrind, 1 session): 68.6k before, 63.3k after (-7.7%);",
    "  inside `gateway_handle` 119.3k and 119.2k (moved, not removed). The",
    "  time stays in the leader, so seq order and time order still agree.",
    "  Ratio: 0.779 before, 0.785 after (6 runs each); in a second set, 0.807",
    "  and 0.768 (6 runs each): within the noise either way. Kept for the",
    "  shorter serial step, which counts where the log is CPU-bound (a quiet",
    "  machine, a fast disk) rather than flush-bound as here.",
    "- **Dropped: the WAL synced outside the writer lock** (synchronous=NORMAL,",
    "  the leader frees the lead after COMMIT and fdatasyncs the WAL itself",
    "  before telling its batch, so that the next batch writes while this one",
    "  flushes): 0.729 against 0.846 for the kept build (4 runs each), lower",
    "  in every pair, as an earlier attempt found: concurrent flushes of one",
    "  file do not overlap here.",
    "- **Dropped: the leader leads once more** when appenders queued during",
    "  its commit (no hand-off to a woken waiter between commits): 0.817",
    "  against 0.827 (4 runs each).",
    "- **Dropped: no checkpoints** (the WAL grows for the whole run): 0.705",
    "  against 0.768 (base) and 0.807 (kept), 4 runs each; a growing WAL makes",
    "  each flush write its size as well.",
    "- **Added latency** (1 session, gateway p99 minus direct p99): 471, 497",
    "  and 501 us in the quietest runs (load near 2); under the heavier load",
    "  it ranged from below 0 to several ms, the direct client's p99 moving",
    "  as much.",
    "- **Not reached.** 0.95x was not met: with the commit bound by one serial",
    "  flush at a time, what is left is the shape itself (a shared log's",
    "  dispatch waits for a commit in flight; the floor's client never does).",
    "  What would change the shape is a durable write of each session's own,",
    "  in parallel, with the shared chain committed behind it off the call's",
    "  path (each session's dispatch written and synced to a per-session",
    "  journal before its call leaves, the chained log filled from those",
    "  journals and verified against them after a crash). That is a change of",
    "  the crash contract and of `audit verify`: built and measured in the",
    "  next section.",
    "",
    "## Issue #30 §3, a journal of each session's own: each attempt",
    "",
    "Goal as above: the 20-session aggregate at 0.95x the durable floor of the",
    "same run. The shape the previous section ended on was built and measured:",
    "commits ac44e66 and 4ee9e7c on branch `audit`, both reverted there (the",
    "code stays in the branch's history). Measured on 2026-12-04, 14:20 to",
    "14:55, on the same 2-core machine while other engineers' builds and",
    "suites ran (load average 11 to 150): `gateway_bench UPSTREAM 1000 20`,",
    "binaries run interleaved A, B, (C, D), A, B, …; the ratio is",
    "`gateway_aggregate_vs_floor` within one run, the CPU figure",
    "`gateway_aggregate_cpu` (us a call, this process and its upstreams,",
    "warm-ups and spawns included), which moves less than the ratio. Mean",
    "(min-max) of the runs of each side in one interleaved set.",
    "",
    "- **The design.** Each gateway opens a journal of its own beside the log,",
    "  `DB-spool/NAME` (NAME 32 random hex digits; flock'ed for the writer's",
    "  life; the file and the directory synced when made). A dispatch entry's",
    "  chain-independent text (`audit_row_body`) is written there as one line",
    "  `K ID HASH BODY` (K the file's record number from 1, HASH the SHA-256",
    "  of \"K ID BODY\") and fdatasynced on the session's own thread, beside",
    "  every other session's; then it is queued for the shared log like a",
    "  terminal entry, and the call leaves. The session's terminal entries go",
    "  into its journal ahead of its next dispatch, so a crash cannot leave a",
    "  dispatch durable without the entries its session queued before it. A",
    "  clean session end settles its queue and removes the journal; a failed",
    "  lane keeps it. `audit_open` reads every journal nobody holds (its",
    "  writer died), appends in one transaction the records the log lacks —",
    "  journal by journal in name order, each in its own order: the log holds",
    "  a prefix of each journal, since its queue commits in order, so what is",
    "  appended follows everything of that session already there — and",
    "  removes the journal; a journal with an altered or missing record is",
    "  left in place. `audit verify` reads the journals too, matches each",
    "  record to the log's entry of the same id during its walk (the body",
    "  rebuilt from the stored columns), and fails naming the journal and the",
    "  record (`journal NAME record K: altered | missing | differs from the",
    "  log`); a record the log lacks is reported as pending (writer gone: the",
    "  next open appends it) or in flight (writer alive), not as a failure; a",
    "  torn last record (its sync never returned) is not one.",
    "- **What the guarantee would have become.** Nothing reaches an upstream",
    "  before its dispatch entry is durable, in the session's journal rather",
    "  than in the chain; after a crash the chain lacks what the journals",
    "  hold until the next open appends it. For those appended entries the",
    "  chain proves their order within a session only (sessions follow one",
    "  another in journal-name order, not in time), and their time is the",
    "  recovery's. A journal deleted between a crash and the next open takes",
    "  its dispatches with it unseen, like a cut tail (the anchor's",
    "  limitation, unchanged). In the variant with the log at NORMAL (below),",
    "  a terminal entry is durable with its session's next dispatch (in the",
    "  journal), a synced commit of the log, or the session's end, no longer",
    "  within 2 ms: an idle session's last answer can become an unknown",
    "  outcome.",
    "- **Tests written** (with the code, reverted with it):",
    "  `tests/unit/test_audit_journal.c`, 6 cases — records durable in a dead",
    "  writer's journal and not in the log are appended at the next open, in",
    "  the journal's order, never twice, and verify then passes; a live",
    "  writer's journal is left alone (verify: in flight); an altered record",
    "  and a dropped record are named by verify and not recovered; a record",
    "  rewritten with its hash recomputed still disagrees with the log; a torn",
    "  last record is ignored and the ones before it recovered. test_gateway:",
    "  a clean close leaves no journal (the scratch directory check fails on",
    "  one), a failed lane keeps it and the next open removes it without",
    "  appending twice. Unit suites: 36 of 36 with the journal; 35 of 36 with",
    "  the log at NORMAL (test_pragmas asserts FULL). The Docker crash suite",
    "  was not run: nothing was kept.",
    "- **Attempt 1, dropped: a journal appended to** (write + fdatasync at the",
    "  end of the file). Against main (4 runs each, load 23 to 68): ratio",
    "  0.783 (0.691-0.866) against 0.833 (0.737-0.892); CPU 261 against 224",
    "  us a call. An append changes the file's size, so each fdatasync also",
    "  commits the file system's journal (one at a time for the whole disk);",
    "  attempt 2, which avoids that, did no better, so that was not what held",
    "  it back.",
    "- **Attempt 2, dropped: the journal written ahead in zeros** (256 KiB at",
    "  a time, synced once) and records overwriting them in place, so that a",
    "  sync is a data flush only (the floor's own shape). Same set: ratio",
    "  0.738 (0.613-0.834), CPU 260. In a second set (load 14 to 18): 0.811",
    "  (0.493-1.136) against main's 1.089 (0.869-1.370), CPU 255 against 223.",
    "- **Attempt 3, dropped: one write a call** (a session's terminal entries",
    "  held in memory and written with its next dispatch): same second set,",
    "  ratio 0.676 (0.386-0.836), CPU 252.",
    "- **Attempt 4, dropped: attempts 2 and 3 with the shared log at",
    "  synchronous=NORMAL**, its WAL",
    "  synced only for a batch someone waits on (a session start, a denial, an",
    "  end: the synchronous appends) and before a session's journal goes, so",
    "  that the log's commits behind the calls cost no flush. Three sets",
    "  against main: 0.843 (0.791-0.865) against 0.834 (0.723-0.987), load 17",
    "  to 21; 0.907 (0.717-1.191) against 0.829 (0.755-0.876), load 69 to",
    "  150; 0.838 (0.725-0.893) against 0.888 (0.726-0.980), 6 runs each, load",
    "  24 to 49; 0.837 (0.794-0.874) against 0.843 (0.789-0.952), load 11 to",
    "  18. Pooled, 18 runs a side: 0.854 against 0.853. CPU 242, 277, 273, 276",
    "  against 214, 250, 244, 245: about 30 us a call more in every set.",
    "- **Attempt 5, dropped (a throwaway build, not committed): two or four",
    "  journals shared by all sessions**, group-committed (the first waiter",
    "  whose batch is open and finds a journal not flushing writes and syncs",
    "  the batch; another journal can flush beside it), with the log at",
    "  NORMAL: one flush per batch instead of per call, and no dispatch waits",
    "  for a flush of the file it would use. Set of load 61 to 150 (4 runs",
    "  each): two journals 0.749 (0.652-0.804), four 0.762 (0.706-0.809),",
    "  against attempt 4's 0.907 and main's 0.829; CPU 278 and 296 against",
    "  250. (Each flush woke every waiter: a batch's own wake-ups were not",
    "  tuned.)",
    "- **Why none reached it.** perf record on the gateway side alone",
    "  (attempt 4, `gateway_bench UPSTREAM 1000 20 gateway`): half of the process's samples in the kernel's interrupt",
    "  re-enable and the virtio doorbell (`pvm_irq_enable` 39%,",
    "  `iowrite16` 13%). This disk has a volatile write cache and no FUA",
    "  (`/sys/block/vda/queue`), so every durable write is a data write and a",
    "  cache flush, each a VM exit. A journal of each session's own pays that",
    "  per call, as the floor's clients do, on top of the gateway's own work;",
    "  the shared log pays it per batch of about five calls. With the two",
    "  cores saturated by the machine's other work in every run, the waiting",
    "  the journal removes was bought back in CPU: 30 us a call more, against",
    "  the 0 to 16 us by which main's CPU a call exceeded the floor's in",
    "  these sets.",
    "  Where the cores are idle and the disk is the bound (a quiet machine",
    "  with slow flushes) the journal could still pay; that was not available",
    "  to measure here.",
    "",
    "## Issue #30, 500 concurrent sessions",
    "",
    "- **The bound** is now an option, `--sessions-max N` for `console` and",
    "  `serve` (1 to 1024, the ceiling the engine's tables are sized by), by",
    "  default the host's memory over 32 MiB, at least 16: 753 on this 24 GiB",
    "  machine. It was a fixed 256.",
    "- **The console at 500 rows** (`bench/render_bench.c 500 400`, same run):",
    "  the sessions view's frame p50 151 us, p90 226 us, max 729 us, against",
    "  128 us p50 at 200 rows; the tools view 206 us p50 (89 at 200). Under",
    "  1 ms at 500.",
    "- **500 sessions for 2 minutes, agents that mostly wait** (`bench/run`'s",
    '  dense part: `SCALE_PACE_MS=5000 supervise_bench scale 500 120`, each',
    '  agent calling every 5 s, as one waiting on its model does; 2026-12-04,',
    "  other engineers' suites beside it, load average 19 to 66). Two runs.",
    '  Both: 500 of 500 running after 430 s (the daemon starts about one',
    "  container a second at that load; the start is not airlock's: creating",
    "  and starting are the daemon's), **0 missed leases, 0 sessions ended",
    '  early**, 32k and 35k calls and 633k and 703k lease pulses in the 2',
    '  minutes, worst lease ack round trip 1.09 and 1.06 s (no lease',
    '  failed), **engine 297 and 287 kB + watchdog 96 kB = 393 and',
    '  384 kB private a session** (goal 400). **Revoke on all 500 -> every',
    '  acknowledgement: 62.7 ms, then 42.3 ms** (p50 59.5 and 42.3: the acks',
    "  come together, after the cutover's policy entries are committed; goal",
    '  50 ms, met in the second run only). **Containers left: 7, then 0.** The',
    "  7 were the daemon's: 500 stops at once overran containerd's shims",
    '  ("shim disconnected", "failed to delete container from containerd: no',
    '  such container"), and the daemon then lists them "Removal In Progress"',
    '  until it restarts, while `docker rm -f` answers "No such container".',
    '  Since then the engine stops and removes at most 8 containers at once',
    "  (`SUPERVISOR_CLEANUP_PARALLEL`); the second run's shutdown left none.",
    '- **Three changes since, each measured alone** (2026-12-04, a quiet',
    "  machine): (1) *a revoke's posts*: an idle gate acknowledges on the",
    '  posting thread, and each acknowledgement woke the event readers and',
    "  the policy writer, which then took the supervisor's lock between",
    '  posts; a cutover now wakes both once, when it has posted to every',
    '  gate. 500 sessions: posted after 22.0 ms, **every acknowledgement',
    '  within 37.5 ms** (p50 22.3 ms); 100 sessions: 5.9 -> 2.6 ms. (2) *The',
    '  watchdog linked statically* (no loader, no relocated libc pages): 96',
    "  -> 55 kB private a session. (3) *The container's two admission",
    '  reports freed once recorded* (the audit, the summary and the',
    "  console's copy hold them; about 18 kB each): the engine's 298 -> 283",
    '  kB a session at 100 sessions. Together, at 100 sessions: 396 -> 339',
    '  kB private a session. All three together at 500 sessions: the next',
    '  item.',
    '- **A full `bench/run` with all three** (2026-12-04, from 17:22; its',
    '  report marked it as taken under load, since the 1-minute load average',
    "  was 4.60 at its start, left by this day's own scale runs; the table",
    '  above is the quiet run after it, next item). 500 sessions, agents calling',
    '  every 5 s: 500 of 500 running after 433 s; in the 2 minutes 0 missed',
    '  leases, 0 sessions ended early, worst lease ack 512 ms; **332 kB',
    '  private a session** (engine 277 + watchdog 55); **revoke on all 500:',
    '  every acknowledgement within 19.5 ms** (posted to every gate after',
    '  19.0 ms); 0 containers left. The sessions view at 500 rows: 124 us',
    '  p50, max 584 us. 250 sessions with agents calling every 200 ms: 0',
    '  missed, 0 ended early, 344 kB a session, the revoke posted after 44.3',
    "  ms (165k calls kept both cores busy). In the same run the pool's",
    '  claim -> first reply: **14.75 ms under runc** (0.028x `docker run',
    '  --rm -i`, 518 ms) **and 16.76 ms under runsc** (0.022x, 758 ms), p50',
    '  of 10 rounds.',
    '- **The quiet run, the table above** (2026-12-04 from 18:58, load average',
    "  0.59 at its start, nothing else running). The machine itself was slower",
    "  than on 12-01 throughout, baselines included: `docker run --rm -i` 575",
    '  against 192 ms to its first reply, a direct MCP client 165 against 81 us',
    '  of CPU a call; the ratios are what carries over. Every goal of #30 §1',
    '  and §2 held: the pool\'s claim -> first reply **16.20 ms under runc**',
    '  (0.028x) **and 19.79 ms under runsc** (0.023x); 500 sessions, 500 of',
    '  500 running after 427 s, in the 2 minutes **0 missed leases, 0 ended',
    '  early, 0 containers left**, worst lease ack 449 ms, **331 kB private a',
    '  session** (276 + 55), **revoke on all 500: the last ack after 16.1',
    '  ms**; the sessions view at 500 rows 122 us p50. The shared audit (§3):',
    '  0.82x the durable floor (goal 0.95x; reported with its attempts above).',
    "- **A whole update for one session** (`supervisor_update_json`, the",
    "  `cutover_idle` row) ran on a thread of its own, started for it; it now",
    "  runs on the caller's thread when it has one session. Three interleaved",
    '  runs of `supervise_bench cutover`, before -> after, p50: 398 -> 346, 314',
    '  -> 260, 252 -> 217 us. Most of what is left is the policy entry\'s',
    '  durable write.',
    '- **An earlier run with agents calling every 200 ms** (the 250-session',
    "  figure's workload) did not reach 500: after 446 s 338 of 500 ran; 381",
    "  agents' calls (96853 in 2 minutes) and their `docker-init`s, upstreams",
    '  and shims saturated both cores (load average near 100, 62% of CPU in',
    '  the kernel). With what ran: 0 missed leases, 0 sessions ended early,',
    '  worst lease ack 917 ms, engine 263 kB + watchdog 96 kB = 359 kB',
    '  private a session, 8 containers left in "Removal In Progress" (as',
    '  above).',
    "- **The daemon beside us**, private memory per container at 388",
    "  containers: the runc shim 2.8 MiB, dockerd 0.37 MiB, containerd",
    "  0.13 MiB, about 3.3 MiB a container against airlock's 0.36 MiB. Start",
    "  rate: about 2 sessions a second at first, slowing as the running",
    "  sessions' load grew.",
    "",
    "## Issue #29, an MCP agent's call through airlock-shim",
    "",
    "Goal: at most +50 us p50 per call through the shim against a raw bridge",
    "agent, in the same run (`bench/shim_bench.sh`, 1000 timed calls a side a",
    "round, raw / through the shim / on the parent's socket interleaved).",
    "",
    "- **Before** (2026-12-04, load average 2 to 4): raw bridge 286 and 281 us",
    "  p50, through the shim 393 and 402 us: +107 and +120 us (rounds +102 to",
    "  +131); p99 602 against 760 us, 580 against 723 us. The same client on",
    "  the parent's socket, no `--mcp` relay: 358 us, so about 44 us was the",
    "  relay's hop (agent pipe -> relay -> socket and back) and 77 us the",
    "  parent's.",
    "- **Attempts** (2026-12-05, each kept). This machine was shared with other",
    "  engineers' suites: load average 10 to over 200 while these ran, so one",
    "  round swings by 50 us or more. Each step was also measured without",
    "  Docker (a scripted engine answering at once; raw round trip 15.7 us",
    "  there), which is steadier:",
    "",
    "  | step | without Docker, shim p50 | Docker, added p50 per round |",
    "  |---|---|---|",
    "  | the old shim, same day | 82 to 98 us (its socket: 47 to 52) | +139, +138, +124 |",
    "  | 1. the agent reaped on SIGCHLD (blocked but in ppoll), not a wait4 each turn: 8 syscalls a call -> 6 | 84 to 86 us against 82 to 89: within noise | +100, +97, +125, +131, +135 (load 37 to 50) |",
    "  | 2. the `--mcp` child hands its stdin and stdout to the parent (SCM_RIGHTS) and waits: no relay hop | 46 to 57 us | +52, +63, +65, +111, +38; the `--mcp` and socket sessions now cost the same |",
    "  | 3. one parse of each bridge line, answers and bridge lines joined from printed pieces, not packed and printed again | 43 to 44 us against 45 to 49 | +27, +133, +41, +52, +142, +40, +128 (load 24 to 64); jansson per call: reply 3.8 -> 1.3 us, request 2.9 -> 2.3 us |",
    "",
    "- **After** (all three, two runs of 5 rounds, load average 13 to 22):",
    "  raw bridge 285 and 272 us p50, through the shim 357 and 338 us:",
    "  **+72 and +67 us** at the median of rounds (rounds +51, +57, +72,",
    "  +120, +127 and +33, +55, +67, +111, +112). p99: 614 against 680 us, 533",
    "  against 662 us. **Not met at the median**: about half the rounds are",
    "  within +33 to +57 us, the rest near +115, by session (in the same round",
    "  the socket session can be fast and the `--mcp` one slow, or the",
    "  reverse), which points at where the scheduler puts the four busy",
    "  processes on 2 cores rather than at the shim's own work.",
    "- **Where the rest goes** (`perf` on the parent without Docker): about 70%",
    "  of its CPU is in the kernel, most of that the guest's context switches",
    "  (`pvm_irq_enable` under `schedule`). Per call the parent sleeps and is",
    "  woken twice and makes six syscalls (ppoll, read, write each way); user",
    "  space is the other 30%, jansson about half of it. The design's floor is",
    "  those two extra wake-ups, about 15 us here (a pipe round trip).",
    "- **Not tried**: epoll instead of ppoll (four descriptors a client now: the",
    "  bridge, the listener, the client's stdin, its connection; registering",
    "  them is about 7% of the parent's CPU), a thread each way with blocking",
    "  reads (four syscalls a call, not six), busy polling (a core).",
    '- **Why rounds split in two** (2026-12-04, later, load average under',
    '  2). A one-byte pipe round trip between two processes here takes 16 us',
    '  on one vCPU and 23 us across both while they stay busy, but 94 us',
    "  across both when they are 300 us apart, as a call's wait for the",
    '  engine leaves them: waking an idle vCPU of this guest costs 35 to 45',
    '  us a wake-up. The shim adds two wake-ups to each call (agent -> shim,',
    '  shim -> agent), cheap when the scheduler keeps the two on one vCPU',
    '  and about 70 us more when it does not; the raw baseline itself moves',
    '  by up to 50 us between sessions. *Pinning the shim and its agent to',
    '  one vCPU* (`sched_setaffinity` in the parent, tried, not kept): 12',
    '  rounds each, interleaved, median **+68 us pinned, +67 us not**',
    "  (rounds -8 to +112 and +2 to +109): the split is not the pair's",
    '  placement alone. The first three rounds of the day without',
    '  pinning: +93, +90, +81 us. **Still not met**; the floor of this',
    '  design on this guest is those two wake-ups.',
    "- **Memory per session** (`/proc/PID/smaps_rollup`, after): the parent",
    "  124 to 132 kB Private_Dirty (Pss 508 to 516 kB, most of it its static",
    "  text, shared with the child), the `--mcp` child 52 to 60 kB (Pss 436 to",
    "  444 kB): about 185 kB private a session, as before.",
    "",
    '## Issue #30 §1, the warm pool: claim -> first reply',
    '',
    '`bench/start_bench` runs, interleaved per round, `docker run --rm -i`, a',
    'cold session, and a pooled session: a container launched beforehand as the',
    'pool launches one (`engine/sandbox/warm.h`, not timed), then `session_run` claiming',
    "it — payload read, the claim's second admission (the daemon's inspect and",
    "the image's), the audit entries, the upstream's spawn, the frame, the first",
    "call's reply. `sample: RT_pooled_first_reply` lines. Measured on this",
    'development machine (shared with other work, so the spread is wide),',
    '10 rounds under runc and 6 under runsc, one warm-up round each:',
    '',
    '| runtime | docker run --rm -i, first reply, p50 | cold session, p50 | pooled claim -> first reply, p50 (min–max) | pooled / docker run |',
    '|---|---|---|---|---|',
    '| runc | 471 ms | 216 ms | 12.96 ms (11.15–28.78) | 0.028 |',
    '| runsc | 768 ms | 603 ms | 20.31 ms (16.08–52.55) | 0.026 |',
    '',
    'The goal (≤ 20 ms p50, ≤ 0.05× docker run) holds under runc; under runsc',
    'the ratio holds and the p50 sat at the 20 ms line on a loaded machine (its',
    '4 quietest rounds: 16.1–23.9 ms). What is left of a claim is the second',
    "admission's two inspects and the upstream's start; the container's create",
    'and start, most of a cold start, happened while it was pooled.',
    '',
    "A second measurement on 2026-12-04 at 14:56, the other engineers' work",
    'done (load average falling from 9.5 to 7.4), 10 rounds each with the',
    'pooled container ready only once its lease was acknowledged: runc',
    '10.91 ms p50 (10.25–12.07) against `docker run --rm -i` 394 ms (0.028x),',
    'the cold session 196 ms; runsc 13.66 ms p50 (13.32–16.80) against 622 ms',
    '(0.022x), the cold session 401 ms. Both under 20 ms p50 and 0.05x.',
    "",
    '## Issue #28, consoles attached to `airlock serve`',
    '',
    '`bench/attach_bench.sh`, 200 live sessions (each agent calls every 200 ms),',
    "on 2026-12-04 on the 2-core machine above, other engineers' suites running",
    'beside it. First the embedded console with its own engine, then, in the',
    'same run, consoles attached to `airlock serve` over its socket and through',
    'ssh to a throwaway sshd on 127.0.0.1. Each round is `:revoke store all`',
    '(or restore) and `y`, timed from the `y` to the tools view showing',
    '"200/200 acked"; the screen is read every 10 ms, and a console draws at',
    'most four frames a second, so each figure carries up to 250 ms of frame',
    'wait.',
    '',
    '- **Keystroke -> every acknowledgement on screen** (6 rounds, p50 and',
    '  range): embedded 441 ms (382–512), on the socket 499 ms (425–846):',
    "  **1.13x**; through ssh 359 ms (353–397): 0.81x (the ssh console's",
    '  rounds came later in the run, when fewer starts competed). Goal',
    '  at most 1.2x: met.',
    '- **Engine CPU per attached console**: 29.2% of a core with no console',
    "  (the 200 agents' calls), +0.04% per console with 4 attached, within",
    '  the noise: a pushed snapshot is written once however many consoles',
    '  follow, and each console costs its send. Goal at most 1%: met.',
    '- **Bytes on the socket**: 912 kB/s to one console',
    '  (`airlock_control_bytes_sent_total` over 10 s): four full snapshots a',
    "  second of about 228 kB (1.1 kB a row), since the looping sessions'",
    '  counters change every frame. Fine on a local socket and through ssh on',
    '  a LAN, heavy for a console far away. **Since then, deltas**',
    '  (docs/operations.md, "Snapshot deltas"): after its first snapshot a',
    '  console gets what moved since the previous push, a merge patch per',
    '  changed row. Same bench, 200 sessions, 2026-12-04: **240 kB/s against',
    '  882 kB/s** in the full run before it (0.27x; a looping session\'s delta',
    '  is its counters, uptime and lease figures, about 300 of its 1100',
    '  bytes); engine CPU +0.04% of a core per attached console (4 attached),',
    '  the diff being made once a push however many consoles follow.',
    '- **Found on the way**: an engine whose last snapshot reader left while a',
    '  push was due polled with a zero timeout from then on (83% of a core,',
    '  measured); fixed, and `tests/docker/serve.sh` now leaves at that moment',
    '  and checks the engine sleeps.',
    "",
    "## Where a session's start goes", "",
    "- The daemon's start of the container is most of it (the `attaching` state: attach,",
    "  under a millisecond, then start). `docker run --network=none` gets a libnetwork",
    "  sandbox whose prestart hook re-executes dockerd twice (`libnetwork-setkey`,",
    "  `set-ipv6`), about 80 ms under runc and 115 ms under runsc. airlock's create",
    "  body sets `NetworkDisabled`: the daemon then gives the container a namespace of",
    "  its own with no sandbox and no hook, and ignores `NetworkMode` (kept at `none`",
    "  as the second layer; both are admission checks and both have mutants).",
    "- `creating` is the daemon's create; airlock's own steps (preflight, both",
    "  admissions, the upstream's spawn and handshake in `running`) are a few",
    "  milliseconds together.", ""]


def markdown(output, machine):
    rows = parse_bench(output)
    with open(machine, encoding="utf-8") as f:
        facts = [l.rstrip("\n") for l in f if l.strip()]
    out = ["# Performance, as measured", "",
           "Generated by `bench/report.py markdown` from the output of `bench/run`",
           "(a release build; every figure is the median over interleaved runs,",
           "baseline and airlock alternating, with min and max). Tests never",
           "assert a timing. Regenerate with `bench/run --doc`.", "",
           "## Machine and versions", ""]
    out += ["- " + l for l in facts]
    load = [l for l in facts if l.startswith("load average")]
    m = re.match(r"load average before the run: ([0-9.]+) .*\((\d+) cores\)", load[0]) if load else None
    if not m or float(m.group(1)) > int(m.group(2)):
        out += ["", "**Taken under load** (the load average before the run was above the core count, or not recorded): the",
                "timings are noisy and only good for a rough ratio; the instruction counts",
                "are not affected. Regenerate on a quiet machine before quoting a figure."]
    out += ["", "## Figures", "",
            "| figure | baseline | airlock | ratio | unit | runs |",
            "|---|---|---|---|---|---|"]
    for name, kv in rows:
        def cell(side):
            v = kv.get(side, "-")
            lo, hi = kv.get(side + "_min"), kv.get(side + "_max")
            return v if lo is None or lo == hi else "%s (%s–%s)" % (v, lo, hi)
        out.append("| %s | %s | %s | %s | %s | %s |" % (label_of(name), cell("baseline"),
                                                       cell("airlock"), kv.get("ratio", "-"),
                                                       kv.get("unit", ""), kv.get("runs", "")))
    out += ["", "## What each figure is", "",
            "- **gateway**: `bench/gateway_bench.c`; an agent line through parse, alias, policy,",
            "  audit and the fixture upstream, against a direct MCP client to the same upstream;",
            "  then 20 sessions at once on one audit database.",
            "- **instructions per call**: callgrind on the release build, instructions inside",
            "  `gateway_handle` (engine side, upstream process excluded) against `mcp_call`",
            "  of the direct client, divided by the calls made; it does not move with machine noise.",
            "- **start / exit**: `bench/start_bench.c`; `session_run` (preflight, create, two",
            "  admissions, watchdog, attach, start, frame, one call, cleanup with the removal",
            "  proven) against `docker run --rm -i` with the same hardening flags and image,",
            "  whose one request this program answers at once. airlock's container also has",
            "  `NetworkDisabled`, an API field the CLI cannot set (below). The states are",
            "  airlock's, each from its start to the next one's (running: the frame",
            "  written to the first reply).",
            "- **watchdog**: `bench/watchdog_bench.sh`; engine SIGKILL until the daemon reports",
            "  the container stopped, against `docker stop -t 0` through the CLI.",
            "- **cutover / concurrent sessions**: `bench/supervise_bench.c`; memory is private",
            "  (clean + dirty) from `/proc/PID/smaps_rollup`: the engine's growth divided by the",
            "  sessions, and the mean over the live watchdog processes.",
            "- **airlock-shim**: `bench/shim_bench.sh` with `bench/mcp_agent.c`; in each round",
            "  three sessions through `airlock run`, one image, the same alias and fixture",
            "  upstream: a bridge agent's K raw requests (the baseline), then the same",
            "  program as an MCP client of `/airlock/shim --mcp` under `/airlock/shim --`",
            "  (K tools/call), then that client on the parent shim's socket itself. Each",
            "  call is timed inside the container, request written to answer read; the",
            "  audit log and the sink are on a tmpfs. Memory: the parent shim's and the",
            "  `--mcp` child's `/proc/PID/smaps_rollup`, read by the agent in the container.",
            "- **console frame**: `bench/render_bench.c`; CPU per frame of each view against an",
            "  empty frame.",
            "- **sealed check**: `bench/sealed_bench.c`; a synthetic export (20000 files of 4 KiB",
            "  and a sealed directory) through `sealed_export_feed`/`_finish` and `sealed_judge`",
            "  in 64 KiB pieces, against a plain SHA-256 of the same bytes (the reader hashes",
            "  every byte); in memory, no daemon.", ""] + WHERE
    sys.stdout.write("\n".join(out))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "figures":
        figures(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "markdown":
        markdown(sys.argv[2], sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
