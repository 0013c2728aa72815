#!/usr/bin/env python3
"""Differential fuzzer: random modules from grammar.py, traced by tdfx and by torch.fx 1.13.

    /usr/bin/python3 fuzz.py --cli build/app/tdfx-cli --seed 0 --count 500 [--work DIR]
    /usr/bin/python3 fuzz.py --cli ... --regressions        (the shrunk cases in regressions/)
    /usr/bin/python3 fuzz.py --cli ... --seed 7 --count 1 --shrink --save NAME

Per case: the program is scripted (tdfx's input; a TensorDict case exported by app/tdfx_export.py)
and traced by torch.fx (the reference; a TensorDictModule or TensorDictSequential by td_reference.py,
tensordict 0.1.x's rules). A program that FX or TorchScript cannot take is counted as invalid, not
failed, and at most 1 % of the programs may be invalid (--max-invalid-share), or the run fails. An
exporter failure on programs TorchScript compiles is a failure. Every valid case must then
  1. print byte-identical graph and code (tdfx-cli traces all archives in one process:
     `trace --out-dir`, a fresh worker per archive, not a tdfx-cli per archive);
  2. verify (the TensorDict cases, which record example inputs);
  3. run: tdfx's printed forward is executed in Python against the loaded archive, and must
     equal the eager module bitwise.
A failure can be shrunk (--shrink: delta debugging over the statements) to a minimal program,
and saved (--save NAME) into regressions/, which CI runs with every fuzz range.
--tensordict DIR (a checkout of tensordict 0.1.2, never in CI) also checks td_reference.py
against the real tensordict's symbolic_trace on every TensorDict case (CI checks it against the
recordings of tests/fx_parity/tensordict_0.1.2/: check_td_reference.py).
Exit status: 0 when every valid case passes (or fails exactly as known_failures.txt says) and the
invalid share is within the limit, 1 otherwise.
"""
import argparse
import copy
import importlib.util
import json
import math
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import typing
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fx_parity"))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "app"))

import grammar  # noqa: E402

HEADER = """import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn


def _fz_affine(t, n: int):
    return t * n + 1


class _FzScale(nn.Module):
    def __init__(self, m: torch.Tensor):
        super().__init__()
        self.register_buffer("m", m)

    def forward(self, t):
        return t * self.m
"""


def key_of(k):
    """A key as tensordict and td_reference spell it: "x" for one part, a tuple for more."""
    return k[0] if len(k) == 1 else tuple(k)


def case_source(case, keep=None):
    """A Python file for the case: the program classes and how they are wrapped (see build)."""
    keep = keep or [None] * len(case.programs)
    parts = [HEADER]
    for i, (p, kp) in enumerate(zip(case.programs, keep)):
        parts.append(p.render(f"P{i}", kp))
    spec = []
    for i, (p, kp) in enumerate(zip(case.programs, keep)):
        ins = case.keys[i]["in"][:len(p.signature(kp))]
        outs = case.keys[i]["out"][:p.output_count(kp)]
        spec.append({"in": ins, "out": outs})
    parts.append(f"WRAP = {case.wrap!r}\nKEYS = {json.dumps(spec)}\nNESTED = {case.nested!r}\n"
                 + ("QUANTIZE = True\n" if case.quantize else ""))
    return "\n".join(parts)


def build(mod, td):
    """The object a case file describes: its plain module P0, or td.Module / td.Sequential of its
    programs P0, P1, ... with the keys KEYS (nested when NESTED)."""
    import torch
    torch.manual_seed(0)
    programs = [getattr(mod, f"P{i}")().eval() for i in range(len(mod.KEYS))]
    if getattr(mod, "QUANTIZE", False):  # torch.ao's dynamically quantized modules are leaves in FX
        programs = [torch.ao.quantization.quantize_dynamic(p, {torch.nn.Linear, torch.nn.GRU}, dtype=torch.qint8)
                    for p in programs]
    if mod.WRAP == "plain":
        return programs[0]
    mods = [td.Module(p, [tuple(k) for k in s["in"]], [tuple(k) for k in s["out"]])
            for p, s in zip(programs, mod.KEYS)]
    if mod.WRAP == "td":
        return mods[0]
    if mod.NESTED and len(mods) == 3:
        return td.Sequential(mods[0], td.Sequential(mods[1], mods[2]))
    return td.Sequential(*mods)


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Standins:
    """td.Module / td.Sequential as the stand-ins the exporter and td_reference read."""
    from standins import TDModule as Module, TDSequential as Sequential  # noqa: N814


