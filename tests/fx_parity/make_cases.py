#!/usr/bin/env python3
"""Generates the FX parity corpus: per case a scripted archive and torch.fx 1.13's reference output.

Run with Debian's interpreter: /usr/bin/python3 make_cases.py --out DIR [--cmake FILE] [--cli TDFX_CLI]

DIR is a cache of three parts, each in a folder keyed by the torch and torchvision versions and by
the text that shapes it (its generator here, and cases.py for the modules; td_reference.py,
app/tdfx_export.py and tests/fixtures/standins.py for the TensorDict-wrapped torchvision models): a
part whose folder has its index.json is not generated again, so a change to the exporter remakes
only the wrapped models. The corpus is one folder of links to the parts' files (--print-dir names
it). Per case it holds
  NAME.pt          the module scripted by torch.jit.script (tdfx's input),
  NAME.graph.txt   print(torch.fx.symbolic_trace(module).graph),
  NAME.code.txt    torch.fx.symbolic_trace(module).code,
  NAME.dot         FxGraphDrawer(graph_module, NAME).get_dot_graph().to_string(),
and index.json lists every case with its group, or why FX or TorchScript could not take it.
--torchvision adds every torchvision classification model, plain, as a TensorDictModule and as a
TensorDictSequential (210 cases, about 6 minutes to make; their weights are 0-stride views of one
value, so the archives take 128 MB in all). The build uses it.
--cmake writes the CTest cases: one per batch of up to BATCH_SIZE modules of a group, compared by
compare_case.py --batch with one `tdfx-cli trace --out-dir` (a failure names its modules), and the
ONE_SHOT modules with one tdfx-cli per output as a user runs it; the torchvision cases compare graph
and code there, and their pictures in `compare_case.py --table`.

Modules are traced and scripted in eval mode, as tdfx puts every model it loads (the `train_`
cases check that `self.training` reads False).
Torchvision models are kept small: every parameter and buffer is replaced by a 0-stride expansion
of one element, so an archive keeps every shape and the graph, but not megabytes of weights.
"""
import argparse
import copy
import hashlib
import importlib.util
import inspect
import json
import os
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))


# The corpus is made in three parts, each cached under a key of only the files that shape it, so a
# change to the exporter remakes the TensorDict-wrapped models and not the 464 modules.
PART_FILES = {
    "modules": ("cases.py",),
    "tv": (),
    "tvtd": ("td_reference.py", "../../app/tdfx_export.py", "../fixtures/standins.py"),
}


def part_key(part):
    import torch
    import torchvision
    h = hashlib.sha256()
    # The text of the functions here that make the part (not the whole script's).
    for function in PART_CODE[part] + (fx_reference, save_case, first_line):
        h.update(inspect.getsource(function).encode())
    for f in PART_FILES[part]:
        with open(os.path.join(HERE, f), "rb") as fh:
            h.update(fh.read())
    return f"{part}-torch{torch.__version__}-torchvision{torchvision.__version__}-{h.hexdigest()[:12]}"


def cache_key(parts):
    """The folder of the whole corpus: named by its parts' keys."""
    h = hashlib.sha256("/".join(part_key(p) for p in parts).encode())
    return "corpus-" + ("tv-" if "tv" in parts else "") + h.hexdigest()[:16]


def write_case_module(path, cases):
    """The cases as one importable Python file, so TorchScript and FX both read real source."""
    import cases as c
    lines = ["import math", "from typing import Dict, List, Optional, Tuple", "import torch",
             "import torch.nn as nn", "import torch.nn.functional as F", "import torch.nn.functional as fn",
             c.PRELUDE]
    for name, forward, init in cases:
        lines.append(f"\nclass Case_{name}(nn.Module):")
        lines.append("    def __init__(self):")
        lines.append("        super().__init__()")
        if init:
            lines.append("        " + init)
        lines.append("")
        lines.extend("    " + line for line in forward.splitlines())
        lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def shrink(module):
    """Every parameter and buffer becomes a 0-stride view of one element (shapes kept, bytes gone)."""
    import torch
    for m in module.modules():
        for name, p in list(m._parameters.items()):
            if p is not None and p.dim() > 0:
                m._parameters[name] = torch.nn.Parameter(torch.zeros((), dtype=p.dtype).expand(p.shape),
                                                         requires_grad=p.requires_grad)
        for name, b in list(m._buffers.items()):
            if b is not None and b.dim() > 0:
                m._buffers[name] = torch.zeros((), dtype=b.dtype).expand(b.shape)
    return module


