#!/usr/bin/env python3
"""Two llmprof runs of the same config, seed and batches that differ in how part of the step is
computed (model.fused_loss, model.fused_norm): the loss at step 1 (same weights, same batch: only
that arithmetic differs) and along the run (the gradients differ too). Exits 1 when step 1 differs by more than
1e-4 relative or a later step by more than 1e-2 (GPU kernels are not bit-reproducible run to run).
Used by scripts/gpu/run_device.sh:  python3 scripts/gpu/compare_losses.py RUN_A RUN_B"""
import csv
import sys


def losses(run):
    return [float(r["loss"]) for r in csv.DictReader(open(f"{run}/steps.csv"))]


def main():
    a, b = losses(sys.argv[1]), losses(sys.argv[2])
    n = min(len(a), len(b))
    if n == 0:
        print("compare_losses: no steps")
        return 1
    rel = [abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a[:n], b[:n])]
    worst = max(range(n), key=lambda i: rel[i])
    print(f"compare_losses: {n} steps; step 1 {a[0]:.6f} vs {b[0]:.6f} (rel {rel[0]:.2e}); "
          f"last {a[n - 1]:.6f} vs {b[n - 1]:.6f}; worst rel {rel[worst]:.2e} at step {worst + 1}")
    ok = rel[0] <= 1e-4 and max(rel) <= 1e-2
    print("compare_losses: " + ("same loss" if ok else "DIFFERENT"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
