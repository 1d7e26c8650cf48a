#!/usr/bin/env python3
"""jfr_compare.py - check a flamesidecar profile against the JVM's own JFR view.

Reads our folded output of a window (`flamesidecar run ... -o x.svg` writes
x.folded) and JFR's execution samples of the same window (a .jfr recording
made with `jcmd <pid> JFR.start settings=profile`, or the text that
`jfr print --events jdk.ExecutionSample,jdk.NativeMethodSample` prints), and
reports:

  edge share      Java->Java caller/callee edges of our stacks, weighted by
                  our samples (each edge counted once per stack): the share
                  of that weight whose edge also occurs anywhere in JFR's
                  stacks.
  missing edges   edges carrying >= --missing-floor (1%) of our Java
                  samples that never occur in JFR.
  whole stacks    of our samples holding a Java frame (named, or
                  `Interpreter`), the share that reaches a thread entry: one
                  of the three root frames is start_thread, clone3,
                  thread_native_entry, JavaMain... (the first is often
                  `[libc.so.6]`: Debian's libc has no symbol for start_thread).
  named           Java frames named (class.method) against all frames that
                  are Java or could be (`Interpreter`, `[unknown]`); also
                  without the `Interpreter` frames (compiled code only).

Frame names are normalised to class.method on both sides: our suffixes
(`_[j]` `_[i]` `_[0]` `_[1]`) and JFR's argument lists and line numbers are
dropped, hidden-class addresses (`$$Lambda$14/0x...`) are removed.

Excluded from the edge check (JFR cannot see them): JFR samples a thread
only while it is in Java code (jdk.ExecutionSample) or in a native method
(jdk.NativeMethodSample), never while it runs inside the VM (class loading,
fillInStackTrace, Thread.yield, a runtime call from compiled code). A stack
whose last Java frame is followed by HotSpot VM code, or by other native
code while JFR never saw that method on top of a stack, is such a sample; an
edge that occurs only in such stacks is not checked, and its weight is
reported as "excluded". So is an edge into a compiled method's own leaf
frame (not inlined, not interpreted, nothing but kernel frames above it)
when JFR never sampled that method at all: JFR drops every sample whose top
compiled frame is in its prologue or epilogue (frame not walkable), where a
small method spends most of its time; those edges are listed as
"unwalkable". So is an edge JFR never recorded that lies, in our stacks, on
a call path into Unsafe.park (PARK below: JFR undersamples a thread's last
Java code before it parks), listed as "park_path". Hidden frames (lambda proxies `$$Lambda`,
java.lang.invoke forms, VarHandleGuards), which JFR leaves out of its stacks, are dropped
from ours and their caller joined to their callee.

Exit status: 0 every given threshold met, 1 one was not, 2 bad input.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

OUR_SUFFIX = re.compile(r"_\[(j|i|0|1|c|inl|int)\]$")
HIDDEN = re.compile(r"[./]0x[0-9a-fA-F]+")
LAMBDA_NUM = re.compile(r"\$\$Lambda\$\d+")
JAVA_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$|^<(init|clinit)>$")
# GCC clone suffixes that put dots into C symbol names (foo.part.0, bar.cold)
C_CLONE = {"part", "isra", "constprop", "cold", "lto_priv", "localalias", "llvm"}

THREAD_ENTRIES = {
    "start_thread", "clone3", "__clone3", "clone", "__clone",
    "thread_native_entry", "JavaMain", "ThreadJavaMain", "java_start",
    "_start", "__libc_start_main", "__libc_start_call_main",
}
WHOLE_DEPTH = 3
# JFR undersamples the Java code a thread runs just before it parks and
# just after it wakes: its sampler (JDK 17 jfrThreadSampler.cpp, as we read
# it) picks threads in state _thread_in_Java, then suspends them, and drops
# the sample when the thread has left Java meanwhile; a thread a few
# microseconds from Unsafe.park (a pool's idle loop) has most often done so. Measured on three runs of
# oracle-stacks.bats's JDK 17 jetty test (8 s at 199 Hz, our stacks whose
# thread was in Java against JFR's execution samples): the park paths of
# QueuedThreadPool$Runner.idleJobPoll, BlockingArrayQueue.poll,
# ReservedThread.reservedWait, SynchronousQueue.poll and
# TransferStack.transfer held 0.4-2.9% of ours and 0-0.8% of JFR's, 2-4x
# (idleJobPoll: 17 of ours, 1 of JFR's in all three runs), while the
# request path agreed (HttpChannel.handle 67-73% against 68-77%). So an
# edge JFR never recorded that lies, in our stacks, on a call path into
# Unsafe.park is listed as "park_path" and not checked; any other edge
# still is.
PARK = "jdk.internal.misc.Unsafe.park"
REPORT_MISSING = 40
# VarHandleGuards.guard_* are @Hidden too (JDK 17 source); JFR left all of
# them out of 2179 samples of jetty that went through them.
# Thread.runWith (JDK 21 and later) is @Hidden as well: JFR shows Thread.run
# calling the Runnable directly. So is AccessController.executePrivileged
# (JDK 17: `javap -v -p java.security.AccessController` lists
# jdk.internal.vm.annotation.Hidden on it): JFR shows doPrivileged calling
# the action's run. With -XX:+DebugNonSafepoints (on since the agent sets it)
# a pc inside its inlined body is named by its own scope, so it shows up in
# our stacks where JFR leaves it out (Derby's point lookups, 1.6%).
HIDDEN_FRAME = re.compile(r"\$\$Lambda\.|^java\.lang\.invoke\.(LambdaForm\$|\w+\$Holder\.|"
                          r"VarHandleGuards\.)|\$\$InjectedInvoker|^java\.lang\.Thread\.runWith$|"
                          r"^java\.security\.AccessController\.executePrivileged$")
UNNAMED_JAVA = {"Interpreter", "[unknown]", "Interpreter_[0]"}


def normalise(name):
    """class.method of a JFR or folded frame name; None if not Java-shaped."""
    name = OUR_SUFFIX.sub("", name)
    name = name.split("(", 1)[0].strip()
    name = HIDDEN.sub("", LAMBDA_NUM.sub("$$Lambda", name)).replace("/", ".")
    if not name or "::" in name or " " in name or name.startswith("["):
        return None
    parts = name.split(".")
    if len(parts) < 2:
        return None
    if parts[-1] in C_CLONE or any(p.isdigit() for p in parts):
        return None
    if not all(JAVA_IDENT.match(p) for p in parts):
        return None
    return name


def is_vm_frame(name):
    """A HotSpot frame: the thread that runs it is in VM state for JFR."""
    n = name.split("(", 1)[0]
    return ("::" in n or n.startswith(("JVM_", "jni_", "Unsafe_", "JVM"))
            or n in ("[libjvm.so]",))


class Folded:
    """Our folded stacks (root first; frame 0 is the process name)."""

    def __init__(self, lines, comm=None):
        self.stacks = []
        for line in lines:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                raise ValueError("not a folded line: %r" % line[:120])
            frames = stack.split(";")
            if comm and not re.match(re.escape(comm) + r"(-\d+)?$", frames[0]):
                continue
            self.stacks.append((frames, int(count)))


def parse_jfr_text(text):
    """Stacks (leaf first, normalised) from `jfr print` text output."""
    stacks, cur = [], None
    for line in text.splitlines():
        s = line.strip()
        if cur is None:
            if s.startswith("stackTrace = ["):
                cur = []
            continue
        if s == "]" or s.startswith("]"):
            stacks.append(cur)
            cur = None
        elif s != "...":
            cur.append(normalise(s.split(" line:", 1)[0]) or s)
    return stacks


def parse_jfr_json(text):
    """Stacks (leaf first) from `jfr print --json` output."""
    doc = json.loads(text)
    stacks = []
    for ev in doc.get("recording", {}).get("events", []):
        st = (ev.get("values") or {}).get("stackTrace") or {}
        frames = []
        for f in st.get("frames") or []:
            m = f.get("method") or {}
            cls = ((m.get("type") or {}).get("name") or "?").replace("/", ".")
            n = cls + "." + (m.get("name") or "?")
            frames.append(normalise(n) or n)
        stacks.append(frames)
    return stacks


def load_jfr(path, jfr_tool):
    if path.endswith(".jfr"):
        cmd = [jfr_tool, "print", "--stack-depth", "4096", "--events",
               "jdk.ExecutionSample,jdk.NativeMethodSample", path]
        text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    if text.lstrip().startswith("{"):
        return parse_jfr_json(text)
    return parse_jfr_text(text)


def jfr_edges(stacks):
    """Counter of (caller, callee) over JFR's stacks (leaf first)."""
    edges = collections.Counter()
    for st in stacks:
        for e in {(st[i + 1], st[i]) for i in range(len(st) - 1)}:
            edges[e] += 1
    return edges