def fx_reference(module, name):
    """torch.fx's graph, code and FxGraphDrawer DOT for `module`."""
    import torch.fx
    from torch.fx.passes.graph_drawer import FxGraphDrawer
    # On a copy: FX sets each tensor it computes while tracing on the module it traces
    # (`_tensor_constant0`), and the archive scripted from the module afterwards would hold it as an
    # attribute of its own, under the name FX's next constant would have skipped.
    gm = torch.fx.symbolic_trace(copy.deepcopy(module))
    dot = FxGraphDrawer(gm, name).get_dot_graph().to_string()
    return str(gm.graph), gm.code, dot


def save_case(out, name, graph, code, dot):
    for ext, text in (("graph.txt", graph), ("code.txt", code), ("dot", dot)):
        with open(os.path.join(out, f"{name}.{ext}"), "w") as f:
            f.write(text)


def generate_modules(out, index):
    import torch
    import cases as c
    cases = c.all_cases()
    gen_path = os.path.join(out, "parity_cases.py")
    write_case_module(gen_path, cases)
    gen = import_file(gen_path, "parity_cases")
    for name, _, _ in cases:
        group = name.split("_", 1)[0]
        entry = {"name": name, "group": group}
        index.append(entry)
        torch.manual_seed(0)
        module = getattr(gen, f"Case_{name}")()
        module.eval()
        try:
            graph, code, dot = fx_reference(module, name)
        except Exception as e:  # noqa: BLE001 - the corpus records why FX cannot take a case
            entry["skip"] = "torch.fx cannot trace it: " + first_line(e)
            continue
        try:
            scripted = torch.jit.script(module)
        except Exception as e:  # noqa: BLE001
            entry["skip"] = "torch.jit.script cannot compile it: " + first_line(e)
            continue
        scripted.save(os.path.join(out, f"{name}.pt"))
        save_case(out, name, graph, code, dot)


def generate_tv(out, index):
    generate_torchvision(out, index, ("tv",))


def generate_tvtd(out, index):
    generate_torchvision(out, index, ("tvtd", "tvseq"))


def generate_torchvision(out, index, prefixes):
    import torch
    import torchvision
    sys.path.insert(0, os.path.join(HERE, "..", "..", "app"))
    sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
    from standins import TDModule, TDSequential
    from tdfx_export import export
    import td_reference as ref

    names = torchvision.models.list_models(module=torchvision.models)
    for model_name in sorted(names):
        torch.manual_seed(0)
        try:
            model = shrink(torchvision.models.get_model(model_name, weights=None).eval())
        except Exception as e:  # noqa: BLE001
            for prefix in prefixes:
                index.append({"name": f"{prefix}_{model_name}", "group": prefix, "skip": "cannot build it: " + first_line(e)})
            continue
        for prefix in prefixes:
            name = f"{prefix}_{model_name}"
            entry = {"name": name, "group": prefix}
            index.append(entry)
            try:
                if prefix == "tv":
                    graph, code, dot = fx_reference(model, name)
                elif prefix == "tvtd":
                    graph, code, dot = ref.td_module_reference(copy.deepcopy(model), [("input", "image")], [("output", "logits")], name)
                else:
                    head = ref.SoftmaxHead()
                    graph, code, dot = ref.td_sequential_reference(
                        [(copy.deepcopy(model), [("input", "image")], [("hidden", "logits")]),
                         (head, [("hidden", "logits")], [("output", "probabilities")])], name)
            except Exception as e:  # noqa: BLE001
                entry["skip"] = "torch.fx cannot trace it: " + first_line(e)
                continue
            path = os.path.join(out, f"{name}.pt")
            try:
                if prefix == "tv":
                    torch.jit.script(model).save(path)
                elif prefix == "tvtd":
                    export(TDModule(model, [("input", "image")], [("output", "logits")]), path, method="script")
                else:
                    export(TDSequential(TDModule(model, [("input", "image")], [("hidden", "logits")]),
                                        TDModule(ref.SoftmaxHead(), [("hidden", "logits")],
                                                 [("output", "probabilities")])), path, method="script")
            except Exception as e:  # noqa: BLE001
                entry["skip"] = "torch.jit.script cannot compile it: " + first_line(e)
                continue
            save_case(out, name, graph, code, dot)
        print(f"fx_parity: {model_name}", flush=True)


