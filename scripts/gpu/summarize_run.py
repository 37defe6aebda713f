#!/usr/bin/env python3
"""One line per llmprof run directory: median step time on the device and on the host (after
the first 10 steps), tokens/s, MFU with where its peak came from, GPU idle split. Used by
scripts/gpu/run_device.sh:  python3 scripts/gpu/summarize_run.py NAME RUN_DIR"""
import csv
import json
import statistics
import sys


def median_col(rows, col):
    vals = [float(r[col]) for r in rows[10:] if r.get(col) not in (None, "")]
    return round(statistics.median(vals), 3) if vals else None


def main():
    name, run = sys.argv[1], sys.argv[2]
    s = json.load(open(f"{run}/summary.json"))
    rows = list(csv.DictReader(open(f"{run}/steps.csv")))
    mfu = s.get("mfu") or {}
    value = mfu.get("value")
    value = value.get("median") if isinstance(value, dict) else value
    idle = (s.get("gpu") or {}).get("idle") or {}
    print(f"{name:<24} step {median_col(rows, 'step_ms')} ms (device {median_col(rows, 'gpu_step_ms')}, "
          f"host {median_col(rows, 'host_step_ms')})  {median_col(rows, 'tokens_per_s')} tok/s  "
          f"MFU {value if value is None else round(value, 4)} ({mfu.get('peak_source')})  "
          f"busy {idle.get('busy_fraction')} host-bound {idle.get('host_bound_ms')} ms "
          f"data-bound {idle.get('data_bound_ms')} ms sync-bound {idle.get('sync_bound_ms')} ms  "
          f"loss {rows[-1].get('loss') if rows else None}")


if __name__ == "__main__":
    main()
