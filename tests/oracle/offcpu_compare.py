#!/usr/bin/env python3
"""offcpu_compare.py - our off-CPU profile of a JVM against JFR's wait events.

Reads our folded output of `flamesidecar run --event offcpu` (counts are
microseconds blocked) and a JFR recording of the same window holding the
wait events with their stacks (tests/oracle/offcpu.jfc: jdk.ThreadSleep,
jdk.JavaMonitorEnter, jdk.JavaMonitorWait, jdk.ThreadPark, jdk.SocketRead,
all with a 0 ms threshold), and reports:

  java share      of our off-CPU time, the part on stacks holding a Java
                  frame (the rest is VM threads: GC, compiler, VM thread).
  recorded share  of that Java time (less the "no event type" part below),
                  the part whose wait point (the
                  innermost --depth Java frames, normalised as in
                  jfr_compare.py: class.method, hidden frames dropped) is
                  also the wait point of a JFR wait event.
  in progress     Java time at a wait point JFR has an event type for but
                  did not record because the wait had not ended when the
                  recording did (JFR writes a wait event at its end: a
                  thread that waits for the whole window, the Finalizer,
                  a Timer's or JFR's own periodic thread, has none): such a
                  wait point counts as recorded when the JVM's own thread
                  dump at the window's end (--dump, `jcmd Thread.print`)
                  shows a thread WAITING, TIMED_WAITING or BLOCKED there.
  no event type   Java time at a wait point for which JFR has no event type
                  at all (a selector's epoll_wait, accept, the reference
                  handler's wait, signal dispatch: NO_EVENT below): listed
                  and left out of the recorded share's denominator, since no
                  recording could confirm or refute it.
  per wait point  ours and JFR's summed durations of the largest ones.

Exit status: 0 when the recorded share is at least --min-share (%), 1 when
not, 2 bad input.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jfr_compare import HIDDEN_FRAME, normalise  # noqa: E402

EVENTS = "jdk.ThreadSleep,jdk.JavaMonitorEnter,jdk.JavaMonitorWait,jdk.ThreadPark,jdk.SocketRead"
# Native methods threads wait in that no JFR event covers (JDK 17, 25).
NO_EVENT = re.compile(r"^(sun\.nio\.ch\.(EPoll\.wait|Net\.accept|Net\.poll|"
                      r"ServerSocketChannelImpl\.accept0|IOUtil\.drain)|"
                      r"java\.lang\.ref\.Reference\.waitForReferencePendingList|"
                      r"jdk\.internal\.misc\.Signal\.|java\.lang\.ProcessHandleImpl\.)")


def java_frames(frames):
    """The Java frames of a stack given leaf first, hidden ones dropped."""
    out = []
    for f in frames:
        n = normalise(f)
        if n and not HIDDEN_FRAME.search(n):
            out.append(n)
    return out


UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "min": 60e6, "h": 3600e6}


def parse_duration(text):
    """`jfr print` durations ("0.00882 ms", "1.2 s", "12 us") in us."""
    parts = text.split()
    try:
        return float(parts[0]) * UNITS.get(parts[1], 0.0) if len(parts) == 2 else 0.0
    except ValueError:
        return 0.0


def load_jfr(path, tool, depth):
    """(type, Java frames leaf first, us) of every wait event, the text of
    `jfr print` read as it comes (a server's recording holds 10^5 events:
    its JSON does not fit in a test's memory)."""
    cmd = [tool, "print", "--stack-depth", str(depth + 8), "--events", EVENTS, path]
    waits = []
    typ, us, frames, in_stack = None, 0.0, [], False
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace") as p:
        for line in p.stdout:
            if line.startswith("jdk.") and line.rstrip().endswith("{"):
                typ, us, frames, in_stack = line.split()[0], 0.0, [], False
            elif line.startswith("  duration = "):
                us = parse_duration(line.split("=", 1)[1])
            elif line.startswith("  stackTrace = ["):
                in_stack = True
            elif in_stack and line.startswith("  ]"):
                in_stack = False
            elif in_stack and line.startswith("    ") and line.strip() != "...":
                frames.append(line.strip().split("(", 1)[0])
            elif line.startswith("}") and typ:
                waits.append((typ, java_frames(frames), us))
                typ = None
    if p.returncode:
        raise ValueError("%s exited with %d" % (tool, p.returncode))
    return waits


def load_dump(path, depth):
    """Wait points of the threads a `jcmd Thread.print` shows waiting."""
    points, state, frames = set(), "", []

    def flush():
        if state.split(" ")[0] in ("WAITING", "TIMED_WAITING", "BLOCKED"):
            jf = java_frames(frames)
            if jf:
                points.add(tuple(jf[:depth]))

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith('"'):
                flush()
                state, frames = "", []
            elif line.strip().startswith("java.lang.Thread.State: "):
                state = line.split(":", 1)[1].strip()
            elif line.startswith("\tat "):
                frames.append(line[4:].strip().split("(", 1)[0])
    flush()
    return points


def load_folded(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack and count.isdigit():
                stacks.append((stack.split(";"), int(count)))
    return stacks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folded", required=True)
    ap.add_argument("--jfr", required=True)
    ap.add_argument("--jfr-tool", default="jfr")
    ap.add_argument("--dump", help="jcmd Thread.print output at the window's end")
    ap.add_argument("--depth", type=int, default=3, help="Java frames in a wait point")
    ap.add_argument("--min-share", type=float, default=90.0)
    ap.add_argument("--min-java-us", type=int, default=0,
                    help="fail unless this much of our time is on Java stacks")
    a = ap.parse_args()
    try:
        waits = load_jfr(a.jfr, a.jfr_tool, a.depth)
        ours = load_folded(a.folded)
        dump = load_dump(a.dump, a.depth) if a.dump else set()
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print("offcpu_compare: %s" % e, file=sys.stderr)
        return 2
    theirs = collections.Counter()
    kinds = collections.defaultdict(set)
    for typ, frames, us in waits:
        if frames:
            key = tuple(frames[:a.depth])
            theirs[key] += us
            kinds[key].add(typ.replace("jdk.", ""))
    total = java = excluded = hit = hit_dump = 0
    mine = collections.Counter()
    for frames, us in ours:
        total += us
        jf = java_frames(reversed(frames[1:]))  # ours are root first
        if not jf:
            continue
        java += us
        key = tuple(jf[:a.depth])
        mine[key] += us
        if NO_EVENT.search(jf[0]):
            excluded += us
        elif key in theirs:
            hit += us
        elif key in dump:
            hit_dump += us
    checked = java - excluded
    share = 100.0 * (hit + hit_dump) / checked if checked else 0.0
    print("JFR wait events: %d, %d wait points, %.0f us" %
          (len(waits), len(theirs), sum(theirs.values())))
    print("ours: %d us off-CPU, %d us on Java stacks (%.1f%%)" %
          (total, java, 100.0 * java / total if total else 0))
    print("no JFR event type: %d us (%.1f%% of Java)" %
          (excluded, 100.0 * excluded / java if java else 0))
    print("recorded share: %.1f%% of %d us (wait point: innermost %d Java frames): "
          "%.1f%% by JFR events, %.1f%% waits in progress at the end (thread dump)" %
          (share, checked, a.depth, 100.0 * hit / checked if checked else 0,
           100.0 * hit_dump / checked if checked else 0))
    print("%12s %12s  %-14s %s" % ("ours us", "JFR us", "JFR events", "wait point (leaf first)"))
    for key, us in mine.most_common(15):
        tag = ("no event type" if NO_EVENT.search(key[0]) else
               ",".join(sorted(kinds.get(key, ()))) or ("in progress" if key in dump else "-"))
        print("%12d %12.0f  %-14s %s" % (us, theirs.get(key, 0), tag[:14], " <- ".join(key)))
    for key, us in theirs.most_common(40):
        if key not in mine and us >= 0.01 * max(checked, 1):
            print("JFR only: %.0f us %s %s" % (us, ",".join(sorted(kinds[key])), " <- ".join(key)))
    if java < a.min_java_us:
        print("FAIL: %d us on Java stacks, expected >= %d" % (java, a.min_java_us))
        return 1
    if share < a.min_share:
        print("FAIL: recorded share %.1f%% < %.1f%%" % (share, a.min_share))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
