"""Verify the FX parity corpus: tdfx runs every case's printed graph against the eager archive.

The parity cases check that tdfx prints what torch.fx prints; this checks that what it prints runs
and computes what the model computes. Inputs come from find_inputs.py (the first shape set the
eager archive accepts); every archive is traced and verified in one `tdfx-cli trace --out-dir
--verify` process. A case passes when its verify report says PASSED. A case whose eager module
cannot be compared (it returns a list or a dict where verify compares tensors per out key) is
listed as not comparable; any other failure, of the traced graph above all, fails this test.
The corpus's 210 torchvision models (tv_*, tvtd_*, tvseq_*) take minutes each batch; they are verified
only with --torchvision-models (the zoo.verify tests verify the torchvision models in CI).

Usage: verify_corpus.py --cli TDFX_CLI --cases-root DIR --work DIR [--torchvision-models]
"""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import find_inputs  # noqa: E402

NOT_COMPARABLE = "the eager module failed on these inputs"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cases-root", required=True, help="the --out of make_cases.py")
    ap.add_argument("--work", required=True)
    ap.add_argument("--torchvision-models", action="store_true", help="verify the tv_, tvtd_ and tvseq_ archives too (long)")
    args = ap.parse_args()
    cmd = [sys.executable, os.path.join(HERE, "make_cases.py"), "--out", args.cases_root, "--print-dir", "--torchvision"]
    cases = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    os.makedirs(args.work, exist_ok=True)
    for old in glob.glob(os.path.join(args.work, "*.txt")):
        os.remove(old)

    paths = [p for p in sorted(glob.glob(os.path.join(cases, "*.pt")))
             if args.torchvision_models or not os.path.basename(p).startswith(("tv_", "tvtd_", "tvseq_"))]
    lines, no_inputs = find_inputs.corpus_lines(paths)
    if not lines:
        print(f"no archive in {cases}")
        return 1
    listing = os.path.join(args.work, "archives.list")
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    out = os.path.join(args.work, "results")
    subprocess.run([args.cli, "trace", "--out-dir", out, "--from", listing, "--verify"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    passed, not_comparable, failed = [], [], []
    for line in lines:
        stem = os.path.splitext(os.path.basename(line.split(" --input ")[0]))[0]
        base = os.path.join(out, stem)
        report = open(base + ".verify.txt").read() if os.path.exists(base + ".verify.txt") else ""
        error = open(base + ".error.txt").read().strip() if os.path.exists(base + ".error.txt") else ""
        if "PASSED" in report and not error:
            passed.append(stem)
        elif error.startswith(NOT_COMPARABLE):
            not_comparable.append(f"{stem}: {error.splitlines()[0]}")
        else:
            failed.append(f"{stem}: {(error or report).splitlines()[0] if (error or report) else 'no result'}")
    for title, items in (("not comparable", not_comparable), ("no inputs found", no_inputs), ("FAILED", failed)):
        if items:
            print(f"{title}:")
            for item in items:
                print(f"  {item[:400]}")
    total = len(lines) + len(no_inputs)
    print(f"fx_parity verify: {len(passed)} of {total} cases pass, {len(not_comparable)} not comparable, "
          f"{len(no_inputs)} without inputs, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
