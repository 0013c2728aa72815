#!/usr/bin/env python3
"""tdfx-cli verify's verdicts and exit statuses (issue 55), on real TorchScript files:
- a recording of eager values that fails (planted: TDFX_TEST_PLANT_FAULT) is NOT PROVEN, exit 4,
  never PASSED on the outputs alone;
- a Python loop FX unrolls, which the model's code keeps as a loop, leaves nodes without proof:
  NOT PROVEN, exit 4, each named with why;
- a passing model: PASSED, exit 0, the JSON's verdict "PASSED";
- a model whose node differs: FAILED, exit 3.

    TDFX_CLI=build/app/tdfx-cli TDFX_FIXTURES=build/tests/fixtures \
        /usr/bin/python3 tests/support/run_unittest.py verify_verdicts_cli_test   (from tests/runtime)
"""
import json
import os
import subprocess
import tempfile
import unittest

import torch
import torch.nn as nn

CLI, FIXTURES = os.environ["TDFX_CLI"], os.environ["TDFX_FIXTURES"]


class Unrolled(nn.Module):
    """A `while` loop the tracer unrolls (its conditions are known while tracing); the model's code
    keeps it a loop whose condition is computed, which the recording cannot unroll: its values
    have no eager counterpart."""

    def forward(self, x):
        i = 0
        while i < 3:
            x = x * 2 + 1
            i += 1
        return x


class ForLoop(nn.Module):
    """A `for` over range(3): the recording unrolls it as the tracer did, every node proven."""

    def forward(self, x):
        for _ in range(3):
            x = x * 2 + 1
        return x


def verify(model, *args, env=None):
    run = subprocess.run([CLI, "verify", model, *args], capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})), timeout=300)
    return run.returncode, run.stdout, run.stderr


class VerdictTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.unrolled = os.path.join(cls.tmp.name, "unrolled.pt")
        torch.jit.script(Unrolled()).save(cls.unrolled)
        cls.for_loop = os.path.join(cls.tmp.name, "for_loop.pt")
        torch.jit.script(ForLoop()).save(cls.for_loop)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_failed_recording_is_not_proven(self):
        rc, out, err = verify(os.path.join(FIXTURES, "seed_module.pt"),
                              env={"TDFX_TEST_PLANT_FAULT": "exception@eager-recording"})
        self.assertEqual(rc, 4, out + err)
        self.assertIn("nodes not compared: recording the eager values failed", out)
        self.assertIn("NOT PROVEN: nothing differs, but the nodes were not compared", out)
        self.assertNotIn("PASSED", out)
        rc, out, err = verify(os.path.join(FIXTURES, "seed_module.pt"), "--json",
                              env={"TDFX_TEST_PLANT_FAULT": "exception@eager-recording"})
        self.assertEqual(rc, 4, out + err)
        report = json.loads(out)
        self.assertEqual(report["verdict"], "NOT PROVEN")
        self.assertFalse(report["passed"])

    def test_an_unrolled_loop_is_not_proven_and_says_which_nodes(self):
        rc, out, err = verify(self.unrolled, "--input", "x=2x3")
        self.assertEqual(rc, 4, out + err)
        self.assertIn("not proven: node 'mul'", out)
        self.assertRegex(out, r"NOT PROVEN: nothing differs, but \d+ node\(s\) have no proof")
        report = json.loads(verify(self.unrolled, "--input", "x=2x3", "--json")[1])
        self.assertEqual(report["verdict"], "NOT PROVEN")
        self.assertTrue(all(u["reason"] for u in report["nodes"]["unproven"]))
        self.assertIn("mul", [u["node"] for u in report["nodes"]["unproven"]])

    def test_a_for_loop_is_unrolled_by_the_recording_too(self):
        report = json.loads(verify(self.for_loop, "--input", "x=2x3", "--json")[1])
        self.assertEqual(report["verdict"], "PASSED", report)
        self.assertEqual(report["nodes"]["compared"], 7, report)  # x, then mul and add three times

    def test_a_proven_model_passes_with_exit_0(self):
        rc, out, err = verify(os.path.join(FIXTURES, "seed_sequential.pt"), "--json")
        self.assertEqual(rc, 0, out + err)
        report = json.loads(out)
        self.assertEqual(report["verdict"], "PASSED")
        self.assertEqual(report["nodes"]["unproven"], [])
        self.assertGreater(report["nodes"]["compared"], 0)
        self.assertFalse(report["timed"])

    def test_a_passing_verify_runs_each_side_once(self):
        # counts_forwards.pt's leaf (a call_module, so the traced graph runs the archive's own
        # forward) prints a line each time it runs: one eager run, one traced run.
        model = os.path.join(FIXTURES, "counts_forwards.pt")
        rc, out, err = verify(model, "--input", "x=4x3")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(err.count("tdfx-forward-call"), 2, err)
        rc, out, err = verify(model, "--input", "x=4x3", "--time")  # two more runs a side, timed
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(err.count("tdfx-forward-call"), 6, err)
        self.assertRegex(out, r"eager \d+\.\d+ ms, traced \d+\.\d+ ms")

    def test_the_windows_verify_runs_each_side_once_too(self):
        ui_tests = os.environ.get("TDFX_UI_TESTS")
        if not ui_tests:
            self.fail("TDFX_UI_TESTS is not set: the GUI's count cannot be taken")
        run = subprocess.run([ui_tests, "--gtest_filter=VerifyErrors.TheWindowsVerifyRunsEachSideOnce"],
                             capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] + run.stderr[-3000:])
        during = run.stderr.split("tdfx-test: verify starts")[1].split("tdfx-test: verify ended")[0]
        self.assertEqual(during.count("tdfx-forward-call"), 2, run.stderr[-3000:])

    def test_a_differing_node_fails_with_exit_3(self):
        rc, out, err = verify(os.path.join(FIXTURES, "updates_buffer_once.pt"))
        self.assertEqual(rc, 3, out + err)
        self.assertIn("FAILED", out)
