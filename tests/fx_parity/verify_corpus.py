"""Verify the FX parity corpus: tdfx runs every case's printed graph against the eager archive.

The parity cases check that tdfx prints what torch.fx prints; this checks that what it prints runs
and computes what the model computes. Inputs come from find_inputs.py (the first shape set the
eager archive accepts on the very values tdfx-cli draws, dtypes from how the forward uses each
parameter) or, for the known differences, from hand-chosen `inputs` lines of verify_expected.txt;
every archive is traced and verified in one `tdfx-cli trace --out-dir --from --verify` process.

The verdict is the exit status (0: everything as verify_expected.txt pins it), and it is read from
this run only: the results folder is removed first, tdfx-cli must exit with 0 (or 1 when some
archive failed) and print its `traced N of M models` line with M the number of archives given and
N the number of results without an error, and every case needs its own result file. A case passes
when its verify report says PASSED. A case whose eager module fails on the drawn inputs is "not
comparable"; one no input fits has "no inputs". Both are failures unless verify_expected.txt lists
the case, and the counts of cases and of passing cases must equal the pinned ones, so a case that
stops passing or stops getting inputs fails this test. Any other failure, of the traced graph above
all, fails it.

The corpus's 210 torchvision models (tv_*, tvtd_*, tvseq_*) take minutes each batch: the run takes
the TensorDict-wrapped tvtd_ and tvseq_ archives of the models verify_expected.txt names, and every
one with --torchvision-models (the zoo.verify tests verify the plain torchvision models in CI).

Usage: verify_corpus.py --cli TDFX_CLI --cases-root DIR --work DIR [--torchvision-models]
                        [--expected FILE] [--only NAME ...]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import find_inputs  # noqa: E402

NOT_COMPARABLE = "the eager module failed on these inputs"
TORCHVISION_PREFIXES = ("tv_", "tvtd_", "tvseq_")
TRACED_LINE = re.compile(r"^traced (\d+) of (\d+) models into ", re.M)


class Expected:
    """verify_expected.txt: the pinned counts, the accepted lists and the hand-chosen inputs."""

    def __init__(self, path):
        self.path = path
        self.counts, self.torchvision = {}, []
        self.no_inputs, self.not_comparable, self.inputs = {}, {}, {}
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                word, _, rest = line.partition(" ")
                rest = rest.strip()
                if word in ("cases", "pass"):
                    self.counts[word] = int(rest)
                elif word == "torchvision":
                    self.torchvision.append(rest)
                elif word in ("no-inputs", "not-comparable"):
                    name, _, why = rest.partition(":")
                    (self.no_inputs if word == "no-inputs" else self.not_comparable)[name.strip()] = why.strip()
                elif word == "inputs":
                    name, *specs = rest.split()
                    self.inputs[name] = specs
                else:
                    raise SystemExit(f"{path}:{number}: cannot read {line!r}")


def known_differences():
    names = set()
    with open(os.path.join(HERE, "known_differences.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                names.add(line.partition(":")[0].strip())
    return names


def clear(work):
    """Nothing of an earlier run may be read as this run's: its results and lists go first."""
    os.makedirs(work, exist_ok=True)
    shutil.rmtree(os.path.join(work, "results"), ignore_errors=True)
    for old in glob.glob(os.path.join(work, "*.txt")) + glob.glob(os.path.join(work, "*.list")):
        os.remove(old)
    if os.path.exists(os.path.join(work, "results")):
        raise SystemExit(f"cannot remove {os.path.join(work, 'results')}")


def case_paths(cases, args, expected):
    """The archives this run verifies, and problems (a named archive missing)."""
    problems = []
    every = sorted(glob.glob(os.path.join(cases, "*.pt")))
    if args.torchvision_models:
        paths = every
    else:
        wrapped = {f"{prefix}{model}" for model in expected.torchvision for prefix in ("tvtd_", "tvseq_")}
        paths = [p for p in every if not os.path.basename(p).startswith(TORCHVISION_PREFIXES)
                 or stem(p) in wrapped]
        missing = wrapped - {stem(p) for p in paths}
        problems += [f"{name}: named by {expected.path} but not in {cases}" for name in sorted(missing)]
    if args.only:
        paths = [p for p in paths if stem(p) in args.only]
        problems += [f"{name}: --only names no case of this run" for name in sorted(set(args.only) - {stem(p) for p in paths})]
    return paths, problems


def stem(path):
    return os.path.splitext(os.path.basename(path.split(" --input ")[0]))[0]


