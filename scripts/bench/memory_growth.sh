#!/usr/bin/env bash
# Resident memory while profiling for long: `llmprof train` at profile.level=ops recording every
# cycle of the schedule until the run ends (schedule_repeat=0), RSS sampled from /proc every
# 0.2 s against the step the run has written. Prints the RSS after the first recording cycle
# was processed, the highest RSS after it and the growth; exits 1 when the growth is over the
# limit (default 50 MB).
#
#   scripts/bench/memory_growth.sh [--steps N] [--limit-mb N] [--config FILE] [--set key=value ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=2000 limit_mb=50 config=configs/quickstart.yaml
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift 2 ;;
    --limit-mb) limit_mb=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "memory_growth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "memory_growth.sh: build first (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-memory.XXXXXX)
trap 'rm -rf "$out"' EXIT
wait_steps=5 warmup=1 active=5
cycle=$((wait_steps + warmup + active))
$bin train --config "$config" --quiet --out "$out" --set output.name=run \
  --set profile.level=ops --set profile.schedule_repeat=0 --set profile.schedule_wait=$wait_steps \
  --set profile.schedule_warmup=$warmup --set profile.schedule_active=$active \
  --set schedule.max_steps="$steps" --set train.eval_interval=0 --set data.generated_chars=200000 \
  "${sets[@]}" >"$out/stdout" 2>"$out/stderr" &
pid=$!
# step written so far (rows of steps.csv minus the header) and RSS in kB, every 0.2 s
while kill -0 $pid 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  rows=$( (wc -l <"$out/run/steps.csv") 2>/dev/null || echo 1)
  [ -n "$rss" ] && echo "$((rows - 1)) $rss" >>"$out/samples"
  sleep 0.2
done
rc=0
wait $pid || rc=$?
[ $rc -eq 0 ] || { echo "memory_growth.sh: llmprof train exited $rc"; tail -5 "$out/stderr"; exit 1; }
echo "command: scripts/bench/memory_growth.sh --steps $steps --limit-mb $limit_mb --config $config ${sets[*]}"
echo "  schedule: wait $wait_steps, warmup $warmup, active $active, repeat until the end ($(( steps / cycle )) cycles)"
# Baseline: the first sample once the second cycle has begun (the first cycle was processed).
awk -v from=$((cycle + 1)) -v limit=$limit_mb '
  $1 >= from && base == "" {base = $2; base_step = $1}
  base != "" && $2 > top {top = $2; top_step = $1}
  END {
    if (base == "") {print "  too few steps for a second cycle"; exit 1}
    growth = (top - base) / 1024
    printf "  RSS after the first cycle (step %d): %.1f MB\n", base_step, base / 1024
    printf "  highest RSS after it (step %d): %.1f MB\n", top_step, top / 1024
    printf "  growth: %.1f MB (limit %d MB)\n", growth, limit
    exit growth > limit ? 1 : 0
  }' "$out/samples"
