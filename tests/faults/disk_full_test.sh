#!/usr/bin/env bash
# Disk full and write errors: llmprof train and llmprof sweep whose output runs out of space.
#   1. A tmpfs with a few pages free (mount, as root): the run stops with one error line naming
#      the file and "No space left on device", exit 1; every step row written before is whole;
#      summary.json, sweep.csv, sweep.json, plan.json and the point records are absent or whole.
#   2. A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: the write fails with EFBIG) that cuts
#      steps.csv while the other files still fit: summary.json says status "failed" and why.
# Usage: disk_full_test.sh LLMPROF_BINARY SOURCE_DIR WORK_DIR. Part 1 is skipped with a message
# where mounting is not permitted; part 2 runs everywhere.
set -euo pipefail

# shellcheck source=tests/faults/common.sh
source "$(dirname "$0")/common.sh"
# A tiny model; 100000 steps so the run fills the space long before it ends.
tiny=(--config "$src/configs/tiny_test.yaml" --quiet --set schedule.max_steps=100000
  --set energy.enabled=false)

mnt=$work/tmpfs
cleanup() { mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"; return 0; }
trap cleanup EXIT
cleanup
rm -rf "$work"
mkdir -p "$work"

# expect_failure LOG CODE: the command's exit code was 1 and its stderr one readable error.
expect_failure() {
  local log=$1 code=$2
  [ "$code" -eq 1 ] || fail "exit $code, expected 1: $(tail -5 "$log")"
  grep -q "^llmprof: error: .*\(No space left on device\|File too large\)" "$log" ||
    fail "no error line naming the disk in $log: $(tail -5 "$log")"
  if grep -q "terminate called\|Aborted\|core dumped\|Stack trace" "$log"; then
    fail "abort or stack trace in $log"
  fi
}

# steps_rows RUN: the number of step rows (check_files has checked they are whole).
steps_rows() { echo $(($(wc -l <"$1/steps.csv") - 1)); }

# --- 1. A full tmpfs --------------------------------------------------------------------------
mkdir -p "$mnt"
if mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
  # Fill it but for 28 KiB: config.yaml, env.json, vocab.json and log.txt take most of it, and
  # steps.csv meets the end after a few dozen rows.
  avail=$(($(stat -f -c '%a*%S' "$mnt")))
  head -c $((avail - 28 * 1024)) /dev/zero >"$mnt/filler"
  set +e
  "$llmprof" train "${tiny[@]}" --out "$mnt" --set output.name=run >"$work/train.out" \
    2>"$work/train.err"
  code=$?
  set -e
  expect_failure "$work/train.err" "$code"
  $check "$mnt/run" || fail "train on a full disk left a broken file"
  rows=$(steps_rows "$mnt/run")
  echo "tmpfs train: exit $code after $rows whole step rows: $(grep 'llmprof: error' "$work/train.err")"
  [ -f "$mnt/run/summary.json" ] && echo "tmpfs train: summary.json written (status" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$mnt/run/summary.json"))"
  "$llmprof" report "$mnt/run" >"$work/report.out" 2>"$work/report.err" ||
    fail "report cannot read the run a full disk stopped: $(cat "$work/report.err")"

  # The sweep: its points fail on the full disk, then its own tables do; exit 1, files whole.
  rm -rf "${mnt:?}/run" "$mnt/filler"
  avail=$(($(stat -f -c '%a*%S' "$mnt")))
  head -c $((avail - 48 * 1024)) /dev/zero >"$mnt/filler"
  set +e
  "$llmprof" sweep "${tiny[@]}" --out "$mnt" --name s --grid optim.lr=1e-3,2e-3 \
    >"$work/sweep.out" 2>"$work/sweep.err"
  code=$?
  set -e
  [ "$code" -eq 1 ] || fail "sweep on a full disk: exit $code, expected 1: $(tail -5 "$work/sweep.err")"
  if grep -q "terminate called\|Aborted\|core dumped" "$work/sweep.err"; then
    fail "abort in the sweep's output"
  fi
  $check "$mnt/s" || fail "sweep on a full disk left a broken file"
  echo "tmpfs sweep: exit $code; $(tail -1 "$work/sweep.err" | cut -c1-200)"
  umount "$mnt"
else
  echo "SKIPPED part 1: cannot mount a tmpfs here (needs root); the file size limit part runs"
fi

# --- 2. A file size limit ----------------------------------------------------------------------
# 20 KiB: config.yaml (~12 KB), env.json, summary.json fit; steps.csv (~250 bytes a row) does not.
set +e
(
  trap '' XFSZ
  ulimit -f 20
  exec "$llmprof" train "${tiny[@]}" --out "$work" --set output.name=limited
) >"$work/limit.out" 2>"$work/limit.err"
code=$?
set -e
run=$work/limited
expect_failure "$work/limit.err" "$code"
$check "$run" || fail "a write cut by the size limit left a broken file"
[ -f "$run/summary.json" ] || fail "no summary.json, though it fits under the limit"
python3 - "$run/summary.json" <<'EOF' || fail "summary.json does not say why the run failed"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["status"] == "failed", s["status"]
assert "steps.csv" in s["message"] and "File too large" in s["message"], s["message"]
print(f"size limit: status {s['status']}: {s['message']}; "
      f"{s['steps']['completed']} steps kept")
EOF
rows=$(steps_rows "$run")
[ "$rows" -ge 5 ] || fail "only $rows step rows before the limit"
echo "PASS: disk full and write errors"
