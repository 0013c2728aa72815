#!/usr/bin/env python3
"""The real-code corpus: public model code nobody wrote for tdfx's tests, traced by tdfx and judged
by torch.fx 1.13 (plain modules) and tensordict 0.1.2's symbolic_trace (TensorDict modules).

Not part of CI: it needs fetched code, and CI must not depend on it. Run it every stop:

    /usr/bin/python3 tests/corpus/real_code.py --cli build/app/tdfx-cli --work DIR \\
        [--timm SRC] [--torchrl SRC --tensordict SRC] [--torchvision] [--per-family N] [--only REGEX]

SRC is an unpacked source tree at its tag, never copied into the project, e.g.
    git --git-dir=<mirror of huggingface/pytorch-image-models> archive v0.6.13 | tar x -C /tmp/timm
    git --git-dir=<mirror of pytorch/rl> archive v0.1.1 | tar x -C /tmp/rl
    git --git-dir=<mirror of pytorch/tensordict> archive v0.1.2 | tar x -C /tmp/td
--tensordict adds tensordict's own test modules (every module its test/test_fx.py traces) and is
needed by --torchrl.

Per source, a child process (model code runs there, each model under a time limit) builds every
model, keeps those both references accept (torch.jit.script and the reference symbolic_trace; for
timm and torchvision also under 60M parameters, as the issue that asked for this measured), and
writes DIR/SOURCE/NAME.pt with the reference's graph and code. One `tdfx-cli trace --out-dir
--from --verify` process then traces and verifies every archive of the source. A model counts when
its graph and code equal the reference's byte for byte and verify says PASSED. A TensorDict module
that TorchScript accepts but the reference refuses is traced and verified too, and listed as `no
reference` (not counted: there is nothing to compare with).

Output: one line per model (`exact`/`differs: graph line N`/`error`, and the verdict), a list of the
models left out with the reason, and `source: N/M exact and verified` per source. Exit status 0 when
every kept model counts, 1 otherwise, 2 when the run itself failed. Timm's families are its module
files (resnet, efficientnet, ...); --per-family N keeps the first N accepted models of each
(sorted by name; 0 keeps every model).
"""
import argparse
import copy
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAX_PARAMETERS = 60_000_000
MODEL_TIME_LIMIT_S = 240
# Names whose models are far over the parameter limit or the usual input size: skipped before they
# are built (building a billion-parameter model only to count it takes minutes).
TIMM_TOO_BIG = re.compile(r"(huge|giant|gigantic|xlarge|_xl|large|_448|_384|_512|_475|_800|_600|in22k|in21k)")


# --- Building: runs in the child process -----------------------------------------------------

def _fx_on_this_python():
    """torch.fx 1.13 as it runs on the Python it was written for.

    Its _patch_function (how symbolic_trace gives a `forward(self, *inputs)` one placeholder per
    argument) builds a CodeType from 3.8's 15 arguments; Python 3.11's takes 18, so every variadic
    forward (torchrl's MLP) fails with "code() argument 13 must be str". code.replace() makes the
    same code object on any Python (newer torch does exactly this); nothing else is changed.
    """
    from types import FunctionType
    import torch.fx._symbolic_trace as st

    def _patch_function(fn, nargs):
        co = fn.__code__
        new_code = co.replace(co_argcount=nargs, co_kwonlyargcount=0, co_flags=co.co_flags & ~st.HAS_VARSTUFF)
        return FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)

    st._patch_function = _patch_function


class ModelTimeout(Exception):
    pass


def _on_alarm(signum, frame):  # noqa: ARG001 - a signal handler's signature
    raise ModelTimeout(f"took over {MODEL_TIME_LIMIT_S} s")


def _first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:200] if text else ''}"


def _shape_flag(key, t):
    return f"{key}={'x'.join(str(d) for d in t.shape)}:{str(t.dtype).replace('torch.', '')}"


class Writer:
    """Writes each accepted model's archive and references, and one manifest line per model."""

    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.manifest = open(os.path.join(out, "manifest.jsonl"), "w")

    def left_out(self, name, family, reason):
        self._line({"name": name, "family": family, "left_out": reason})

    def keep(self, name, family, graph, code, inputs):
        for ext, text in (("ref.graph.txt", graph), ("ref.code.txt", code)):
            with open(os.path.join(self.out, f"{name}.{ext}"), "w") as f:
                f.write(text)
        self._line({"name": name, "family": family, "inputs": inputs})

    def keep_unjudged(self, name, family, inputs, why):
        """A model the reference cannot trace but TorchScript can: traced and verified, not compared."""
        self._line({"name": name, "family": family, "inputs": inputs, "no_reference": why})

    def _line(self, entry):
        self.manifest.write(json.dumps(entry) + "\n")
        self.manifest.flush()
        print(("kept " if "inputs" in entry else "left out ") + entry["name"]
              + (f": {entry['left_out']}" if "left_out" in entry else ""), file=sys.stderr, flush=True)


