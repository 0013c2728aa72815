#!/usr/bin/env python3
"""Hostile round five (issue 56) against tdfx-cli verify, on archives and files made here:

- findings 1 and 6: a buffer that views part of a parameter's storage (one storage in the archive).
  The forward writes the buffer in place; FX runs that write once, while tracing (a buffer is no
  Proxy), so the printed graph never writes. Verify must start every pass from the same state, by
  storage: the traced pass must not see the parameter as eager left it (a false PASSED); and after
  a verify whose passes both wrote the parameter through the buffer, the worker must hold the
  file's weights (an export in the same server writes them, as an export alone does);
- finding 13: a file of --input-values whose tensor reaches outside its storage (a negative offset,
  a storage shorter than the shape, a huge stride) is refused naming the tensor, before any kernel reads it; a
  value nested 200,000 tuples deep is refused without killing the worker, and no message blames the
  model.

    TDFX_CLI=build/app/tdfx-cli /usr/bin/python3 tests/support/run_unittest.py verify_hostile_state_cli_test
    (from tests/runtime)
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

import torch
import torch.nn as nn

CLI = os.environ["TDFX_CLI"]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import make_bad_storage  # noqa: E402


class WritesThroughABufferView(nn.Module):
    """`b` is the first half of `a`'s storage: `self.b.add_(1)` changes `a` too."""

    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.zeros(6))
        self.register_buffer("b", self.a.data[:3])


class ReadsTheParameter(WritesThroughABufferView):
    # FX prints `add = x + getitem` with no write: on a fresh load that is x + 0, while the module
    # gives x + 1. Verify must say FAILED.
    def forward(self, x):
        self.b.add_(1)
        return x + self.a[:3]


class LeavesTheParameterChanged(WritesThroughABufferView):
    # A write FX records (its operand is a Proxy), so the trace itself changes nothing, and both
    # passes write `b`, which is `a`: PASSED, rightly. The parameter the passes changed must be put
    # back before the next command uses the worker (it was not: only `b`, the name written, was).
    def forward(self, x):
        self.b.add_(x.sum())
        return x * 2


class Doubles(nn.Module):
    def forward(self, x):
        return x * 2


def cli(*args, stdin=None):
    run = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300, input=stdin)
    return run.returncode, run.stdout, run.stderr


def nested_pairs_pickle(depth):
    """data.pkl for (("x", ((...(1,)...),)),): `depth` TUPLE1 opcodes around an int, written by hand
    since Python's own pickler recurses."""
    x = b"X\x01\x00\x00\x00x"  # BINUNICODE "x"
    return b"\x80\x02" + x + b"K\x01" + b"\x85" * depth + b"\x86" + b"\x85" + b"."


class VerifyHostileState(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = staticmethod(lambda name: os.path.join(cls.tmp.name, name))
        for module, name in ((ReadsTheParameter(), "reads.pt"), (LeavesTheParameterChanged(), "leaves.pt"),
                             (Doubles(), "doubles.pt")):
            torch.jit.script(module).save(os.path.join(cls.tmp.name, name))
        loaded = torch.jit.load(os.path.join(cls.tmp.name, "reads.pt"))
        assert loaded.b.data_ptr() == loaded.a.data_ptr(), "the archive keeps one storage for a and b"

    def test_a_write_through_a_shared_storage_is_undone_before_the_traced_pass(self):
        rc, out, err = cli("trace", "--code", self.path("reads.pt"))
        self.assertEqual(rc, 0, err)
        self.assertIn("add = x + getitem", out)
        self.assertNotIn("add_", out, "FX runs the buffer's write while tracing: the graph never writes")
        rc, out, err = cli("verify", self.path("reads.pt"), "--input", "x=4x3")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("FAILED: traced outputs differ from eager outputs", out)

    def test_a_passing_verify_leaves_the_file_s_weights_for_the_next_command(self):
        exported = self.path("exported.pt")
        with subprocess.Popen([CLI, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as server:
            request = {"id": 1, "commands": [["verify", self.path("leaves.pt"), "--input", "x=4x3"],
                                             ["export", self.path("leaves.pt"), "-o", exported]]}
            reply, err = server.communicate(json.dumps(request) + "\n", timeout=300)
        results = json.loads(reply)["results"]
        self.assertEqual(results[0]["status"], 0, results[0])
        self.assertIn("PASSED", results[0]["stdout"])
        self.assertEqual(results[1]["status"], 0, results[1])
        a = dict(torch.jit.load(exported).named_parameters())["module.a"]
        self.assertTrue(torch.equal(a, torch.zeros(6)), f"the export wrote the forward's change: {a}")
        rc, out, err = cli("export", self.path("leaves.pt"), "-o", self.path("exported_alone.pt"))
        self.assertEqual(rc, 0, err)
        alone = dict(torch.jit.load(self.path("exported_alone.pt")).named_parameters())["module.a"]
        self.assertTrue(torch.equal(alone, a), "an export after a verify writes what an export alone writes")

    def check_refused(self, values, message):
        rc, out, err = cli("verify", self.path("doubles.pt"), "--input-values", values)
        self.assertNotIn(rc, (0, 3, 4), out + err)
        self.assertEqual(err.strip().count("\n"), 0, err)
        self.assertIn(message, err)
        self.assertNotIn("doubles.pt", err, "the message blames the model")
        self.assertNotIn("died", err)

    def test_input_values_outside_their_storage_are_refused_naming_the_tensor(self):
        source = self.path("values.pt")
        # Four dimensions: pickle writes their sizes and strides with MARK ... TUPLE, which
        # make_bad_storage rewrites (two would be TUPLE2).
        torch.save((("x", torch.randn(1, 1, 4, 3)),), source)
        for name, offset, sizes, strides, why in (
                # (LibTorch 1.13's unpickler gives a tensor with a negative stride contiguous
                # strides: only the offset can be negative.)
                ("negative_offset", -100000, [4, 3], [3, 1], "has a negative storage offset (-100000)"),
                ("short_storage", 0, [40, 3], [3, 1], "of shape [40, 3], strides [3, 1] and storage offset 0 needs "
                                                      "120 elements but its storage holds 12"),
                ("huge_stride", 0, [4, 3], [2 ** 40, 1], "of shape [4, 3], strides [1099511627776, 1] and storage "
                                                          "offset 0 needs 3298534883331 elements but its storage holds 12")):
            target = self.path(name + ".pt")
            make_bad_storage.rewrite(source, target, offset, sizes, strides)
            with self.subTest(name):
                self.check_refused(target, "input values: tensor 'x' " + why + ": the file is damaged")

    def test_a_value_nested_200000_tuples_deep_is_refused_without_a_crash(self):
        source, target = self.path("plain_values.pt"), self.path("nested.pt")
        torch.save((("x", torch.randn(4, 3)),), source)
        with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                data = zin.read(info.filename)
                if info.filename.endswith("/data.pkl"):
                    data = nested_pairs_pickle(200000)
                zout.writestr(info.filename, data)
        self.check_refused(target, "input values: ")


if __name__ == "__main__":
    unittest.main()
