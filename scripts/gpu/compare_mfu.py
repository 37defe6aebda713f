#!/usr/bin/env python3
"""Interleaved rounds of two arms (run directories RUNS/A_1, RUNS/B_1, RUNS/A_2, ...): each run's
median MFU and step time (steps after the first 10), each round's B / A step-time ratio, and the
median over rounds. Used by scripts/gpu/run_device.sh fusednorm:
  python3 scripts/gpu/compare_mfu.py RUNS A B"""
import csv
import json
import os
import statistics
import sys


def figures(run):
    """(median MFU or None, median step ms or None) of one run directory."""
    try:
        s = json.load(open(f"{run}/summary.json"))
        rows = list(csv.DictReader(open(f"{run}/steps.csv")))
    except OSError:
        return None, None
    mfu = (s.get("mfu") or {}).get("value")
    mfu = mfu.get("median") if isinstance(mfu, dict) else mfu
    ms = [float(r["step_ms"]) for r in rows[10:] if r.get("step_ms") not in (None, "")]
    return mfu, statistics.median(ms) if ms else None


def main():
    runs, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
    ratios = []
    mfus = {a: [], b: []}
    rnd = 1
    while os.path.isdir(f"{runs}/{a}_{rnd}") or os.path.isdir(f"{runs}/{b}_{rnd}"):
        fa, fb = figures(f"{runs}/{a}_{rnd}"), figures(f"{runs}/{b}_{rnd}")
        for arm, (mfu, ms) in ((a, fa), (b, fb)):
            print(f"round {rnd} {arm:<10} MFU {mfu if mfu is None else round(mfu, 4)}  step {ms} ms")
            if mfu is not None:
                mfus[arm].append(mfu)
        if fa[1] and fb[1]:
            ratios.append(fb[1] / fa[1])
        rnd += 1
    for arm in (a, b):
        if mfus[arm]:
            print(f"{arm}: median MFU {statistics.median(mfus[arm]):.4f} over {len(mfus[arm])} runs")
    if ratios:
        print(f"step time {b} / {a}: median {statistics.median(ratios):.4f} over {len(ratios)} rounds "
              f"({', '.join(f'{r:.4f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
