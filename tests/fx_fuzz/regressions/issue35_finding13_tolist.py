# Regression (issue 35, finding 13): `x.tolist()` on a Proxy. FX records call_method tolist (x);
# tdfx printed torch.ops.prim.tolist(x, 2, 1) (TorchScript's nesting and element-type inputs), and
# the printed code ran it as an empty tuple, so verify failed ("tuple index 0 out of range").
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
        self.w = nn.Parameter(torch.randn(8))

    def forward(self, x):
        rows: List[List[float]] = (x[0] * self.w).tolist()
        v1 = x + rows[0][1]
        flat: List[float] = x[1, 2].tolist()
        v2 = v1 * flat[2]
        return v2

WRAP = 'plain'
KEYS = [{"in": [["x"]], "out": [["out"]]}]
NESTED = False
