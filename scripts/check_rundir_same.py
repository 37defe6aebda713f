#!/usr/bin/env python3
"""Are two llmprof output folders the same, timings and timestamps aside?

Compares two run directories, two sweep directories, or two folders holding several of them,
file by file:
  - the same set of files (relative paths) on both sides;
  - CSV: the same header, the same number of rows, cell by cell, except the masked columns of
    MASKS below (timings, rates, counters of the host); a file listed with key columns has its
    rows matched by those columns (its row order follows measured times);
  - JSON: key by key, except the masked key paths of MASKS (glob patterns over dotted paths,
    list items as [i]); a list listed with a key has its items matched by it (its order follows
    measured times: a data-parallel summary's ranks, the straggler first);
  - YAML and text: line by line after the listed substitutions (a log line's time stamp, the
    figures of a progress line);
  - binary (model.pt, *.safetensors, *.gz): by size only, or skipped (SKIPPED), as listed.
Every difference is printed with its file and its line and column, or its key path.
Exit 0: the same; 1: they differ; 2: bad input (a folder missing, a file that does not parse).

Run mode: with --baseline-bin A --candidate-bin B it first runs, with each llmprof binary, the
same six kinds of output into <work>/baseline and <work>/candidate (a quick-start run at
profile.level=ops, a DistilBERT MLM run, a 2x2 sweep of the tiny config, an eval and a bench of
the MLM run's checkpoint, a 2-rank data-parallel run of the tiny config; threads=1 and a fixed
seed, so losses are exact), then compares them.
  python3 scripts/check_rundir_same.py RUN_A RUN_B
  python3 scripts/check_rundir_same.py --baseline-bin main/build/llmprof \\
      --candidate-bin build/llmprof --work /tmp/same
Python 3 standard library only.
"""

import argparse
import csv
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys

# ---------------------------------------------------------------------------------------------
# What is not compared. Each entry: a glob over the file's path relative to the compared root
# (fnmatch: '*' crosses '/'), and what is masked in it. Only times, rates, host counters and
# time stamps belong here: every loss, count, shape, name and setting is compared.

# Time and rate columns, by file. '*' in a column name is a glob (gpu_*_ms).
CSV_MASKED_COLUMNS = [
    ("*steps.csv", ["data_ms", "forward_ms", "backward_ms", "optimizer_ms", "step_ms", "eval_ms",
                    "tokens_per_s", "flops_per_s", "mfu", "minor_faults", "major_faults",
                    "voluntary_switches", "involuntary_switches", "cpu_ms", "max_rss_bytes",
                    "energy_j", "avg_power_w", "host_step_ms", "gpu_*_ms",
                    "device_peak_allocated_bytes", "device_reserved_bytes",
                    "device_free_reserved_bytes",
                    "slowest_rank"]),  # a data-parallel run's merged steps.csv
    # A data-parallel run: each rank's clock readings and the spans and all-reduces timed on it
    # (rank<k>/ and the top's merge), rank 0's clock estimates of the others, and what the
    # analysis derives from the times (who launched last, lags, overlap). Steps, buckets, bytes,
    # elements, dtypes and layouts are compared.
    ("*comm.csv", ["ready_ns", "launch_ns", "end_ns", "comm_ms", "backward_ms_at_launch"]),
    ("*phases.csv", ["start_ns", "end_ns"]),
    ("*clocks.csv", ["start_*", "end_*", "drift_*"]),
    ("*collectives.csv", ["*_aligned_ns", "*_ms", "*_gb_per_s", "last_rank"]),
    ("*comm_steps.csv", ["*_aligned_ns", "*_ms", "overlap", "last_launches"]),
    ("*eval.csv", ["eval_ms"]),
    ("*modules.csv", ["total_ms", "mean_ms", "self_ms", "share_of_pass", "mfu",
                      "achieved_gflops_per_s", "achieved_gb_per_s", "bound", "unmodelled_ms",
                      "lost_ms", "gpu_ms"]),
    ("*ops.csv", ["self_ms", "total_ms", "self_share", "achieved_gflops_per_s",
                  "achieved_gb_per_s", "bound", "unmodelled_ms", "lost_ms", "gpu_ms"]),
    ("*memory.csv", ["rss_bytes"]),
    ("*eval_sets.csv", ["samples_per_s", "tokens_per_s", "seconds", "eval_ms"]),
    ("*bench.csv", ["samples_per_s", "tokens_per_s", "p50_ms", "p90_ms", "p95_ms", "p99_ms",
                    "max_ms", "mean_ms", "ttft_ms", "per_token_p50_ms",
                    "generate_tokens_per_s"]),
    ("*bench_quality.csv", ["samples_per_s", "tokens_per_s", "seconds"]),
    ("*sweep.csv", ["*_ms", "*_ms_*", "*tokens_per_s*", "*flops_per_s*", "mfu*", "*_s",
                    "peak_rss_bytes", "energy_*", "*_j", "*_w", "started_at", "finished_at",
                    "start_time", "end_time", "host"]),
]