def jfr_callees(theirs, caller, n=3):
    """What JFR saw the caller call, most samples first (for the report)."""
    got = sorted(((c, b) for (a, b), c in theirs.items() if a == caller), reverse=True)
    return ", ".join("%s (%d)" % (b, c) for c, b in got[:n]) or "nothing"


def analyse(folded, jfr_stacks, floor):
    """All figures of the report, as a dict."""
    jfr_tops = {st[0] for st in jfr_stacks if st}
    jfr_methods = {f for st in jfr_stacks for f in st}
    r = collections.Counter()
    edge_w = collections.Counter()        # edge -> weight in checkable places
    edge_vm = collections.Counter()       # edge -> weight only as last-before-VM
    edge_top = collections.Counter()      # edge -> weight only into an unwalkable top
    park_edges = set()                    # edges on a call path into Unsafe.park
    for frames, count in folded.stacks:
        r["samples"] += count
        norm = [normalise(f) for f in frames[1:]]
        # Hidden frames (lambda proxies, method-handle forms) are not in
        # JFR's stacks: join their caller to their callee.
        keep = [i for i, n in enumerate(norm) if not (n and HIDDEN_FRAME.search(n))]
        frames = frames[:1] + [frames[i + 1] for i in keep]
        norm = [norm[i] for i in keep]
        for f, n in zip(frames[1:], norm):
            if n:
                r["java_frames"] += count
                r["named_frames"] += count
            elif f in UNNAMED_JAVA or OUR_SUFFIX.sub("", f) in UNNAMED_JAVA:
                r["java_frames"] += count
                if not f.startswith("Interpreter"):
                    r["unknown_frames"] += count
        java_idx = [i for i, n in enumerate(norm) if n]
        if PARK in norm:
            cut = norm.index(PARK)
            park_edges.update((norm[i], norm[i + 1]) for i in range(cut)
                              if norm[i] and norm[i + 1])
        interp = any(f.startswith("Interpreter") for f in frames[1:])
        if not java_idx and not interp:
            continue
        r["java_samples"] += count
        # The root is the entry, or (libc without symbols for start_thread
        # and clone3) one of the next frames is: "[libc.so.6];thread_native_entry".
        if any(OUR_SUFFIX.sub("", f) in THREAD_ENTRIES for f in frames[1:1 + WHOLE_DEPTH]):
            r["whole_samples"] += count
        last = java_idx[-1] if java_idx else -1
        in_vm = False
        if last >= 0 and last + 1 < len(norm) and not frames[last + 2].endswith("_[k]"):
            # The leaf Java frame calls native code: the thread is in the VM
            # when that code is HotSpot's, or when JFR never saw a thread on
            # top of that method (a native method the VM implements, such as
            # Thread.yield, whose JVM_ frame a frameless leaf hid from us).
            in_vm = is_vm_frame(frames[last + 2]) or norm[last] not in jfr_tops
        # The leaf is a compiled method's own frame (not inlined, not
        # interpreted) that JFR never sampled anywhere: JFR drops a sample
        # whose top compiled frame is in its prologue or epilogue (HotSpot's
        # frame::safe_for_sender), where a small method spends most of its
        # samples, and we name those (their caller read from the stack).
        top = (last >= 0 and all(f.endswith("_[k]") for f in frames[last + 2:])
               and not re.search(r"_\[(i|0|inl|int)\]$", frames[last + 1])
               and norm[last] not in jfr_methods)
        seen = set()
        for i in range(len(norm) - 1):
            if norm[i] and norm[i + 1]:
                e = (norm[i], norm[i + 1])
                if e in seen:
                    continue
                seen.add(e)
                if in_vm:
                    edge_vm[e] += count
                elif top and i + 1 == last:
                    edge_top[e] += count
                else:
                    edge_w[e] += count
    # Only the weight of stacks JFR could have sampled is checked: a stack
    # whose thread is inside the VM (parking in Unsafe_Park, a VM call) is
    # invisible to JFR as a whole, so its edges count nowhere, not even
    # where the same edge also occurs in a checkable stack (that stack's
    # own weight is checked).
    excluded = {e: w for e, w in edge_vm.items() if e not in edge_w}
    excluded_top = {e: w for e, w in edge_top.items() if e not in edge_w}
    theirs = jfr_edges(jfr_stacks)
    # Edges JFR never recorded on the way into a park (see PARK): not
    # checked, listed with their weight.
    excluded_park = {e: w for e, w in edge_w.items() if e not in theirs and e in park_edges}
    for e in excluded_park:
        del edge_w[e]
    total = sum(edge_w.values())
    found = sum(w for e, w in edge_w.items() if e in theirs)
    base = r["java_samples"] or 1
    missing = sorted(((w, e) for e, w in edge_w.items()
                      if e not in theirs and w >= floor * base), reverse=True)
    jfr_saw = {a: jfr_callees(theirs, a) for _, (a, _b) in missing[:REPORT_MISSING]}
    return {
        "samples": r["samples"],
        "java_samples": r["java_samples"],
        "jfr_samples": len(jfr_stacks),
        "jfr_edges": len(theirs),
        "edges": len(edge_w),
        "edge_weight": total,
        "edge_share": found / total if total else 0.0,
        "excluded_edges": len(excluded),
        "excluded_weight": sum(excluded.values()),
        "excluded_top_edges": len(excluded_top),
        "excluded_top_weight": sum(excluded_top.values()),
        "excluded_top": sorted(((w / base, a, b) for (a, b), w in excluded_top.items()),
                               reverse=True)[:REPORT_MISSING],
        "excluded_park_edges": len(excluded_park),
        "excluded_park_weight": sum(excluded_park.values()),
        "excluded_park": sorted(((w / base, a, b) for (a, b), w in excluded_park.items()),
                                reverse=True)[:REPORT_MISSING],
        "missing": [(w / base, a, b) for w, (a, b) in missing],
        "jfr_callees": jfr_saw,
        "whole_share": r["whole_samples"] / base if r["java_samples"] else 0.0,
        "named_share": (r["named_frames"] / r["java_frames"]) if r["java_frames"] else 0.0,
        "named_compiled_share": (r["named_frames"] / (r["named_frames"] + r["unknown_frames"])
                                 if r["named_frames"] + r["unknown_frames"] else 0.0),
        "unmatched_top": sorted(((w / base, a, b) for (a, b), w in edge_w.items()
                                 if (a, b) not in theirs), reverse=True)[:10],
    }


