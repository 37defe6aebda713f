#!/usr/bin/env bash
# Kills at random points: SIGKILL lands on `llmprof train` and `llmprof sweep` at 20 moments drawn
# from a seeded generator (the seed is printed; pass it back to replay the same moments), then:
#   - every finished step row parses and steps count 1, 2, 3, ... (tests/faults/check_files.py);
#   - every file written whole (summary.json, env.json, config.yaml, trace.json, ops.csv, ...,
#     sweep.csv, sweep.json, plan.json, the point records) is absent or complete;
#   - `llmprof report` reads what is left (exit 0) and calls a run without summary.json, or a
#     sweep not finished, incomplete;
#   - the same sweep command, run again after each kill, re-runs only the points that did not
#     finish: a point finished before a kill keeps its run directory and summary.json untouched.
# Train runs alternate profile levels (phases; ops with its trace and tables). Sweep kills
# alternate between the sweep process alone (its points get SIGTERM and stop after their step)
# and the sweep with every point process at once (a power cut, the OOM killer).
# Usage: kill_test.sh LLMPROF_BINARY SOURCE_DIR WORK_DIR [SEED]
set -euo pipefail

seed=${4:-$(($(date +%s) % 32768))}
fail_prefix="FAIL (seed $seed)"
# shellcheck source=tests/faults/common.sh
source "$(dirname "$0")/common.sh"
RANDOM=$seed
train_kills=12
sweep_kills=8
echo "kill_test: seed $seed (replay: $0 $llmprof $src $work $seed)"

rm -rf "$work"
mkdir -p "$work"
SECONDS=0

tiny=(--config "$src/configs/tiny_test.yaml" --quiet --set energy.enabled=false)
levels=("--set profile.level=phases"
  "--set profile.level=ops --set profile.peak_bytes_per_s=1e10 --set profile.schedule_wait=2")

# now_ms: milliseconds since the epoch.
now_ms() { date +%s%3N; }

# descendants PID: every process below PID (children first found, then theirs).
descendants() {
  local kids
  kids=$(ps -o pid= --ppid "$1" 2>/dev/null || true)
  for k in $kids; do
    echo "$k"
    descendants "$k"
  done
}

# report_says_incomplete DIR: llmprof report reads DIR and names it incomplete.
report_says_incomplete() {
  local out
  out=$("$llmprof" report "$1" 2>&1) || fail "report on $1 exited $?: $out"
  grep -qi "incomplete" <<<"$out" || fail "report on $1 does not call it incomplete: $out"
}

# --- llmprof train ----------------------------------------------------------------------------
# A whole run first: the moment its first step row appears and its end bound the kill moments
# (kills during LibTorch's start-up would find nothing written), and its directory must be whole.
t0=$(now_ms)
"$llmprof" train "${tiny[@]}" ${levels[1]} --set schedule.max_steps=40 --out "$work/train" \
  --set output.name=whole >/dev/null 2>"$work/whole.err" &
pid=$!
setup_ms=0
while kill -0 "$pid" 2>/dev/null; do
  if [ "$setup_ms" -eq 0 ] && [ -s "$work/train/whole/steps.csv" ]; then setup_ms=$(($(now_ms) - t0)); fi
  sleep 0.02
done
wait "$pid" || fail "reference run: $(cat "$work/whole.err")"
train_ms=$(($(now_ms) - t0))
[ "$setup_ms" -gt 0 ] || setup_ms=$((train_ms / 2))
$check "$work/train/whole" >/dev/null || fail "the reference run is not whole"
echo "kill_test: a whole train run takes $train_ms ms, its steps start at $setup_ms ms;" \
  "killing $train_kills runs from 0.8 x that to the end"

no_dir=0 no_summary=0 with_summary=0
for i in $(seq 1 $train_kills); do
  from_ms=$((setup_ms * 8 / 10))
  delay_ms=$((from_ms + RANDOM * (train_ms - from_ms) / 32768))
  name=k$i
  # shellcheck disable=SC2086
  "$llmprof" train "${tiny[@]}" ${levels[$((i % 2))]} --set schedule.max_steps=40 \
    --out "$work/train" --set output.name=$name >/dev/null 2>"$work/$name.err" &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  run=$work/train/$name
  if [ ! -d "$run" ]; then
    no_dir=$((no_dir + 1))
    echo "  train kill $i at $delay_ms ms: before the run directory existed"
    continue
  fi
  $check "$run" | sed 's/^/    /' || fail "train kill $i at $delay_ms ms left a broken file"
  rows=0
  [ -f "$run/steps.csv" ] && rows=$(($(grep -c '' "$run/steps.csv") - 1))
  if [ ! -f "$run/steps.csv" ]; then
    what="run directory without steps.csv (killed during set-up)"
    no_dir=$((no_dir + 1))
  elif [ -f "$run/summary.json" ]; then
    what="after summary.json ($rows step rows)"
    with_summary=$((with_summary + 1))
    "$llmprof" report "$run" >/dev/null 2>&1 || fail "report cannot read the finished run $run"
  else
    what="$rows step rows, no summary.json"
    no_summary=$((no_summary + 1))
    report_says_incomplete "$run"
  fi
  echo "  train kill $i at $delay_ms ms: $what"