# Rows matched by these columns instead of by position (the writer orders rows by time).
CSV_ROW_KEYS = [
    ("*ops.csv", ["op", "input_shapes"]),
]

# Masked key paths, by file: dotted paths whose parts are globs; a list item is the part [i], so
# "rows.*.p50_ms" is every row's p50_ms; a last part "*" masks the whole subtree ("timing.*").
JSON_MASKED_KEYS = [
    ("*summary.json", ["timing.*", "throughput.*", "flops.achieved_flops_per_s.*",
                       "mfu.value.*", "memory.*", "process.*", "profiler_overhead.*",
                       "energy.sampler_cpu_fraction", "energy.sampler_cpu_ms",
                       "modules.*_ms", "modules.*_fraction", "wall_s", "start_time",
                       "end_time", "data.load_ms", "eval.*_ms", "roofline.*",
                       "plan.unmodelled_bytes",
                       # data-parallel: rank 0's all-reduce times, each rank's medians, the
                       # communication analysis' times, the straggler and the clocks' figures
                       "distributed.rank0_comm_ms_*", "distributed.ranks.*.*_median",
                       "distributed.comm.*_median", "distributed.comm.exposed_share",
                       "distributed.comm.overlap", "distributed.comm.clock_*",
                       "distributed.comm.straggler.rank",
                       "distributed.comm.straggler.last_launches",
                       "distributed.comm.straggler.lag_ms", "distributed.comm.straggler.phase",
                       "distributed.comm.straggler.phase_excess_ms"]),
    ("*env.json", ["host.*", "start_time", "peak_bandwidth.*", "peak_flops.*",
                   "llmprof.git_sha", "llmprof.build_type", "blas.*", "torch.parallel_info"]),
    ("*eval.json", ["context.host.*", "context.start_time", "context.peak_bandwidth.*",
                    "context.llmprof.git_sha", "context.llmprof.build_type", "context.blas.*",
                    "context.torch.parallel_info",
                    "sets.*.samples_per_s", "sets.*.tokens_per_s", "sets.*.seconds",
                    "sets.*.eval_ms"]),
    ("*bench.json", ["context.host.*", "context.start_time", "context.peak_bandwidth.*",
                     "context.llmprof.git_sha", "context.llmprof.build_type", "context.blas.*",
                     "context.torch.parallel_info",
                     "rows.*.samples_per_s", "rows.*.tokens_per_s", "rows.*.latency.*",
                     "rows.*.ttft_ms", "rows.*.per_token_p50_ms", "rows.*.generate_tokens_per_s",
                     "quality.*.samples_per_s", "quality.*.tokens_per_s", "quality.*.seconds"]),
    ("*sweep.json", ["invocation", "start_time", "end_time", "points.*.duration_s",
                     "points.*.start_time", "points.*.end_time"]),
    ("*plan.json", ["invocation", "start_time"]),
    ("*.point.json", ["invocation", "start_time", "end_time", "duration_s"]),
    ("*checkpoint.json", ["created_at", "saved_at", "llmprof.*"]),
]

# Masked key paths of a document that has a top-level key, by file: (glob, key, masks). A
# data-parallel run's summaries (a rank's and the merged one, with "distributed"): the memory
# probe reads c10's live bytes, and the process group's threads allocate while it measures, so
# the measured side of the plan follows timing (its predictions are compared).
JSON_MASKED_KEYS_WITH = [
    ("*summary.json", "distributed", ["plan.components.*.measured_bytes",
                                      "plan.components.*.ratio", "plan.components.*.differs",
                                      "plan.peak_phase.measured"]),
]

