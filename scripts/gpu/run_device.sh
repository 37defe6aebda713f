#!/usr/bin/env bash
# The GPU issue's measurements on a CUDA host, in stages that each fit one call of a few minutes
# (the build stays in build-cuda/ between them). Needs what scripts/gpu/prepare_device.sh put in
# .device/ when the host has no package registry. Results go to $OUT (default ./gpu-results):
#   scripts/gpu/run_device.sh build     scripts/build_gpu.sh without tests -> build-cuda/llmprof
#   scripts/gpu/run_device.sh smoke     peak on the device; 20 steps at level ops: kernels.csv,
#                                       trace.json and summary.json's gpu section
#   scripts/gpu/run_device.sh measure   GPT-2 small bf16 at levels off, phases, ops (twice,
#                                       interleaved), loop vs fused AdamW, fp16, CUDA graphs; the
#                                       nanoGPT peer (eager, compile, torch.profiler)
#   scripts/gpu/run_device.sh distilbert  DistilBERT-base MLM bf16 at levels off and ops
#   scripts/gpu/run_device.sh bench     llmprof bench: GPT-2 small fp32/bf16/fp16 latency (events)
#   scripts/gpu/run_device.sh fusedloss model.fused_loss against LibTorch's loss: the same loss
#                                       at step 1 and along 20 steps (bf16), fp16 and fp32 run
#   scripts/gpu/run_device.sh fusednorm model.fused_norm (and fused_swiglu): numerics tests on
#                                       the device, then GPT-2 small bf16 batch 32 fused against
#                                       unfused (100 steps, interleaved): MFU and the loss curves;
#                                       nanoGPT eager and compile at batch 32; the Llama config
#   scripts/gpu/run_device.sh nvtx      profile.nvtx under nsys (or ncu): llmprof's ranges seen
#   scripts/gpu/run_device.sh peerkernels [key=value...]  llmprof's kernels per step next to
#                                       nanoGPT's under torch.profiler, by kernel name
#   scripts/gpu/run_device.sh eval      llmprof eval on the device (a 5-step run's checkpoint)
#   scripts/gpu/run_device.sh tune      llmprof tune on GPT-2 small bf16: CUDA graphs and the
#                                       fused add + LayerNorm (numerics kept), within $TUNE_S s;
#                                       TUNE_CONFIG=configs/llama_cuda.yaml for the Llama config
#   scripts/gpu/run_device.sh all       every stage in one call, each under its own time limit
#                                       and all within $BUDGET seconds (570); results.tgz in $OUT;
#                                       STAGES="smoke measure" runs only those after the build
# Each stage ends with a table of what it measured (the commands that gave each figure above it).
set -uo pipefail
cd "$(dirname "$0")/../.."
stage=${1:-}
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
llmprof=build-cuda/llmprof
config=configs/gpt2_small_cuda.yaml
# ../shared does not travel to the device host: prepare_device.sh copied what the runs read.
data=.device/data
data_sets=()
if [ -d "$data" ]; then
  data_sets=(--set "data.path=$data/tinyshakespeare.txt"
             --set "data.vocab_path=$data/vocab/gpt2-encoder.json"
             --set "data.merges_path=$data/vocab/gpt2-vocab.bpe")
fi

# One training run: name, then --set overrides. Prints median ms/step, tokens/s and MFU.
train() {
  local name=$1
  shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  echo "+ $llmprof train -c $config ${sets[*]}"
  "$llmprof" train -c "$config" --set "output.dir=$out/runs" --set "output.name=$name" \
    "${data_sets[@]}" "${sets[@]}" >"$out/$name.log" 2>&1 || { echo "$name: failed, see $out/$name.log"; tail -5 "$out/$name.log"; return 1; }
  python3 scripts/gpu/summarize_run.py "$name" "$out/runs/$name"
}

