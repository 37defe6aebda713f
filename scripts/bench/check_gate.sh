#!/usr/bin/env bash
# The CI gate's error rates on this machine, in one script: `llmprof check --ab` of two identical
# commands CHECKS times (a false failure is a "regression" verdict between them), and of a
# baseline against a candidate that is slower by construction (--candidate KEY=VALUE, default
# train.batch_size=5 against the baseline's 4: more work per step, the same everything else)
# CHECKS times, the two cases alternating check by check in one invocation; prints each verdict, the observed rates and the slowdown the
# candidate was measured at (the median over all its checks' ratios of medians).
#   scripts/bench/check_gate.sh [--checks 20] [--repetitions 8] [--bound 10] [--steps 12]
#                               [--candidate train.batch_size=5] [--cases "identical slower"]
# The gate is --max step_ms=+BOUND%. Goal (issue): identical configs never fail (20 of 20 pass or
# are inconclusive); a 1.15-1.25x slower candidate fails in at least 18 of 20.
set -euo pipefail
cd "$(dirname "$0")/../.."
checks=20 reps=8 bound=10 steps=12 candidate=train.batch_size=5 cases="identical slower"
while [ $# -gt 0 ]; do
  case "$1" in
    --checks) checks=$2; shift 2 ;;
    --repetitions) reps=$2; shift 2 ;;
    --bound) bound=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --candidate) candidate=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    *) echo "check_gate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=$PWD/build/llmprof
[ -x "$bin" ] || { echo "check_gate.sh: build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d /tmp/llmprof-check-gate.XXXXXX)
trap 'rm -rf "$work"' EXIT
base="$bin train --config configs/tiny_test.yaml --set schedule.max_steps=$steps --set train.eval_interval=0 --set profile.warmup_steps=2 --quiet"
# $1 label, $2 the candidate's --set, $3 the check's number: one A/B check, one line (verdict,
# ratio, interval).
run_check() {
  local label=$1 set=$2 i=$3 rc=0
  "$bin" check --ab "$base" "$base --set $set" \
    --repetitions "$reps" --max "step_ms=+$bound%" --format json --out "$work/$label-$i.json" \
    >/dev/null 2>"$work/$label-$i.log" || rc=$?
  python3 - "$work/$label-$i.json" "$label" "$i" "$rc" <<'PY'
import json, sys
path, label, i, rc = sys.argv[1:]
try:
    g = json.load(open(path))["gates"][0]
    iv = g["interval"] or {}
    print(f"{label:<10} {i:>3}  exit {rc}  {g['outcome']:<12} ratio {g['ratio']:.3f}  "
          f"[{iv.get('low', float('nan')):.3f}, {iv.get('high', float('nan')):.3f}]")
except Exception as e:
    print(f"{label:<10} {i:>3}  exit {rc}  no result ({e})")
PY
}
echo "gate: --max step_ms=+$bound%, $reps rounds per check, $checks checks per case, tiny_test.yaml $steps steps, candidate --set $candidate"
for c in $cases; do
  case "$c" in
    identical|slower) ;;
    *) echo "check_gate.sh: no case '$c' (identical, slower)" >&2; exit 2 ;;
  esac
done
# The cases alternate check by check, so both see the same stretches of a shared machine's load.
for ((i = 1; i <= checks; i++)); do
  for c in $cases; do
    case "$c" in
      identical) run_check identical train.batch_size=4 "$i" ;;
      slower) run_check slower "$candidate" "$i" ;;
    esac
  done
done
python3 - "$work" "$checks" <<'PY'
import glob, json, statistics, sys
work, checks = sys.argv[1], int(sys.argv[2])
def outcomes(label):
    rows = []
    for p in glob.glob(f"{work}/{label}-*.json"):
        try: rows.append(json.load(open(p))["gates"][0])
        except Exception: pass
    return rows
same, slow = outcomes("identical"), outcomes("slower")
if not same: same = []
if not slow: slow = []
count = lambda rows, o: sum(1 for g in rows if g["outcome"] == o)
print()
print(f"identical: {count(same,'fail')} of {len(same)} failed (false-failure rate "
      f"{count(same,'fail')/max(len(same),1):.0%}), {count(same,'pass')} passed, "
      f"{count(same,'inconclusive')} inconclusive")
ratios = [g["ratio"] for g in slow if g["ratio"]] or [float("nan")]
print(f"slower:    measured {statistics.median(ratios):.3f}x slower (median ratio of medians), "
      f"{count(slow,'fail')} of {len(slow)} failed, {count(slow,'inconclusive')} inconclusive, "
      f"{count(slow,'pass')} passed")
PY