# Lists whose items are matched by a key instead of by position, by file: the list's dotted path
# (globs, as above) and the item key.
JSON_LIST_KEYS = [
    ("*summary.json", [("distributed.ranks", "rank")]),
]

# Text: substitutions made on every line of both sides before the comparison.
TEXT_MASKS = [
    ("*log.txt", [r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\] ",        # the time stamp
                  r"[\d.]+ ms/step", r"\d+ tok/s", r"ETA \S+", r"\([\d.]+ m?s\)",
                  r"written in \d+ ms", r"[\d.]+ of [\d.]+ ms", r"bandwidth [\d.]+ [GM]B/s",
                  r"peak [\d.]+ [GT]FLOP/s", r"[\d.]+ samples/s", r"p\d\d [\d.]+ ms",
                  r"ttft [\d.]+ ms", r"[\d.]+ ms/token", r"in [\d.]+ s\b",
                  r"[\d.]+ ms\b", r"[\d.]+ s\b", r"[\d.]+ [KMG]iB RSS"]),

    # A point's stdout (sweeps/<name>/runs/<point>.log): the end-of-run figures.
    ("*runs/*.log", [r"^(step time|throughput|MFU): .*$"]),
]

# Files compared by size only, and files not compared at all (their presence still is).
BINARY_BY_SIZE = ["*.pt", "*.safetensors", "*.bin"]
SKIPPED = [
    "*trace.json", "*trace.json.gz",  # every event carries a measured time stamp and duration
    "*power.csv",  # samples at a fixed rate: their number and values follow the wall time
    "*progress.txt", "*.lock",
]

# ---------------------------------------------------------------------------------------------


# Each side's absolute root path, replaced by ROOT in every text, cell and JSON string before the
# comparison: a sweep records where it ran (run_dir, log, workdir).
ROOT = "<root>"
_roots = set()  # the absolute roots being compared


class BadInput(Exception):
    """A folder or file that cannot be compared (exit 2)."""


def masks_for(table, rel):
    out = []
    for pattern, masks in table:
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
            out.extend(masks)
    return out


def matches_any(rel, patterns):
    base = os.path.basename(rel)
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(base, p) for p in patterns)


