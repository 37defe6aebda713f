#!/usr/bin/env bash
# Speed unchanged by a refactoring: `llmprof check --ab` of an old binary against a new one, and of
# the old against itself over the same rounds right after (the noise floor of this host at that
# moment), for each case: the CI smoke config at profile.level=phases, at ops, and at phases with
# --nproc 2. Prints per line the case, the pair, the median paired ratio (new/old step time), its
# order-statistic interval with the confidence it achieves, the verdict, and the wall time; then
# whether each old-new interval agrees with the noise floor (they overlap, and where the old-new
# interval is wider than +-3% the noise floor's is too: the host, not the change).
#   scripts/bench/speed_ab.sh --old BIN --new BIN [--rounds 20] [--steps 40]
#                             [--cases "phases ops nproc2"] [--bound 5]
# The gate is --max step_ms=+BOUND%. Run it on a quiet host; the machine's load average is printed
# beside each line.
set -euo pipefail
cd "$(dirname "$0")/../.."
old="" new="" rounds=20 steps=40 cases="phases ops nproc2" bound=5
while [ $# -gt 0 ]; do
  case "$1" in
    --old) old=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --bound) bound=$2; shift 2 ;;
    *) echo "speed_ab.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "speed_ab.sh: --old and --new name llmprof binaries ('$b' is not one)" >&2; exit 2; }
done
for c in $cases; do
  case "$c" in
    phases|ops|nproc2) ;;
    *) echo "speed_ab.sh: no case '$c' (phases, ops, nproc2)" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/llmprof-speed-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT

args_of() {  # the train arguments of a case
  local a="train -c configs/ci_smoke.yaml --quiet --set output.dir=$work/runs"
  a+=" --set schedule.max_steps=$steps --set profile.trace=false"
  case "$1" in
    phases) echo "$a --set profile.level=phases" ;;
    ops) echo "$a --set profile.level=ops" ;;
    nproc2) echo "$a --set profile.level=phases --nproc 2" ;;
  esac
}

# ab CASE PAIR BASE CAND: one check --ab; prints its line and keeps the JSON.
ab() {
  local case=$1 pair=$2 base=$3 cand=$4 args json t0 rc=0
  args=$(args_of "$case")
  json=$work/$case-$pair.json
  t0=$(date +%s)
  "$new" check --ab "$base $args" "$cand $args" --repetitions "$rounds" \
    --max step_ms=+"$bound"% --format json --out "$json" >/dev/null 2>"$work/err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && [ "$rc" -ne 4 ]; then
    echo "speed_ab.sh: $case $pair: check exited $rc: $(tail -3 "$work/err")" >&2
    exit 1
  fi
  python3 - "$json" "$case" "$pair" "$(( $(date +%s) - t0 ))" "$(cut -d' ' -f1 /proc/loadavg)" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
g = next(g for g in doc["gates"] if g["figure"] == "step_ms")
i = g["interval"]
print(f"{sys.argv[2]:7} {sys.argv[3]:8} ratio {g['ratio']:.3f} [{i['low']:.3f}, {i['high']:.3f}] "
      f"at {i['confidence'] * 100:.1f}%  {g['outcome']:12}  {sys.argv[4]} s  load {sys.argv[5]}")
EOF
}

echo "speed_ab: new $new against old $old, $rounds rounds, $steps steps, gate step_ms +$bound%"
for c in $cases; do
  ab "$c" old-new "$old" "$new"
  ab "$c" old-old "$old" "$old"
done | tee "$work/lines"
python3 - "$work" $cases <<'EOF'
import json, sys
work, cases = sys.argv[1], sys.argv[2:]
def gate(case, pair):
    doc = json.load(open(f"{work}/{case}-{pair}.json"))
    return next(g for g in doc["gates"] if g["figure"] == "step_ms")
for c in cases:
    a, f = gate(c, "old-new"), gate(c, "old-old")
    alo, ahi = a["interval"]["low"], a["interval"]["high"]
    flo, fhi = f["interval"]["low"], f["interval"]["high"]
    overlap = alo <= fhi and flo <= ahi
    narrow = alo >= 0.97 and ahi <= 1.03
    floor_wide = flo < 0.97 or fhi > 1.03
    agree = overlap and (narrow or floor_wide)
    print(f"{c}: old-new [{alo:.3f}, {ahi:.3f}] against the noise floor [{flo:.3f}, {fhi:.3f}]: "
          f"{'agree' if agree else 'DIFFER'}" + ("" if narrow else " (wider than +-3%)"))
EOF