def run_cli(cli, listing, out, count, work):
    """Runs the batch; problems when tdfx-cli's status and its `traced N of M` line are not those of
    a finished batch of `count` archives. Returns (problems, N or None)."""
    cmd = [cli, "trace", "--out-dir", out, "--from", listing, "--verify", "--seed", str(find_inputs.SEED)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        return [f"cannot run {cli}: {e}"], None
    with open(os.path.join(work, "tdfx-cli.log.txt"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nexit status {proc.returncode}\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}")
    status = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exited with status {proc.returncode}"
    tail = "\n".join(("    " + line) for line in proc.stderr.strip().splitlines()[-5:])
    found = TRACED_LINE.findall(proc.stdout)
    if len(found) != 1:
        return [f"tdfx-cli {status} and printed no 'traced N of {count} models' line "
                f"(it did not finish the batch){': its last words:' + chr(10) + tail if tail else ''}"], None
    traced, given = int(found[0][0]), int(found[0][1])
    problems = []
    if given != count:
        problems.append(f"tdfx-cli traced a batch of {given} models, {count} were given")
    if proc.returncode != (0 if traced == given else 1):
        problems.append(f"tdfx-cli {status} after tracing {traced} of {given} models")
    return problems, traced


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--cases-root", required=True, help="the --out of make_cases.py")
    ap.add_argument("--work", required=True)
    ap.add_argument("--torchvision-models", action="store_true", help="verify every tv_, tvtd_ and tvseq_ archive (long)")
    ap.add_argument("--expected", default=os.path.join(HERE, "verify_expected.txt"))
    ap.add_argument("--only", nargs="+", metavar="NAME", help="verify these cases only (the pinned counts are not checked)")
    args = ap.parse_args()
    expected = Expected(args.expected)
    cmd = [sys.executable, os.path.join(HERE, "make_cases.py"), "--out", args.cases_root, "--print-dir", "--torchvision"]
    cases = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()
    clear(args.work)

    paths, problems = case_paths(cases, args, expected)
    names = {stem(p) for p in paths}
    chosen = {name: specs for name, specs in expected.inputs.items() if name in names}
    if not args.only:
        problems += [f"{name}: {expected.path} chooses its inputs but the corpus has no such case"
                     for name in sorted(set(expected.inputs) - names)]
    # Every known difference among the module cases runs on inputs chosen for it.
    problems += [f"{name}: a known difference without hand-chosen inputs (an `inputs` line of {expected.path})"
                 for name in sorted(known_differences() & names - set(chosen))
                 if not name.startswith(TORCHVISION_PREFIXES)]
    lines, skipped = find_inputs.corpus_lines(paths, chosen)
    no_inputs = {entry.partition(":")[0]: entry.partition(":")[2].strip() for entry in skipped}

    out = os.path.join(args.work, "results")
    traced = None
    if lines:
        listing = os.path.join(args.work, "archives.list")
        with open(listing, "w") as f:
            f.write("\n".join(lines) + "\n")
        cli_problems, traced = run_cli(args.cli, listing, out, len(lines), args.work)
        problems += cli_problems

    passed, not_comparable, failed = [], {}, []
    for line in lines:
        name = stem(line)
        base = os.path.join(out, name)
        report = read(base + ".verify.txt") if os.path.exists(base + ".verify.txt") else ""
        error = read(base + ".error.txt").strip() if os.path.exists(base + ".error.txt") else ""
        if "PASSED" in report and not error:
            passed.append(name)
        elif error.startswith(NOT_COMPARABLE):
            not_comparable[name] = error.splitlines()[0]
        else:
            failed.append(f"{name}: {(error or report).splitlines()[0] if (error or report) else 'no result'}")
    without_error = sum(1 for line in lines if os.path.exists(os.path.join(out, stem(line) + ".graph.txt"))
                        and not os.path.exists(os.path.join(out, stem(line) + ".error.txt")))
    if traced is not None and traced != without_error:
        problems.append(f"tdfx-cli says it traced {traced} models, {without_error} have results and no error")

    # What verify_expected.txt pins.
    for found, pinned, word, now, fixed in (
            (no_inputs, expected.no_inputs, "no-inputs", "gets no inputs", "gets inputs now"),
            (not_comparable, expected.not_comparable, "not-comparable", "is not comparable", "its eager module runs now")):
        for name in sorted(set(found) - set(pinned)):
            failed.append(f"{name}: {now}, and {expected.path} has no `{word} {name}` line: {found[name]}")
        for name in sorted(set(pinned) & names - set(found)):
            failed.append(f"{name}: {expected.path} lists it as `{word}`, but {fixed}: take it off the list")
    for name in sorted(known_differences() & set(chosen) - set(passed)):
        problems.append(f"{name}: a known difference that did not pass on its hand-chosen inputs")
    total = len(lines) + len(no_inputs)
    if not args.only and not args.torchvision_models:
        for word, figure in (("cases", total), ("pass", len(passed))):
            if expected.counts.get(word) != figure:
                what = "cases in the run" if word == "cases" else "cases pass"
                problems.append(f"{figure} {what}; {expected.path} pins `{word} {expected.counts.get(word)}`")

    for title, items in (("not comparable", [f"{n}: {e}" for n, e in sorted(not_comparable.items())]),
                         ("no inputs found", [f"{n}: {e}" for n, e in sorted(no_inputs.items())]),
                         ("FAILED", failed), ("PROBLEMS", problems)):
        if items:
            print(f"{title}:")
            for item in items:
                print(f"  {item[:600]}")
    print(f"fx_parity verify: {len(passed)} of {total} cases pass, {len(not_comparable)} not comparable, "
          f"{len(no_inputs)} without inputs, {len(failed) + len(problems)} failed")
    return 1 if failed or problems or not lines else 0


if __name__ == "__main__":
    sys.exit(main())