def flat_children(obj):
    """The TensorDictModules of a (nested) sequential, in order."""
    if hasattr(obj, "module") and isinstance(obj.module, list):
        return [c for m in obj.module for c in flat_children(m)]
    return [obj]


def reference(obj, wrap, name):
    """torch.fx's (graph, code, GraphModule) for the object, by td_reference's rules for TensorDict."""
    import torch.fx as fx
    import td_reference as ref
    gm = fx.symbolic_trace(obj) if wrap == "plain" else fx.GraphModule(ref.root_of(obj), ref.trace_graph(obj))
    return str(gm.graph), gm.code, gm


def fx_globals():
    """The names FX's generated code refers to (torch.fx.graph's builtins, and operator)."""
    import torch
    return {"torch": torch, "math": math, "operator": operator, "inf": math.inf, "nan": math.nan,
            "NoneType": type(None), "device": torch.device, "typing_Union": typing.Union,
            "typing_Optional": typing.Optional, "typing_List": typing.List, "typing_Tuple": typing.Tuple,
            "typing_Dict": typing.Dict}


def same(a, b):
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.is_floating_point():  # bitwise, NaN where the other has NaN (NaN != NaN otherwise)
            nan = a.isnan()
            return torch.equal(nan, b.isnan()) and torch.equal(a.masked_fill(nan, 0), b.masked_fill(nan, 0))
        return torch.equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) == type(b) and a == b  # noqa: E721


def inputs_for(case_module):
    """Example inputs: x and y (2, 4, 8), mask of 0/1; per key for the TensorDict cases."""
    import torch
    g = torch.Generator().manual_seed(1)
    tensors = {}
    for s in case_module.KEYS:
        for k in s["in"]:
            tensors.setdefault(key_of(k), torch.randn(2, 4, 8, generator=g))
    plain = {"x": torch.randn(2, 4, 8, generator=g), "y": torch.randn(2, 4, 8, generator=g),
             "mask": (torch.randn(2, 4, 8, generator=g) > 0).float()}
    return tensors, plain


def eager_td(obj, tensors):
    """Runs the TensorDict object eagerly on a dict; returns the values tensordict's graph returns
    (the last value written to each key, `_` included, in first-write order)."""
    d, written = dict(tensors), {}
    for c in flat_children(obj):
        result = c.module(*[d[key_of(k)] for k in c.in_keys])
        values = list(result) if isinstance(result, tuple) else [result]
        for k, v in zip(c.out_keys, values):
            d[key_of(k)] = v
            written[key_of(k)] = v
    return tuple(written.values())


def run_printed(code, root, args, kwargs=None):
    namespace = fx_globals()
    exec(compile(code, "<tdfx printed code>", "exec"), namespace)  # noqa: S102 - the point of the check
    import torch
    with torch.no_grad():
        return namespace["forward"](root, *args, **(kwargs or {}))


