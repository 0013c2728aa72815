"""tdfx.trace(m).code == torch.fx.symbolic_trace(m).code on the 21 torchvision models of the zoo
(tests/zoo/make_zoo.py), and .graph likewise, byte for byte (issue 37).

Two kinds of model cannot be equal, and the test pins exactly which they are, so a new difference
(or a model that starts to agree) fails it:
- torch.fx itself cannot trace them (a Proxy iterated, as in vit_b_16's `n, c, h, w = x.shape`):
  there is no FX code to equal;
- their forward branches on `torch.jit.is_scripting()` (googlenet, inception_v3): torch.jit.script
  compiles only the scripted branch into the archive (it returns the aux outputs as a named tuple),
  so the file tdfx reads has no eager branch. There the FX code up to the return is still equal.
"""
import os
import sys
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "app"))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
sys.path.insert(0, HERE)
from built_programs import locate  # noqa: E402
from make_zoo import ZOO  # noqa: E402

locate("TDFX_CLI")

FX_CANNOT_TRACE = {"vit_b_16", "maxvit_t", "shufflenet_v2_x0_5"}
SCRIPTED_BRANCH = {"googlenet", "inception_v3"}


class ZooFxCodeTest(unittest.TestCase):
    def test_the_zoo_traces_to_torch_fx_s_own_code(self):
        import torch
        import torch.fx
        import torchvision
        import tdfx
        warnings.filterwarnings("ignore")
        equal, fx_failed, branch = [], set(), set()
        for name in ZOO:
            with self.subTest(name):
                torch.manual_seed(0)
                model = getattr(torchvision.models, name)(weights=None).eval()
                try:
                    fx = torch.fx.symbolic_trace(model)
                except Exception:  # noqa: BLE001 - torch.fx's own limits
                    fx_failed.add(name)
                    continue
                t = tdfx.trace(model)
                if name in SCRIPTED_BRANCH:
                    branch.add(name)
                    self.assertNotEqual(t.code, fx.code, f"{name}: the archive has only the scripted branch")
                    cut = fx.code.rindex("\n    return ")
                    self.assertEqual(t.code[:cut], fx.code[:cut], f"{name}: equal up to the return")
                    continue
                self.assertEqual(t.code, fx.code, name)
                self.assertEqual(t.graph, str(fx.graph), name)
                equal.append(name)
        self.assertEqual(fx_failed, FX_CANNOT_TRACE, "the models torch.fx cannot trace")
        self.assertEqual(branch, SCRIPTED_BRANCH)
        self.assertEqual(len(equal), len(ZOO) - len(FX_CANNOT_TRACE) - len(SCRIPTED_BRANCH))
        print(f"\n{len(equal)} of {len(ZOO)} equal byte for byte; torch.fx cannot trace "
              f"{', '.join(sorted(fx_failed))}; scripted branch only: {', '.join(sorted(branch))}", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
