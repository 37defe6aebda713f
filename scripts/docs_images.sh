#!/usr/bin/env bash
# The user guide's pictures, made from real runs of the llmprof built here and checked in:
#   docs/img/roofline.png        12_roofline of a quick-start run at profile.level=ops
#   docs/img/memory_per_phase.png 11_memory_per_phase of the same run
#   docs/img/comm_timeline.png   13_comm_timeline of a 2-rank quick-start run
#   docs/img/comm_overlap.png    14_comm_overlap of the same run
#   docs/img/plan_llama7b.png    `llmprof plan` of configs/llama7b_a100.yaml on an A100 40GB: each
#                                technique row's model states and the rest of its peak, the device line
#   docs/img/tune.svg            `llmprof tune`'s chart of a search on the tiny config (speed against
#                                planned memory, the winner marked)
# docs/img/report.png is the HTML report's screenshot (docs/guide/report.md gives its command).
# Usage: scripts/docs_images.sh [STEPS]   (default 60 steps per run; LLMPROF_BIN overrides the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-60}
bin=${LLMPROF_BIN:-build/llmprof}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" train -c configs/quickstart.yaml --set profile.level=ops --set schedule.max_steps="$steps" \
  --set train.eval_interval=0 --set output.dir="$work" --set output.name=ops
"$bin" plot "$work/ops" --out "$work/plots-ops"
"$bin" train -c configs/quickstart.yaml --nproc 2 --set schedule.max_steps="$steps" \
  --set train.eval_interval=0 --set output.dir="$work" --set output.name=ddp
"$bin" plot "$work/ddp" --out "$work/plots-ddp"
cp "$work/plots-ops/12_roofline.png" docs/img/roofline.png
cp "$work/plots-ops/11_memory_per_phase.png" docs/img/memory_per_phase.png
cp "$work/plots-ddp/13_comm_timeline.png" docs/img/comm_timeline.png
cp "$work/plots-ddp/14_comm_overlap.png" docs/img/comm_overlap.png
# plan: the technique table as bars (GiB), the device's usable memory as a line.
"$bin" plan -c configs/llama7b_a100.yaml --device a100-40gb --format json >"$work/plan.json"
python3 - "$work/plan.json" "$work/plan.dat" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
usable = d["device"]["usable_bytes"] / 2**30
with open(sys.argv[2], "w") as f:
    for i, t in enumerate(d["techniques"]):
        states = t["model_state_bytes"] / 2**30
        rest = max(0.0, t["peak_bytes"] / 2**30 - states)
        name = re.sub(r" \(world \d+\)", "", t["technique"]).replace(" estimator", "")
        name = name.replace('"', "'")
        f.write(f'{i} "{name}" {states:.3f} {rest:.3f} {usable:.3f}\n')
PY
usable=$(awk 'NR==1{print $NF}' "$work/plan.dat")
gnuplot <<GP
set terminal pngcairo size 1200,600 noenhanced font "DejaVu Sans,10" background rgb "white"
set output "docs/img/plan_llama7b.png"
set title "llmprof plan -c configs/llama7b_a100.yaml --device a100-40gb: peak per technique (GiB; sharded rows at world 8)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set rmargin 16
set bmargin 11
set ylabel "GiB"
set xtics rotate by -35 scale 0
set key top right
set grid ytics
set datafile separator whitespace
plot "$work/plan.dat" using 3:xtic(2) title "model states" lc rgb "#4c72b0", \
     "" using 4 title "the rest of the peak (activations, buffers, casts)" lc rgb "#dd8452", \
     $usable with lines lw 2 lc rgb "#c44e52" title "A100 40GB usable"
GP
# tune: a two-knob search of the tiny config (a few seconds a repetition).
"$bin" tune -c configs/tiny_test.yaml --space threads=1,2 --space train.batch_size=4,8 --steps 10 \
  --budget 10m --out "$work/tune"
cp "$work/tune/tune.svg" docs/img/tune.svg
echo "docs_images: written $(date -u '+%Y-%m-%d %H:%M UTC') at $(git rev-parse --short HEAD) on $(hostname):"
ls -l docs/img/roofline.png docs/img/memory_per_phase.png docs/img/comm_timeline.png docs/img/comm_overlap.png \
  docs/img/plan_llama7b.png docs/img/tune.svg
