#!/usr/bin/env python3
"""tdfx vs torch.fx: trace time on the zoo, side by side, in one run.

Usage: /usr/bin/python3 tests/benchmarks/trace_benchmark.py --bench build/tests/benchmarks/tdfx_trace_bench
           [--zoo DIR] [--repeat N] [NAME ...]

For each torchvision model: tdfx's load / trace / eager / traced times (from tdfx_trace_bench on the
scripted archive) next to torch.fx.symbolic_trace on the same torchvision model (best of N), and the
ratios: trace speedup (target >= 5x) and traced/eager forward time (target <= 1.0).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import torch
import torch.fx
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
import make_zoo  # noqa: E402


def fx_trace_seconds(name, repeat):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        torch.fx.symbolic_trace(model)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="path to tdfx_trace_bench")
    parser.add_argument("--zoo", default=os.path.expanduser("~/.cache/tdfx/zoo-torch1.13-torchvision0.14"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    names = args.names or make_zoo.ZOO
    subprocess.run([sys.executable, make_zoo.__file__, "--out", args.zoo, *names], check=True)
    out = subprocess.run([args.bench, "--json", "--repeat", str(args.repeat), "--input", "x=1x3x224x224",
                          *[os.path.join(args.zoo, f"{n}.pt") for n in names]],
                         check=True, capture_output=True, text=True).stdout
    rows = {r["model"]: r for r in json.loads(out)}
    header = (f"{'model':<20}{'nodes':>6}{'tdfx trace ms':>15}{'torch.fx ms':>13}{'speedup':>9}"
              f"{'eager ms':>10}{'traced ms':>11}{'traced/eager':>14}{'bitwise':>9}")
    print(header)
    speedups, ratios = [], []
    for n in names:
        r = rows[n]
        try:
            fx = fx_trace_seconds(n, args.repeat)
            fx_text, speedup = f"{fx * 1e3:.1f}", fx / r["trace_s"]
            speedups.append(speedup)
            speedup_text = f"{speedup:.0f}x"
        except Exception as e:  # torch.fx cannot trace every model; tdfx should
            fx_text, speedup_text = "fails", "-"
            print(f"  (torch.fx cannot trace {n}: {type(e).__name__}: {str(e).splitlines()[0][:80]})", file=sys.stderr)
        ratio = r["traced_s"] / r["eager_s"]
        ratios.append(ratio)
        print(f"{n:<20}{r['nodes']:>6}{r['trace_s'] * 1e3:>15.2f}{fx_text:>13}{speedup_text:>9}"
              f"{r['eager_s'] * 1e3:>10.1f}{r['traced_s'] * 1e3:>11.1f}{ratio:>14.2f}{'yes' if r['bitwise'] else 'NO':>9}")
    if speedups:
        print(f"trace speedup over torch.fx: min {min(speedups):.0f}x, max {max(speedups):.0f}x (target >= 5x)")
    print(f"traced/eager forward time: max {max(ratios):.2f} (target <= 1.0, single runs are noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
