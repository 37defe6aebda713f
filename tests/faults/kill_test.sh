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
# Train runs alternate profile levels (phases; ops with its trace and tables); a kill lands in
# set-up, within a random step (after its row number appears) or while the last files are written
# (the stage, row and delay drawn from the seed; the moment itself depends on the host). Sweep kills
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
# A whole run of each level first: the moment its first step row appears and its end bound that
# level's kill moments (kills during LibTorch's start-up would find nothing written; a phases run
# is faster than an ops run), and its directory must be whole.
setup_ms=() train_ms=()
# One short run before them, so that they do not time a cold start (the page cache, the loader).
"$llmprof" train "${tiny[@]}" --set schedule.max_steps=1 --out "$work/train" \
  --set output.name=warm >/dev/null 2>"$work/warm.err" || fail "warm-up run: $(cat "$work/warm.err")"
for l in 0 1; do
  t0=$(now_ms)
  # shellcheck disable=SC2086
  "$llmprof" train "${tiny[@]}" ${levels[$l]} --set schedule.max_steps=40 --out "$work/train" \
    --set output.name=whole$l >/dev/null 2>"$work/whole$l.err" &
  pid=$!
  setup_ms[l]=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "${setup_ms[l]}" -eq 0 ] && [ -s "$work/train/whole$l/steps.csv" ]; then
      setup_ms[l]=$(($(now_ms) - t0))
    fi
    sleep 0.02
  done
  wait "$pid" || fail "reference run ($l): $(cat "$work/whole$l.err")"
  train_ms[l]=$(($(now_ms) - t0))
  [ "${setup_ms[l]}" -gt 0 ] || setup_ms[l]=$((train_ms[l] / 2))
  $check "$work/train/whole$l" >/dev/null || fail "the reference run ${levels[$l]} is not whole"
  echo "kill_test: a whole train run (${levels[$l]}) takes ${train_ms[l]} ms, its steps start at" \
    "${setup_ms[l]} ms"
done
echo "kill_test: killing $train_kills runs: each in set-up (1 in 6), after a random step row (2 in" \
  "3) or while the last files are written (1 in 6), the moment drawn from the seed"
# count_lines FILE: sets n_lines to its line count, 0 while it does not exist. Builtins only, as
# are sleep_ms and wait_lines: polling starts no process, so a kill follows its moment closely.
count_lines() {
  local lines=()
  [ -f "$1" ] && mapfile -t lines <"$1" 2>/dev/null
  n_lines=${#lines[@]}
}
exec {never}<> <(:)  # a pipe nobody writes: `read -t` on it sleeps
sleep_ms() {
  local s
  printf -v s '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
  read -r -t "$s" -u "$never" || true
}
# wait_lines PID FILE N: until FILE has N lines or PID has exited.
wait_lines() {
  count_lines "$2"
  while kill -0 "$1" 2>/dev/null && [ "$n_lines" -lt "$3" ]; do
    sleep_ms 1
    count_lines "$2"
  done
}
no_dir=0 no_summary=0 with_summary=0
for i in $(seq 1 $train_kills); do
  l=$((i % 2)) stage=$((RANDOM % 6)) row=$((RANDOM % 40)) jitter_ms=$((RANDOM % 20))
  name=k$i
  # shellcheck disable=SC2086
  "$llmprof" train "${tiny[@]}" ${levels[$l]} --set schedule.max_steps=40 \
    --out "$work/train" --set output.name=$name >/dev/null 2>"$work/$name.err" &
  pid=$!
  if [ $stage -eq 0 ]; then  # set-up: from 0.2 to 0.9 of its reference length
    delay_ms=$((setup_ms[l] / 5 + RANDOM * (setup_ms[l] * 7 / 10) / 32768))
    moment="$delay_ms ms in (set-up)"
    sleep_ms $delay_ms
  elif [ $stage -eq 5 ]; then  # after the 40th row: the tables, trace and summary being written
    delay_ms=$((RANDOM % 10))
    moment="$delay_ms ms after the last step row"
    wait_lines "$pid" "$work/train/$name/steps.csv" 41
    sleep_ms $delay_ms
  else  # within the step after row `row` (0: the first step)
    moment="$jitter_ms ms after step row $row"
    wait_lines "$pid" "$work/train/$name/steps.csv" $((row + 1))
    sleep_ms $jitter_ms
  fi
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  run=$work/train/$name
  if [ ! -d "$run" ]; then
    no_dir=$((no_dir + 1))
    echo "  train kill $i, $moment: before the run directory existed"
    continue
  fi
  $check "$run" | sed 's/^/    /' || fail "train kill $i, $moment, left a broken file"
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
  echo "  train kill $i, $moment: $what"
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