done
echo "kill_test: train: $no_summary killed mid-run, $with_summary after their summary," \
  "$no_dir before their run directory"

# --- llmprof sweep ----------------------------------------------------------------------------
sweep=(sweep "${tiny[@]}" --set schedule.max_steps=30 --out "$work" --jobs 2
  --grid train.batch_size=2,4 --grid optim.lr=1e-3,3e-3)
t0=$(now_ms)
"$llmprof" "${sweep[@]}" --name ref >/dev/null 2>"$work/ref.err" || fail "reference sweep: $(cat "$work/ref.err")"
sweep_ms=$(($(now_ms) - t0))
$check "$work/ref" >/dev/null || fail "the reference sweep is not whole"
echo "kill_test: a whole 4-point sweep takes $sweep_ms ms; killing $sweep_kills resumes of one"

# finished_points: "point_id mtime-of-summary" for each point sweep.csv lists as completed.
finished_points() {
  [ -f "$work/$sw/sweep.csv" ] || return 0
  python3 - "$work/$sw/sweep.csv" <<'EOF'
import csv, os, sys
for row in csv.DictReader(open(sys.argv[1], newline="")):
    if row["status"] == "completed":
        print(row["point_id"], os.stat(os.path.join(row["run_dir"], "summary.json")).st_mtime_ns)
EOF
}

# wait_unlocked: the points a killed sweep left behind have exited (they hold the sweep's lock).
wait_unlocked() {
  for _ in $(seq 1 600); do
    flock -n "$work/$sw/.lock" true 2>/dev/null && return 0
    [ -f "$work/$sw/.lock" ] || return 0
    sleep 0.1
  done
  fail "points of the killed sweep still hold $work/$sw/.lock after 60 s"
}

: >"$work/finished_before"
sw=s1 done_now=0
for i in $(seq 1 $sweep_kills); do
  # A resume has only the unfinished points to run: kill within their share of the time; once a
  # sweep has finished every point, the next kill starts a new one.
  if [ "$done_now" -eq 4 ]; then
    sw=s$i done_now=0
    : >"$work/finished_before"
  fi
  delay_ms=$((RANDOM * (sweep_ms * (4 - done_now) / 4) / 32768))
  "$llmprof" "${sweep[@]}" --name "$sw" >"$work/sweep$i.out" 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if ((i % 2 == 0)); then
    victims="$pid $(descendants "$pid")"
    how="sweep and its points"
  else
    victims=$pid
    how="sweep alone"
  fi
  # shellcheck disable=SC2086
  kill -KILL $victims 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  wait_unlocked
  if [ -d "$work/$sw" ]; then
    $check "$work/$sw" | sed 's/^/    /' || fail "sweep kill $i at $delay_ms ms left a broken file"
  fi
  # Points finished before this attempt must not have run again in it.
  while read -r id mtime; do
    now=$(finished_points | awk -v id="$id" '$1 == id {print $2}')
    [ "$now" = "$mtime" ] || fail "sweep kill $i: $id had finished, yet ran again"
  done <"$work/finished_before"
  finished_points >"$work/finished_before"
  done_now=$(wc -l <"$work/finished_before")
  if [ -f "$work/$sw/sweep.csv" ]; then
    status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("status"))' \
      "$work/$sw/sweep.json" 2>/dev/null || echo none)
    if [ "$status" = "finished" ]; then
      "$llmprof" report "$work/$sw" >/dev/null 2>&1 || fail "report cannot read the sweep"
    else
      report_says_incomplete "$work/$sw"
    fi
  fi
  echo "  sweep kill $i at $delay_ms ms ($how): $done_now of 4 points finished"
done

# The same command once more, to its end: only what is left runs.
"$llmprof" "${sweep[@]}" --name "$sw" >"$work/final.out" 2>&1 || fail "the last resume: $(tail -3 "$work/final.out")"
while read -r id mtime; do
  now=$(finished_points | awk -v id="$id" '$1 == id {print $2}')
  [ "$now" = "$mtime" ] || fail "the last resume ran $id again, which had finished"
done <"$work/finished_before"
[ "$(finished_points | wc -l)" -eq 4 ] || fail "the last resume did not finish every point"
$check "$work/$sw" | sed 's/^/    /' || fail "the finished sweep has a broken file"
reused=$(python3 -c 'import json,sys; print(sum(p["reused"] for p in json.load(open(sys.argv[1]))["points"]))' \
  "$work/$sw/sweep.json")
[ "$reused" -ge "$(wc -l <"$work/finished_before")" ] || fail "sweep.json reuses $reused points"
echo "kill_test: the last resume reused $(wc -l <"$work/finished_before") finished points and ran the rest"
echo "PASS: $((train_kills + sweep_kills)) kills (seed $seed) in $SECONDS s"
