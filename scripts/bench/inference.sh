#!/usr/bin/env bash
# Inference benchmark: `llmprof bench` on a config (default: the DistilBERT MLM config at its
# initial weights, so no training run is needed; pass --checkpoint for a trained one), then
# samples/s of every variant and batch size with its ratio to fp32 at the same batch size, the
# latency spread (p99 / p50) and the weight memory, all from one run's bench.csv.
#
#   scripts/bench/inference.sh [--config F] [--checkpoint DIR] [--batch-sizes 1,8] [--iters N]
#                              [--variants fp32,bf16,int8] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/distilbert_mlm_wikitext.yaml checkpoint="" batches=1,8 iters=20
variants=fp32,bf16,int8 threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --checkpoint) checkpoint=$2; shift 2 ;;
    --batch-sizes) batches=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "inference.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "inference.sh: build first (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-inference.XXXXXX)
trap 'rm -rf "$out"' EXIT

cmd=(bench --config "$config" --quiet --out "$out" --set output.name=bench
     --set bench.variants="$variants" --set bench.batch_sizes="$batches"
     --set bench.iters="$iters" --set threads="$threads" --set eval.max_batches=4 --set eval.paths=)
[ -n "$checkpoint" ] && cmd+=(--checkpoint "$checkpoint")
# The encoder configs read ../shared/data; a small slice of the records keeps start-up short.
grep -q "type: distilbert" "$config" && cmd+=(--set data.max_examples=2000 --set data.val_max_examples=500)
echo "command: scripts/bench/inference.sh --config $config ${checkpoint:+--checkpoint $checkpoint }--batch-sizes $batches --iters $iters --variants $variants --threads $threads"
[ -z "$checkpoint" ] && echo "  (initial weights: speed only; loss is the untrained model's)"
$bin "${cmd[@]}" >/dev/null 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
# bench.csv columns: variant,batch,seq_len,samples_per_s,tokens_per_s,p50_ms,p90_ms,p95_ms,p99_ms,
# max_ms,loss,perplexity,accuracy,weight_bytes,...
awk -F, 'NR == 1 { next }
  { key = $1 "," $2; sps[key] = $4; p50[key] = $6; p99[key] = $9; w[key] = $14; loss[key] = $11
    order[++n] = key }
  END {
    printf "  %-8s %6s %12s %10s %10s %10s %12s %10s\n", "variant", "batch", "samples/s",
           "vs fp32", "p50 ms", "p99/p50", "weights MiB", "loss"
    for (i = 1; i <= n; ++i) {
      k = order[i]; split(k, kv, ",")
      base = sps["fp32," kv[2]]
      ratio = base > 0 ? sprintf("%.2fx", sps[k] / base) : "n/a"
      printf "  %-8s %6s %12.1f %10s %10.2f %10.2f %12.1f %10s\n", kv[1], kv[2], sps[k], ratio,
             p50[k], p99[k] / p50[k], w[k] / 1048576, loss[k] == "" ? "null" : sprintf("%.4f", loss[k])
    }
  }' "$out/bench/bench.csv"
