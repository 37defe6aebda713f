#!/usr/bin/env bash
# Runtime set-up benchmark: ms/step of the quick-start config with llmprof's defaults (OpenMP
# OpenBLAS through the binary's RPATH + malloc tuning) against what a plain LibTorch program gets
# on Debian: the system's pthread OpenBLAS (forced here with LD_PRELOAD, which wins over RPATH)
# and/or glibc's default malloc thresholds (runtime.malloc_tuning=false).
#
#   scripts/bench/runtime.sh [--steps N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=100 threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "runtime.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "runtime.sh: build first (scripts/build.sh)" >&2; exit 2; }
pthread_dir=/usr/lib/x86_64-linux-gnu/openblas-pthread
out=$(mktemp -d /tmp/llmprof-runtime.XXXXXX)
trap 'rm -rf "$out"' EXIT

run() {  # $1 label, $2 LD_PRELOAD value, $3 malloc_tuning
  local res ms faults
  res=$(env ${2:+LD_PRELOAD=$2} $bin train --config configs/quickstart.yaml --quiet --out "$out" \
          --set output.name=$1 --set threads=$threads --set schedule.max_steps=$steps \
          --set train.eval_interval=0 --set data.generated_chars=200000 \
          --set runtime.malloc_tuning=$3)
  ms=$(echo "$res" | awk -F': *' '$1=="step time" {print $2}' | awk '{print $1}')
  # median minor faults per step from summary.json (no jq needed)
  faults=$(tr -d '\n ' <"$out/$1/summary.json" | sed 's/.*"minor_faults_per_step":{[^}]*"median":\([0-9.e+-]*\).*/\1/')
  blas=$(tr -d '\n ' <"$out/$1/env.json" | sed 's/.*"parallel":"\([a-z]*\)".*/\1/')
  printf '  %-34s %8.2f ms/step   blas=%-8s minor faults/step %s\n' "$1" "$ms" "$blas" "$faults"
  echo "$ms" >"$out/$1.ms"
}

echo "command: scripts/bench/runtime.sh --steps $steps --threads $threads"
run default "" true
run no_malloc_tuning "" false
if [ -e $pthread_dir/libopenblas.so.0 ]; then
  pre="$pthread_dir/libopenblas.so.0:$pthread_dir/libblas.so.3"
  run pthread_blas "$pre" true
  run pthread_blas_no_malloc_tuning "$pre" false
  awk -v a="$(cat "$out/pthread_blas_no_malloc_tuning.ms")" -v b="$(cat "$out/default.ms")" \
    'BEGIN {printf "  plain Debian set-up / llmprof default: %.2fx\n", a / b}'
else
  echo "  (libopenblas0-pthread not installed: the pthread BLAS rows are skipped)"
fi