def add_plain(writer, name, family, build, example):
    """A plain nn.Module: torch.fx.symbolic_trace is the reference, torch.jit.script the archive."""
    import torch
    import torch.fx
    signal.alarm(MODEL_TIME_LIMIT_S)
    try:
        try:
            module = build().eval()
        except Exception as e:  # noqa: BLE001 - a model that does not build is left out, with why
            return writer.left_out(name, family, f"does not build: {_first_line(e)}")
        # One example input takes the name of forward's parameter (torchvision's LRASPP calls it `input`).
        first = next(iter(inspect.signature(module.forward).parameters), None)
        if len(example) == 1 and first and first not in example:
            example = {first: next(iter(example.values()))}
        params = sum(p.numel() for p in module.parameters())
        if params > MAX_PARAMETERS:
            return writer.left_out(name, family, f"{params / 1e6:.0f}M parameters (over 60M)")
        try:
            # On a copy: FX sets the tensors it computes on the module it traces (`_tensor_constant0`),
            # which the archive scripted below would then hold as attributes of its own.
            gm = torch.fx.symbolic_trace(copy.deepcopy(module))
        except Exception as e:  # noqa: BLE001
            return writer.left_out(name, family, f"torch.fx.symbolic_trace refuses it: {_first_line(e)}")
        try:
            scripted = torch.jit.script(module)
        except Exception as e:  # noqa: BLE001
            return writer.left_out(name, family, f"torch.jit.script refuses it: {_first_line(e)}")
        try:
            with torch.no_grad():
                module(*example.values())
        except Exception as e:  # noqa: BLE001
            return writer.left_out(name, family, f"the eager module fails on its example input: {_first_line(e)}")
        torch.jit.save(scripted, os.path.join(writer.out, f"{name}.pt"))
        writer.keep(name, family, str(gm.graph), gm.code, [_shape_flag(k, t) for k, t in example.items()])
    except ModelTimeout as e:
        writer.left_out(name, family, str(e))
    finally:
        signal.alarm(0)


def add_tensordict(writer, name, family, build, example):
    """A TensorDict module: tensordict 0.1.2's symbolic_trace is the reference, tdfx-export the archive."""
    from tensordict.prototype.fx import symbolic_trace
    import tdfx_export
    signal.alarm(MODEL_TIME_LIMIT_S)
    try:
        try:
            module = build()
            module.eval()
        except Exception as e:  # noqa: BLE001
            return writer.left_out(name, family, f"does not build: {_first_line(e)}")
        flat = dict(tdfx_export._flatten_inputs(example))
        try:
            tdfx_export._run_eager(module, dict(flat))  # materialises lazy layers, as users do
        except Exception as e:  # noqa: BLE001
            return writer.left_out(name, family, f"the eager module fails on its example input: {_first_line(e)}")
        try:
            gm, refused = symbolic_trace(module), None
        except Exception as e:  # noqa: BLE001
            gm, refused = None, f"tensordict's symbolic_trace refuses it: {_first_line(e)}"
        try:
            tdfx_export.export(module, os.path.join(writer.out, f"{name}.pt"), example_inputs=example, method="script")
        except Exception as e:  # noqa: BLE001
            why = f"torch.jit.script refuses it: {_first_line(e)}"
            return writer.left_out(name, family, f"{refused}; {why}" if refused else why)
        inputs = [_shape_flag(".".join(k) if isinstance(k, tuple) else k, t) for k, t in flat.items()]
        if refused:
            # Nothing to compare the printout with; tdfx still traces it, and verify says whether the
            # printed graph computes what eager does.
            return writer.keep_unjudged(name, family, inputs, refused)
        writer.keep(name, family, str(gm.graph), gm.code, inputs)
    except ModelTimeout as e:
        writer.left_out(name, family, str(e))
    finally:
        signal.alarm(0)


