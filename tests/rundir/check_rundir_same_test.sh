#!/usr/bin/env bash
# scripts/check_rundir_same.py: two runs of one llmprof binary compare the same (exit 0); a copy
# with one loss cell or one summary key changed, or a file removed, compares different (exit 1,
# naming the file and the cell or key); a changed time does not count; a missing folder is bad
# input (exit 2). The same for a 2-rank data-parallel run: a changed bytes cell of a rank's
# comm.csv or a rank's loss in the merged summary is a difference; its all-reduce and phase times,
# and the order of the summary's ranks (the straggler first), are not. Exits 77 (skipped) without
# python3.
# Usage: check_rundir_same_test.sh LLMPROF_BINARY SOURCE_DIR
set -uo pipefail
bin=$1
src=$2
if ! command -v python3 >/dev/null; then
  echo "python3 not found: check_rundir_same.py not tested"
  exit 77
fi
check="python3 $src/scripts/check_rundir_same.py"
work=$(mktemp -d "${TMPDIR:-/tmp}/rundir-same.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
# expect RC PATTERN ARGS...: runs the check, wants exit RC and PATTERN (grep -E) in its output.
expect() {
  local want=$1 pattern=$2
  shift 2
  local out rc
  out=$($check "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: check_rundir_same.py $* -> exit $rc (want $want, output matching '$pattern'):"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: exit $rc: $(grep -E -m1 -- "$pattern" <<<"$out")"
  fi
}

# A short run of the tiny config at profile.level=ops and a 2-rank one, twice with the same
# binary: the same.
expect 0 "are the same" --baseline-bin "$bin" --candidate-bin "$bin" --work "$work" --kinds tiny,dp
base=$work/baseline
steps=runs/tiny/steps.csv
summary=runs/tiny/summary.json

# One loss cell changed (line 3 of steps.csv, the second step).
cp -r "$base" "$work/loss"
python3 - "$work/loss/$steps" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("loss")
rows[2][col] = repr(float(rows[2][col]) + 1e-6)
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PY
expect 1 "steps.csv:3: column loss" "$base" "$work/loss"

# One summary key changed.
cp -r "$base" "$work/key"
python3 - "$work/key/$summary" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["loss"]["final_train_loss"] += 1e-6
open(sys.argv[1], "w").write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
PY
expect 1 "summary.json: loss.final_train_loss" "$base" "$work/key"

# A file removed.
cp -r "$base" "$work/gone"
rm "$work/gone/$(dirname "$steps")/eval.csv"
expect 1 "eval.csv: only in $base" "$base" "$work/gone"

# A masked time changed: still the same.
cp -r "$base" "$work/time"
python3 - "$work/time/$steps" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("step_ms")
rows[2][col] = "12345.5"
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PY
expect 0 "are the same" "$base" "$work/time"

# Data-parallel: one bytes cell of rank 0's comm.csv changed (line 2, its first all-reduce).
dp=runs/dp
cp -r "$base" "$work/bytes"
python3 - "$work/bytes/$dp/rank0/comm.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("bytes")
rows[1][col] = str(int(rows[1][col]) + 4)
csv.writer(open(sys.argv[1], "w", newline=""), lineterminator="\n").writerows(rows)
PY
expect 1 "rank0/comm.csv:2: column bytes" "$base" "$work/bytes"

# Rank 0's final loss in the merged summary changed (its ranks matched by rank, whatever order).
cp -r "$base" "$work/rankloss"
python3 - "$work/rankloss/$dp/summary.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["distributed"]["ranks"]:
    if r["rank"] == 0:
        r["final_train_step_loss"] += 1e-6
open(sys.argv[1], "w").write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
PY
expect 1 "summary.json: distributed.ranks.\[0\].final_train_step_loss" "$base" "$work/rankloss"

# Times changed (an all-reduce's, a phase span's, the clock estimates') and the summary's ranks in
# the other order: still the same.
cp -r "$base" "$work/dptime"
python3 - "$work/dptime/$dp" <<'PY'
import csv, json, os, sys
top = sys.argv[1]
for name, col in [("comm.csv", "comm_ms"), ("rank1/phases.csv", "end_ns"),
                  ("clocks.csv", "start_offset_ns"), ("collectives.csv", "last_rank")]:
    path = os.path.join(top, name)
    rows = list(csv.reader(open(path)))
    rows[1][rows[0].index(col)] = "12345"
    csv.writer(open(path, "w", newline=""), lineterminator="\n").writerows(rows)
path = os.path.join(top, "summary.json")
doc = json.load(open(path))
doc["distributed"]["ranks"].reverse()
open(path, "w").write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
PY
expect 0 "are the same" "$base" "$work/dptime"

# Bad input.
expect 2 "not a directory" "$base" "$work/missing"
cp -r "$base" "$work/broken"
echo "{" >"$work/broken/$summary"
expect 2 "summary.json:2:1: not JSON" "$base" "$work/broken"
exit $((failures > 0))
