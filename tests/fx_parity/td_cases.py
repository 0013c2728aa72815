"""The TensorDict cases whose tracing tensordict 0.1.2 was recorded on (record_tensordict.py) and
td_reference.py is checked against (check_td_reference.py), built by one code for both sides.

Each case is built from `td`, a namespace with `Module` (in the shape of tensordict's
TensorDictModule(module, in_keys, out_keys)) and `Sequential` (TensorDictSequential(*modules)):
the real tensordict classes when recording, tests/fixtures/standins.py's stand-ins when checking.

Groups:
  tvtd, tvseq  the FX parity corpus's TensorDict cases (make_cases.py --torchvision): every
               torchvision classification model as a TensorDictModule, and as a TensorDictSequential
               with SoftmaxHead, with make_cases.py's keys;
  fuzz         the fuzz grammar's TensorDict cases (wrap "td" or "seq") of a fixed seed range, and
               those of tests/fx_fuzz/regressions/;
  fixture      the TensorDict fixtures of tests/fixtures/make_fixtures.py (the modules the inline
               goldens of tests/trace/trace_cases_test.cpp come from).
"""
import contextlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
for _p in (HERE, os.path.join(ROOT, "tests", "fx_fuzz"), os.path.join(ROOT, "tests", "fixtures"),
           os.path.join(ROOT, "app")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

# The fuzz seeds recorded: the range CI's fuzz test runs (tests/CMakeLists.txt, fx_fuzz.seeds_0_499)
# and the next 500.
FUZZ_SEEDS = range(0, 1000)

TV_IN, TV_HIDDEN, TV_OUT, TV_PROBS = ("input", "image"), ("hidden", "logits"), ("output", "logits"), \
    ("output", "probabilities")


@contextlib.contextmanager
def no_weight_init():
    """Builds models without drawing their weights (regnet_y_128gf's alone take 20 s to draw):
    torch.nn.init's functions and the in-place random fills do nothing, so the weights stay the
    uninitialised (and, for the big ones, never touched) memory torch.empty gave. FX's graph and
    code do not depend on weight values."""
    import torch
    import torch.nn.init as init
    saved = {}
    for name in dir(init):
        f = getattr(init, name)
        if name.endswith("_") and not name.startswith("_") and callable(f):
            saved[(init, name)] = f
            setattr(init, name, lambda tensor, *a, **k: tensor)
    for name in ("normal_", "uniform_", "erfinv_", "random_", "bernoulli_", "exponential_"):
        saved[(torch.Tensor, name)] = getattr(torch.Tensor, name)
        setattr(torch.Tensor, name, lambda self, *a, **k: self)
    try:
        yield
    finally:
        for (owner, name), f in saved.items():
            setattr(owner, name, f)


def torchvision_names():
    import torchvision
    return sorted(torchvision.models.list_models(module=torchvision.models))


def torchvision_model(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    with no_weight_init():
        return torchvision.models.get_model(name, weights=None).eval()


def fuzz_module(name, path):
    import fuzz
    return fuzz.import_file(path, f"td_cases_{name}")


class Case:
    """name, group, and build(td) -> the TensorDictModule / TensorDictSequential built of td's
    classes; source: a fuzz case's file text (recorded, so the check does not depend on grammar.py)."""

    def __init__(self, name, group, build, source=None):
        self.name, self.group, self.build, self.source = name, group, build, source


def parity_cases():
    import td_reference as ref
    cases = []
    for model_name in torchvision_names():
        def tvtd(td, m=model_name):
            return td.Module(torchvision_model(m), [TV_IN], [TV_OUT])

        def tvseq(td, m=model_name):
            return td.Sequential(td.Module(torchvision_model(m), [TV_IN], [TV_HIDDEN]),
                                 td.Module(ref.SoftmaxHead(), [TV_HIDDEN], [TV_PROBS]))
        cases += [Case(f"tvtd_{model_name}", "tvtd", tvtd), Case(f"tvseq_{model_name}", "tvseq", tvseq)]
    return cases


def fuzz_cases(work, seeds=FUZZ_SEEDS):
    """The fuzz grammar's TensorDict cases of `seeds` (their case files written into `work`) and
    of tests/fx_fuzz/regressions/."""
    import fuzz
    import grammar
    paths = []
    for seed in seeds:
        case = grammar.generate_case(seed)
        if case.wrap == "plain":
            continue
        path = os.path.join(work, f"seed{seed}.py")
        fuzz.write_case(case, path)
        paths.append((f"fuzz_seed{seed}", path))
    reg = os.path.join(ROOT, "tests", "fx_fuzz", "regressions")
    for f in sorted(os.listdir(reg)):
        if f.endswith(".py"):
            paths.append((f"fuzz_reg_{f[:-3]}", os.path.join(reg, f)))
    cases = []
    for name, path in paths:
        with open(path) as fh:
            source = fh.read()
        if "WRAP = 'plain'" not in source:
            cases.append(fuzz_case(name, source, work))
    return cases


def fuzz_case(name, source, work):
    """A fuzz case from its file text (written into `work` to be imported: FX needs no source, but
    a case file is a module)."""
    import fuzz
    path = os.path.join(work, f"{name}.case.py")
    with open(path, "w") as f:
        f.write(source)

    def build(td):
        return fuzz.build(fuzz_module(name, path), td)
    return Case(name, "fuzz", build, source)


def fixture_cases():
    """The TensorDict objects tests/fixtures/make_fixtures.py exports, in its order, named after
    their archives: its main() run with `export` recording the object instead of writing it (and
    torch.jit.save / script doing nothing). The stand-ins make_fixtures builds are rebuilt of td's
    classes by convert()."""
    import torch
    import make_fixtures as mf
    objs = []

    def record(obj, path, *args, **kwargs):
        objs.append((os.path.splitext(os.path.basename(path))[0], obj))

    saved = (mf.export, torch.jit.save, torch.jit.script, torch.jit.trace, mf.dense_layout_module,
             mf.save_with_invalid_utf8)
    mf.export, torch.jit.save = record, (lambda *a, **k: None)
    torch.jit.script = torch.jit.trace = (lambda m, *a, **k: m)
    mf.dense_layout_module = lambda *a, **k: None
    mf.save_with_invalid_utf8 = lambda *a, **k: None  # patches the bytes of a saved archive
    argv = sys.argv
    try:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            sys.argv = ["make_fixtures.py", "--fixtures", d, "--examples", d]
            mf.main()
    finally:
        sys.argv = argv
        (mf.export, torch.jit.save, torch.jit.script, torch.jit.trace, mf.dense_layout_module,
         mf.save_with_invalid_utf8) = saved
    seen, cases = set(), []
    for name, obj in objs:
        if name in seen:  # seed_module / seed_sequential are written twice (fixtures and examples)
            continue
        seen.add(name)
        cases.append(Case(f"fixture_{name}", "fixture", lambda td, o=obj: convert(o, td)))
    return cases


def convert(obj, td):
    """A stand-in TDModule / TDSequential rebuilt of td's classes, of copies of its modules: each
    build is fresh, as FX's trace changes the module it traces (a tensor constant becomes the
    attribute `_tensor_constant0`, and the next trace of the same module names its `_tensor_constant1`)."""
    import copy
    if isinstance(obj.module, list):
        return td.Sequential(*[convert(c, td) for c in obj.module])
    return td.Module(copy.deepcopy(obj.module), list(obj.in_keys), list(obj.out_keys))


def all_cases(work, groups=("tvtd", "tvseq", "fuzz", "fixture")):
    cases = []
    if "tvtd" in groups or "tvseq" in groups:
        cases += [c for c in parity_cases() if c.group in groups]
    if "fuzz" in groups:
        cases += fuzz_cases(work)
    if "fixture" in groups:
        cases += fixture_cases()
    return cases


# --- What identifies a case, and the recordings' files ---------------------------------------------
RECORDINGS = os.path.join(HERE, "tensordict_0.1.2")
GROUP_FILES = {"tvtd": "tvtd.jsonl.xz", "tvseq": "tvseq.jsonl.xz", "fuzz": "fuzz.jsonl.xz",
               "fixture": "fixture.jsonl.xz"}


def fingerprint(obj):
    """A hash of what a case is: its keys and nesting, each module's repr and the source of every
    module class in it (the forward that FX traces). The same object built twice hashes the same."""
    import hashlib
    import inspect
    import torch
    h = hashlib.sha256()
    sources = {}

    def walk(o):
        if isinstance(o.module, (list, tuple, torch.nn.ModuleList)):  # a sequential: stand-in or real
            h.update(b"seq(")
            for c in o.module:
                walk(c)
            h.update(b")")
            return
        h.update(repr((list(o.in_keys), list(o.out_keys))).encode())
        h.update(repr(o.module).encode())
        for m in o.module.modules():
            t = type(m)
            if t not in sources:
                try:
                    sources[t] = inspect.getsource(t)
                except (OSError, TypeError):
                    sources[t] = t.__qualname__
                h.update(sources[t].encode())
    walk(obj)
    return h.hexdigest()[:20]


def plain_key(k):
    """A key as JSON keeps it: a string, or a list of strings."""
    return list(k) if isinstance(k, tuple) else k


def read_recordings(directory=RECORDINGS, groups=GROUP_FILES):
    """(header per group, {name: record}) from the .jsonl.xz files: a header line, then one JSON
    object per case."""
    import json
    import lzma
    headers, records = {}, {}
    for group in groups:
        path = os.path.join(directory, GROUP_FILES[group])
        if not os.path.exists(path):
            continue
        with lzma.open(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
        headers[group] = json.loads(lines[0])
        for line in lines[1:]:
            r = json.loads(line)
            records[r["name"]] = r
    return headers, records


def write_recordings(path, header, records):
    import json
    import lzma
    text = "\n".join(json.dumps(x, ensure_ascii=False, sort_keys=True) for x in [header] + records) + "\n"
    with open(path, "wb") as f:
        f.write(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))


def error_text(e):
    """An exception as a recording keeps it: type and first line, with FX's per-process counter in
    generated file names (`<eval_with_key>.113`) taken out."""
    import re
    text = str(e).strip().splitlines()
    return re.sub(r"<eval_with_key>\.\d+", "<eval_with_key>.N", f"{type(e).__name__}: {text[0] if text else ''}")


def traced(graph_module, out_keys):
    return {"graph": str(graph_module.graph), "code": graph_module.code,
            "out_keys": [plain_key(k) for k in out_keys]}


def quietly(f, *args):
    """f(*args) with Python's stdout kept (a fixture's module prints while FX traces it)."""
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        return f(*args)