def make_timm(src, out, per_family, only):
    sys.path.insert(0, src)
    import torch
    import timm
    from timm.models import registry
    writer = Writer(out)
    families = {}
    for name in sorted(timm.list_models()):
        families.setdefault(registry._model_to_module[name], []).append(name)
    for family, names in sorted(families.items()):
        kept = tried = 0
        for position, name in enumerate(names):
            if per_family and kept >= per_family:
                break
            if only and not re.search(only, name):
                continue
            if TIMM_TOO_BIG.search(name):
                writer.left_out(name, family, "over the size limit by name (large/huge/giant or a big input)")
                continue
            if per_family and tried >= per_family + 3:
                writer.left_out(f"{family} ({len(names) - position} more)", family,
                                f"not tried: {tried} of the family tried, {kept} accepted")
                break
            tried += 1
            cfg = registry.get_pretrained_cfg(name) if hasattr(registry, "get_pretrained_cfg") else None
            size = tuple((cfg or {}).get("input_size", (3, 224, 224)) if isinstance(cfg, dict) else
                         getattr(cfg, "input_size", (3, 224, 224)))
            torch.manual_seed(0)
            add_plain(writer, name, family, lambda n=name: timm.create_model(n, pretrained=False),
                      {"x": torch.randn(1, *size)})
            kept += os.path.exists(os.path.join(out, f"{name}.pt"))


def make_torchvision(out, per_family, only):
    import torch
    import torchvision.models as tvm
    writer = Writer(out)
    sizes = {"video": (1, 3, 8, 112, 112), "mvit_v1_b": (1, 3, 16, 224, 224), "mvit_v2_s": (1, 3, 16, 224, 224),
             "s3d": (1, 3, 16, 224, 224), "inception_v3": (1, 3, 299, 299), "quantized_inception_v3": (1, 3, 299, 299)}
    counts = {}
    for name in tvm.list_models():
        fn = tvm.get_model_builder(name)
        family = fn.__module__.split(".")[2] if fn.__module__.count(".") >= 3 else "classification"
        if only and not re.search(only, name):
            continue
        if per_family and counts.get(family, 0) >= per_family:
            continue
        kwargs = {"weights": None}
        if "weights_backbone" in inspect.signature(fn).parameters:
            kwargs["weights_backbone"] = None  # no download: nothing can be reached from here
        if family == "quantization":
            kwargs["quantize"] = False
        shape = sizes.get(name) or sizes.get(family) or (1, 3, 224, 224)
        torch.manual_seed(0)
        if family == "optical_flow":
            example = {"image1": torch.randn(1, 3, 128, 128), "image2": torch.randn(1, 3, 128, 128)}
        elif family == "detection":
            example = {"images": [torch.randn(3, 224, 224)]}
        else:
            example = {"x": torch.randn(*shape)}
        add_plain(writer, f"tv_{name}", family, lambda n=name, k=kwargs: tvm.get_model(n, **k), example)
        counts[family] = counts.get(family, 0) + os.path.exists(os.path.join(out, f"tv_{name}.pt"))


def _torchrl_imports(src):
    """torchrl without its compiled extension (only its replay buffers use it)."""
    import importlib.machinery
    import types
    fake = types.ModuleType("torchrl._torchrl")
    fake.__spec__ = importlib.machinery.ModuleSpec("torchrl._torchrl", None)
    for name in ("SumSegmentTreeFp32", "SumSegmentTreeFp64", "MinSegmentTreeFp32", "MinSegmentTreeFp64",
                 "safetanh", "safeatanh"):
        setattr(fake, name, object)
    sys.modules["torchrl._torchrl"] = fake
    sys.path.insert(0, src)


