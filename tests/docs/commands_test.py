#!/usr/bin/env python3
"""Runs every `llmprof ...` command of the fenced code blocks in README.md and docs/**/*.md.

Usage: commands_test.py SOURCE_DIR LLMPROF_BINARY [--list] [--only PAGE_SUBSTRING]

Each page's commands run in order in one temporary directory of their own (two pages at a time) (configs/, tests/ and
scripts/ linked from the source tree, ../shared/data linked to the real data), with
`--set schedule.max_steps=2` added to the commands that train (not to configs/ci_smoke.yaml's
20 steps, whose loss@20 the pages gate), and the machine's roofs given
(`profile.peak_flops_per_s`, `profile.peak_bytes_per_s`) so that no run measures them. A
placeholder for a run or sweep directory (`runs/<run>`, `<top dir>`, `<sweep>`, ...) gets one
from fixture runs made once. Optional parts in brackets (`[--jobs 2]`) are left out.

A command fails the test when it exits with anything but 0 (3 and 4 too for `check`: verdicts)
or runs past 60 s: an unknown flag, key, file or subcommand exits 2. A block preceded by
`<!-- docs-output: COMMAND -->` is what COMMAND prints: the test runs it and compares the
excerpt's `label: value` lines with the last lines it printed, label by label (the figures,
which differ from run to run and at 2 steps, are masked). A block preceded by
`<!-- docs-test: skip REASON -->` (or `<!-- docs-test: skip REASON: TEXT -->`, only its commands
containing TEXT; several may precede a block) is not run; REASON is one of: gpu, slurm, over 60 s. Every `configs/*.yaml`
named in the pages must exist and validate (`llmprof config show`); `llmprof --help` and each
subcommand's help must name a guide page that exists.
"""
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

REASONS = {"gpu", "slurm", "over 60 s"}
LIMIT_S = 60
FENCE = re.compile(r"^\s*(```|~~~)")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(gpu|slurm|over 60 s)(?::\s*(.*?))?\s*-->")
SKIP_ANY = re.compile(r"<!--\s*docs-test:\s*skip\s+(.*?)\s*-->")
OUTPUT = re.compile(r"<!--\s*docs-output:\s*(.*?)\s*-->")
LABEL = re.compile(r"^([A-Za-z][A-Za-z0-9 _./-]*):(\s|$)")


def labels(text):
    """The labels of `label: value` lines, in order: an excerpt's figures are masked this way."""
    return [m.group(1).strip() for m in map(LABEL.match, text.split("\n")) if m]


