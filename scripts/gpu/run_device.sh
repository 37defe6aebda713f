#!/usr/bin/env bash
# The GPU issue's measurements on a CUDA host, in stages that each fit one call of a few minutes
# (the build stays in build-cuda/ between them). Needs what scripts/gpu/prepare_device.sh put in
# .device/ when the host has no package registry. Results go to $OUT (default ./gpu-results):
#   scripts/gpu/run_device.sh build     scripts/build_gpu.sh without tests -> build-cuda/llmprof
#   scripts/gpu/run_device.sh smoke     peak on the device; 20 steps at level ops: kernels.csv,
#                                       trace.json and summary.json's gpu section
#   scripts/gpu/run_device.sh measure   GPT-2 small bf16 at levels off, phases, ops, fp16; the
#                                       nanoGPT peer (eager, compile, torch.profiler); HTA on
#                                       llmprof's trace
# Each stage ends with a table of what it measured (the commands that gave each figure above it).
set -uo pipefail
cd "$(dirname "$0")/../.."
stage=${1:-}
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
llmprof=build-cuda/llmprof
config=configs/gpt2_small_cuda.yaml

# One training run: name, then --set overrides. Prints median ms/step, tokens/s and MFU.
train() {
  local name=$1
  shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  echo "+ $llmprof train -c $config ${sets[*]}"
  "$llmprof" train -c "$config" --set "output.dir=$out/runs" --set "output.name=$name" \
    "${sets[@]}" >"$out/$name.log" 2>&1 || { echo "$name: failed, see $out/$name.log"; tail -5 "$out/$name.log"; return 1; }
  python3 - "$out/runs/$name/summary.json" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
med = lambda v: (v or {}).get("median")
st, tok, mfu = s["timing"]["step_ms"], s["throughput"]["tokens_per_s"], s["mfu"]["value"]
print(f"{sys.argv[2]:<22} {med(st)} ms/step  {med(tok)} tokens/s  MFU {med(mfu)} "
      f"({s['mfu']['peak_source']})  gpu idle {json.dumps(s.get('gpu', {}).get('idle'))}")
PY
}

case "$stage" in
  build)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
    scripts/build_gpu.sh -DLLMPROF_BUILD_TESTS=OFF 2>&1 | tail -n 30 | tee "$out/build.log"
    test -x "$llmprof" && "$llmprof" --version
    ;;
  smoke)
    "$llmprof" peak --device cuda --precision bf16 | tee "$out/peak_bf16.txt"
    train smoke_ops profile.level=ops schedule.max_steps=20 profile.schedule_wait=5 \
      profile.schedule_warmup=2 profile.schedule_active=3 profile.trace=true
    ls -la "$out/runs/smoke_ops"
    head -n 15 "$out/runs/smoke_ops/kernels.csv"
    ;;
  measure)
    for level in off phases ops; do
      train "gpt2_$level" profile.level=$level
    done
    train gpt2_fp16 train.precision=fp16
    train gpt2_manual_attention model.attention=manual
    if [ -f .device/src/nanoGPT/model.py ]; then
      echo "+ python3 scripts/gpu/nanogpt_peer.py --nanogpt .device/src/nanoGPT"
      PYTHONUNBUFFERED=1 python3 scripts/gpu/nanogpt_peer.py --nanogpt .device/src/nanoGPT \
        --trace-dir "$out" | tee "$out/nanogpt.jsonl"
    else
      echo "nanoGPT peer skipped: no .device/src/nanoGPT (scripts/gpu/prepare_device.sh nanoGPT=...)"
    fi
    if [ -d .device/src/hta ] && [ -f scripts/gpu/hta_check.py ]; then
      trace=$(ls "$out"/runs/gpt2_ops/trace.json* 2>/dev/null | head -n 1)
      echo "+ python3 scripts/gpu/hta_check.py $trace .device/src/hta"
      python3 scripts/gpu/hta_check.py "$trace" .device/src/hta 2>&1 | tail -n 40 | tee "$out/hta.txt"
    fi
    ;;
  *)
    echo "usage: scripts/gpu/run_device.sh build|smoke|measure" >&2
    exit 2
    ;;
esac