def torchrl_cases():
    """Torchrl's networks as its docs and tutorials wrap them: TensorDictModules and actor-critic pipelines."""
    import torch
    from tensordict.nn import TensorDictModule as M, TensorDictSequential as S
    from torchrl.modules import (MLP, ConvNet, NoisyLinear, DuelingCnnDQNet, DdpgCnnActor,
                                 DdpgCnnQNet, DdpgMlpActor, DdpgMlpQNet, LSTMNet)
    from torchrl.modules.models.models import DuelingMlpDQNet
    from torchrl.modules.distributions import NormalParamWrapper
    from torchrl.modules.models.model_based import ObsEncoder, ObsDecoder, RSSMPrior, RSSMPosterior, DreamerActor
    from torchrl.modules.models.utils import SquashDims
    from torchrl.data import BoundedTensorSpec
    obs, pix, act = torch.randn(3, 8), torch.randn(2, 3, 64, 64), torch.randn(3, 2)
    return {
        "mlp": (lambda: M(MLP(in_features=8, out_features=4, num_cells=[32, 32]), ["obs"], ["action"]), {"obs": obs}),
        "mlp_layernorm_dropout": (lambda: M(MLP(in_features=8, out_features=4, num_cells=[16, 16], dropout=0.1,
                                                norm_class=torch.nn.LayerNorm, norm_kwargs={"normalized_shape": 16}),
                                            ["obs"], ["action"]), {"obs": obs}),
        "mlp_nested_keys": (lambda: M(MLP(in_features=8, out_features=4, num_cells=[16]), [("agent", "obs")],
                                      [("agent", "action")]), {("agent", "obs"): obs}),
        "convnet": (lambda: M(ConvNet(num_cells=[8, 8], kernel_sizes=3, strides=1), ["pixels"], ["features"]),
                    {"pixels": torch.randn(2, 3, 16, 16)}),
        "convnet_squash": (lambda: M(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ELU(), SquashDims()),
                                     ["pixels"], ["features"]), {"pixels": torch.randn(2, 3, 16, 16)}),
        "noisy_linear": (lambda: M(NoisyLinear(8, 4), ["obs"], ["out"]), {"obs": obs}),
        "dueling_mlp_dqn": (lambda: M(DuelingMlpDQNet(4, 1), ["obs"], ["q"]), {"obs": obs}),
        "dueling_cnn_dqn": (lambda: M(DuelingCnnDQNet(out_features=4), ["pixels"], ["q"]), {"pixels": pix}),
        "ddpg_cnn_actor": (lambda: M(DdpgCnnActor(action_dim=2), ["pixels"], ["action", "hidden"]), {"pixels": pix}),
        "ddpg_mlp_actor": (lambda: M(DdpgMlpActor(action_dim=2), ["obs"], ["action"]), {"obs": obs}),
        "ddpg_cnn_qnet": (lambda: M(DdpgCnnQNet(), ["pixels", "action"], ["value"]),
                          {"pixels": pix, "action": torch.randn(2, 2)}),
        "ddpg_mlp_qnet": (lambda: M(DdpgMlpQNet(), ["obs", "action"], ["value"]), {"obs": obs, "action": act}),
        "lstm_net": (lambda: M(LSTMNet(4, {"input_size": 5, "hidden_size": 5}, {"out_features": 5}),
                               ["obs"], ["out", "h0_in", "h1_in", "h0_out", "h1_out"]), {"obs": obs}),
        "dreamer_actor": (lambda: M(DreamerActor(out_features=2, depth=2, num_cells=16), ["state", "belief"],
                                    ["loc", "scale"]), {"state": torch.randn(3, 5), "belief": torch.randn(3, 7)}),
        "obs_encoder": (lambda: M(ObsEncoder(depth=4), ["pixels"], ["embedding"]),
                        {"pixels": torch.randn(2, 3, 64, 64)}),
        "obs_decoder": (lambda: M(ObsDecoder(depth=4), ["state", "belief"], ["reco"]),
                        {"state": torch.randn(2, 5), "belief": torch.randn(2, 7)}),
        "rssm_prior": (lambda: M(RSSMPrior(action_spec=BoundedTensorSpec(-1, 1, (2,)), hidden_dim=8,
                                           rnn_hidden_dim=8, state_dim=5),
                                 ["state", "belief", "action"], ["prior_mean", "prior_std", "prior_state", "next_belief"]),
                       {"state": torch.randn(3, 5), "belief": torch.randn(3, 8), "action": act}),
        "rssm_posterior": (lambda: M(RSSMPosterior(hidden_dim=8, state_dim=5), ["belief", "embedding"],
                                     ["post_mean", "post_std", "post_state"]),
                           {"belief": torch.randn(3, 8), "embedding": torch.randn(3, 6)}),
        "mlp_actor_critic": (lambda: S(
            M(MLP(in_features=8, out_features=16, num_cells=[32]), ["obs"], ["hidden"]),
            M(NormalParamWrapper(MLP(in_features=16, out_features=4, num_cells=[16])), ["hidden"], ["loc", "scale"]),
            M(MLP(in_features=16, out_features=1, num_cells=[16]), ["hidden"], ["state_value"])), {"obs": obs}),
        "cnn_actor_critic": (lambda: S(
            M(ConvNet(num_cells=[8], kernel_sizes=3), ["pixels"], ["hidden"]),
            M(MLP(out_features=2, num_cells=[16]), ["hidden"], ["action"]),
            M(MLP(out_features=1, num_cells=[16]), ["hidden", "action"], ["state_action_value"])),
            {"pixels": torch.randn(2, 3, 16, 16)}),
    }


