#!/usr/bin/env python3
"""The tiny Llama-family folders of scripts/hf/make_llama_fixtures.py against transformers and the
tokenizers library, on a host that has them (no network: everything is read from the folders).

For each folder:
  1. transformers' AutoModelForCausalLM (LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM;
     float32, eager attention) gives the logits of expected.json's ids: compared with the numpy
     logits in expected.json (which tests/checkpoint/llama_hf_checkpoint_test.cpp compares with
     llmprof's, 1e-4).
  2. tokenizers.Tokenizer.from_file(tokenizer.json).encode(text).ids and transformers'
     AutoTokenizer(text).input_ids on expected.json's hard strings: compared with the ids there
     (which llmprof's tokenizer.json reader must give exactly, same test).
  3. With --llmprof BIN: llmprof trains one SGD step at lr 1e-9 from the folder
     (model.init_from), `llmprof export --format hf` writes the run back, and transformers loads
     that export: its logits must match expected.json too (the update moves them by < 1e-6), its
     config.json must keep the model_type, and a tied model's export must have no lm_head.weight.

Prints one line per check and the largest differences; exit 0 when all pass, 1 when one fails.
Run: python3 scripts/hf/check_llama_transformers.py [--llmprof build/llmprof] [FOLDER ...]
(default folders: tests/checkpoint/fixtures/hf_llama/{llama,qwen2,mistral}_tiny).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT = [os.path.join(ROOT, "tests", "checkpoint", "fixtures", "hf_llama", n)
           for n in ("llama_tiny", "qwen2_tiny", "mistral_tiny")]
TOLERANCE = 1e-4

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def load_model(folder):
    import torch
    from transformers import AutoModelForCausalLM
    kwargs = dict(local_files_only=True, attn_implementation="eager")
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **kwargs)
    except TypeError:  # transformers 4: torch_dtype
        model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32, **kwargs)
    return model.eval()


def logits_diff(folder, expected):
    import torch
    model = load_model(folder)
    with torch.no_grad():
        ids = torch.tensor([expected["ids"]])
        got = model(input_ids=ids).logits[0].double()
    want = torch.tensor(expected["logits"], dtype=torch.float64)
    return type(model).__name__, float((got - want).abs().max())


def check_folder(folder, expected):
    name = os.path.basename(folder.rstrip("/"))
    cls, diff = logits_diff(folder, expected)
    check(diff < TOLERANCE, "%s: %s logits vs numpy: max |diff| %.3g" % (name, cls, diff))
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer
    tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    auto = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    for t in expected["texts"]:
        ids = tok.encode(t["text"]).ids
        check(ids == t["ids"], "%s: tokenizers ids of %r%s" % (
            name, t["text"], "" if ids == t["ids"] else ": %s, expected %s" % (ids, t["ids"])))
        auto_ids = auto(t["text"])["input_ids"]
        check(auto_ids == t["ids"], "%s: AutoTokenizer ids of %r%s" % (
            name, t["text"], "" if auto_ids == t["ids"] else ": %s" % auto_ids))


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    if r.returncode != 0:
        print(r.stdout[-3000:])
    return r.returncode


def check_export(llmprof, folder, expected, work):
    name = os.path.basename(folder.rstrip("/"))
    text = os.path.join(work, "text.txt")
    with open(text, "w") as f:
        f.write(("The quick brown fox jumps over the lazy dog. 12345 digits, don't stop.\n") * 40)
    out = os.path.join(work, name + "-runs")
    config = os.path.join(work, "one_step.yaml")  # no shape key: the folder gives them
    with open(config, "w") as f:
        f.write("model: {block_size: 8}\ndata: {num_workers: 1}\n"
                "schedule: {warmup_steps: 0, max_steps: 1, min_lr: 0}\n"
                "optim: {name: sgd, lr: 1.0e-9, weight_decay: 0}\n"
                "train: {batch_size: 1, eval_interval: 0, save_checkpoint: true}\nthreads: 1\n")
    cmd = [llmprof, "train", "-q", "-c", config, "--set", "model.init_from=" + folder,
           "--set", "data.path=" + text, "--set", "output.dir=" + out]
    check(run(cmd) == 0, "%s: llmprof train from the folder: %s" % (name, " ".join(cmd)))
    runs = sorted(os.listdir(out)) if os.path.isdir(out) else []
    if not runs:
        return
    exported = os.path.join(work, name + "-hf")
    cmd = [llmprof, "export", "--format", "hf", os.path.join(out, runs[-1]), "--out", exported]
    if not check(run(cmd) == 0, "%s: %s" % (name, " ".join(cmd))) and not os.path.isdir(exported):
        return
    with open(os.path.join(folder, "config.json")) as f:
        original = json.load(f)
    with open(os.path.join(exported, "config.json")) as f:
        back = json.load(f)
    check(back["model_type"] == original["model_type"],
          "%s: export keeps model_type %s" % (name, original["model_type"]))
    with open(os.path.join(exported, "model.safetensors"), "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    check(("lm_head.weight" in header) != original["tie_word_embeddings"],
          "%s: export has lm_head.weight exactly when untied" % name)
    cls, diff = logits_diff(exported, expected)
    check(diff < TOLERANCE, "%s: llmprof's export through %s vs numpy: max |diff| %.3g" % (
        name, cls, diff))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", default=DEFAULT, metavar="FOLDER")
    ap.add_argument("--llmprof", metavar="BIN", help="also train+export through this llmprof")
    args = ap.parse_args()
    import tokenizers
    import torch
    import transformers
    print("transformers %s, tokenizers %s, torch %s" % (
        transformers.__version__, tokenizers.__version__, torch.__version__))
    with tempfile.TemporaryDirectory() as work:
        for folder in args.folders:
            with open(os.path.join(folder, "expected.json")) as f:
                expected = json.load(f)
            check_folder(folder, expected)
            if args.llmprof:
                check_export(args.llmprof, folder, expected, work)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
