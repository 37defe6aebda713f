#!/usr/bin/env bash
# The CI gate of llmprof itself: trains configs/ci_smoke.yaml and checks its deterministic figures
# against the committed baseline tests/check/ci_smoke_baseline/ with `llmprof check` (docs/ci.md):
# parameters, analytic and counted FLOPs and op calls per step exactly, the loss at steps 1 and 20
# within a tolerance (one thread, one seed: the same on one machine; the tolerance covers another
# CPU's kernels), peak RSS within +25%. Timing is not gated here (CI machines are shared).
#   scripts/ci_gate.sh            # exit 0 pass, 3 regression, 4 inconclusive, 2 bad input
#   scripts/ci_gate.sh --update   # after an intended change: refresh the baseline (commit it)
# $LLMPROF (default build/llmprof) is the binary; the JUnit report goes to $CI_GATE_JUNIT if set.
set -euo pipefail
cd "$(dirname "$0")/.."
llmprof=${LLMPROF:-build/llmprof}
baseline=tests/check/ci_smoke_baseline
work=$(mktemp -d "${TMPDIR:-/tmp}/llmprof-ci-gate.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$llmprof" train --config configs/ci_smoke.yaml --set "output.dir=$work" \
     --set output.name=ci-smoke --quiet >"$work/train.log" 2>&1; then
  tail -n 5 "$work/train.log" >&2
  echo "ci_gate: the smoke run failed" >&2
  exit 1
fi
if [ "${1:-}" = "--update" ]; then
  rm -rf "$baseline"
  mkdir -p "$baseline"
  # What check reads: the summary, the steps, the ops; the environment says where it was made.
  cp "$work"/ci-smoke/{summary.json,steps.csv,ops.csv,config.yaml,env.json} "$baseline"/
  echo "ci_gate: baseline refreshed in $baseline (commit it)"
  exit 0
fi
gates=(--within parameters=0 --within flops_per_step=0 --within counted_flops_per_step=0
       --within op_calls_per_step=0 --within loss@1=1e-4 --within loss@20=2e-3
       --max peak_rss_bytes=+25% --max step_ms=+5%)
args=("$baseline" "$work/ci-smoke" "${gates[@]}")
[ -n "${CI_GATE_JUNIT:-}" ] && "$llmprof" check "${args[@]}" --format junit --out "$CI_GATE_JUNIT" >/dev/null 2>&1 || true
exec "$llmprof" check "${args[@]}"
