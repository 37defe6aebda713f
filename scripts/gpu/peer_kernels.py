#!/usr/bin/env python3
"""Kernel time per step, by kernel name, of llmprof next to a peer: A is an llmprof run directory
(kernels.csv, already per step), B a torch.profiler Chrome trace of N steps (kernel events summed
and divided by N). Prints both totals and the kernels whose per-step time differs most, so that a
gap between two programs of the same model points at the kernels that make it.
Used by scripts/gpu/run_device.sh peerkernels:
  python3 scripts/gpu/peer_kernels.py LLMPROF_RUN_DIR PEER_TRACE.json STEPS"""
import csv
import json
import re
import sys
from collections import defaultdict


def short(name):
    """The kernel's name with its template arguments, without its argument list."""
    name = name.replace("(anonymous namespace)::", "").replace("void ", "", 1)
    depth = 0
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if c == "(" and depth == 0:
            name = name[:i]
            break
    return re.sub(r"\s+", " ", name)[:150]


def main():
    run, trace, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ours = defaultdict(float)
    for k in csv.DictReader(open(f"{run}/kernels.csv")):
        ours[short(k["kernel"])] += float(k["total_us"]) / 1000
    theirs = defaultdict(float)
    events = json.load(open(trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    for e in events:
        if e.get("cat") == "kernel":
            theirs[short(e["name"])] += float(e.get("dur", 0)) / 1000 / steps
    print(f"kernel ms per step: llmprof {sum(ours.values()):.2f}, peer {sum(theirs.values()):.2f}")
    names = set(ours) | set(theirs)
    rows = sorted(names, key=lambda n: -abs(ours.get(n, 0) - theirs.get(n, 0)))
    print(f"{'llmprof':>8} {'peer':>8} {'diff':>8}  kernel")
    for n in rows[:25]:
        a, b = ours.get(n, 0.0), theirs.get(n, 0.0)
        print(f"{a:8.3f} {b:8.3f} {a - b:+8.3f}  {n}")


if __name__ == "__main__":
    main()