peer() {  # peer MODES OPTIMIZER TIMEOUT [BATCH]: nanoGPT on the same GPU, same shapes (batch 12
  # unless given); one JSON line per mode
  [ "${PEER:-1}" = 0 ] && return 0  # PEER=0: llmprof's runs only
  if [ ! -f .device/src/nanoGPT/model.py ]; then
    echo "nanoGPT peer skipped: no .device/src/nanoGPT (scripts/gpu/prepare_device.sh nanoGPT=...)"
    return 0
  fi
  echo "+ python3 scripts/gpu/nanogpt_peer.py --nanogpt .device/src/nanoGPT --modes $1 --optimizer $2 --batch ${4:-12}"
  PYTHONUNBUFFERED=1 timeout "$3" python3 scripts/gpu/nanogpt_peer.py \
    --nanogpt .device/src/nanoGPT --modes "$1" --optimizer "$2" --batch "${4:-12}" \
    --trace-dir /tmp | tee -a "$out/nanogpt.jsonl"
}

case "$stage" in
  build)
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
    # NCCL's header comes with PyTorch's nvidia-nccl wheel, not with the CUDA toolkit.
    extra=()
    nccl_inc=$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2>/dev/null)
    [ -n "$nccl_inc" ] && [ -f "$nccl_inc/nccl.h" ] && extra+=("-DLLMPROF_NCCL_INCLUDE_DIR=$nccl_inc")
    echo "build: nccl.h from ${nccl_inc:-nowhere}"
    scripts/build_gpu.sh -DLLMPROF_BUILD_TESTS=OFF "${extra[@]}" >"$out/build.log" 2>&1
    rc=$?
    grep -E "llmprof: (dist|GPU path|CUDA kernels)" "$out/build.log"
    tail -n 15 "$out/build.log"
    if [ $rc -ne 0 ] && [ -f build-cuda/build.ninja ]; then  # every error at once, not the first
      ninja -C build-cuda -k 0 >"$out/build_errors.log" 2>&1
      grep -E -A6 "error|undefined reference" "$out/build_errors.log" | head -n 150
      echo "build: again without data parallelism (LLMPROF_WITH_DIST=OFF)"
      cmake -S . -B build-cuda -DLLMPROF_WITH_DIST=OFF >/dev/null &&
        cmake --build build-cuda -j "$(nproc)" 2>&1 | tail -n 5
    fi
    if [ ! -x "$llmprof" ] && [ -f build-cuda/build.ninja ]; then
      echo "build: again without LibTorch 2.x's fast paths (LLMPROF_TORCH2_FAST_PATHS=OFF)"
      cmake -S . -B build-cuda -DLLMPROF_TORCH2_FAST_PATHS=OFF >/dev/null &&
        cmake --build build-cuda -j "$(nproc)" 2>&1 | tail -n 5
    fi
    test -x "$llmprof" && "$llmprof" --version
    ;;
  distilbert)  # the DistilBERT-base MLM shape, bf16, fused AdamW, at levels off and ops
    bert=configs/distilbert_mlm_wikitext.yaml
    for level in off ops; do
      name=distilbert_base_$level
      echo "+ $llmprof train -c $bert (distilbert-base shape, bf16, cuda, fused, $level)"
      "$llmprof" train -c "$bert" --set device=cuda --set "output.dir=$out/runs" \
        --set "output.name=$name" --set "data.vocab_path=$data/vocab/bert-base-uncased-vocab.txt" \
        --set "data.path=$data/wikitext-2/wiki.train.tokens.gz" \
        --set "data.val_path=$data/wikitext-2/wiki.valid.tokens" \
        --set "eval.paths=wikitext-2/valid=$data/wikitext-2/wiki.valid.tokens" \
        --set model.n_layer=6 --set model.n_head=12 --set model.n_embd=768 --set model.ffn_dim=3072 \
        --set train.batch_size=32 --set train.eval_interval=0 --set train.save_checkpoint=false \
        --set schedule.max_steps=60 --set train.precision=bf16 --set optim.fused=true \
        --set "profile.level=$level" \
        >"$out/$name.log" 2>&1 || { echo "$name: failed"; tail -n 5 "$out/$name.log"; continue; }
      python3 scripts/gpu/summarize_run.py "$name" "$out/runs/$name"
    done
    ;;
  all)  # one call: each stage bounded so that a hang leaves time for the rest and the results
    deadline=$((SECONDS + ${BUDGET:-570} - 20))  # 20 s kept for the archive
    stage() {  # stage NAME LIMIT: at most LIMIT seconds, never past the deadline
      local left=$((deadline - SECONDS)) limit=$2
      [ "$left" -lt "$limit" ] && limit=$left
      if [ "$limit" -lt 10 ]; then echo "$1: skipped, out of time"; return; fi
      echo "== $1 (limit ${limit} s)"
      timeout "$limit" bash "$0" "$1" || echo "$1: exit $?"
    }
    # STAGES picks and orders the stages after the build (default: all of them)
    stage build 220
    if [ -x "$llmprof" ]; then
      for s in ${STAGES:-smoke fusedloss nvtx eval bench measure peerkernels distilbert}; do
        case "$s" in
          smoke) stage smoke 50 ;; fusedloss) stage fusedloss 60 ;; nvtx) stage nvtx 45 ;;
          eval) stage eval 40 ;; bench) stage bench 50 ;; measure) stage measure "${MEASURE_S:-240}" ;;
          peerkernels) stage peerkernels 90 ;; distilbert) stage distilbert 45 ;;
          dist) stage dist "${DIST_S:-260}" ;; llama) stage llama 180 ;; plan) stage plan "${PLAN_S:-200}" ;;
          fusednorm) stage fusednorm "${NORM_S:-340}" ;; tune) stage tune "${TUNE_S:-300}" ;;
          *) echo "all: no stage '$s'" ;;
        esac
      done
    fi
    # At most 8 files come back from the device host: one archive holds the runs and logs.
    # Checkpoints (GPT-2 small's weights and optimizer: 1.5 GB) stay behind.
    (cd "$out" && find runs -name 'trace.json' -size +30M -delete 2>/dev/null
     find runs plan -type f \( -name '*.pt' -o -name '*.safetensors' \) -delete 2>/dev/null
     tar -czf results.tgz --exclude=results.tgz runs plan ./*.log ./*.txt ./*.jsonl 2>/dev/null
     rm -rf runs plan ./*.log ./*.jsonl)
    ls -la "$out"
    ;;
  dist)  # data parallelism on LibTorch 2.x: NCCL at world size 1 (one GPU: NCCL refuses two
    # ranks on one device) with a short kernel trace kept for the communication fixtures, then
    # Gloo with 2 ranks on the host's CPU (the 2.x Gloo path at a world size that communicates)
    echo "+ RANK=0 WORLD_SIZE=1 ... $llmprof train -c $config --set ddp.backend=nccl"
    RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
      "$llmprof" train -c "$config" --set "output.dir=$out/runs" --set output.name=nccl_ws1 \
      "${data_sets[@]}" --set ddp.backend=nccl --set schedule.max_steps=30 --set profile.level=phases \
      >"$out/nccl_ws1.log" 2>&1 || { echo "nccl_ws1: failed"; tail -n 8 "$out/nccl_ws1.log"; }
    [ -f "$out/runs/nccl_ws1/summary.json" ] && python3 scripts/gpu/summarize_run.py nccl_ws1 "$out/runs/nccl_ws1"
    python3 - "$out/runs/nccl_ws1" <<'PY' || true
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
print("nccl_ws1 distributed:", json.dumps(s.get("distributed"))[:600])
PY
    echo "+ RANK=0 WORLD_SIZE=1 ... $llmprof train (2 layers, ops, trace, nccl): the trace fixture"
    RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29518 \
      "$llmprof" train -c "$config" --set "output.dir=$out/runs" --set output.name=nccl_trace \
      "${data_sets[@]}" --set ddp.backend=nccl --set model.n_layer=2 --set train.batch_size=4 \
      --set schedule.max_steps=8 --set profile.level=ops --set profile.trace=true \
      --set profile.schedule_wait=4 --set profile.schedule_warmup=1 --set profile.schedule_active=2 \
      >"$out/nccl_trace.log" 2>&1 || { echo "nccl_trace: failed"; tail -n 8 "$out/nccl_trace.log"; }
    ls -la "$out/runs/nccl_trace" 2>/dev/null | head -n 30
    # A resumed data-parallel run on CUDA (NCCL at world size 1, dropout on so that the device's
    # random state matters): 20 steps straight, twice (the run-to-run floor), against 10 steps
    # and a resume from their checkpoint; losses of steps 11-20 compared.
    ws1() {  # name port sets...
      local name=$1 port=$2; shift 2
      local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
      RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$llmprof" train -c "$config" --set "output.dir=$out/runs" --set "output.name=$name" \
        "${data_sets[@]}" --set ddp.backend=nccl --set model.dropout=0.1 --set profile.level=off \
        --set train.eval_interval=0 --set schedule.max_steps=20 "${sets[@]}" \
        >"$out/$name.log" 2>&1 || { echo "$name: failed"; tail -n 8 "$out/$name.log"; }
    }
    echo "+ RANK=0 WORLD_SIZE=1 ... $llmprof train --set ddp.backend=nccl --set model.dropout=0.1: 20 steps, twice; 10 + resume"
    ws1 resume_full 29521
    ws1 resume_full2 29522
    ws1 resume_first10 29523 train.save_checkpoint=true train.checkpoint_interval=10 schedule.max_steps=10
    ckpt=$(find "$out/runs/resume_first10" -maxdepth 2 -type d -name 'checkpoint-step10' | head -n 1)
    [ -z "$ckpt" ] && ckpt=$(find "$out/runs/resume_first10" -maxdepth 2 -type d -name 'checkpoint' | head -n 1)
    echo "checkpoint: ${ckpt:-none}"; ls "$ckpt" 2>/dev/null | tr '\n' ' '; echo
    [ -n "$ckpt" ] && ws1 resume_from10 29524 "train.resume_from=$ckpt"
    python3 - "$out/runs" <<'PY' || true
import csv, sys
def losses(name):
    try:
        rows = list(csv.DictReader(open(f"{sys.argv[1]}/{name}/steps.csv")))
    except OSError as e:
        return {}
    key = "loss" if "loss" in rows[0] else [k for k in rows[0] if "loss" in k][0]
    return {int(r["step"]): float(r[key]) for r in rows}
full, full2, res = losses("resume_full"), losses("resume_full2"), losses("resume_from10")
steps = [s for s in range(11, 21) if s in full and s in res]
def worst(a, b): return max((abs(a[s] - b[s]) / abs(a[s]) for s in steps), default=None)
print(f"resume on CUDA: steps compared {steps[:1]}..{steps[-1:]} ({len(steps)}); largest relative loss "
      f"difference resumed vs straight {worst(full, res)}; straight vs straight {worst(full, full2)}")
for s in steps[:3] + steps[-2:]:
    print(f"  step {s}: straight {full[s]:.6f} again {full2.get(s, float('nan')):.6f} resumed {res[s]:.6f}")
PY
    if [ "${DIST_TESTS:-1}" = 1 ]; then  # the dist and ddp test suites against LibTorch 2.x
      cmake -S . -B build-cuda -DLLMPROF_BUILD_TESTS=ON >/dev/null 2>&1 &&
        cmake --build build-cuda -j "$(nproc)" --target test_dist test_ddp test_eval >"$out/dist_tests_build.log" 2>&1 ||
        { echo "dist tests: build failed"; grep -E -A4 "error" "$out/dist_tests_build.log" | head -n 40; }
      # The faults and the one-rank NCCL group first (LibTorch 2.x), then the suites; failures in full.
      for t in "test_dist --gtest_filter=DistFaults.*:DistGroup.*" test_ddp \
               "test_eval --gtest_filter=CallTimer.*:RunBench.*"; do
        set -f; set -- $t; set +f
        [ -x "build-cuda/tests/$1" ] || continue
        echo "+ build-cuda/tests/$t"
        log="$out/${1}_$(echo "${2:-all}" | tr -c 'A-Za-z0-9' '_').log"
        (cd build-cuda/tests && timeout 120 "./$1" "${@:2}" >"$log" 2>&1)
        grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from .* ran" "$log" | tail -n 12
        awk '/^\[ RUN/ {buf = ""} {buf = buf $0 "\n"} /^\[  FAILED  \] [^ ]+ \(/ {printf "%s", buf; buf = ""}' "$log" | head -n 80
      done
    fi
    train gpt2_cuda_graphs_short train.cuda_graphs=true profile.level=phases schedule.max_steps=12
    ;;
  llama)  # Llama-family on the device: tiny folders against transformers and the tokenizers
    # library, then configs/llama_cuda.yaml measured next to GPT-2 small
    echo "+ python3 scripts/hf/check_llama_transformers.py --llmprof $llmprof"
    PYTHONUNBUFFERED=1 timeout 150 python3 scripts/hf/check_llama_transformers.py --llmprof "$llmprof" \
      2>&1 | tee "$out/llama_transformers.txt" | tail -n 40
    [ "${LLAMA_MEASURE:-1}" = 0 ] && exit 0  # the folders' check only
    for t in .device/tokenizers/*.json; do
      [ -f "$t" ] || continue
      echo "+ python3 scripts/hf/check_tokenizer_ids.py $t --llmprof $llmprof"
      timeout 60 python3 scripts/hf/check_tokenizer_ids.py "$t" --llmprof "$llmprof" 2>&1 | tail -n 4
    done
    llama=configs/llama_cuda.yaml
    echo "+ $llmprof train -c $llama (profile.level off, then ops)"
    for level in off ops; do
      "$llmprof" train -c "$llama" --set "output.dir=$out/runs" --set "output.name=llama_$level" \
        "${data_sets[@]}" --set "profile.level=$level" --set schedule.max_steps=40 \
        >"$out/llama_$level.log" 2>&1 || { echo "llama_$level: failed"; tail -n 8 "$out/llama_$level.log"; continue; }
      python3 scripts/gpu/summarize_run.py "llama_$level" "$out/runs/llama_$level"
    done
    train gpt2_off_ref profile.level=off schedule.max_steps=40
    [ -f "$out/runs/llama_ops/kernels.csv" ] && head -n 12 "$out/runs/llama_ops/kernels.csv"
    ;;
  plan)  # the memory planner against the CUDA caching allocator, and the out-of-memory edge
    if [ -x scripts/gpu/plan_check.sh ]; then
      timeout "${PLAN_S:-200}" scripts/gpu/plan_check.sh --llmprof "$llmprof" --out "$out/plan" 2>&1 | tail -n 40
    else
      echo "plan: scripts/gpu/plan_check.sh not found"
    fi
    ;;
  smoke)
    [ "${PEAK:-1}" = 0 ] || "$llmprof" peak --device cuda --precision bf16 | tee "$out/peak_bf16.txt"
    train smoke_ops profile.level=ops schedule.max_steps=20 profile.schedule_wait=5 \
      profile.schedule_warmup=2 profile.schedule_active=3 profile.trace=true
    python3 scripts/gpu/attribution.py "$out/runs/smoke_ops"
    if [ -d .device/src/hta ]; then  # HTA's analyses on llmprof's GPU trace (the device's pandas)
      echo "+ python3 scripts/gpu/hta_check.py $out/runs/smoke_ops/trace.json .device/src/hta"
      python3 scripts/gpu/hta_check.py "$out/runs/smoke_ops/trace.json" .device/src/hta 2>&1 |
        grep -v "^Parsed\|^Overall\|^leaving" | tail -n 30 | tee "$out/hta.txt"
    fi
    ;;
  fusedloss)  # model.fused_loss vs LibTorch's loss on the same seed and batches
    steps=(schedule.max_steps=20 profile.level=off)
    train loss_torch_bf16 model.fused_loss=false "${steps[@]}"
    train loss_fused_bf16 model.fused_loss=true "${steps[@]}"
    python3 scripts/gpu/compare_losses.py "$out/runs/loss_torch_bf16" "$out/runs/loss_fused_bf16"
    train loss_fused_fp16 model.fused_loss=true train.precision=fp16 "${steps[@]}"
    train loss_torch_fp32 model.fused_loss=false train.precision=fp32 schedule.max_steps=3 \
      profile.level=off
    train loss_fused_fp32 model.fused_loss=true train.precision=fp32 schedule.max_steps=3 \
      profile.level=off
    python3 scripts/gpu/compare_losses.py "$out/runs/loss_torch_fp32" "$out/runs/loss_fused_fp32"
    ;;
  fusednorm)  # model.fused_norm (and fused_swiglu), in the GPU issue's order: the kernels'
    # numerics tests (test_model --gtest_filter='FusedNorm*:FusedSwiglu*': CPU and CUDA), then
    # GPT-2 small bf16 at batch 32 unfused and fused, NORM_STEPS (100) steps each, NORM_ROUNDS (2)
    # interleaved rounds: MFU of each run, the loss curves fused against unfused and unfused
    # against unfused (the run-to-run floor); a 12-step ops-level run shows the fused op's rows;
    # then, unless NORM_PEER=0, nanoGPT eager and torch.compile at batch 32; unless NORM_LLAMA=0,
    # configs/llama_cuda.yaml unfused and with both fused ops.
    echo "+ cmake -S . -B build-cuda -DLLMPROF_BUILD_TESTS=ON; cmake --build build-cuda --target test_model"
    cmake -S . -B build-cuda -DLLMPROF_BUILD_TESTS=ON >"$out/norm_tests_build.log" 2>&1 &&
      cmake --build build-cuda -j "$(nproc)" --target test_model >>"$out/norm_tests_build.log" 2>&1 ||
      { echo "test_model: build failed"; grep -E -A4 "error" "$out/norm_tests_build.log" | head -n 40; }
    if [ -x build-cuda/tests/test_model ]; then
      echo "+ build-cuda/tests/test_model --gtest_filter='FusedNorm*:FusedSwiglu*'"
      (cd build-cuda/tests && timeout 120 ./test_model --gtest_filter='FusedNorm*:FusedSwiglu*') \
        >"$out/norm_tests.log" 2>&1
      grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests from .* ran|max \|diff\||Skipped|^no CUDA|build has" \
        "$out/norm_tests.log" | head -n 40
    fi
    steps=(train.batch_size=32 "schedule.max_steps=${NORM_STEPS:-100}" profile.level=off
           train.eval_interval=0)
    for rep in $(seq 1 "${NORM_ROUNDS:-2}"); do
      train "norm_off_$rep" model.fused_norm=false "${steps[@]}"
      train "norm_on_$rep" model.fused_norm=true "${steps[@]}"
    done
    echo "fused against unfused (round 1), then unfused against unfused (rounds 1, 2: the floor):"
    python3 scripts/gpu/compare_losses.py "$out/runs/norm_off_1" "$out/runs/norm_on_1"
    [ -d "$out/runs/norm_off_2" ] &&
      python3 scripts/gpu/compare_losses.py "$out/runs/norm_off_1" "$out/runs/norm_off_2"
    python3 scripts/gpu/compare_mfu.py "$out/runs" norm_off norm_on
    train norm_on_ops model.fused_norm=true train.batch_size=32 schedule.max_steps=12 \
      profile.level=ops profile.schedule_wait=6 profile.schedule_warmup=2 profile.schedule_active=2
    grep -E "^(op,|llmprof::|aten::native_layer_norm|aten::add,|aten::add_,|aten::silu|aten::mul,)" \
      "$out/runs/norm_on_ops/ops.csv" 2>/dev/null | head -n 12
    [ "${NORM_PEER:-1}" = 0 ] || peer eager,compile fused 150 32
    if [ "${NORM_LLAMA:-1}" != 0 ]; then
      config=configs/llama_cuda.yaml
      train llama_norm_off model.fused_norm=false "${steps[@]}"
      train llama_norm_on model.fused_norm=true model.fused_swiglu=true "${steps[@]}"
      python3 scripts/gpu/compare_losses.py "$out/runs/llama_norm_off" "$out/runs/llama_norm_on"
    fi
    ;;
  nvtx)  # llmprof's NVTX ranges as Nsight sees them
    sets=(--set profile.nvtx=true --set profile.level=modules --set schedule.max_steps=4
          --set "output.dir=$out/runs" --set output.name=nvtx "${data_sets[@]}")
    nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -n 1)
    ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
    if [ -n "$nsys" ]; then
      echo "+ nsys profile --trace=cuda,nvtx $llmprof train -c $config ${sets[*]}"
      "$nsys" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
        -o "$out/nvtx" "$llmprof" train -c "$config" "${sets[@]}" >"$out/nvtx.log" 2>&1
      "$nsys" stats --report nvtx_sum --format csv "$out/nvtx.nsys-rep" 2>&1 | head -n 25
      rm -f "$out/nvtx.nsys-rep" "$out/nvtx.sqlite"
    elif [ -n "$ncu" ]; then  # ncu profiles a kernel only inside the named NVTX push/pop stack
      for stack in step/forward/ step/backward/; do
        echo "+ ncu --nvtx --nvtx-include $stack --launch-count 1 $llmprof train -c $config ${sets[*]}"
        "$ncu" --nvtx --nvtx-include "$stack" --launch-count 1 --metrics gpu__time_duration.sum \
          "$llmprof" train -c "$config" "${sets[@]}" --set output.name="nvtx_${stack//\//_}" \
          >"$out/ncu_${stack//\//_}.log" 2>&1
        grep -E "==PROF==|==WARNING==|==ERROR==|Context [0-9]+, Stream|gpu__time_duration" \
          "$out/ncu_${stack//\//_}.log" | head -n 12
      done
    else
      echo "nvtx: neither nsys nor ncu found"
    fi
    ;;
  measure)
    # Overhead per level, and LibTorch's loss against the config's fused one: two interleaved
    # repetitions (fused AdamW, the config's default) around the peer; LEVELS picks the levels.
    for rep in 1 2; do
      for level in ${LEVELS:-off ops}; do train "gpt2_${level}_$rep" profile.level=$level; done
      train "gpt2_torchloss_off_$rep" profile.level=off model.fused_loss=false
      [ "$rep" = 1 ] && peer "${PEER_MODES:-eager}" fused 80
    done
    train gpt2_cuda_graphs train.cuda_graphs=true profile.level=phases
    [ -z "${MORE:-}" ] || for run in $MORE; do  # MORE="name:key=value,key=value ..."
      IFS=, read -r -a kv <<<"${run#*:}"; train "${run%%:*}" "${kv[@]}"
    done
    peer compile fused 110
    for b in ${PEER_BATCHES:-}; do peer eager,compile fused 150 "$b"; done  # other batch sizes
    ;;
  peerkernels)  # llmprof's kernels per step next to nanoGPT's (torch.profiler), by kernel name;
    # LibTorch's loss by default (nanoGPT's ops), overrides after the stage's name
    train peer_kernels_ops profile.level=ops model.fused_loss=false "${@:2}"
    python3 scripts/gpu/nanogpt_peer.py --nanogpt .device/src/nanoGPT --modes profiler \
      --optimizer fused --steps 10 --trace-dir /tmp | tee -a "$out/nanogpt.jsonl"
    python3 scripts/gpu/peer_kernels.py "$out/runs/peer_kernels_ops" /tmp/nanogpt_profiler_trace.json 10
    ;;
  tune)  # llmprof tune on the device: the GPU-only knobs measured (the tune issue's GPU part);
    # the budget leaves the stage's last 30 s to the table
    tc=${TUNE_CONFIG:-$config}
    echo "+ $llmprof tune -c $tc --space train.cuda_graphs=false,true --space model.fused_norm=false,true --steps 20"
    "$llmprof" tune -c "$tc" "${data_sets[@]}" --space train.cuda_graphs=false,true \
      --space model.fused_norm=false,true --steps 20 --budget "$(( ${TUNE_S:-300} - 30 ))s" \
      --out "$out/runs/tune" >"$out/tune.log" 2>&1 || echo "tune: exit $? (see $out/tune.log)"
    [ -f "$out/runs/tune/tune.md" ] && cat "$out/runs/tune/tune.md"
    ;;
  eval)  # llmprof eval on the device, of a checkpoint a short run saved
    train eval_source schedule.max_steps=5 train.save_checkpoint=true profile.level=off
    echo "+ $llmprof eval -c $config --checkpoint $out/runs/eval_source"
    "$llmprof" eval -c "$config" --checkpoint "$out/runs/eval_source" --out "$out/eval" \
      "${data_sets[@]}" --set eval.max_batches=10 2>&1 | tail -n 8
    ;;
  bench)  # llmprof bench on the device: GPT-2 small forward and generation latency per variant
    echo "+ $llmprof bench -c $config (fp32,bf16,fp16; batch 1,8; cuda)"
    "$llmprof" bench -c "$config" --out "$out/bench" "${data_sets[@]}" \
      --set bench.variants=fp32,bf16,fp16 --set bench.batch_sizes=1,8 --set bench.iters=50 \
      --set bench.warmup_iters=5 --set bench.generate_tokens=32 --set eval.max_batches=4 \
      >"$out/bench.log" 2>&1 || { echo "bench: failed"; tail -n 5 "$out/bench.log"; }
    tail -n 12 "$out/bench.log"
    ;;
  *)
    echo "usage: scripts/gpu/run_device.sh build|smoke|fusedloss|fusednorm|nvtx|peerkernels|eval|measure|distilbert|bench|all" >&2
    exit 2
    ;;
esac