def make_torchrl(src, out, only):
    _torchrl_imports(src)
    writer = Writer(out)
    for name, (build, example) in torchrl_cases().items():
        if not only or re.search(only, name):
            add_tensordict(writer, name, "torchrl", build, example)


def make_tensordict(src, out, only):
    """Every module tensordict's own test/test_fx.py hands to symbolic_trace, with the input it runs."""
    import importlib.util
    import tensordict.prototype.fx as td_fx
    import types
    writer = Writer(out)
    try:
        import pytest  # noqa: F401 - their test file imports it; only its __main__ block uses it
    except ImportError:
        sys.modules["pytest"] = types.ModuleType("pytest")
    spec = importlib.util.spec_from_file_location("td_test_fx", os.path.join(src, "test", "test_fx.py"))
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    seen = []

    class Recorded:
        """What the test's symbolic_trace returns: the real GraphModule, remembering its first input."""

        def __init__(self, module):
            self.gm, self.entry = td_fx.symbolic_trace(module), {"module": module, "input": None}
            seen.append(self.entry)

        def __call__(self, tensordict, *args, **kwargs):
            if self.entry["input"] is None:
                self.entry["input"] = tensordict.clone()
            return self.gm(tensordict, *args, **kwargs)

    tests.symbolic_trace = Recorded
    for test in sorted(n for n in dir(tests) if n.startswith("test_")):
        if only and not re.search(only, test):
            continue
        before = len(seen)
        try:
            getattr(tests, test)()
        except Exception as e:  # noqa: BLE001 - their test failing on this interpreter leaves it out
            writer.left_out(test, "tensordict", f"its test fails here: {_first_line(e)}")
            continue
        for i, entry in enumerate(seen[before:]):
            name = test[len("test_"):] + (f"_{i}" if i else "")
            add_tensordict(writer, name, "tensordict", lambda m=entry["module"]: m, entry["input"])


# --- Judging: runs in the parent -----------------------------------------------------------------

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def first_difference(ref, got):
    """'' when equal, else `graph line N: FX ... / tdfx ...`."""
    if got is None:
        return "missing"
    if ref == got:
        return ""
    for i, (a, b) in enumerate(zip(ref.splitlines(), got.splitlines()), 1):
        if a != b:
            return f"line {i}: FX `{a.strip()}` / tdfx `{b.strip()}`"
    return f"lengths differ ({len(ref.splitlines())} lines in FX, {len(got.splitlines())} in tdfx)"


