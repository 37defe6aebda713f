#!/usr/bin/env bash
# llmprof plan on a GPU host: predicted vs the CUDA caching allocator's peak for GPT-2 small and
# the Llama CUDA config at PLAN_BATCHES (2 4 8; 3 steps each; the peak is step 2's), then the
# out-of-memory edge under a cap on the allocator (LLMPROF_CUDA_MEMORY_FRACTION, as
# torch.cuda.set_per_process_memory_fraction) for each of EDGE_CASES (CONFIG:CAP_GIB[:ALLOC_CONF]):
# with expandable segments the largest batch `llmprof plan --allocator expandable_segments` says
# fits must run and the next must run out of memory; with the default caching allocator (whose
# plan is an upper bound) the plan's largest must run. Each case then walks to the measured edge
# (at most EDGE_WALK runs). A few minutes on an H100/H200, each run bounded by a 60 s timeout.
# Where the host has the data copied under .device/data (no ../shared/data there), the runs and
# the plan read it from there.
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
  for b in ${PLAN_BATCHES:-2 4 8}; do
    name="$(basename "$cfg" .yaml)-b$b"; rm -rf "${out:?}/$name"
    timeout 60 "$bin" train --config "$cfg" --set train.batch_size=$b --set output.name="$name" "${common[@]}" \
      > "$out/$name.log" 2>&1
    row "$cfg" "$b" "$name" "$?"
  done
done

# The out-of-memory edge: under a cap on the allocator (LLMPROF_CUDA_MEMORY_FRACTION, as
# torch.cuda.set_per_process_memory_fraction), the largest batch the plan says fits must run and
# the next must run out. Then, for the record, the measured edge: from the plan's largest batch,
# down until a batch runs or up until one runs out (at most EDGE_WALK more runs). One JSON line
# per run in $out/edge.jsonl. Cases: CONFIG:CAP_GIB[:ALLOC_CONF]; PYTORCH_CUDA_ALLOC_CONF where
# given (expandable_segments:True: the allocator maps one growing segment).
# The fraction is of the total CUDA reports (cudaMemGetInfo), as the allocator computes its cap;
# nvidia-smi's total is larger (143771 MiB against 139.80 GiB on an H200).
total_bytes=$(python3 -c "import torch; print(torch.cuda.mem_get_info()[1])" 2>/dev/null)
[[ $total_bytes =~ ^[0-9]+$ ]] ||
  total_bytes=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1) * 1024 * 1024 ))
edge_run() {  # config cap_bytes alloc_conf batch -> prints status; appends a JSON line
  local cfg=$1 cap=$2 conf=$3 b=$4 name rc oom fraction
  name="edge-$(basename "$cfg" .yaml)-$((cap >> 30))g${conf:+-x}-b$b"; rm -rf "${out:?}/$name"
  fraction=$(python3 -c "print($cap / $total_bytes)")
  PYTORCH_CUDA_ALLOC_CONF=$conf LLMPROF_CUDA_MEMORY_FRACTION=$fraction timeout 60 "$bin" train \
    --config "$cfg" --set train.batch_size="$b" --set output.name="$name" "${common[@]}" \
    > "$out/$name.log" 2>&1
  rc=$?
  oom=$(grep -c -i "out of memory" "$out/$name.log" 2>/dev/null)
  row "$(basename "$cfg" .yaml)" "$b" "$name" "$rc" >&2
  python3 - "$out/$name/summary.json" "$cfg" "$cap" "$conf" "$b" "$rc" "$oom" >> "$out/edge.jsonl" <<'PY'
import json, sys
path, cfg, cap, conf, b, rc, oom = sys.argv[1:]
rec = {"config": cfg, "cap_bytes": int(cap), "alloc_conf": conf, "batch": int(b), "exit": int(rc),
       "oom": int(oom) > 0}
try:
    p = json.load(open(path)).get("plan") or {}
    rec["components"] = p.get("components")
    rec["peak_phase"] = p.get("peak_phase")
except Exception as e:
    rec["summary"] = str(e)
print(json.dumps(rec))
PY
  if (( oom > 0 )); then echo oom; elif (( rc == 0 )); then echo ran; else echo "failed($rc)"; fi
}
for case in ${EDGE_CASES:-configs/gpt2_small_cuda.yaml:12 configs/gpt2_small_cuda.yaml:12:expandable_segments:True configs/llama_cuda.yaml:12 configs/gpt2_small_cuda.yaml:24}; do
  cfg=${case%%:*}; rest=${case#*:}; gib=${rest%%:*}; conf=""
  [[ $rest == *:* ]] && conf=${rest#*:}
  cap=$((gib * 1024 * 1024 * 1024))
  allocator=caching; [[ $conf == *expandable_segments:True* ]] && allocator=expandable_segments
  largest=$("$bin" plan --config "$cfg" "${data_sets[@]}" --device "$cap" --allocator "$allocator" --format json |
    python3 -c "import json,sys; print(json.load(sys.stdin)['largest_batch'])")
  echo "== out-of-memory edge: $cfg, cap $gib GiB${conf:+, $conf}: plan's largest batch $largest"
  if ! [[ $largest =~ ^[0-9]+$ ]] || (( largest < 1 )); then
    echo "FAIL: llmprof plan gave no largest batch"; fails=1; continue
  fi
  at=$(edge_run "$cfg" "$cap" "$conf" "$largest"); above=""
  echo "batch $largest: $at"
  if [[ $at == ran ]]; then
    above=$(edge_run "$cfg" "$cap" "$conf" $((largest + 1))); echo "batch $((largest + 1)): $above"
  fi
  # Under the default caching allocator the plan's reserved is an upper bound (fragmentation up to
  # the largest tensor): its largest batch must run; the next may run too (walked below).
  if [[ $at != ran ]]; then echo "FAIL: predicted to fit, did not run"; fails=1;
  elif [[ $above != oom && $allocator == caching ]]; then echo "bound held: $largest runs (the next too: the bound is not tight)";
  elif [[ $above != oom ]]; then echo "FAIL: predicted not to fit, $above"; fails=1;
  else echo "edge held: $largest runs, $((largest + 1)) runs out"; fi
  # The measured edge, for the record (EDGE_WALK runs at most).
  b=$largest; step=-1; state=$at
  [[ $at == ran ]] && { step=1; b=$((largest + 1)); state=$above; }
  for ((i = 0; i < ${EDGE_WALK:-4}; i++)); do
    if (( step < 0 )) && [[ $state == ran ]]; then break; fi
    if (( step > 0 )) && [[ $state != ran ]]; then break; fi
    b=$((b + step)); (( b < 1 )) && break
    state=$(edge_run "$cfg" "$cap" "$conf" "$b"); echo "batch $b: $state"
  done
done
echo "command: scripts/gpu/plan_check.sh --llmprof $bin (${SECONDS}s)"
exit $fails