def list_files(root):
    files = set()
    for dirpath, _, names in os.walk(root):
        for name in names:
            files.add(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def read_text(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        # Either root, in a file of either side (a copied folder records where it was written).
        for root in sorted(_roots, key=len, reverse=True):
            # The padding after a path (config.yaml aligns its comments) follows its length.
            text = re.sub(re.escape(root) + r"(\S*) +#", ROOT + r"\1 #", text)
            text = text.replace(root, ROOT)
        return text
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not UTF-8 text ({e})")
    except OSError as e:
        raise BadInput(f"{path}: cannot read ({e.strerror})")


# -- CSV --------------------------------------------------------------------------------------

def read_csv(path):
    rows = list(csv.reader(read_text(path).splitlines()))
    if not rows:
        return [], []
    return rows[0], rows[1:]


def compare_csv(rel, path_a, path_b, report):
    head_a, rows_a = read_csv(path_a)
    head_b, rows_b = read_csv(path_b)
    if head_a != head_b:
        report(f"{rel}: header differs: {','.join(head_a)} | {','.join(head_b)}")
        return
    masked = masks_for(CSV_MASKED_COLUMNS, rel)
    compared = [i for i, c in enumerate(head_a)
                if not any(fnmatch.fnmatchcase(c, m) for m in masked)]
    keys = masks_for(CSV_ROW_KEYS, rel)
    if keys and all(k in head_a for k in keys):
        key_idx = [head_a.index(k) for k in keys]

        def keyed(rows):
            return {tuple(r[i] if i < len(r) else "" for i in key_idx): (n, r)
                    for n, r in enumerate(rows, start=2)}
        ka, kb = keyed(rows_a), keyed(rows_b)
        for k in sorted(set(ka) ^ set(kb)):
            side = "baseline" if k in ka else "candidate"
            report(f"{rel}: row {'/'.join(k)} only in the {side}")
        pairs = [(ka[k], kb[k]) for k in sorted(set(ka) & set(kb))]
    else:
        if len(rows_a) != len(rows_b):
            report(f"{rel}: {len(rows_a)} rows | {len(rows_b)} rows")
        pairs = [((n, a), (n, b)) for n, (a, b) in enumerate(zip(rows_a, rows_b), start=2)]
    for (line_a, a), (line_b, b) in pairs:
        if len(a) != len(b):
            report(f"{rel}:{line_a}: {len(a)} cells | {len(b)} cells (line {line_b})")
            continue
        for i in compared:
            if a[i] != b[i]:
                where = f"{line_a}" if line_a == line_b else f"{line_a}|{line_b}"
                report(f"{rel}:{where}: column {head_a[i]}: {a[i]!r} | {b[i]!r}")


# -- JSON -------------------------------------------------------------------------------------

def path_masked(path, masks):
    parts = path.split(".")
    for m in masks:
        mparts = m.split(".")
        # A trailing '*' masks the whole subtree below the prefix.
        if mparts[-1] == "*" and len(parts) >= len(mparts) and all(
                fnmatch.fnmatchcase(p, q) for p, q in zip(parts, mparts[:-1])):
            return True
        if len(parts) == len(mparts) and all(
                fnmatch.fnmatchcase(p, q) for p, q in zip(parts, mparts)):
            return True
    return False


def list_key(path, keyed):
    """The item key of the list at path, if JSON_LIST_KEYS lists it; else None."""
    parts = path.split(".")
    for pattern, key in keyed:
        pparts = pattern.split(".")
        if len(pparts) == len(parts) and all(
                fnmatch.fnmatchcase(p, q) for p, q in zip(parts, pparts)):
            return key
    return None


def by_key(items, key):
    """The items in the order of their key's value (items without one keep their place last)."""
    def order(item):
        return json.dumps(item.get(key), sort_keys=True) if isinstance(item, dict) else ""
    return sorted(items, key=order)


def compare_json_value(rel, path, a, b, masks, report, keyed=()):
    if path and path_masked(path, masks):
        return
    where = path or "(top)"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            sub = f"{path}.{k}" if path else k
            if k not in b:
                if not path_masked(sub, masks):
                    report(f"{rel}: {sub}: only in the baseline")
            elif k not in a:
                if not path_masked(sub, masks):
                    report(f"{rel}: {sub}: only in the candidate")
            else:
                compare_json_value(rel, sub, a[k], b[k], masks, report, keyed)
    elif isinstance(a, list) and isinstance(b, list):
        key = list_key(path, keyed)
        if key is not None:  # matched by key: [i] is the i-th item in the key's order
            a, b = by_key(a, key), by_key(b, key)
        if len(a) != len(b):
            report(f"{rel}: {where}: {len(a)} items | {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            compare_json_value(rel, f"{path}.[{i}]" if path else f"[{i}]", x, y, masks, report,
                               keyed)
    elif type(a) is not type(b) or a != b:
        report(f"{rel}: {where}: {json.dumps(a)[:200]} | {json.dumps(b)[:200]}")


def load_json(path):
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})")


def compare_json(rel, path_a, path_b, report):
    a, b = load_json(path_a), load_json(path_b)
    masks = masks_for(JSON_MASKED_KEYS, rel)
    for pattern, key, more in JSON_MASKED_KEYS_WITH:
        has = any(isinstance(d, dict) and key in d for d in (a, b))
        if has and masks_for([(pattern, more)], rel):
            masks = masks + more
    keyed = masks_for(JSON_LIST_KEYS, rel)
    compare_json_value(rel, "", a, b, masks, report, keyed)


# -- text and binary --------------------------------------------------------------------------

def masked_lines(rel, path):
    subs = [re.compile(p) for p in masks_for(TEXT_MASKS, rel)]
    lines = read_text(path).split("\n")
    for rx in subs:
        lines = [rx.sub("<masked>", line) for line in lines]
    return lines


def compare_text(rel, path_a, path_b, report):
    a, b = masked_lines(rel, path_a), masked_lines(rel, path_b)
    if len(a) != len(b):
        report(f"{rel}: {len(a)} lines | {len(b)} lines")
    for n, (x, y) in enumerate(zip(a, b), start=1):
        if x != y:
            report(f"{rel}:{n}: {x[:160]!r} | {y[:160]!r}")


