#!/usr/bin/env python3
"""The peer on the same GPU: nanoGPT's model.py (karpathy/nanoGPT, a checkout you bring), at the
shape and with the optimizer of configs/gpt2_small_cuda.yaml (GPT-2 small, bf16 autocast, AdamW
over two groups, grad clip 1.0, batch 12 x 1024), timed like nanoGPT's train.py (a step ends when
its loss is read). Modes: eager, compile (torch.compile), profiler (eager under torch.profiler
with CPU+CUDA activities and record_shapes, its stop and export timed). Prints one JSON object per
mode. Run on the GPU host by scripts/gpu/run_device.sh:
  python3 scripts/gpu/nanogpt_peer.py --nanogpt .device/src/nanoGPT --modes eager,compile
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nanogpt", required=True, help="folder holding nanoGPT's model.py")
    ap.add_argument("--steps", type=int, default=40, help="timed steps per mode")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--block", type=int, default=1024)
    ap.add_argument("--modes", default="eager,compile,profiler")
    ap.add_argument("--optimizer", default="loop", choices=["loop", "foreach", "fused"],
                    help="AdamW implementation: loop is LibTorch C++'s per-parameter loop")
    ap.add_argument("--peak", type=float, default=989.4e12, help="FLOP/s that MFU divides by")
    ap.add_argument("--trace-dir", default="", help="profiler mode: where its trace goes")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.nanogpt, "model.py")):
        sys.exit(f"nanogpt_peer: {a.nanogpt}/model.py not found: pass a nanoGPT checkout")
    sys.path.insert(0, a.nanogpt)
    import torch
    from model import GPT, GPTConfig

    if not torch.cuda.is_available():
        sys.exit("nanogpt_peer: no CUDA device visible to PyTorch")
    dev = "cuda"
    cfg = GPTConfig(block_size=a.block, vocab_size=50304, n_layer=12, n_head=12, n_embd=768,
                    dropout=0.0, bias=False)
    torch.manual_seed(1337)
    x = torch.randint(50304, (a.batch, a.block)).pin_memory()
    y = torch.randint(50304, (a.batch, a.block)).pin_memory()

    for mode in a.modes.split(","):
        torch.manual_seed(1337)
        model = GPT(cfg).to(dev)
        decay = [p for p in model.parameters() if p.dim() >= 2]
        rest = [p for p in model.parameters() if p.dim() < 2]
        kind = {"loop": dict(foreach=False, fused=False), "foreach": dict(foreach=True),
                "fused": dict(fused=True)}[a.optimizer]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                 {"params": rest, "weight_decay": 0.0}],
                                lr=6e-4, betas=(0.9, 0.95), **kind)
        forward = torch.compile(model) if mode == "compile" else model

        def step():
            xb = x.to(dev, non_blocking=True)
            yb = y.to(dev, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, loss = forward(xb, yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss.item()  # the step's one sync, as train.py's logging does

        for _ in range(a.warmup):
            step()
        times = []
        stop_s = export_s = None
        if mode == "profiler":
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                           record_shapes=True)
            prof.__enter__()
            for _ in range(a.steps):
                t0 = time.perf_counter()
                step()
                times.append((time.perf_counter() - t0) * 1e3)
            t0 = time.perf_counter()
            prof.__exit__(None, None, None)
            stop_s = time.perf_counter() - t0
            path = os.path.join(a.trace_dir or ".", "nanogpt_profiler_trace.json")
            t0 = time.perf_counter()
            prof.export_chrome_trace(path)
            export_s = time.perf_counter() - t0
        else:
            for _ in range(a.steps):
                t0 = time.perf_counter()
                step()
                times.append((time.perf_counter() - t0) * 1e3)
        n = model.get_num_params()  # without position embeddings, as nanoGPT counts
        flops_per_step = (6 * n + 12 * cfg.n_layer * cfg.n_embd * a.block) * a.batch * a.block
        median = statistics.median(times)
        print(json.dumps({
            "peer": "nanoGPT", "mode": mode, "optimizer": a.optimizer, "steps": a.steps,
            "median_ms": round(median, 3), "min_ms": round(min(times), 3),
            "max_ms": round(max(times), 3), "tokens_per_s": round(a.batch * a.block / median * 1e3),
            "flops_per_step": flops_per_step, "mfu": round(flops_per_step / (median * 1e-3) / a.peak, 4),
            "peak_flops_per_s": a.peak, "torch": torch.__version__,
            "device": torch.cuda.get_device_name(), "profiler_stop_s": stop_s,
            "profiler_export_s": export_s}), flush=True)
        del model, opt, forward
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
