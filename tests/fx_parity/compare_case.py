#!/usr/bin/env python3
"""Compares tdfx-cli's output for one case of the FX parity corpus with torch.fx 1.13's.

    compare_case.py --cli TDFX_CLI --cases DIR --batch WORK NAME...  (one tdfx-cli for all: the CTest tests)
    compare_case.py --cli TDFX_CLI --cases DIR NAME        (one case, one tdfx-cli per output)
    compare_case.py --cli TDFX_CLI --cases DIR --table     (every case: the parity table)

Graph and code must be byte-identical; the `--style fx` DOT must equal FxGraphDrawer's
semantically: the same node names, labels, fill colours and edges (attribute order and quoting
aside). A case listed in known_differences.txt passes while it differs exactly as
known_differences/NAME.txt records (a crash or any other difference fails it), and fails once it
matches (the list must not go stale). A DOT that pydot cannot parse, on either side, fails.
Needs no torch: it reads the files make_cases.py wrote.
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def known_differences():
    known = {}
    with open(os.path.join(HERE, "known_differences.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(":")
                known[name.strip()] = why.strip()
    return known


def read(path):
    with open(path) as f:
        return f.read()


def parse_dot(text):
    """Nodes (name -> {label, fillcolor}) and edges (set of (tail, head)) of a DOT text, via pydot."""
    import pydot
    graphs = pydot.graph_from_dot_data(text)
    if not graphs:
        raise ValueError("not a DOT graph")
    nodes, edges = {}, set()

    def unquote(s):
        s = s or ""
        return s[1:-1] if len(s) >= 2 and s[0] == s[-1] == '"' else s

    def walk(g):
        for n in g.get_nodes():
            name = unquote(n.get_name())
            if name in ("node", "edge", "graph"):
                continue
            attrs = n.get_attributes()
            # A backslash-newline inside a quoted string only continues the line (Graphviz wraps long ones).
            label = unquote(attrs.get("label")).replace("\\\n", "")
            nodes[name] = {"label": label, "fillcolor": unquote(attrs.get("fillcolor"))}
        for e in g.get_edges():
            edges.add((unquote(str(e.get_source())), unquote(str(e.get_destination()))))
        for s in g.get_subgraphs():
            walk(s)

    walk(graphs[0])
    return nodes, edges


def compare_dot(ours, theirs):
    """'' when equal, else the first difference."""
    try:
        n1, e1 = parse_dot(ours)
    except Exception as e:  # noqa: BLE001 - a broken DOT is a difference, reported as such
        return f"tdfx's DOT does not parse: {e}"
    try:
        n2, e2 = parse_dot(theirs)
    except Exception as e:  # noqa: BLE001 - nothing to compare with is a failure, never "equal"
        return f"FX's DOT does not parse with pydot: {e}"
    if set(n1) != set(n2):
        return f"nodes differ: only tdfx {sorted(set(n1) - set(n2))[:5]}, only FX {sorted(set(n2) - set(n1))[:5]}"
    for name in n2:
        for attr in ("label", "fillcolor"):
            if n1[name][attr] != n2[name][attr]:
                return f"node {name}: {attr} is {n1[name][attr]!r}, FX has {n2[name][attr]!r}"
    if e1 != e2:
        return f"edges differ: only tdfx {sorted(e1 - e2)[:5]}, only FX {sorted(e2 - e1)[:5]}"
    return ""


def one_shot_outputs(cli, cases, name, picture):
    """(graph, code, dot, error) of one case, from one `tdfx-cli trace` and one `tdfx-cli export`."""
    pt = os.path.join(cases, f"{name}.pt")
    r = subprocess.run([cli, "trace", pt], capture_output=True, text=True)
    if r.returncode != 0:
        return None, None, None, f"tdfx-cli trace failed (exit {r.returncode}): {r.stderr.strip()}"
    # tdfx-cli prints the graph, a newline, then the code (which starts with a newline); the graph
    # ends where its last line (`return ...`) does.
    cut = r.stdout.find("\n", r.stdout.find("\n    return ") + 1)
    got_graph, got_code = (r.stdout[:cut], r.stdout[cut + 1:]) if cut >= 0 else (r.stdout, "")
    if not picture:
        return got_graph, got_code, None, None
    with tempfile.TemporaryDirectory() as tmp:
        dot_path = os.path.join(tmp, f"{name}.dot")
        r = subprocess.run([cli, "export", pt, "-o", dot_path, "--style", "fx", "--expand-all"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return got_graph, got_code, None, f"tdfx-cli export failed (exit {r.returncode}): {r.stderr.strip()}"
        return got_graph, got_code, read(dot_path), None


TRACED_LINE = re.compile(r"^traced (\d+) of (\d+) models into ", re.M)


def batch_outputs(cli, cases, names, picture, work):
    """{name: (graph, code, dot, error)} from one `tdfx-cli trace --out-dir` over every case.

    Read from this run only: the folder is emptied first, and tdfx-cli must exit 0 (or 1 when some
    case failed) with its `traced N of M models` line, M the cases given and N those without an
    error file. Anything else raises, naming what happened."""
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    listing = os.path.join(work, "archives.txt")
    with open(listing, "w") as f:
        f.writelines(os.path.join(cases, f"{name}.pt") + "\n" for name in names)
    out = os.path.join(work, "out")
    r = subprocess.run([cli, "trace", "--out-dir", out, "--from", listing] + (["--fx-dot"] if picture else []),
                       capture_output=True, text=True)
    m = TRACED_LINE.search(r.stdout)
    if r.returncode not in (0, 1) or not m:
        raise RuntimeError(f"tdfx-cli exited with status {r.returncode} and printed no 'traced N of {len(names)} "
                           f"models' line\n{r.stderr.strip()}")
    results = {}
    for name in names:
        base = os.path.join(out, name)
        if os.path.exists(base + ".error.txt"):
            results[name] = (None, None, None, "tdfx-cli trace --out-dir failed on it: " + read(base + ".error.txt").strip())
        elif not os.path.exists(base + ".code.txt"):
            results[name] = (None, None, None, "tdfx-cli trace --out-dir left no result for it")
        else:
            dot = read(base + ".dot") if picture and os.path.exists(base + ".dot") else None
            results[name] = (read(base + ".graph.txt"), read(base + ".code.txt"), dot,
                             "tdfx-cli trace --out-dir --fx-dot wrote no picture" if picture and dot is None else None)
    traced = sum(1 for v in results.values() if v[0] is not None)
    if (int(m.group(1)), int(m.group(2))) != (traced, len(names)):
        raise RuntimeError(f"tdfx-cli said '{m.group(0).strip()}', but {traced} of {len(names)} cases have results")
    return results


def differences(cases, name, outputs, picture=True):
    """(graph_ok, code_ok, dot_ok, details) of one case's outputs against torch.fx's;
    picture=False skips the DOT comparison."""
    got_graph, got_code, got_dot, error = outputs
    if got_graph is None:
        return False, False, False, error
    graph = read(os.path.join(cases, f"{name}.graph.txt"))
    code = read(os.path.join(cases, f"{name}.code.txt"))
    details = []
    graph_ok, code_ok = got_graph == graph, got_code == code
    if not graph_ok:
        details.append("graph differs:\n" + "".join(difflib.unified_diff(
            (graph + "\n").splitlines(True), (got_graph + "\n").splitlines(True), "torch.fx", "tdfx")))
    if not code_ok:
        details.append("code differs:\n" + "".join(difflib.unified_diff(
            code.splitlines(True), got_code.splitlines(True), "torch.fx", "tdfx")))
    if not picture:
        return graph_ok, code_ok, False, "\n".join(details)
    dot_diff = error or compare_dot(got_dot, read(os.path.join(cases, f"{name}.dot")))
    if dot_diff:
        details.append("fx picture differs: " + dot_diff)
    return graph_ok, code_ok, not dot_diff, "\n".join(details)


def run_case(cli, cases, name, picture=True):
    """(graph_ok, code_ok, dot_ok, details) of one case, one-shot."""
    return differences(cases, name, one_shot_outputs(cli, cases, name, picture), picture)


def verdict(name, result, picture, known, record_known=False):
    """(passed, text) for one case: it matches torch.fx, or differs exactly as recorded when known."""
    graph_ok, code_ok, dot_ok, details = result
    dot_ok = dot_ok or not picture
    what = "graph, code and fx picture" if picture else "graph and code"
    if name in known:
        if graph_ok and code_ok and dot_ok:
            return False, f"{name}: now matches torch.fx: remove it from known_differences.txt"
        recorded_path = os.path.join(HERE, "known_differences", f"{name}.txt")
        if record_known:
            with open(recorded_path, "w") as f:
                f.write(details)
            return True, f"{name}: recorded its difference in {recorded_path}"
        recorded = read(recorded_path) if os.path.exists(recorded_path) else None
        if recorded is None:
            return False, (f"{name}: listed in known_differences.txt, but {recorded_path} does not record the "
                           f"expected difference (make it with --record-known)\n{details}")
        if details != recorded:
            return False, (f"{name}: differs from torch.fx otherwise than known_differences/{name}.txt records\n"
                           + "".join(difflib.unified_diff(recorded.splitlines(True), details.splitlines(True),
                                                          "recorded", "now")))
        return True, f"{name}: known difference ({known[name]})\n{details}"
    if graph_ok and code_ok and dot_ok:
        return True, f"{name}: {what} match torch.fx"
    return False, f"{name}: differs from torch.fx\n{details}"


def one(args):
    picture = not args.no_picture
    passed, text = verdict(args.name, run_case(args.cli, args.cases, args.name, picture), picture,
                           known_differences(), args.record_known)
    print(text)
    return 0 if passed else 1


def batch(args):
    """Every named case through one tdfx-cli; the failures are printed first, then a summary."""
    picture = not args.no_picture
    try:
        outputs = batch_outputs(args.cli, args.cases, args.names, picture, args.batch)
    except RuntimeError as e:
        print(e)
        return 1
    known = known_differences()
    verdicts = {n: verdict(n, differences(args.cases, n, outputs[n], picture), picture, known, args.record_known)
                for n in args.names}
    failed = [n for n, (ok, _) in verdicts.items() if not ok]
    for n in failed:
        print(verdicts[n][1])
    for n in args.names:
        if n not in failed:
            print(verdicts[n][1].splitlines()[0])
    print(f"{len(args.names) - len(failed)} passed, {len(failed)} failed" + (f": {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def table(args):
    with open(os.path.join(args.cases, "index.json")) as f:
        index = json.load(f)
    index = [e for e in index if "skip" not in e and (not args.groups or e["group"] in args.groups.split(","))]
    names = [e["name"] for e in index]
    # Processes, not threads: pydot's parser keeps its state in module globals, so two threads parsing
    # at once mix up their graphs.
    n = len(names)
    with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 2) as pool:
        results = dict(zip(names, pool.map(run_case, [args.cli] * n, [args.cases] * n, names, [not args.no_picture] * n)))
    groups = {}
    for e in index:
        if "skip" in e:
            continue
        g = groups.setdefault(e["group"], [0, 0, 0, 0])
        r = results[e["name"]]
        g[0] += 1
        g[1] += r[0]
        g[2] += r[1]
        g[3] += r[2]
    total = [sum(g[i] for g in groups.values()) for i in range(4)]
    print(f"{'group':<10} {'cases':>6} {'graph exact':>12} {'code exact':>11} {'fx picture':>11}")
    for name, g in sorted(groups.items()):
        print(f"{name:<10} {g[0]:>6} {g[1]:>12} {g[2]:>11} {g[3]:>11}")
    pct = lambda k: f"{100.0 * total[k] / max(total[0], 1):.1f}%"  # noqa: E731
    print(f"{'all':<10} {total[0]:>6} {total[1]:>5} {pct(1):>6} {total[2]:>4} {pct(2):>6} {total[3]:>4} {pct(3):>6}")
    if args.failures:
        with open(args.failures, "w") as f:
            for name, r in results.items():
                if not all(r[:3]):
                    f.write(f"=== {name}\n{r[3]}\n")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cases", required=True, help="the case folder make_cases.py printed")
    parser.add_argument("--table", action="store_true", help="run every case and print the parity table")
    parser.add_argument("--failures", help="with --table: write every difference to this file")
    parser.add_argument("--groups", help="with --table: only these groups (comma-separated: fn,meth,tv,...)")
    parser.add_argument("--no-picture", action="store_true", help="compare graph and code only")
    parser.add_argument("--record-known", action="store_true",
                        help="for a case in known_differences.txt: record its difference as the expected one")
    parser.add_argument("--batch", metavar="WORK",
                        help="compare every named case with one tdfx-cli trace --out-dir, its results in WORK")
    parser.add_argument("names", nargs="*", metavar="name")
    args = parser.parse_args()
    if args.table:
        return table(args)
    if args.batch:
        if not args.names:
            parser.error("--batch needs the cases to compare")
        return batch(args)
    if len(args.names) != 1:
        parser.error("name one case, or give --batch or --table")
    args.name = args.names[0]
    return one(args)


if __name__ == "__main__":
    sys.exit(main())
