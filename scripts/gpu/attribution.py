#!/usr/bin/env python3
"""How much of a GPU run's kernel time llmprof attributed, from its run directory (kernels.csv,
modules.csv, steps.csv; all per step): the share of kernel time with an owning op and with a
module scope, the kernel time of the top-level scopes per pass next to the device's phase time
(scopes nest: only blocks and the scopes outside them are summed), the counted FLOPs against the
analytic model (summary.json), and the largest unattributed kernels.
Used by scripts/gpu/run_device.sh:  python3 scripts/gpu/attribution.py RUN_DIR"""
import csv
import json
import sys
from collections import defaultdict

UNATTRIBUTED = "(unattributed)"


def main():
    run = sys.argv[1]
    kernels = list(csv.DictReader(open(f"{run}/kernels.csv")))
    total = sum(float(k["total_us"]) for k in kernels)  # per step, averaged over its windows
    steps = max((int(k["steps"]) for k in kernels), default=0)
    with_op = sum(float(k["total_us"]) for k in kernels if k["owning_op"] != UNATTRIBUTED)
    with_scope = sum(float(k["total_us"]) for k in kernels if k["owning_scope"] != UNATTRIBUTED)
    print(f"kernels: {len(kernels)} rows, {total / 1000:.2f} ms per step over {steps} steps; "
          f"with an owning op {with_op / max(total, 1e-9):.1%}, with a module scope "
          f"{with_scope / max(total, 1e-9):.1%}")
    per_pass = defaultdict(float)
    for m in csv.DictReader(open(f"{run}/modules.csv")):
        top_level = m["scope"] == "block" or m["block"] == ""
        if top_level and m.get("gpu_ms") not in (None, ""):
            per_pass[m["pass"]] += float(m["gpu_ms"])
    steps_rows = list(csv.DictReader(open(f"{run}/steps.csv")))[10:]
    def phase(name):
        vals = sorted(float(r[name]) for r in steps_rows if r.get(name) not in (None, ""))
        return f"{vals[len(vals) // 2]:.2f}" if vals else "-"
    print("kernel ms per step in top-level scopes: " +
          ", ".join(f"{p} {ms:.2f} (device phase {phase('gpu_' + p + '_ms')})"
                    for p, ms in sorted(per_pass.items())))
    flops = json.load(open(f"{run}/summary.json")).get("flops") or {}
    print(f"counted / analytic FLOPs: {flops.get('counted_vs_analytic_ratio')} "
          f"(counted matmul {flops.get('counted_matmul_per_step')}, analytic "
          f"{flops.get('analytic_per_step')} per step)")
    lost = sorted((k for k in kernels if k["owning_op"] == UNATTRIBUTED),
                  key=lambda k: -float(k["total_us"]))
    for k in lost[:5]:
        print(f"  unattributed: {float(k['total_us']) / 1000:.3f} ms/step  {k['kernel'][:90]}")


if __name__ == "__main__":
    main()