def prepare(case_path, name, out_dir, check_tensordict=None):
    """Scripts and references one case file. Returns a dict (kind: invalid / ready) and writes
    out_dir/name.pt plus the references."""
    import torch
    mod = import_file(case_path, f"fuzz_{name}")
    info = {"name": name, "wrap": mod.WRAP, "source": case_path}
    try:
        obj = build(mod, Standins)
    except Exception as e:  # noqa: BLE001
        return dict(info, kind="invalid", why="building: " + first_line(e))
    try:
        # On a copy: FX sets the tensors it computes on the module it traces (`_tensor_constant1`),
        # and an archive scripted from that module would hold them as attributes of its own.
        graph, code, gm = reference(copy.deepcopy(obj), mod.WRAP, name)
    except Exception as e:  # noqa: BLE001 - FX cannot take it: not a case
        return dict(info, kind="invalid", why="torch.fx: " + first_line(e))
    pt = os.path.join(out_dir, f"{name}.pt")
    if mod.WRAP == "plain":
        try:
            torch.jit.script(obj).save(pt)
        except Exception as e:  # noqa: BLE001
            return dict(info, kind="invalid", why="torch.jit.script: " + first_line(e))
    else:
        from tdfx_export import export
        tensors, _ = inputs_for(mod)
        try:
            if BREAK_EXPORTER:
                raise RuntimeError("the exporter broken on purpose (--break-exporter)")
            export(obj, pt, example_inputs={k: v for k, v in tensors.items()}, method="script")
        except Exception as e:  # noqa: BLE001
            # A program TorchScript cannot compile is no case, as for a plain module; the exporter
            # failing on programs that compile is the exporter's failure, and fails the run.
            unscriptable = scripting_error(obj)
            if unscriptable:
                return dict(info, kind="invalid", why="torch.jit.script: " + unscriptable)
            return dict(info, kind="fail", why="exporter: tdfx_export.export failed, though TorchScript compiles "
                        "every program of the case: " + first_line(e) + "\n" + traceback.format_exc())
    info.update(kind="ready", graph=graph, code=code, pt=pt)
    if check_tensordict and mod.WRAP != "plain":
        info["tensordict"] = compare_with_tensordict(mod, graph, code, check_tensordict)
    return info


# --break-exporter: export raises on every TensorDict case (the check that such a failure fails the run).
BREAK_EXPORTER = False


def scripting_error(obj):
    """'' when torch.jit.script compiles every program of a TensorDict case, else its error."""
    import torch
    for child in flat_children(obj):
        try:
            torch.jit.script(child.module)
        except Exception as e:  # noqa: BLE001
            return first_line(e)
    return ""


def compare_with_tensordict(mod, graph, code, td_dir):
    """'' when td_reference's graph and code equal the real tensordict 0.1.2's (copying its fault 2
    for the comparison), else the difference."""
    import torch.fx as fx
    import td_reference as ref
    ref_gm = fx.GraphModule(ref.root_of(build(mod, Standins)), ref.trace_graph(build(mod, Standins), fault2=True))
    graph, code = str(ref_gm.graph), ref_gm.code
    if td_dir not in sys.path:
        sys.path.insert(0, td_dir)
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from tensordict.prototype.fx import symbolic_trace

    class Real:
        Module = TensorDictModule
        Sequential = TensorDictSequential
    try:
        traced = symbolic_trace(build(mod, Real))
        real_graph = str(traced._graph_module.graph) if hasattr(traced, "_graph_module") else str(traced.graph)
        real_code = traced._graph_module.code if hasattr(traced, "_graph_module") else traced.code
    except Exception as e:  # noqa: BLE001
        return "real tensordict failed: " + first_line(e)
    if real_graph != graph or real_code != code:
        import difflib
        return "td_reference differs from tensordict 0.1.2:\n" + "".join(difflib.unified_diff(
            (graph + "\n" + code).splitlines(True), (real_graph + "\n" + real_code).splitlines(True),
            "td_reference", "tensordict"))
    return ""


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def verify_passed(text):
    """PASSED; or, for a module whose out keys are all "_", verify's "nothing to compare" verdict
    (no output can agree) with every node compared with its eager value and none differing."""
    if "PASSED" in text:
        return True
    nodes = re.search(r"^nodes: (\d+) compared with the eager value they stand for, \d+ excused$", text, re.M)
    return ("FAILED: nothing to compare" in text and nodes is not None and int(nodes.group(1)) > 0
            and "nodes not compared" not in text)


