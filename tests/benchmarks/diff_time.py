"""Times `tdfx-cli diff` on two models of about N graph nodes (default 100,000), of two shapes:

  chain  one module whose forward is a flat chain of N operations (add, relu, mul, tanh): the
         graph is all there is to load, trace and compare;
  stack  make_synthetic_model.py's transformer-like blocks, N / 15 of them (about N / 2 Linear
         and LayerNorm modules, N parameters), the two with different seeds: every weight differs.

    /usr/bin/python3 tests/benchmarks/diff_time.py --cli build/app/tdfx-cli --work /tmp/diff-bench [--nodes 100000]

The models are made once into --work (about 1 min for the chain and 2 min per stack on 2 cores)
and reused. Each diff runs --repeat times (default 3); the median wall time is printed per shape,
with the exit status (1: the models differ; the chain is compared with a copy of itself: 0).
docs/benchmarks.md has the figures.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
OPS = ["x = x + {i}", "x = torch.relu(x)", "x = x * 0.5", "x = torch.tanh(x)"]


def make_chain(nodes, out):
    """A TorchScript archive of one module whose forward is `nodes` operations in a row."""
    body = "".join("        " + OPS[i % len(OPS)].format(i=i) + "\n" for i in range(nodes))
    source = f"import torch\n\n\nclass Chain(torch.nn.Module):\n    def forward(self, x):\n{body}        return x\n"
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "chain_model.py"), "w") as f:
            f.write(source)
        script = ("import sys, torch; sys.path.insert(0, sys.argv[1]); import chain_model; "
                  "torch.jit.script(chain_model.Chain()).save(sys.argv[2])")
        subprocess.run([PYTHON, "-c", script, tmp, out], check=True)


def make_stack(nodes, seed, out):
    subprocess.run([PYTHON, os.path.join(HERE, "make_synthetic_model.py"), "--nodes", str(nodes), "--width", "2",
                    "--seed", str(seed), "--out", out], check=True, stdout=subprocess.DEVNULL)


def models(work, nodes):
    """{shape: (a, b)}, made when missing."""
    os.makedirs(work, exist_ok=True)
    chain = os.path.join(work, f"chain_{nodes}.pt")
    if not os.path.exists(chain):
        make_chain(nodes, chain)
    chain_copy = os.path.join(work, f"chain_{nodes}_copy.pt")
    if not os.path.exists(chain_copy):
        shutil.copyfile(chain, chain_copy)
    stack = [os.path.join(work, f"stack_{nodes}_seed{seed}.pt") for seed in (0, 1)]
    for seed, path in enumerate(stack):
        if not os.path.exists(path):
            make_stack(nodes, seed, path)
    return {"chain": (chain, chain_copy), "stack": tuple(stack)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--work", required=True, help="folder for the models (kept between runs)")
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'shape':8} {'nodes':>8} {'median s':>9} {'runs s':>24}  exit")
    for shape, (a, b) in models(args.work, args.nodes).items():
        times, status = [], None
        for _ in range(args.repeat):
            start = time.monotonic()
            run = subprocess.run([args.cli, "diff", a, b], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            times.append(time.monotonic() - start)
            if run.returncode not in (0, 1):
                sys.exit(f"diff_time: tdfx-cli diff {a} {b}: exit {run.returncode}: {run.stderr.decode()[-500:]}")
            status = run.returncode
        runs = " ".join(f"{t:.1f}" for t in times)
        print(f"{shape:8} {args.nodes:>8} {statistics.median(times):>9.1f} {runs:>24}  {status}")


if __name__ == "__main__":
    main()
