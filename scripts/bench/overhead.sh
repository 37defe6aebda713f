#!/usr/bin/env bash
# Profiler overhead: ms/step of the same config at each profile.level (off, phases, modules, ops,
# and ops with profile.record_view_ops=true: view/metadata ops timed rather than counted),
# every step recorded (schedule wait 0, active = all steps), interleaved over repetitions in one
# run; medians and ratios to `off` (also the median of each repetition's ratio), plus the
# trace's size per event and the post-processing time.
#
#   scripts/bench/overhead.sh [--config FILE] [--repetitions N] [--steps N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/quickstart.yaml reps=3 steps=80 threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --repetitions) reps=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "overhead.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "overhead.sh: build first (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-overhead.XXXXXX)
trap 'rm -rf "$out"' EXIT
levels="off phases modules ops ops_views"
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
json_num() {  # json_num FILE KEY: the first number after "KEY": in a pretty-printed JSON file
  grep -m1 "\"$2\":" "$1" | sed 's/.*: *\([-0-9.e+]*\).*/\1/'
}
# Each repetition starts one level further along (off first, then phases first, ...), so that
# no level always runs first or right after the slow post-processing of ops_views: with `off`
# always first, it came out 5% slower than `phases` over 7 repetitions on this host.
read -r -a level_list <<<"$levels"
n_levels=${#level_list[@]}
for r in $(seq 1 "$reps"); do
  for i in $(seq 0 $((n_levels - 1))); do
    level=${level_list[$(((i + r - 1) % n_levels))]}
    views=false profile_level=$level
    [ "$level" = ops_views ] && views=true profile_level=ops
    res=$($bin train --config "$config" --quiet --out "$out" --set output.name=$level-$r \
      --set profile.level=$profile_level --set profile.record_view_ops=$views --set threads=$threads --set schedule.max_steps=$steps \
      --set schedule.warmup_steps=5 --set train.eval_interval=0 --set profile.warmup_steps=5 \
      --set profile.schedule_wait=0 --set profile.schedule_warmup=2 \
      --set profile.schedule_active=$steps --set data.generated_chars=200000)
    echo "$res" | awk -F': *' '$1=="step time" {print $2}' | awk '{print $1}' >>"$out/$level.ms"
  done
done
echo "command: scripts/bench/overhead.sh --config $config --repetitions $reps --steps $steps --threads $threads"
off=$(median <"$out/off.ms")
for level in $levels; do
  m=$(median <"$out/$level.ms")
  # Also the median of the paired ratios: each repetition's run over that repetition's `off` run,
  # minutes closer in time than the medians are, so less exposed to the host drifting.
  paired=$(paste "$out/$level.ms" "$out/off.ms" | awk '{print $1 / $2}' | median)
  awk -v l=$level -v m="$m" -v o="$off" -v p="$paired" \
    'BEGIN {printf "  %-8s %9.3f ms/step   x%.3f of off (paired: x%.3f)\n", l, m, m / o, p}'
done
for level in modules ops ops_views; do
  s="$out/$level-1/summary.json"
  est=$(json_num "$s" estimated_fraction_of_recorded_step)
  ev=$(json_num "$s" events_per_step)
  ns=$(json_num "$s" ns_per_event)
  uev=$(json_num "$s" untimed_events_per_step)
  uns=$(json_num "$s" ns_per_untimed_event)
  pp=$(json_num "$s" post_processing_ms)
  rf_ns=$(json_num "$s" ns_per_call_record_function)
  rf=$(json_num "$s" record_function_fraction_of_recorded_step)
  obs=$(json_num "$s" untimed_events_observed_per_step)
  hid=$(json_num "$s" hidden_calls_per_step)
  hns=$(json_num "$s" ns_per_hidden_call)
  mr=$(json_num "$s" memory_reports_per_step)
  mns=$(json_num "$s" ns_per_memory_report)
  printf '  %-9s self-estimate: %s of a step (%s events/step x %s ns + %s observed view calls x %s ns + %s memory reports x %s ns), post-processing %s ms\n' \
    "$level" "$est" "$ev" "$ns" "${obs:-$uev}" "$uns" "$mr" "$mns" "$pp"
  printf '  %-9s of which LibTorch RecordFunction (a do-nothing callback, %s ns per observed call): %s of a step\n' \
    "" "$rf_ns" "$rf"
  if [ "$uev" != "0.0" ]; then
    printf '  %-9s view calls per step: %s (%s observed, the rest counted from the read steps); %s calls/step with RecordFunction off inside x %s ns\n' \
      "" "$uev" "$obs" "$hid" "$hns"
  fi
done
s="$out/ops-1/summary.json"
printf '  ops trace: %s events, %s bytes, %s bytes/event\n' "$(json_num "$s" events | tail -1)" \
  "$(grep -A4 '"trace"' "$s" | grep '"bytes"' | sed 's/.*: *\([0-9]*\).*/\1/')" \
  "$(json_num "$s" bytes_per_event)"
ratio=$(grep -m1 counted_vs_analytic_ratio "$s" | sed 's/.*: *\([-0-9.e+]*\).*/\1/')
printf '  ops counted/analytic matmul FLOPs: %s\n' "$ratio"
