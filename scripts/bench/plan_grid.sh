#!/usr/bin/env bash
# Held-out check of llmprof plan: a grid of small CPU shapes drawn with a fixed seed (batch,
# block, layers, width, model type (PLAN_GRID_TYPES, default "gpt distilbert"; llama adds its
# key/value heads, SwiGLU width and tied head), fp32/bf16, activation checkpointing, manual/sdpa attention),
# each trained for 3 steps; prints the predicted and measured step peak (summary.json's plan
# section: c10's allocator bytes), their ratio, parameters+gradients+optimizer state, and the
# predicted and measured phase of the peak.
#   scripts/bench/plan_grid.sh [--points N] [--seed S] [--llmprof build/llmprof] [--out DIR]
set -euo pipefail
points=12; seed=35; bin=build/llmprof; out=/tmp/llmprof-plan-grid
while [[ $# -gt 0 ]]; do
  case "$1" in
    --points) points="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --llmprof) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "plan_grid.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
types="${PLAN_GRID_TYPES:-gpt distilbert}"
python3 - "$points" "$seed" "$types" > "$out/points.txt" <<'PY'
import random, sys
n, seed, types = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
r = random.Random(seed)
for i in range(n):
    t = r.choice(types)
    heads = r.choice([2, 4])
    width = heads * r.choice([8, 16, 24, 32])
    sets = [f"model.type={t}", f"train.batch_size={r.choice([1, 2, 3, 5, 8])}",
            f"model.block_size={r.choice([16, 24, 48, 64])}", f"model.n_layer={r.choice([1, 2, 3])}",
            f"model.n_embd={width}", f"model.n_head={heads}",
            f"train.precision={r.choice(['fp32', 'bf16'])}"]
    if t == "distilbert":
        sets += ["train.task=mlm", "data.tokenizer=wordpiece",
                 "data.vocab_path=../shared/data/vocab/bert-base-uncased-vocab.txt",
                 "data.path=../shared/data/wikitext-2/wiki.valid.tokens", "data.format=text",
                 "data.max_examples=400"]
    else:
        sets += [f"train.activation_checkpointing={r.choice(['true', 'false'])}",
                 f"model.attention={r.choice(['manual', 'sdpa'])}"]
    if t == "llama":  # grouped-query attention, SwiGLU width, a tied or untied head
        sets += [f"model.n_kv_head={r.choice([h for h in (1, 2, 4) if heads % h == 0])}",
                 f"model.intermediate_size={r.choice([2, 3]) * width}",
                 f"model.tie_embeddings={r.choice(['true', 'false'])}"]
    print(" ".join(sets))
PY
printf '%-3s %-150s %10s %10s %6s %7s %-9s %-9s\n' "#" "point" "pred_MiB" "meas_MiB" "ratio" "states" "pred_at" "meas_at"
i=0
while read -r line; do
  i=$((i + 1))
  args=()
  for kv in $line; do args+=(--set "$kv"); done
  label=$(echo "$line" | sed -E 's# data\.[a-z_]+=[^ ]+##g; s#model\.|train\.##g')
  name="p$i"
  rm -rf "${out:?}/$name"
  if ! "$bin" train --config configs/tiny_test.yaml "${args[@]}" --set schedule.max_steps=3 \
      --set train.eval_interval=0 --set output.dir="$out" --set output.name="$name" --quiet \
      > "$out/$name.log" 2>&1; then
    echo "$i $line: failed (see $out/$name.log)"; continue
  fi
  python3 - "$out/$name/summary.json" "$i" "$label" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
c = p["components"]
states = sum(c[k]["measured_bytes"] for k in ("parameters", "gradients", "optimizer_state"))
pstates = sum(c[k]["predicted_bytes"] for k in ("parameters", "gradients", "optimizer_state"))
pk = c["peak"]
print(f'{sys.argv[2]:<3} {sys.argv[3]:<150} {pk["predicted_bytes"]/2**20:10.3f} '
      f'{pk["measured_bytes"]/2**20:10.3f} {pk["ratio"]:6.3f} {pstates/states:7.4f} '
      f'{p["peak_phase"]["predicted"]:<9} {p["peak_phase"]["measured"]:<9}')
PY
done < "$out/points.txt"
echo "command: PLAN_GRID_TYPES=\"$types\" scripts/bench/plan_grid.sh --points $points --seed $seed --llmprof $bin"
