#!/usr/bin/env bash
# Profiler overhead of a data-parallel run: 2 local ranks (one thread each, started with a
# torchrun-style environment) at profile.level=phases against off, interleaved over repetitions
# (the order alternates), each repetition's ms/step the median of the merged steps.csv's global
# step (the slowest rank) after the warm-up; prints the median of the paired ratios
# phases/off with a distribution-free 95% interval for that median (order statistics).
#
#   scripts/bench/ddp_overhead.sh [--config FILE] [--repetitions N] [--steps N]
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/quickstart.yaml reps=20 steps=40
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --repetitions) reps=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "ddp_overhead.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "ddp_overhead.sh: build first (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-ddp-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# run_pair LEVEL NAME: two ranks to the end; prints the median global step ms after step 5.
run_pair() {
  local level=$1 name=$2 port=$((20000 + RANDOM % 20000)) pids=() r
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
      timeout 600 $bin train --config "$config" --quiet --set output.dir="$out" \
      --set output.name="$name" --set profile.level="$level" --set threads=1 \
      --set schedule.max_steps="$steps" --set train.eval_interval=0 --set ddp.timeout_s=60 \
      >"$out/$name.$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { cat "$out/$name".*.log >&2; exit 1; }; done
  awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "step_ms") c = i; next}
           $1 > 5 {print $c}' "$out/$name/steps.csv" | median
}
for r in $(seq 1 "$reps"); do
  if [ $((r % 2)) -eq 1 ]; then order="off phases"; else order="phases off"; fi
  for level in $order; do run_pair "$level" "$level-$r" >>"$out/$level.ms"; done
done
echo "command: scripts/bench/ddp_overhead.sh --config $config --repetitions $reps --steps $steps"
paste "$out/phases.ms" "$out/off.ms" | awk '{print $1 / $2}' | sort -g >"$out/ratios"
n=$(wc -l <"$out/ratios")
awk -v n="$n" '{a[NR] = $1} END {
  lo = int(n / 2 - 0.98 * sqrt(n)); hi = int(n / 2 + 1 + 0.98 * sqrt(n) + 0.999)
  if (lo < 1) lo = 1; if (hi > n) hi = n
  m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  printf "  phases / off, 2 ranks: x%.4f (95%% interval of the median x%.4f .. x%.4f, %d paired repetitions; goal <= x1.02)\n", m, a[lo], a[hi], n
}' "$out/ratios"
printf "  off median %.3f ms/step, phases median %.3f ms/step\n" "$(median <"$out/off.ms")" "$(median <"$out/phases.ms")"
