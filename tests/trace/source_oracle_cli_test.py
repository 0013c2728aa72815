#!/usr/bin/env python3
"""The compiled graph is the oracle of the debug info's source (issue 56, finding 2): archives made
here whose source text says one thing while their compiled code runs another, each as a file whose
serialized code was changed after saving (same length, so the debug info's ranges still match):

- `torch.clamp(x, -50.0, 50.0)` over code that clamps at ±60, positional and by keyword;
- `y.relu_()` over code that runs `torch.relu(y)`.

tdfx-cli trace must refuse each, naming the node and why, never print the source's constants or
name (verify would pass them: random inputs never reach 50). An untouched archive traces.

    TDFX_CLI=build/app/tdfx-cli /usr/bin/python3 tests/support/run_unittest.py source_oracle_cli_test
    (from tests/trace)
"""
import os
import subprocess
import tempfile
import unittest
import zipfile

import torch
import torch.nn as nn

CLI = os.environ["TDFX_CLI"]


class Clamps(nn.Module):
    def forward(self, x):
        return torch.clamp(x, -50.0, 50.0)


class ClampsByKeyword(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=-50.0, max=50.0)


class ReluInPlace(nn.Module):
    def forward(self, x):
        y = x * 2
        return y.relu_()


def rewrite_code(source, target, old, new):
    """`target`: `source` with `old` replaced by `new` (as long) in its serialized code only."""
    assert len(old) == len(new)
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith(".py"):
                assert old in data, (info.filename, data)
                data = data.replace(old, new)
            zout.writestr(info, data)


def trace(path):
    run = subprocess.run([CLI, "trace", path], capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout, run.stderr


class SourceOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    def made(self, module, name, old, new):
        honest = os.path.join(self.tmp.name, name + "_honest.pt")
        lying = os.path.join(self.tmp.name, name + ".pt")
        torch.jit.script(module).save(honest)
        rewrite_code(honest, lying, old, new)
        return honest, lying

    def check_refused(self, path, message):
        rc, out, err = trace(path)
        self.assertNotEqual(rc, 0, out)
        self.assertEqual(out, "", "nothing printed")
        self.assertEqual(err.strip().count("\n"), 0, err)
        self.assertIn(message, err)

    def test_a_constant_the_code_does_not_hold_is_refused(self):
        for module, name in ((Clamps(), "clamps"), (ClampsByKeyword(), "clamps_by_keyword")):
            with self.subTest(name):
                honest, lying = self.made(module, name, b"-50., 50.", b"-60., 60.")
                rc, out, err = trace(honest)
                self.assertEqual(rc, 0, err)
                self.assertIn("50.0", out)
                # Run by Python, the lying archive clamps at 60.
                self.assertEqual(torch.jit.load(lying)(torch.tensor([1000.0])).item(), 60.0)
                self.check_refused(lying, "cannot trace aten::clamp in the traced module at " + __file__)
                self.check_refused(lying, "-50.0 where its compiled code (aten::clamp) holds no such constant: "
                                          "the source is not the code the archive runs")

    def test_an_in_place_call_the_code_does_not_make_is_refused(self):
        honest, lying = self.made(ReluInPlace(), "relu_in_place", b"torch.relu_(y)", b"torch.relu(y) ")
        rc, out, err = trace(honest)
        self.assertEqual(rc, 0, err)
        self.assertIn("relu_ = mul.relu_()", out)
        self.check_refused(lying, "the archive's source calls `relu_` where its compiled code runs aten::relu: "
                                  "the source is not the code the archive runs")


if __name__ == "__main__":
    unittest.main()
