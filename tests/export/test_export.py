"""Tests of tdfx-export with python3-torch: real TorchScript archives, checked by tdfx-cli."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "app"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
sys.path.insert(0, HERE)
from standins import TDModule, TDSequential  # noqa: E402
import tdfx_export  # noqa: E402
from tdfx_export import ExportError, export  # noqa: E402
from built_programs import locate  # noqa: E402

CLI = locate("TDFX_CLI")  # every test checks its archive with the real tdfx-cli: never skipped


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.LazyLinear(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Decorated(nn.Module):
    """Calls the FX tdfx-export must keep: a functional call and a method with negative dims."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return F.relu(self.fc(x).transpose(-2, -1))


class Masker(nn.Module):
    def forward(self, x, mask):
        return torch.softmax(x * mask, dim=1)


class Unscriptable(nn.Module):
    """A generator expression: torch.jit.script rejects it, torch.jit.trace records the ops."""

    def forward(self, x):
        return sum(t * 2 for t in [x, x + 1])


def read_metadata(path):
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("extra/tensordict.json"))
        return json.loads(z.read(name))


def run_cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


class ExportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        torch.manual_seed(0)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_sequential_with_lazy_layers_round_trips(self):
        seq = TDSequential(TDModule(Net(), [("input", "x")], [("hidden", "y")]),
                           TDModule(Masker(), [("hidden", "y"), ("input", "mask")], [("output", "p")]))
        inputs = {("input", "x"): torch.randn(8, 10), ("input", "mask"): torch.randn(8, 4)}
        meta = export(seq, self.path("seq.pt"), inputs, batch_size=[8])
        self.assertEqual(meta["exported_with"], "torch.jit.script")
        on_disk = read_metadata(self.path("seq.pt"))
        self.assertEqual(on_disk["module"]["kind"], "sequential")
        self.assertEqual(on_disk["module"]["modules"][0]["path"], "0.module")
        self.assertEqual(on_disk["module"]["modules"][1]["in_keys"], [["hidden", "y"], ["input", "mask"]])
        self.assertEqual(on_disk["example_inputs"][0], {"key": ["input", "x"], "shape": [8, 10], "dtype": "float32"})
        self.assertEqual(on_disk["batch_size"], [8])
        loaded = torch.jit.load(self.path("seq.pt"))
        fc1 = getattr(loaded, "0").module.fc1
        self.assertEqual(tuple(fc1.weight.shape), (16, 10))  # the lazy layer was materialised
        result = run_cli("verify", self.path("seq.pt"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("PASSED", result.stdout)
        graph = run_cli("trace", "--graph", self.path("seq.pt")).stdout
        self.assertIn("call_module[target=0.module.fc1]", graph)
        self.assertIn("kwargs = {dim: 1}", graph)

    def test_unscriptable_module_falls_back_to_tracing_and_says_so(self):
        mod = TDModule(Unscriptable(), ["x"], ["y"])
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            meta = export(mod, self.path("traced.pt"), {"x": torch.randn(3, 2)})
        self.assertEqual(meta["exported_with"], "torch.jit.trace")
        self.assertIn("torch.jit.script failed", stderr.getvalue())
        self.assertIn("approximate call forms", stderr.getvalue())
        result = run_cli("verify", self.path("traced.pt"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        result = run_cli("trace", self.path("traced.pt"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("exported with torch.jit.trace", result.stderr)

    def test_instance_decorated_forwards_are_scripted_from_the_class(self):
        # tensordict 0.1.x's TensorDictModule runs make_functional(module, keep_params=True): every
        # module gets an instance attribute `forward` (a types.MethodType wrapper), recorded in
        # __dict__["_decorated_funs"]; torch.jit.script of such a module fails.
        net = Decorated()
        for m in net.modules():
            cls_forward = type(m).forward

            def wrapper(self, *args, _f=cls_forward, **kwargs):
                return _f(self, *args, **kwargs)
            m.forward = types.MethodType(wrapper, m)
            m.__dict__.setdefault("_decorated_funs", []).append("forward")
        with self.assertRaises(Exception):
            torch.jit.script(net)  # what a naive export would hit
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            meta = export(TDModule(net, ["x"], ["y"]), self.path("decorated.pt"), {"x": torch.randn(2, 4)})
        self.assertEqual(meta["exported_with"], "torch.jit.script")
        self.assertEqual(stderr.getvalue(), "")
        self.assertIn("forward", net.__dict__)  # the user's object is left as it was
        graph = run_cli("trace", "--graph", self.path("decorated.pt")).stdout
        self.assertIn("call_function[target=torch.nn.functional.relu](args = (%transpose,), "
                      "kwargs = {inplace: False})", graph)
        self.assertIn("call_method[target=transpose](args = (%fc, -2, -1)", graph)

    def test_unscriptable_without_inputs_is_a_clear_error(self):
        with self.assertRaisesRegex(ExportError, "tracing needs example_inputs"):
            export(TDModule(Unscriptable(), ["x"], ["y"]), self.path("x.pt"))
        self.assertFalse(os.path.exists(self.path("x.pt")))

    def test_lazy_without_inputs_is_a_clear_error(self):
        with self.assertRaisesRegex(ExportError, "lazy layers"):
            export(TDModule(Net(), ["x"], ["y"]), self.path("x.pt"))

    def test_plain_module_uses_forward_parameter_names(self):
        meta = export(Masker(), self.path("plain.pt"), {"x": torch.randn(2, 3), "mask": torch.randn(2, 3)})
        self.assertEqual(meta["module"]["in_keys"], ["x", "mask"])
        self.assertEqual(meta["module"]["out_keys"], ["output"])
        self.assertEqual(run_cli("verify", self.path("plain.pt")).returncode, 0)

    def test_existing_file_survives_a_failed_export(self):
        target = self.path("keep.pt")
        with open(target, "wb") as f:
            f.write(b"precious")
        with self.assertRaises(ExportError):
            export(TDModule(Unscriptable(), ["x"], ["y"]), target)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"precious")
        self.assertEqual([n for n in os.listdir(self.dir.name) if n != "keep.pt"], [])

    def test_command_line(self):
        factory = self.path("factory.py")
        with open(factory, "w") as f:
            f.write("import torch.nn as nn\n"
                    "def make():\n"
                    "    return nn.Sequential(nn.Linear(8, 4), nn.ReLU())\n")
        script = os.path.join(ROOT, "app", "tdfx-export")
        ok = subprocess.run([sys.executable, script, f"{factory}:make", "-o", self.path("cli.pt"),
                             "--input", "input=2x8", "--batch-size", "2"], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("wrote", ok.stdout)
        self.assertEqual(read_metadata(self.path("cli.pt"))["module"]["in_keys"], ["input"])
        bad = subprocess.run([sys.executable, script, f"{factory}:nope", "-o", self.path("bad.pt")],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("has no attribute 'nope'", bad.stderr)
        bad_input = subprocess.run([sys.executable, script, f"{factory}:make", "-o", self.path("bad.pt"),
                                    "--input", "input=2xq"], capture_output=True, text=True)
        self.assertEqual(bad_input.returncode, 1)
        self.assertIn("shape must be dimensions", bad_input.stderr)
        self.assertEqual(run_cli("verify", self.path("cli.pt")).returncode, 0)

    def test_keys_must_be_strings_or_tuples(self):
        with self.assertRaisesRegex(ExportError, "neither a string nor a tuple"):
            export(TDModule(Masker(), [1, "m"], ["y"]), self.path("k.pt"))


if __name__ == "__main__":
    unittest.main()
