# Regression (issue 54, fuzz seed 152151): the unread item of a tuple target (dv2) is recorded by
# FX where its statement stands. The next statement calls a staticmethod: when its qualified name
# is short, TorchScript's code printer writes the call inline and the saved prim::CallFunction has
# no source range (`:0:0`), and the staticmethod's nodes carry offsets in its own text: tdfx
# recorded the item after them. This file's name is short on purpose (fuzz_reg_i54_stm._st3): a
# long one makes the printer hoist the callee into `_0 = ...` and the call keeps its range.
# Run by fuzz.py --regressions.
import math
from typing import Dict, List, Optional, Tuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.functional as fn


class P0(nn.Module):
    def __init__(self):
        super().__init__()
        self.k4 = 6

    @staticmethod
    def _st3(t, n: int):
        return t * n + 1

    def forward(self, x):
        mxv1 = x.max(-1)
        iv1, mv1 = mxv1.indices, mxv1[0]
        v1 = x * mv1.unsqueeze(-1) + iv1.unsqueeze(-1).float()
        (v1 + v1)
        -v1.abs()
        v2, dv2 = v1 * 2, v1.sum(dim=(0, 1))
        v3 = self._st3(v2, 2)
        v4 = torch.cat([v3.abs()[:, :, : self.k4], v3.relu()[:, :, self.k4 :]], dim=-1)
        return v4 + v2

WRAP = 'td'
KEYS = [{"in": [["input", "x"]], "out": [["out", "k0_0"]]}]
NESTED = False
