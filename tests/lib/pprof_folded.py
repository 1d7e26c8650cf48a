#!/usr/bin/env python3
"""pprof_folded.py - folded stacks back from what `go tool pprof` prints, so
tests can compare a pprof profile with the folded file it was made from
using pprof's own reader.

  go tool pprof -raw FILE | pprof_folded.py raw
      exact folded text: each frame's system name (the folded name with its
      kind suffix) where pprof shows one, else its name; counts from the
      first sample value (samples/count)
  go tool pprof -traces -sample_index=samples FILE | pprof_folded.py traces
      names as pprof shows them; an inlined frame gets "_[i]" back

Output: "stack count" lines, equal stacks summed, sorted (LC_ALL=C order).
"""
import re
import sys
from collections import defaultdict


def emit(stacks):
    for stack in sorted(stacks, key=lambda s: s.encode()):
        print(f"{stack} {stacks[stack]}")


def from_raw(text):
    lines = text.splitlines()
    samples, locs = [], {}
    section, cur = None, None
    for line in lines:
        if line in ("Samples:", "Locations", "Mappings") or line.startswith("Locations"):
            section = line.split()[0].rstrip(":")
            continue
        if section == "Samples":
            m = re.match(r"^\s+(\d+)\s+(-?\d+):((?: \d+)*)\s*$", line)
            if m:
                samples.append((int(m.group(1)), [int(x) for x in m.group(3).split()]))
        elif section == "Locations":
            m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*)$", line)
            if m:
                cur = int(m.group(1))
                locs[cur] = [frame_name(m.group(2))]
            elif cur is not None and line.strip():
                locs[cur].append(frame_name(line.strip()))
    stacks = defaultdict(int)
    for count, ids in samples:
        frames = []
        for i in ids:  # leaf first; lines innermost first
            frames.extend(locs[i])
        stacks[";".join(reversed(frames))] += count
    return stacks


def frame_name(s):
    # "NAME FILE:LINE s=START(SYSTEM NAME)" or "NAME FILE:LINE s=START"
    m = re.match(r"^(.*) \S*:\d+ s=\d+(?:\((.*)\))?$", s)
    if not m:
        raise SystemExit(f"pprof_folded.py: cannot parse location line: {s!r}")
    return m.group(2) if m.group(2) is not None else m.group(1)


def from_traces(text):
    stacks = defaultdict(int)
    frames, count = None, 0
    for line in text.splitlines() + ["-----------+"]:
        if line.startswith("-----------+"):
            if frames:
                stacks[";".join(reversed(frames))] += count
            frames, count = [], 0
            continue
        if frames is None or len(line) < 13 or line[10:13] != "   ":
            continue  # header, or a label line ("  process:  java")
        value, name = line[:10].strip(), line[13:]
        if value:
            count = int(value)
        if name.endswith(" (inline)"):
            name = name[: -len(" (inline)")] + "_[i]"
        frames.append(name)
    return stacks


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    data = sys.stdin.read()
    if mode == "raw":
        emit(from_raw(data))
    elif mode == "traces":
        emit(from_traces(data))
    else:
        raise SystemExit("usage: pprof_folded.py raw|traces < pprof output")
