# Regression (issue 34, class 12): TensorDict names like `_0`. FX's r"(.*)_(\d+)$" splits a taken
# `_0` into an empty base and counter 0, so the next is `_1` (prefixed: `_1__2`), not `_0_1`.
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
        self._0 = nn.Parameter(torch.randn(8))
        self._1 = nn.Parameter(torch.randn(8))

    def forward(self, x):
        v1 = x * self._0 + self._1
        return v1

class P1(nn.Module):
    def __init__(self):
        super().__init__()
        self._0 = nn.Parameter(torch.randn(8))
        self._2 = nn.Parameter(torch.randn(8))

    def forward(self, _0):
        v2 = _0 * self._0 - self._2
        return v2

WRAP = 'seq'
KEYS = [{"in": [["x"]], "out": [["_0"]]}, {"in": [["_0"]], "out": [["out"]]}]
NESTED = False