def judge(info, out_dir):
    """Compares tdfx's results for one ready case; returns '' or what failed (first kind first)."""
    import difflib
    import torch
    name = info["name"]
    err = os.path.join(out_dir, f"{name}.error.txt")
    if os.path.exists(err) and not os.path.exists(os.path.join(out_dir, f"{name}.graph.txt")):
        return "tdfx error: " + open(err).read().strip().splitlines()[0]
    if not os.path.exists(os.path.join(out_dir, f"{name}.graph.txt")):
        rc, stderr = info.get("cli", (None, ""))
        return (f"tdfx error: tdfx-cli trace --out-dir wrote neither {name}.graph.txt nor {name}.error.txt "
                f"(exit status {rc}){': ' + stderr if stderr else ''}")
    got_graph = open(os.path.join(out_dir, f"{name}.graph.txt")).read()
    got_code = open(os.path.join(out_dir, f"{name}.code.txt")).read()
    problems = []
    if got_graph != info["graph"]:
        problems.append("graph differs:\n" + "".join(difflib.unified_diff(
            (info["graph"] + "\n").splitlines(True), (got_graph + "\n").splitlines(True), "torch.fx", "tdfx")))
    if got_code != info["code"]:
        problems.append("code differs:\n" + "".join(difflib.unified_diff(
            info["code"].splitlines(True), got_code.splitlines(True), "torch.fx", "tdfx")))
    problems += execute(info, got_code)
    report = os.path.join(out_dir, f"{name}.verify.txt")
    if os.path.exists(report) and not verify_passed(open(report).read()):
        problems.append("verify failed:\n" + open(report).read())
    return "\n".join(problems)


def layout_root(obj, wrap):
    """The eager modules laid out as the archive lays them out (a TensorDictModule's module at
    `module`, a sequential's children at `0.module`, `1.module`, ...), so the printed code's
    attribute paths resolve. The eager tree, not the loaded archive: TorchScript compiles a leaf
    RNN's forward_tensor, not the forward Python calls, so a loaded GRU cannot be called from Python."""
    if wrap == "plain":
        return obj
    from tdfx_export import _spec_and_modules
    built, _ = _spec_and_modules(obj, "", lambda m, p: m)
    return built


def execute(info, got_code):
    """Runs tdfx's printed forward on the eager module tree; [] when it equals eager bitwise."""
    import torch
    mod = import_file(info["source"], f"fuzz_exec_{info['name']}")
    obj = build(mod, Standins)
    tensors, plain = inputs_for(mod)
    try:
        root = layout_root(obj, info["wrap"])
        # Tensors FX computes while tracing live on its GraphModule (`_tensor_constant0`), not on
        # the module: the printed code reads them there, under the names both tracers give them.
        # A sequential's child holds its own (`0.module._tensor_constant0`).
        _graph, _code, traced = reference(copy.deepcopy(obj), info["wrap"], info["name"])
        for node in traced.graph.nodes:
            *path, attr = node.target.split(".") if node.op == "get_attr" else ["", ""]
            if not attr.startswith("_tensor_constant"):
                continue
            owner, source = root, traced
            for part in path:
                owner, source = getattr(owner, part), getattr(source, part)
            if not hasattr(owner, attr):
                setattr(owner, attr, getattr(source, attr))
        if info["wrap"] == "plain":
            names = mod.P0.forward.__code__.co_varnames[:mod.P0.forward.__code__.co_argcount]
            args = [plain[n] for n in ("x", "y") if n in names]
            kwargs = {"mask": plain["mask"]} if "mask" in names else {}
            with torch.no_grad():
                expected = obj(*args, **kwargs)
            got = run_printed(got_code, root, args, kwargs)
        else:
            if "mask is not None" in open(info["source"]).read():
                return []  # a TensorDictModule never passes mask: eager and FX's branch differ by design
            with torch.no_grad():
                if info["wrap"] == "td":  # a TensorDictModule's graph returns what its module returns
                    result = obj.module(*[tensors[key_of(k)] for k in obj.in_keys])
                    expected = result if isinstance(result, tuple) else (result,)
                else:
                    # tensordict's graph: the last value written to each key (`_` too), in first-write
                    # order; a nested sequential's outputs are zipped with its out_keys as tensordict
                    # zips them, so there FX's own graph, run, is the reference.
                    expected = eager_td(obj, tensors)
            got = run_printed(got_code, root, [dict(tensors)])
            got = got if isinstance(got, tuple) else (got,)
    except Exception as e:  # noqa: BLE001
        return ["printed code does not run: " + first_line(e)]
    if not same(got, expected):
        return ["printed code runs but differs from eager"]
    return []