def report(res, out):
    p = lambda *a: print(*a, file=out)
    p("samples        %d (holding a Java frame: %d); JFR samples %d, JFR edges %d"
      % (res["samples"], res["java_samples"], res["jfr_samples"], res["jfr_edges"]))
    p("edge_share     %.4f  (%d Java->Java edges, weight %d; excluded into-VM edges %d, weight %d)"
      % (res["edge_share"], res["edges"], res["edge_weight"], res["excluded_edges"],
         res["excluded_weight"]))
    if res["excluded_top_edges"]:
        p("unwalkable     %d edges, weight %d: into a compiled leaf JFR never sampled"
          % (res["excluded_top_edges"], res["excluded_top_weight"]))
        for share, a, b in res["excluded_top"]:
            p("  excluded %5.1f%%  %s -> %s" % (100 * share, a, b))
    if res["excluded_park_edges"]:
        p("park_path      %d edges, weight %d: on the way into a park, never in JFR"
          % (res["excluded_park_edges"], res["excluded_park_weight"]))
        for share, a, b in res["excluded_park"]:
            p("  excluded %5.1f%%  %s -> %s" % (100 * share, a, b))
    p("missing_edges  %d" % len(res["missing"]))
    for share, a, b in res["missing"][:REPORT_MISSING]:
        p("  missing %5.1f%%  %s -> %s" % (100 * share, a, b))
        if res["jfr_callees"].get(a):
            p("          JFR: %s calls %s" % (a.rsplit(".", 1)[-1], res["jfr_callees"][a]))
    p("whole_share    %.4f" % res["whole_share"])
    p("named_share    %.4f  (without Interpreter frames: %.4f)"
      % (res["named_share"], res["named_compiled_share"]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folded", required=True, help="our .folded output")
    ap.add_argument("--jfr", help=".jfr recording, or `jfr print` text/JSON output")
    ap.add_argument("--jfr-tool", default=os.environ.get("JFR_TOOL", "jfr"))
    ap.add_argument("--comm", help="only stacks whose process name is this")
    ap.add_argument("--missing-floor", type=float, default=0.01,
                    help="list edges with at least this share of Java samples (0.01)")
    ap.add_argument("--min-edge-share", type=float)
    ap.add_argument("--max-missing-edge", type=float,
                    help="fail if an edge of at least this share never occurs in JFR")
    ap.add_argument("--min-whole", type=float)
    ap.add_argument("--min-named", type=float)
    ap.add_argument("--min-java-samples", type=int, default=1)
    ap.add_argument("--json", help="write the figures as JSON here")
    a = ap.parse_args(argv)
    need_jfr = a.min_edge_share is not None or a.max_missing_edge is not None
    if need_jfr and not a.jfr:
        ap.error("edge thresholds need --jfr")
    try:
        with open(a.folded, encoding="utf-8", errors="replace") as f:
            folded = Folded(f, a.comm)
        jfr = load_jfr(a.jfr, a.jfr_tool) if a.jfr else []
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print("jfr_compare: %s" % e, file=sys.stderr)
        return 2
    if a.max_missing_edge is not None:
        a.missing_floor = a.max_missing_edge
    res = analyse(folded, jfr, a.missing_floor)
    report(res, sys.stdout)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    fails = []
    if res["java_samples"] < a.min_java_samples:
        fails.append("only %d samples hold a Java frame" % res["java_samples"])
    if a.jfr and need_jfr and not res["jfr_samples"]:
        fails.append("JFR recorded no execution samples")
    if a.min_edge_share is not None and res["edge_share"] < a.min_edge_share:
        fails.append("edge share %.4f < %.4f" % (res["edge_share"], a.min_edge_share))
    if a.max_missing_edge is not None and res["missing"]:
        fails.append("%d edges with >= %.1f%% of Java samples never occur in JFR"
                     % (len(res["missing"]), 100 * a.max_missing_edge))
    if a.min_whole is not None and res["whole_share"] < a.min_whole:
        fails.append("whole stacks %.4f < %.4f" % (res["whole_share"], a.min_whole))
    if a.min_named is not None and res["named_share"] < a.min_named:
        fails.append("named Java frames %.4f < %.4f" % (res["named_share"], a.min_named))
    for f in fails:
        print("FAIL %s" % f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
