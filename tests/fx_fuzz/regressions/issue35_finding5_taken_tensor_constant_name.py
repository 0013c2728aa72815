# Regression (issue 35, finding 5): a parameter named `_tensor_constant0` beside a tensor computed
# while tracing. FX's create_arg skips names the root already has, so the constant is
# `_tensor_constant1`; tdfx printed a second `self._tensor_constant0`, which names the parameter.
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
        self._tensor_constant0 = nn.Parameter(torch.randn(8))
        self._tensor_constant2 = nn.Parameter(torch.randn(8))

    def forward(self, x):
        v1 = x * self._tensor_constant0 + torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
        v2 = v1 - torch.ones(8) * self._tensor_constant2 + torch.zeros(8)
        return v2

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
