#!/usr/bin/env bash
# Data-parallel training, 1 rank against 2 ranks at the same per-rank batch (the quick-start shape
# by default): ms/step (median after warm-up of the merged steps.csv, i.e. the slowest rank's
# step), comm ms per step (rank 0's) and bytes all-reduced per step (summary.json's
# `distributed` section), the communication analysis' exposed ms per step, overlap and bus
# bandwidth (`distributed.comm`) against the all-reduce roof that `llmprof peak --comm --nproc 2`
# measures first in the same script run (and every 2-rank run is given as
# profile.peak_busbw_bytes_per_s), for ddp.overlap true and false and two bucket sizes. Variants run interleaved, each repetition
# starting one variant further along; the table gives medians over the repetitions and each
# variant's ratio to 1 rank (the median of the per-repetition ratios too).
#
#   scripts/bench/ddp.sh [--config FILE] [--steps N] [--repetitions R] [--buckets "25 1"]
#                        [--roof-max-bytes 64M]
#
# The machine's cores are divided among the ranks (llmprof train --nproc): 1 rank gets all of
# them, 2 ranks half each; the table says how many each rank had.
set -euo pipefail
cd "$(dirname "$0")/../.."
config=configs/quickstart.yaml steps=40 reps=3 buckets="25 1" roof_max=64M
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --repetitions) reps=$2; shift 2 ;;
    --buckets) buckets=$2; shift 2 ;;
    --roof-max-bytes) roof_max=$2; shift 2 ;;
    *) echo "ddp.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=build/llmprof
[ -x $bin ] || { echo "ddp.sh: build first (scripts/build.sh)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "ddp.sh: needs python3 to read summary.json" >&2; exit 2; }
out=$(mktemp -d /tmp/llmprof-ddp.XXXXXX)
trap 'rm -rf "$out"' EXIT

# The all-reduce roof over the 2 ranks: the largest bus bandwidth over message sizes from 4 KiB.
roof_cmd=($bin peak --comm --nproc 2 --max-bytes "$roof_max" --iters 5 --warmup-iters 1
          --output "$out/roof")
if ! "${roof_cmd[@]}" >"$out/roof.log" 2>&1; then
  echo "ddp.sh: ${roof_cmd[*]} failed; its output:" >&2
  tail -20 "$out/roof.log" >&2
  exit 1
fi
roof=$(sed -n 's/^peak_busbw_bytes_per_s: //p' "$out/roof.log")
case "$roof" in
  ''|null) echo "ddp.sh: llmprof peak --comm gave no bus bandwidth; its output:" >&2
           cat "$out/roof.log" >&2; exit 1 ;;
esac

# Variants: name, ranks, overlap, bucket_mb.
variants=("r1 1 true 25")
for b in $buckets; do
  variants+=("r2-overlap-b$b 2 true $b" "r2-nooverlap-b$b 2 false $b")
done
common=(--quiet --out "$out" --set schedule.max_steps="$steps" --set schedule.warmup_steps=5
        --set train.eval_interval=0 --set profile.warmup_steps=5
        --set data.generated_chars=200000)
