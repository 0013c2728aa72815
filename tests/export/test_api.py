"""Tests of the tdfx Python API (app/tdfx.py) with python3-torch and the real tdfx-cli and tdfx.

TDFX_CLI and TDFX_APP name the built programs, TDFX_FIXTURES the fixtures (run by hand, they are
taken from build/: built_programs.py). Modules are the stand-in tensordict classes the other tests
use, plain torch modules and a torchvision model.
"""
import importlib.util
import inspect
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock
import xml.etree.ElementTree as ET

import torch
import torch.fx
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "app"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
sys.path.insert(0, HERE)
from standins import TDModule, TDSequential  # noqa: E402
import tdfx  # noqa: E402
import tdfx_export  # noqa: E402
from built_programs import locate  # noqa: E402

CLI = locate("TDFX_CLI")  # set in os.environ too, as are these, for tdfx.py and the tests below
locate("TDFX_APP")
locate("TDFX_FIXTURES")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Masker(nn.Module):
    def forward(self, x, mask):
        return torch.softmax(x * mask, dim=1)


class Unscriptable(nn.Module):
    def forward(self, x):
        return x.numpy()  # TorchScript has no Tensor.numpy


def chain_of(directory, length):
    """A module whose forward is a flat chain of `length` adds (no module scope to fold), from a
    source file written into `directory`: torch.jit.script compiles the forward's source."""
    body = "".join(f"        x = x + {i}\n" for i in range(length))
    path = os.path.join(directory, f"chain_{length}.py")
    with open(path, "w") as f:
        f.write(f"import torch\n\n\nclass Chain(torch.nn.Module):\n    def forward(self, x):\n{body}        return x\n")
    spec = importlib.util.spec_from_file_location(f"chain_{length}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Chain()


def sequential():
    torch.manual_seed(0)
    return TDSequential(TDModule(Net(), [("input", "x")], [("hidden", "y")]),
                        TDModule(Masker(), [("hidden", "y"), ("input", "mask")], [("output", "p")]))


INPUTS = {("input", "x"): torch.randn(2, 8), ("input", "mask"): torch.randn(2, 4)}


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, check=True).stdout.decode("utf-8")


class ApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.module = sequential()
        cls.path = os.path.join(cls.tmp.name, "seq.pt")
        tdfx_export.export(cls.module, cls.path, INPUTS, [2])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_trace_is_the_cli_s_bytes(self):
        expected = cli("trace", self.path)
        self.assertEqual(tdfx.trace(self.path).text, expected)
        self.assertEqual(tdfx.trace(self.module, INPUTS).text, expected)  # saved to a private file first
        t = tdfx.trace(self.path)
        self.assertTrue(t.graph.startswith("graph():\n"))
        self.assertTrue(t.code.lstrip().startswith("def forward(self, tensordict):"))
        self.assertEqual(t.graph + "\n" + t.code, t.text)
        self.assertTrue(t.code.startswith("\n\n\ndef forward"))  # gm.code's leading newlines kept

    def test_a_plain_module_traces_to_torch_fx_s_own_graph_and_code(self):
        # Saved as plain TorchScript, not wrapped in a TensorDictModule: `forward(self, x)`, byte for
        # byte what torch.fx.symbolic_trace gives, torchvision's wrapped stochastic_depth included.
        import torchvision
        torch.manual_seed(0)
        models = [Net(), Masker(), torchvision.models.resnet18(num_classes=10), torchvision.models.efficientnet_b0(),
                  torchvision.models.squeezenet1_1()]
        for model in models:
            with self.subTest(type(model).__name__):
                model.eval()
                fx = torch.fx.symbolic_trace(model)
                t = tdfx.trace(model)
                self.assertEqual(t.code, fx.code)
                self.assertEqual(t.graph, str(fx.graph))
        self.assertIn('torch.fx._symbolic_trace.wrap("torchvision_ops_stochastic_depth_stochastic_depth")',
                      tdfx.trace(models[3]).code)

    def test_draw_renders_valid_svg_inline_and_saves_every_format(self):
        d = tdfx.draw(self.module, example_inputs=INPUTS)
        root = ET.fromstring(d._repr_svg_())
        self.assertTrue(root.tag.endswith("svg"))
        self.assertIn('id="softmax"', d.svg)  # the IR node names are the SVG ids
        self.assertIsNone(d._repr_png_())     # PNG only when asked
        self.assertEqual(d.graph, tdfx.trace(self.path).graph)
        self.assertIn("torch.softmax", d.code)
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(ET.parse(d.save(os.path.join(out, "m.svg"))).getroot().tag, root.tag)
            with open(d.save(os.path.join(out, "m.png")), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with open(d.save(os.path.join(out, "m.pdf")), "rb") as f:
                self.assertEqual(f.read(5), b"%PDF-")
            with open(d.save(os.path.join(out, "m.dot")), encoding="utf-8") as f:
                self.assertIn("digraph", f.read())
        png = tdfx.draw(self.path, png=True)._repr_png_()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        fx = tdfx.draw(self.path, style="fx", shapes=True)
        ET.fromstring(fx.svg)
        self.assertIn("op_code", fx.svg)  # FxGraphDrawer's records
        with self.assertRaisesRegex(tdfx.TdfxError, "style must be 'tdfx' or 'fx'"):
            tdfx.draw(self.path, style="dot")

    def test_shape_arithmetic_is_one_shape_node_per_use_unless_asked_for(self):
        # Issue 36, defect 12: sizes computed from x.shape fold into one "shape" node beside their user.
        class Patches(nn.Module):
            def forward(self, x):
                n, c, h, w = x.shape
                return x.reshape(n, c, (h // 2) * (w // 2) * 4)

        m = Patches()
        folded = tdfx.draw(m)
        self.assertIn('id="shape:reshape"', folded.svg)
        self.assertIn("x.shape[2] // 2 * (x.shape[3] // 2) * 4", folded.svg)
        self.assertNotIn('id="floordiv"', folded.svg)
        drawn = tdfx.draw(m, shape_arithmetic=True)
        self.assertNotIn('id="shape:reshape"', drawn.svg)
        self.assertIn('id="floordiv"', drawn.svg)
        self.assertEqual(folded.code, drawn.code)  # the code keeps every line

    def test_a_drawing_over_max_nodes_is_refused_before_any_layout(self):
        # Issue 35, finding 15: a flat 20,000-node chain took 30 s to draw and inlined a 15 MB SVG.
        # Over max_nodes the drawing is refused at once, naming the depth that fits, if any.
        chain = chain_of(self.tmp.name, 150)
        with self.assertRaises(tdfx.TdfxError) as caught:
            tdfx.draw(chain, max_nodes=100)
        self.assertRegex(str(caught.exception),
                         r"^the drawing has 15[0-9] nodes, over max_nodes=100; its nodes are in no module scope "
                         r"that depth= could fold\. max_nodes=None draws it all: Graphviz takes minutes at that "
                         r"size, and Drawing\.save\('graph\.png'\) keeps a PNG of it$")
        self.assertGreater(tdfx.draw(chain, max_nodes=None).svg.count('class="node"'), 150)
        blocks = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)) for _ in range(40)])
        with self.assertRaises(tdfx.TdfxError) as caught:
            tdfx.draw(blocks, depth=2, max_nodes=100)
        self.assertRegex(str(caught.exception), r"^the drawing has 12[0-9] nodes, over max_nodes=100; depth=0 draws [0-9]+\. ")
        self.assertLessEqual(tdfx.draw(blocks, depth=0, max_nodes=100).svg.count('class="node"'), 100)
        with self.assertRaisesRegex(tdfx.TdfxError, r"^max_nodes: expected an int >= 1 or None, got 0$"):
            tdfx.draw(blocks, max_nodes=0)

    def test_save_never_writes_through_a_link_and_keeps_the_mode(self):
        # Issue 35, finding 2: save opened `x.svg.tmp` with open(..., "w"): a link planted at that
        # name had the SVG written through it (its target overwritten), then was renamed to x.svg,
        # and a 0600 x.svg became 0644.
        d = tdfx.draw(self.module, example_inputs=INPUTS)
        with tempfile.TemporaryDirectory() as out:
            victim = os.path.join(out, "victim.txt")
            with open(victim, "w") as f:
                f.write("precious")
            target = os.path.join(out, "x.svg")
            os.symlink(victim, target + ".tmp")
            with open(target, "w") as f:
                f.write("old")
            os.chmod(target, 0o600)
            d.save(target)
            with open(victim) as f:
                self.assertEqual(f.read(), "precious")
            self.assertTrue(os.path.islink(target + ".tmp"))  # left alone, not renamed
            self.assertFalse(os.path.islink(target))
            self.assertEqual(ET.parse(target).getroot().tag, "{http://www.w3.org/2000/svg}svg")
            self.assertEqual(os.stat(target).st_mode & 0o777, 0o600)
            # A new file follows the umask; no temporary file is left.
            fresh = os.path.join(out, "fresh.svg")
            old = os.umask(0o027)
            try:
                d.save(fresh)
            finally:
                os.umask(old)
            self.assertEqual(os.stat(fresh).st_mode & 0o777, 0o640)
            self.assertEqual(sorted(os.listdir(out)), ["fresh.svg", "victim.txt", "x.svg", "x.svg.tmp"])

    def test_a_wrong_tdfx_cli_is_not_installed_error(self):
        # Issue 35, finding 10: TDFX_CLI=/nonexistent raised FileNotFoundError, a directory
        # PermissionError; the docs promise NotInstalledError.
        self._assert_wrong_program("TDFX_CLI", "tdfx-cli", lambda: tdfx.trace(self.path),
                                   ["/nonexistent/tdfx-cli", self.tmp.name, self.path])
        # Issue 37: noticed before the module is saved. An unscriptable module would raise
        # ScriptError from the save; every call says tdfx-cli is missing instead.
        unscriptable = TDModule(Unscriptable(), ["x"], ["y"])
        for call in (tdfx.trace, tdfx.draw, tdfx.verify, lambda m: tdfx.diff(m, self.path)):
            self._assert_wrong_program("TDFX_CLI", "tdfx-cli", lambda: call(unscriptable), ["/nonexistent/tdfx-cli"])
        # The same for $TDFX_APP, which show() starts (checked before the module is saved).
        self._assert_wrong_program("TDFX_APP", "tdfx", lambda: tdfx.show(self.path), ["/nonexistent/tdfx", self.tmp.name])

    def _assert_wrong_program(self, variable, program, call, values):
        saved = os.environ.get(variable)
        try:
            for value in values:
                what = "no such file" if not os.path.exists(value) else "not an executable file"
                os.environ[variable] = value
                with self.assertRaises(tdfx.NotInstalledError) as caught:
                    call()
                self.assertEqual(str(caught.exception),
                                 f"${variable} is {value}: {what}; point it at {program}, or unset it to use the "
                                 f"{program} package's")
        finally:
            os.environ.pop(variable, None)
            if saved is not None:
                os.environ[variable] = saved

    def test_inputs_that_are_not_tensors_or_shapes_are_tdfx_errors(self):
        # Issue 35, finding 10: verify(inputs={"x": 5}) raised TypeError from list(5).
        cases = [({"x": 5}, "inputs['x']: expected a tensor, a shape (a tuple of ints >= 0) or (shape, dtype), got int 5"),
                 ({"x": (2, -1)}, "inputs['x']: expected a tensor, a shape (a tuple of ints >= 0) or (shape, dtype), got tuple (2, -1)"),
                 ({"x": "2x3"}, "inputs['x']: expected a tensor, a shape (a tuple of ints >= 0) or (shape, dtype), got str '2x3'"),
                 ([1, 2], "inputs: expected a tensor, a tuple of tensors or a dict {key: tensor or shape}, got list")]
        for inputs, message in cases:
            with self.assertRaises(tdfx.TdfxError) as caught:
                tdfx.verify(self.path, inputs=inputs)
            self.assertEqual(str(caught.exception), message)

    def test_a_string_constant_that_is_not_utf8_is_escaped(self):
        # Issue 35, finding 10: a non-UTF-8 string constant raised UnicodeDecodeError from trace and draw.
        path = os.path.join(os.environ["TDFX_FIXTURES"], "non_utf8_constant.pt")
        self.assertIn("torch._assert(gt, 'MA\\xffER')", tdfx.trace(path).code)
        svg = tdfx.draw(path).svg
        self.assertEqual(ET.fromstring(svg).tag, "{http://www.w3.org/2000/svg}svg")

    def test_paths_starting_with_a_dash_are_files_not_options(self):
        # Issue 35, finding 9: tdfx.trace("--help") returned the CLI's help as a Trace, verify said
        # "tdfx-cli failed without a message", diff raised JSONDecodeError.
        cwd = os.getcwd()
        try:
            os.chdir(self.tmp.name)
            for name in ("--help", "-o.pt"):
                shutil.copyfile(self.path, name)
                t = tdfx.trace(name)
                self.assertEqual(t.text, tdfx.trace(self.path).text)
                self.assertTrue(tdfx.verify(name).passed)
                self.assertTrue(tdfx.diff(name, self.path).identical)
                d = tdfx.draw(name)
                self.assertEqual(d.save("-picture.png"), "-picture.png")
                with open("-picture.png", "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with self.assertRaisesRegex(tdfx.TdfxError, r"^--nothing: no such file$"):
                tdfx.trace("--nothing")
        finally:
            os.chdir(cwd)

    def test_example_inputs_may_be_the_modules_one_tensor_or_a_tuple(self):
        """Issue 37: example_inputs=tensor raised ScriptError "'Tensor' object has no attribute 'items'"."""
        class Lazy(nn.Module):  # needs its example inputs to be materialised and saved
            def __init__(self):
                super().__init__()
                self.fc = nn.LazyLinear(4)

            def forward(self, x):
                return self.fc(x).relu()

        m = Lazy()
        d = tdfx.draw(m, example_inputs=torch.randn(2, 3))
        ET.fromstring(d.svg)
        self.assertIn("fc", d.code)
        self.assertEqual(m.fc.in_features, 3)
        r = tdfx.verify(Lazy(), example_inputs=(torch.randn(2, 5),))  # a tuple: the inputs in order
        self.assertTrue(r.passed)
        self.assertEqual(r.rows[0]["shape"], [2, 4])
        str(r)  # the text table
        self.assertIn("PASSED", str(r).splitlines()[0])
        with self.assertRaisesRegex(tdfx.TdfxError, r"^example_inputs: 2 tensor\(s\) given, but Lazy takes 1 "
                                                    r"input\(s\) \(x\): give example_inputs=\{key: tensor\}$"):
            tdfx.draw(Lazy(), example_inputs=(torch.randn(2, 3), torch.randn(2, 3)))

    def test_a_module_a_tensordictmodule_wraps_is_read_through_its_class(self):
        """Issue 37: tensordict's TensorDictModule replaces forward on the instance it wraps (and its
        submodules) by a functional forward(params=None); tdfx.draw(net) then found no in keys."""
        import types
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        for m in net.modules():  # what TensorDictModule(net, ...) does to it
            m.forward = types.MethodType(lambda self, params=None: None, m)
        replaced = net.__dict__["forward"]
        fx = torch.fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU())).code
        self.assertEqual(tdfx.trace(net).code, fx)
        self.assertIn("def forward(self, tensordict):", tdfx.draw(net).code)
        r = tdfx.verify(net, torch.randn(2, 3))
        self.assertTrue(r.passed)
        self.assertEqual(r.rows[0]["shape"], [2, 4])
        self.assertIs(net.__dict__["forward"], replaced, "the instance's forward is put back")

    def test_probabilistic_modules_are_refused_in_one_line_saying_what_is_supported(self):
        class ProbabilisticTensorDictModule(nn.Module):  # tensordict's class, by its name and package
            def __init__(self):
                super().__init__()
                self.in_keys, self.out_keys = ["loc", "scale"], ["action"]

        class ProbabilisticUNet(nn.Module):  # a user's own: a module like any other
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x)

        ProbabilisticTensorDictModule.__module__ = "tensordict.nn.probabilistic"
        self.assertIn("def forward(self, x):", tdfx.trace(ProbabilisticUNet()).code)

        for call in (tdfx.trace, tdfx.draw, tdfx.verify):
            with self.subTest(call=call.__name__):
                with self.assertRaisesRegex(tdfx.ScriptError, r"^ProbabilisticTensorDictModule is not supported: it "
                                            r"samples from a torch.distributions object.*module\[0\]\) instead$"):
                    call(ProbabilisticTensorDictModule())

    def test_a_trace_shows_its_code_highlighted_in_jupyter(self):
        t = tdfx.trace(self.path)
        page = t._repr_html_()
        ET.fromstring("<div>" + page + "</div>")  # well-formed
        self.assertIn(">def</span>", page)  # highlighted as Python
        self.assertIn("<details><summary>FX graph</summary><pre>graph():", page)

    def test_show_without_a_display_says_so_in_one_line(self):
        saved = {k: os.environ.pop(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM") if k in os.environ}
        try:
            before = dict(tdfx._windows)
            with self.assertRaisesRegex(tdfx.TdfxError, r"^show\(\) needs a display: neither DISPLAY nor "
                                                        r"WAYLAND_DISPLAY is set .*xvfb-run$"):
                tdfx.show(self.path)
            self.assertEqual(tdfx._windows, before, "no window was started")
        finally:
            os.environ.update(saved)

    def test_a_modules_file_is_one_and_goes_when_the_module_is_collected(self):
        import gc
        m = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        tdfx.draw(m)
        tdfx.draw(m, depth=0)
        tdfx.verify(m, torch.randn(2, 3))
        files = [f for f in os.listdir(tdfx._private_dir) if f.startswith(f"Sequential-{id(m):x}")]
        self.assertEqual(files, [f"Sequential-{id(m):x}.pt"], "one file per module, written again by each call")
        path = os.path.join(tdfx._private_dir, files[0])
        del m
        gc.collect()
        self.assertFalse(os.path.exists(path), "removed with its module, not when Python exits")
        # What a call returns keeps its module, so its file, for as long as it may read it again.
        drawing = tdfx.draw(nn.Sequential(nn.Linear(3, 4)), png=True)
        changes = tdfx.diff(nn.Linear(3, 4), nn.Linear(3, 4))
        gc.collect()
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(drawing.save(os.path.join(tmp, "later.pdf")), os.path.join(tmp, "later.pdf"))
        self.assertTrue(drawing._repr_png_().startswith(b"\x89PNG"))
        self.assertIn("weight", str(changes))

    def test_verify_passes_and_renders_a_table(self):
        r = tdfx.verify(self.module, example_inputs=INPUTS)
        self.assertTrue(r.passed)
        self.assertIsNone(r.first_divergence)
        self.assertEqual([row["key"] for row in r.rows], [["hidden", "y"], ["output", "p"]])
        self.assertTrue(all(row["bitwise_equal"] for row in r.rows))
        table = r._repr_html_()
        self.assertIn("<b>PASSED</b>", table)
        self.assertIn("<td>output.p</td>", table)
        ET.fromstring("<div>" + table + "</div>")  # well-formed
        # Inputs given as a shape and as a tensor (its shape and dtype are used).
        r2 = tdfx.verify(self.path, inputs={("input", "x"): (2, 8), "input.mask": torch.zeros(2, 4)}, seed=3)
        self.assertTrue(r2.passed)
        self.assertEqual(r2.rows[0]["shape"], [2, 4])
        self.assertEqual(r2.report["inputs"][0]["key"], ["input", "x"])
        # The CLI's own refusal, as one line: the file's batch size is 2.
        with self.assertRaisesRegex(tdfx.TdfxError, "does not start with the batch size"):
            tdfx.verify(self.path, inputs={("input", "x"): (5, 8), ("input", "mask"): (5, 4)})

    def test_verify_returns_a_failed_result_for_a_mismatch(self):
        r = tdfx.verify(unfaithful_fixture())
        self.assertFalse(r.passed, r.report)
        self.assertFalse(r)
        self.assertEqual(r.first_divergence["node"], "count", r.report)
        self.assertFalse(r.rows[0]["bitwise_equal"])
        self.assertGreater(r.rows[0]["max_abs_diff"], 0)
        table = r._repr_html_()
        self.assertIn("<b>FAILED: first diverging node count", table)
        ET.fromstring("<div>" + table + "</div>")

    def test_verify_compares_every_output_of_a_plain_module(self):
        # Counted from the TorchScript signature: no example inputs are needed to know there are three.
        class Three(nn.Module):
            def forward(self, x):
                return x * 2, x.relu(), x - 1

        r = tdfx.verify(Three(), inputs={"x": (4, 6)})
        self.assertTrue(r.passed, r.report)
        self.assertEqual([row["key"] for row in r.rows], [["output_0"], ["output_1"], ["output_2"]])

    def test_draw_takes_the_inputs_verify_takes(self):
        # Issue 37: draw(..., inputs=...) was a TypeError while verify took it. The run labels the edges.
        class Widen(nn.Module):
            def forward(self, x):
                return torch.cat([x, x], dim=1).relu()

        svg = tdfx.draw(Widen(), inputs={"x": (3, 5)}).svg
        self.assertIn("float32[3, 10]", svg)
        self.assertNotIn("float32[", tdfx.draw(Widen()).svg)  # no inputs: no run, no labels

    def test_verify_runs_on_the_values_of_the_tensors_given(self):
        class Positive(nn.Module):  # its output's shape counts the values over 0.5 it was given
            def forward(self, x):
                return x[x > 0.5]

        m = Positive()
        for given, shape in ((torch.ones(8), [8]), (torch.tensor([0.0, 1.0, 2.0]), [2]), ({"x": torch.ones(5)}, [5]),
                             ((torch.ones(4),), [4])):
            r = tdfx.verify(m, given)
            self.assertTrue(r.passed, r.report)
            self.assertEqual(r.rows[0]["shape"], shape, given)
        drawn = tdfx.verify(m, {"x": (8,)}).rows[0]["shape"]  # a shape: random values, from the seed
        self.assertNotEqual(drawn, [8])
        self.assertEqual(tdfx.verify(m, {"x": ((8,), torch.float64)}).report["inputs"][0]["dtype"], "float64")
        self.assertIn("float32[2]", tdfx.draw(m, inputs=torch.tensor([0.0, 1.0, 2.0])).svg)  # draw runs on them too
        with self.assertRaises(tdfx.TdfxError) as e:
            tdfx.verify(m, {"y": torch.ones(2)})
        self.assertEqual(str(e.exception), "input values: 'y' is not an input of the model (its inputs: 'x')")
        before = set(os.listdir(tdfx._private_dir))
        tdfx.verify(m, torch.ones(3))
        self.assertEqual(set(os.listdir(tdfx._private_dir)) - before, set())  # its values file is gone once read
        # A drawing exports again from its tensors (save as PNG): their file goes with the drawing,
        # not before, and a failed call leaves none (issue 58, 8: inputs-N.pt files piled up).
        import gc
        drawings = [tdfx.draw(m, inputs=torch.ones(3)) for _ in range(3)]
        self.assertEqual(len([f for f in set(os.listdir(tdfx._private_dir)) - before if f.startswith("inputs-")]), 3)
        drawings[0].save(os.path.join(self.tmp.name, "positive.png"))
        del drawings
        gc.collect()
        with self.assertRaises(tdfx.TdfxError):
            tdfx.draw(m, inputs=torch.ones(3), max_nodes=0)  # refused after the tensors were saved
        with self.assertRaises(tdfx.TdfxError):
            tdfx.verify("/nonexistent/model.pt", {"x": torch.ones(3)})
        self.assertEqual(set(os.listdir(tdfx._private_dir)) - before, set())
        with self.assertRaises(tdfx.TdfxError) as e:
            tdfx.verify(m, (torch.ones(2), torch.ones(2)))
        self.assertEqual(str(e.exception), "inputs: 2 tensor(s) given, but Positive takes 1 input(s) (x): "
                                           "give inputs={key: tensor}")
        # The CLI's flag, with a file that is not a dict of tensors and one that is not there.
        path = os.path.join(self.tmp.name, "positive.pt")
        torch.jit.script(m).save(path)
        masker = os.path.join(self.tmp.name, "masker.pt")
        torch.jit.script(Masker()).save(masker)
        values = os.path.join(self.tmp.name, "values.pt")
        torch.save({"x": torch.ones(2, 3), "mask": torch.ones(2, 3)}, values)  # two keys: a dict LibTorch reads
        run = subprocess.run([CLI, "verify", masker, "--input-values", values, "--json"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout)["keys"][0]["shape"], [2, 3])
        torch.save({"x": torch.ones(3)}, values)  # one: Python's SETITEM, which LibTorch 1.13 cannot read
        run = subprocess.run([CLI, "verify", path, "--input-values", values], capture_output=True, text=True)
        self.assertEqual((run.returncode, run.stderr), (1, "tdfx-cli: error: input values: LibTorch cannot read a "
                                                           "dict or list of one item as torch.save writes it; save a "
                                                           "tuple of pairs instead: torch.save(((\"input.x\", x),), "
                                                           "FILE)\n"))
        torch.save((("x", torch.ones(3)),), values)
        self.assertEqual(subprocess.run([CLI, "verify", path, "--input-values", values], capture_output=True).returncode, 0)
        torch.save((torch.ones(3),), values)
        run = subprocess.run([CLI, "verify", path, "--input-values", values], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertTrue(run.stderr.startswith("tdfx-cli: error: input values: an item is Tensor, not a (key, tensor) pair"),
                        run.stderr)
        run = subprocess.run([CLI, "verify", path, "--input-values", values + ".missing"], capture_output=True, text=True)
        self.assertEqual((run.returncode, run.stderr),
                         (1, f"tdfx-cli: error: --input-values {values}.missing: no such file\n"))

    def test_verify_a_torchvision_model(self):
        import torchvision
        torch.manual_seed(0)
        model = torchvision.models.resnet18(num_classes=10).eval()
        r = tdfx.verify(model, inputs={"x": (1, 3, 64, 64)})
        self.assertTrue(r.passed, r.report)
        self.assertEqual(r.rows[0]["shape"], [1, 10])
        self.assertIn("layer1_0_conv1", tdfx.trace(model).code)

    def test_one_inputs_argument_on_every_call(self):
        """Issue 58, 5: trace and show took no inputs, verify asked for example_inputs to trace a
        module that will not script, and a TensorDict was refused (in a three-line message)."""
        class Unscripted(nn.Module):  # a set: TorchScript has none
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x) * len(set([1, 2]))

        for call in (tdfx.draw, tdfx.trace, tdfx.verify, tdfx.show, tdfx.diff):
            self.assertIn("inputs", inspect.signature(call).parameters, call.__name__)
        m, x = Unscripted(), torch.randn(4, 3)
        with self.assertRaisesRegex(tdfx.ScriptError, "tracing needs"):
            tdfx.verify(m)  # nothing to trace it from
        r = tdfx.verify(m, x)  # traced from the tensor it is verified on
        self.assertTrue(r.passed, r.report)
        self.assertEqual(r.rows[0]["shape"], [4, 2])
        self.assertIn("fc", tdfx.trace(m, x).code)
        self.assertIn("<svg", tdfx.draw(m, inputs={"x": (4, 3)}).svg)  # a shape: drawn at random
        self.assertTrue(tdfx.diff(m, m, inputs=x).equal)
        with self.assertRaisesRegex(tdfx.TdfxError, r"^inputs\['x'\]: expected a tensor, a shape"):
            tdfx.trace(m, {"x": "4x3"})
        with self.assertWarnsRegex(DeprecationWarning, r"tdfx\.verify\(example_inputs=\.\.\.\) is deprecated"):
            tdfx.verify(self.module, example_inputs=INPUTS)
        # A TensorDict is what a TensorDict module takes: its leaves are the inputs.
        try:
            from tensordict import TensorDict
            given = TensorDict({"input": {"x": INPUTS[("input", "x")], "mask": INPUTS[("input", "mask")]}}, batch_size=[2])
        except ImportError:  # not packaged for Debian: the two methods tdfx reads, as TensorDict has them
            class Leaves:
                batch_size = [2]

                def keys(self, include_nested=False, leaves_only=False):
                    assert include_nested and leaves_only
                    return list(INPUTS)

                def get(self, key):
                    return INPUTS[key]
            given = Leaves()
        r = tdfx.verify(self.module, given)
        self.assertTrue(r.passed, r.report)
        self.assertEqual(sorted(tuple(i["key"]) for i in r.report["inputs"]), [("input", "mask"), ("input", "x")])

    def test_diff_has_the_json_fields_and_the_cli_s_text(self):
        other = os.path.join(self.tmp.name, "other.pt")
        changed = sequential()
        with torch.no_grad():
            changed.module[0].module.fc2.bias.add_(1.0)
        tdfx_export.export(changed, other, INPUTS, [2])
        d = tdfx.diff(self.path, other)
        expected = json.loads(subprocess.run([CLI, "diff", self.path, other, "--json"], capture_output=True).stdout)
        self.assertEqual(d.report, expected)
        for name in expected:
            self.assertEqual(getattr(d, name), expected[name])
        text = subprocess.run([CLI, "diff", self.path, other], capture_output=True).stdout.decode("utf-8")
        self.assertEqual(expected["text"], text)  # the CLI's text comes with the report
        with mock.patch.object(tdfx, "_cli", side_effect=AssertionError("str(diff) ran tdfx-cli again")):
            self.assertEqual(str(d), text)
        self.assertIn("fc2", text)
        # Issue 37: the docstring's `.equal` exists, the repr says the verdict, Jupyter gets a table
        # with one row per difference the CLI's text lists.
        self.assertFalse(d.equal)
        self.assertTrue(tdfx.diff(self.path, self.path).equal)
        self.assertRegex(repr(d), r"^<tdfx\.Diff [^ ]+ vs other\.pt: 1 difference\(s\)>$")
        self.assertEqual(d.rows(), [("~ parameter", "0.module.fc2.bias", "differs, max |delta| 1")])
        page = d._repr_html_()
        self.assertIn("<table>", page)
        self.assertIn("<td>0.module.fc2.bias</td>", page)
        self.assertIn("identical", tdfx.diff(self.path, self.path)._repr_html_())

    def test_the_version_is_the_project_s(self):
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt"), encoding="utf-8") as f:
            project = re.search(r"project\(tdfx VERSION ([0-9.]+)", f.read()).group(1)
        self.assertEqual(tdfx.__version__, project)

    def test_errors_are_one_line_python_exceptions(self):
        with self.assertRaisesRegex(tdfx.TdfxError, r"^/no/such\.pt: no such file$"):
            tdfx.trace("/no/such.pt")
        with self.assertRaises(tdfx.ScriptError) as caught:
            tdfx.trace(TDModule(Unscriptable(), ["x"], ["y"]))
        self.assertNotIn("\n", str(caught.exception))
        broken = os.path.join(self.tmp.name, "broken.pt")
        with open(broken, "wb") as f:
            f.write(b"not a zip archive")
        with self.assertRaises(tdfx.TdfxError) as caught:
            tdfx.trace(broken)
        self.assertIn("broken.pt", str(caught.exception))
        self.assertNotIn("\n", str(caught.exception))
        saved = dict(os.environ)
        try:
            os.environ.pop("TDFX_CLI", None)
            os.environ["PATH"] = self.tmp.name
            with self.assertRaisesRegex(tdfx.NotInstalledError, "tdfx-cli is not installed"):
                tdfx.trace(self.path)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def test_a_script_error_names_its_cause_and_line_every_time(self):
        # Issue 35, finding 14: x.numpy() in forward. The first call said nothing after "tracing
        # needs example_inputs:" (TorchScript's message starts with a newline), later calls said
        # "Can't redefine method: forward" (the failed script stayed in TorchScript's type store).
        line = inspect.getsourcelines(Unscriptable.forward)[1] + 1
        where = f"({inspect.getsourcefile(Unscriptable)}:{line})"
        with self.assertRaises(RuntimeError):
            torch.jit.script(Unscriptable())  # the user's own attempt first, as in a notebook
        for _ in range(3):
            with self.assertRaises(tdfx.ScriptError) as caught:
                tdfx.trace(Unscriptable())
            self.assertEqual(str(caught.exception),
                             "torch.jit.script failed and tracing needs inputs: 'Tensor (inferred)' "
                             f"object has no attribute or method 'numpy' {where}")

    def test_the_worker_s_limits_are_their_own_exception(self):
        fixtures = os.environ["TDFX_FIXTURES"]
        try:
            tdfx.set_limits(timeout=2)
            with self.assertRaisesRegex(tdfx.WorkerLimitError, r"did not finish within 2 s \(the time limit; --timeout\)"):
                tdfx.verify(os.path.join(fixtures, "endless.pt"))
            tdfx.set_limits(memory_limit=0.5)
            with self.assertRaises(tdfx.WorkerLimitError) as caught:
                tdfx.verify(os.path.join(fixtures, "allocation_bomb.pt"))
            message = str(caught.exception)
            self.assertNotIn("\n", message)
            self.assertIn("can't allocate memory", message)
            self.assertIn("(the model worker may use at most 0.5 GiB of memory; --memory-limit)", message)
            self.assertNotIn("Traceback", message)
        finally:
            tdfx.set_limits()

    def test_show_opens_the_app_and_updates_it(self):
        # What the window shows, as the app records it for tests (TDFX_STATE_FILE, app/gui_main.cpp):
        # one JSON line each time it shows a model or fails to load one.
        states_path = os.path.join(self.tmp.name, "window-states.jsonl")
        os.environ["TDFX_STATE_FILE"] = states_path  # inherited by the app show() starts
        module = sequential()
        try:
            window = tdfx.show(module, INPUTS)
        finally:
            del os.environ["TDFX_STATE_FILE"]
        name = os.path.basename(window.path)
        try:
            self.assertTrue(window.is_open())
            shown = wait_for_state(window, states_path, 1)
            self.assertEqual(shown["event"], "loaded", shown)
            self.assertEqual(shown["title"], "TDSequential - tdfx")  # the module's class, not the temp file's name
            self.assertGreaterEqual(shown["nodes"], 7, shown)  # fc1, relu, fc2, mul, softmax and the keys
            first = os.stat(window.path).st_mtime_ns
            time.sleep(0.05)
            with torch.no_grad():
                module.module[0].module.fc1.weight.mul_(2)
            again = tdfx.show(module, INPUTS)
            self.assertIs(again, window)  # the same window, which follows the file
            self.assertGreater(os.stat(window.path).st_mtime_ns, first)
            self.assertEqual(os.stat(os.path.dirname(window.path)).st_mode & 0o777, 0o700)  # private
            # The window reopened the file and shows what changed: the weight, and nothing else.
            reloaded = wait_for_state(window, states_path, 2)
            self.assertEqual(reloaded["event"], "loaded", reloaded)
            self.assertEqual(reloaded["title"], "TDSequential - tdfx")
            self.assertTrue(reloaded["status"].startswith("Reloaded TDSequential: 0 node(s) removed, 0 added, 0 changed"),
                            reloaded)
            self.assertEqual(reloaded["nodes"], shown["nodes"], reloaded)
            # The Changes panel's rows are compare's (issue 36): what differs and by how much.
            self.assertEqual(len(reloaded["changes"]), 1, reloaded)
            self.assertRegex(reloaded["changes"][0],
                             r"^~ parameter 0\.module\.fc1\.weight: values differ, max \|delta\| [0-9.e+-]+$")
            # The file goes when this session ends: the window says so (it went on in silence).
            os.remove(window.path)
            gone = wait_for_state(window, states_path, 3)
            self.assertEqual(gone["event"], "gone", gone)
            self.assertEqual(gone["title"], "TDSequential (file gone) - tdfx")
            # Named as the window is, not by the temporary file (issue 57's leftovers).
            self.assertIn("TDSequential is gone (deleted or moved): this is its last version", gone["status"])
            self.assertNotIn(name, gone["status"])
            self.assertTrue(window.is_open())
        finally:
            window.close()
        self.assertFalse(window.is_open())

    def test_help_reads_well(self):
        for fn in (tdfx.show, tdfx.draw, tdfx.trace, tdfx.verify, tdfx.diff):
            self.assertGreater(len(fn.__doc__ or ""), 60, fn.__name__)
            self.assertIn("return", fn.__annotations__)


def unfaithful_fixture() -> str:
    """A fixture FX traces unfaithfully: `self.count.add_(1)` runs once, while tracing, so the
    printed graph reads the count as tracing left it and verify fails at node `count` (tests/fixtures/make_fixtures.py)."""
    return os.path.join(os.environ["TDFX_FIXTURES"], "updates_buffer_once.pt")


def wait_for_state(window, path: str, count: int, timeout: float = 60.0) -> dict:
    """The `count`-th state the window recorded in `path` (TDFX_STATE_FILE), waited for; fails when the
    app exits or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    states = []
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                states = [json.loads(line) for line in f if line.endswith("\n")]
            if len(states) >= count:
                return states[count - 1]
        if not window.is_open():
            raise AssertionError(f"the tdfx window exited (status {window.process.returncode}); states: {states}")
        time.sleep(0.05)
    raise AssertionError(f"the tdfx window recorded {len(states)} state(s) in {timeout:.0f} s, not {count}: {states}")


class NotebookTest(unittest.TestCase):
    def test_a_notebook_shows_the_svg_inline(self):
        import nbformat
        from nbclient import NotebookClient
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "seq.pt")
            tdfx_export.export(sequential(), path, INPUTS, [2])
            nb = nbformat.v4.new_notebook()
            nb.cells = [
                nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'app')!r})\n"
                                          "import tdfx"),
                nbformat.v4.new_code_cell(f"tdfx.draw({path!r})"),
                nbformat.v4.new_code_cell(f"tdfx.verify({path!r})"),
                nbformat.v4.new_code_cell(f"tdfx.verify({unfaithful_fixture()!r})"),
            ]
            NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp}}).execute()
            drawn = [o["data"] for o in nb.cells[1].outputs if "image/svg+xml" in o.get("data", {})]
            self.assertEqual(len(drawn), 1, nb.cells[1].outputs)
            ET.fromstring(drawn[0]["image/svg+xml"])
            tables = [o["data"]["text/html"] for o in nb.cells[2].outputs if "text/html" in o.get("data", {})]
            self.assertIn("<b>PASSED</b>", tables[0])
            failed = [o["data"]["text/html"] for o in nb.cells[3].outputs if "text/html" in o.get("data", {})]
            self.assertEqual(len(failed), 1, nb.cells[3].outputs)
            self.assertIn("<b>FAILED: first diverging node count", failed[0])


if __name__ == "__main__":
    unittest.main()