PART_GENERATORS = {"modules": generate_modules, "tv": generate_tv, "tvtd": generate_tvtd}
# What each part's generator calls here, so that a change to a shared helper remakes the parts using it.
PART_CODE = {
    "modules": (generate_modules, write_case_module, import_file),
    "tv": (generate_tv, generate_torchvision, shrink),
    "tvtd": (generate_tvtd, generate_torchvision, shrink),
}

# Groups whose CTest cases compare graph and code only: the torchvision models (tv, tvtd, tvseq:
# 210 whole models), whose pictures take pydot minutes each to parse on CI's 2 cores. Their
# pictures are measured by `compare_case.py --table` and the benchmark report.
CTEST_GROUPS_WITHOUT_PICTURE = ("tv", "tvtd", "tvseq")
# A CTest case compares up to this many modules of one group with one tdfx-cli (trace --out-dir):
# one LibTorch start per batch instead of two per module, and batches small enough for ctest -j.
BATCH_SIZE = 60
# These go through the one-shot path too (`tdfx-cli trace M` and `tdfx-cli export M`), as a user
# runs them: a plain module, a TensorDict-wrapped one and a sequence of them.
ONE_SHOT = ("fn_relu", "tvtd_resnet18", "tvseq_alexnet")


def batches(index):
    """[(test name, group, [case names])]: each group cut into batches of BATCH_SIZE, in order."""
    groups = {}
    for entry in index:
        if "skip" not in entry:
            groups.setdefault(entry["group"], []).append(entry["name"])
    out = []
    for group, names in groups.items():
        n = (len(names) + BATCH_SIZE - 1) // BATCH_SIZE
        for i in range(n):
            part = names[i * BATCH_SIZE:(i + 1) * BATCH_SIZE]
            out.append((f"fx_parity.{group}" + (f".{i + 1}of{n}" if n > 1 else ""), group, part))
    return out