n=${#variants[@]}
for r in $(seq 1 "$reps"); do
  for i in $(seq 0 $((n - 1))); do
    read -r name ranks overlap bucket <<<"${variants[$(((i + r - 1) % n))]}"
    args=(train --config "$config" "${common[@]}" --set output.name="$name-$r" --nproc "$ranks"
          --set ddp.overlap="$overlap" --set ddp.bucket_mb="$bucket")
    [ "$ranks" = 1 ] || args+=(--set profile.peak_busbw_bytes_per_s="$roof")
    echo "$bin ${args[*]}" >"$out/$name-$r.cmd"
    if ! $bin "${args[@]}" >"$out/$name-$r.log" 2>&1; then
      echo "ddp.sh: run $name-$r failed; its output:" >&2
      tail -20 "$out/$name-$r.log" >&2
      exit 1
    fi
  done
done

echo "command: scripts/bench/ddp.sh --config $config --steps $steps --repetitions $reps --buckets \"$buckets\""
echo "one run: $(cat "$out/r2-overlap-b${buckets%% *}-1.cmd" | sed "s|$out|OUT|")"
echo "roof: $(echo "${roof_cmd[*]}" | sed "s|$out|OUT|"): $(sed -n 's/^comm_roof: //p' "$out/roof.log")"
python3 - "$out" "$reps" "$roof" "${variants[@]}" <<'EOF'
import json, os, statistics, sys

out, reps, roof = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
variants = [v.split() for v in sys.argv[4:]]

def first(d, *keys):
    """The first of keys present in dict d (None when none is)."""
    for k in keys:
        if isinstance(d, dict) and k in d and d[k] is not None:
            return d[k]
    return None

def median_of(x):
    """A statistics block's median, or the number itself."""
    return x.get("median") if isinstance(x, dict) else x

def step_ms(run, warmup):
    """Median step_ms of the run's steps.csv after the warm-up steps: for a 2-rank run the merged
    file's global step (the slowest rank's time)."""
    import csv
    with open(os.path.join(out, run, "steps.csv")) as f:
        vals = [float(r["step_ms"]) for r in csv.DictReader(f)
                if r.get("step_ms") and int(r["step"]) > warmup]
    return statistics.median(vals) if vals else None

def read(run):
    s = json.load(open(os.path.join(out, run, "summary.json")))
    dist = s.get("distributed") or {}
    comm_ms = median_of(first(dist, "rank0_comm_ms_per_step_median", "comm_ms_per_step"))
    bytes_ = median_of(first(dist, "bytes_per_step"))
    env = os.path.join(out, run, "env.json")
    if not os.path.exists(env):
        env = os.path.join(out, run, "rank0", "env.json")
    threads = json.load(open(env)).get("threads") if os.path.exists(env) else None
    comm = dist.get("comm") or {}
    return (step_ms(run, 5), comm_ms, bytes_, threads, comm.get("exposed_comm_ms_median"),
            comm.get("overlap"), comm.get("busbw_gb_per_s_median"))

rows = {}
for name, ranks, overlap, bucket in variants:
    rows[name] = [read(f"{name}-{r}") for r in range(1, reps + 1)]

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

def fmt(v, spec):
    """v in spec, or "null" right-aligned to spec's width."""
    width = int("".join(c for c in spec.split(".")[0] if c.isdigit()) or 0)
    return format(v, spec) if v is not None else "null".rjust(width)

base = [r[0] for r in rows["r1"]]
print(f"roof: {roof / 1e9:.3f} GB/s all-reduce bus bandwidth (llmprof peak --comm, 2 ranks)")
print(f"{'variant':<20} {'ranks':>5} {'overlap':>7} {'bucket_mb':>9} {'ms/step':>9} "
      f"{'x 1 rank':>9} {'(paired)':>9} {'comm ms/step':>12} {'MB/step':>9} {'threads':>7} "
      f"{'exposed ms':>10} {'hidden':>7} {'busbw GB/s':>10} {'of roof':>8}")
for name, ranks, overlap, bucket in variants:
    rs = rows[name]
    ms = med([r[0] for r in rs])
    paired = med([r[0] / b for r, b in zip(rs, base)])
    comm = med([r[1] for r in rs])
    mb = med([r[2] / 1e6 if r[2] is not None else None for r in rs])
    threads = rs[0][3]
    exposed = med([r[4] for r in rs])
    hidden = med([r[5] for r in rs])
    busbw = med([r[6] for r in rs])
    of_roof = busbw * 1e9 / roof if busbw is not None and roof > 0 else None
    if ranks == "1":
        overlap, bucket, comm, mb = "-", "-", comm, mb
    print(f"{name:<20} {ranks:>5} {overlap:>7} {bucket:>9} {fmt(ms, '9.2f')} "
          f"{fmt(ms / med(base), '9.3f')} {fmt(paired, '9.3f')} {fmt(comm, '12.2f')} "
          f"{fmt(mb, '9.3f')} {str(threads) if threads is not None else 'null':>7} "
          f"{fmt(exposed, '10.2f')} {fmt(hidden, '7.3f')} {fmt(busbw, '10.3f')} "
          f"{fmt(of_roof, '8.1%')}")
print(f"medians over {reps} repetitions of the median step after 5 warm-up steps; a 2-rank "
      "step is the merged steps.csv's (the slowest rank's); comm ms/step: rank 0's summed "
      "all-reduce time per step after the first bucket layout (summary.json distributed."
      "rank0_comm_ms_per_step_median); MB/step: bytes all-reduced per step / 1e6; exposed ms, "
      "hidden (overlap: the share of all-reduce time under compute) and busbw (bytes / latency "
      "x 2(n-1)/n, latency the shortest duration across ranks): summary.json distributed.comm "
      "medians after the first bucket layout; of roof: busbw / the roof above")
EOF