def run_cli(cli, out_dir, pts, verify):
    listing = os.path.join(out_dir, "archives.txt")
    with open(listing, "w") as f:
        f.write("\n".join(pts) + "\n")
    cmd = [cli, "trace", "--out-dir", out_dir, "--from", listing] + (["--verify"] if verify else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stderr.strip()[-2000:]


def evaluate(paths, cli, work, check_tensordict=None, verify=True):
    """paths: {name: case file}. Returns {name: result dict with kind: invalid / pass / fail}."""
    results = {}
    for name, path in paths.items():
        try:
            results[name] = prepare(path, name, work, check_tensordict)
        except Exception:  # noqa: BLE001 - a harness crash is reported as such
            results[name] = {"name": name, "kind": "fail", "source": path, "why": "harness: " + traceback.format_exc()}
    ready = [r for r in results.values() if r["kind"] == "ready"]
    plain = [r["pt"] for r in ready if r["wrap"] == "plain"]
    wrapped = [r["pt"] for r in ready if r["wrap"] != "plain"]
    cli_result = {}
    if plain:
        cli_result["plain"] = run_cli(cli, work, plain, verify=False)
    if wrapped:
        cli_result["wrapped"] = run_cli(cli, work, wrapped, verify=verify)
    for r in ready:
        r["cli"] = cli_result["plain" if r["wrap"] == "plain" else "wrapped"]
        why = judge(r, work)
        vf = os.path.join(work, f"{r['name']}.verify.txt")
        if verify and r["wrap"] != "plain" and not why and not os.path.exists(vf):
            why = "verify did not run"
        if r.get("tensordict"):
            why = (why + "\n" if why else "") + r["tensordict"]
        r["kind"] = "fail" if why else "pass"
        r["why"] = why
    return results


def write_case(case, path, keep=None):
    with open(path, "w") as f:
        f.write(case_source(case, keep))


def shrink(case, cli, work, signature):
    """Delta debugging over the statements of every program: the smallest keep-set that still fails
    with the same signature (the failure's kind and first differing line)."""
    units = [(i, j) for i, p in enumerate(case.programs) for j in range(len(p.stmts))]

    def keep_of(subset):
        return [[j for (i2, j) in subset if i2 == i] for i in range(len(case.programs))]

    def still_fails(candidates):
        paths = {}
        for n, subset in enumerate(candidates):
            path = os.path.join(work, f"shrink_{n}.py")
            write_case(case, path, keep_of(subset))
            paths[f"shrink_{n}"] = path
        results = evaluate(paths, cli, work)
        return [results[f"shrink_{n}"]["kind"] == "fail" and failure_signature(results[f"shrink_{n}"]["why"]) == signature
                for n in range(len(candidates))]

    n = 2
    while len(units) >= 2:
        chunk = max(1, len(units) // n)
        subsets = [units[k:k + chunk] for k in range(0, len(units), chunk)]
        complements = [[u for u in units if u not in s] for s in subsets]
        verdicts = still_fails(complements)
        if any(verdicts):
            units = complements[verdicts.index(True)]
            n = max(n - 1, 2)
        elif n >= len(units):
            break
        else:
            n = min(len(units), n * 2)
    return keep_of(units)


def failure_signature(why):
    """What kind of failure, and what its first differing line does (its target, or its code with
    every name replaced): names change as statements go, the failure should not."""
    lines = why.splitlines()
    kind = lines[0].split(":")[0] if lines else ""
    first = next((ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")), "")
    target = re.search(r"(op|target)=[^\]]*\]", first) or re.search(r"\b(op|target)=\S+", first)
    if target:
        return kind + "|" + target.group(0)
    rhs = first.split("=", 1)[-1] if "=" in first and "return" not in first else first
    return kind + "|" + re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\b", "_", rhs).strip()


def known_failures():
    known = {}
    path = os.path.join(HERE, "known_failures.txt")
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(":")
                known[name.strip()] = why.strip()
    return known


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--regressions", action="store_true", help="also run every case in regressions/")
    parser.add_argument("--work", help="keep the archives and results here (default: a temporary folder)")
    parser.add_argument("--shrink", action="store_true", help="shrink each failure to a minimal program")
    parser.add_argument("--save", help="with --shrink and one failing seed: save it as regressions/NAME.py")
    parser.add_argument("--tensordict", help="a checkout of tensordict 0.1.2: check td_reference.py against it")
    parser.add_argument("--report", help="write each failure's details here")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--max-invalid-share", type=float, default=0.01,
                        help="the run fails when more of the programs than this are invalid (default 0.01)")
    parser.add_argument("--break-exporter", action="store_true",
                        help="make the exporter fail on every TensorDict case (checks that this fails the run)")
    args = parser.parse_args()
    global BREAK_EXPORTER
    BREAK_EXPORTER = args.break_exporter
    warnings.filterwarnings("ignore")
    work = args.work or tempfile.mkdtemp(prefix="tdfx-fuzz-")
    os.makedirs(work, exist_ok=True)
    started = time.time()
    paths, cases = {}, {}
    for seed in range(args.seed, args.seed + args.count):
        case = grammar.generate_case(seed)
        name = f"seed{seed}"
        cases[name] = case
        paths[name] = os.path.join(work, f"{name}.py")
        write_case(case, paths[name])
    if args.regressions:
        reg = os.path.join(HERE, "regressions")
        for f in sorted(os.listdir(reg)):
            if f.endswith(".py"):
                paths[f"reg_{f[:-3]}"] = os.path.join(reg, f)
    results = evaluate(paths, args.cli, work, args.tensordict, verify=not args.no_verify)
    known = known_failures()
    counts = {"pass": 0, "fail": 0, "invalid": 0}
    unexpected = []
    report = []
    for name, r in results.items():
        counts[r["kind"]] += 1
        if r["kind"] == "fail":
            report.append(f"=== {name} ({r['source']})\n{r['why']}\n")
            if name not in known:
                unexpected.append(name)
        elif r["kind"] == "pass" and name in known:
            unexpected.append(name + " (listed in known_failures.txt, but passes now)")
    valid = counts["pass"] + counts["fail"]
    share = counts["invalid"] / max(len(results), 1)
    print(f"fx_fuzz: {len(results)} programs, {counts['invalid']} invalid (FX or TorchScript cannot take them; "
          f"{100.0 * share:.1f} %, at most {100.0 * args.max_invalid_share:g} %), "
          f"{valid} valid: {counts['pass']} pass, {counts['fail']} fail "
          f"({10000.0 * counts['fail'] / max(valid, 1):.0f} per 10,000) in {time.time() - started:.0f} s")
    for name, r in results.items():
        if r["kind"] == "invalid":
            print(f"invalid {name}: {r['why']}")
    too_many_invalid = share > args.max_invalid_share
    if too_many_invalid:
        print(f"FAIL {counts['invalid']} of {len(results)} programs are invalid ({100.0 * share:.1f} %), more than "
              f"{100.0 * args.max_invalid_share:g} %: the grammar makes programs FX or TorchScript cannot take")
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(report))
    for name in unexpected:
        r = results.get(name.split(" ")[0])
        print(f"FAIL {name}\n{r['why'] if r and r['kind'] == 'fail' else ''}")
    if args.shrink:
        for name, r in results.items():
            if r["kind"] != "fail" or name not in cases:
                continue
            os.makedirs(os.path.join(work, "shrink-" + name), exist_ok=True)
            keep = shrink(cases[name], args.cli, os.path.join(work, "shrink-" + name), failure_signature(r["why"]))
            text = case_source(cases[name], keep)
            print(f"--- {name} shrunk:\n{text}")
            if args.save:
                with open(os.path.join(HERE, "regressions", f"{args.save}.py"), "w") as f:
                    f.write(f"# Shrunk from fuzz seed {name[4:]}: {r['why'].splitlines()[0]}\n" + text)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if unexpected or too_many_invalid else 0


if __name__ == "__main__":
    sys.exit(main())