def compare_file(rel, path_a, path_b, report):
    if matches_any(rel, SKIPPED):
        return
    if matches_any(rel, BINARY_BY_SIZE) or rel.endswith(".gz"):
        sa, sb = os.path.getsize(path_a), os.path.getsize(path_b)
        if sa != sb:
            report(f"{rel}: {sa} bytes | {sb} bytes")
        return
    if rel.endswith(".csv"):
        compare_csv(rel, path_a, path_b, report)
    elif rel.endswith(".json"):
        compare_json(rel, path_a, path_b, report)
    else:
        compare_text(rel, path_a, path_b, report)


def compare_trees(root_a, root_b, out=sys.stdout):
    """Prints each difference; returns how many there are. Raises BadInput."""
    for root in (root_a, root_b):
        if not os.path.isdir(root):
            raise BadInput(f"{root}: not a directory")
    differences = []
    for root in (root_a, root_b):
        _roots.add(os.path.abspath(root))

    def report(line):
        differences.append(line)
        print(line, file=out)

    files_a, files_b = list_files(root_a), list_files(root_b)
    for rel in sorted(files_a - files_b):
        report(f"{rel}: only in {root_a}")
    for rel in sorted(files_b - files_a):
        report(f"{rel}: only in {root_b}")
    for rel in sorted(files_a & files_b):
        compare_file(rel, os.path.join(root_a, rel), os.path.join(root_b, rel), report)
    return len(differences)


# -- run mode ---------------------------------------------------------------------------------

def kinds(source_dir, data_dir):
    """(name, argv after the binary) of each kind, run in order with the output folder as cwd."""
    cfg = lambda name: os.path.join(source_dir, "configs", name)  # noqa: E731
    fixed = ["--set", "threads=1", "--set", "train.seed=1337",
             "--set", "profile.peak_flops_per_s=1e11", "--set", "profile.peak_bytes_per_s=1e10"]
    wiki = os.path.join(data_dir, "wikitext-2")
    mlm_data = ["--set", f"data.vocab_path={data_dir}/vocab/bert-base-uncased-vocab.txt",
                "--set", f"data.path={wiki}/wiki.valid.tokens",
                "--set", f"data.val_path={wiki}/wiki.test.tokens",
                "--set", f"eval.paths=wikitext-2/test={wiki}/wiki.test.tokens"]
    mlm_shape = ["--set", "model.n_layer=1", "--set", "model.n_head=2", "--set", "model.n_embd=32",
                 "--set", "model.ffn_dim=64", "--set", "model.block_size=32",
                 "--set", "model.max_positions=32"]
    mlm_cfg = cfg("distilbert_mlm_wikitext.yaml")
    return [
        # Not one of the six: one short process, for the check's own test.
        ("tiny", ["train", "-c", cfg("tiny_test.yaml"), "--quiet", *fixed,
                  "--set", "profile.level=ops", "--set", "profile.trace=false",
                  "--set", "profile.schedule_wait=1", "--set", "profile.schedule_warmup=1",
                  "--set", "profile.schedule_active=2", "--set", "schedule.max_steps=6",
                  "--set", "train.eval_interval=3", "--set", "output.dir=runs",
                  "--set", "output.name=tiny"]),
        ("quickstart", ["train", "-c", cfg("quickstart.yaml"), "--quiet", *fixed,
                        "--set", "profile.level=ops", "--set", "profile.warmup_steps=2",
                        "--set", "profile.schedule_wait=1", "--set", "profile.schedule_warmup=1",
                        "--set", "profile.schedule_active=2",
                        "--set", "schedule.max_steps=6", "--set", "schedule.warmup_steps=2",
                        "--set", "train.eval_interval=3", "--set", "train.eval_steps=2",
                        "--set", "data.generated_chars=100000",
                        "--set", "output.dir=runs", "--set", "output.name=quickstart"]),
        ("mlm", ["train", "-c", mlm_cfg, "--quiet", *fixed, *mlm_data, *mlm_shape,
                 "--set", "data.max_examples=400", "--set", "data.val_max_examples=50",
                 "--set", "schedule.max_steps=4", "--set", "schedule.warmup_steps=1",
                 "--set", "train.batch_size=4", "--set", "train.eval_interval=2",
                 "--set", "train.eval_steps=2", "--set", "profile.warmup_steps=1",
                 "--set", "output.dir=runs", "--set", "output.name=mlm"]),
        ("sweep", ["sweep", "-c", cfg("tiny_test.yaml"), "--quiet", *fixed,
                   "--grid", "train.batch_size=2,4", "--grid", "optim.lr=1e-3,2e-3",
                   "--set", "schedule.max_steps=4", "--set", "train.eval_interval=2",
                   "--out", "sweeps", "--name", "sweep"]),
        ("eval", ["eval", "-c", mlm_cfg, "--quiet", "--checkpoint", "runs/mlm", *fixed, *mlm_data, *mlm_shape,
                  "--set", "eval.max_batches=2", "--set", "eval.batch_size=4",
                  "--set", "output.dir=evals", "--set", "output.name=eval"]),
        ("bench", ["bench", "-c", mlm_cfg, "--quiet", "--checkpoint", "runs/mlm", *fixed, *mlm_data, *mlm_shape,
                   "--set", "eval.max_batches=2", "--set", "eval.batch_size=4",
                   "--set", "bench.batch_sizes=1,2", "--set", "bench.iters=2",
                   "--set", "bench.warmup_iters=1",
                   "--set", "output.dir=benches", "--set", "output.name=bench"]),
        # Two ranks (Gloo, one thread each): rank<k>/ with comm.csv and phases.csv, and the
        # merged top directory with clocks.csv, collectives.csv and comm_steps.csv.
        ("dp", ["train", "-c", cfg("tiny_test.yaml"), "--quiet", "--nproc", "2", *fixed,
                "--set", "schedule.max_steps=6", "--set", "train.eval_interval=3",
                "--set", "output.dir=runs", "--set", "output.name=dp"]),
    ]


