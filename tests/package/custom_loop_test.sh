#!/usr/bin/env bash
# The CMake package as a user meets it: installs llmprof into a scratch prefix, configures and
# builds examples/custom_loop against it (find_package(llmprof), llmprof::llmprof), runs it at
# profile.level=ops, and reads the run directory it wrote with llmprof report and llmprof plot;
# then its data-parallel variant (--nproc 2), whose ranks' trace.json must name them as
# `llmprof train --nproc 2` does.
# Usage: custom_loop_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
step() { local log=$1; shift; "$@" > "$tmp/$log" 2>&1 || { cat "$tmp/$log"; fail "$*"; }; }

step install.log cmake --install "$build" --prefix "$tmp/prefix"
[ -f "$tmp/prefix/lib/cmake/llmprof/llmprofConfig.cmake" ] || fail "no llmprofConfig.cmake"
[ -f "$tmp/prefix/lib/cmake/llmprof/llmprofConfigVersion.cmake" ] || fail "no version file"
[ -f "$tmp/prefix/include/llmprof/llmprof.h" ] || fail "no llmprof/llmprof.h"
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
step configure.log cmake -S "$src/examples/custom_loop" -B "$tmp/build" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix"
step build.log cmake --build "$tmp/build"

cd "$tmp"
# A known memory roof: unset, profile.level=ops measures one (STREAM over 3 GiB, seconds).
step run.log ./build/custom_loop profile.level=ops profile.peak_flops_per_s=1e11 \
  profile.peak_bytes_per_s=1e10 \
  energy.enabled=false threads=1 output.dir="$tmp/runs"
cat "$tmp/run.log"
run="$tmp/runs/custom-loop"
[ "$(wc -l < "$run/steps.csv")" -eq 61 ] || fail "steps.csv: want 60 rows"
for pass in forward backward; do
  for scope in conv1 conv2 head; do
    grep -q "^$scope,,$pass," "$run/modules.csv" || fail "modules.csv lacks $scope $pass"
  done
done
[ -s "$run/ops.csv" ] || fail "no ops.csv"
grep -q '"status": "completed"' "$run/summary.json" || fail "summary.json status"

step report.log "$tmp/prefix/bin/llmprof" report "$run"
grep -q "conv1" "$tmp/report.log" || { cat "$tmp/report.log"; fail "report shows no conv1"; }
step plot.log "$tmp/prefix/bin/llmprof" plot "$run" --out "$tmp/plots"
cat "$tmp/plot.log"
ls "$tmp"/plots/*04_phases*.png > /dev/null || fail "no phases chart"

# The data-parallel variant: the same loop, two ranks launched by the program itself, written as
# `llmprof train --nproc 2` writes a run (rank directories, merged documents, comm analysis), each
# rank's trace.json (profile.level=modules, steps 2-3 recorded) naming its rank and holding its
# gradient all-reduces, with no call the loop makes for it: DataParallel names the process.
trace_sets=(profile.level=modules profile.schedule_wait=1 profile.schedule_warmup=0
            profile.schedule_active=2 profile.schedule_repeat=1)
step nproc.log ./build/custom_loop --nproc 2 schedule.max_steps=12 "${trace_sets[@]}" \
  profile.peak_flops_per_s=1e11 energy.enabled=false ddp.timeout_s=60 \
  output.dir="$tmp/runs_dp"
cat "$tmp/nproc.log"
top="$tmp/runs_dp/custom-loop"
for f in steps.csv summary.json comm.csv clocks.csv collectives.csv comm_steps.csv \
         rank0/steps.csv rank1/steps.csv rank0/comm.csv rank1/phases.csv \
         rank0/trace.json rank1/trace.json; do
  [ -s "$top/$f" ] || fail "data-parallel: no $f"
done
[ "$(wc -l < "$top/steps.csv")" -eq 13 ] || fail "data-parallel steps.csv: want 12 rows"
grep -q '"world_size": 2' "$top/summary.json" || fail "data-parallel summary.json: world_size"
step report_dp.log "$tmp/prefix/bin/llmprof" report "$top"

# The same trace identity as `llmprof train --nproc 2` writes for its ranks: distributedInfo equal
# key for key (backend, rank, world_size, the process group), events on pid = rank, collectives.
sets=()
for s in "${trace_sets[@]}" schedule.max_steps=4 energy.enabled=false ddp.timeout_s=60 \
         output.dir="$tmp/runs_train" output.name=run; do
  sets+=(--set "$s")
done
step train_dp.log "$tmp/prefix/bin/llmprof" train --config "$src/configs/tiny_test.yaml" \
  --nproc 2 --quiet "${sets[@]}"
python3 - "$top" "$tmp/runs_train/run" <<'PY' || fail "data-parallel trace.json (above)"
import json, sys
loop, train = sys.argv[1], sys.argv[2]
for rank in (0, 1):
    mine = json.load(open(f"{loop}/rank{rank}/trace.json"))
    theirs = json.load(open(f"{train}/rank{rank}/trace.json"))
    info = mine.get("distributedInfo")
    assert info == theirs["distributedInfo"], f"rank {rank}: {info} != {theirs['distributedInfo']}"
    assert (info["rank"], info["world_size"], info["backend"]) == (rank, 2, "gloo"), info
    pids = {e["pid"] for e in mine["traceEvents"] if "pid" in e}
    assert pids == {rank}, f"rank {rank}: events on pids {pids}"
    comms = [e for e in mine["traceEvents"] if e.get("name") == "record_param_comms"]
    assert comms, f"rank {rank}: no collective in the trace"
    assert all(c["args"]["Group size"] == 2 for c in comms), comms[0]
print("data-parallel traces: distributedInfo as llmprof train writes it")
PY
echo "custom_loop against the installed package: ok"