def judge(cli, source, out, seed, timeout):
    entries = []
    with open(os.path.join(out, "manifest.jsonl")) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    kept = [e for e in entries if "inputs" in e]
    results = os.path.join(out, "tdfx")
    os.makedirs(results, exist_ok=True)
    for name in os.listdir(results):
        os.remove(os.path.join(results, name))
    listing = os.path.join(out, "archives.txt")
    with open(listing, "w") as f:
        for e in kept:
            f.write(" ".join([os.path.join(out, e["name"] + ".pt")] + [f"--input {i}" for i in e["inputs"]]) + "\n")
    lines, counted, unjudged = [], 0, []
    if kept:
        cmd = [cli, "trace", "--out-dir", results, "--from", listing, "--verify", "--seed", str(seed)]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        print(f"# {source}: tdfx-cli traced and verified {len(kept)} archives in {time.monotonic() - start:.0f} s "
              f"(exit {proc.returncode})", flush=True)
        if proc.returncode not in (0, 1):
            print(proc.stderr[-2000:])
            raise SystemExit(2)
    for e in kept:
        name = e["name"]
        base = os.path.join(results, name)
        error = read(base + ".error.txt")
        if error is not None:
            lines.append(f"{source:<12} {name:<36} error: {error.strip().splitlines()[0][:160]}")
            continue
        report = read(base + ".verify.txt") or ""
        verdict = "PASSED" if "PASSED" in report else next(
            (line.strip() for line in report.splitlines() if "FAILED" in line or "not" in line), "no verdict")[:100]
        if "no_reference" in e:
            unjudged.append(verdict == "PASSED")
            lines.append(f"{source:<12} {name:<36} no reference ({e['no_reference'][:90]})  {verdict}")
            continue
        graph = first_difference(read(os.path.join(out, name + ".ref.graph.txt")), read(base + ".graph.txt"))
        code = first_difference(read(os.path.join(out, name + ".ref.code.txt")), read(base + ".code.txt"))
        text = "exact" if not graph and not code else ("graph " + graph if graph else "code " + code)[:200]
        ok = not graph and not code and verdict == "PASSED"
        counted += ok
        lines.append(f"{source:<12} {name:<36} {text}  {verdict}")
    for line in lines:
        print(line)
    left = [e for e in entries if "left_out" in e]
    for e in left:
        print(f"{source:<12} {e['name']:<36} left out: {e['left_out']}")
    compared = [e for e in kept if "no_reference" not in e]
    families = sorted({e["family"] for e in compared})
    exact_families = sorted({e["family"] for e, line in zip(kept, lines) if line.endswith("exact  PASSED")})
    summary = (f"{source}: {counted}/{len(compared)} exact and verified ({len(exact_families)} of {len(families)} "
               f"families whole or in part), {len(left)} left out")
    if unjudged:
        summary += f"; {sum(unjudged)}/{len(unjudged)} the reference refuses traced and verified"
    return counted, len(compared), summary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", help="tdfx-cli (the parent's only need)")
    parser.add_argument("--work", required=True, help="a folder for archives, references and results")
    parser.add_argument("--timm", help="timm v0.6.13's unpacked source")
    parser.add_argument("--torchrl", help="torchrl v0.1.1's unpacked source (needs --tensordict)")
    parser.add_argument("--tensordict", help="tensordict v0.1.2's unpacked source")
    parser.add_argument("--torchvision", action="store_true", help="every torchvision 0.14 model family")
    parser.add_argument("--per-family", type=int, default=2, help="accepted models per family (0: all)")
    parser.add_argument("--only", help="only models whose name matches this regular expression")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-only", action="store_true", help="reuse the archives already in --work")
    parser.add_argument("--make", help=argparse.SUPPRESS)  # the child's mode: build one source
    args = parser.parse_args()

    if args.make:
        signal.signal(signal.SIGALRM, _on_alarm)
        _fx_on_this_python()
        import warnings
        warnings.filterwarnings("ignore")
        sys.path.insert(0, os.path.join(ROOT, "app"))
        if args.tensordict:
            sys.path.insert(0, args.tensordict)
        out = os.path.join(args.work, args.make)
        if args.make == "timm":
            make_timm(args.timm, out, args.per_family, args.only)
        elif args.make == "torchvision":
            make_torchvision(out, args.per_family, args.only)
        elif args.make == "torchrl":
            make_torchrl(args.torchrl, out, args.only)
        elif args.make == "tensordict":
            make_tensordict(args.tensordict, out, args.only)
        return 0

    if not args.cli:
        parser.error("--cli is required")
    if args.torchrl and not args.tensordict:
        parser.error("--torchrl needs --tensordict (torchrl's modules are tensordict's)")
    sources = [s for s, on in (("timm", args.timm), ("torchvision", args.torchvision),
                               ("torchrl", args.torchrl), ("tensordict", args.tensordict)) if on]
    if not sources:
        parser.error("name at least one source: --timm, --torchvision, --torchrl, --tensordict")
    summaries, total, total_kept = [], 0, 0
    for source in sources:
        if not args.judge_only:
            child = [sys.executable, os.path.abspath(__file__), "--make", source, "--work", args.work,
                     "--per-family", str(args.per_family)]
            for flag in ("timm", "torchrl", "tensordict", "only"):
                if getattr(args, flag):
                    child += [f"--{flag}", getattr(args, flag)]
            start = time.monotonic()
            made = subprocess.run(child, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            print(f"# {source}: built the models in {time.monotonic() - start:.0f} s (exit {made.returncode})", flush=True)
            if made.returncode != 0:
                print(made.stderr[-3000:])
                return 2
        counted, kept, summary = judge(args.cli, source, os.path.join(args.work, source), args.seed, 3600)
        total += counted
        total_kept += kept
        summaries.append(summary)
    print()
    for s in summaries:
        print(s)
    return 0 if total == total_kept else 1


if __name__ == "__main__":
    sys.exit(main())