def write_cmake(path, out, index, cli, compare):
    lines = ["# Generated by tests/fx_parity/make_cases.py: the FX parity corpus as CTest cases, one per batch",
             "# of a group (a failure names its modules), and a few modules through the one-shot path."]
    usable = {e["name"]: e for e in index if "skip" not in e}
    work = os.path.join(os.path.dirname(os.path.abspath(path)), "fx-parity-work")  # in the build tree
    for test, group, names in batches(index):
        flags = " --no-picture" if group in CTEST_GROUPS_WITHOUT_PICTURE else ""
        lines.append(f'add_test({test} "{sys.executable}" "{compare}" --cli "{cli}" --cases "{out}"{flags} '
                     f'--batch "{os.path.join(work, test)}" {" ".join(names)})')
        lines.append(f'set_tests_properties({test} PROPERTIES LABELS fx_parity TIMEOUT 600)')
    for name in ONE_SHOT:
        if name not in usable:
            continue
        flags = " --no-picture" if usable[name]["group"] in CTEST_GROUPS_WITHOUT_PICTURE else ""
        lines.append(f'add_test(fx_parity.one_shot.{name} "{sys.executable}" "{compare}" --cli "{cli}" --cases "{out}"{flags} {name})')
        lines.append(f'set_tests_properties(fx_parity.one_shot.{name} PROPERTIES LABELS fx_parity TIMEOUT 300)')
    # The comparison itself: a known difference fails when tdfx-cli crashes instead of differing as
    # recorded (it once passed whatever happened, even with --cli /bin/false), one-shot and batched.
    # It must fail (exit 1) with that message: expect_output.sh checks both, as a pass regex alone does not.
    expect = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(compare))), "support", "expect_output.sh")
    lines.append(f'add_test(fx_parity.self_check.known_difference_fails_on_a_crash bash "{expect}" --exit 1 '
                 '"fn_fold: differs from torch.fx otherwise than known_differences/fn_fold.txt records" '
                 f'"{sys.executable}" "{compare}" --cli /bin/false --cases "{out}" fn_fold)')
    lines.append(f'add_test(fx_parity.self_check.batch_fails_on_a_crash bash "{expect}" --exit 1 '
                 '"tdfx-cli exited with status 1 and printed no .traced N of 2 models. line" '
                 f'"{sys.executable}" "{compare}" --cli /bin/false --cases "{out}" '
                 f'--batch "{os.path.join(work, "self_check")}" fn_relu fn_fold)')
    lines.append('set_tests_properties(fx_parity.self_check.known_difference_fails_on_a_crash '
                 'fx_parity.self_check.batch_fails_on_a_crash PROPERTIES LABELS fx_parity)')
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def make_part(root, part):
    """The part's cached folder, made when missing; a killed run never leaves a half-written one."""
    out = os.path.join(root, part_key(part))
    if not os.path.exists(os.path.join(out, "index.json")):
        warnings.filterwarnings("ignore")
        work = tempfile.mkdtemp(dir=root, prefix=".partial-")
        index = []
        PART_GENERATORS[part](work, index)
        with open(os.path.join(work, "index.json"), "w") as f:
            json.dump(index, f, indent=1)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.replace(work, out)
    return out


def make_corpus(out, part_dirs):
    """The whole corpus as one folder: its parts' files linked, their indexes joined."""
    if os.path.exists(os.path.join(out, "index.json")):
        return
    work = tempfile.mkdtemp(dir=os.path.dirname(out), prefix=".partial-")
    index = []
    for d in part_dirs:
        with open(os.path.join(d, "index.json")) as f:
            index.extend(json.load(f))
        for name in os.listdir(d):
            if name != "index.json" and not name.startswith("."):
                os.symlink(os.path.join(d, name), os.path.join(work, name))
    with open(os.path.join(work, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.replace(work, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="cache folder; a subfolder named by the cache key is used")
    parser.add_argument("--cmake", help="write the CTest cases to this file")
    parser.add_argument("--cli", default="tdfx-cli", help="tdfx-cli for the CTest cases")
    parser.add_argument("--print-dir", action="store_true", help="print the case folder and exit")
    parser.add_argument("--torchvision", action="store_true",
                        help="also every torchvision classification model, plain and wrapped (210 cases, long)")
    args = parser.parse_args()
    sys.path.insert(0, HERE)
    parts = ["modules"] + (["tv", "tvtd"] if args.torchvision else [])
    out = os.path.join(args.out, cache_key(parts))
    if args.print_dir:
        print(out)
        return 0
    index_path = os.path.join(out, "index.json")
    if not os.path.exists(index_path):
        os.makedirs(args.out, exist_ok=True)
        make_corpus(out, [make_part(args.out, part) for part in parts])
    with open(index_path) as f:
        index = json.load(f)
    if args.cmake:
        write_cmake(args.cmake, out, index, args.cli, os.path.join(HERE, "compare_case.py"))
    usable = sum(1 for e in index if "skip" not in e)
    print(f"fx_parity: {usable} cases in {out} ({len(index) - usable} that FX or TorchScript cannot take)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
