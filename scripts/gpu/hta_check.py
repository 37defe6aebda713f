#!/usr/bin/env python3
"""Loads an llmprof trace (trace.json or trace.json.gz) in Holistic Trace Analysis
(facebookresearch/HolisticTraceAnalysis, a checkout you bring) and runs its temporal breakdown,
kernel breakdown and idle-time analysis on it; prints each result's head and exits 1 on the first
that fails. HTA needs pandas, numpy, networkx, pyyaml (Debian: python3-pandas python3-networkx
python3-yaml python3-psutil); plotly only draws figures, which this asks none of, so a stand-in
module takes its place when it is not installed.
  python3 scripts/gpu/hta_check.py runs/<run>/trace.json /path/to/HolisticTraceAnalysis
"""
import os
import shutil
import sys
import tempfile
import types


def stub_plotly():
    try:
        import plotly  # noqa: F401
        return
    except ImportError:
        pass

    def missing(what):
        def call(*args, **kwargs):
            raise RuntimeError(f"{what}: plotly is not installed (figures are off)")
        return call

    modules = {}
    for name in ["plotly", "plotly.express", "plotly.graph_objects", "plotly.subplots",
                 "plotly.io", "plotly.colors"]:
        module = types.ModuleType(name)
        module.__getattr__ = lambda attr, _n=name: missing(f"{_n}.{attr}")
        modules[name] = module
        sys.modules[name] = module
    for name, module in modules.items():
        if "." in name:
            parent, child = name.rsplit(".", 1)
            setattr(modules[parent], child, module)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    trace, hta_src = sys.argv[1], sys.argv[2]
    if not os.path.isfile(trace):
        sys.exit(f"hta_check: {trace}: no such trace file")
    if not os.path.isfile(os.path.join(hta_src, "hta", "trace_analysis.py")):
        sys.exit(f"hta_check: {hta_src}: not a HolisticTraceAnalysis checkout (hta/trace_analysis.py)")
    sys.path.insert(0, hta_src)
    stub_plotly()
    from hta.trace_analysis import TraceAnalysis

    # HTA reads every .json/.gz of a folder as a rank's trace: the run folder's other JSON files
    # (summary.json, env.json) would be taken for traces too, so the trace goes alone.
    folder = tempfile.mkdtemp(prefix="hta_check.")
    try:
        shutil.copy(trace, os.path.join(folder, "rank0." + os.path.basename(trace)))
        analyzer = TraceAnalysis(trace_dir=folder)
        checks = [
            ("temporal breakdown", lambda: analyzer.get_temporal_breakdown(visualize=False)),
            ("kernel breakdown", lambda: analyzer.get_gpu_kernel_breakdown(visualize=False)),
            ("idle time breakdown", lambda: analyzer.get_idle_time_breakdown(visualize=False)),
        ]
        for name, run in checks:
            try:
                result = run()
            except Exception as e:  # report which analysis failed and why, then stop
                print(f"hta_check: {name}: FAILED: {type(e).__name__}: {e}")
                return 1
            frames = result if isinstance(result, tuple) else (result,)
            print(f"hta_check: {name}: ok")
            for frame in frames:
                print(frame.head(10).to_string() if hasattr(frame, "head") else frame)
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
