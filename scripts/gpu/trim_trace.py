#!/usr/bin/env python3
"""Cuts one profiled step out of an llmprof trace.json (or .json.gz) and writes it gzip-compressed,
small enough to commit as a test fixture (tests/gpu/fixtures/). The writer puts one event per line;
the header (schemaVersion, distributedInfo, deviceProperties up to "traceEvents": [), the kept
events' lines and the footer are copied byte for byte, so the fixture keeps the writer's own text
(the space after "rank": that HTA's regex needs, the metadata's order).
Kept: every metadata event; host slices, counters and runtime calls starting inside
ProfilerStep#N; the GPU work (kernels, copies, sets) whose launching call (correlation) was kept,
even when it ran past the step's end; flow arrows whose both ends were kept.
  python3 scripts/gpu/trim_trace.py RUN/rank0/trace.json OUT.trace.json.gz [--step N]
(N: the last recorded step when omitted.) Prints the kept events per category.
"""
import argparse
import collections
import gzip
import json
import sys

HEADER_END = '"traceEvents": [\n'


def fail(message):
    """Bad input: the message on stderr, exit 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


def read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError, EOFError) as e:
        fail(f"trim_trace: {path}: cannot read: {e}")


def split_trace(text, path):
    at = text.find(HEADER_END)
    end = text.rfind("\n]")
    if at < 0 or end < at:
        fail(f"trim_trace: {path}: not an llmprof trace (no {HEADER_END.strip()!r} ... ])")
    header, body, footer = text[:at + len(HEADER_END)], text[at + len(HEADER_END):end], text[end:]
    lines = [l[:-1] if l.endswith(",") else l for l in body.split("\n")]
    return header, [(l, json.loads(l)) for l in lines if l], footer


def step_window(events, step, path):
    steps = {e["name"]: e for _, e in events
             if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")}
    if not steps:
        fail(f"trim_trace: {path}: no ProfilerStep# slice")
    name = f"ProfilerStep#{step}" if step is not None else max(
        steps, key=lambda n: int(n.split("#")[1]))
    if name not in steps:
        fail(f"trim_trace: {path}: no {name} (recorded: {', '.join(sorted(steps))})")
    s = steps[name]
    return name, s["ts"], s["ts"] + s["dur"]


def kept_events(events, t0, t1):
    inside = lambda e: t0 <= e["ts"] <= t1
    launched = {e["args"]["correlation"] for _, e in events
                if e.get("cat") == "cuda_runtime" and inside(e)}
    keep = []
    for line, e in events:
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "M":
            keep.append((line, e))
        elif ph == "X" and cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            corr = e["args"].get("correlation")
            if corr in launched or (corr is None and inside(e)):
                keep.append((line, e))
        elif ph in ("X", "C", "s", "f") and inside(e):
            keep.append((line, e))
    # A flow arrow whose start or finish was cut would dangle: keep pairs only.
    ends = collections.Counter(e["id"] for _, e in keep if e.get("ph") in ("s", "f"))
    flow_ok = lambda e: e.get("ph") not in ("s", "f") or ends[e["id"]] == 2
    # A launch arrow's finish lies on GPU work kept by correlation even past the step's end.
    for line, e in events:
        if e.get("ph") == "f" and e.get("cat") == "launch" and not inside(e) and ends[e["id"]] == 1:
            keep.append((line, e))
            ends[e["id"]] += 1
    order = {id(e): i for i, (_, e) in enumerate(events)}
    return sorted((k for k in keep if flow_ok(k[1])), key=lambda k: order[id(k[1])])


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("trace")
    p.add_argument("out")
    p.add_argument("--step", type=int)
    a = p.parse_args()
    header, events, footer = split_trace(read_text(a.trace), a.trace)
    name, t0, t1 = step_window(events, a.step, a.trace)
    keep = kept_events(events, t0, t1)
    text = header + ",\n".join(line for line, _ in keep) + footer
    json.loads(text)  # still one JSON document
    try:
        with gzip.GzipFile(a.out, "wb", mtime=0) as f:  # mtime 0: same input, same bytes
            f.write(text.encode("utf-8"))
    except OSError as e:
        fail(f"trim_trace: {a.out}: cannot write: {e}")
    counts = collections.Counter(e.get("cat") or e.get("ph") for _, e in keep)
    print(f"{a.out}: {name}, {len(keep)} of {len(events)} events: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