def excerpts(path):
    """(line number, command, excerpt text) of each block marked <!-- docs-output: COMMAND -->."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    for i, line in enumerate(lines):
        m = OUTPUT.search(line) if line.lstrip().startswith("<!--") else None
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        k = j + 1
        while k < len(lines) and not FENCE.match(lines[k]):
            k += 1
        out.append((i + 1, m.group(1), "\n".join(lines[j + 1:k])))
    return out


def pages(src):
    out = [os.path.join(src, "README.md")]
    for root, _, files in os.walk(os.path.join(src, "docs")):
        out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".md")]
    return sorted(out)


def commands(path):
    """(line number, command, skip reason or None) of every llmprof command in fenced blocks."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, errors = [], []
    in_block, skip, pending = False, [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not in_block:
            m = SKIP_ANY.search(line) if line.lstrip().startswith("<!--") else None
            if m:
                s = SKIP.search(line)
                if not s:
                    errors.append(f"{path}:{i + 1}: skip reason '{m.group(1)}' is not one of {sorted(REASONS)}")
                else:
                    pending.append((s.group(1), s.group(2)))
            if FENCE.match(line):
                in_block, skip, pending = True, pending, []
            i += 1
            continue
        if FENCE.match(line):
            in_block, skip = False, []
            i += 1
            continue
        start = i
        cmd = line
        while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        cmd = re.sub(r"\s+#.*$", "", cmd.strip())  # a trailing comment
        if not cmd or cmd.startswith("#"):
            continue
        words = cmd.split()
        j = 0
        while j < len(words) and re.match(r"^[A-Z_][A-Z0-9_]*=", words[j]):
            j += 1
        if j >= len(words) or not re.match(r"^(\S*/)?llmprof$", words[j]):
            continue
        reason = next((r for r, text in skip if text is None or text in cmd), None)
        found.append((start + 1, cmd, reason))
    return found, errors


def concrete(cmd, fixtures):
    """The command with placeholders replaced and optional parts dropped; None if one is left."""
    cmd = re.sub(r"\s*\[[^\]]*\]", "", cmd)
    # A Hugging Face folder the user brings: the tiny committed ones of the same architecture.
    cmd = re.sub(r"/path/to/(gpt2|hf-folder)\b", "tests/checkpoint/fixtures/hf/gpt2_tiny", cmd)
    cmd = re.sub(r"/path/to/llama-folder\b", "tests/checkpoint/fixtures/hf_llama/llama_tiny", cmd)
    cmd = re.sub(r"/path/to/distilbert[\w-]*", "tests/checkpoint/fixtures/hf/distilbert_tiny", cmd)
    run_key = "mlm" if "distilbert" in cmd else "run"
    for pat, key in [(r"runs/<top dir>|<top dir>|<top>", "ddp"), (r"<sweep>", "sweep"),
                     (r"runs/<[^>]*>|<run[^>]*>", run_key)]:
        if re.search(pat, cmd):
            cmd = re.sub(pat, fixtures(key), cmd)
    if "<" in cmd or re.search(r"\|", cmd):
        return None
    return cmd


def shorter(cmd, sub):
    """--sets that keep a documented command short without changing what it exercises: fewer
    eval batches and bench iterations, all-reduce sizes up to 4 MiB, a DistilBERT run's data sets cut to a few hundred
    examples, and one thread (two OpenMP threads on a loaded 2-core host wait on each other)."""
    out = [] if "threads" in cmd or "--nproc" in cmd else ["--set", "threads=1"]
    if sub in ("eval", "bench"):
        out += ["--set", "eval.max_batches=2"]
    if sub == "bench":
        out += ["--set", "bench.iters=2", "--set", "bench.warmup_iters=1",
                "--set", "bench.batch_sizes=1"]
    if sub == "peak" and "--comm" in cmd and "--max-bytes" not in cmd:
        out += ["--max-bytes", "4M"]
    # The tiny folders that stand in for a user's Hugging Face folder have few positions.
    for folder, positions in (("hf/gpt2_tiny", 16), ("hf/distilbert_tiny", 12)):
        if folder in cmd and sub in ("train", "eval", "bench"):
            out += ["--set", f"model.block_size={positions}"]
    if "distilbert" in cmd:
        out += ["--set", "data.max_examples=256", "--set", "data.val_max_examples=64",
                "--set", "train.eval_steps=1"]
    return out


def main():
    src, binary = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    all_cmds, errors = [], []
    configs = set()
    for p in pages(src):
        if only and only not in p:
            continue
        text = open(p, encoding="utf-8").read()
        configs |= set(re.findall(r"\bconfigs/[A-Za-z0-9_.-]+\.(?:yaml|json)", text))
        cmds, errs = commands(p)
        errors += errs
        all_cmds += [(os.path.relpath(p, src), n, c, r) for n, c, r in cmds]
        all_cmds += [(os.path.relpath(p, src), n, c, ("output", x)) for n, c, x in excerpts(p)]
    if "--list" in sys.argv:
        for p, n, c, r in all_cmds:
            print(f"{p}:{n}: {'[' + str(r[0] if isinstance(r, tuple) else 'skip ' + r) + '] ' if r else ''}{c}")
        return 0
    shared = os.path.abspath(os.path.join(src, "..", "shared", "data"))
    # Without ../shared/data (a clone outside the workspace), what reads it is skipped, saying so.
    needs_data = set() if os.path.isdir(shared) else {
        c for c in configs if os.path.exists(os.path.join(src, c)) and
        "shared/data" in open(os.path.join(src, c), encoding="utf-8").read()}
    if needs_data:
        print(f"docs test: {shared} is absent: skipping the commands that read it "
              f"(through {', '.join(sorted(needs_data))})")
    top = tempfile.mkdtemp(prefix="llmprof-docs-")
    os.makedirs(os.path.join(top, "shared"))
    os.symlink(shared, os.path.join(top, "shared", "data"))
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    roofs = ["--set", "profile.peak_flops_per_s=1e11", "--set", "profile.peak_bytes_per_s=1e10"]

    def workdir(name):
        d = os.path.join(top, name)
        os.makedirs(d)
        for link in ("configs", "tests", "scripts", "examples"):
            os.symlink(os.path.join(src, link), os.path.join(d, link))
        os.makedirs(os.path.join(d, "build"))
        os.symlink(binary, os.path.join(d, "build", "llmprof"))
        return d

    fixture_dir = workdir("fixtures")
    made = {}

    def fixtures(key):
        if key in made:
            return made[key]
        steps = ["--set", "schedule.max_steps=2", "--set", "schedule.warmup_steps=0"] + roofs
        if key == "run":
            args = ["train", "-c", "configs/quickstart.yaml", "--set", "profile.level=ops",
                    "--set", "output.name=fixture-run", "--set", "train.save_checkpoint=true"] + steps
            path = "runs/fixture-run"
        elif key == "ddp":
            args = ["train", "-c", "configs/tiny_test.yaml", "--nproc", "2",
                    "--set", "output.name=fixture-ddp"] + steps
            path = "runs/fixture-ddp"
        elif key == "mlm":
            args = ["train", "-c", "configs/distilbert_mlm_wikitext.yaml", "--set",
                    "output.name=fixture-mlm", "--set", "train.save_checkpoint=true"] + steps + \
                shorter("distilbert", "train")
            path = "runs/fixture-mlm"
        else:
            args = ["sweep", "-c", "configs/tiny_test.yaml", "--grid", "train.batch_size=2,4"] + steps
            path = "runs/sweep-tiny_test"
        r = subprocess.run([binary] + args, cwd=fixture_dir, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"docs test: fixture {key} failed ({r.returncode}): {r.stderr[-2000:]}")
        made[key] = os.path.join(fixture_dir, path)
        return made[key]

    for cfg in sorted(configs):
        if not os.path.exists(os.path.join(src, cfg)):
            errors.append(f"{cfg}: named in the docs, no such file")
            continue
        r = subprocess.run([binary, "config", "show", os.path.join(src, cfg)], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"{cfg}: does not validate: {r.stderr.strip()[-500:]}")
    # `llmprof --help` and each subcommand's help name a guide page that exists.
    subs = ["train", "eval", "bench", "config", "sweep", "peak", "report", "plot", "export",
            "tokenize", "plan", "check"]
    for sub in [None] + subs:
        r = subprocess.run([binary] + ([sub] if sub else []) + ["--help"], env=env,
                           capture_output=True, text=True)
        pages_named = re.findall(r"Guide: (docs/\S+\.md)", r.stdout)
        if not pages_named or not all(os.path.exists(os.path.join(src, g)) for g in pages_named):
            errors.append(f"llmprof {sub or ''} --help: no guide page that exists: {pages_named}")
    # Fixtures first (the pages then run two at a time; each page's commands in order).
    for key, pat in (("run", r"runs/<(?!top)[^>]*>|<run[^>]*>"), ("ddp", r"<top"), ("sweep", r"<sweep>")):
        if any(re.search(pat, c) and not r for _, _, c, r in all_cmds):
            fixtures(key)
    if any("distilbert" in c and re.search(r"<[^>]*run[^>]*>", c) for _, _, c, _ in all_cmds):
        if "configs/distilbert_mlm_wikitext.yaml" in needs_data:
            needs_data.add("distilbert")  # the commands the MLM fixture's run would serve
        else:
            fixtures("mlm")
    by_page = {}
    for item in all_cmds:
        by_page.setdefault(item[0], []).append(item)
    results = {}

    def run_page(page):
        log, errs, ran, skipped = [], [], 0, 0
        for _, n, cmd, reason in by_page[page]:
            r_ran, r_skipped = run_one(page, n, cmd, reason, log, errs)
            ran, skipped = ran + r_ran, skipped + r_skipped
        results[page] = (log, errs, ran, skipped)

    dirs = {page: workdir(re.sub(r"[^A-Za-z0-9]", "_", page)) for page in by_page}

    def run_one(page, n, cmd, reason, log, errs):
        where = f"{page}:{n}"
        excerpt = None
        if isinstance(reason, tuple):
            excerpt, reason = reason[1], None
        if not reason and any(d in cmd for d in needs_data):
            reason = "../shared/data absent"
        if reason:
            log.append(f"skip ({reason}): {where}: {cmd}")
            return 0, 1
        c = concrete(cmd, fixtures)
        if c is None:
            errs.append(f"{where}: a placeholder the test cannot fill: {cmd}")
            return 0, 0
        words = shlex.split(c)
        k = 0
        while re.match(r"^[A-Z_][A-Z0-9_]*=", words[k]):
            k += 1
        cmd_env = dict(env, **dict(w.split("=", 1) for w in words[:k]))
        args = words[k + 1:]
        sub = args[0] if args else ""
        if sub in ("train", "eval", "bench") or (sub == "sweep" and len(args) > 1 and args[1] not in ("status", "run-point")):
            # ci_smoke.yaml is 20 steps already, and the pages gate its loss@20.
            # A checkpoint the page reads later needs its steps; a resume, steps beyond it.
            steps = 2
            m = re.search(r"checkpoint_interval=(\d+)", c)
            steps = int(m.group(1)) + 1 if m else steps
            m = re.search(r"checkpoint-step(\d+)", c)
            steps = int(m.group(1)) + 2 if m else steps
            if "configs/ci_smoke.yaml" not in c:
                args += ["--set", f"schedule.max_steps={steps}"]
            args += shorter(c, sub)
            args += [] if "peak_" in c else roofs
        if sub == "peak":
            args += shorter(c, sub)
        ok = {0, 3, 4} if sub == "check" else {0}
        start = time.time()
        try:
            r = subprocess.run([binary] + args, cwd=dirs[page], env=cmd_env, capture_output=True,
                               text=True, timeout=LIMIT_S)
            rc, out = r.returncode, (r.stdout + r.stderr)
        except subprocess.TimeoutExpired:
            rc, out = "timeout", f"ran past {LIMIT_S} s: mark it <!-- docs-test: skip over 60 s -->"
        took = time.time() - start
        if excerpt is not None and rc in ok:
            want, got = labels(excerpt), labels(r.stdout)
            if want != got[-len(want):] if want else True:
                rc = "output"
                out = f"the excerpt's lines {want} are not what the command prints last: {got}"
        status = "ok" if rc in ok else "FAIL"
        log.append(f"{status} ({took:.1f} s, exit {rc}): {where}: {c}")
        if rc not in ok:
            errs.append(f"{where}: exit {rc}: {c}\n    " + "\n    ".join(out.strip().split("\n")[-6:]))
        return 1, 0

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(run_page, sorted(by_page, key=lambda p: -len(by_page[p]))))
    ran = skipped = 0
    for page in sorted(results):
        log, errs, r, s = results[page]
        print("\n".join(log))
        errors.extend(errs)
        ran, skipped = ran + r, skipped + s
    print(f"docs test: {ran} commands run, {skipped} skipped, {len(configs)} configs checked, "
          f"{time.time() - t0:.0f} s")
    if errors:
        print("docs test: FAILED:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    print("docs test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
