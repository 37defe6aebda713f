#!/usr/bin/env bash
# Step-time benchmark: ms/step of the quick-start config at profile.level=off and =phases, and of
# the bare LibTorch loop of the same model (the floor), interleaved over repetitions in one run;
# prints medians, the ratios, tokens/s and MFU. Then the same for a small dispatch-bound shape.
#
#   scripts/bench/step.sh [--repetitions N] [--steps N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=3 steps=150 threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --repetitions) reps=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "step.sh: unknown argument $1 (use --repetitions N, --steps N, --threads N)" >&2; exit 2 ;;
  esac
done
bin=build/llmprof bare=build/llmprof_bare_loop
[ -x $bin ] && [ -x $bare ] || { echo "step.sh: build first (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
field() { awk -v k="$1" -F': *' '$1==k {print $2}' | awk '{print $1}'; }

# $1 label, $2 bare-loop args, $3... llmprof --set overrides
bench_shape() {
  local label=$1 bare_args=$2; shift 2
  local sets=(--set threads=$threads --set schedule.max_steps=$steps --set train.eval_interval=0
              --set profile.warmup_steps=10 --set data.generated_chars=200000 "$@")
  : >"$out/off" ; : >"$out/phases" ; : >"$out/bare" ; : >"$out/tok" ; : >"$out/mfu"
  for r in $(seq 1 "$reps"); do
    $bare $bare_args threads=$threads steps=$steps warmup=10 | sed 's/.*median_ms=\([0-9.]*\).*/\1/' >>"$out/bare"
    for level in off phases; do
      res=$($bin train --config configs/quickstart.yaml --quiet --out "$out/runs" \
              --set output.name=$label-$level-$r --set profile.level=$level "${sets[@]}")
      echo "$res" | field "step time" >>"$out/$level"
      if [ $level = phases ]; then
        echo "$res" | field "throughput" >>"$out/tok"
        echo "$res" | field "MFU" | tr -d '%' >>"$out/mfu"
      fi
    done
  done
  local b o p
  b=$(median <"$out/bare") o=$(median <"$out/off") p=$(median <"$out/phases")
  echo "== $label ($reps repetitions x $steps steps, $threads threads, medians of per-run medians)"
  printf '  bare loop        %8.3f ms/step\n' "$b"
  printf '  llmprof off      %8.3f ms/step   off/bare    %.4f\n' "$o" "$(ratio "$o" "$b")"
  printf '  llmprof phases   %8.3f ms/step   phases/off  %.4f   phases/bare %.4f\n' "$p" \
    "$(ratio "$p" "$o")" "$(ratio "$p" "$b")"
  printf '  phases: %s tokens/s, MFU %s%%\n' "$(median <"$out/tok")" "$(median <"$out/mfu")"
}

echo "command: scripts/bench/step.sh --repetitions $reps --steps $steps --threads $threads"
bench_shape quick "n_layer=4 n_head=4 n_embd=128 block_size=64 batch_size=12"
bench_shape small "n_layer=2 n_head=4 n_embd=64 block_size=32 batch_size=4" \
  --set model.n_layer=2 --set model.n_embd=64 --set model.block_size=32 --set train.batch_size=4