def run_kinds(binary, out_dir, source_dir, data_dir, only):
    """Runs each kind with binary into out_dir (made afresh). Raises BadInput on a failure."""
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise BadInput(f"{binary}: not an executable llmprof")
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    binary = os.path.abspath(binary)
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    for name, argv in kinds(source_dir, data_dir):
        if (only and name not in only) or (not only and name == "tiny"):
            continue
        done = subprocess.run([binary, *argv], cwd=out_dir, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            raise BadInput(f"{binary} {' '.join(argv)}: exit {done.returncode}\n"
                           f"{done.stdout[-2000:]}")
        print(f"{name}: written by {binary}", file=sys.stderr)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    source_dir = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("dirs", nargs="*", help="the two folders to compare (compare mode)")
    ap.add_argument("--baseline-bin", help="llmprof binary that writes the baseline")
    ap.add_argument("--candidate-bin", help="llmprof binary that writes the candidate")
    ap.add_argument("--work", default="/tmp/llmprof-rundir-same",
                    help="run mode: folder for baseline/ and candidate/ (replaced)")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(source_dir), "shared", "data"),
                    help="shared data folder (WikiText-2, BERT vocabulary)")
    ap.add_argument("--kinds", default="",
                    help="run mode: a comma list of quickstart,mlm,sweep,eval,bench,dp (default:"
                         " these six; eval and bench need mlm) or tiny (a short tiny_test run)")
    args = ap.parse_args(argv)
    try:
        if args.baseline_bin or args.candidate_bin:
            if not (args.baseline_bin and args.candidate_bin) or args.dirs:
                raise BadInput("give --baseline-bin and --candidate-bin together, without folders")
            only = set(filter(None, args.kinds.split(",")))
            unknown = only - {k for k, _ in kinds(source_dir, args.data)}
            if unknown:
                raise BadInput(f"--kinds: unknown {','.join(sorted(unknown))}")
            a, b = os.path.join(args.work, "baseline"), os.path.join(args.work, "candidate")
            run_kinds(args.baseline_bin, a, source_dir, args.data, only)
            run_kinds(args.candidate_bin, b, source_dir, args.data, only)
        elif len(args.dirs) == 2:
            a, b = args.dirs
        else:
            raise BadInput("give two folders, or --baseline-bin and --candidate-bin")
        n = compare_trees(a, b)
    except BadInput as e:
        print(f"check_rundir_same: error: {e}", file=sys.stderr)
        return 2
    if n:
        print(f"check_rundir_same: {n} difference(s) between {a} and {b}")
        return 1
    print(f"check_rundir_same: {a} and {b} are the same (masked: timings, rates, time stamps)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
