"""The warm process behind `import tdfx` (tdfx_server: one `tdfx-cli serve` per session) and the
module files it reuses (tdfx_saved): one server serves every call, is started again when it ended
or the working directory changed, outlives a model's worker stopped at a limit; a module is saved
again exactly when it changed. Same environment as test_api.
"""
import os
import shutil
import signal
import sys
import tempfile
import unittest
from typing import List

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "app"))
sys.path.insert(0, HERE)
import tdfx  # noqa: E402
import tdfx_server  # noqa: E402
from built_programs import locate  # noqa: E402
from test_api import Net  # noqa: E402

locate("TDFX_CLI")
FIXTURES = locate("TDFX_FIXTURES")


def stamp(path):
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns


class WarmTest(unittest.TestCase):
    def tearDown(self):
        tdfx.set_limits()

    def test_one_server_serves_every_call(self):
        net = Net()
        traced = tdfx.trace(net)
        server = tdfx_server.pid()
        self.assertIsNotNone(server)
        tdfx.draw(net)
        tdfx.verify(net, torch.randn(3, 8))
        tdfx.diff(os.path.join(FIXTURES, "seed_module.pt"), os.path.join(FIXTURES, "seed_sequential.pt"))
        self.assertEqual(tdfx_server.pid(), server)
        self.assertEqual(tdfx.trace(net).text, traced.text)

    def test_a_server_that_ended_is_started_again(self):
        net = Net()
        expected = tdfx.trace(net).text
        first = tdfx_server.pid()
        os.kill(first, signal.SIGKILL)  # the server this test's calls started
        self.assertEqual(tdfx.trace(net).text, expected)
        self.assertNotIn(tdfx_server.pid(), (None, first))

    def test_a_worker_past_its_limit_leaves_the_server_serving(self):
        tdfx.trace(Net())
        server = tdfx_server.pid()
        tdfx.set_limits(timeout=2)
        with self.assertRaises(tdfx.WorkerLimitError):
            tdfx.verify(os.path.join(FIXTURES, "endless.pt"))
        tdfx.set_limits()
        self.assertTrue(tdfx.verify(os.path.join(FIXTURES, "seed_module.pt")).passed)
        self.assertEqual(tdfx_server.pid(), server)

    def test_relative_paths_follow_the_working_directory(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            shutil.copyfile(os.path.join(FIXTURES, "seed_module.pt"), os.path.join(a, "model.pt"))
            shutil.copyfile(os.path.join(FIXTURES, "seed_sequential.pt"), os.path.join(b, "model.pt"))
            old = os.getcwd()
            try:
                os.chdir(a)
                in_a = tdfx.trace("model.pt").text
                os.chdir(b)
                in_b = tdfx.trace("model.pt").text
            finally:
                os.chdir(old)
        self.assertEqual(in_a, tdfx.trace(os.path.join(FIXTURES, "seed_module.pt")).text)
        self.assertEqual(in_b, tdfx.trace(os.path.join(FIXTURES, "seed_sequential.pt")).text)

    def test_a_path_that_is_not_utf8_is_traced(self):
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(os.fsencode(d), b"caf\xe9.pt")  # JSON cannot carry it: one process for it
            shutil.copyfile(os.path.join(FIXTURES, "seed_module.pt"), raw)
            self.assertEqual(tdfx.trace(os.fsdecode(raw)).text, tdfx.trace(os.path.join(FIXTURES, "seed_module.pt")).text)

    def test_a_server_that_cannot_start_says_why(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "tdfx-cli")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'tdfx-cli: error: no serve in this build' >&2\nexit 3\n")
            os.chmod(fake, 0o755)
            old = os.environ["TDFX_CLI"]
            os.environ["TDFX_CLI"] = fake
            try:
                with self.assertRaises(tdfx.TdfxError) as caught:
                    tdfx.trace(os.path.join(FIXTURES, "seed_module.pt"))
            finally:
                os.environ["TDFX_CLI"] = old
        self.assertEqual(str(caught.exception), "tdfx-cli serve ended (exit status 3) before it answered: "
                                                "tdfx-cli: error: no serve in this build")

    def test_one_process_per_call_when_asked(self):
        path = os.path.join(FIXTURES, "seed_sequential.pt")
        warm = tdfx.trace(path).text
        os.environ["TDFX_SERVE"] = "0"
        try:
            self.assertEqual(tdfx.trace(path).text, warm)
        finally:
            del os.environ["TDFX_SERVE"]

    def test_a_module_is_saved_again_exactly_when_it_changed(self):
        net = Net()
        tdfx.trace(net)
        path = tdfx._module_file(net, ".plain.pt")
        saved = stamp(path)
        tdfx.trace(net)
        tdfx.trace(net)
        self.assertEqual(stamp(path), saved, "an unchanged module is not saved again")

        def weight_in_file():
            return torch.jit.load(path).fc1.weight.detach()

        with torch.no_grad():  # an optimizer step changes parameters in place like this
            net.fc1.weight.add_(1.0)
        tdfx.trace(net)
        self.assertNotEqual(stamp(path), saved, "a parameter changed in place: saved again")
        self.assertTrue(torch.equal(weight_in_file(), net.fc1.weight.detach()))
        saved = stamp(path)
        net.fc1.weight.data.mul_(2.0)  # through .data: the version counter stays as it was
        tdfx.trace(net)
        self.assertNotEqual(stamp(path), saved, "a change through .data: saved again")
        self.assertTrue(torch.equal(weight_in_file(), net.fc1.weight.detach()))
        saved = stamp(path)
        net.fc1.weight = nn.Parameter(torch.zeros(16, 8))  # a new tensor
        tdfx.trace(net)
        self.assertNotEqual(stamp(path), saved)
        self.assertTrue(torch.equal(weight_in_file(), torch.zeros(16, 8)))
        saved = stamp(path)
        net.fc2 = nn.Linear(16, 2)  # a new submodule
        traced = tdfx.trace(net)
        self.assertNotEqual(stamp(path), saved)
        self.assertEqual(torch.jit.load(path).fc2.weight.shape, (2, 16))
        saved = stamp(path)
        net.eval()  # the mode is saved with the module
        tdfx.trace(net)
        self.assertNotEqual(stamp(path), saved)
        self.assertFalse(torch.jit.load(path).training)
        self.assertEqual(tdfx.trace(net).text, traced.text)

    def test_a_change_the_fingerprint_cannot_see_is_saved_again(self):
        # A list of more than 10,000 items, and a value nested 5 lists deep, changed in place: the
        # fingerprint does not read them whole, so the module is saved at every call.
        class Scales(nn.Module):
            def __init__(self):
                super().__init__()
                self.long: List[float] = [1.0] * 10001
                self.deep: List[List[List[List[List[float]]]]] = [[[[[1.0]]]]]

            def forward(self, x):
                return x * self.long[-1] + self.deep[0][0][0][0][0]

        m = Scales()
        self.assertIn("mul = x * 1.0", tdfx.trace(m).text)
        m.long[-1] = 3.0
        self.assertIn("mul = x * 3.0", tdfx.trace(m).text, "a change to the long list, in place")
        m.deep[0][0][0][0][0] = 5.0
        self.assertIn("add = mul + 5.0", tdfx.trace(m).text, "a change 5 containers deep, in place")

    def test_a_module_is_given_back_in_the_modes_it_had(self):
        net = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.BatchNorm1d(8))
        net[2].eval()  # one submodule in eval mode, the others training
        for call in (lambda: tdfx.trace(net), lambda: tdfx.draw(net), lambda: tdfx.verify(net, torch.randn(4, 8))):
            call()
            self.assertEqual([m.training for m in net.modules()], [True, True, True, False])

    def test_verify_runs_the_module_as_it_is_now(self):
        class Above(nn.Module):  # its output's shape counts the inputs over its threshold buffer
            def __init__(self):
                super().__init__()
                self.register_buffer("threshold", torch.tensor(0.5))

            def forward(self, x):
                return x[x > self.threshold]

        m = Above()
        x = torch.arange(10.0)
        self.assertEqual(tdfx.verify(m, x).rows[0]["shape"], [9])
        self.assertEqual(tdfx.verify(m, x).rows[0]["shape"], [9])
        m.threshold.fill_(6.5)  # in place: the saved file and the server's open model are out of date
        self.assertEqual(tdfx.verify(m, x).rows[0]["shape"], [3])


if __name__ == "__main__":
    unittest.main()
