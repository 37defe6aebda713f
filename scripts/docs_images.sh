#!/usr/bin/env bash
# The user guide's pictures, made from real runs of the llmprof built here and checked in:
#   docs/img/roofline.png        12_roofline of a quick-start run at profile.level=ops
#   docs/img/memory_per_phase.png 11_memory_per_phase of the same run
#   docs/img/comm_timeline.png   13_comm_timeline of a 2-rank quick-start run
#   docs/img/comm_overlap.png    14_comm_overlap of the same run
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
echo "docs_images: written $(date -u '+%Y-%m-%d %H:%M UTC') at $(git rev-parse --short HEAD) on $(hostname):"
ls -l docs/img/roofline.png docs/img/memory_per_phase.png docs/img/comm_timeline.png docs/img/comm_overlap.png
