#!/usr/bin/env python3
"""Whether tracing stays linear where one source range repeats: a loop TorchScript unrolled over
a ParameterList (`for q in self.ps: x = x * q`), at 500 and at 5,000 parameters (issue 56, 8:
the larger within 10x the time of the smaller; it was quadratic, 71 s at 5,000).

Usage: /usr/bin/python3 tests/benchmarks/trace_scaling.py --bench build/tests/benchmarks/tdfx_trace_bench
           [--sizes 500,5000] [--repeat 3] [--limit 10]

The archives are made here, in a temporary folder, with Debian's python3-torch. Each size's trace
time is tdfx_trace_bench's trace_s (best of --repeat, the load apart). Exit status 1 when the
largest size's trace takes more than --limit times the smallest's.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn


class ParameterLoop(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.ones(4) * (1 + 1e-4 * i)) for i in range(n)])

    def forward(self, x):
        for q in self.ps:
            x = x * q
        return x


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="path to tdfx_trace_bench")
    parser.add_argument("--sizes", default="500,5000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=10.0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"parameter_loop_{n}.pt")
            torch.jit.script(ParameterLoop(n)).save(path)
            out = subprocess.run([args.bench, "--json", "--repeat", str(args.repeat), "--input", "x=4", path],
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out)[0]
            times[n] = row["trace_s"]
            print(f"{n:6d} parameters  {row['nodes']:6d} nodes  load {row['load_s']:.3f} s  trace {row['trace_s']:.4f} s")
    small, large = min(sizes), max(sizes)
    ratio = times[large] / times[small]
    print(f"trace {large} / trace {small}: {ratio:.1f}x (at most {args.limit:g}x)")
    return 0 if ratio <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
