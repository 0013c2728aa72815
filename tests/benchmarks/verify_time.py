#!/usr/bin/env python3
"""Verify's wall time and the model worker's peak memory on the zoo, for one or two builds.

    /usr/bin/python3 tests/benchmarks/verify_time.py --cli build/app/tdfx-cli [--baseline OLD/tdfx-cli]
        [--baseline-args="--time"] [--rounds 3] [--models resnet18,vit_b_16]
        [--zoo ~/.cache/tdfx/zoo-torch1.13-torchvision0.14]

Runs `tdfx-cli verify MODEL --input x=1x3x224x224:float32 --seed 1` per model; with --baseline the
two builds alternate, model by model, so that both see the same drift of the machine's speed.
--baseline-args adds flags to the baseline's command: `--baseline build/app/tdfx-cli
--baseline-args=--time` compares the same build's verify with and without the two timed runs a
side that every verify made before --time existed. Each time is the best of its rounds. Peak memory: the largest VmHWM among tdfx-cli's descendants
(the model worker), read every 50 ms. Prints a Markdown table (docs/benchmarks.md, verify) and
exits 1 when a verify does not pass.
"""
import argparse
import os
import subprocess
import sys
import time


def descendants(pid):
    try:
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return []
    found = []
    for child in map(int, children):
        found += [child] + descendants(child)
    return found


def peak_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(cli, model, extra=()):
    start = time.monotonic()
    proc = subprocess.Popen([cli, "verify", model, "--input", "x=1x3x224x224:float32", "--seed", "1", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = 0
    while proc.poll() is None:
        for child in descendants(proc.pid):
            peak = max(peak, peak_kib(child))
        time.sleep(0.05)
    out = proc.stdout.read().decode(errors="replace")
    return time.monotonic() - start, peak, proc.returncode == 0 and "PASSED" in out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--baseline")
    parser.add_argument("--baseline-args", default="", help="flags for the baseline's verify, split at spaces")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models")
    parser.add_argument("--zoo", default=os.path.expanduser("~/.cache/tdfx/zoo-torch1.13-torchvision0.14"))
    args = parser.parse_args()
    models = args.models.split(",") if args.models else sorted(f[:-3] for f in os.listdir(args.zoo) if f.endswith(".pt"))
    builds = {"now": args.cli}
    if args.baseline:
        builds = {"before": args.baseline, "now": args.cli}
    results = {m: {b: {"seconds": [], "peak": 0, "passed": True} for b in builds} for m in models}
    for _ in range(args.rounds):
        for m in models:
            for name, cli in builds.items():
                extra = args.baseline_args.split() if name == "before" else ()
                seconds, peak, passed = run(cli, os.path.join(args.zoo, m + ".pt"), extra)
                r = results[m][name]
                r["seconds"].append(seconds)
                r["peak"] = max(r["peak"], peak)
                r["passed"] = r["passed"] and passed
    names = list(builds)
    print("| model | " + " | ".join(f"verify wall s, {n}" for n in names) + (" | ratio" if args.baseline else "") +
          " | " + " | ".join(f"peak MiB, {n}" for n in names) + " |")
    print("|---" * (1 + 2 * len(names) + (1 if args.baseline else 0)) + "|")
    totals = {n: 0.0 for n in names}
    failed = []
    for m in models:
        best = {n: min(results[m][n]["seconds"]) for n in names}
        for n in names:
            totals[n] += best[n]
            if not results[m][n]["passed"]:
                failed.append(f"{m} ({n})")
        ratio = f" | {best['now'] / best['before']:.2f}" if args.baseline else ""
        print(f"| {m} | " + " | ".join(f"{best[n]:.2f}" for n in names) + ratio + " | " +
              " | ".join(str(results[m][n]["peak"] // 1024) for n in names) + " |")
    ratio = f" | {totals['now'] / totals['before']:.2f}" if args.baseline else ""
    print(f"| all {len(models)} | " + " | ".join(f"{totals[n]:.1f}" for n in names) + ratio + " |" + " |" * len(names))
    if failed:
        print("not PASSED: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
