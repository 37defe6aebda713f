#!/usr/bin/env bash
# llmprof plan on a GPU host: predicted vs the CUDA caching allocator's peak for GPT-2 small and
# the Llama CUDA config at 3 batch sizes (3 steps each; the peak is step 2's), then the
# out-of-memory edge under a per-process memory fraction (LLMPROF_CUDA_MEMORY_FRACTION, as
# torch.cuda.set_per_process_memory_fraction): the largest batch `llmprof plan` says fits must
# run, the next one must fail with CUDA out of memory. Under about 2.5 minutes on an H100/H200
# (8 runs of 3 steps, each bounded by a 60 s timeout). Where the host has the data copied under
# .device/data (no ../shared/data there), the runs and the plan read it from there.
#   scripts/gpu/plan_check.sh [--llmprof build-cuda/llmprof] [--out /tmp/llmprof-plan-gpu]
set -uo pipefail
bin=build-cuda/llmprof; out=/tmp/llmprof-plan-gpu
while [[ $# -gt 0 ]]; do
  case "$1" in
    --llmprof) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "plan_check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
data=.device/data
data_sets=()
if [[ -d "$data" ]]; then
  data_sets=(--set "data.path=$data/tinyshakespeare.txt"
             --set "data.vocab_path=$data/vocab/gpt2-encoder.json"
             --set "data.merges_path=$data/vocab/gpt2-vocab.bpe")
fi
common=("${data_sets[@]}" --set schedule.max_steps=3 --set train.eval_interval=0 --set profile.peak_flops_per_s=1e15
        --set energy.enabled=false --set output.dir="$out" --quiet)
fails=0

# One run's plan row: predicted and measured allocated peak, reserved, phase.
row() {  # config batch name status
  python3 - "$out/$3/summary.json" "$1" "$2" "$4" <<'PY'
import json, sys
path, cfg, batch, rc = sys.argv[1:]
try:
    s = json.load(open(path))
except Exception as e:
    print(f"{cfg:<28} {batch:>5}  no summary ({e}); exit {rc}"); sys.exit(0)
p = s.get("plan") or {}
c = p.get("components", {})
def g(k, f): return (c.get(k) or {}).get(f)
pk, rs = c.get("peak", {}), c.get("peak_reserved", {})
ratio = pk.get("ratio")
print(f"{cfg:<28} {batch:>5} {s.get('status'):<10} pred {(pk.get('predicted_bytes') or 0)/2**30:8.3f} GiB"
      f"  meas {(pk.get('measured_bytes') or 0)/2**30:8.3f} GiB  ratio {ratio if ratio is None else round(ratio,3)}"
      f"  reserved pred {(rs.get('predicted_bytes') or 0)/2**30:.3f} meas {(rs.get('measured_bytes') or 0)/2**30:.3f} GiB"
      f"  at {p.get('peak_phase',{}).get('predicted')} / {p.get('peak_phase',{}).get('measured')}"
      f"  within5% {ratio is not None and abs(ratio-1) <= 0.05}")
PY
}

echo "== predicted vs measured (caching allocator, step 2)"
for cfg in configs/gpt2_small_cuda.yaml configs/llama_cuda.yaml; do
  if [[ ! -f "$cfg" ]]; then echo "FAIL: $cfg absent"; fails=1; continue; fi
  for b in 2 4 8; do
    name="$(basename "$cfg" .yaml)-b$b"; rm -rf "${out:?}/$name"
    timeout 60 "$bin" train --config "$cfg" --set train.batch_size=$b --set output.name="$name" "${common[@]}" \
      > "$out/$name.log" 2>&1
    row "$cfg" "$b" "$name" "$?"
  done
done

echo "== out-of-memory edge (GPT-2 small, LLMPROF_CUDA_MEMORY_FRACTION)"
total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
total_bytes=$((total * 1024 * 1024))
cap=$((12 * 1024 * 1024 * 1024))          # 12 GiB of the allocator's share
fraction=$(python3 -c "print($cap / $total_bytes)")
largest=$("$bin" plan --config configs/gpt2_small_cuda.yaml "${data_sets[@]}" --device "$cap" --format json |
  python3 -c "import json,sys; print(json.load(sys.stdin)['largest_batch'])")
echo "cap $cap bytes (fraction $fraction of $total_bytes); plan's largest batch: $largest"
if ! [[ $largest =~ ^[0-9]+$ ]] || (( largest < 1 )); then
  echo "FAIL: llmprof plan gave no largest batch"; exit 1
fi
for b in "$largest" $((largest + 1)); do
  name="edge-b$b"; rm -rf "${out:?}/$name"
  LLMPROF_CUDA_MEMORY_FRACTION=$fraction timeout 60 "$bin" train --config configs/gpt2_small_cuda.yaml \
    --set train.batch_size=$b --set output.name="$name" "${common[@]}" > "$out/$name.log" 2>&1
  rc=$?
  oom=$(grep -c -i "out of memory" "$out/$name.log" "$out/$name/summary.json" 2>/dev/null | awk -F: '{s+=$2} END {print s+0}')
  echo "batch $b: exit $rc, out-of-memory mentions $oom"
  row gpt2_small_cuda "$b" "$name" "$rc"
  if [[ $b == "$largest" && $oom -ne 0 ]]; then echo "FAIL: predicted to fit, ran out"; fails=1; fi
  if [[ $b != "$largest" && $oom -eq 0 ]]; then echo "FAIL: predicted not to fit, ran"; fails=1; fi
done
echo "command: scripts/gpu/plan_check.sh --llmprof $bin (${SECONDS}s)"
exit $fails
